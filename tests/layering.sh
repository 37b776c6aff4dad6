#!/bin/sh
# The layering of sim/README.md, as TAP, read from the #include "…" lines of model/, sim/** and
# calib/**. Every folder has a rank; a file may include headers of its own folder and of folders of
# strictly lower rank. An include of a higher or equal rank (an upward or sideways arrow), a folder
# missing from the table, or a cycle between folders fails. Add a folder: give it a rank here.
#
# rank  folder          what it is
LAYERS='
1 model           shapes, plans, ops, FLOPs, memory of the model (imports nothing)
1 sim/des         discrete-event kernel: queue, engine (integer ns, knows no GPU)
1 calib/trainer   the CUDA reference trainer (standalone)
2 sim/net         links, topology, max-min, flows, alpha-beta, collectives
2 sim/gpu         one GPU type: profile, streams, kernel times
3 sim/scenario    scenario key table, loader, checks (joins model and hardware)
3 calib           micro-benchmarks and the profile fit (writes sim/gpu profiles)
4 sim/step        the training-step runner, stragglers
5 sim/report      what a run prints: report, cost, trace, plots
6 sim/plan        estimate, sweep, search, goodput, progress, MPI distribution
6 sim/calibrate   validate, fit from runs, compare, sensitivity
7 sim/cli         main and one file per command
'
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
cd "$src" || exit 1
n=0; fail=0
check () { # description, offending matches
  n=$((n + 1))
  if [ -n "$2" ]; then echo "not ok $n - $1"; echo "$2" | sed 's/^/# /'; fail=1
  else echo "ok $n - $1"; fi
}
inc='#[[:space:]]*include[[:space:]]*"'
files=$(find model sim calib -name '*.[ch]' -o -name '*.cu' | sort)
# "file folder target-folder target" for every include of a project header in another folder.
edges=$(grep -nE "$inc(model|sim|calib)/" $files /dev/null |
  sed -E 's|^([^:]*):([0-9]*):.*"([^"]*)".*|\1:\2 \1 \3|' |
  awk '{ f = $2; sub(/\/[^\/]*$/, "", f); t = $3; sub(/\/[^\/]*$/, "", t); if (f != t) print $1, f, t, $3 }')

check "every folder with sources is in the layer table" \
  "$(for f in $files; do dirname "$f"; done | sort -u | while read -r d; do
       echo "$LAYERS" | awk -v d="$d" '$2 == d { found = 1 } END { exit !found }' || echo "$d"; done)"

check "includes point only to folders of lower rank (no upward or sideways arrow)" \
  "$(echo "$edges" | awk -v layers="$LAYERS" '
     BEGIN { k = split(layers, l, "\n"); for (i = 1; i <= k; i++) { split(l[i], w, " "); if (w[2] != "") r[w[2]] = w[1] } }
     NF == 4 && !(($2 in r) && ($3 in r) && r[$2] > r[$3]) {
       print $1 ": " $2 " (rank " r[$2] ") includes " $4 " (" $3 ", rank " r[$3] ")" }')"

check "no cycle between folders" \
  "$(echo "$edges" | awk '
     NF == 4 && !seen[$2 " " $3]++ { adj[$2] = adj[$2] " " $3; nodes[$2]; nodes[$3] }
     function dfs(v,   i, k, a) { state[v] = 1; path[++depth] = v
       k = split(adj[v], a, " ")
       for (i = 1; i <= k; i++) {
         if (state[a[i]] == 1) { out = ""; on = 0
           for (j = 1; j <= depth; j++) { if (path[j] == a[i]) on = 1; if (on) out = out path[j] " -> " }
           print out a[i] }
         else if (!state[a[i]]) dfs(a[i]) }
       depth--; state[v] = 2 }
     END { for (v in nodes) if (!state[v]) dfs(v) }')"

check "only sim/des/ includes sim/des/queue-private.h (the queue internals the engine inlines)" \
  "$(grep -rnE "$inc(sim/des/)?queue-private\.h\"" model sim calib tests bench 2>/dev/null | grep -v '^sim/des/')"

check "model/ includes nothing from sim/ or calib/" \
  "$(grep -nE "$inc(sim|calib)/" model/*.[ch] 2>/dev/null)"

check "sim/des and sim/net include nothing from model/" \
  "$(grep -nE "$inc"'model/' sim/des/*.[ch] sim/net/*.[ch] 2>/dev/null)"

check "calib/ GPU programs include no GLib" \
  "$(grep -nE '#[[:space:]]*include[[:space:]]*[<"](glib|gsl)' calib/*.cu calib/trainer/*.cu 2>/dev/null)"
echo "1..$n"
exit $fail
