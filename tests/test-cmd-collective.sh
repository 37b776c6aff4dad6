#!/bin/sh
# `trainsim collective` on the seed GPT-3 175B scenario (TAP): nccl-tests-style rows, the flow model
# equal to the closed form where nothing is shared (a TP group inside one DGX H100), bad input exit 2.
t=${TRAINSIM:-./trainsim}
n=0; fail=0
ok () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
out=$("$t" collective runs/gpt3-175b-mlperf-v3.1.ini --op allreduce --group tp --sizes 1M:1G 2>&1); rc=$?
ok $rc "collective over the TP group runs"
echo "$out" | sed 's/^/# /'
rows=$(echo "$out" | grep -vc '^#')
[ "$rows" = 11 ]; ok $? "1M:1G gives 11 sizes (doubling), got $rows"
# Columns: size count type algo time_us algbw busbw closed_time_us.
echo "$out" | awk '!/^#/ { if ($1 != prev * 2 && prev) bad = 1; prev = $1 } END { exit bad }'
ok $? "sizes double"
echo "$out" | awk '!/^#/ { if ($7 < last) bad = 1; last = $7 } END { exit bad }'
ok $? "busbw grows with size"
# TP4 in one NVLS domain, nothing shared: flow time = closed-form time within 1%.
echo "$out" | awk '!/^#/ { r = $5 / $8; if (r < 0.99 || r > 1.01) bad = 1 } END { exit bad }'
ok $? "flow model equals the closed form on an uncontended group"
# 4 H100 with NVLS at 1 GiB: busbw = 2*3/4 / (1 + 1/4) * 450 * 0.80 * 0.85 = 367 GB/s before latency
# (ring: 360), so auto picks NVLS; ~32 us of latency on 4.4 ms leaves ~364.
echo "$out" | awk '!/^#/ { last = $7; algo = $4 } END { exit !(algo == "nvls" && last > 355 && last < 368) }'
ok $? "auto picks NVLS for 1 GiB over TP4 at ~364 GB/s busbw"
out=$("$t" collective runs/gpt3-175b-mlperf-v3.1.ini --op allgather --group dp --algo ring --sizes 64M 2>&1); rc=$?
ok $rc "all-gather over a 336-rank DP group runs"
echo "$out" | grep -q '336 GPUs in 168 NVLink domain(s), 2 per domain'
ok $? "the DP group of rank 0 spans 168 nodes, 2 GPUs each"
# All 32 DP groups at once on the non-blocking rail-optimized fabric: each GPU's NIC carries its own
# group's traffic and routes are spread over the up-links, so the time equals the single group's.
one=$("$t" collective runs/gpt3-175b-mlperf-v3.1.ini --op allreduce --group dp --algo ring --sizes 2G 2>&1 | grep -v '^#')
all=$("$t" collective runs/gpt3-175b-mlperf-v3.1.ini --op allreduce --group dp --algo ring --sizes 2G --concurrent 2>&1)
echo "$all" | grep -q '32 group(s) at once'; ok $? "--concurrent runs the 32 DP groups"
[ -n "$one" ] && [ "$one" = "$(echo "$all" | grep -v '^#')" ]; ok $? "32 concurrent DP rings take the time of one"
"$t" collective runs/gpt3-175b-mlperf-v3.1.ini --op allsum >/dev/null 2>&1; rc=$?
[ $rc = 2 ]; ok $? "unknown --op exits 2"
"$t" collective runs/gpt3-175b-mlperf-v3.1.ini --group dp --algo nvls --sizes 1M >/dev/null 2>&1; rc=$?
[ $rc = 2 ]; ok $? "NVLS over a multi-node group is refused (exit 2)"
"$t" collective runs/gpt3-175b-mlperf-v3.1.ini --sizes 1Q >/dev/null 2>&1; rc=$?
[ $rc = 2 ]; ok $? "a bad size exits 2"
echo "1..$n"
exit $fail
