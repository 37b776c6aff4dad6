#!/bin/sh
# Byte-identical check for refactors that must not change behaviour (issue 21's layout move):
# runs the same trainsim commands with two binaries and diffs every output byte for byte.
#   tests/byte-identical.sh OLD_TRAINSIM NEW_TRAINSIM [WORKDIR]
#   tests/byte-identical.sh --capture TRAINSIM OUTDIR      (one binary's outputs only)
#   tests/byte-identical.sh --compare DIR_A DIR_B          (diff two captured directories)
# Runs from the source tree (scenario paths are relative to it); takes a few seconds.
# Filtered: wall-clock time (validate's "simulation time summed over rows" line, the TSV wall_s
# column, any JSON "…wall…" number), which differs from run to run, and the build's git revision
# in version stamps "git 1aace71-dirty)".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

capture() {
  bin=$1; out=$2
  case "$bin" in /*) ;; *) bin=$(pwd)/$bin ;; esac
  mkdir -p "$out"
  ( cd "$top" || exit 1
    run() { name=$1; shift
      "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo "$?" >"$out/$name.rc"
      for f in "$out/$name.out" "$out/$name.err"; do
        sed -e '/simulation time summed over rows/d' -e 's/git [0-9a-f]\{7,\}\(-dirty\)\{0,1\})/git REV)/g' \
            -e 's/\("[a-z_]*wall[a-z_]*" *: *\)[0-9.e+-]*/\1WALL/' "$f" |
          awk -F '\t' -v OFS='\t' '/(^|\t)wall_s(\t|$)/ { w = 0; for (i = 1; i <= NF; i++) if ($i == "wall_s") w = i }
                                   w && NF >= w && $w ~ /^[0-9.]+$/ { $w = "WALL" } { print }' >"$f.tmp" &&
          mv "$f.tmp" "$f"
      done; }
    run run-default run
    run run-llama405b run scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini
    run run-gpt3 run scenarios/runs/gpt3-175b-mlperf-v4.0.ini
    run run-gpt3-full-tsv run scenarios/runs/gpt3-175b-mlperf-v4.0.ini --format tsv
    run validate-shared-deck validate ../shared/validation/deck.csv
    run validate-test-deck validate -j 1 tests/data/validate-deck.csv
    run validate-test-deck-json validate -j 1 --format json tests/data/validate-deck.csv
    run validate-test-deck-tsv validate -j 1 --format tsv tests/data/validate-deck.csv
    run sweep-gpus sweep runs/llama31-405b-gb200-mlperf-v6.0.ini --vary cluster.gpus=2048,4096
    run search-70b search hardware/h100-sxm.ini fabrics/ndr400-rail-optimized.ini \
      models/llama3.1-70b.ini --set cluster.gpus=64 --set parallel.micro_batch=1 \
      --set parallel.global_batch=64 --set training.seq_len=4096 --set parallel.tp=8 \
      --set parallel.pp=4 --max-micro-batch=1 --confirm=2 --top=3
    run topology-default topology
    run collective-default collective
  )
}

compare() {
  if diff -r "$1" "$2"; then echo "byte-identical: $(ls "$1" | wc -l) files identical"; return 0; fi
  echo "byte-identical: DIFFERENCES between $1 and $2" >&2; return 1
}

case "${1:-}" in
  --capture) [ $# -eq 3 ] || { echo "usage: $0 --capture TRAINSIM OUTDIR" >&2; exit 2; }
    capture "$2" "$3" ;;
  --compare) [ $# -eq 3 ] || { echo "usage: $0 --compare DIR_A DIR_B" >&2; exit 2; }
    compare "$2" "$3" ;;
  ''|-h|--help) sed -n '2,9p' "$0"; exit 2 ;;
  *) [ $# -ge 2 ] || { echo "usage: $0 OLD_TRAINSIM NEW_TRAINSIM [WORKDIR]" >&2; exit 2; }
    work=${3:-$(mktemp -d)}
    capture "$1" "$work/old"; capture "$2" "$work/new"
    compare "$work/old" "$work/new" ;;
esac
