/* Goodput: the expected time to train a run that fails, checkpoints and restarts, and the fraction
 * of it that is useful work (goodput = time to train without failures / expected time with them).
 *
 * The run is a chain of segments: `interval` seconds of training work, then a checkpoint that
 * blocks training for `block` seconds; the last segment ends the run without a checkpoint. The job
 * is interrupted by failures at rate λ (the sum over components of count × rate, see
 * sim_goodput_from_scenario); an interruption loses the work since the last durable checkpoint and
 * costs a restart R (re-init + reload + warm-up) that a failure may interrupt again, plus, when
 * no spare node is free, the wait for a repaired one.
 *
 * Analytic model (exponential failures, M = 1/λ). A segment of length L that must run without a
 * failure, with a restart of length R after each failure that is itself retried until it runs
 * through, takes in expectation
 *      E[L] = M · e^{R/M} · (e^{L/M} − 1)
 * (first-order renewal argument: expected attempts e^{L/M}, each failed attempt costs the time to
 * the failure plus the expected restart (e^{R/M} − 1)·M). Summed over segments this is Daly's
 * total wall-time expression T_w = M e^{R/M} (e^{(τ+δ)/M} − 1) T_s/τ (J. T. Daly, "A higher order
 * estimate of the optimum checkpoint interval for restart dumps", Future Generation Computer Systems
 * 22 (2006) 303–312), here without the checkpoint after the last segment. It is exact for
 * Poisson failures and synchronous checkpoints with spares always free; the Monte Carlo below
 * simulates the same process and is the reference for everything else (Weibull inter-arrival
 * times, asynchronous checkpoints, spare exhaustion). A repair wait D that the analytic model
 * cannot see exactly is added as hardware_fraction · D per failure when no spare nodes exist.
 *
 * Optimal interval (work between checkpoints, δ = blocking checkpoint cost, M = MTBF):
 *   Young (1974, CACM 17(9) 530–531):  τ = sqrt(2 δ M)
 *   Daly (2006):                       τ = sqrt(2 δ M) · [1 + (1/3) sqrt(δ/(2M)) + (1/9) (δ/(2M))] − δ
 *                                      for δ < 2M, else τ = M.
 *
 * Asynchronous checkpoints: training blocks only for the device-to-host snapshot; the write to
 * storage finishes `write` seconds after the checkpoint began, and until then the previous
 * checkpoint is the one a failure rolls back to. A checkpoint that begins while the previous
 * write is still in flight waits for it (the snapshot buffer holds one checkpoint). */
#pragma once
#include <glib.h>

typedef enum {
  SIM_GOODPUT_EXPONENTIAL,  /* Poisson failures: memoryless, the analytic model is exact */
  SIM_GOODPUT_WEIBULL,      /* job-level inter-failure times Weibull(shape k), mean 1/λ, renewed
                             * at every failure */
} SimGoodputDistribution;

typedef struct {
  double work_s;              /* failure-exposed work: steps × step time (+ evaluations) */
  double init_s;              /* once before the first step; not exposed to failures */
  double step_s;              /* checkpoints fall on step boundaries: interval in whole steps */
  double failures_per_s;      /* λ: job interruptions per second of running; 0: none */
  double hardware_fraction;   /* share of interruptions that take a node out of service */
  SimGoodputDistribution distribution;
  double weibull_shape;       /* k (1: exponential) */
  double checkpoint_block_s;  /* training paused per checkpoint */
  double checkpoint_write_s;  /* from checkpoint start until durable (>= block; = block if sync) */
  double restart_s;           /* re-init + reload + warm-up, per interruption */
  double repair_s;            /* a failed node back in service; 0: at once */
  int spare_nodes;            /* hot spares that replace a failed node at once */
  double interval_s;          /* work between checkpoints; 0: Daly's optimum; >= work_s: none */
} SimGoodputParams;

void sim_goodput_params_init (SimGoodputParams *p);

typedef struct {
  double mtbf_s;              /* 1/λ; 0 when λ = 0 */
  double young_interval_s;    /* 0 when λ = 0 (no checkpoints needed) */
  double daly_interval_s;
  double interval_s;          /* used: whole steps, at least one */
  gint64 interval_steps;
  double checkpoints;         /* checkpoints taken (segments − 1) */
  double plain_s;             /* init + work: no failures, no checkpoints */
  double expected_s;          /* expected wall time with failures */
  double goodput;             /* plain_s / expected_s */
  double expected_failures;   /* expected interruptions */
  double checkpoint_s;        /* expected time in checkpoints */
  double lost_restart_s;      /* expected lost work + restarts + repair waits */
} SimGoodputAnalytic;

typedef struct {
  guint64 seed;
  int trials;
  double mean_s, sd_s;        /* wall time over trials */
  double ci95_s;              /* half width of the 95% confidence interval of the mean (1.96·sd/√n) */
  double p05_s, p50_s, p95_s; /* percentiles of the wall time */
  double goodput;             /* plain_s / mean_s */
  double goodput_lo, goodput_hi; /* plain_s / (mean ± ci95) */
  double failures;            /* mean interruptions per run */
  double checkpoint_s;        /* mean time blocked in checkpoints */
  double lost_s;              /* mean work lost (redone) */
  double restart_s;           /* mean time in restarts */
  double wait_s;              /* mean wait for a spare or repair */
} SimGoodputMonteCarlo;

#define SIM_GOODPUT_ERROR (sim_goodput_error_quark ())
GQuark sim_goodput_error_quark (void);
typedef enum { SIM_GOODPUT_ERROR_INVALID } SimGoodputError;

/* Young's and Daly's optimal work between checkpoints; 0 when mtbf_s <= 0 (no failures). */
double sim_goodput_young_interval (double checkpoint_s, double mtbf_s);
double sim_goodput_daly_interval (double checkpoint_s, double mtbf_s);
/* Expected wall time of one segment of L seconds with restart R at failure rate λ (formula above);
 * L when λ = 0. */
double sim_goodput_segment_s (double length_s, double restart_s, double failures_per_s);

gboolean sim_goodput_check (const SimGoodputParams *p, GError **error);
/* The interval a params set resolves to (Daly's optimum for 0), in whole steps. */
gint64 sim_goodput_interval_steps (const SimGoodputParams *p);
gboolean sim_goodput_analytic (const SimGoodputParams *p, SimGoodputAnalytic *out, GError **error);
/* Simulates `trials` whole runs with draws from a gsl_rng (mt19937) seeded with `seed`. */
gboolean sim_goodput_monte_carlo (const SimGoodputParams *p, guint64 seed, int trials, SimGoodputMonteCarlo *out,
                                  GError **error);

/* ---- From a scenario ------------------------------------------------------------------------------
 * λ = Σ count_i × rate_i over GPUs, nodes, NICs (gpus × nics_per_gpu), switches and scale-out cables
 * (both from sim/net/topology.c's fabric) and software (per node). GPU, node and NIC failures take a
 * node out of service (hardware_fraction); link, switch and software ones do not.
 * Checkpoint size: [reliability] checkpoint_GB, or the weights (param_dtype) plus the optimizer
 * state (fp32 master + Adam m, v: model_memory_states with no sharding) of every parameter, once:
 * a sharded checkpoint writes each byte once, split evenly over the GPUs.
 * Write time = size / min(gpus × write_GBps_per_gpu, write_GBps_aggregate) (0 = no limit); read
 * likewise; restart = reinit_s + read + warmup_s. Asynchronous: blocking = size / gpus /
 * snapshot_GBps_per_gpu, durable after blocking + write. */
#include "sim/scenario/scenario.h"

typedef enum {
  SIM_FAILURE_GPU, SIM_FAILURE_NODE, SIM_FAILURE_NIC, SIM_FAILURE_SWITCH, SIM_FAILURE_LINK,
  SIM_FAILURE_SOFTWARE, SIM_FAILURE_COUNT
} SimFailureSource;

const char *sim_failure_source_name (SimFailureSource s);

typedef struct {
  double count[SIM_FAILURE_COUNT];        /* components of each kind in the job */
  double rate_per_s[SIM_FAILURE_COUNT];   /* per component */
  double failures_per_day;                /* the job's λ in 1/day */
  double checkpoint_bytes;
  gboolean checkpoint_derived;            /* from the model, not checkpoint_GB */
  double write_bytes_per_s, read_bytes_per_s; /* effective for the whole job; 0: unlimited */
  double write_s, read_s, snapshot_s;
  gboolean async;
  SimGoodputParams params;
} SimGoodputInputs;

/* Fills the inputs for a run of `work_s` failure-exposed seconds at `step_s` per step. */
gboolean sim_goodput_from_scenario (const SimScenario *sc, double step_s, double work_s, SimGoodputInputs *out,
                                    GError **error);
