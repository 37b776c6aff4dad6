/* Goodput under failures: analytic (Young/Daly) and Monte Carlo. Equations and citations in
 * sim/plan/goodput.h. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <string.h>
#include "sim/plan/goodput.h"
#include "model/memory.h"
#include "model/shape.h"
#include "sim/net/topology.h"

G_DEFINE_QUARK (sim-goodput-error-quark, sim_goodput_error)

/* A segment that needs more than e^MAX_EXPONENT attempts never finishes in practice. */
#define MAX_EXPONENT 40.0

void
sim_goodput_params_init (SimGoodputParams *p)
{
  *p = (SimGoodputParams) { 0 };
  p->distribution = SIM_GOODPUT_EXPONENTIAL;
  p->weibull_shape = 1.0;
}

double
sim_goodput_young_interval (double checkpoint_s, double mtbf_s)
{
  if (mtbf_s <= 0)
    return 0;
  return sqrt (2 * checkpoint_s * mtbf_s);
}

double
sim_goodput_daly_interval (double checkpoint_s, double mtbf_s)
{
  if (mtbf_s <= 0)
    return 0;
  if (checkpoint_s >= 2 * mtbf_s)
    return mtbf_s;
  double x = checkpoint_s / (2 * mtbf_s);
  return sqrt (2 * checkpoint_s * mtbf_s) * (1 + sqrt (x) / 3 + x / 9) - checkpoint_s;
}

double
sim_goodput_segment_s (double length_s, double restart_s, double failures_per_s)
{
  if (failures_per_s <= 0)
    return length_s;
  double m = 1 / failures_per_s;
  return m * exp (restart_s / m) * expm1 (length_s / m);
}

gboolean
sim_goodput_check (const SimGoodputParams *p, GError **error)
{
  const struct { const char *name; double v; } nonneg[] = {
    { "work_s", p->work_s }, { "init_s", p->init_s }, { "failures_per_s", p->failures_per_s },
    { "checkpoint_block_s", p->checkpoint_block_s }, { "checkpoint_write_s", p->checkpoint_write_s },
    { "restart_s", p->restart_s }, { "repair_s", p->repair_s }, { "interval_s", p->interval_s },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (nonneg); i++)
    if (!isfinite (nonneg[i].v) || nonneg[i].v < 0)
      {
        g_set_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID,
                     "goodput: %s = %g is negative or not finite; give a finite value >= 0", nonneg[i].name,
                     nonneg[i].v);
        return FALSE;
      }
  if (!(p->step_s > 0) || !isfinite (p->step_s))
    {
      g_set_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID,
                   "goodput: step time %g s is not positive; give the step time of the run", p->step_s);
      return FALSE;
    }
  if (p->hardware_fraction < 0 || p->hardware_fraction > 1 || p->spare_nodes < 0)
    {
      g_set_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID,
                   "goodput: hardware fraction %g must be in 0..1 and spare nodes %d >= 0", p->hardware_fraction,
                   p->spare_nodes);
      return FALSE;
    }
  if (p->distribution == SIM_GOODPUT_WEIBULL && !(p->weibull_shape > 0))
    {
      g_set_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID,
                   "goodput: Weibull shape %g is not positive; 1 is exponential, < 1 infant mortality",
                   p->weibull_shape);
      return FALSE;
    }
  return TRUE;
}

/* Blocking time of one checkpoint including the wait for the previous asynchronous write. */
static double
block_s (const SimGoodputParams *p, double interval_s)
{
  double write = MAX (p->checkpoint_write_s, p->checkpoint_block_s);
  double stall = write - (p->checkpoint_block_s + interval_s);
  return p->checkpoint_block_s + MAX (0, stall);
}

gint64
sim_goodput_interval_steps (const SimGoodputParams *p)
{
  gint64 total = (gint64) ceil (p->work_s / p->step_s - 1e-9);
  double tau = p->interval_s;
  if (tau <= 0)
    tau = p->failures_per_s > 0 ? sim_goodput_daly_interval (p->checkpoint_block_s, 1 / p->failures_per_s)
                                : p->work_s;
  gint64 steps = (gint64) llround (tau / p->step_s);
  return CLAMP (steps, 1, MAX (total, 1));
}

gboolean
sim_goodput_analytic (const SimGoodputParams *p, SimGoodputAnalytic *out, GError **error)
{
  if (!sim_goodput_check (p, error))
    return FALSE;
  *out = (SimGoodputAnalytic) { 0 };
  double lambda = p->failures_per_s;
  double m = lambda > 0 ? 1 / lambda : 0;
  out->mtbf_s = m;
  out->young_interval_s = sim_goodput_young_interval (p->checkpoint_block_s, m);
  out->daly_interval_s = sim_goodput_daly_interval (p->checkpoint_block_s, m);
  out->interval_steps = sim_goodput_interval_steps (p);
  double tau = out->interval_steps * p->step_s;
  if (tau >= p->work_s)
    tau = p->work_s;
  out->interval_s = tau;
  double n_full = p->work_s > tau ? ceil (p->work_s / tau - 1e-9) - 1 : 0;
  double last = p->work_s - n_full * tau;
  double delta = block_s (p, tau);
  out->checkpoints = n_full;
  out->plain_s = p->init_s + p->work_s;
  if (lambda <= 0)
    {
      out->expected_s = out->plain_s + n_full * delta;
      out->checkpoint_s = n_full * delta;
      out->goodput = out->expected_s > 0 ? out->plain_s / out->expected_s : 1;
      return TRUE;
    }
  if ((tau + delta) / m > MAX_EXPONENT || p->restart_s / m > MAX_EXPONENT)
    {
      g_set_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID,
                   "goodput: a checkpoint interval of %.4g s (+ %.4g s checkpoint, %.4g s restart) against an MTBF "
                   "of %.4g s never completes; shorten the interval or lower the failure rates", tau, delta,
                   p->restart_s, m);
      return FALSE;
    }
  /* Penalty per failure: the restart retried until it runs through, plus what the exact model
   * does not see: a repair wait when there is no spare, and the extra interval lost when a failure
   * hits before an asynchronous write is durable. */
  double c = m * expm1 (p->restart_s / m);
  if (p->spare_nodes == 0)
    c += p->hardware_fraction * p->repair_s;
  double window = MAX (0, p->checkpoint_write_s - p->checkpoint_block_s);
  if (window > 0 && n_full > 0)
    c += tau * MIN (1.0, window / (tau + delta));
  double seg_full = (m + c) * expm1 ((tau + delta) / m);
  double seg_last = (m + c) * expm1 (last / m);
  out->expected_s = p->init_s + n_full * seg_full + seg_last;
  out->expected_failures = (n_full * expm1 ((tau + delta) / m) + expm1 (last / m)) * exp (p->restart_s / m);
  out->checkpoint_s = n_full * delta;
  out->lost_restart_s = out->expected_s - out->plain_s - out->checkpoint_s;
  out->goodput = out->plain_s / out->expected_s;
  return TRUE;
}

/* ---------------------------------------------------------------------------------------------- */
/* Monte Carlo: one whole run per trial. */

typedef struct {
  const SimGoodputParams *p;
  gsl_rng *rng;
  double weibull_scale;
  double *back_at;      /* repair completion times of nodes out of service (capacity: max_out) */
  int n_out, max_out;
  /* per-trial accumulators */
  double checkpoint_s, lost_s, restart_s, wait_s;
  gint64 failures;
} Trial;

static double
draw_gap (Trial *t)
{
  const SimGoodputParams *p = t->p;
  if (p->failures_per_s <= 0)
    return INFINITY;
  if (p->distribution == SIM_GOODPUT_WEIBULL)
    return gsl_ran_weibull (t->rng, t->weibull_scale, p->weibull_shape);
  return gsl_ran_exponential (t->rng, 1 / p->failures_per_s);
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* A failure at `now`: a hardware failure takes a node out until now + repair; the job waits while
 * more nodes are out than there are spares. Returns when the restart can begin. */
static double
failure_wait (Trial *t, double now)
{
  const SimGoodputParams *p = t->p;
  t->failures++;
  gboolean hardware = gsl_rng_uniform (t->rng) < p->hardware_fraction;
  if (!hardware || p->repair_s <= 0)
    return now;
  int k = 0;
  for (int i = 0; i < t->n_out; i++)
    if (t->back_at[i] > now)
      t->back_at[k++] = t->back_at[i];
  t->n_out = k;
  if (t->n_out == t->max_out)
    {
      t->max_out *= 2;
      t->back_at = g_renew (double, t->back_at, t->max_out);
    }
  t->back_at[t->n_out++] = now + p->repair_s;
  if (t->n_out <= p->spare_nodes)
    return now;
  qsort (t->back_at, t->n_out, sizeof (double), compare_double);
  double ready = t->back_at[t->n_out - p->spare_nodes - 1];
  t->wait_s += ready - now;
  return ready;
}

/* Failure at `*wall`: wait for a node if needed, then restart until one runs through. Draws the
 * next failure time into *next_fail. */
static void
recover (Trial *t, double *wall, double *next_fail)
{
  for (;;)
    {
      double start = failure_wait (t, *wall);
      *next_fail = start + draw_gap (t);
      if (*next_fail >= start + t->p->restart_s)
        {
          t->restart_s += t->p->restart_s;
          *wall = start + t->p->restart_s;
          return;
        }
      t->restart_s += *next_fail - start;
      *wall = *next_fail;
    }
}

static double
run_trial (Trial *t, double tau, gint64 *events)
{
  const SimGoodputParams *p = t->p;
  gboolean async = p->checkpoint_write_s > p->checkpoint_block_s;
  double wall = p->init_s;
  double pos = 0, durable = 0;
  gboolean pending = FALSE;
  double pending_pos = 0, pending_done = 0;
  double next_fail = wall + draw_gap (t);
  t->checkpoint_s = t->lost_s = t->restart_s = t->wait_s = 0;
  t->failures = 0;
  t->n_out = 0;
  while (pos < p->work_s)
    {
      (*events)++;
      /* Work up to the next checkpoint position (or the end). */
      double target = MIN (p->work_s, (floor (pos / tau + 1e-9) + 1) * tau);
      if (p->work_s - target < 1e-9 * p->work_s)
        target = p->work_s;
      double need = target - pos;
      double phase_end = wall + need;
      gboolean failed = FALSE;
      if (next_fail < phase_end)
        {
          pos += next_fail - wall;
          wall = next_fail;
          failed = TRUE;
        }
      else
        {
          wall = phase_end;
          pos = target;
          if (pos >= p->work_s)
            break;
          /* Checkpoint: wait for the previous write, then block. */
          double ckpt_start = wall;
          double until = wall + p->checkpoint_block_s;
          if (pending && pending_done > wall)
            until = pending_done + p->checkpoint_block_s;
          if (next_fail < until)
            {
              t->checkpoint_s += next_fail - wall;
              wall = next_fail;
              failed = TRUE;
            }
          else
            {
              t->checkpoint_s += until - wall;
              if (pending)
                durable = pending_pos;
              if (async)
                {
                  pending = TRUE;
                  pending_pos = pos;
                  pending_done = MAX (ckpt_start, until - p->checkpoint_block_s) + p->checkpoint_write_s;
                }
              else
                durable = pos;
              wall = until;
            }
        }
      if (failed)
        {
          if (pending && pending_done <= wall)
            durable = pending_pos;
          pending = FALSE;
          t->lost_s += pos - durable;
          pos = durable;
          recover (t, &wall, &next_fail);
        }
    }
  return wall;
}

gboolean
sim_goodput_monte_carlo (const SimGoodputParams *p, guint64 seed, int trials, SimGoodputMonteCarlo *out,
                         GError **error)
{
  SimGoodputAnalytic a;
  if (trials < 2)
    {
      g_set_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID,
                   "goodput: %d Monte Carlo trials; use at least 2 for a confidence interval", trials);
      return FALSE;
    }
  /* Also rejects runs that would never finish. */
  if (!sim_goodput_analytic (p, &a, error))
    return FALSE;
  *out = (SimGoodputMonteCarlo) { 0 };
  out->seed = seed;
  out->trials = trials;
  Trial t = { 0 };
  t.p = p;
  t.rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (t.rng, (unsigned long) seed);
  t.weibull_scale = p->failures_per_s > 0 ? 1 / p->failures_per_s / gsl_sf_gamma (1 + 1 / p->weibull_shape) : 0;
  t.max_out = 16;
  t.back_at = g_new (double, t.max_out);
  double *wall = g_new (double, trials);
  gint64 events = 0;
  double sums[5] = { 0 };
  for (int i = 0; i < trials; i++)
    {
      wall[i] = run_trial (&t, a.interval_s, &events);
      sums[0] += (double) t.failures;
      sums[1] += t.checkpoint_s;
      sums[2] += t.lost_s;
      sums[3] += t.restart_s;
      sums[4] += t.wait_s;
    }
  out->mean_s = gsl_stats_mean (wall, 1, trials);
  out->sd_s = gsl_stats_sd_m (wall, 1, trials, out->mean_s);
  out->ci95_s = 1.96 * out->sd_s / sqrt (trials);
  gsl_sort (wall, 1, trials);
  out->p05_s = gsl_stats_quantile_from_sorted_data (wall, 1, trials, 0.05);
  out->p50_s = gsl_stats_quantile_from_sorted_data (wall, 1, trials, 0.50);
  out->p95_s = gsl_stats_quantile_from_sorted_data (wall, 1, trials, 0.95);
  if (out->mean_s > 0)
    {
      out->goodput = a.plain_s / out->mean_s;
      out->goodput_lo = a.plain_s / (out->mean_s + out->ci95_s);
      out->goodput_hi = a.plain_s / MAX (out->mean_s - out->ci95_s, a.plain_s);
    }
  else
    out->goodput = out->goodput_lo = out->goodput_hi = 1;
  out->failures = sums[0] / trials;
  out->checkpoint_s = sums[1] / trials;
  out->lost_s = sums[2] / trials;
  out->restart_s = sums[3] / trials;
  out->wait_s = sums[4] / trials;
  g_free (wall);
  g_free (t.back_at);
  gsl_rng_free (t.rng);
  return TRUE;
}

/* ---------------------------------------------------------------------------------------------- */
/* From a scenario. */

const char *
sim_failure_source_name (SimFailureSource s)
{
  static const char *const names[] = { "gpu", "node", "nic", "switch", "link", "software" };
  g_return_val_if_fail (s < SIM_FAILURE_COUNT, "?");
  return names[s];
}

static double
number (const SimScenario *sc, const char *key)
{
  double v = 0;
  if (!sim_scenario_get_number (sc, "reliability", key, &v))
    return 0;
  return v;
}

static gboolean
flag (const SimScenario *sc, const char *group, const char *key, const char *yes)
{
  const SimScenarioValue *v = sim_scenario_lookup (sc, group, key);
  if (!v || !v->value)
    return FALSE;
  g_autofree char *s = g_strstrip (g_strdup (v->value));
  return strcmp (s, yes) == 0 || (strcmp (yes, "true") == 0 && strcmp (s, "1") == 0);
}

static const char *const rate_keys[SIM_FAILURE_COUNT] = {
  "gpu_failures_per_day", "node_failures_per_day", "nic_failures_per_day", "switch_failures_per_day",
  "link_failures_per_day", "software_failures_per_day",
};

/* min(n × per_unit, aggregate) with 0 meaning no limit; 0 if both are unlimited. */
static double
rate_limit (double n, double per_unit, double aggregate)
{
  double r = per_unit > 0 ? n * per_unit : 0;
  if (aggregate > 0 && (r == 0 || aggregate < r))
    r = aggregate;
  return r;
}

gboolean
sim_goodput_from_scenario (const SimScenario *sc, double step_s, double work_s, SimGoodputInputs *out,
                           GError **error)
{
  *out = (SimGoodputInputs) { 0 };
  const SimClusterSpec *cl = sim_scenario_cluster (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  out->count[SIM_FAILURE_GPU] = cl->gpus;
  out->count[SIM_FAILURE_NODE] = run->nodes;
  out->count[SIM_FAILURE_NIC] = (double) cl->gpus * cl->nics_per_gpu;
  out->count[SIM_FAILURE_SOFTWARE] = run->nodes;
  for (int i = 0; i < SIM_FAILURE_COUNT; i++)
    out->rate_per_s[i] = number (sc, rate_keys[i]);
  /* Switches and cables exist only in the modelled fabric; build it when their rates matter. */
  if (out->rate_per_s[SIM_FAILURE_SWITCH] > 0 || out->rate_per_s[SIM_FAILURE_LINK] > 0)
    {
      g_autoptr (SimTopology) topo = sim_topology_new (cl, sim_scenario_fabric (sc), error);
      if (!topo)
        return FALSE;
      SimTopologySummary sum;
      sim_topology_summarize (topo, &sum);
      out->count[SIM_FAILURE_SWITCH] = sum.switches[0] + sum.switches[1] + sum.switches[2];
      /* Directed links come in pairs over one cable. */
      out->count[SIM_FAILURE_LINK] = sum.links_by_kind[SIM_LINK_NIC_UP] + sum.links_by_kind[SIM_LINK_LEAF_UP]
                                     + sum.links_by_kind[SIM_LINK_SPINE_UP];
    }
  double lambda = 0, hardware = 0;
  for (int i = 0; i < SIM_FAILURE_COUNT; i++)
    {
      double l = out->count[i] * out->rate_per_s[i];
      lambda += l;
      if (i == SIM_FAILURE_GPU || i == SIM_FAILURE_NODE || i == SIM_FAILURE_NIC)
        hardware += l;
    }
  out->failures_per_day = lambda * 86400;

  /* Checkpoint size. */
  double given = 0;
  if (sim_scenario_get_number (sc, "reliability", "checkpoint_GB", &given) && given > 0)
    out->checkpoint_bytes = given;
  else
    {
      ModelParams mp;
      model_shape_params (sim_scenario_shape (sc), sim_scenario_shape (sc)->vocab, &mp);
      double w = 0, g = 0, o = 0;
      model_memory_states (sim_scenario_plan (sc), (double) mp.total, 1, &w, &g, &o);
      out->checkpoint_bytes = w + o;
      out->checkpoint_derived = TRUE;
    }
  double gpus = cl->gpus;
  double wpg = number (sc, "write_GBps_per_gpu"), wagg = number (sc, "write_GBps_aggregate");
  double rpg = number (sc, "read_GBps_per_gpu"), ragg = number (sc, "read_GBps_aggregate");
  if (rpg <= 0)
    rpg = wpg;
  if (ragg <= 0)
    ragg = wagg;
  out->write_bytes_per_s = rate_limit (gpus, wpg, wagg);
  out->read_bytes_per_s = rate_limit (gpus, rpg, ragg);
  if (lambda > 0 && out->write_bytes_per_s <= 0)
    {
      g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_MISSING,
                   "[reliability] write_GBps_per_gpu: failures are given but no checkpoint write rate; set "
                   "write_GBps_per_gpu and/or write_GBps_aggregate (storage bandwidth)");
      return FALSE;
    }
  out->write_s = out->write_bytes_per_s > 0 ? out->checkpoint_bytes / out->write_bytes_per_s : 0;
  out->read_s = out->read_bytes_per_s > 0 ? out->checkpoint_bytes / out->read_bytes_per_s : 0;
  out->async = flag (sc, "reliability", "async_checkpoint", "true");
  double snap = number (sc, "snapshot_GBps_per_gpu");
  if (out->async && snap <= 0)
    {
      g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_MISSING,
                   "[reliability] snapshot_GBps_per_gpu: async_checkpoint needs the device-to-host copy rate; set "
                   "snapshot_GBps_per_gpu (e.g. the PCIe rate) or async_checkpoint = false");
      return FALSE;
    }
  out->snapshot_s = out->async ? out->checkpoint_bytes / gpus / snap : 0;

  SimGoodputParams *p = &out->params;
  sim_goodput_params_init (p);
  p->work_s = work_s;
  p->init_s = run->init_s;
  p->step_s = step_s;
  p->failures_per_s = lambda;
  p->hardware_fraction = lambda > 0 ? hardware / lambda : 0;
  p->distribution = flag (sc, "reliability", "distribution", "weibull") ? SIM_GOODPUT_WEIBULL
                                                                         : SIM_GOODPUT_EXPONENTIAL;
  p->weibull_shape = number (sc, "weibull_shape");
  if (out->async)
    {
      p->checkpoint_block_s = out->snapshot_s;
      p->checkpoint_write_s = out->snapshot_s + out->write_s;
    }
  else
    p->checkpoint_block_s = p->checkpoint_write_s = out->write_s;
  p->restart_s = number (sc, "reinit_s") + out->read_s + number (sc, "warmup_s");
  p->repair_s = number (sc, "repair_h");
  p->spare_nodes = (int) number (sc, "spare_nodes");
  p->interval_s = number (sc, "checkpoint_interval_min");
  return sim_goodput_check (p, error);
}
