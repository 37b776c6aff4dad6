/* Step FLOPs summed from the op lists (model/layer.c) and the closed forms of model/flops.h.
 *
 * Per rank and step: microbatches * sum over its chunks of (forward + backward [+ recompute]) matmul
 * FLOPs (DualPipe: microbatches / 2, each of its two chunks a copy of the pipeline). Every rank of a
 * pipeline stage runs the same work (TP/CP/EP shards are even, routing is uniform; an uneven
 * routing, moe_imbalance, is counted at its mean), so the step total is sum over stages of rank
 * FLOPs * tp*cp*dp. */
#include "model/flops.h"
#include "model/layer.h"

double
model_flops_rank_per_step (const ModelShape *shape, const ModelPlan *plan, int pp_rank,
                           gboolean with_recompute)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, 0.0);
  g_autoptr (GArray) ops = model_op_array_new ();
  /* The step's FLOPs are the even share of every rank: moe_imbalance makes the busiest rank wait
   * longer, not the step do more work. */
  ModelShape even = *shape;
  even.moe_imbalance = 1.0;
  model_layer_rank_ops (&even, plan, pp_rank, ops);
  guint mask = (1u << MODEL_PHASE_FWD) | (1u << MODEL_PHASE_BWD);
  if (with_recompute)
    mask |= 1u << MODEL_PHASE_RECOMPUTE;
  /* Each chunk sees every micro-batch, but DualPipe's two chunks (the pipeline's two copies) half each. */
  double mbs = model_plan_microbatches (plan) / (plan->schedule == MODEL_SCHED_DUALPIPE ? 2.0 : 1.0);
  return model_op_array_matmul_flops (ops, mask) * mbs;
}

static double
step_total (const ModelShape *shape, const ModelPlan *plan, gboolean with_recompute)
{
  double sum = 0.0;
  for (int r = 0; r < plan->pp; r++)
    sum += model_flops_rank_per_step (shape, plan, r, with_recompute);
  return sum * plan->tp * plan->cp * plan->dp;
}

double
model_flops_model_per_step (const ModelShape *shape, const ModelPlan *plan)
{
  return step_total (shape, plan, FALSE);
}

double
model_flops_hardware_per_step (const ModelShape *shape, const ModelPlan *plan)
{
  return step_total (shape, plan, TRUE);
}

double
model_flops_closed_form (const ModelShape *shape, gint64 vocab, double tokens)
{
  g_return_val_if_fail (shape != NULL, 0.0);
  double n = (double) vocab * shape->hidden;
  for (int l = 0; l < shape->layers; l++)
    n += (double) model_shape_layer_matmul_params (shape, l);
  /* Attention: 12·a·d FLOPs (forward + backward) per query-key pair, per query: (s + 1)/2 keys
   * causal, s for an encoder, W(W+1)/2 + (s - W)·W over s queries in a window W < s; with document
   * masking those within each document (model_shape_attention_pairs). */
  double s = shape->seq_len, attn = 0;
  for (int l = 0; l < shape->layers; l++)
    {
      double keys = model_shape_attention_pairs (shape, l) / s;
      attn += 12.0 * (double) shape->heads * shape->head_dim * keys;
    }
  return tokens * (6.0 * n + attn);
}

double
model_flops_narayanan_eq3 (double B, double s, double l, double h, double V)
{
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double
model_flops_megatron_eq7 (double B, double s, double l, double h, double V)
{
  return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
}

double
model_flops_mfu (double flops_per_step, double step_time_s, int gpus, double peak_flops_per_s)
{
  g_return_val_if_fail (step_time_s > 0 && gpus > 0 && peak_flops_per_s > 0, 0.0);
  return flops_per_step / (step_time_s * gpus * peak_flops_per_s);
}
