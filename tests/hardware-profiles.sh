#!/bin/sh
# The hardware profiles added for DECK.md's gpu tokens that had none (a100-sxm-40g, h100-sxm-hbm2e-96g)
# and for H800, H20, B300, H100 NVL/PCIe, AMD MI300X/MI325X/MI350X/MI355X and Rubin (announced), as TAP: `trainsim run` of each embedded profile with a model prints a
# simulated step time and reads the profile's HBM size; every [hardware] figure the profile sets
# carries its source; H800's narrower NVLink makes a TP8 step no faster than H100's; `trainsim
# validate` models a deck row naming each new token (real rows of ../shared/validation/deck.csv, copied
# here with their gpu column changed) and predicts it no faster than the same row on the part it
# derives from (same compute, less or slower HBM, lower power limit).
bin=${TRAINSIM:-./trainsim}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "${TRAINSIM_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"

# profile  fabric  model  matmul dtype  HBM GiB as `run` prints it (datasheet GB / 2^30)
while read -r hw fab model dtype gib; do
  "$bin" run "hardware/$hw.ini" "fabrics/$fab.ini" "models/$model.ini" --set cluster.gpus=8 \
    --set parallel.micro_batch=1 --set parallel.global_batch=32 --set training.seq_len=2048 \
    --set parallel.tp=1 --set parallel.zero=1 --set parallel.matmul_dtype="$dtype" >"$tmp/$hw.txt" 2>"$tmp/err"
  rc=$?
  step=$(awk '/^step time/ { print $3; exit }' "$tmp/$hw.txt")
  check "run hardware/$hw.ini ($model, $dtype) prints a simulated step time ($step s)" \
    "[ $rc = 0 ] && awk -v s='$step' 'BEGIN { exit !(s + 0 > 0) }'"
  check "run hardware/$hw.ini reads its HBM size ($gib GiB)" "grep -q '^memory per GPU .* of $gib GiB' '$tmp/$hw.txt'"
  "$bin" run "hardware/$hw.ini" "fabrics/$fab.ini" "models/$model.ini" --set cluster.gpus=8 \
    --set parallel.micro_batch=1 --set parallel.global_batch=32 --set training.seq_len=2048 \
    --set parallel.tp=1 --format json >"$tmp/$hw.json" 2>/dev/null
  check "hardware/$hw.ini: every [hardware] figure it sets has a .source" "python3 - '$tmp/$hw.json' '$hw' <<'PY'
import json, sys
vals = json.load(open(sys.argv[1]))['scenario']['values']
mine = [v for v in vals if v['group'] == 'hardware' and v['file'] == 'embedded:hardware/' + sys.argv[2] + '.ini']
assert len(mine) >= 15, len(mine)
assert all(v['key'] == 'name' or v.get('source') for v in mine), [v['key'] for v in mine if not v.get('source')]
PY"
done <<'EOF'
a100-sxm-40g hdr200-rail-optimized megatron-gpt-1.7b bf16 37.25
h100-sxm-hbm2e-96g ndr400-rail-optimized llama3.1-8b fp8 89.41
h800-sxm ndr400-rail-optimized llama3.1-8b fp8 74.51
h20 ndr400-rail-optimized llama3.1-8b fp8 89.41
b300 ndr400-rail-optimized llama3.1-8b fp8 268.22
mi300x ndr400-rail-optimized llama3.1-8b fp8 178.81
mi325x ndr400-rail-optimized llama3.1-8b fp8 238.42
mi350x ndr400-rail-optimized llama3.1-8b fp8 268.22
mi355x ndr400-rail-optimized llama3.1-8b fp8 268.22
h100-nvl pcie-pairs-ndr400 llama3.1-8b fp8 87.54
h100-pcie pcie-pairs-ndr400 llama3.1-8b fp8 74.51
EOF

# TP8 inside one NVLink domain: H800's 200 GB/s per direction against H100's 450.
for hw in h100-sxm h800-sxm; do
  "$bin" run "hardware/$hw.ini" fabrics/ndr400-rail-optimized.ini models/llama3.1-8b.ini --set cluster.gpus=8 \
    --set parallel.micro_batch=1 --set parallel.global_batch=8 --set training.seq_len=2048 \
    --set parallel.tp=8 --set parallel.sp=true >"$tmp/tp8-$hw.txt" 2>/dev/null
done
h100=$(awk '/^step time/ { print $3; exit }' "$tmp/tp8-h100-sxm.txt")
h800=$(awk '/^step time/ { print $3; exit }' "$tmp/tp8-h800-sxm.txt")
check "TP8: h800-sxm step no faster than h100-sxm ($h800 s >= $h100 s)" \
  "[ -n '$h100' ] && [ -n '$h800' ] && awk 'BEGIN { exit !($h800 + 0 >= $h100 + 0) }'"

# AMD's Infinity Fabric is a mesh: `trainsim topology` prints it (16 MI355X: two nodes, 8 x 7 direct
# links each at 535.5 / 7 = 76.5 GB/s), and the AMD profiles' band is that of uncalibrated profiles.
"$bin" topology runs/llama31-8b-mi355x-mlperf-v5.1.ini --set cluster.gpus=16 >"$tmp/mesh.txt" 2>&1; rc_mesh=$?
check "topology: MI355X nodes are fully connected meshes of 76.5 GB/s links" \
  "[ $rc_mesh = 0 ] && grep -q '^mesh domains      2 of 8 GPUs, fully connected: 76.5 GB/s per link per direction, 7 links' '$tmp/mesh.txt' && grep -q '^  mesh  *112\$' '$tmp/mesh.txt'"
"$bin" run runs/llama31-8b-mi355x-mlperf-v5.1.ini >"$tmp/mi355x-run.txt" 2>&1
check "runs/llama31-8b-mi355x-mlperf-v5.1.ini: a band from the uncalibrated profiles' deck error, and the measured step" \
  "grep -q '^step time .*90%, the deck error of uncalibrated profiles)' '$tmp/mi355x-run.txt' && grep -q '^step time .*; measured 1.0429 s' '$tmp/mi355x-run.txt'"

# Two real deck rows (../shared/validation/deck.csv, fields as published; notes shortened), first on
# the part they were measured on, then with the gpu column set to the new token.
cat >"$tmp/base.csv" <<'EOF'
id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,moe_experts,moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,nvlink_domain,nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,step_time_s,step_time_basis,confidence,notes,framework,arch
narayanan21_t1_1.7b,Narayanan et al. SC21 (arXiv 2104.04473),GPT 1.7B,gpt,24,2304,24,24,9216,51200,2048,gelu,0,0,0,512,16,32,a100-sxm-80g,8,8,200,1,1,1,1,32,1,0,0,0,full,fp16,3.528,tflops_eq3,high,"copied from deck.csv row narayanan21_t1_1.7b",megatron,
nemo2407_llama3-8b_8,"NVIDIA NeMo performance summary, NeMo 24.07 container",LLAMA3-8B,llama,32,4096,32,8,14336,128000,8192,swiglu,0,0,0,128,1,8,h100-sxm,8,8,400,1,1,1,2,4,1,0,1,0,none,fp8,10.89,tokens_per_s,medium,"copied from deck.csv row nemo2407_llama3-8b_8",nemo,
EOF
sed 's/,a100-sxm-80g,/,a100-sxm-40g,/; s/,h100-sxm,/,h100-sxm-hbm2e-96g,/' "$tmp/base.csv" >"$tmp/new.csv"
"$bin" validate "$tmp/base.csv" --format tsv >"$tmp/base.tsv" 2>"$tmp/err"; rc_base=$?
"$bin" validate "$tmp/new.csv" --format tsv >"$tmp/new.tsv" 2>"$tmp/err"; rc_new=$?
for row in narayanan21_t1_1.7b:a100-sxm-40g:a100-sxm-80g nemo2407_llama3-8b_8:h100-sxm-hbm2e-96g:h100-sxm; do
  id=${row%%:*}; rest=${row#*:}; gpu=${rest%%:*}; base=${rest#*:}
  new_s=$(awk -F'\t' -v id="$id" -v g="$gpu" '$1 == id && $3 == g && $4 == "ok" { print $5 }' "$tmp/new.tsv")
  base_s=$(awk -F'\t' -v id="$id" -v g="$base" '$1 == id && $3 == g && $4 == "ok" { print $5 }' "$tmp/base.tsv")
  check "validate models row $id with gpu $gpu ($new_s s)" "[ $rc_new = 0 ] && [ -n '$new_s' ]"
  check "$gpu predicts $id no faster than $base ($new_s s >= $base_s s)" \
    "[ $rc_base = 0 ] && [ -n '$base_s' ] && awk 'BEGIN { exit !($new_s + 0 >= $base_s + 0) }'"
done
check "validate: both rows of the new tokens modelled, none skipped" \
  "grep -q '^# summary	all	all	modelled=2	total=2	' '$tmp/new.tsv'"

# The H200, B300 and B200 profiles against published runs on them (none is in the deck): each run
# prints a step beside its measured one, with its generation's band where the column names one (-:
# not checked). HPE's Llama 3.1 8B on 64 H200; Nebius's 405B on 1,024 H200 (TP 4, PP 8 x 8, CP 2,
# DP 16); Dell's 8B on 8 B300; Nebius's 8B in NVFP4 on 8 B200 (a B200 in FP4 was refused before: the
# profile had no FP4 peak).
while read -r run band measured; do
  "$bin" run "runs/$run.ini" >"$tmp/$run.txt" 2>&1; rc=$?
  if [ "$band" = - ]; then
    check "runs/$run.ini: a step beside the measured $measured s" \
      "[ $rc = 0 ] && grep -q '^step time .*; measured $measured s' '$tmp/$run.txt'"
  else
    check "runs/$run.ini: a step with the $band band, beside the measured $measured s" \
      "[ $rc = 0 ] && grep -q '^step time .*90%, $band calibration)' '$tmp/$run.txt' && grep -q '^step time .*; measured $measured s' '$tmp/$run.txt'"
  fi
done <<'LIST'
llama31-8b-h200-mlperf-v5.1-hpe hopper 0.3531
llama31-405b-h200-mlperf-v5.1-nebius - 25.3560
llama31-8b-b300-mlperf-v5.1-dell blackwell 0.5480
llama31-8b-b200-mlperf-v5.1-nebius blackwell 0.4559
LIST

# A user's own AMD runs in the deck format: validate models rows naming mi300x and mi355x (the mesh
# profiles, uncalibrated), and `fit --runs --calibrate` writes one layer per AMD generation (CDNA3,
# CDNA4) from them. The measured times are the uncalibrated predictions x 1.25, so the fit must move.
cat >"$tmp/amd.csv" <<'EOF'
id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,moe_experts,moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,nvlink_domain,nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,step_time_s,step_time_basis,confidence,notes,framework,arch
amd_a,my runs,LLAMA3-8B,llama,32,4096,32,8,14336,128000,4096,swiglu,0,0,0,16,2,8,mi300x,8,8,400,1,1,1,1,8,1,0,1,0,none,fp8,1.0,log,high,synthetic,nemo,
amd_b,my runs,LLAMA3-8B,llama,32,4096,32,8,14336,128000,4096,swiglu,0,0,0,16,2,8,mi355x,8,8,400,1,1,1,1,8,1,0,1,0,none,fp8,1.0,log,high,synthetic,nemo,
EOF
"$bin" validate "$tmp/amd.csv" --format tsv >"$tmp/amd.tsv" 2>"$tmp/err"; rc_amd=$?
check "validate models a user's MI300X and MI355X rows (mesh profiles, uncalibrated)" \
  "[ $rc_amd = 0 ] && grep -q '^# summary	all	all	modelled=2	total=2	' '$tmp/amd.tsv'"
awk -F'\t' 'NR == FNR { if ($1 ~ /^amd_/) t[$1] = $5 * 1.25; next }
  FNR > 1 && ($1 in t) { $34 = t[$1] } { print }' OFS=, "$tmp/amd.tsv" FS=, "$tmp/amd.csv" >"$tmp/amd-runs.csv"
"$bin" fit --runs "$tmp/amd-runs.csv" --calibrate -o "$tmp/amd-cal" >"$tmp/amd-fit.txt" 2>"$tmp/err"; rc_fit=$?
check "fit --runs --calibrate on AMD rows writes cdna3.ini and cdna4.ini" \
  "[ $rc_fit = 0 ] && grep -q '^generation = cdna3' '$tmp/amd-cal/cdna3.ini' && grep -q '^generation = cdna4' '$tmp/amd-cal/cdna4.ini'"

# An announced part (Rubin, vr200-nvl144: announced = true) is named so in every report: the answer's
# GPU line, the TSV gpu column, JSON gpu and gpu_announced; a name with no room for the mark is refused.
rubin="hardware/vr200-nvl144.ini fabrics/gb200-nvl72-eth800.ini models/llama3.1-8b.ini --set cluster.gpus=72 \
  --set cluster.nvlink_domain=72 --set cluster.gpus_per_domain_used=72 --set parallel.micro_batch=1 \
  --set parallel.global_batch=72 --set training.seq_len=2048 --set parallel.matmul_dtype=fp8"
# shellcheck disable=SC2086
"$bin" run $rubin >"$tmp/rubin.txt" 2>&1; rc_txt=$?
# shellcheck disable=SC2086
"$bin" run $rubin --format tsv >"$tmp/rubin.tsv" 2>&1
# shellcheck disable=SC2086
"$bin" run $rubin --format json >"$tmp/rubin.json" 2>&1
check "vr200-nvl144: the answer names the GPU announced, not validated" \
  "[ $rc_txt = 0 ] && grep -q '^GPU .*(announced, not validated): its figures are an announcement' '$tmp/rubin.txt' && grep -q '^step time' '$tmp/rubin.txt'"
check "vr200-nvl144: TSV gpu column and JSON carry the mark" \
  "grep -q '	Rubin VR200 NVL144 (announced, not validated)	' '$tmp/rubin.tsv' && grep -q '\"gpu_announced\" : true' '$tmp/rubin.json'"
# shellcheck disable=SC2086
"$bin" run $rubin --set 'hardware.name=A GPU name long enough that the announced mark cannot fit in it' \
  >"$tmp/long.txt" 2>&1; rc_long=$?
check "announced: a name with no room for the mark is refused naming [hardware] name" \
  "[ $rc_long != 0 ] && grep -q '\[hardware\] name' '$tmp/long.txt'"
echo "1..$n"
