#!/bin/sh
# `trainsim sensitivity`: text, TSV and JSON reports of one small scenario; bad --step, --format and
# scenario input exit 2 with a message. TAP.
t=${TRAINSIM:-./trainsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/s.ini" <<'INI'
[scenario]
include = embedded:hardware/h100-sxm.ini;embedded:fabrics/ndr400-rail-optimized.ini;embedded:models/megatron-gpt-1.7b.ini
[model]
layers = 4
[cluster]
gpus = 16
[parallel]
tp = 2
pp = 2
micro_batch = 1
global_batch = 16
[training]
seq_len = 2048
INI
n=0; fail=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
out=$("$t" sensitivity "$tmp/s.ini" -j 2 2>&1); rc=$?
ok $rc "text exits 0"
echo "$out" | grep -q "^Sensitivity of .*: step [0-9.]* s; each constant scaled by ±5 %" ; ok $? "text header"
echo "$out" | grep -q "^hardware.gemm_eff_max_bf16 " ; ok $? "the bf16 GEMM efficiency is listed"
tsv=$("$t" sensitivity "$tmp/s.ini" -j 2 --format tsv --step 2 2>&1); ok $? "tsv exits 0"
echo "$tsv" | grep -q "^# delta	0.02$" ; ok $? "tsv carries --step 2 as delta 0.02"
echo "$tsv" | grep -q "^key	value	lo_step_s	hi_step_s	elasticity	refused	source$" ; ok $? "tsv column header"
js=$("$t" sensitivity "$tmp/s.ini" -j 2 --format json 2>&1); ok $? "json exits 0"
echo "$js" | grep -q '"constants" : \[' ; ok $? "json has the constants array"
"$t" sensitivity "$tmp/s.ini" --step 70 >/dev/null 2>"$tmp/e"; [ $? = 2 ] && grep -q -- "--step" "$tmp/e"; ok $? "--step 70 exits 2"
"$t" sensitivity "$tmp/s.ini" --format xml >/dev/null 2>&1; [ $? = 2 ]; ok $? "unknown format exits 2"
"$t" sensitivity "$tmp/s.ini" --set hardware.mem_eff=nan >/dev/null 2>"$tmp/e"; [ $? = 2 ] && grep -q "mem_eff" "$tmp/e"; ok $? "NaN constant exits 2 naming the key"
echo "1..$n"
exit $fail
