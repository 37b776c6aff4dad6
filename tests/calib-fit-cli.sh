#!/bin/sh
# `trainsim fit` end to end on the nccl-tests fixtures (tests/data): writes a profile layer that
# GKeyFile-style readers accept, refuses bad input with exit 2, and draws PNGs with --plot when
# gnuplot is there.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
ts=${TRAINSIM:-./trainsim}
tmp=${TMPDIR:-/tmp}/trainsim-calib-fit.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
n=0; fail=0
check () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

d="$src/tests/data"
"$ts" fit "$d/nccl-tests-h200-all_reduce-8gpu.txt" -o "$tmp/p.ini" >"$tmp/out" 2>"$tmp/err"
check $? "fit of an nccl-tests fixture exits 0"
grep -q '^\[hardware\]' "$tmp/p.ini" && grep -q '^nccl_collectives = all_reduce;$' "$tmp/p.ini" \
  && grep -q '^nccl_nranks = 8;$' "$tmp/p.ini"
check $? "profile has the [hardware] collective keys"
grep -q '^# nccl all_reduce at 8 ranks on 1 node(s): .*± .*chi2/dof .*nccl-tests-h200-all_reduce-8gpu.txt' "$tmp/p.ini"
check $? "each fitted constant carries 1 sigma, chi2/dof and its source file"
"$ts" fit "$d/nccl-tests-h200-all_reduce-8gpu.txt" "$d/nccl-tests-gb200-all_reduce-4gpu.txt" \
  -o "$tmp/mixed.ini" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'different GPUs' "$tmp/err" && [ ! -f "$tmp/mixed.ini" ]
check $? "measurements of different GPUs are refused, not fitted together"

"$ts" fit "$d/synthetic-gemm.tsv" -o "$tmp/g.ini" --hardware "$src/scenarios/hardware/h100-sxm.ini" >/dev/null 2>"$tmp/err" \
  && grep -q '^gemm_eff_max_bf16 = 0\.[0-9]*$' "$tmp/g.ini" && grep -q "^gemm_eff_max_bf16.source = trainsim fit of the simulator's GEMM curve .* the share of 132 SMs" "$tmp/g.ini" \
  && grep -q '^gemm_eff_half_GFLOP_bf16 = ' "$tmp/g.ini" && ! grep -q '^gemm_eff_max = ' "$tmp/g.ini"
check $? "with --hardware the profile carries gemm_eff_max_bf16 and gemm_eff_half_GFLOP_bf16 (the fitted dtype's keys), fitted to the simulator's own curve on the datasheet's SMs, with their sources"
"$ts" fit "$d/no-such-file.tsv" -o "$tmp/q.ini" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'no-such-file' "$tmp/err" && [ ! -f "$tmp/q.ini" ]
check $? "a missing measurement file is a usage error naming it, and writes nothing"
"$ts" fit "$d/nccl-tests-h200-all_reduce-8gpu.txt" >/dev/null 2>&1
[ $? -eq 2 ]
check $? "fit without -o is a usage error"

# calib-plan of the embedded default (GPT-3 175B, TP4, micro-batch 1, seq 2048, h 12288, 96 heads):
# the QKV GEMM is tokens 2048 × 3h/tp 9216 × h 12288 and the attention core B1 × 96/4 heads × s 2048
# × d 128; every line has the fields the benches read, numeric where they must be.
"$ts" calib-plan >"$tmp/plan.tsv" 2>"$tmp/err"
check $? "calib-plan of the default scenario exits 0"
grep -q "^gemm	qkv	2048	9216	12288	1	fp8$" "$tmp/plan.tsv" && grep -q "^attention	attn	1	24	24	2048	128$" "$tmp/plan.tsv"
check $? "calib-plan prints the QKV GEMM and the attention shape by the hand derivation"
awk -F'\t' '/^#/ {next} $1=="gemm" && $3>0 && $4>0 && $5>0 {ok++; next}
  $1=="attention" && $3>0 && $7>0 {ok++; next}
  $1=="nccl" && $2 ~ /^(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|sendrecv)$/ && $3>1 && $4>0 {ok++; next}
  {bad++} END {exit !(ok > 0 && bad == 0)}' "$tmp/plan.tsv"
check $? "every calib-plan line is a gemm, attention or nccl line the benches can read"
"$ts" calib-plan no-such-scenario.ini >/dev/null 2>&1
[ $? -eq 2 ]
check $? "calib-plan of a missing scenario is a usage error"

if command -v gnuplot >/dev/null 2>&1; then
  TRAINSIM_PLOTS_DIR="$src/plots" "$ts" fit "$d/nccl-tests-h200-all_reduce-8gpu.txt" \
    -o "$tmp/p2.ini" --plot "$tmp/plots" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -eq 0 ] && [ -s "$tmp/plots/calib-nccl.png" ] && head -c 8 "$tmp/plots/calib-nccl.png" | grep -q PNG
  check $? "--plot draws a PNG of busbw against size"
else
  n=$((n + 1)); echo "ok $n - --plot draws a PNG # SKIP gnuplot not installed"
fi
echo "1..$n"
exit $fail
