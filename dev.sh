#!/bin/sh
# trainsim set-up and build: installs what is missing (Debian 12, as root or with sudo), builds
# out of tree, then either runs trainsim or the test suite. Idempotent; fast when nothing changed.
#   ./dev.sh run [TRAINSIM ARGS…]   build, then run trainsim (no args: the embedded default
#                                   scenario, plots written to trainsim-out/)
#   ./dev.sh check                  build, then run the whole test suite
# Environment: TRAINSIM_BUILD_DIR (default build), TRAINSIM_CONFIGURE_FLAGS (e.g. --enable-werror).
set -e
cd "$(dirname "$0")"
top=$(pwd)
mode=${1:-run}
[ $# -gt 0 ] && shift

# groff-base: tests/man-pages.sh renders the manual pages (it skips that without groff or man).
pkgs="build-essential autoconf automake libtool pkg-config libglib2.0-dev libglib2.0-dev-bin \
libgsl-dev libjson-glib-dev gnuplot-nox libopenmpi-dev openmpi-bin fortunes groff-base"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "dev.sh: installing:$missing" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

[ -x configure ] && [ -f Makefile.in ] && [ configure -nt configure.ac ] || ./autogen.sh
build=${TRAINSIM_BUILD_DIR:-build}
flags=${TRAINSIM_CONFIGURE_FLAGS:-}
mkdir -p "$build"
cd "$build"
# Reconfigure when the flags changed since the last configure of this build directory.
if [ ! -f Makefile ] || [ "$(cat .configure-flags 2>/dev/null)" != "$flags" ]; then
  "$top/configure" $flags
  echo "$flags" > .configure-flags
fi
jobs=$(nproc 2>/dev/null || echo 2)
make -s -j"$jobs"
case "$mode" in
  run)
    # No arguments: the main job, the embedded default scenario with its plots.
    if [ $# -eq 0 ]; then
      echo "dev.sh: trainsim run --plots $top/trainsim-out (the embedded default scenario)" >&2
      exec ./trainsim run --plots "$top/trainsim-out"
    fi
    exec ./trainsim "$@" ;;
  check) make -s -j"$jobs" check "$@" ;;
  build) ;;
  *) echo "usage: ./dev.sh run [ARGS…] | check | build" >&2; exit 2 ;;
esac
