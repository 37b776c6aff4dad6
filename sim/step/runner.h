/* The training-step simulation: a plan's per-rank task graphs executed on the simulated cluster.
 *
 * Each pipeline stage gets one program (the same for every rank of that stage): per schedule slot
 * (model/schedule.h) the layer ops of its model chunk, with TP/CP/EP communication inside layers,
 * PP sends between virtual stages, DP gradient reduce-scatter buckets launched as the last
 * backward of a chunk produces them, the parameter all-gather of the distributed optimizer, and the
 * optimizer step. Ranks run their program on their GPU's streams (sim/gpu/gpu.h); collectives run as
 * flows on the fabric (sim/net/collective.h). The bubble and the exposed communication are measured on
 * the execution, never computed from a formula.
 *
 * Symmetry: by default one rank per pipeline stage is simulated (the stage's equivalence class when
 * every group of a dimension has the same shape on the topology); when it launches a collective,
 * the same collective of every sibling group of its stage is launched with it, so the fabric
 * carries every flow, and it completes when all of them have. `full` simulates every rank, with
 * collectives starting when all members arrive. A placement whose groups differ in shape runs one
 * rank per TP group instead (the TP positions of a node mirrored, every DP, CP and PP coordinate
 * simulated; result.tp_mirror) where every TP group lies in one node, else every rank
 * (result.symmetric says whether representatives ran). */
#pragma once
#include <glib.h>
#include "model/shape.h"
#include "model/plan.h"
#include "sim/gpu/gpu.h"
#include "sim/net/topology.h"
#include "sim/net/collective.h"
#include "sim/scenario/scenario.h"

typedef enum {
  SIM_BD_COMPUTE,      /* compute kernels of forward/backward (base durations) */
  SIM_BD_TP,           /* exposed communication per dimension: compute stream idle on it */
  SIM_BD_CP,
  SIM_BD_PP,
  SIM_BD_DP,
  SIM_BD_EP,
  SIM_BD_BUBBLE,       /* compute stream idle waiting on other stages (pipeline fill/drain) */
  SIM_BD_OPTIMIZER,
  SIM_BD_SLOWDOWN,     /* compute stretched while communication shares the SMs */
  SIM_BD_COUNT
} SimBreakdown;

const char *sim_breakdown_name (SimBreakdown b);

/* Added by the planning module (--trace): one executed op of a simulated rank. */
typedef struct {
  int rank;                   /* global rank */
  int stage;                  /* pipeline stage */
  int stream;                 /* 0 compute; 1.. communication streams */
  const char *stream_name;    /* "compute", "tp", "cp", "pp-send-fwd", "pp-send-bwd", "dp", "ep",
                               * "dp-gather" (ZeRO-3 parameter all-gathers) */
  const char *category;       /* sim_breakdown_name() of what the op is accounted to */
  gint64 start_ns, end_ns;
  double bytes;               /* communication bytes (0 for compute) */
  const char *name;           /* the op: model/layer.h names ("fc1", "qkv_ag", ...) or a label
                               * ("dp_grad_rs", "pp_send_act", ...); NULL if unnamed */
} SimRunnerTraceEvent;

typedef void (*SimRunnerTraceFn) (gpointer user, const SimRunnerTraceEvent *event);

typedef struct {
  gboolean full;              /* simulate every rank */
  gboolean force_symmetric;   /* representatives even if the placement check fails (benchmarks) */
  double memory_overhead_bytes; /* per-GPU framework overhead for the memory check; < 0: model's */
  /* A run known to have run (a published measurement): a predicted peak above the GPU's memory is
   * reported (SimRunnerResult.memory_over) instead of refusing the step. */
  gboolean memory_advisory;
  /* Compute variation (stragglers, sim/step/straggler.h): each compute op of GPU `gpu` takes its
   * duration × compute_scale(user, gpu), drawn per op. Set: every rank is simulated (full). */
  double (*compute_scale) (gpointer user, int gpu);
  gpointer compute_scale_user;
  /* Link variation (degraded links): link `link`'s capacity × link_scale(user, link), once at the
   * start. Set: every rank is simulated (full). */
  double (*link_scale) (gpointer user, int link);
  gpointer link_scale_user;
  SimRunnerTraceFn trace;     /* added by the planning module: called as each op ends; NULL: none */
  gpointer trace_user;
  /* Added by the planning module (--link-stats): called once after the step with the topology, the
   * bytes each link carried (indexed by link id) and the step end; NULL: none. */
  void (*link_stats) (gpointer user, const SimTopology *topo, const double *link_bytes, gint64 step_ns);
  /* Also the step's sensitivities (SimRunnerResult.step_sens): each event carries the derivatives
   * of its time (sim_engine_enable_sens), compute ops add their durations' (sim_gpu_op_ns_sens,
   * stretched as the op is), and a flow's end carries its start's (sim/net/flow.h). */
  gboolean sensitivities;
  /* For tests: an op's readiness from its predecessors' streams (Program.need) however few ranks
   * run, not only past a cache's worth of per-rank dependency counters; the step is the same. */
  gboolean stream_readiness;
} SimRunnerOptions;

/* Defaults: representatives, the model's memory overhead. */
void sim_runner_options_init (SimRunnerOptions *options);

typedef struct {
  gint64 step_ns;             /* the slowest rank's optimizer step end */
  /* With options->sensitivities: ∂step_ns/∂(each constant of sim_gpu_op_ns_sens), the derivative
   * of the event that ended the step (0 otherwise). */
  double step_sens[SIM_GPU_N_SENS];
  double breakdown_s[SIM_BD_COUNT]; /* of the critical rank; sums to the step time */
  double comm_busy_s[SIM_BD_COUNT]; /* time a communication stream of the critical rank was busy,
                                     * per dimension (overlapped or not) */
  int critical_rank;          /* global rank that finished last */
  int critical_stage;
  gboolean symmetric;         /* representatives were used */
  gboolean tp_mirror;         /* one rank per TP group was simulated, the other TP positions mirrored */
  int ranks_simulated;
  guint64 events;
  guint64 ops_executed;
  /* Per micro-batch forward compute time of one stage (all its chunks): for eval estimates. */
  double stage_forward_s;
  /* Throughput figures. */
  double tokens_per_step;
  double tokens_per_s;
  double model_flops_per_step;  /* model/flops.h convention: 6·N + exact causal attention */
  double hardware_flops_per_step; /* all executed GEMM/attention FLOPs incl. recompute */
  double model_tflops_per_gpu;
  double mfu;                 /* model FLOP/s per GPU / peak at the matmul dtype */
  double hfu;
  /* Memory of the fullest stage (model/memory.h). */
  double memory_bytes;
  int memory_stage;
  gboolean memory_over;       /* memory_advisory and the predicted peak exceeds the GPU's memory */
} SimRunnerResult;

/* Simulates one training step. Errors: invalid plan/schedule, a plan that does not fit in the GPU's
 * memory (MODEL_ERROR_OUT_OF_MEMORY), or a collective the topology cannot carry. */
gboolean sim_runner_run (const ModelShape *shape, const ModelPlan *plan, const SimGpuSpec *gpu,
                         const SimClusterSpec *cluster, const SimFabricSpec *fabric,
                         const SimCollectiveProfile *coll, const SimRunnerOptions *options,
                         SimRunnerResult *out, GError **error);

/* ---- A scenario's prediction ---------------------------------------------------------------------
 * Step (× (1 + virtualization_overhead) for VMs), time to train, scaling efficiency.
 *   steps        [training] steps, or ceil(tokens / tokens per step)
 *   evaluations  floor(steps / ceil(eval_interval_seqs / global_batch)) − eval_skip (≥ 0)
 *   one eval     forward only over eval_seqs sequences in global batches, as Megatron and NeMo
 *                validate (the last batch padded): ceil(eval_seqs / global_batch) forward-only
 *                pipeline passes of m = global_batch / (dp · micro_batch) micro-batches each,
 *                every pass (m + (pp − 1)/vpp) · t_f, t_f the slowest stage's forward compute of
 *                one micro-batch (all its chunks) from the simulated step
 *   time         init_s + steps · step + evaluations · one eval
 *   scaling      base scale (options.base_gpus, else [scenario] base_gpus; DP resized to fit):
 *                weak keeps the global batch per DP replica: efficiency = step(base) / step;
 *                strong keeps the global batch: step(base) · base / (step · gpus). */
typedef struct {
  SimRunnerResult step;
  double step_s;              /* simulated step × (1 + virtualization_overhead) */
  double steps;
  double evals;
  double eval_s;              /* one evaluation */
  double time_to_train_s;     /* 0 without steps or tokens */
  int base_gpus;              /* 0: no scaling figure */
  gboolean weak;
  double base_step_s;
  double scaling_efficiency;
  /* The band of the calibration: step_s · exp(±z·σ) at band_level, σ² = band_log_sigma² +
   * param_sigma² (sim_runner_band); all 0 for an uncalibrated profile. */
  double step_lo_s, step_hi_s, band_level;
  double param_sigma;         /* relative σ of step_s from the fitted constants' covariance; 0: none */
} SimRunnerPrediction;

typedef struct {
  SimRunnerOptions run;
  int base_gpus;              /* 0: the scenario's [scenario] base_gpus */
  gboolean weak;              /* with base_gpus: weak (global batch grows with DP) or strong */
  double band_level;          /* central probability of the band; 0: 0.9 */
} SimPredictOptions;

/* The calibration's band around step_s at `level` (0: 90%): [step·e^(−zσ), step·e^(zσ)] with
 * σ² = s_b² + s_p², s_b the profile's [calibration] band_log_sigma (the leave-one-source-out scatter
 * of ln(measured/predicted) on the deck) and s_p = `param_sigma` (sim_runner_param_sigma; 0 where
 * the step's sensitivities were not simulated). FALSE (and 0s) when the profile is not calibrated. */
gboolean sim_runner_band (const SimScenarioRun *run, double level, double step_s, double param_sigma, double *lo,
                          double *hi);

/* The relative σ of a simulated step from the profile's uncertain constants: the fitted ones'
 * covariance ([calibration] covariance, C in the fit's coordinates φ), √(gᵀ C g) / step with
 * g_k = ∂step/∂φ_k from the step's sensitivities (SimRunnerOptions.sensitivities; 1 ms per ms for
 * step_overhead_ms), and an assumed peak (gpu->peak_log_sigma σ_P): the compute-bound time of the
 * GEMM and attention kernels, Σ_d φ_d ∂step/∂φ_d (it scales as φ_d = 1/gemm_insitu_d, and as
 * 1/peak), times σ_P, the two in quadrature. 0 without sensitivities or either term. */
double sim_runner_param_sigma (const SimScenarioRun *run, const SimGpuSpec *gpu, const SimRunnerResult *r);
/* Whether sim_runner_param_sigma has a term to give (fitted constants' covariance or an assumed
 * peak), so the step's simulation should carry its sensitivities. */
gboolean sim_runner_param_sigma_needed (const SimScenarioRun *run, const SimGpuSpec *gpu);

gboolean sim_runner_predict (const SimScenario *sc, const SimPredictOptions *options,
                             SimRunnerPrediction *out, GError **error);
