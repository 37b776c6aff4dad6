/* Closed-form step estimate.
 *
 * Per GPU, with m micro-batches per pipeline, L_r layers on a pipeline rank:
 *   micro-batch work  the op lists of one dense (and one MoE) layer, forward and backward with the
 *              plan's recompute (model/layer.h), each kernel timed as the simulator times it
 *              (sim/gpu/gpu.h: max(FLOPs / (peak · eff), bytes / (HBM · mem_eff)) + launch); the
 *              embedding and LM head on the first and last stage. A stage's micro-batch takes
 *              t_s = L_r · t_layer (+ embedding or head); the slowest stage sets the pace.
 *   compute    m · t_s (the layer kernels; exposed communication below is added to it)
 *   bubble     (pp − 1)/vpp · t_s         (Narayanan et al. SC21 §2.2: 1F1B and interleaved);
 *              DualPipe (pp/2 − 1)·(5/3)·t_s with t_s half the rank's layers (bubble_s)
 *   TP         each TP collective of the op list: (n−1)/n · bytes / B_tp + (n−1)·α (all-gather,
 *              reduce-scatter; all-reduce twice that; nccl-tests bus bandwidth convention). With
 *              tp_comm_overlap a collective next to a GEMM runs beside it, as the simulator runs
 *              it: exposed max(0, comm − GEMM); otherwise all of it is exposed.
 *   CP         ring attention's KV exchange: (cp − 1) blocks, hidden behind the attention cores;
 *              the excess is exposed.
 *   EP         all-to-all dispatch + combine forward and backward, (n−1)/n of the buffer, blocking.
 *   PP         the activation sends on the critical path: the first micro-batch's forward and the
 *              last one's backward pass every chunk, 2(pp·vpp − 1) sends (2(pp − 1) without
 *              interleaving).
 *   DP         gradients of the rank's parameters (param dtype) over dp·cp: reduce-scatter +
 *              all-gather ((n−1)/n each) or all-reduce (2(n−1)/n); ZeRO-2/3 reduce-scatter every
 *              micro-batch (only the gradient shard is kept); ZeRO-3 re-gathers parameters
 *              per micro-batch forward and backward. With dp_overlap the backward of the last
 *              micro-batch (2/3 of its work) hides it, at least one bucket stays exposed;
 *              interleaved (vpp > 1), each chunk's reduce hides behind the later chunks' backwards
 *              and its gather behind the earlier chunks' forwards, 1/vpp of them exposed. Across
 *              domains each dp_bucket_MiB bucket (ZeRO-3/FSDP: each layer's gather) takes the faster
 *              of that ring form and the best closed form of sim/net/alphabeta.h (rings over every
 *              rail of the node, tree, CollNet Direct where the fabric reduces: NCCL's algorithms),
 *              as the simulator's AUTO picks; not DeepSpeed 0.3's blocking gathers (zero3_blocking).
 *   slowdown   overlap_slowdown x the compute that runs beside a collective: the GEMMs paired with
 *              overlapped TP/CP collectives and, with dp_overlap, min(DP window, DP time).
 *   optimizer  the ops of model_layer_optimizer_ops on the rank with the most parameters (grad-norm,
 *              Adam over the ZeRO shard, gradient zeroing, recipe weight casts), each timed by
 *              sim/gpu/gpu.c as the simulator times it, and the profile's fixed per-step host time
 *              (step_overhead_ms).
 * B_x, α_x: a group whose ranks span at most one NVLink domain (the span is the group's size times
 * the product of the dims inside it in `order`) uses NVLink bandwidth × nvlink_eff; otherwise the
 * GPU's NIC bandwidth (× nic_eff when the profile gives it), divided by the leaf oversubscription.
 * Step = sum of the parts; × (1 + virtualization_overhead). No contention between flows, no
 * stragglers: the simulator (sim/step/runner.c) has those; this is the search's fast first stage. */
#include "config.h"
#include <math.h>
#include "sim/plan/estimate.h"
#include "sim/net/alphabeta.h"
#include "model/flops.h"
#include "model/layer.h"
#include "model/memory.h"
#include "model/op.h"
#include "model/framework.h"

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
  /* The planning estimate uses the efficiency of the run's matmul dtype (1 when unknown). */
  double ge = gpu->gemm_eff_max[sim_scenario_plan (sc)->matmul_dtype];
  hw.gemm_eff = ge > 0 ? ge : 1.0;
  hw.hbm_bytes = gpu->hbm_bytes;
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
  hw.mesh = cl->mesh;
  hw.memory_overhead_bytes = run->memory_overhead_bytes;
  if (!sim_scenario_collective_profile (sc, &hw.coll, NULL))
    memset (&hw.coll, 0, sizeof hw.coll);
  hw.sharp = sim_collective_fabric_reduces (cl, fa) && hw.coll.collnet_eff > 0;
  hw.virtualization_overhead = run->virtualization_overhead;
  hw.gpu = *gpu;
  *out = hw;
}

/* Consecutive ranks a group along `dim` spans under the plan's rank order. */
static gint64
group_span (const ModelPlan *plan, ModelDim dim)
{
  gint64 stride = 1;
  for (int i = 0; i < MODEL_DIM_COUNT && plan->order[i] != dim; i++)
    stride *= model_plan_dim_size (plan, plan->order[i]);
  return stride * model_plan_dim_size (plan, dim);
}

/* Bandwidth and latency of a group along `dim` under the plan's rank order. */
static void
group_link (const ModelPlan *plan, const SimEstimateHw *hw, ModelDim dim, double *bw, double *alpha)
{
  gint64 span = group_span (plan, dim);
  if (span <= hw->domain_gpus || hw->nic_bw_bytes_per_s <= 0)
    {
      *bw = hw->nvlink_bw_bytes_per_s, *alpha = hw->nvlink_latency_s;
      /* A mesh gives the group's k members of one domain k - 1 of a GPU's domain - 1 links. */
      gint64 k = model_plan_dim_size (plan, dim);
      if (hw->mesh && hw->domain_gpus > 1)
        *bw *= (double) MAX (MIN (k, hw->domain_gpus) - 1, 1) / (hw->domain_gpus - 1);
    }
  else
    *bw = hw->nic_bw_bytes_per_s, *alpha = hw->nic_latency_s;
  if (*bw <= 0)
    *bw = 1.0; /* a degenerate profile: the validity checks of the loader keep this unreachable */
}

/* The closed forms' view (sim/net/alphabeta.h) of a group of n ranks, l of them in each NVLink domain. */
static SimCollectiveShape
hw_shape (const SimEstimateHw *hw, int n, int l)
{
  SimCollectiveShape sh = { 0 };
  sh.ranks = n;
  sh.ranks_per_domain = MAX (MIN (l, n), 1);
  sh.domains = (n + sh.ranks_per_domain - 1) / sh.ranks_per_domain;
  sh.uniform = n % sh.ranks_per_domain == 0;
  /* The shape wants line rates; hw keeps achieved ones. */
  sh.nvlink_bw_bytes_per_s = hw->nvlink_bw_bytes_per_s / (hw->coll.nvlink_eff > 0 ? hw->coll.nvlink_eff : 1.0);
  sh.nic_bw_bytes_per_s = hw->nic_bw_bytes_per_s / (hw->coll.nic_eff > 0 ? hw->coll.nic_eff : 1.0);
  sh.nvlink_latency_ns = (gint64) llround (hw->nvlink_latency_s * 1e9);
  sh.net_latency_ns = (gint64) llround (hw->nic_latency_s * 1e9);
  sh.sharp = hw->sharp;
  return sh;
}

/* A collective of `bytes` over the n ranks of the group along `dim` (with CP when dim is the outer of
 * DP and CP) that leaves its NVLink domain, at the fastest closed form of sim/net/alphabeta.h (rings
 * over every rail of the node, tree, CollNet Direct where the fabric reduces), as
 * NCCL's tuner and the simulator's AUTO pick it; its members per domain: n spread evenly over the
 * ranks the group spans. -1 for a group inside one domain or on a mesh. */
static double
best_coll_s (const ModelPlan *plan, const SimEstimateHw *hw, ModelDim dim, int n, SimCollectiveOp op, double bytes)
{
  gint64 span = group_span (plan, dim);
  if (span <= hw->domain_gpus || n <= 1 || hw->mesh || bytes <= 0)
    return -1;
  int l = (int) CLAMP (llround ((double) n * hw->domain_gpus / span), 1, n);
  SimCollectiveShape sh = hw_shape (hw, n, l);
  gint64 ns = -1;
  sim_alphabeta_best (op, &sh, &hw->coll, bytes, &ns);
  return ns < 0 ? -1 : ns * 1e-9;
}

/* best_coll_s over `bytes` cut into buckets of `bucket` bytes (the last one smaller), one after the
 * other; -1 where it does not apply. */
static double
bucketed_s (const ModelPlan *plan, const SimEstimateHw *hw, ModelDim dim, int n, SimCollectiveOp op, double bytes,
            double bucket)
{
  if (!(bytes > 0) || !(bucket > 0))
    return -1;
  double k = floor (bytes / bucket), rest = bytes - k * bucket;
  double full = k > 0 ? best_coll_s (plan, hw, dim, n, op, bucket) : 0.0;
  double last = rest > 0 ? best_coll_s (plan, hw, dim, n, op, rest) : 0.0;
  return full < 0 || last < 0 ? -1 : k * full + last;
}

/* Time of moving `factor` × bytes per GPU at bandwidth bw plus `steps` latencies. */
static double
coll_s (double factor, double bytes, double bw, double alpha, double steps)
{
  return factor * bytes / bw + steps * alpha;
}

static double
kernel_s (const ModelPlan *plan, const SimEstimateHw *hw, const ModelOp *op)
{
  return sim_gpu_op_ns (&hw->gpu, plan, op) * 1e-9;
}

/* Time of one collective of the op list on its group's link. An expert all-to-all carries
 * model_moe_dispatch_copies over the EP group's domains (its span under the rank order over the
 * domain size) instead of one copy per selected expert. */
static double
comm_op_s (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw, const ModelOp *op)
{
  double bw, alpha;
  int n = op->group_size > 1 ? op->group_size : 1;
  group_link (plan, hw, op->dim == MODEL_DIM_DP ? MODEL_DIM_DP : op->dim, &bw, &alpha);
  double f = (n - 1.0) / n;
  if (op->coll == MODEL_COLL_ALL_TO_ALL && op->dim == MODEL_DIM_EP && shape->moe_top_k > 0)
    {
      gint64 domains = (group_span (plan, MODEL_DIM_EP) + hw->domain_gpus - 1) / hw->domain_gpus;
      f *= model_moe_dispatch_copies (shape, plan, (int) CLAMP (domains, 1, n)) / shape->moe_top_k;
    }
  switch (op->coll)
    {
    case MODEL_COLL_ALL_REDUCE: return coll_s (2.0 * f, op->comm_bytes, bw, alpha, 2.0 * (n - 1));
    case MODEL_COLL_ALL_GATHER:
    case MODEL_COLL_REDUCE_SCATTER:
    case MODEL_COLL_ALL_TO_ALL: return coll_s (f, op->comm_bytes, bw, alpha, n - 1);
    case MODEL_COLL_SEND_RECV:
    case MODEL_COLL_CP_KV_EXCHANGE: return coll_s (1.0, op->comm_bytes, bw, alpha, 1.0);
    default: return 0.0;
    }
}

static gboolean
plain_tp (const ModelOp *op)
{
  return op->kind == MODEL_OP_COMM && op->dim == MODEL_DIM_TP && !op->expert_group && !op->overlap_next;
}

/* Adds one op list's work to `acc` (weight w): compute, attention, per-dimension communication and
 * what of it is exposed, pairing overlapped collectives with the compute op they run beside as
 * sim/step/runner.c does. DP and PP collectives are left to the step terms. */
static void
add_ops (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw, const GArray *ops, double w,
         SimEstimateLayer *acc, double *compute)
{
  const ModelOp *o = (const ModelOp *) ops->data;
  int n = (int) ops->len;
  gboolean tpo = plan->tp_comm_overlap;
  for (int i = 0; i < n; i++)
    {
      if (o[i].kind != MODEL_OP_COMM)
        {
          double t = kernel_s (plan, hw, &o[i]);
          if (o[i].flags & MODEL_OP_LATER_MICROBATCHES) /* absent from the first micro-batch */
            t *= 1.0 - 1.0 / model_plan_microbatches (plan);
          *compute += w * t;
          if (o[i].kind == MODEL_OP_ATTENTION)
            acc->layer_attn_s += w * t;
          /* A GEMM draining into a reduce-scatter/all-reduce runs beside it under tp overlap. */
          if (tpo && o[i].kind == MODEL_OP_GEMM && i + 1 < n && plain_tp (&o[i + 1])
              && (o[i + 1].coll == MODEL_COLL_REDUCE_SCATTER || o[i + 1].coll == MODEL_COLL_ALL_REDUCE))
            {
              double c = comm_op_s (shape, plan, hw, &o[i + 1]);
              acc->layer_tp_s += w * c;
              acc->layer_tp_exposed_s += w * MAX (0.0, c - t);
              acc->layer_overlapped_s += c > 0 && !sim_gpu_op_ub_own_sms (plan, &o[i]) ? w * t : 0.0;
              i++;
            }
          continue;
        }
      if (o[i].dim == MODEL_DIM_DP || o[i].dim == MODEL_DIM_PP || o[i].group_size <= 1)
        continue;
      double c = comm_op_s (shape, plan, hw, &o[i]);
      gboolean ovl = o[i].overlap_next || (tpo && plain_tp (&o[i]) && i + 1 < n && o[i + 1].kind == MODEL_OP_GEMM);
      double next = 0.0;
      if (ovl && i + 1 < n && o[i + 1].kind != MODEL_OP_COMM)
        next = kernel_s (plan, hw, &o[i + 1]);
      double exposed = ovl ? MAX (0.0, c - next) : c;
      gboolean own = ovl && i + 1 < n && sim_gpu_op_ub_own_sms (plan, &o[i + 1]);
      acc->layer_overlapped_s += c > 0 && !own ? w * next : 0.0;
      if (o[i].dim == MODEL_DIM_TP)
        acc->layer_tp_s += w * c, acc->layer_tp_exposed_s += w * exposed;
      else if (o[i].dim == MODEL_DIM_CP)
        acc->layer_cp_s += w * c, acc->layer_cp_exposed_s += w * exposed;
      else if (o[i].dim == MODEL_DIM_EP)
        acc->layer_ep_s += w * c;
    }
}

void
sim_estimate_layer (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw, SimEstimateLayer *out)
{
  memset (out, 0, sizeof *out);
  g_autoptr (GArray) ops = model_op_array_new ();
  /* An average layer: one representative of each kind (dense or MoE, GEMMs in matmul_dtype or kept
   * in param_dtype by bf16_layers_first/last) weighted by how many layers of that kind there are. */
  int rep[4] = { -1, -1, -1, -1 }, count[4] = { 0 };
  for (int l = 0; l < shape->layers; l++)
    {
      int k = (model_shape_layer_is_moe (shape, l) ? 2 : 0)
              + (model_layer_matmul_dtype (shape, plan, l) != plan->matmul_dtype ? 1 : 0);
      if (rep[k] < 0)
        rep[k] = l;
      count[k]++;
    }
  for (int k = 0; k < 4; k++)
    {
      if (count[k] == 0)
        continue;
      for (int pass = 0; pass < 2; pass++)
        {
          g_array_set_size (ops, 0);
          model_layer_ops (shape, plan, rep[k], (ModelPass) pass, ops);
          add_ops (shape, plan, hw, ops, (double) count[k] / shape->layers, out, &out->layer_compute_s);
        }
    }
  for (int pass = 0; pass < 2; pass++)
    {
      SimEstimateLayer extra = { 0 };
      g_array_set_size (ops, 0);
      model_layer_embedding_ops (shape, plan, (ModelPass) pass, ops);
      add_ops (shape, plan, hw, ops, 1.0, &extra, &out->embedding_s);
      out->embedding_s += extra.layer_tp_exposed_s;
      memset (&extra, 0, sizeof extra);
      g_array_set_size (ops, 0);
      model_layer_head_ops (shape, plan, (ModelPass) pass, ops);
      add_ops (shape, plan, hw, ops, 1.0, &extra, &out->head_s);
      out->head_s += extra.layer_tp_exposed_s;
    }
}

/* Chunk passes per micro-batch (interleaved: vpp; DualPipe: one of its two copies). */
static double
passes_per_mb (const ModelPlan *plan)
{
  return plan->schedule == MODEL_SCHED_DUALPIPE ? 1.0 : plan->vpp;
}

/* Bubble of a stage time t (one micro-batch's forward and backward through the rank):
 * (pp − 1)/vpp · t (SC21 §2.2); DualPipe (pp/2 − 1)(F&B + B) with F&B = t and B = 2t/3 (arXiv
 * 2412.19437 Table 2, no W split; the backward about twice the forward). */
static double
bubble_s (const ModelPlan *plan, double t)
{
  if (plan->schedule == MODEL_SCHED_DUALPIPE)
    return (plan->pp / 2 - 1.0) * (5.0 / 3.0) * t;
  return (plan->pp - 1.0) / plan->vpp * t;
}

/* Slowest stage's work per micro-batch: layers × (compute + exposed layer comm) + embedding/head. */
static double
stage_s (const ModelShape *shape, const ModelPlan *plan, const SimEstimateLayer *ly, double per_layer,
         double *compute_only)
{
  /* DualPipe: a micro-batch passes one of the rank's two chunks (half its layers, and the
   * embedding or the head at either end rank). */
  if (plan->schedule == MODEL_SCHED_DUALPIPE)
    {
      double layers = model_plan_rank_layers (plan, shape, 0) / 2.0;
      double extra = (ly->embedding_s + ly->head_s) / 2.0;
      if (compute_only)
        *compute_only = layers * ly->layer_compute_s + extra;
      return layers * per_layer + extra;
    }
  double worst = 0.0, worst_c = 0.0;
  int ranks[3] = { 0, plan->pp / 2, plan->pp - 1 };
  for (int i = 0; i < 3; i++)
    {
      int r = ranks[i];
      double layers = model_plan_rank_layers (plan, shape, r);
      double extra = (r == 0 ? ly->embedding_s : 0.0) + (r == plan->pp - 1 ? ly->head_s : 0.0);
      double t = layers * per_layer + extra;
      if (t > worst)
        worst = t, worst_c = layers * ly->layer_compute_s + extra;
    }
  if (compute_only)
    *compute_only = worst_c;
  return worst;
}

double
sim_estimate_lower_bound (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                          const SimEstimateLayer *layer)
{
  double c;
  double per_layer = layer->layer_compute_s + layer->layer_tp_exposed_s + layer->layer_cp_exposed_s
                     + layer->layer_ep_s;
  double t = stage_s (shape, plan, layer, per_layer, &c);
  int m = model_plan_microbatches (plan);
  return (m * c + bubble_s (plan, t)) * (1.0 + hw->virtualization_overhead);
}

gboolean
sim_estimate_step (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                   gboolean check_memory, SimEstimate *out, GError **error)
{
  g_return_val_if_fail (shape && plan && hw && out, FALSE);
  memset (out, 0, sizeof *out);
  if (!model_plan_validate (plan, shape, error))
    return FALSE;
  SimEstimateLayer layer;
  sim_estimate_layer (shape, plan, hw, &layer);
  return sim_estimate_step_with (shape, plan, hw, &layer, check_memory, out, error);
}

/* FP8 delayed scaling: a blocking amax all-reduce over TP x CP x DP (TP x CP with fp8_amax_tp_only)
 * after every chunk's forward and backward (sim/step/program.c): 3 and 2 amaxes per FP8 GEMM of the
 * chunk, 4 GEMMs per layer, lr layers per stage; latency-bound, at NCCL's fastest algorithm and
 * protocol for the group spread over domains. 0 when the plan has none or does not wait for it
 * (fp8_amax_async). */
static double
amax_s (const ModelPlan *plan, const SimEstimateHw *hw, int m, double lr)
{
  int n = plan->tp * plan->cp * (plan->fp8_amax_tp_only ? 1 : plan->dp);
  if (plan->matmul_dtype != MODEL_DTYPE_FP8 || plan->fp8_scaling != MODEL_FP8_DELAYED || !plan->fp8_reduce_amax
      || plan->fp8_amax_async || n <= 1)
    return 0.0;
  SimCollectiveShape sh = hw_shape (hw, n, hw->domain_gpus);
  double chunk_layers = lr / plan->vpp;
  gint64 fwd_ns = -1, bwd_ns = -1;
  sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &sh, &hw->coll, 3.0 * 4.0 * 4.0 * chunk_layers, &fwd_ns);
  sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &sh, &hw->coll, 2.0 * 4.0 * 4.0 * chunk_layers, &bwd_ns);
  return m * passes_per_mb (plan) * (MAX (fwd_ns, 0) + MAX (bwd_ns, 0)) * 1e-9;
}

gboolean
sim_estimate_step_with (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                        const SimEstimateLayer *ly, gboolean check_memory, SimEstimate *out, GError **error)
{
  g_return_val_if_fail (shape && plan && hw && ly && out, FALSE);
  memset (out, 0, sizeof *out);
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
  const double T = (double) plan->micro_batch * shape->seq_len / plan->cp;
  const double h = shape->hidden;
  double p[SIM_EST_COUNT] = { 0 }, c[SIM_EST_COUNT] = { 0 };

  /* Layer communication scales with the layers of the slowest stage, like its compute. */
  double per_layer = ly->layer_compute_s + ly->layer_tp_exposed_s + ly->layer_cp_exposed_s + ly->layer_ep_s;
  double compute_stage;
  double t_stage = stage_s (shape, plan, ly, per_layer, &compute_stage);
  double lr = 0.0; /* layers of the slowest stage */
  {
    int ranks[3] = { 0, plan->pp / 2, plan->pp - 1 };
    double worst = -1;
    for (int i = 0; i < 3; i++)
      {
        int r = ranks[i];
        double layers = model_plan_rank_layers (plan, shape, r);
        double extra = (r == 0 ? ly->embedding_s : 0.0) + (r == plan->pp - 1 ? ly->head_s : 0.0);
        if (layers * per_layer + extra > worst)
          worst = layers * per_layer + extra, lr = layers;
      }
    if (plan->schedule == MODEL_SCHED_DUALPIPE)
      lr /= 2.0; /* a micro-batch passes one of the two chunks */
  }
  p[SIM_EST_COMPUTE] = m * compute_stage;
  p[SIM_EST_TP] = m * lr * ly->layer_tp_exposed_s, c[SIM_EST_TP] = m * lr * ly->layer_tp_s;
  p[SIM_EST_CP] = m * lr * ly->layer_cp_exposed_s, c[SIM_EST_CP] = m * lr * ly->layer_cp_s;
  p[SIM_EST_EP] = m * lr * ly->layer_ep_s, c[SIM_EST_EP] = p[SIM_EST_EP];
  p[SIM_EST_BUBBLE] = bubble_s (plan, t_stage);
  double compute = p[SIM_EST_COMPUTE];

  double bw, alpha;
  if (plan->pp > 1)
    {
      group_link (plan, hw, MODEL_DIM_PP, &bw, &alpha);
      double act = T * h * e / ((plan->sp || plan->pp_scatter_gather) && plan->tp > 1 ? plan->tp : 1);
      c[SIM_EST_PP] = 2.0 * m * passes_per_mb (plan) * (act / bw + alpha);
      /* The critical path's hops: the first micro-batch's forward and the last one's backward pass
       * every chunk in turn, pp·vpp − 1 sends each way (2(pp − 1) without interleaving). With
       * interleaving each round of pp micro-batches through a chunk waits for the previous round to
       * come back around the ring, so those hops are not hidden (simulated: GPT-3 175B on 10,752
       * H100, pp 8, vpp 12, m 8, idles its first stage 0.16 s against 0.05 s of (pp − 1)/vpp · t). */
      double hops = plan->schedule == MODEL_SCHED_DUALPIPE ? plan->pp - 1.0 : plan->pp * passes_per_mb (plan) - 1.0;
      p[SIM_EST_PP] = 2.0 * hops * (act / bw + alpha);
    }
  ModelRankParams rp;
  model_layer_rank_params (shape, plan, 0, &rp);
  ModelRankParams rp_last;
  model_layer_rank_params (shape, plan, plan->pp - 1, &rp_last);
  int rp_rank = 0;
  if (rp_last.dense + rp_last.expert > rp.dense + rp.expert)
    rp = rp_last, rp_rank = plan->pp - 1;
  int ndp = plan->dp * plan->cp;
  double overlapped_dp = 0.0;
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
      ModelDpSchedule fw;
      model_framework_dp_schedule (plan, &fw);
      /* fp8_param_gather: the all-gather half carries the FP8 layers' GEMM weights at 1 byte. */
      double saving = n > 1 ? model_layer_fp8_param_saving (shape, plan, rp_rank, -1) : 0.0;
      if (n > 1)
        one -= (n - 1) / n * saving / bw;
      double ne = model_plan_expert_dp (plan);
      double xe = rp.expert > 0 && ne > 1
                    ? coll_s (2.0 * (ne - 1) / ne, (double) rp.expert * e, bw, alpha, 2.0 * (ne - 1)) : 0.0;
      one += xe;
      /* The framework's schedule (model/framework.c), as the simulator runs it: `one` is an
       * all-reduce, or a reduce-scatter plus the parameter all-gather. */
      gboolean ovl = fw.reduce_overlap && !fw.reduce_blocking;
      double red = fw.reduce_allreduce ? one : one / 2.0;
      double ag = fw.param_ag != MODEL_DP_PARAM_AG_NONE ? one / 2.0 : 0.0;
      /* Across domains, the gradients' and parameters' buckets (dp_bucket_MiB, as model/layer.c cuts
       * them and the simulator runs them) at the fastest closed form each, where that is faster: the
       * ring form above sees one NIC per GPU where NCCL's rings use every rail of the node, and its
       * trees and SHARP take fewer network steps; each bucket pays its latency. */
      double bucket_bytes = (double) plan->dp_bucket_mb * 1048576.0;
      double ring_red = fw.reduce_allreduce ? one - xe : (one - xe) / 2.0, ring_ag = (one - xe) / 2.0;
      double t = bucketed_s (plan, hw, outer, (int) n,
                             fw.reduce_allreduce ? SIM_COLLECTIVE_ALLREDUCE : SIM_COLLECTIVE_REDUCE_SCATTER, bytes,
                             bucket_bytes);
      if (t >= 0 && t < ring_red)
        red += t - ring_red;
      t = fw.param_ag != MODEL_DP_PARAM_AG_NONE
            ? bucketed_s (plan, hw, outer, (int) n, SIM_COLLECTIVE_ALLGATHER, bytes - saving, bucket_bytes) : -1;
      if (t >= 0 && t < ring_ag)
        ag += t - ring_ag;
      double dp_comm = red + ag;
      double window = ovl && fw.reduce != MODEL_DP_REDUCE_AFTER_BWD ? 2.0 / 3.0 * compute / m : 0.0;
      if (fw.reduce == MODEL_DP_REDUCE_EVERY_MB)
        {
          /* Sharded gradients: every micro-batch's backward reduces (as the simulator runs it),
           * behind every backward; ZeRO-3 / FSDP have no step-end gather. */
          dp_comm = red * m + ag;
          window = ovl ? 2.0 / 3.0 * compute : 0.0;
        }
      if (fw.gathers)
        {
          /* Parameter all-gathers, hidden behind compute: forward and backward of every
           * micro-batch, or only the forward (kept after forward), or once (kept throughout). */
          double uses = fw.reshard_after_forward ? 2.0 * m : fw.reshard_after_backward ? m : 1.0;
          /* One gather per unit (a layer's parameters) at the closed forms' best, where faster; not
           * for DeepSpeed 0.3's blocking fetch (zero3_blocking), whose gathers per weight matrix and
           * list loops this estimate does not price (the ring form stands in for them). */
          double g1 = one / 2.0;
          double layer_bytes = lr > 0 ? bytes / lr : bytes;
          double unit = plan->zero3_blocking
                          ? -1 : bucketed_s (plan, hw, outer, (int) n, SIM_COLLECTIVE_ALLGATHER, bytes, layer_bytes);
          if (unit >= 0 && unit < g1)
            g1 = unit;
          double gather = g1 * uses;
          dp_comm += gather;
          window += ovl ? compute : 0.0;
        }
      c[SIM_EST_DP] = dp_comm;
      double bucket = MIN (dp_comm, coll_s (2.0, plan->dp_bucket_mb * 1048576.0, bw, alpha, 2.0 * (n - 1)));
      /* Interleaved, reducing after the last micro-batch: each model chunk's gradients reduce once
       * its last backward is done, behind the later chunks' backwards of the cooldown, and each
       * chunk's parameters gather before its first forward use, behind the earlier chunks' forwards
       * (param_ag OVERLAP): of the step's reduce and gather, the first chunk's share, 1/vpp, has
       * nothing to hide behind (its reduce follows the step's last backward, its gather precedes the
       * first forward). */
      if (ovl && plan->vpp > 1 && fw.reduce == MODEL_DP_REDUCE_LAST_MB && !fw.gathers)
        p[SIM_EST_DP] = MAX (bucket, red / plan->vpp + (fw.param_ag == MODEL_DP_PARAM_AG_OVERLAP ? ag / plan->vpp : ag));
      else
        p[SIM_EST_DP] = ovl ? MAX (bucket, dp_comm - window) : dp_comm;
      overlapped_dp = ovl ? MIN (window, dp_comm) : 0.0;
    }
  double amax = amax_s (plan, hw, m, lr);
  p[SIM_EST_DP] += amax;
  c[SIM_EST_DP] += amax;
  /* Compute that runs beside communication is slowed (the simulator's overlap_slowdown). */
  p[SIM_EST_SLOWDOWN] = hw->gpu.overlap_slowdown * (m * lr * ly->layer_overlapped_s + overlapped_dp);
  /* The optimizer step the simulator runs (grad-norm, Adam, gradient zeroing, recipe casts) on the
   * rank with the most parameters, each op priced by the GPU model. */
  g_autoptr (GArray) opt = model_op_array_new ();
  model_layer_optimizer_ops (shape, plan, rp_rank, opt);
  /* ... and the fixed per-step host time after it (step_overhead_ms, the simulator's step_end). */
  p[SIM_EST_OPTIMIZER] = hw->gpu.step_overhead_ns * 1e-9;
  for (guint i = 0; i < opt->len; i++)
    p[SIM_EST_OPTIMIZER] += kernel_s (plan, hw, &g_array_index (opt, ModelOp, i));

  double step = 0.0;
  for (int i = 0; i < SIM_EST_COUNT; i++)
    step += p[i];
  double vf = 1.0 + hw->virtualization_overhead;
  for (int i = 0; i < SIM_EST_COUNT; i++)
    out->part_s[i] = p[i] * vf, out->comm_s[i] = c[i];
  out->step_s = step * vf;
  double model_flops = model_flops_closed_form (shape, model_shape_padded_vocab (shape, plan->tp), tokens);
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
