#!/bin/sh
# One GPU node's calibration set in one go: the GPU correctness test of the trainer's kernels, the
# GEMM/attention/memory/NCCL benchmarks (a grid and the shapes of PLAN files from `trainsim calib-plan`)
# and short validation-trainer runs with their emitted scenarios, so that `trainsim fit` and
# `trainsim compare` can be run on them elsewhere (the GPU node needs no GLib: `configure
# --disable-simulator` builds the GPU programs alone, then `make tests/test-trainer-gpu`).
#
#   calib/calibrate-node.sh BUILD_DIR OUT_DIR [--data CORPUS] [--quick] [--short] [PLAN.tsv ...]
#
# Every step has its own time limit (coreutils timeout) and its exit status is logged in
# OUT_DIR/steps.tsv (0 ok, 1 wrong results, 77 no GPU, 124 timed out), so one failure does not lose
# the rest. --quick shrinks every sweep (a smoke test of a few seconds); --short leaves out the trainer
# runs with full recompute and with the flash kernel (half the time). Libraries the programs miss
# (cuBLASLt, NCCL outside the CUDA toolkit, e.g. a pip wheel's) are looked for under /usr and /opt.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR [--data CORPUS] [--quick] [--short] [PLAN.tsv ...]" >&2; exit 2; }
b=$1; out=$2; shift 2
data=/usr/share/games/fortunes
quick=0
short=0
plans=""
while [ $# -gt 0 ]; do
  case $1 in
    --data) data=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --short) short=1; shift ;;
    *) plans="$plans $1"; shift ;;
  esac
done
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 1
cal=$b/calib
tr=$cal/trainer/trainsim-trainer

# Shared libraries the dynamic linker cannot find: add the folder of each that exists on this node.
for prog in "$cal"/trainsim-bench-* "$tr" "$b/tests/test-trainer-gpu"; do
  [ -x "$prog" ] || continue
  for lib in $(ldd "$prog" 2>/dev/null | awk '/not found/ {print $1}'); do
    dir=$(find /usr /opt -name "$lib" -print 2>/dev/null | head -n 1 | xargs -r dirname)
    [ -n "$dir" ] && LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && export LD_LIBRARY_PATH
  done
done

{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv 2>&1; nvidia-smi 2>&1; echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; uname -a; } > "$out/node.txt"
printf 'step\tstatus\tseconds\n' > "$out/steps.tsv"

step () { # name, limit in seconds, command... (stdout and stderr to OUT/NAME.log)
  name=$1; limit=$2; shift 2
  t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\n' "$name" "$rc" "$t" >> "$out/steps.tsv"
  echo "$name: exit $rc (${t} s)"
}

if [ $quick = 1 ]; then
  gemm_grid="-m 1024,4096 -n 4096 -k 4096"; attn_s="512,2048"; mem_s="16777216,268435456"
  r="-r 3 -w 1"; steps_small=8; steps_large=6
else
  gemm_grid="-m 512:16384:2"; attn_s="512:8192:2"; mem_s="1048576:2147483648:2"
  r="-r 10 -w 3"; steps_small=60; steps_large=40
fi

# Cheapest and most wanted first: kernel correctness, the plans' shapes, memory, the trainer; the
# grids last.
[ -x "$b/tests/test-trainer-gpu" ] && step test-trainer-gpu 120 "$b/tests/test-trainer-gpu"
i=0
for p in $plans; do
  i=$((i + 1))
  step "gemm-plan$i" 120 "$cal/trainsim-bench-gemm" --shapes "$p" $r -o "$out/gemm-plan$i.tsv"
done
step memory 120 "$cal/trainsim-bench-memory" -s "$mem_s" $r -o "$out/memory.tsv"
if [ -x "$tr" ]; then
  m=$src/calib/trainer/models
  step trainer-gpt2 180 "$tr" --model "$m/gpt2-124m.ini" --seq-len 1024 --micro-batch 8 --steps $steps_small \
    --eval-every 0 --data "$data" --out "$out/trainer-gpt2.tsv" --emit-scenario "$out/trainer-gpt2.ini"
  step trainer-tinyllama 240 "$tr" --model "$m/tinyllama-1.1b.ini" --seq-len 2048 --micro-batch 2 \
    --steps $steps_large --eval-every 0 --data "$data" --out "$out/trainer-tinyllama.tsv" \
    --emit-scenario "$out/trainer-tinyllama.ini"
  if [ $short = 0 ]; then
    step trainer-tinyllama-recompute 240 "$tr" --model "$m/tinyllama-1.1b.ini" --seq-len 2048 --micro-batch 4 \
      --recompute full --steps $steps_large --eval-every 0 --data "$data" --out "$out/trainer-tinyllama-recompute.tsv" \
      --emit-scenario "$out/trainer-tinyllama-recompute.ini"
    step trainer-gpt2-flash 180 "$tr" --model "$m/gpt2-124m.ini" --seq-len 1024 --micro-batch 8 \
      --steps $steps_small --attention flash --eval-every 0 --data "$data" --out "$out/trainer-gpt2-flash.tsv" \
      --emit-scenario "$out/trainer-gpt2-flash.ini"
  fi
fi
i=0
for p in $plans; do
  i=$((i + 1))
  step "attention-plan$i" 120 "$cal/trainsim-bench-attention" --shapes "$p" $r -o "$out/attention-plan$i.tsv"
done
step gemm 150 "$cal/trainsim-bench-gemm" -t bf16,fp8 $gemm_grid $r -o "$out/gemm.tsv"
step attention 120 "$cal/trainsim-bench-attention" -S "$attn_s" -H 32 -K 8 -D 128 $r -o "$out/attention.tsv"
[ -x "$cal/trainsim-bench-nccl" ] && step nccl 60 "$cal/trainsim-bench-nccl" -s 8:1073741824:8 $r -o "$out/nccl.tsv"
cat "$out/steps.tsv"
