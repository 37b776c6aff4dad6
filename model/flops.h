/* FLOPs of a training step, summed from the op lists, and the closed forms they are checked against.
 *
 * Convention (trainsim's model FLOPs, used for MFU): the matmul FLOPs of the forward and backward
 * passes, GEMMs and attention cores only (norms, activations, softmax, optimizer are not counted),
 * without recomputation, 2 FLOPs per multiply-add, causal attention counted exactly (s(s+1)/2
 * query-key pairs per sequence and head). Per token this is
 *     6*N + 6*l*a*d*(s+1)
 * where N = matmul weights a token multiplies with (attention and MLP weights of the active experts,
 * router, LM head over the padded vocab; no embedding lookup, norms or biases), l layers, a query
 * heads of dimension d: half of the non-causal 12*l*h*s term of PaLM (Chowdhery et al. 2022, App. B)
 * plus the diagonal. Hardware FLOPs add the recomputed forward work. */
#pragma once
#include "model/plan.h"
#include "model/shape.h"

/* Matmul FLOPs one rank of pipeline stage pp_rank runs per step (all its chunks, all micro-batches),
 * with or without the recomputed forward work. */
double model_flops_rank_per_step (const ModelShape *shape, const ModelPlan *plan, int pp_rank,
                                  gboolean with_recompute);
/* Model FLOPs per step over all GPUs (the convention above), from the op lists. */
double model_flops_model_per_step (const ModelShape *shape, const ModelPlan *plan);
/* Hardware FLOPs per step over all GPUs: model FLOPs plus recomputation. */
double model_flops_hardware_per_step (const ModelShape *shape, const ModelPlan *plan);

/* Closed form of the convention above: tokens * (6*N + 6*l*a*d*(s+1)), N with `vocab` for the
 * LM head (use the padded vocab to match the op lists). */
double model_flops_closed_form (const ModelShape *shape, gint64 vocab, double tokens);
/* Narayanan et al. 2021 (SC21) eq. 3: 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)), B sequences per step.
 * Counts a full-recompute forward (4 forward passes of the layers), non-causal attention, MHA with
 * a 4h GeLU MLP. */
double model_flops_narayanan_eq3 (double B, double s, double l, double h, double V);
/* Korthikanti et al. 2022 eq. 7 / Megatron-LM's num_floating_point_operations for the same shape:
 * 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)): model FLOPs (3 passes), non-causal attention. */
double model_flops_megatron_eq7 (double B, double s, double l, double h, double V);
/* Model FLOPs utilisation: flops / (step_time_s * gpus * peak_flops_per_s). */
double model_flops_mfu (double flops_per_step, double step_time_s, int gpus, double peak_flops_per_s);
