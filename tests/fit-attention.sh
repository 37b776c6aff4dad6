#!/bin/sh
# calib/fit-attention.py reproduces the FlashAttention-2 curves the H100 and H200 profiles ship
# (attn_fa2_eff, attn_fa2_half_GFLOP and their backward twins) from the committed torch-kernels.tsv,
# and refuses a file without enough rows.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
n=0; fail=0
check () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
if ! command -v python3 >/dev/null 2>&1; then
  echo "ok 1 - fit-attention.py # SKIP no python3"; echo "1..1"; exit 0
fi
key () { sed -n "s/^$2 = //p" "$src/scenarios/hardware/$1.ini"; }
for gpu in h100-sxm:h100-sxm-2026-11-26 h200-sxm:h200-sxm-2026-11-26; do
  p=${gpu%%:*}; r=${gpu#*:}
  out=$(python3 "$src/calib/fit-attention.py" "$src/calib/results/$r/torch-kernels.tsv" --backend flash2)
  check $? "$p: the fit runs"
  fwd=$(printf '%s\n' "$out" | awk -F'\t' '$1 == "fwd" { print $3, $5 }')
  bwd=$(printf '%s\n' "$out" | awk -F'\t' '$1 == "bwd" { print $3, $5 }')
  [ "$fwd" = "$(key $p attn_fa2_eff) $(key $p attn_fa2_half_GFLOP)" ]
  check $? "$p: forward e_max and G_half as the profile ships them ($fwd)"
  [ "$bwd" = "$(key $p attn_fa2_bwd_eff) $(key $p attn_fa2_bwd_half_GFLOP)" ]
  check $? "$p: backward e_max and G_half as the profile ships them ($bwd)"
done
python3 "$src/calib/fit-attention.py" /dev/null >/dev/null 2>&1
[ $? = 1 ]
check $? "a file without sdpa rows exits 1"
echo "1..$n"
exit $fail
