/* Stragglers: per-GPU compute speed as a distribution, for the step simulator's compute_scale hook
 * (sim/step/runner.h SimRunnerOptions).
 *
 * Every compute op of GPU g takes its modelled duration × s_g × j, where
 *   j ~ lognormal(μ = −σ²/2, σ)  per op: mean 1, so only the variation changes the step, and
 *   s_g = v_g × (slow_factor for a GPU drawn slow, each GPU independently with probability
 *         slow_fraction, else 1), v_g ~ lognormal(−σ_g²/2, σ_g) a persistent per-GPU speed (chip and
 *         clock variation); both drawn fresh for every sampled step (a new allocation).
 * Per-op jitter averages out over the thousands of ops of a step except where a group
 * synchronizes on every op (TP); persistent differences do not average out.
 * A synchronous step waits for the slowest member of every TP/CP/PP/DP group, so the step time grows
 * with the expected maximum over more and more GPUs as the job grows: about σ_step·sqrt(2 ln N) for
 * the jitter (extreme values of N near-normal per-rank totals), and P(at least one slow GPU) =
 * 1 − (1 − f)^N for slow GPUs. Draws come from one gsl_rng (mt19937) seeded by the caller; the
 * simulator calls the hook in event order, so a seed reproduces the step exactly. */
#pragma once
#include <glib.h>
#include "sim/net/topology.h"

typedef struct {
  double op_sigma;        /* lognormal σ of per-op jitter; 0: none */
  double gpu_sigma;       /* lognormal σ of a GPU's persistent speed (drawn per sampled step); 0: none */
  double slow_fraction;   /* probability that a GPU is slow */
  double slow_factor;     /* compute time multiplier of a slow GPU (>= 1) */
  /* Links (after sim_straggler_bind_links): each scale-out link (NIC, leaf, spine) gets capacity ×
   * lognormal(−σ²/2, σ) capped at 1 (a link never runs above its rate), and degraded_links of them,
   * drawn at random, × degraded_factor (e.g. 0.5: a port trained down to half rate). */
  double link_sigma;
  int degraded_links;
  double degraded_factor; /* in (0, 1] */
} SimStragglerParams;

typedef struct SimStraggler SimStraggler;

SimStraggler *sim_straggler_new (const SimStragglerParams *p, int gpus, guint64 seed);
void sim_straggler_free (SimStraggler *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimStraggler, sim_straggler_free)
/* Draws a new set of slow GPUs (for the next sampled step); returns how many are slow. */
int sim_straggler_resample (SimStraggler *s);
/* Draws per-link factors for `topo`'s links (the runner builds the same topology from the same
 * specs, so link ids agree); again on every resample. */
void sim_straggler_bind_links (SimStraggler *s, const SimTopology *topo);
/* The link hook: capacity multiplier of `link` (user is the SimStraggler). */
double sim_straggler_link_scale (gpointer user, int link);
/* Slow GPUs in the current draw. */
int sim_straggler_n_slow (const SimStraggler *s);
/* The hook: duration multiplier for one compute op of `gpu` (user is the SimStraggler). */
double sim_straggler_scale (gpointer user, int gpu);
