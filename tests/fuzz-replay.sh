#!/bin/sh
# Replays every input of tests/fuzz-corpus/NAME/ (the seed corpus) and tests/fuzz-regress/NAME/ (inputs
# that once crashed, leaked or hung) through fuzz/replay_NAME, the harness fuzz/fuzz_NAME.c with a
# plain main: one TAP line per folder, ok when the harness neither crashes nor leaks (in the
# sanitizer build, ASan/UBSan/LeakSanitizer end a failing run with a non-zero status).
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
bin=${G_TEST_BUILDDIR:-tests}/../fuzz
. "$src/tests/tap.sh"
for dir in "$src"/tests/fuzz-corpus/* "$src"/tests/fuzz-regress/*; do
  [ -d "$dir" ] || continue
  name=${dir##*/}
  what="${dir#"$src"/tests/} ($(ls "$dir" | wc -l) inputs)"
  if [ ! -x "$bin/replay_$name" ]; then notok "$what: no harness fuzz/replay_$name"; continue; fi
  out=$("$bin/replay_$name" "$dir" 2>&1)
  rc=$?
  if [ "$rc" = 0 ]; then ok "$what"; else notok "$what: exit $rc"; echo "$out" | head -40 | sed 's/^/# /'; fi
done
# Every harness has a seed corpus, so none goes untested.
for h in "$src"/fuzz/fuzz_*.c; do
  name=${h##*/fuzz_}; name=${name%.c}
  check "fuzz/fuzz_$name.c has a seed corpus" '[ -n "$(ls "$src/tests/fuzz-corpus/$name" 2>/dev/null)" ]'
done
echo "1..$n"
