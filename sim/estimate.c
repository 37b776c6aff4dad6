/* Closed-form step estimate.
 *
 * Per GPU, with b = micro_batch, m = micro-batches per pipeline, L_r = layers on the rank, s = seq
 * len, h = hidden, T = b·s/cp tokens of a micro-batch on a rank, e = activation bytes (param dtype):
 *   compute    F_hw / (gpus · peak[matmul dtype] · eff), eff = gemm_eff_max · G/(G + G_half) with
 *              G the FLOPs of one micro-batch's MLP up-projection GEMM on a rank (the profile's GEMM
 *              saturation curve: small per-GPU GEMMs under high tp or cp run less efficiently)      F_hw: model FLOPs (model/flops.h
 *              closed form, 6N + causal attention) + recompute (full: one more forward of the
 *              layers, 1/3 of their work; selective: the attention core's forward)
 *   bubble     (pp − 1)/vpp · compute / m        (Narayanan et al. SC21 §2.2: 1F1B and interleaved)
 *   TP         per layer and micro-batch, 2 collectives forward and 2 backward (+2 with full
 *              recompute), each AG+RS or all-reduce of T·h·e bytes: 2(tp−1)/tp · T·h·e / B_tp
 *              (nccl-tests bus bandwidth convention) + 2(tp−1) · α. With tp_comm_overlap only what
 *              exceeds the GEMM time it hides behind is exposed.
 *   CP         ring attention: (cp − 1) KV blocks of 2·T·kv·d·e per layer forward, twice that
 *              backward, hidden behind the attention core; the excess is exposed.
 *   PP         2(pp − 1) sends of T·h·e (/tp with SP) on the critical path (fill and drain).
 *   DP         gradients of the rank's parameters (param dtype) over dp·cp: reduce-scatter +
 *              all-gather ((n−1)/n each) or all-reduce (2(n−1)/n); ZeRO-3 re-gathers parameters
 *              per micro-batch forward and backward. With dp_overlap the backward of the last
 *              micro-batch (2/3 of its compute) hides it, at least one bucket stays exposed.
 *   EP         all-to-all dispatch + combine forward and backward per MoE layer:
 *              4 · T·top_k·h·e · (ep−1)/ep / B_ep, not overlapped.
 *   optimizer  32 bytes of HBM traffic per parameter element the rank updates (read fp32 master,
 *              m, v, grad; write master, m, v; write the bf16 weight) / (HBM bandwidth · mem_eff).
 * B_x, α_x: a group whose ranks span at most one NVLink domain (the span is the group's size times
 * the product of the dims inside it in `order`) uses NVLink bandwidth × nvlink_eff; otherwise the
 * GPU's NIC bandwidth (× nic_eff when the profile gives it), divided by the leaf oversubscription.
 * Step = sum of the parts; × (1 + virtualization_overhead). */
#include "config.h"
#include <math.h>
#include "sim/estimate.h"
#include "model/flops.h"
#include "model/layer.h"
#include "model/memory.h"

static const char *const part_names[SIM_EST_COUNT] = {
  "compute", "tp", "cp", "pp", "dp", "ep", "bubble", "optimizer", "slowdown",
};

const char *
sim_estimate_part_name (SimEstimatePart p)
{
  g_return_val_if_fail ((unsigned) p < SIM_EST_COUNT, "?");
  return part_names[p];
}

void
sim_estimate_hw_from_scenario (const SimScenario *sc, SimEstimateHw *out)
{
  const SimGpuSpec *gpu = sim_scenario_gpu (sc);
  const SimClusterSpec *cl = sim_scenario_cluster (sc);
  const SimFabricSpec *fa = sim_scenario_fabric (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  SimEstimateHw hw = { 0 };
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    hw.peak_flops[d] = gpu->peak_flops[d];
  hw.gemm_eff = gpu->gemm_eff_max > 0 ? gpu->gemm_eff_max : 1.0;
  hw.gemm_half_flops = gpu->gemm_eff_half_gflop * 1e9;
  hw.hbm_bytes = gpu->hbm_bytes;
  hw.hbm_bw_bytes_per_s = gpu->hbm_bw_bytes_per_s * (gpu->mem_eff > 0 ? gpu->mem_eff : 1.0);
  double nvl = cl->nvlink_bw_bytes_per_s > 0 ? cl->nvlink_bw_bytes_per_s : gpu->nvlink_bw_bytes_per_s;
  hw.nvlink_bw_bytes_per_s = nvl * (gpu->nvlink_eff > 0 ? gpu->nvlink_eff : 1.0);
  hw.nvlink_latency_s = cl->nvlink_latency_ns * 1e-9;
  double nic_eff = 1.0;
  if (!sim_scenario_get_number (sc, "fabric", "nic_eff", &nic_eff) || nic_eff <= 0)
    nic_eff = 1.0;
  double over = fa->oversubscription[0] >= 1 ? fa->oversubscription[0] : 1.0;
  hw.nic_bw_bytes_per_s = cl->nic_bw_bytes_per_s * MAX (cl->nics_per_gpu, 1) * nic_eff / over;
  hw.nic_latency_s = cl->nic_latency_ns * 1e-9 + 2.0 * fa->hop_latency_ns * 1e-9;
  hw.domain_gpus = cl->gpus_per_domain_used > 0 ? cl->gpus_per_domain_used : cl->nvlink_domain;
  if (hw.domain_gpus <= 0)
    hw.domain_gpus = 1;
  hw.memory_overhead_bytes = run->memory_overhead_bytes;
  hw.virtualization_overhead = run->virtualization_overhead;
  *out = hw;
}

double
sim_estimate_gemm_eff (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw)
{
  if (hw->gemm_half_flops <= 0)
    return hw->gemm_eff;
  double ffn = shape->moe_experts > 0 ? shape->moe_ffn_hidden : shape->ffn_hidden;
  double g = 2.0 * plan->micro_batch * (double) shape->seq_len / plan->cp * shape->hidden * ffn / plan->tp;
  return hw->gemm_eff * g / (g + hw->gemm_half_flops);
}

/* Bandwidth and latency of a group along `dim` under the plan's rank order. */
static void
group_link (const ModelPlan *plan, const SimEstimateHw *hw, ModelDim dim, double *bw, double *alpha)
{
  gint64 stride = 1;
  for (int i = 0; i < MODEL_DIM_COUNT && plan->order[i] != dim; i++)
    stride *= model_plan_dim_size (plan, plan->order[i]);
  gint64 span = stride * model_plan_dim_size (plan, dim);
  if (span <= hw->domain_gpus || hw->nic_bw_bytes_per_s <= 0)
    *bw = hw->nvlink_bw_bytes_per_s, *alpha = hw->nvlink_latency_s;
  else
    *bw = hw->nic_bw_bytes_per_s, *alpha = hw->nic_latency_s;
  if (*bw <= 0)
    *bw = 1.0; /* a degenerate profile: the validity checks of the loader keep this unreachable */
}

/* Time of moving `factor` × bytes per GPU at bandwidth bw plus `steps` latencies. */
static double
coll_s (double factor, double bytes, double bw, double alpha, double steps)
{
  return factor * bytes / bw + steps * alpha;
}

gboolean
sim_estimate_step (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                   gboolean check_memory, SimEstimate *out, GError **error)
{
  g_return_val_if_fail (shape && plan && hw && out, FALSE);
  memset (out, 0, sizeof *out);
  if (!model_plan_validate (plan, shape, error))
    return FALSE;
  double peak = hw->peak_flops[plan->matmul_dtype];
  if (peak <= 0)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "the GPU profile has no %s peak; choose a matmul_dtype the GPU supports",
                   model_dtype_name (plan->matmul_dtype));
      return FALSE;
    }
  ModelMemory mem;
  GError *oom = NULL;
  gboolean fits = TRUE;
  if (check_memory)
    {
      fits = model_memory_check (shape, plan, hw->hbm_bytes, hw->memory_overhead_bytes, &mem, &oom);
      out->memory_bytes = mem.total_bytes;
    }
  out->fits = fits;

  const double gpus = plan->gpus;
  const int m = model_plan_microbatches (plan);
  const double tokens = (double) plan->global_batch * shape->seq_len;
  const double e = model_dtype_bytes (plan->param_dtype);
  const double L = shape->layers;
  const double Lr = L / plan->pp;              /* layers per pipeline rank (all chunks) */
  const double T = (double) plan->micro_batch * shape->seq_len / plan->cp;
  const double h = shape->hidden;

  /* Compute. */
  double model_flops = model_flops_closed_form (shape, model_shape_padded_vocab (shape, plan->tp), tokens);
  double attn_fwd = 2.0 * L * shape->heads * (double) shape->head_dim * (shape->seq_len + 1.0) * tokens;
  double layer_flops = 0.0;
  for (int l = 0; l < shape->layers; l++)
    layer_flops += 6.0 * (double) model_shape_layer_matmul_params (shape, l) * tokens;
  layer_flops += 3.0 * attn_fwd;
  double hw_flops = model_flops;
  if (plan->recompute == MODEL_RECOMPUTE_FULL)
    hw_flops += layer_flops / 3.0;
  else if (plan->recompute == MODEL_RECOMPUTE_SELECTIVE)
    hw_flops += attn_fwd;
  const double rate = peak * sim_estimate_gemm_eff (shape, plan, hw);
  double compute = hw_flops / (gpus * rate);
  double attn_compute = 3.0 * attn_fwd / (gpus * rate);
  double gemm_compute = compute - attn_compute;
  double p[SIM_EST_COUNT] = { 0 }, c[SIM_EST_COUNT] = { 0 };
  p[SIM_EST_COMPUTE] = compute;
  p[SIM_EST_BUBBLE] = (plan->pp - 1.0) / plan->vpp * compute / m;

  double bw, alpha;
  if (plan->tp > 1)
    {
      group_link (plan, hw, MODEL_DIM_TP, &bw, &alpha);
      double n = plan->tp;
      double per_layer = plan->recompute == MODEL_RECOMPUTE_FULL ? 6.0 : 4.0;
      c[SIM_EST_TP] = m * Lr * per_layer * coll_s (2.0 * (n - 1) / n, T * h * e, bw, alpha, 2.0 * (n - 1));
      p[SIM_EST_TP] = plan->tp_comm_overlap ? MAX (0.0, c[SIM_EST_TP] - gemm_compute) : c[SIM_EST_TP];
    }
  if (plan->cp > 1)
    {
      group_link (plan, hw, MODEL_DIM_CP, &bw, &alpha);
      double kv = 2.0 * T * shape->kv_heads * (double) shape->head_dim * e;
      c[SIM_EST_CP] = m * Lr * 3.0 * (plan->cp - 1.0) * (kv / bw + alpha);
      p[SIM_EST_CP] = MAX (0.0, c[SIM_EST_CP] - attn_compute);
    }
  if (plan->pp > 1)
    {
      group_link (plan, hw, MODEL_DIM_PP, &bw, &alpha);
      double act = T * h * e / (plan->sp ? plan->tp : 1);
      c[SIM_EST_PP] = 2.0 * m * plan->vpp * (act / bw + alpha);
      p[SIM_EST_PP] = 2.0 * (plan->pp - 1.0) * (act / bw + alpha);
    }
  ModelRankParams rp;
  model_layer_rank_params (shape, plan, 0, &rp);
  ModelRankParams rp_last;
  model_layer_rank_params (shape, plan, plan->pp - 1, &rp_last);
  if (rp_last.dense + rp_last.expert > rp.dense + rp.expert)
    rp = rp_last;
  int ndp = plan->dp * plan->cp;
  if (ndp > 1 || (rp.expert > 0 && model_plan_expert_dp (plan) > 1))
    {
      /* The DP group spans the DP dims (and CP): take the outermost of the two for the link. */
      ModelDim outer = MODEL_DIM_DP;
      for (int i = 0; i < MODEL_DIM_COUNT; i++)
        if (plan->order[i] == MODEL_DIM_DP || plan->order[i] == MODEL_DIM_CP)
          outer = plan->order[i];
      if (plan->cp == 1)
        outer = MODEL_DIM_DP;
      group_link (plan, hw, outer, &bw, &alpha);
      double n = ndp;
      double bytes = (double) rp.dense * e;
      double one = n > 1 ? coll_s (2.0 * (n - 1) / n, bytes, bw, alpha, 2.0 * (n - 1)) : 0.0;
      double ne = model_plan_expert_dp (plan);
      if (rp.expert > 0 && ne > 1)
        one += coll_s (2.0 * (ne - 1) / ne, (double) rp.expert * e, bw, alpha, 2.0 * (ne - 1));
      double dp_comm = one;
      double window = plan->dp_overlap ? 2.0 / 3.0 * compute / m : 0.0;
      if (plan->zero >= 3)
        {
          /* Parameter all-gathers: forward and backward of every micro-batch, hidden behind compute. */
          double gather = (one / 2.0) * 2.0 * m;
          dp_comm += gather;
          window += plan->dp_overlap ? compute : 0.0;
        }
      c[SIM_EST_DP] = dp_comm;
      double bucket = MIN (dp_comm, coll_s (2.0, plan->dp_bucket_mb * 1048576.0, bw, alpha, 2.0 * (n - 1)));
      p[SIM_EST_DP] = plan->dp_overlap ? MAX (bucket, dp_comm - window) : dp_comm;
    }
  if (plan->ep > 1 && shape->moe_experts > 0)
    {
      group_link (plan, hw, MODEL_DIM_EP, &bw, &alpha);
      double n = plan->ep;
      double moe_layers_rank = model_shape_moe_layers (shape) / (double) plan->pp;
      double bytes = T * shape->moe_top_k * h * e;
      c[SIM_EST_EP] = m * moe_layers_rank * 4.0 * coll_s ((n - 1) / n, bytes, bw, alpha, n - 1);
      p[SIM_EST_EP] = c[SIM_EST_EP];
    }
  double shard_dense = plan->zero >= 1 ? ndp : 1.0;
  double shard_expert = plan->zero >= 1 ? model_plan_expert_dp (plan) : 1.0;
  double updated = rp.dense / shard_dense + rp.expert / shard_expert;
  p[SIM_EST_OPTIMIZER] = 32.0 * updated / hw->hbm_bw_bytes_per_s;

  double step = 0.0;
  for (int i = 0; i < SIM_EST_COUNT; i++)
    step += p[i];
  double vf = 1.0 + hw->virtualization_overhead;
  for (int i = 0; i < SIM_EST_COUNT; i++)
    out->part_s[i] = p[i] * vf, out->comm_s[i] = c[i];
  out->step_s = step * vf;
  out->model_flops = model_flops;
  out->mfu = model_flops / (out->step_s * gpus * peak);
  out->tokens_per_s = tokens / out->step_s;
  if (!fits)
    {
      g_propagate_error (error, oom);
      return FALSE;
    }
  return TRUE;
}
