#!/bin/sh
# Regenerates the build system from configure.ac and the Makefile fragments.
set -e
cd "$(dirname "$0")"
autoreconf --install --force >/dev/null
echo "autogen: done; now run ./configure"
