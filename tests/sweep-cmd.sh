#!/bin/sh
# `trainsim sweep` as TAP: grid order and size, invalid points kept as rows with their reason, the
# scaling-efficiency column, formats, resume after a kill (same bytes as an uninterrupted run), a
# torn last line dropped, another sweep's --out refused, and 2 MPI ranks (byte-identical to serial).
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
bin=${TRAINSIM:-./trainsim}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "${TRAINSIM_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
llama="$src/scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini"
gpt3="$src/scenarios/runs/gpt3-175b-mlperf-v3.1.ini"

# The step simulator on a small case (Llama 3.1 8B on 8 and 16 H100): rows with a step time and a
# breakdown that sums to it (sim/step/runner.h), and the strong-scaling column (same global batch).
small="hardware/h100-sxm.ini fabrics/ndr400-rail-optimized.ini models/llama3.1-8b.ini --set parallel.micro_batch=1
  --set parallel.global_batch=16 --set training.seq_len=2048 --set parallel.zero=1"
"$bin" sweep $small --vary cluster.gpus=8,16 --vary parallel.tp=1,2 --format tsv >"$tmp/sim.tsv" 2>"$tmp/err"
check "simulated sweep: 4 ok rows, model named" \
  '[ "$(awk -F"\t" "!/^#/ && \$3==\"ok\"" "$tmp/sim.tsv" | wc -l)" = 4 ] && grep -q "^# model: step simulation" "$tmp/sim.tsv"'
check "breakdown sums to the step" \
  'awk -F"\t" "!/^#/ && \$3==\"ok\" {s=0; for (i=16;i<=24;i++) s+=\$i; if (s < \$13*0.999 || s > \$13*1.001) bad=1} END {exit bad}" "$tmp/sim.tsv"'
check "band columns: step_lo_s <= step_s <= step_hi_s (calibrated Hopper)" \
  'awk -F"\t" "!/^#/ && \$3==\"ok\" {if (!(\$14 > 0 && \$14 <= \$13 && \$13 <= \$15)) bad=1} END {exit bad}" "$tmp/sim.tsv"'
check "strong scaling chosen for a fixed global batch" 'grep -q "scaling_eff" "$tmp/sim.tsv"'

# 3 x 2 grid, TSV: 3 provenance lines, the header, 6 rows; the last axis varies fastest.
"$bin" sweep --estimate "$llama" --vary cluster.gpus=2048,4096,8192 --vary parallel.tp=2,4 --format tsv >"$tmp/g.tsv" 2>"$tmp/err"
check "grid: 6 rows after header" '[ "$(grep -vc "^#" "$tmp/g.tsv")" = 7 ]'
check "grid order: last --vary fastest" \
  '[ "$(grep -v "^#" "$tmp/g.tsv" | sed 1d | cut -f1,2 | tr "\t\n" ":," )" = "2048:2,2048:4,4096:2,4096:4,8192:2,8192:4," ]'
# TP2 of 405B holds 405e9/16 params = 25 B per GPU: > 185 GiB with fp32 grads (model/memory.c), so
# these points must be rows marked no-fit with the reason, never dropped, and predicted as if they fit
# (over capacity is a finding, never a refusal: the memory model may overstate a run that ran).
check "no-fit points kept with reason and a prediction" \
  '[ "$(awk -F"\t" "!/^#/ && \$3==\"no-fit\" && \$NF ~ /does not fit: .* GiB per GPU/ && \$13 > 0" "$tmp/g.tsv" | wc -l)" = 3 ]'
# Weak scaling: at the base (2,048 GPUs) the efficiency is 1 by definition.
check "weak efficiency is 1 at the base" \
  '[ "$(awk -F"\t" "!/^#/ && \$1==2048 && \$2==4 {print \$(NF-1)}" "$tmp/g.tsv")" = 1 ]'
# Strong scaling with the base at 4,096: efficiency there is 1.
"$bin" sweep --estimate "$llama" --vary cluster.gpus=4096,8192 --scaling strong --base-gpus 4096 --format tsv >"$tmp/s.tsv"
check "strong efficiency is 1 at --base-gpus" \
  '[ "$(awk -F"\t" "!/^#/ && \$1==4096 {print \$(NF-1)}" "$tmp/s.tsv")" = 1 ] && grep -q strong_scaling_eff "$tmp/s.tsv"'
# --plots with --measured: the measured points (Azure MLPerf v6.0: 1.2734 s at 7,168 GPUs, 1.2712 s at
# 8,192, reference/mlperf.md) become efficiencies against their own base: 1.2734 / 1.2712 = 1.00173.
printf '7168 1.2734\n8192 1.2712\n' >"$tmp/meas.txt"
"$bin" sweep --estimate "$llama" --vary cluster.gpus=4096,8192 --plots "$tmp/pl" --measured "$tmp/meas.txt" >/dev/null 2>"$tmp/err"
check "scaling plot with measured points" \
  '[ -s "$tmp/pl/scaling.png" ] && [ -s "$tmp/pl/scaling.svg" ] && [ -s "$tmp/pl/breakdown.png" ] && [ -s "$tmp/pl/memory.png" ] && grep -q "^8192	1.00173$" "$tmp/pl/measured-scaling.tsv"'
# A plan the loader rejects (gpus not divisible by tp·cp·pp) is an invalid row.
out=$("$bin" sweep --estimate "$llama" --vary cluster.gpus=8192,8100 2>&1)
check "invalid point listed with its reason" 'printf "%s\n" "$out" | grep -Eq "point 1 \(cluster.gpus=8100\): .*not a multiple"'
check "json output parses" '"$bin" sweep --estimate "$llama" --vary parallel.micro_batch=1,2 --format json | python3 -m json.tool >/dev/null'
# Values with commas use ';'.
out=$("$bin" sweep --estimate "$llama" --vary "parallel.order=tp,cp,ep,dp,pp;tp,dp,cp,ep,pp" --format tsv 2>&1)
check "order axis with ';'" '[ "$(printf "%s\n" "$out" | grep -vc "^#")" = 3 ]'
# Bad usage: unknown key, exit 2.
"$bin" sweep --estimate "$llama" --vary parallel.nope=1,2 >/dev/null 2>"$tmp/err"; rc=$?
check "unknown key is exit 2 with the remedy" '[ $rc = 2 ] && grep -q "run --keys" "$tmp/err"'

# Resume: a 24-point sweep killed after its 7th row, rerun, prints what an uninterrupted run prints
# and recomputes only the missing points.
args="--estimate $gpt3 --vary cluster.gpus=2688,5376,10752 --vary parallel.micro_batch=1,2 --vary parallel.recompute=none,selective,full,none --format tsv"
# (the repeated value `none` makes two equal rows: they stay two rows)
"$bin" sweep $args --out "$tmp/r.out" >"$tmp/ref.tsv" 2>&1
mv "$tmp/r.out" "$tmp/ref.out"
TRAINSIM_TEST_KILL_AFTER_ROWS=7 "$bin" sweep $args --out "$tmp/r.out" >/dev/null 2>&1; rc=$?
check "killed mid-sweep (signal 9)" '[ $rc = 137 ] && [ "$(grep -vc "^#\|^point" "$tmp/r.out")" = 7 ]'
printf '12\tok\t1' >>"$tmp/r.out"   # a torn line, as a kill during the write leaves it
"$bin" sweep $args --out "$tmp/r.out" >"$tmp/r.tsv" 2>&1
check "resumed output identical to an uninterrupted run" 'cmp -s "$tmp/ref.tsv" "$tmp/r.tsv"'
check "resumed file holds each point once" \
  '[ "$(grep -v "^#\|^point" "$tmp/r.out" | cut -f1 | sort -n | uniq | wc -l)" = 24 ] && [ "$(grep -vc "^#\|^point" "$tmp/r.out")" = 24 ]'
"$bin" sweep --estimate "$gpt3" --vary cluster.gpus=2688 --out "$tmp/r.out" >/dev/null 2>"$tmp/err"; rc=$?
check "another sweep's --out refused" '[ $rc = 2 ] && grep -q "another sweep" "$tmp/err"'

# Progress: on a terminal (script(1) gives the sweep a pty) a done/total, rate, ETA line on stderr;
# nothing when stderr is a pipe or a file.
if command -v script >/dev/null 2>&1; then
  TRAINSIM_PROGRESS_AFTER_MS=0 script -qec "\"$bin\" sweep $args >/dev/null" "$tmp/typescript" >/dev/null 2>&1 </dev/null
  check "progress line on a TTY" 'grep -aEq "[0-9]+/24 points \([0-9]+%\), [0-9.]+/s" "$tmp/typescript"'
else
  n=$((n + 1)); echo "ok $n - progress line on a TTY # SKIP script(1) not found"
fi
TRAINSIM_PROGRESS_AFTER_MS=0 "$bin" sweep $args >/dev/null 2>"$tmp/perr"
check "no progress when piped" '[ ! -s "$tmp/perr" ]'

# MPI: 2 ranks on this machine, byte for byte the serial output.
# Open MPI's own allocations are reported as leaks by LeakSanitizer in sanitizer builds: not ours,
# so leak detection is off for the MPI runs (memory errors are still caught). mpirun must not read
# the script's stdin.
mpi_env="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if command -v mpirun >/dev/null 2>&1 && "$bin" --version >/dev/null; then
  env "$mpi_env" mpirun --allow-run-as-root --oversubscribe -n 2 "$bin" sweep $args </dev/null >"$tmp/m.tsv" 2>"$tmp/merr"; rc=$?
  "$bin" sweep $args >"$tmp/serial.tsv" 2>&1
  if [ $rc = 0 ] && cmp -s "$tmp/serial.tsv" "$tmp/m.tsv"; then ok "mpirun -n 2 sweep identical to serial"
  else sed 's/^/# /' "$tmp/merr"; notok "mpirun -n 2 sweep identical to serial (rc $rc)"; fi
  env "$mpi_env" mpirun --allow-run-as-root --oversubscribe -n 2 "$bin" sweep $args --out "$tmp/m.out" </dev/null >"$tmp/m2.tsv" 2>/dev/null
  check "mpirun -n 2 with --out: same rows" '[ "$(grep -v "^# command" "$tmp/serial.tsv")" = "$(grep -v "^# command" "$tmp/m2.tsv")" ]'
else
  skip "mpirun -n 2 sweep identical to serial" "mpirun not found"
  skip "mpirun -n 2 with --out: same rows" "mpirun not found"
fi
echo "1..$n"
