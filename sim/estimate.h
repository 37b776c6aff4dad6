/* Closed-form step-time estimate of a plan: the fast first stage of `trainsim search`, and the
 * prediction `trainsim sweep` falls back to when the step simulator is not built in.
 *
 * It is an ESTIMATE, not the simulation: no event timeline, no contention between flows; every
 * term is a textbook formula (see sim/estimate.c for each equation and its source). Its job is to
 * rank plans well enough that the true best survives pruning (tests/test-search.c checks this
 * against exhaustive evaluation on small cases), and to be fast (bench/search). */
#pragma once
#include <glib.h>
#include "model/plan.h"
#include "model/shape.h"
#include "sim/gpu.h"
#include "sim/topology.h"
#include "sim/scenario.h"

/* The same categories and order as the runner's breakdown (sim/runner.h SimBreakdown). */
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
  double gemm_eff;                /* large-GEMM efficiency (gpu gemm_eff_max) */
  double gemm_half_flops;         /* GEMM size at half that efficiency (0: size-independent) */
  double hbm_bytes;
  double hbm_bw_bytes_per_s;      /* × mem_eff */
  double nvlink_bw_bytes_per_s;   /* per GPU per direction × nvlink_eff */
  double nvlink_latency_s;
  double nic_bw_bytes_per_s;      /* per GPU (all its NICs) per direction × nic_eff, / leaf oversubscription */
  double nic_latency_s;           /* NIC latency + 2 switch hops */
  int domain_gpus;                /* GPUs of one NVLink domain the job uses */
  double memory_overhead_bytes;   /* < 0: model/memory.h's default */
  double virtualization_overhead;
} SimEstimateHw;

void sim_estimate_hw_from_scenario (const SimScenario *sc, SimEstimateHw *out);

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

/* GEMM efficiency of the plan: gemm_eff · G / (G + G_half), G the FLOPs of the MLP's first GEMM of
 * one micro-batch on one rank, 2·(b·s/cp)·h·ffn/tp (the profile's saturation curve, sim/gpu.h). */
double sim_estimate_gemm_eff (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw);

/* Estimates one step. FALSE (with the reason) when the plan is invalid for the shape, the GPU
 * has no peak at the matmul dtype, or the plan does not fit in memory (then *out still holds the
 * memory figure and fits = FALSE). `check_memory` FALSE skips the memory check. */
gboolean sim_estimate_step (const ModelShape *shape, const ModelPlan *plan, const SimEstimateHw *hw,
                            gboolean check_memory, SimEstimate *out, GError **error);
