#!/bin/sh
# Determinism: the same inputs give byte-identical output. `trainsim run` twice in text, JSON and
# TSV and its Chrome trace; `trainsim validate` with one thread and with two, in JSON and TSV (the
# rows are simulated concurrently and must not depend on which finishes first), leaving out only
# the line that echoes the command (it holds -j) and TSV's wall_s. MPI rank counts for sweep and search are checked
# in sweep-cmd.sh and search-cmd.sh. TAP.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
ts=${TRAINSIM:-./trainsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0; fail=0
check () { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
cat > "$tmp/s.ini" <<'INI'
[scenario]
include = embedded:hardware/h100-sxm.ini;embedded:fabrics/ndr400-rail-optimized.ini;embedded:models/megatron-gpt-1.7b.ini
[cluster]
gpus = 32
[parallel]
tp = 2
pp = 4
vpp = 2
micro_batch = 1
global_batch = 32
zero = 1
dp_overlap = true
[training]
seq_len = 2048
INI
for f in text json tsv; do
  "$ts" run "$tmp/s.ini" --format $f >"$tmp/a.$f" 2>&1 && "$ts" run "$tmp/s.ini" --format $f >"$tmp/b.$f" 2>&1
  [ $? = 0 ] && [ -s "$tmp/a.$f" ] && cmp -s "$tmp/a.$f" "$tmp/b.$f"
  check $? "run --format $f: two runs byte-identical"
done
"$ts" run "$tmp/s.ini" --full --trace "$tmp/a.trace" >/dev/null 2>&1 &&
  "$ts" run "$tmp/s.ini" --full --trace "$tmp/b.trace" >/dev/null 2>&1
[ $? = 0 ] && [ -s "$tmp/a.trace" ] && cmp -s "$tmp/a.trace" "$tmp/b.trace"
check $? "run --full --trace: two traces byte-identical"
deck="$src/tests/data/validate-deck.csv"
# TSV's wall_s column is each row's measured simulation time, the one figure that is not a result.
nowall () { awk -F'\t' -v OFS='\t' '/^#/ { print; next } $1 == "id" { for (i = 1; i <= NF; i++) if ($i == "wall_s") w = i }
  { if (w) $w = ""; print }'; }
for f in json tsv; do
  "$ts" validate "$deck" -j 1 --format $f 2>/dev/null | grep -v -e '"command"' -e '^# command' | nowall >"$tmp/v1.$f"
  "$ts" validate "$deck" -j 2 --format $f 2>/dev/null | grep -v -e '"command"' -e '^# command' | nowall >"$tmp/v2.$f"
  [ -s "$tmp/v1.$f" ] && cmp -s "$tmp/v1.$f" "$tmp/v2.$f"
  check $? "validate --format $f: -j 1 and -j 2 byte-identical (but for wall_s)"
done
echo "1..$n"
exit $fail
