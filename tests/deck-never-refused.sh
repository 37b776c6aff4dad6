#!/bin/sh
# No run of the validation deck is refused (issue #19: "a published run that ran must never be
# refused"), as TAP: each row of ../shared/validation/deck.csv becomes its `trainsim run` command
# (`validate --row ID`), which must build the workload and memory report and exit 0, also where the
# memory model puts the plan above the GPU. Skipped (TAP "1..0 # SKIP") where the shared deck is
# not beside the source tree.
bin=${TRAINSIM:-./trainsim}
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
deck=$src/../shared/validation/deck.csv
[ -f "$deck" ] || { echo "1..0 # SKIP no shared deck at $deck"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$src/tests/tap.sh"

ids=$(awk -F, 'NR > 1 && NF >= 37 && $1 ~ /^[A-Za-z0-9_.+-]+$/ { print $1 }' "$deck")
for id in $ids; do
  "$bin" validate "$deck" --row "$id" >"$tmp/cmd" 2>"$tmp/err" || { notok "$id: validate --row"; continue; }
  # The printed command starts with `trainsim run`; run it with this build, without the step.
  cmd=$(sed -e 's/ \\$//' "$tmp/cmd" | tr '\n' ' ' | sed "s|^trainsim run|\"\$bin\" run --no-simulate|")
  eval "$cmd" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  check "$id: its run command is not refused (exit $rc)" "[ $rc = 0 ] && grep -q '^memory per GPU ' '$tmp/out'"
done
echo "1..$n"
