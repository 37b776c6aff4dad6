#!/bin/sh
# The trainsim-bench-* CUDA programs, as TAP. Each runs a tiny sweep; with no GPU or driver it must
# exit 77 with a message (reported as SKIP), with a GPU it must exit 0 and write a self-describing
# TSV (provenance lines, a header row with units, a PASS footer, no wrong results). Usage errors
# must exit 2 and --help 0 whether or not a GPU is present. Programs not built (configure found no
# CUDA/NCCL) are skipped.
top=$(dirname "${TRAINSIM:-./trainsim}")
tmp=${TMPDIR:-/tmp}/trainsim-calib-bench.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
notok () { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
skip () { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

run_one () { # name, args of a small run
  name=$1; shift
  prog="$top/calib/trainsim-bench-$name"
  if [ ! -x "$prog" ]; then
    skip "$name: runs or skips cleanly" "not built (configure found no CUDA/NCCL)"
    skip "$name: --help" "not built"
    skip "$name: bad option is a usage error" "not built"
    return
  fi
  if "$prog" --help >"$tmp/help" 2>&1 && grep -q '^Usage:' "$tmp/help"; then ok "$name: --help"
  else notok "$name: --help"; fi
  "$prog" --no-such-option >/dev/null 2>&1
  rc=$?
  if [ $rc -eq 2 ]; then ok "$name: bad option is a usage error"
  else notok "$name: bad option is a usage error (exit $rc)"; fi
  "$prog" "$@" -o "$tmp/$name.tsv" 2>"$tmp/$name.err"
  rc=$?
  if [ $rc -eq 77 ]; then
    if grep -q 'skipped: no usable CUDA device' "$tmp/$name.err"; then
      skip "$name: runs or skips cleanly" "$(head -n 1 "$tmp/$name.err")"
    else
      notok "$name: exit 77 without the skip message"; sed 's/^/# /' "$tmp/$name.err"
    fi
  elif [ $rc -eq 0 ] && grep -q '^# gpu	' "$tmp/$name.tsv" && grep -q '^# date	' "$tmp/$name.tsv" \
       && grep -q '^bench	' "$tmp/$name.tsv" && grep -q '^# result	PASS' "$tmp/$name.tsv" \
       && grep -q '^# wrong_total	0' "$tmp/$name.tsv"; then
    ok "$name: runs or skips cleanly"
  else
    notok "$name: runs or skips cleanly (exit $rc)"
    sed 's/^/# /' "$tmp/$name.err" "$tmp/$name.tsv" 2>/dev/null | head -n 40
  fi
}

run_one gemm -t bf16,fp8 -m 256,1024 -n 512 -k 1024 -r 3 -w 1
run_one memory -s 1048576,4194304 -H 1024 -f 2048 -r 3 -w 1
run_one attention -S 256,512 -H 4 -K 2 -D 64 -r 3 -w 1
run_one nccl -s 8:1048576:64 -r 3 -w 1
echo "1..$n"
exit $fail
