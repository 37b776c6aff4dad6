#!/bin/sh
# `trainsim import`: the embedded MLPerf scenarios round-trip through the frameworks' configurations.
# (1) GPT-3 175B, MLPerf v3.1 (runs/gpt3-175b-mlperf-v3.1.ini) as Megatron-LM arguments
#     (tests/data/import/gpt3-175b-mlperf-v3.1.args), imported with the scenario's hardware, fabric and
#     GPU count, gives the embedded scenario's step_time_s. Layered on top: tp-overlap/h100-tp4-pp8-mbs1.ini,
#     NVIDIA's userbuffers settings, which Megatron takes from a YAML file (--tp-comm-overlap-cfg, listed
#     as unknown), not from arguments, and the submission's NVTE_DP_AMAX_REDUCE_INTERVAL=0,
#     NVTE_ASYNC_AMAX_REDUCTION=1 and MEGATRON_CORE_P2P_MAX_CTAS=2, environment variables Megatron has
#     no argument for.
# (2) Llama 3.1 405B, MLPerf v6.0 on GB200 (runs/llama31-405b-gb200-mlperf-v6.0.ini) as a NeMo config
#     (tests/data/import/llama31-405b-mlperf-v6.0.yaml), the same. Layered on top: [hardware] nvls = false,
#     the submission's NCCL_NVLS_ENABLE=0, an environment variable and no config key.
# Measured keys, reliability and cost files do not change a step, so they are left out.
# (3) Ignored and unknown inputs are listed; a bad number, a bad YAML file and bad usage exit 2. TAP.
t=${TRAINSIM:-./trainsim}
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
. "$src/tests/tap.sh"
data="$src/tests/data/import"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step () { "$t" run "$@" --format json 2>&1 | sed -n 's/^  "step_time_s" : \([0-9.e+-]*\),*$/\1/p'; }

# (1) Megatron-LM, GPT-3 175B on 10,752 H100.
"$t" import megatron --args-file "$data/gpt3-175b-mlperf-v3.1.args" --vocab 50257 --hardware h100-sxm \
  --fabric ndr400-rail-optimized --gpus 10752 -o "$tmp/gpt3.ini" 2> "$tmp/gpt3.err"
check "import megatron exits 0" '[ $? = 0 ]'
cat > "$tmp/amax.ini" <<'INI'
[parallel]
fp8_amax_tp_only = true
fp8_amax_tp_only.source = NVTE_DP_AMAX_REDUCE_INTERVAL=0 in the submission's config_common.sh
fp8_amax_async = true
fp8_amax_async.source = NVTE_ASYNC_AMAX_REDUCTION=1 in the submission's config_common.sh
nccl_ctas_pp = 2
nccl_ctas_pp.source = MEGATRON_CORE_P2P_MAX_CTAS=2 in the submission's config_common.sh
INI
want=$(step runs/gpt3-175b-mlperf-v3.1.ini)
got=$(step "$tmp/gpt3.ini" tp-overlap/h100-tp4-pp8-mbs1.ini "$tmp/amax.ini")
echo "# gpt3-175b-mlperf-v3.1: embedded $want s, imported $got s"
check "GPT-3 175B: imported Megatron arguments give the scenario's step_time_s ($got = $want)" \
  '[ -n "$want" ] && [ "$got" = "$want" ]'
check "the userbuffers file is listed as unknown" \
  'grep -q "^unknown: --tp-comm-overlap-cfg conf/tp_overlap/h100tp4pp8mbs1.yaml (" "$tmp/gpt3.err"'
check "the learning rate is listed as ignored" 'grep -qx "ignored: --lr 2e-5 (no trainsim equivalent)" "$tmp/gpt3.err"'
check "each key names its argument" 'grep -B1 "^vpp = 12$" "$tmp/gpt3.ini" | grep -q "^# --num-layers-per-virtual-pipeline-stage 1"'
# The same arguments on the command line, --flag=value included.
"$t" import megatron --vocab 50257 --hardware h100-sxm --fabric ndr400-rail-optimized --gpus 10752 -- \
  $(sed -e 's/#.*//' -e 's/\\$//' "$data/gpt3-175b-mlperf-v3.1.args" | grep -v pretrain_gpt.py) --num-layers=96 \
  > "$tmp/gpt3b.ini" 2>/dev/null
got=$(step "$tmp/gpt3b.ini" tp-overlap/h100-tp4-pp8-mbs1.ini "$tmp/amax.ini")
check "arguments after -- give the same step ($got)" '[ "$got" = "$want" ]'

# (2) NeMo, Llama 3.1 405B on 8,192 GB200.
"$t" import nemo "$data/llama31-405b-mlperf-v6.0.yaml" --vocab 32000 --hardware gb200 \
  --fabric gb200-nvl72-eth800 -o "$tmp/llama.ini" 2> "$tmp/llama.err"
check "import nemo exits 0" '[ $? = 0 ]'
cat > "$tmp/nvls.ini" <<'INI'
[hardware]
nvls = false
nvls.source = NCCL_NVLS_ENABLE=0 in the submission's config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh
INI
want=$(step runs/llama31-405b-gb200-mlperf-v6.0.ini)
got=$(step "$tmp/llama.ini" "$tmp/nvls.ini")
echo "# llama31-405b-gb200-mlperf-v6.0: embedded $want s, imported $got s"
check "Llama 3.1 405B: the imported NeMo config gives the scenario's step_time_s ($got = $want)" \
  '[ -n "$want" ] && [ "$got" = "$want" ]'
check "GPUs come from trainer.num_nodes x trainer.devices" 'grep -q "^gpus = 8192$" "$tmp/llama.ini"'
check "NeMo keys without an equivalent are listed" 'grep -q "^ignored: model.optim.lr: 7.1e-05 (line" "$tmp/llama.err"'

# (3) Listing and failures.
"$t" import megatron -- --num-layers 2 --hidden-size 64 --num-attention-heads 4 --save /ckpt --no-such-option 1 \
  --tp-comm-overlap-cfg ub.yaml > "$tmp/l.ini" 2> "$tmp/l.err"
check "exit 0 with leftovers" '[ $? = 0 ]'
check "ignored: --save" 'grep -qx "ignored: --save /ckpt (no trainsim equivalent)" "$tmp/l.err"'
check "unknown: an option Megatron-LM does not have" 'grep -q "^unknown: --no-such-option 1 (" "$tmp/l.err"'
check "unknown: a performance option without a key" 'grep -q "^unknown: --tp-comm-overlap-cfg ub.yaml (" "$tmp/l.err"'
check "unknown inputs end the file as comments" 'grep -q "^# unknown: --tp-comm-overlap-cfg" "$tmp/l.ini"'
check "without --gpus the file says what to add" 'grep -q "^# \[cluster\] gpus is not in the input" "$tmp/l.ini"'
"$t" import megatron -- --num-layers ninety-six > /dev/null 2> "$tmp/e.err"
check "a bad number exits 2" '[ $? = 2 ]'
check "and names the argument" 'grep -q -- "--num-layers .ninety-six.: not an integer" "$tmp/e.err"'
printf 'model:\n  num_layers: 2\n  anchor: &a 1\n' > "$tmp/bad.yaml"
"$t" import nemo "$tmp/bad.yaml" > /dev/null 2> "$tmp/y.err"
check "a YAML file outside the subset exits 2" '[ $? = 2 ]'
check "with FILE:LINE" 'grep -q "bad.yaml:3: " "$tmp/y.err"'
printf 'model:\n  hidden_size: wide\n' > "$tmp/val.yaml"
"$t" import nemo "$tmp/val.yaml" > /dev/null 2> "$tmp/v.err"
check "a bad NeMo value exits 2 naming the key" '[ $? = 2 ] && grep -q "val.yaml:2: model.hidden_size" "$tmp/v.err"'
"$t" import megatron --num-layers 2 > /dev/null 2>&1
check "Megatron arguments before -- are bad usage (2)" '[ $? = 2 ]'
"$t" import pytorch x > /dev/null 2>&1
check "an unknown framework is bad usage (2)" '[ $? = 2 ]'
"$t" import megatron --hardware no-such-gpu -- --num-layers 2 > /dev/null 2>&1
check "an unknown hardware profile is bad usage (2)" '[ $? = 2 ]'
help=$("$t" import --help 2>&1)
check "--help says what is read and what is not" \
  'echo "$help" | grep -q "Not read:" && echo "$help" | grep -q "megatron" && echo "$help" | grep -q "nemo"'
check "trainsim --help lists import" '"$t" --help | grep -q "^  import "'
echo "1..$n"
