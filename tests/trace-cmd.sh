#!/bin/sh
# `trainsim run --trace FILE --plots DIR --link-stats FILE` as TAP on a small case (Llama 3.1 8B, tp4 pp2 vpp4 dp2 on
# 16 H100): the trace is JSON with one process per simulated rank (representatives: one per
# pipeline stage = 2) and complete events on the compute stream that never overlap (one stream runs
# one op at a time) named after the model's ops; the plots are rendered as PNG and SVG.
bin=${TRAINSIM:-./trainsim}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "${TRAINSIM_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
"$bin" run hardware/h100-sxm.ini fabrics/ndr400-rail-optimized.ini models/llama3.1-8b.ini --set cluster.gpus=16 \
  --set parallel.micro_batch=1 --set parallel.global_batch=32 --set training.seq_len=2048 --set parallel.tp=4 \
  --set parallel.pp=2 --set parallel.vpp=4 --set parallel.zero=1 --trace "$tmp/t.json" --plots "$tmp/p" \
  --link-stats "$tmp/links.tsv" \
  >"$tmp/out" 2>"$tmp/err"; rc=$?
check "run --trace --plots exits 0" '[ $rc = 0 ]'
check "trace: one track per simulated rank, compute ops in sequence, step length" "python3 - '$tmp/t.json' '$tmp/out' <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d['traceEvents'] if e['ph'] == 'X']
procs = {e['args']['name'] for e in d['traceEvents'] if e['ph'] == 'M' and e['name'] == 'process_name'}
assert len(procs) == 2, procs
comp = {}
for e in ev:
    if e['tid'] == 0:
        comp.setdefault(e['pid'], []).append((e['ts'], e['ts'] + e['dur']))
for pid, iv in comp.items():
    iv.sort()
    for a, b in zip(iv, iv[1:]):
        assert b[0] >= a[1] - 1e-3, (pid, a, b)
# The last op ends at the reported step time (within rounding of the report's 4 digits).
step = float(re.search(r'^step time +([0-9.]+) s', open(sys.argv[2]).read(), re.M).group(1))
end = max(e['ts'] + e['dur'] for e in ev) / 1e6
assert abs(end - step) < 6e-4, (end, step)
# Events carry the op's name (model/layer.h names, runner labels) and its breakdown category.
names = {e['name'] for e in ev}
for n in ('qkv', 'fc1', 'fc2_wgrad', 'attn_bwd', 'pp_send_act', 'dp_grad_rs', 'dp_param_ag'):
    assert n in names, (n, sorted(names)[:40])
assert {e['cat'] for e in ev if e['name'] == 'fc1'} == {'compute'}
assert {e['cat'] for e in ev if e['name'] == 'dp_grad_rs'} == {'dp'}
PY"
# Link stats: PP crosses the two nodes (order tp,cp,ep,dp,pp puts tp4 x dp2 = 8 ranks in a node),
# so NICs carry bytes; no link can carry more than its capacity over the step (utilisation <= 1).
check "link stats: NIC links used, no link above capacity" \
  'awk -F"\t" "!/^#/ && NR > 1 && \$2 != \"kind\" {if (\$2 ~ /^nic/ && \$6 > 0) nic=1; if (\$7 > 1.000001) bad=1} END {exit bad || !nic}" "$tmp/links.tsv"'
for f in run-breakdown run-memory run-timeline; do
  check "plot $f.png and .svg" "[ -s '$tmp/p/$f.png' ] && [ -s '$tmp/p/$f.svg' ]"
done
echo "1..$n"
