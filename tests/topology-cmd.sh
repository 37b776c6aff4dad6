#!/bin/sh
# `trainsim topology` on every seed run scenario, as TAP. Expected counts for the two MLPerf cases
# are derived in tests/test-topology.c (/sim/topology/h100-1344-summary, /gb200-128-racks-summary):
# 1,344 x 8 H100 on 64-port NDR rail-optimized 3 tiers: 336 leaf, 512 spine, 224 core switches,
# 86,016 links, 268.8 TB/s; 128 GB200 racks x 64 GPUs on 64-port 800G: 256/256/128, 65,536, 409.6 TB/s.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
bin=${TRAINSIM:-./trainsim}
n=0; fail=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
notok () { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
# has OUTPUT REGEX…: every regex matches a line of OUTPUT
has () {
  out=$1; shift
  for re in "$@"; do
    printf '%s\n' "$out" | grep -Eq "$re" || { echo "# missing: $re"; return 1; }
  done
}
for f in "$src"/scenarios/runs/*.ini; do
  name=$(basename "$f")
  if out=$("$bin" topology "$f" 2>&1) && has "$out" '^GPUs +[0-9]+' '^  leaf +switches +[0-9]+' \
       '^directed links +[0-9]+' '^bisection +[0-9.]+ TB/s'; then
    ok "topology $name"
  else
    printf '%s\n' "$out" | sed 's/^/# /'; notok "topology $name"
  fi
done
gpt3="$src/scenarios/runs/gpt3-175b-mlperf-v3.1.ini"
out=$("$bin" topology "$gpt3" 2>&1)
if has "$out" '^GPUs +10752 in 1344 nodes of 8' '^NVLink domains +1344 ' '^  leaf +switches +336 ' \
     '^  spine +switches +512 ' '^  core +switches +224 ' '^directed links +86016$' '^bisection +268\.8 TB/s'; then
  ok "GPT-3 175B MLPerf v3.1 counts"
else
  printf '%s\n' "$out" | sed 's/^/# /'; notok "GPT-3 175B MLPerf v3.1 counts"
fi
llama="$src/scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini"
out=$("$bin" topology "$llama" 2>&1)
if has "$out" '^GPUs +8192 in 2048 nodes of 4' '^NVLink domains +128 of 64 GPUs used \(of 72\)' \
     '^  leaf +switches +256 ' '^  spine +switches +256 ' '^  core +switches +128 ' \
     '^directed links +65536$' '^bisection +409\.6 TB/s'; then
  ok "Llama 3.1 405B GB200 MLPerf v6.0 counts"
else
  printf '%s\n' "$out" | sed 's/^/# /'; notok "Llama 3.1 405B GB200 MLPerf v6.0 counts"
fi
# --set reaches the builder: 2 tiers cannot hold 10,752 NICs with 64-port switches.
out=$("$bin" topology "$gpt3" --set fabric.tiers=2 2>&1); rc=$?
if [ "$rc" = 2 ] && has "$out" '336 leaves' 'use 3 tiers'; then
  ok "2 tiers of radix 64 rejected for 10,752 GPUs"
else
  printf '%s\n' "$out" | sed 's/^/# /'; notok "2 tiers of radix 64 rejected for 10,752 GPUs (rc $rc)"
fi
# Oversubscription 3:1 at the leaf: 48 down / 16 up ports per leaf; 1,344 nodes / 48 = 28 whole leaves
# per rail, 224 leaves; bisection 224 x 16 x 50 GB/s / 2 = 89.6 TB/s, a third of the 1:1 268.8 TB/s.
out=$("$bin" topology "$gpt3" --set fabric.oversubscription_leaf=3 2>&1)
if has "$out" '^  leaf +switches +224 +ports down +48, up +16' '^bisection +89\.6 TB/s'; then
  ok "leaf oversubscription 3:1"
else
  printf '%s\n' "$out" | sed 's/^/# /'; notok "leaf oversubscription 3:1"
fi
# --route: same node over NVLink, rail 0 -> rail 1 through the core, PXN stays on one rail. The
# fabric routes adaptively and is non-blocking, so the route lists the NICs and the switches
# between them spread it; with static routing it lists the leaf, spine and core links.
out=$("$bin" topology "$gpt3" --route 0:9 2>&1)
if has "$out" '^route \(2 links' 'spread by adaptive routing' '^route with PXN \(4 links' 'nvlink-up'; then
  ok "route 0:9"
else
  printf '%s\n' "$out" | sed 's/^/# /'; notok "route 0:9"
fi
out=$("$bin" topology "$gpt3" --set fabric.routing=static --route 0:9 2>&1)
if has "$out" '^route \(6 links' 'spine-up' '^route with PXN \(4 links'; then
  ok "route 0:9, static routing"
else
  printf '%s\n' "$out" | sed 's/^/# /'; notok "route 0:9, static routing"
fi
out=$("$bin" topology "$gpt3" --route 0:99999 2>&1); rc=$?
if [ "$rc" = 2 ] && has "$out" 'outside the 10752 GPUs'; then ok "route outside rejected"; else notok "route outside rejected"; fi
echo "1..$n"
exit $fail
