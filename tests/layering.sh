#!/bin/sh
# The layering rule of DESIGN.md §3, as TAP: model/ includes nothing from sim/ or calib/; the sim
# core (engine, queue, maxmin, flow, link, topology, collective) includes nothing from model/.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
n=0; fail=0
check () { # description, offending matches
  n=$((n + 1))
  if [ -n "$2" ]; then echo "not ok $n - $1"; echo "$2" | sed 's/^/# /'; fail=1
  else echo "ok $n - $1"; fi
}
check "model/ includes nothing from sim/ or calib/" \
  "$(grep -nE '#[[:space:]]*include[[:space:]]*"(sim|calib)/' "$src"/model/*.[ch] 2>/dev/null)"
core=""
for m in engine queue maxmin flow link topology collective alphabeta; do
  for f in "$src/sim/$m.c" "$src/sim/$m.h"; do [ -f "$f" ] && core="$core $f"; done
done
check "sim core includes nothing from model/" \
  "$( [ -n "$core" ] && grep -nE '#[[:space:]]*include[[:space:]]*"model/' $core)"
check "calib/ GPU programs include no GLib" \
  "$(grep -nE '#[[:space:]]*include[[:space:]]*[<"](glib|gsl)' "$src"/calib/*.cu "$src"/calib/trainer/*.cu 2>/dev/null)"
echo "1..$n"
exit $fail
