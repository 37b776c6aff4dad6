#!/bin/sh
# Builds the libFuzzer harnesses (fuzz/fuzz_*.c) in build-fuzz (clang, --enable-fuzzing) and runs each
# for SECONDS (default 60), one after the other, on a fresh copy of its seed corpus
# (tests/fuzz-corpus/NAME) plus its regressions (tests/fuzz-regress/NAME, read only). Prints one line
# per harness: executions, seconds, crashes (a crash, leak, UB report, timeout or out-of-memory:
# libFuzzer stops at the first and writes it to build-fuzz/fuzz-out/NAME/; copy it into
# tests/fuzz-regress/NAME/ once fixed). Exits 1 when any harness found one.
#   fuzz/run.sh [SECONDS] [NAME…]     NAME: scenario_file, measure, … (default: all)
# Environment: TRAINSIM_FUZZ_BUILD_DIR (default build-fuzz), TRAINSIM_FUZZ_TAP (a file: also write
# `ok N - fuzz NAME` lines there, which .ci/run counts), TRAINSIM_FUZZ_JOBS (make -j, default nproc),
# TRAINSIM_FUZZ_TIMEOUT (seconds one input may take, default 30: raise it for niced campaigns on
# a busy machine, where a starved process passed 10 s on an input that takes 0.3 s alone),
# TRAINSIM_FUZZ_RESUME=1 (go on from the corpus the last run of NAME grew, so that several runs make
# one campaign; the seeds are added again, the last run's log is kept as log.N).
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
build=${TRAINSIM_FUZZ_BUILD_DIR:-build-fuzz}
tap=${TRAINSIM_FUZZ_TAP:-}
names=${*:-$(for f in fuzz/fuzz_*.c; do f=${f#fuzz/fuzz_}; echo "${f%.c}"; done)}

# Configure like dev.sh: once, and again when the flags change.
[ -x configure ] && [ -f Makefile.in ] && [ configure -nt configure.ac ] || ./autogen.sh || exit 1
flags="CC=clang --enable-fuzzing"
mkdir -p "$build" || exit 1
if [ ! -f "$build/Makefile" ] || [ "$(cat "$build/.configure-flags" 2>/dev/null)" != "$flags" ]; then
  (cd "$build" && "$top/configure" $flags >configure.out 2>&1) || { echo "fuzz/run.sh: configure failed: $build/configure.out" >&2; exit 1; }
  echo "$flags" >"$build/.configure-flags"
fi
make -s -C "$build" -j"${TRAINSIM_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}" fuzz >"$build/make-fuzz.log" 2>&1 ||
  { tail -30 "$build/make-fuzz.log" >&2; echo "fuzz/run.sh: make fuzz failed: $build/make-fuzz.log" >&2; exit 1; }

[ -n "$tap" ] && { mkdir -p "$(dirname "$tap")"; : >"$tap"; }
# Each harness runs with TMPDIR a fresh folder (the scenario harness writes its inputs there), on a
# tmpfs where there is one: rewriting a file per input on disk can cost more than parsing it.
scratch=/dev/shm
[ -d "$scratch" ] && [ -w "$scratch" ] || scratch=$top/$build
n=0; failed=0
printf '%-16s %12s %8s %8s %6s\n' harness executions seconds crashes slow
for name in $names; do
  n=$((n + 1))
  out=$build/fuzz-out/$name
  if [ "${TRAINSIM_FUZZ_RESUME:-0}" = 1 ] && [ -d "$out/corpus" ]; then
    k=1; while [ -e "$out/log.$k" ]; do k=$((k + 1)); done
    [ -f "$out/log" ] && mv "$out/log" "$out/log.$k"
  else
    rm -rf "$out"
  fi
  mkdir -p "$out/corpus"
  cp tests/fuzz-corpus/"$name"/* "$out/corpus/" 2>/dev/null
  regress=; [ -d "tests/fuzz-regress/$name" ] && regress=$top/tests/fuzz-regress/$name
  tmp=$(mktemp -d "$scratch/trainsim-fuzz.XXXXXX") || exit 1
  start=$(date +%s)
  TMPDIR=$tmp "$build/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout="${TRAINSIM_FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/" "$out/corpus" $regress >"$out/log" 2>&1
  rc=$?
  rm -rf "$tmp"
  secs=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1)
  crashes=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  # A slow unit (over 10 s) is reported, not failed: on a shared machine a niced fuzzer can wait that
  # long for a core (inputs that took 39-44 s in a campaign replay in 0.25 s alone).
  slow=$(find "$out" -maxdepth 1 -type f -name 'slow-unit-*' | wc -l)
  [ "$rc" != 0 ] && [ "$crashes" = 0 ] && crashes=1   # died without an artifact: count it
  printf '%-16s %12s %8s %8s %6s\n' "$name" "${execs:-?}" "$secs" "$crashes" "$slow"
  if [ "$crashes" = 0 ]; then
    [ -n "$tap" ] && echo "ok $n - fuzz $name: ${execs:-?} executions in $secs s, no crash" >>"$tap"
  else
    failed=1
    echo "fuzz/run.sh: $name: see $out/log and the input in $out/" >&2
    [ -n "$tap" ] && echo "not ok $n - fuzz $name: $crashes crash(es) in $secs s; $out/log" >>"$tap"
  fi
done
[ -n "$tap" ] && echo "1..$n" >>"$tap"
exit "$failed"
