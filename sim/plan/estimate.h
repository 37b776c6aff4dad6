/* Closed-form step-time estimate of a plan: the fast first stage of `trainsim search`, and the
 * prediction `trainsim sweep` falls back to when the step simulator is not built in.
 *
 * It is an ESTIMATE, not the simulation: no event timeline, no contention between flows; every
 * term is a textbook formula (see sim/plan/estimate.c for each equation and its source). Its job is to
 * rank plans well enough that the true best survives pruning (tests/test-search.c checks this
 * against exhaustive evaluation on small cases), and to be fast (bench/search). */
#pragma once
#include <glib.h>
#include "model/plan.h"
#include "model/shape.h"
#include "sim/net/collective.h"
#include "sim/gpu/gpu.h"
#include "sim/net/topology.h"
#include "sim/scenario/scenario.h"

/* The same categories and order as the runner's breakdown (sim/step/runner.h SimBreakdown). */
typedef enum {
  SIM_EST_COMPUTE,
  SIM_EST_TP,
  SIM_EST_CP,
  SIM_EST_PP,
  SIM_EST_DP,
  SIM_EST_EP,
  SIM_EST_BUBBLE,
  SIM_EST_OPTIMIZER,
  SIM_EST_SLOWDOWN,
  SIM_EST_COUNT
} SimEstimatePart;

const char *sim_estimate_part_name (SimEstimatePart p);

/* Hardware figures the estimate reads, resolved once per scenario (SI units). */
typedef struct {
  double peak_flops[MODEL_DTYPE_COUNT];
  double gemm_eff;                /* large-GEMM efficiency (gpu gemm_eff_max of the matmul dtype) */
  double hbm_bytes;
  double nvlink_bw_bytes_per_s;   /* per GPU per direction × nvlink_eff */
  double nvlink_latency_s;
  double nic_bw_bytes_per_s;      /* per GPU (all its NICs) per direction × nic_eff, / leaf oversubscription */
  double nic_latency_s;           /* NIC latency + 2 switch hops */
  int domain_gpus;                /* GPUs of one NVLink domain the job uses */
  gboolean mesh;                  /* the domain is a full mesh: k members share k - 1 of its links */
  gboolean sharp;                 /* the fabric's switches reduce: all-reduces across domains may run
                                   * NCCL's CollNet Direct (sim/net/alphabeta.h), at coll.collnet_eff */
  double memory_overhead_bytes;   /* < 0: model/memory.h's default */
  double virtualization_overhead;
  SimGpuSpec gpu;                 /* kernel durations (sim/gpu/gpu.h sim_gpu_kernel_ns) */
  SimCollectiveProfile coll;      /* NCCL latencies, for latency-bound collectives (sim/net/alphabeta.h) */
} SimEstimateHw;

void sim_estimate_hw_from_scenario (const SimScenario *sc, SimEstimateHw *out);

/* One micro-batch through one pipeline rank's work, from the op lists (model/layer.h): what the
 * step estimate multiplies by the micro-batch count. Depends on tp, cp, ep, micro-batch,
 * recompute, sp, tp_comm_overlap and the placement order, not on pp, vpp, dp or ZeRO, so a search
 * computes it once per such combination. */
typedef struct {
  double layer_compute_s;         /* one average transformer layer, forward + backward (+ recompute) */
  double layer_attn_s;            /* of which attention cores */
  double layer_tp_s, layer_tp_exposed_s;
  double layer_cp_s, layer_cp_exposed_s;
  double layer_ep_s;              /* all-to-all, blocking */
  double layer_overlapped_s;      /* compute that starts beside a collective (slowed by overlap_slowdown) */
  double embedding_s, head_s;     /* first / last stage extras, forward + backward */
} SimEstimateLayer;

void sim_estimate_layer (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                         SimEstimateLayer *out);

typedef struct {
  double step_s;
  double part_s[SIM_EST_COUNT];   /* sums to step_s (before the virtualization factor) */
  double comm_s[SIM_EST_COUNT];   /* communication time per dimension, overlapped or not */
  double model_flops;             /* per step, all GPUs */
  double mfu;
  double tokens_per_s;
  double memory_bytes;            /* fullest stage */
  gboolean fits;
} SimEstimate;

/* Estimates one step. FALSE (with the reason) when the plan is invalid for the shape, the GPU
 * has no peak at the matmul dtype, or the plan does not fit in memory (then *out still holds the
 * memory figure and fits = FALSE). `check_memory` FALSE skips the memory check. */
gboolean sim_estimate_step (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                            gboolean check_memory, SimEstimate *out, GError **error);
/* The same with the micro-batch work already computed (sim_estimate_layer of this plan). */
gboolean sim_estimate_step_with (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                                 const SimEstimateLayer *layer, gboolean check_memory, SimEstimate *out,
                                 GError **error);
/* Compute + bubble of the estimate (a lower bound of its step), from the micro-batch work. */
double sim_estimate_lower_bound (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                                 const SimEstimateLayer *layer);
