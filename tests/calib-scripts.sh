#!/bin/sh
# calib/'s PyTorch scripts, as TAP: each parses, and on a machine without PyTorch or a GPU (CI) exits
# 77 with a "skipped" line before touching anything. On a machine with a GPU they would run their
# benchmarks, which make check does not: there every case is skipped.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
export PYTHONDONTWRITEBYTECODE=1 # the scripts import calib/cuda_timing.py from the source tree
n=0
fail=0
for s in torch-kernels.py overlap.py interleave.py gpt-step.py zero3-lists.py; do
  f="$src/calib/$s"
  if ! command -v python3 >/dev/null 2>&1; then
    n=$((n + 1)); echo "ok $n - $s # SKIP no python3"; n=$((n + 1)); echo "ok $n - $s # SKIP no python3"
    continue
  fi
  n=$((n + 1))
  if python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$f" 2>/dev/null; then
    echo "ok $n - $s parses"
  else
    echo "not ok $n - $s parses"; fail=1
  fi
  n=$((n + 1))
  if nvidia-smi -L >/dev/null 2>&1; then
    echo "ok $n - $s skips without a GPU # SKIP a GPU is present (the script would run its benchmark)"
    continue
  fi
  out=$(python3 "$f" 2>&1); rc=$?
  if [ "$rc" = 77 ] && printf '%s' "$out" | grep -q "skipped"; then
    echo "ok $n - $s exits 77 with a skipped line without PyTorch or a GPU"
  else
    echo "not ok $n - $s exits 77 without PyTorch or a GPU (status $rc: $out)"; fail=1
  fi
done
echo "1..$n"
exit $fail
