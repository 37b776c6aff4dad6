#!/bin/sh
# `trainsim run` simulates the step: the text report has the prediction section, JSON carries the
# top-level step_time_s, mfu, tokens_per_s and breakdown, and --full agrees with the default
# (representatives) on this symmetric plan. TAP.
t=${TRAINSIM:-./trainsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/s.ini" <<'INI'
[scenario]
include = embedded:hardware/h100-sxm.ini;embedded:fabrics/ndr400-rail-optimized.ini;embedded:models/megatron-gpt-1.7b.ini
[cluster]
gpus = 16
[parallel]
tp = 2
pp = 2
micro_batch = 1
global_batch = 16
zero = 1
dp_overlap = true
[training]
seq_len = 2048
INI
n=0; fail=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
out=$("$t" run "$tmp/s.ini" 2>&1); rc=$?
ok $rc "run exits 0"
echo "$out" | grep -q "== Prediction (simulated step) ==" ; ok $? "text report has the prediction"
echo "$out" | grep -q "pipeline bubble" ; ok $? "text report has the breakdown"
# The answer leads: the first section is the answer (step time, memory fit, largest loss); the
# resolved keys come only with --explain, and the answer's step time is the prediction's.
first=$(echo "$out" | grep -m1 '^== ')
[ "$first" = "== Answer ==" ]; ok $? "text report leads with the answer ($first)"
ans=$(echo "$out" | sed -n '/^== Answer ==/,/^$/p')
echo "$ans" | grep -q '^memory per GPU .*fits' && echo "$ans" | grep -q '^largest loss '
ok $? "the answer has the memory fit and the largest loss"
s1=$(echo "$out" | awk '/^step time/ { print $3 }' | sort -u | wc -l)
[ "$s1" = 1 ]; ok $? "the answer's step time is the prediction's"
! echo "$out" | grep -q "== Scenario as resolved ==" ; ok $? "resolved keys hidden by default"
"$t" run "$tmp/s.ini" --explain 2>&1 | grep -q "== Scenario as resolved ==" ; ok $? "--explain prints them"
js=$("$t" run "$tmp/s.ini" --format json 2>&1); ok $? "json exits 0"
a=$(echo "$js" | sed -n 's/^  "step_time_s" : \([0-9.e+-]*\),*$/\1/p')
[ -n "$a" ]; ok $? "json has a top-level step_time_s ($a)"
for k in mfu tokens_per_s breakdown; do
  echo "$js" | grep -q "^  \"$k\" :" ; ok $? "json has top-level $k"
done
b=$("$t" run "$tmp/s.ini" --full --format json 2>&1 | sed -n 's/^  "step_time_s" : \([0-9.e+-]*\),*$/\1/p')
[ -n "$a" ] && [ "$a" = "$b" ]; ok $? "--full agrees with representatives ($a = $b)"
# The fixed per-step host time ends the step on every rank: it adds exactly itself.
z=$("$t" run "$tmp/s.ini" --set hardware.step_overhead_ms=0 --format json 2>&1 | sed -n 's/^  "step_time_s" : \([0-9.e+-]*\),*$/\1/p')
c=$("$t" run "$tmp/s.ini" --set hardware.step_overhead_ms=7.5 --format json 2>&1 | sed -n 's/^  "step_time_s" : \([0-9.e+-]*\),*$/\1/p')
awk -v a="$z" -v c="$c" 'BEGIN { d = c - a - 0.0075; exit !(a > 0 && d < 1e-9 && d > -1e-9) }'
ok $? "step_overhead_ms adds itself to the step ($z -> $c)"
# An uneven pipeline split is printed stage by stage; the even split prints none.
"$t" run "$tmp/s.ini" --set 'parallel.pp_layout=Et*11|t*13L' 2>&1 |
  grep -q "^pipeline split       transformer layers per virtual stage 11, 13 (parallel.pp_layout"
ok $? "the report prints a layout's split"
echo "$out" | grep -q "^pipeline split"; [ $? != 0 ]; ok $? "an even split prints no split line"
# A published measurement is of its file's case: another GPU or batch hides it (naming the key), a
# --set that restates a value does not.
hpe=embedded:runs/llama31-8b-h200-mlperf-v5.1-hpe.ini
"$t" run "$hpe" 2>&1 | grep -q "^measured             0.3531 s: prediction"
ok $? "the run scenario compares with its measurement"
"$t" run "$hpe" --set parallel.tp=1 --set parallel.global_batch=32 2>&1 | grep -q "^measured             0.3531 s"
ok $? "restating the case's own values keeps the measurement"
"$t" run "$hpe" embedded:hardware/h100-sxm.ini 2>&1 | grep -q \
  "^measured:  *none for this case (the scenario's measurements are of \[hardware\] name = H200 SXM 141GB; here H100 SXM5 80GB)"
ok $? "another GPU: no comparison, the changed key named"
out=$("$t" run "$hpe" --set parallel.global_batch=64 --format json 2>&1)
echo "$out" | grep -q '"measured_step_s"'; [ $? != 0 ]; ok $? "another batch: JSON carries no measured step"
echo "$out" | grep -q '"measured_not_applicable" *: *"measured with \[parallel\] global_batch = 32, not 64"'
ok $? "and says why"
echo "1..$n"
exit $fail
