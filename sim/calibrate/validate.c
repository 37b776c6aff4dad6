/* Validation against published runs (sim/calibrate/validate.h): row → scenario and the simulated
 * step per row (the deck reader is validate-deck.c, the statistics and report validate-report.c).
 * No constant here is a hardware figure: every figure comes from the scenario profiles, each with
 * its source. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/calibrate/validate.h"

/* ---- Row → scenario ---------------------------------------------------------------------------- */

typedef struct {
  const char *token, *hardware, *fabric, *generation;
} GpuProfile;

/* The gpu token's hardware profile and the fabric its systems ship with (scenarios/fabrics/,
 * each figure sourced there). Tokens of DECK.md without a profile are skipped with the reason.
 * h100-sxm-hbm2e-96g (Meta's Grand Teton hosts, 400 Gb/s RDMA per GPU) takes Meta's RoCE 400G Clos
 * (its clusters are RoCE and InfiniBand 400G; the RoCE one trained Llama 3.1 405B). */
static const GpuProfile gpu_profiles[] = {
  { "a100-sxm-40g", "hardware/a100-sxm-40g.ini", "fabrics/hdr200-rail-optimized.ini", "ampere" },
  { "a100-sxm-80g", "hardware/a100-sxm-80g.ini", "fabrics/hdr200-rail-optimized.ini", "ampere" },
  { "h100-sxm", "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "hopper" },
  { "h100-sxm-hbm2e-96g", "hardware/h100-sxm-hbm2e-96g.ini", "fabrics/roce400-meta-clos.ini", "hopper" },
  { "h200-sxm", "hardware/h200-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "hopper" },
  { "b200", "hardware/b200.ini", "fabrics/ndr400-rail-optimized.ini", "blackwell" },
  { "gb200", "hardware/gb200.ini", "fabrics/gb200-nvl72-eth800.ini", "blackwell" },
  { "gb300", "hardware/gb300.ini", "fabrics/gb200-nvl72-eth800.ini", "blackwell" },
  /* Not DECK.md tokens: a user's own AMD runs in the deck format, on 400 Gb/s per GPU as the
   * MI300X-class platforms ship (8 x 400G NICs per node; the NDR file's tree stands for their
   * fabric). Their generations have no shipped calibration: `trainsim fit --runs` makes one. */
  { "mi300x", "hardware/mi300x.ini", "fabrics/ndr400-rail-optimized.ini", "cdna3" },
  { "mi325x", "hardware/mi325x.ini", "fabrics/ndr400-rail-optimized.ini", "cdna3" },
  { "mi350x", "hardware/mi350x.ini", "fabrics/ndr400-rail-optimized.ini", "cdna4" },
  { "mi355x", "hardware/mi355x.ini", "fabrics/ndr400-rail-optimized.ini", "cdna4" },
};

/* attn_insitu 0: attention takes the (here 1) 16-bit GEMM scale, as the fit's simulations need. */
const char *const sim_validate_uncalibrated_sets[] = {
  "hardware.gemm_insitu_fp16=1", "hardware.gemm_insitu_bf16=1", "hardware.gemm_insitu_fp8=1",
  "hardware.gemm_insitu_fp4=1", "hardware.mem_insitu=1", "hardware.attn_insitu=0", "hardware.launch_us=0",
  "hardware.step_overhead_ms=0", "calibration.band_log_sigma=0", "calibration.generation=none", NULL,
};

const char *
sim_validate_gpu_generation (const char *gpu)
{
  for (gsize i = 0; i < G_N_ELEMENTS (gpu_profiles); i++)
    if (strcmp (gpu, gpu_profiles[i].token) == 0)
      return gpu_profiles[i].generation;
  return NULL;
}

static gboolean
unsupported (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
unsupported (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_UNSUPPORTED, msg);
  return FALSE;
}

static void
add (GPtrArray *list, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
add (GPtrArray *list, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_ptr_array_add (list, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

static int
domain_used (const SimValidateRow *r)
{
  for (int d = MIN (r->nvlink_domain, r->gpus); d >= 1; d--)
    if (r->gpus % d == 0 && d % r->gpus_per_node == 0)
      return d;
  return r->nvlink_domain;
}

/* The row comes from MLPerf Training round `round` ("v4.1"): its source names the round. */
/* The Megatron-LM README rows' vpp = 1 is a placeholder (DECK.md: V not stated). Their text says
 * pipeline-parallel communication was overlapped ("enabled by default"), which Megatron-Core r0.8
 * does only for the interleaved schedule (megatron/training/arguments.py at core_r0.8.0, lines
 * 254-276, sets overlap_p2p_comm false otherwise), and the same README's strong scaling of its 177B
 * (96 -> 4,608 H100 at 1,152 sequences, MFU 47% -> 42%) leaves no room for 1F1B's bubble at 4,608
 * GPUs (PP 6, 12 micro-batches: 5/17 of the step). So PP > 1 rows of that source run interleaved
 * at one layer per virtual stage, the split NVIDIA's MLPerf GPT-3 and NeMo Nemotron-4 configs use
 * (ASSUMPTION for V: a split of 2-4 layers moves these rows' bubble by a few percent of it). */
static int
row_vpp (const SimValidateRow *r)
{
  if (r->vpp == 1 && r->pp > 1 && strstr (r->source, "Megatron-Core r0.8.0") != NULL
      && strstr (r->notes, "vpp=1 is a placeholder") != NULL && r->layers % r->pp == 0
      && (r->global_batch_seqs / (r->dp * r->micro_batch)) % r->pp == 0)
    return r->layers / r->pp;
  return r->vpp;
}

static gboolean
in_round (const SimValidateRow *r, const char *round)
{
  g_autofree char *name = g_strconcat ("MLPerf Training ", round, NULL);
  return strstr (r->source, name) != NULL;
}

/* The row's settings as `group.key=value` strings after its scenario files (files[]: hardware
 * profile, fabric, then NULL or its TP-overlap settings, then NULL); NULL with the reason for a row
 * that cannot be modelled. Two rows with equal settings are the same simulation. */
#define ROW_FILES 4
static GPtrArray *
row_settings (const SimValidateRow *r, const char *files[ROW_FILES], GError **error)
{
  const GpuProfile *prof = NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (gpu_profiles); i++)
    if (strcmp (r->gpu, gpu_profiles[i].token) == 0)
      prof = &gpu_profiles[i];
  if (prof == NULL)
    {
      unsupported (error, "no hardware profile for gpu '%s' (scenarios/hardware/ has none)", r->gpu);
      return NULL;
    }
  gboolean llama_like = strcmp (r->family, "llama") == 0 || strcmp (r->family, "mixtral") == 0;
  gboolean deepseek = strcmp (r->family, "deepseek") == 0;
  gboolean other = strcmp (r->family, "other") == 0;
  const SimValidateArch *a = &r->arch;
  if (!llama_like && !other && !deepseek && strcmp (r->family, "gpt") != 0)
    {
      unsupported (error, "family '%s' is none of gpt, llama, mixtral, deepseek, other (DECK.md)", r->family);
      return NULL;
    }
  gboolean mla = (a->attention && strcmp (a->attention, "mla") == 0) || (deepseek && a->attention == NULL);
  if (a->encoder > 0 && (r->moe_experts > 0 || mla))
    {
      unsupported (error, "an encoder with MoE or MLA layers: no such model is described in DECK.md");
      return NULL;
    }
  files[0] = prof->hardware;
  files[1] = prof->fabric;
  files[2] = files[3] = NULL;
  GPtrArray *list = g_ptr_array_new_with_free_func (g_free);
  /* [model] */
  add (list, "model.layers=%d", r->layers);
  add (list, "model.hidden=%d", r->hidden);
  add (list, "model.heads=%d", r->heads);
  add (list, "model.kv_heads=%d", r->kv_heads);
  add (list, "model.ffn_hidden=%d", r->ffn_hidden);
  add (list, "model.vocab=%d", r->vocab);
  /* The arch column's mlp_act refines the activation column (DECK.md encodes squared ReLU, a
   * two-matrix MLP, as gelu and GeGLU, a gated one, as swiglu). */
  add (list, "model.activation=%s", a->mlp_act ? a->mlp_act : r->activation);
  /* Family defaults, then what the arch column states. gpt: GPT-3-style (LayerNorm, learned
   * positions, biases, tied unless the notes say untied); llama / mixtral / deepseek: RMSNorm,
   * rotary, no biases, untied; other: the arch column's norm and position (else RMSNorm and rotary,
   * today's default decoder), no biases, untied (Nemotron-4 340B report, arXiv 2406.11704). */
  gboolean gpt = !llama_like && !deepseek && !other;
  const char *norm = a->norm ? a->norm : gpt ? "layernorm" : "rmsnorm";
  const char *position = a->position ? a->position : gpt ? "learned" : "rope";
  add (list, "model.norm=%s", norm);
  add (list, "model.position=%s", position);
  add (list, "model.tied_embeddings=%s",
       a->tied_embeddings >= 0 ? (a->tied_embeddings ? "true" : "false")
       : gpt                   ? (strstr (r->notes, "untied") ? "false" : "true")
                               : "false");
  add (list, "model.bias=%s", gpt ? "true" : "false");
  if (r->moe_experts > 0)
    {
      add (list, "model.moe_experts=%d", r->moe_experts);
      add (list, "model.moe_top_k=%d", r->moe_top_k);
      add (list, "model.moe_ffn_hidden=%d", r->moe_ffn_hidden);
    }
  /* DeepSeek-V3 (family deepseek: deepseek-ai/DeepSeek-V3 config.json) where the arch column is
   * silent: MLA with q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64,
   * v_head_dim 128; n_shared_experts 1; first_k_dense_replace 3. Its MTP module is counted only
   * when the arch column states mtp_depth (throughput runs may leave it out). */
  if (mla)
    {
      add (list, "model.q_lora_rank=%d", a->q_lora_rank >= 0 ? a->q_lora_rank : 1536);
      add (list, "model.kv_lora_rank=%d", a->kv_lora_rank >= 0 ? a->kv_lora_rank : 512);
      add (list, "model.qk_nope_head_dim=%d", a->qk_nope_head_dim >= 0 ? a->qk_nope_head_dim : 128);
      add (list, "model.qk_rope_head_dim=%d", a->qk_rope_head_dim >= 0 ? a->qk_rope_head_dim : 64);
      add (list, "model.v_head_dim=%d", a->v_head_dim >= 0 ? a->v_head_dim : 128);
    }
  if (r->moe_experts > 0)
    {
      int shared = a->moe_shared_experts >= 0 ? a->moe_shared_experts : deepseek ? 1 : 0;
      int dense = a->moe_dense_layers >= 0 ? a->moe_dense_layers : deepseek ? 3 : 0;
      if (shared > 0)
        add (list, "model.moe_shared_experts=%d", shared);
      if (dense > 0)
        add (list, "model.moe_dense_layers=%d", dense);
      if (a->moe_layer_freq > 1)
        add (list, "model.moe_layer_freq=%d", a->moe_layer_freq);
      /* Node-limited routing exists to bound the network copies of a deduplicating dispatcher
       * (DeepSeek-V3 §2.1.2 and §3.2.2): such rows run DeepEP's one copy per target node. */
      if (a->moe_node_limit > 0)
        {
          add (list, "model.moe_node_limit=%d", a->moe_node_limit);
          add (list, "parallel.moe_dispatcher=deepep");
        }
    }
  if (a->mtp_depth > 0)
    add (list, "model.mtp_depth=%d", a->mtp_depth);
  /* swa:W on every layer (the column cannot say which layers alternate). */
  if (a->attention && strcmp (a->attention, "swa") == 0)
    add (list, "model.attention_window=%d", a->swa_window);
  /* An encoder (BERT): its masked-LM head scores the masked 15% of the tokens (Devlin et al.,
   * arXiv 1810.04805 §3.1). */
  if (a->encoder > 0)
    {
      add (list, "model.encoder=true");
      add (list, "model.mlm_fraction=0.15");
    }
  /* [cluster]: the row's sizes over the fabric file's defaults. */
  add (list, "cluster.gpus=%d", r->gpus);
  add (list, "cluster.gpus_per_node=%d", r->gpus_per_node);
  add (list, "cluster.nvlink_domain=%d", r->nvlink_domain);
  add (list, "cluster.gpus_per_domain_used=%d", domain_used (r));
  if (r->nic_gbps_per_gpu > 0)
    add (list, "cluster.nic_Gbps=%.17g", r->nic_gbps_per_gpu);
  /* [parallel] */
  add (list, "parallel.tp=%d", r->tp);
  add (list, "parallel.pp=%d", r->pp);
  add (list, "parallel.vpp=%d", row_vpp (r));
  add (list, "parallel.cp=%d", r->cp);
  add (list, "parallel.ep=%d", r->ep);
  add (list, "parallel.sp=%s", r->sequence_parallel ? "true" : "false");
  add (list, "parallel.zero=%d", r->zero);
  add (list, "parallel.fsdp=%s", r->fsdp ? "true" : "false");
  /* The framework column picks the DP schedule (model/framework.c); empty, and "other" (no
   * schedule of its own), run Megatron's, the deck's default. */
  add (list, "parallel.framework=%s",
       *r->framework && strcmp (r->framework, "other") != 0 ? r->framework : "megatron");
  add (list, "parallel.micro_batch=%d", r->micro_batch);
  add (list, "parallel.global_batch=%d", r->global_batch_seqs);
  add (list, "parallel.recompute=%s", r->recompute);
  add (list, "parallel.matmul_dtype=%s", r->precision);
  add (list, "parallel.param_dtype=%s", strcmp (r->precision, "fp16") == 0 ? "fp16" : "bf16");
  add (list, "parallel.dp_overlap=%s", r->zero >= 1 ? "true" : "false");
  gboolean tp_overlap = r->sequence_parallel && !strstr (r->notes, "TP comm overlap off");
  add (list, "parallel.tp_comm_overlap=%s", tp_overlap ? "true" : "false");
  /* NVIDIA's MLPerf v3.1 GPT-3 code picks its userbuffers settings by GPU, TP, PP and micro-batch
   * (conf/custom.yaml: conf/tp_overlap/h100tp4pp8mbs1.yaml for these rows); the Azure+NVIDIA entry
   * runs the same code. Other rows run TE's defaults (model/tpoverlap.h). */
  if (tp_overlap && in_round (r, "v3.1") && strstr (r->model, "GPT-3") != NULL
      && strcmp (r->gpu, "h100-sxm") == 0 && r->tp == 4 && r->pp == 8 && r->micro_batch == 1)
    files[2] = "tp-overlap/h100-tp4-pp8-mbs1.ini";
  /* NVIDIA's v4.0 and v4.1 GPT-3 H100 submissions publish their userbuffers files (see each file's
   * opening comment); the v4.0 1,344- and 1,452-node configs (the micro-batch 1 rows) also export
   * FC2_FPROP_METHOD=pipeline FC2_FPROP_SM=4. Oracle's v4.1 entries ran the same code but their
   * directories carry no conf/, so they keep TE's defaults. */
  gboolean nvidia_gpt3_h100 = tp_overlap && strstr (r->model, "GPT-3") != NULL && strcmp (r->gpu, "h100-sxm") == 0
                              && r->tp == 4 && g_str_has_prefix (r->id, "mlperf_") && strstr (r->id, "_nvidia_") != NULL;
  /* v3.0 (NVIDIA's and CoreWeave's copy of its code) publishes its own file: v3.1's but for
   * fc2_fprop's 20 SMs. */
  if (nvidia_gpt3_h100 && in_round (r, "v3.0") && r->pp == 8 && r->micro_batch == 1)
    files[2] = "tp-overlap/mlperf-v3.0-h100-tp4-pp8-mbs1.ini";
  if (nvidia_gpt3_h100 && in_round (r, "v4.0"))
    {
      files[2] = "tp-overlap/mlperf-v4.0-h100-tp4.ini";
      if (r->micro_batch == 1)
        add (list, "tp_overlap.fc2_fprop=pipeline splits=4 sm=4 margin");
    }
  if (nvidia_gpt3_h100 && in_round (r, "v4.1") && r->micro_batch == 2)
    files[2] = "tp-overlap/mlperf-v4.1-h100-tp4-mbs2.ini";
  /* Every MLPerf row of the deck ran NVIDIA's NeMo implementation (NVIDIA's own and its partners'
   * submissions: CoreWeave, Azure, Oracle, IBM, University of Florida) with bf16 gradient buffers,
   * which the fused wgrad GEMMs accumulate into (gradient_accumulation_fusion) and the DP
   * reduce-scatter moves. GPT-3: Apex distributed_fused_adam with grad_sync_dtype: bf16
   * (mlcommons/training_results_v3.0 NVIDIA/benchmarks/gpt3/implementations/pytorch/conf/
   * megatron_gpt_config.yaml; v3.1, v4.0 and v4.1 conf/optim/distributed_fused_adam.yaml). Llama 3.1
   * 405B and 8B: Megatron-Core DDP with grad_reduce_in_fp32=False (training_results_v5.0 and v5.1
   * NVIDIA/benchmarks/llama31_405b and llama31_8b implementations, pretrain.py: MegatronMixedPrecision and
   * DistributedDataParallelConfig). */
  if (g_str_has_prefix (r->id, "mlperf_") && strstr (r->source, "MLPerf Training") != NULL
      && strcmp (r->precision, "fp16") != 0)
    add (list, "parallel.grad_dtype=bf16");
  /* NeMo 24.07's performance table: its launcher (NVIDIA/NeMo-Framework-Launcher, tag 24.07) runs
   * Apex distributed_fused_adam, and every GPT-3 and Llama example of that tag, A100 and H100, bf16
   * and fp8 (examples/training/{gpt,llama}/, the 5B, 175B, Llama 2 70B and Llama 3 8B / 70B ones at
   * the table's GPU counts and batches), adds optim.grad_sync_dtype=bf16; conf/training/nemotron/
   * nemotron_340b.yaml sets it in its optim block. So the table's rows keep and reduce bf16
   * gradients. Optimizer state: NeMo's setup_optimization (nemo/collections/nlp/models/
   * language_modeling/megatron_base_model.py, v1.23.0 to v2.0.0) gives a bf16 model with fp32
   * optimizer state (the optim dtype's default) store_param_remainders, 16 bits beside each weight
   * instead of an fp32 master; with the optim dtype equal to the model's, as nemotron_340b.yaml's
   * `dtype: bf16`, no master at all and bf16 moments (Apex distributed_fused_adam.py: exp_avg and
   * exp_avg_sq in the optimizer dtype). ASSUMPTION: the table's Nemotron-4 340B run kept that
   * yaml's optim block, as the other rows' examples keep their yaml's and override sizes only. */
  gboolean nemo_table = strstr (r->source, "NeMo performance summary") != NULL;
  /* The Nemotron 8B and 22B examples (examples/training/nemotron/h100/nemotron_{8b,22b}_fp8.sh) and
   * yamls set neither grad_sync_dtype nor an optim dtype: fp32 gradients, fp32 state with
   * remainders. */
  gboolean nemotron_small = strstr (r->model, "Nemotron-8B") != NULL || strstr (r->model, "Nemotron-22B") != NULL;
  if (nemo_table && strcmp (r->precision, "fp16") != 0)
    {
      if (!nemotron_small)
        add (list, "parallel.grad_dtype=bf16");
      if (strstr (r->model, "Nemotron-340B") != NULL)
        {
          add (list, "parallel.moment_dtype=bf16");
          add (list, "parallel.master_weights=none");
        }
      else
        add (list, "parallel.master_weights=remainder");
    }
  /* FP8 scaling as each submission's files set it. NVIDIA's GPT-3 code of v3.1 (and Azure's copy)
   * and v4.0 exports NVTE_DP_AMAX_REDUCE_INTERVAL=0 and NVTE_ASYNC_AMAX_REDUCTION=1 in
   * config_common.sh (training_results_v3.1; v4.0's as republished in training_results_v4.1
   * eos-dfw_n1452_ngc24.04_nemo): amaxes reduced over TP only, the handle not waited for. NVIDIA's
   * v4.1 GPT-3 and every v5.0/v5.1 Llama 3.1 conf/custom.yaml default tp_only_amax_red to True.
   * v3.0 sets FP8_REDUCE_AMAX=True and no NVTE_ variable (config_fp8.sh): TE's default over DP x TP,
   * blocking. The v5.1 Llama 3.1 code exports FP8_RECIPE="tensorwise" (config_common.sh of NVIDIA's
   * llama31_8b and llama31_405b and of University of Florida's b200_nemo): current scaling. */
  gboolean mlperf = g_str_has_prefix (r->id, "mlperf_") && strcmp (r->precision, "fp8") == 0;
  gboolean gpt3 = strstr (r->model, "GPT-3") != NULL, llama31 = strstr (r->model, "Llama 3.1") != NULL;
  if (mlperf && gpt3
      && (in_round (r, "v3.1") || (in_round (r, "v4.0") && strstr (r->id, "_nvidia_") != NULL)))
    {
      add (list, "parallel.fp8_amax_tp_only=true");
      add (list, "parallel.fp8_amax_async=true");
    }
  if (mlperf
      && ((gpt3 && in_round (r, "v4.1") && strstr (r->id, "_nvidia_") != NULL)
          || (llama31 && in_round (r, "v5.0"))))
    add (list, "parallel.fp8_amax_tp_only=true");
  if (mlperf && llama31 && in_round (r, "v5.1"))
    add (list, "parallel.fp8_scaling=current");
  /* NCCL CTA caps the submissions set. NVIDIA's v3.1 GPT-3 code (and Azure's copy) exports
   * MEGATRON_CORE_P2P_MAX_CTAS=2 (config_common.sh). From v4.0 on (v4.0 as republished in
   * training_results_v4.1 eos-dfw_n1452_ngc24.04_nemo; v4.1 NVIDIA GPT-3; every v5.0 and v5.1
   * Llama 3.1 directory) config_common.sh points NCCL_CFG_PATH at conf/nccl/custom_communicator_cta.yaml:
   * max_ctas dp 8 (and dp_cp 8), pp 2, tp 8, cp 1. Oracle's v4.1 directories carry no conf/. */
  gboolean nvidia_code = g_str_has_prefix (r->id, "mlperf_") && strstr (r->id, "oracle") == NULL;
  if (nvidia_code && gpt3 && in_round (r, "v3.1"))
    add (list, "parallel.nccl_ctas_pp=2");
  /* NVIDIA's v3.1 GPT-3 code (and Azure's copy) runs Apex distributed_fused_adam with fp32 state
   * (conf/optim/distributed_fused_adam.yaml sets no dtype) over bf16 weights and without FP8
   * parameters: NeMo's setup_optimization (megatron_base_model.py, since 456410d of 2022-10) stores
   * 16-bit remainders instead of fp32 masters. With FP8 parameters (v4.0, v4.1) it keeps fp32 masters. */
  if (nvidia_code && gpt3 && in_round (r, "v3.1") && strcmp (r->precision, "fp16") != 0 && !strstr (r->notes, "FP8 params"))
    add (list, "parallel.master_weights=remainder");
  if (nvidia_code
      && ((gpt3 && (in_round (r, "v4.0") || in_round (r, "v4.1")))
          || (llama31 && (in_round (r, "v5.0") || in_round (r, "v5.1")))))
    {
      add (list, "parallel.nccl_ctas_dp=8");
      add (list, "parallel.nccl_ctas_pp=2");
      add (list, "parallel.nccl_ctas_tp=8");
      add (list, "parallel.nccl_ctas_cp=1");
    }
  /* Fused cross entropy (Megatron-Core cross_entropy_loss_fusion). NVIDIA's NeMo MLPerf code
   * defaults it to True in conf/custom.yaml (CROSS_ENTROPY_LOSS_FUSION, which no config exports):
   * v4.1 GPT-3 (eos_n32, eos_n64, b200_n8_preview), every v5.0 and v5.1 Llama 3.1 directory
   * (training_results_v5.0 and v5.1; the 8B configs pick TE's kernel, CE_FUSION_IMPL=te) and Azure's
   * v6.0 copy (runs/llama31-405b-gb200-mlperf-v6.0.ini). v3.0-v4.0 GPT-3 code has no such key.
   * NeMo 24.07's llama3_8b.yaml and llama3_70b.yaml (NeMo-Framework-Launcher tag 24.07
   * conf/training/llama), nemotron_8b.yaml and nemotron_22b.yaml (conf/training/nemotron) set
   * cross_entropy_loss_fusion: true, which NeMo's build_transformer_config passes to Megatron-Core's
   * TransformerConfig; its other yamls leave Megatron-Core's False. */
  if ((nvidia_code
       && ((gpt3 && in_round (r, "v4.1")) || (llama31 && (in_round (r, "v5.0") || in_round (r, "v5.1") || in_round (r, "v6.0")))))
      || (nemo_table && (strstr (r->model, "LLAMA3") != NULL || nemotron_small)))
    add (list, "parallel.loss_fusion=true");
  /* Facts the notes state: FP8 parameters (NeMo's FP8_PARAMS, Megatron's --fp8-param-gather: the
   * distributed optimizer gathers the FP8 layers' weights in FP8) and layer CUDA graphs. */
  if (strstr (r->notes, "FP8 params") != NULL && strcmp (r->precision, "fp8") == 0 && r->zero >= 1)
    add (list, "parallel.fp8_param_gather=true");
  if (strstr (r->notes, "CUDA graphs") != NULL)
    add (list, "parallel.cuda_graphs=true");
  /* "FP8 attention" (NeMo's FP8_DPA=True, config_common_fp8attn.sh of NVIDIA's v5.1 Llama 3.1 8B FP4
   * configs), unless its recipe is F16: TE's NVTE_DPA_FP8_RECIPE="F16" disables FP8 attention. */
  if (strstr (r->notes, "FP8 attention") != NULL && strstr (r->notes, "FP8 attention recipe F16") == NULL
      && (strcmp (r->precision, "fp8") == 0 || strcmp (r->precision, "fp4") == 0))
    add (list, "parallel.fp8_attention=true");
  /* FP8 operand layouts on Blackwell (hardware fp8_any_layout) are Transformer Engine 2.x's
   * (released 2025-02); NVIDIA's v4.1 B200 preview ran in October 2024 (its result logs' time_ms,
   * training_results_v4.1 NVIDIA/results/b200_n8_preview_nemo), on TE 1.x, whose FP8 casts always
   * write the transposed copy. */
  if (strcmp (prof->generation, "blackwell") == 0 && strcmp (r->precision, "fp8") == 0
      && (in_round (r, "v4.1") || in_round (r, "v4.0")))
    add (list, "hardware.fp8_any_layout=false");
  /* Azure's MLPerf v6.0 Llama 3.1 405B submission sets NCCL_NVLS_ENABLE=0 (its
   * config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh), as the 405B run scenario does. */
  if (in_round (r, "v6.0") && strstr (r->id, "azure") != NULL)
    add (list, "hardware.nvls=false");
  /* The Megatron-LM README table was measured with Megatron-Core r0.8.0 (July 2024), before TE 2.0
   * changed the userbuffers defaults. */
  if (tp_overlap && strstr (r->source, "Megatron-Core r0.8.0") != NULL)
    add (list, "tp_overlap.defaults=te1");
  /* Narayanan et al. SC21 ran 2021 Megatron-LM (examples/sc21: container pytorch:20.12): core
   * attention unfused (baddbmm scores, FusedScaleMaskSoftmax, separate attention dropout, bmm;
   * megatron/model/transformer.py ParallelAttention; FlashAttention, arXiv 2205.14135, came in
   * 2022) and dropout on: --attention-dropout and --hidden-dropout default 0.1 in
   * megatron/arguments.py and examples/sc21/CONFIG.sh does not override them. The ZeRO-3 rows of
   * that table are assumed to run the same GPT model code under DeepSpeed. */
  if (strstr (r->source, "Narayanan et al. SC21") != NULL)
    {
      add (list, "parallel.unfused_attention=true");
      add (list, "parallel.dropout=true");
      /* Its p2p_communication._communicate waits for batch_isend_irecv, then torch.cuda.synchronize()
       * ("to protect against race condition"): a pipeline send blocks the stage until delivered. */
      add (list, "parallel.pp_blocking=true");
      /* Its ZeRO-3 rows ran DeepSpeed of early 2021 (<= 0.3.16): per-parameter all-gathers after a
       * torch.cuda.synchronize() each ("the async version is not async at all", DeepSpeed PR #1188,
       * June 2021) and stage-3 gradient reduction on the compute stream (overlap_comm off).
       * ASSUMPTION, overlap_comm: v0.3.16 defaults it to true at stage 3 (zero/config.py,
       * ZERO3_OPTIMIZATION_OVERLAP_COMM_DEFAULT) and the paper gives no DeepSpeed config; with the
       * reduce-scatters beside the compute the six rows read 1.1-2.3 points faster (529B at 2,240
       * GPUs −27.6% instead of −25.3%, shipped constants, 2026-11-27), further from the
       * measurements, so off is kept. */
      if (r->zero >= 3 && !r->fsdp)
        add (list, "parallel.zero3_blocking=true");
      /* examples/sc21/CONFIG.sh passes --fp16 without --accumulate-allreduce-grads-in-fp32, so
       * gradients are accumulated and reduced in fp16, and the measurements predate Megatron's
       * --gradient-accumulation-fusion. run_table_1.sh runs the PP = 1 models with DDP=torch
       * (autograd accumulates in place from the second micro-batch; torch DDP's bucketed
       * all-reduce overlaps the last backward, Megatron's schedule running the others under
       * no_sync) and the rest with DDP=local (main_grad.add_ after every wgrad, all-reduce after
       * the backward). DeepSpeed's ZeRO-3 accumulates in param.grad as autograd does. */
      add (list, "parallel.grad_dtype=fp16");
      if (r->zero >= 3 || r->pp == 1)
        add (list, "parallel.grad_accum=autograd");
      else
        add (list, "parallel.grad_accum=add");
      if (r->zero == 0 && r->pp == 1)
        add (list, "parallel.dp_overlap=true");
    }
  /* Layers pp·vpp does not divide, and an interleaved micro-batch count pp does not divide
   * (validate.h): model/plan.c picks the split and the micro-batch group. */
  ModelPlan split;
  ModelShape layers = { .layers = r->layers, .mtp_depth = MAX (r->arch.mtp_depth, 0) };
  model_plan_init (&split);
  split.pp = r->pp, split.vpp = row_vpp (r), split.dp = r->dp, split.micro_batch = r->micro_batch;
  split.global_batch = r->global_batch_seqs;
  split.schedule = split.vpp > 1 ? MODEL_SCHED_INTERLEAVED : MODEL_SCHED_1F1B;
  /* An fsdp2 row's split is torchtitan's, which the scenario makes itself (no key to set). */
  split.framework = strcmp (r->framework, "fsdp2") == 0 ? MODEL_FW_FSDP2 : MODEL_FW_MEGATRON;
  if (model_plan_fit_microbatch_group (&split) && split.mb_group > 0)
    add (list, "parallel.microbatch_group_size=%d", split.mb_group);
  if (model_plan_fit_pipeline_split (&split, &layers))
    {
      if (split.pp_embed_loss_layers)
        add (list, "parallel.pp_embed_loss_layers=true");
      if (split.pp_first_layers > 0)
        add (list, "parallel.pp_first_stage_layers=%d", split.pp_first_layers);
      if (split.pp_last_layers > 0)
        add (list, "parallel.pp_last_stage_layers=%d", split.pp_last_layers);
    }
  /* [training] */
  add (list, "training.seq_len=%d", r->seq_len);
  return list;
}

SimScenario *
sim_validate_row_scenario (const SimValidateRow *r, const SimValidateOptions *options, GError **error)
{
  const char *files[ROW_FILES];
  g_autoptr (GPtrArray) list = row_settings (r, files, error);
  if (list == NULL)
    return NULL;
  g_autoptr (SimScenario) sc = sim_scenario_new ();
  for (int i = 0; files[i] != NULL; i++)
    if (!sim_scenario_add_file (sc, files[i], error))
      return NULL;
  g_autofree char *name = g_strdup_printf ("scenario.name=%s", r->id);
  g_autofree char *model = g_strdup_printf ("model.name=%.63s", r->model);
  const char *named[] = { name, model };
  for (int i = 0; i < 2; i++)
    if (!sim_scenario_add_set (sc, named[i], error))
      {
        g_prefix_error (error, "row value rejected: ");
        return NULL;
      }
  for (guint i = 0; i < list->len; i++)
    if (!sim_scenario_add_set (sc, g_ptr_array_index (list, i), error))
      {
        g_prefix_error (error, "row value rejected: ");
        return NULL;
      }
  /* Uncalibrated: the profile's datasheet and microbenchmark figures alone (its included
   * scenarios/calibration/ layer neutralized). */
  for (int i = 0; options && options->uncalibrated && sim_validate_uncalibrated_sets[i]; i++)
    if (!sim_scenario_add_set (sc, sim_validate_uncalibrated_sets[i], error))
      return NULL;
  if (options && options->layers)
    for (int i = 0; options->layers[i]; i++)
      if (!sim_scenario_add_file (sc, options->layers[i], error))
        return NULL;
  if (options && options->sets)
    for (int i = 0; options->sets[i]; i++)
      if (!sim_scenario_add_set (sc, options->sets[i], error))
        return NULL;
  if (!sim_scenario_resolve (sc, error))
    return NULL;
  return g_steal_pointer (&sc);
}

/* ---- Running ----------------------------------------------------------------------------------- */

void
sim_validate_result_clear (SimValidateResult *result)
{
  g_clear_pointer (&result->reason, g_free);
}

/* Profile keys the kernel-time model needs (sim_scenario_check_compute: the GEMM efficiency of the
 * row's dtypes, attn_eff, mem_eff): without them the row is skipped with the missing key named; a
 * precision the GPU does not have skips it as such. */
static gboolean
profile_complete (const SimScenario *sc, const SimValidateRow *r, GError **error)
{
  g_autoptr (GError) missing = NULL;
  if (sim_scenario_check_compute (sc, &missing))
    return TRUE;
  if (missing->code == SIM_SCENARIO_ERROR_INVALID)
    return unsupported (error, "precision %s on gpu '%s': %s", r->precision, r->gpu, missing->message);
  return unsupported (error, "profile of gpu '%s' lacks a sourced figure: %s", r->gpu, missing->message);
}

void
sim_validate_run_row (const SimValidateRow *row, const SimValidateOptions *options, SimValidateResult *res)
{
  memset (res, 0, sizeof *res);
  res->measured_s = row->step_time_s;
  res->loso_pct = NAN;
  gint64 t0 = g_get_monotonic_time ();
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_validate_row_scenario (row, options, &error);
  SimRunnerPrediction pred;
  if (sc != NULL && profile_complete (sc, row, &error))
    {
      SimPredictOptions po = { 0 };
      po.band_level = options ? options->band_level : 0;
      sim_runner_options_init (&po.run);
      po.run.full = options ? options->full : FALSE;
      /* Every deck row ran: the memory model may only be found wrong by it, never refuse it. */
      po.run.memory_advisory = TRUE;
      po.run.sensitivities = options ? options->sensitivities : FALSE;
      po.weak = TRUE;
      if (sim_runner_predict (sc, &po, &pred, &error))
        {
          res->status = SIM_VALIDATE_OK;
          res->predicted_s = pred.step_s;
          res->error_pct = 100.0 * (pred.step_s - row->step_time_s) / row->step_time_s;
          memcpy (res->breakdown_s, pred.step.breakdown_s, sizeof res->breakdown_s);
          memcpy (res->comm_busy_s, pred.step.comm_busy_s, sizeof res->comm_busy_s);
          res->mfu = pred.step.mfu;
          res->memory_gib = pred.step.memory_bytes / (1024.0 * 1024.0 * 1024.0);
          res->memory_over = pred.step.memory_over;
          res->band_lo_s = pred.step_lo_s;
          res->band_hi_s = pred.step_hi_s;
          /* predicted_s = step_ns / 1e9 · (1 + virtualization overhead) */
          double per_ns = pred.step.step_ns > 0 ? pred.step_s / (double) pred.step.step_ns : 0;
          for (int k = 0; k < SIM_GPU_N_SENS; k++)
            res->sens[k] = pred.step.step_sens[k] * per_ns;
        }
    }
  if (error != NULL)
    {
      res->status = SIM_VALIDATE_SKIPPED;
      res->reason = g_strdup (error->message);
      /* One line: the first line of the message. */
      char *nl = strchr (res->reason, '\n');
      if (nl)
        *nl = '\0';
      g_error_free (error);
    }
  res->wall_s = (double) (g_get_monotonic_time () - t0) / 1e6;
}

/* ---- Unstated micro-batches -------------------------------------------------------------------- */

/* Where a source does not state the micro-batch the deck writes 1 as a placeholder and says so in the
 * notes ("micro_batch not stated"; DECK.md, the Megatron-LM README rows). Such a row runs the
 * micro-batch a run tuned for throughput would use: of the micro-batches m dividing the replica's
 * batch b = global_batch / dp (and, when the row runs interleaved, leaving b / m a multiple of pp, as
 * Megatron-Core's interleaved schedule requires), the fastest whose memory fits, trying m upwards
 * until one no longer fits (activations grow with m). Each candidate is simulated uncalibrated (the
 * profile's datasheet and microbenchmark figures, sim_validate_uncalibrated_sets), so no measured
 * step time enters the choice: the full fit, every leave-one-source-out fold and `validate` see the
 * same micro-batch. What it changes: Megatron-Core reduces gradients only during the last
 * micro-batch's backward (core r0.8 schedules.py forward_backward_no_pipelining runs the others
 * under no_sync), so the README's 32B (TP 8, PP 1, 4 sequences per replica) at micro-batch 1 has a
 * quarter of a backward to hide its 16 GB fp32 gradient reduce-scatter per GPU in and cannot reach
 * the README's 46% MFU (1.22 s predicted against 0.89 s); at 4 it can. */
static gboolean
micro_batch_unstated (const SimValidateRow *r)
{
  return strstr (r->notes, "micro_batch not stated") != NULL;
}

/* The fastest micro-batch of an unstated row that fits (dividing the replica's batch, and into
 * whole pipeline rounds where interleaved), simulated uncalibrated; 0 if none ran and fitted. */
static int
fastest_micro_batch (const SimValidateRow *r)
{
  int b = r->global_batch_seqs / r->dp, best = 0;
  double best_s = 0;
  gboolean interleaved = r->pp > 1 && row_vpp (r) > 1;
  SimValidateOptions o = { 0 };
  o.uncalibrated = TRUE;
  o.threads = 1;
  for (int m = 1; m <= b; m++)
    {
      if (b % m != 0 || (interleaved && (b / m) % r->pp != 0))
        continue;
      SimValidateRow c = *r;
      c.micro_batch = m;
      SimValidateResult res;
      sim_validate_run_row (&c, &o, &res);
      gboolean ran = res.status == SIM_VALIDATE_OK;
      gboolean fits = ran && !res.memory_over;
      if (fits && (best == 0 || res.predicted_s < best_s))
        {
          best = m;
          best_s = res.predicted_s;
        }
      sim_validate_result_clear (&res);
      if (ran && !fits)
        break;
    }
  return best;
}

/* Row i's micro-batch, if the deck leaves it unstated. Rows are resolved in threads: each touches
 * its own row only. */
static void
resolve_row (SimValidateDeck *deck, guint i)
{
  if (!micro_batch_unstated (sim_validate_deck_row (deck, i)))
    return;
  int m = fastest_micro_batch (sim_validate_deck_row (deck, i));
  if (m > 0)
    sim_validate_deck_set_micro_batch (deck, i, m);
}

static void
resolve_job (gpointer data, gpointer deck)
{
  resolve_row (deck, GPOINTER_TO_UINT (data) - 1);
}

void
sim_validate_deck_resolve (SimValidateDeck *deck, int threads)
{
  guint n = sim_validate_deck_n_rows (deck), k = 0;
  for (guint i = 0; i < n; i++)
    k += micro_batch_unstated (sim_validate_deck_row (deck, i));
  if (k == 0)
    return;
  threads = threads > 0 ? threads : (int) g_get_num_processors ();
  threads = MAX (1, MIN (threads, (int) k));
  GThreadPool *pool = threads > 1 ? g_thread_pool_new (resolve_job, deck, threads, TRUE, NULL) : NULL;
  for (guint i = 0; i < n; i++)
    if (micro_batch_unstated (sim_validate_deck_row (deck, i)))
      {
        if (pool)
          g_thread_pool_push (pool, GUINT_TO_POINTER (i + 1), NULL);
        else
          resolve_row (deck, i);
      }
  if (pool)
    g_thread_pool_free (pool, FALSE, TRUE);
}

typedef struct {
  const SimValidateDeck *deck;
  SimValidateDeck *resolve;  /* the same deck, its unstated micro-batches to resolve; or NULL */
  const SimValidateOptions *options;
  SimValidateResult *results;
  GMutex lock;
  guint done;
} Job;

static void
job_progress (Job *job, guint i)
{
  if (!job->options || !job->options->progress)
    return;
  g_mutex_lock (&job->lock);
  job->done++;
  fprintf (stderr, "[%u/%u] %s: %.1f s\n", job->done, sim_validate_deck_n_rows (job->deck),
           sim_validate_deck_row (job->deck, i)->id, job->results[i].wall_s);
  g_mutex_unlock (&job->lock);
}

static void
job_run (gpointer data, gpointer user)
{
  Job *job = user;
  guint i = GPOINTER_TO_UINT (data) - 1;
  if (job->resolve)
    resolve_row (job->resolve, i);
  sim_validate_run_row (sim_validate_deck_row (job->deck, i), job->options, &job->results[i]);
  job_progress (job, i);
}

char *
sim_validate_row_command (const SimValidateRow *r, GError **error)
{
  g_return_val_if_fail (r != NULL, NULL);
  const char *files[ROW_FILES];
  g_autoptr (GPtrArray) list = row_settings (r, files, error);
  if (list == NULL)
    return NULL;
  GString *cmd = g_string_new ("trainsim run");
  for (int i = 0; files[i] != NULL; i++)
    g_string_append_printf (cmd, " %s", files[i]);
  g_autofree char *name = g_shell_quote (r->id);
  g_autofree char *model = g_strdup_printf ("model.name=%.63s", r->model);
  g_autofree char *qmodel = g_shell_quote (model);
  g_string_append_printf (cmd, " --set scenario.name=%s --set %s", name, qmodel);
  for (guint i = 0; i < list->len; i++)
    {
      g_autofree char *q = g_shell_quote (g_ptr_array_index (list, i));
      g_string_append_printf (cmd, " \\\n  --set %s", q);
    }
  return g_string_free (cmd, FALSE);
}

/* A row's simulation identity: its profile files and settings (NULL if it cannot be modelled). */
static char *
row_key (const SimValidateRow *r)
{
  const char *files[ROW_FILES];
  g_autoptr (GPtrArray) list = row_settings (r, files, NULL);
  if (list == NULL)
    return NULL;
  for (int i = ROW_FILES - 2; i >= 0; i--)
    if (files[i] != NULL)
      g_ptr_array_insert (list, 0, g_strdup (files[i]));
  g_ptr_array_add (list, NULL);
  return g_strjoinv ("\n", (char **) list->pdata);
}

/* The runner keeps no mutable static state (each run owns its engine, topology and programs) and
 * the scenario loader registers its embedded resources once under g_once, so rows run in threads.
 * Rows whose scenarios are identical (e.g. the same MLPerf case on two clusters) are simulated once
 * and share the prediction; each keeps its own measurement. */
static void
run_deck (const SimValidateDeck *deck, SimValidateDeck *resolve, const SimValidateOptions *options,
          SimValidateResult *results)
{
  guint n = sim_validate_deck_n_rows (deck);
  int threads = options && options->threads > 0 ? options->threads : (int) g_get_num_processors ();
  threads = MAX (1, MIN (threads, (int) MAX (n, 1)));
  g_autofree int *same_as = g_new (int, MAX (n, 1));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < n; i++)
    {
      same_as[i] = -1;
      /* A row still to resolve is not known yet: it runs on its own. */
      if (resolve && micro_batch_unstated (sim_validate_deck_row (deck, i)))
        continue;
      char *key = row_key (sim_validate_deck_row (deck, i));
      gpointer first = NULL;
      if (key == NULL)
        continue;
      if (g_hash_table_lookup_extended (seen, key, NULL, &first))
        {
          same_as[i] = GPOINTER_TO_INT (first);
          g_free (key);
        }
      else
        g_hash_table_insert (seen, key, GINT_TO_POINTER ((int) i));
    }
  Job job = { deck, resolve, options, results };
  g_mutex_init (&job.lock);
  GThreadPool *pool = threads > 1 ? g_thread_pool_new (job_run, &job, threads, TRUE, NULL) : NULL;
  /* Largest jobs first, so a big row does not start last: a rank's slots times its layers, times
   * the ranks simulated. The runner keeps one rank per stage where every stage's groups sit alike on
   * the NVLink domains (sim/step/runner.c, placement_symmetric), else one per TP group; guessed here
   * from whether a stage fills whole domains or shares one, which is only the order of the work (a
   * wrong guess costs time, never a result). */
  g_autofree guint *order = g_new (guint, MAX (n, 1));
  g_autofree double *cost = g_new (double, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      int stage = r->gpus / MAX (r->pp, 1), d = domain_used (r);
      gboolean aligned = stage > 0 && d > 0 && (stage % d == 0 || d % stage == 0);
      order[i] = i;
      cost[i] = (double) r->pp * row_vpp (r) * r->layers * (r->global_batch_seqs / (r->dp * r->micro_batch))
                * (aligned ? 1.0 : (double) stage / r->tp);
    }
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && cost[order[j]] > cost[order[j - 1]]; j--)
      {
        guint t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  for (guint i = 0; i < n; i++)
    {
      if (same_as[order[i]] >= 0)
        continue;
      if (pool)
        g_thread_pool_push (pool, GUINT_TO_POINTER (order[i] + 1), NULL);
      else
        job_run (GUINT_TO_POINTER (order[i] + 1), &job);
    }
  if (pool)
    g_thread_pool_free (pool, FALSE, TRUE);
  for (guint i = 0; i < n; i++)
    if (same_as[i] >= 0)
      {
        const SimValidateResult *src = &results[same_as[i]];
        const SimValidateRow *r = sim_validate_deck_row (deck, i);
        results[i] = *src;
        results[i].reason = g_strdup (src->reason);
        results[i].measured_s = r->step_time_s;
        results[i].error_pct = 100.0 * (src->predicted_s - r->step_time_s) / r->step_time_s;
        results[i].wall_s = 0;
        job_progress (&job, i);
      }
  g_mutex_clear (&job.lock);
}

void
sim_validate_run (const SimValidateDeck *deck, const SimValidateOptions *options, SimValidateResult *results)
{
  run_deck (deck, NULL, options, results);
}

void
sim_validate_resolve_and_run (SimValidateDeck *deck, const SimValidateOptions *options, SimValidateResult *results)
{
  run_deck (deck, deck, options, results);
}
