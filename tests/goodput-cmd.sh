#!/bin/sh
# `trainsim goodput` end to end, as TAP: text/tsv/json output, the interval and GPU sweeps,
# same seed same bytes, and exit status 2 on bad input.
t=${TRAINSIM:-./trainsim}
sc="runs/gpt3-175b-mlperf-v3.1.ini reliability/llama3-405b-h100.ini cost/h100-cloud-example.ini"
full="--set training.tokens=3e11"
n=0; fail=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

$t goodput $sc $full --trials 200 > "$tmp/text" 2>&1
ok $? "text report runs"
grep -q '^Monte Carlo .*goodput' "$tmp/text" && grep -q '^analytic .*goodput' "$tmp/text" \
  && grep -q 'seed 1' "$tmp/text" && grep -q 'per 1M tokens' "$tmp/text"
ok $? "text report has analytic, Monte Carlo with its seed, and cost per million tokens"

$t goodput $sc $full --trials 200 --format json > "$tmp/json" 2>&1
ok $? "json report runs"
grep -q '"monte_carlo"' "$tmp/json" && grep -q '"daly_interval_s"' "$tmp/json" && grep -q '"run_usd"' "$tmp/json"
ok $? "json report has the Monte Carlo, Daly's interval and the run cost"

$t goodput $sc $full --trials 50 --sweep-interval > "$tmp/sweep" 2>&1
ok $? "interval sweep runs"
rows=$(grep -vc '^#' "$tmp/sweep")
[ "$rows" = 18 ] && grep -q '^gpus	step_s	' "$tmp/sweep" && grep -q '^# seed: 1' "$tmp/sweep"
ok $? "interval sweep: provenance, header and 17 rows (got $rows lines)"

$t goodput $sc $full --trials 50 --sweep-gpus 2688,5376,10752 > "$tmp/gpus" 2>&1
ok $? "GPU sweep runs"
# Goodput falls as the job grows: more components fail more often during the same work.
awk -F'\t' '!/^#/ && $1 != "gpus" { print $19 }' "$tmp/gpus" > "$tmp/g"
[ "$(wc -l < "$tmp/g")" = 3 ] && [ "$(sort -r "$tmp/g" | tr '\n' ' ')" = "$(tr '\n' ' ' < "$tmp/g")" ]
ok $? "GPU sweep: goodput falls with scale ($(tr '\n' ' ' < "$tmp/g"))"

$t goodput $sc $full --trials 200 --format tsv --seed 9 | grep -v '^# command' > "$tmp/a"
$t goodput $sc $full --trials 200 --format tsv --seed 9 | grep -v '^# command' > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b"
ok $? "same seed, same bytes"

$t goodput $sc --set reliability.gpu_failures_per_day=-1 > /dev/null 2>&1
[ $? = 2 ]; ok $? "negative failure rate: exit 2"
$t goodput $sc --simulate --step-s 1 > /dev/null 2>&1
[ $? = 2 ]; ok $? "--simulate with --step-s: exit 2"
$t goodput $sc --set cluster.gpus=5376 --step-s 1.8 > /dev/null 2>&1
ok $? "--step-s gives the step time"
$t run --no-simulate runs/gpt3-175b-mlperf-v3.1.ini cost/h100-cloud-example.ini > "$tmp/run" 2>&1 \
  && grep -q '^== Cost (at the measured step time' "$tmp/run" && grep -q '^per million tokens' "$tmp/run" \
  && ! $t run --no-simulate | grep -q '== Cost'
ok $? "trainsim run: a cost section when [cost] is given, none otherwise"

small="hardware/h100-sxm.ini fabrics/ndr400-rail-optimized.ini models/llama3.1-8b.ini --set cluster.gpus=8
  --set parallel.tp=4 --set parallel.pp=2 --set parallel.micro_batch=1 --set parallel.global_batch_per_dp=4
  --set training.seq_len=2048 --set training.steps=10"
$t straggler $small --samples 3 --gpu-sigma 0.03 --format tsv > "$tmp/strag" 2>&1
ok $? "straggler runs"
# p50 with jitter of mean 1 is at least the step without it minus rounding; efficiency <= 1.
awk -F'\t' '!/^#/ && $1 == 8 { exit !($4 >= $2 * 0.999 && $8 <= 1.001) }' "$tmp/strag" && grep -q '^# seed: 1' "$tmp/strag"
ok $? "straggler: p50 >= step without variation, seed printed"
$t straggler $small --sigma -1 > /dev/null 2>&1
[ $? = 2 ]; ok $? "straggler: negative sigma: exit 2"
echo "1..$n"
exit $fail
