#!/bin/sh
# trainsim-trainer's command line, as TAP: bad input is refused with exit status 2 and a message that
# names the problem, before any GPU is touched (so this runs on CI, which has none).
bin=${TRAINSIM_TRAINER:-${G_TEST_BUILDDIR:-$(dirname "$0")}/../calib/trainer/trainsim-trainer}
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
n=0; fail=0
expect () { # description, expected status, expected text, command...
  d=$1; want=$2; text=$3; shift 3
  n=$((n + 1))
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && printf '%s' "$out" | grep -q -- "$text"; then echo "ok $n - $d"
  else echo "not ok $n - $d (status $rc, output: $out)"; fail=1; fi
}
expect "--help lists --emit-scenario" 0 "emit-scenario" "$bin" --help
expect "no --model" 2 "give --model" "$bin"
expect "unknown option" 2 "unknown option --bogus" "$bin" --model x --bogus 1
expect "bad number" 2 "bad value" "$bin" --model x --steps ten
expect "bad --zero" 2 "zero 0 or 1" "$bin" --model x --zero 3
expect "missing model file" 2 "cannot open" "$bin" --model "$src/no/such.ini"
expect "MoE model refused" 2 "dense models only" "$bin" --model "$src/scenarios/models/mixtral-8x7b.ini"
expect "learned positions shorter than seq_len" 2 "max_positions" \
  "$bin" --model "$src/calib/trainer/models/gpt2-124m.ini" --seq-len 2048
expect "--dry-run needs --hardware" 2 "needs --hardware" "$bin" --model "$src/calib/trainer/models/gpt2-124m.ini" --dry-run
# --dry-run writes the scenario of a 16-GPU ZeRO-1 run, and trainsim's loader accepts it
tmp=$(mktemp -d)
expect "--dry-run plan" 0 "dp 16, zero 1, micro-batch 4, global batch 128 (2 accumulation" \
  "$bin" --model "$src/calib/trainer/models/tinyllama-1.1b.ini" --dry-run --hardware h100-sxm --gpus 16 \
  --micro-batch 4 --global-batch 128 --zero 1 --seq-len 2048 --emit-scenario "$tmp/run.ini"
if [ -n "${TRAINSIM:-}" ] && [ -x "$TRAINSIM" ]; then
  expect "trainsim run takes the emitted scenario" 0 "" "$TRAINSIM" run "$tmp/run.ini"
fi
# The GEMM attention materializes the s x s scores (unfused in trainsim's terms); the flash kernel does not.
expect "gemm attention is emitted as unfused" 0 "unfused_attention = true" cat "$tmp/run.ini"
expect "--attention flash" 0 "scenario:" "$bin" --model "$src/calib/trainer/models/gpt2-124m.ini" --dry-run \
  --hardware h100-sxm --attention flash --emit-scenario "$tmp/flash.ini"
expect "flash attention is emitted as fused" 0 "unfused_attention = false" cat "$tmp/flash.ini"
rm -rf "$tmp"
# Without a usable GPU (as on CI) a real run exits 77, automake's SKIP, with a one-line reason.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  expect "no GPU: exit 77 with the reason" 77 "skipped: no.*CUDA device" \
    "$bin" --model "$src/calib/trainer/models/gpt2-124m.ini" --steps 1
fi
echo "1..$n"
exit $fail
