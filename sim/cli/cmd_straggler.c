/* `trainsim straggler [SCENARIO…] [--set g.k=v]… [--sigma S] [--slow-fraction F] [--slow-factor X]
 *  [--samples N] [--seed S] [--sweep-gpus N,N,…] [--format text|tsv]`
 *
 * Step-time distribution under compute variation (sim/step/straggler.h): at each GPU count, one step
 * simulated with every rank (--full) and no variation, then --samples steps each with a fresh draw
 * of slow GPUs and per-op jitter. Reports p50/p99 of the step time (nearest-rank percentiles over
 * the samples), the straggler efficiency (step without variation / p50 step), and the weak-scaling
 * efficiency against the first GPU count with and without variation. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/cli/cmd.h"
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/step/straggler.h"

typedef struct {
  int gpus;
  double base_s, mean_s, p50_s, p99_s, max_s;
  double slow_gpus;
} Row;

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static double
percentile (const double *v, int n, double q)
{
  int k = (int) ceil (q * n) - 1;
  return v[CLAMP (k, 0, n - 1)];
}

static gboolean
simulate (const SimScenario *sc, SimStraggler *st, double *step_s, GError **error)
{
  SimCollectiveProfile prof;
  if (!sim_scenario_collective_profile (sc, &prof, error))
    return FALSE;
  SimRunnerOptions ro;
  sim_runner_options_init (&ro);
  ro.full = TRUE;
  ro.memory_overhead_bytes = sim_scenario_run (sc)->memory_overhead_bytes;
  if (st)
    {
      ro.compute_scale = sim_straggler_scale;
      ro.compute_scale_user = st;
      ro.link_scale = sim_straggler_link_scale;
      ro.link_scale_user = st;
    }
  SimRunnerResult res;
  if (!sim_runner_run (sim_scenario_shape (sc), sim_scenario_plan (sc), sim_scenario_gpu (sc),
                       sim_scenario_cluster (sc), sim_scenario_fabric (sc), &prof, &ro, &res, error))
    return FALSE;
  *step_s = res.step_ns / 1e9;
  return TRUE;
}

static gboolean
evaluate (char **files, char **sets, int gpus, const SimStragglerParams *sp, int samples, guint64 seed, Row *row,
          GError **error)
{
  GPtrArray *all = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; sets && sets[i]; i++)
    g_ptr_array_add (all, g_strdup (sets[i]));
  if (gpus > 0)
    g_ptr_array_add (all, g_strdup_printf ("cluster.gpus=%d", gpus));
  g_ptr_array_add (all, NULL);
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files, (const char *const *) all->pdata,
                                                  error);
  g_ptr_array_unref (all);
  if (!sc)
    return FALSE;
  row->gpus = sim_scenario_cluster (sc)->gpus;
  if (!simulate (sc, NULL, &row->base_s, error))
    return FALSE;
  /* One stream per scale, seeded from the seed and the scale: rows do not depend on each other. */
  g_autoptr (SimStraggler) st = sim_straggler_new (sp, row->gpus, seed * 1000003u + (guint64) row->gpus);
  if (sp->link_sigma > 0 || sp->degraded_links > 0)
    {
      g_autoptr (SimTopology) topo = sim_topology_new (sim_scenario_cluster (sc), sim_scenario_fabric (sc), error);
      if (!topo)
        return FALSE;
      sim_straggler_bind_links (st, topo);
    }
  double *v = g_new (double, samples);
  double slow = 0;
  gboolean ok = TRUE;
  for (int i = 0; i < samples && ok; i++)
    {
      if (i > 0)
        sim_straggler_resample (st);
      slow += sim_straggler_n_slow (st);
      ok = simulate (sc, st, &v[i], error);
    }
  if (ok)
    {
      double sum = 0;
      for (int i = 0; i < samples; i++)
        sum += v[i];
      row->mean_s = sum / samples;
      qsort (v, samples, sizeof (double), compare_double);
      row->p50_s = percentile (v, samples, 0.50);
      row->p99_s = percentile (v, samples, 0.99);
      row->max_s = v[samples - 1];
      row->slow_gpus = slow / samples;
    }
  g_free (v);
  return ok;
}

static gboolean
parse_gpus (const char *text, GArray *out)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      char *end = NULL;
      gint64 v = g_ascii_strtoll (g_strstrip (parts[i]), &end, 10);
      if (!*parts[i] || *end || v < 1 || v > 4194304)
        return FALSE;
      int n = (int) v;
      g_array_append_val (out, n);
    }
  return TRUE;
}

int
sim_cmd_straggler (int argc, char **argv)
{
  g_auto (GStrv) files = NULL, sets = NULL;
  g_autofree char *sweep = NULL, *format = NULL;
  SimStragglerParams sp = { 0.05, 0, 0, 1, 0, 0, 0.5 };
  int samples = 20;
  gint64 seed = 1;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { "sigma", 0, 0, G_OPTION_ARG_DOUBLE, &sp.op_sigma, "Lognormal sigma of per-op compute jitter (default 0.05)",
      "S" },
    { "gpu-sigma", 0, 0, G_OPTION_ARG_DOUBLE, &sp.gpu_sigma, "Lognormal sigma of a GPU's persistent speed "
      "(default 0)", "S" },
    { "slow-fraction", 0, 0, G_OPTION_ARG_DOUBLE, &sp.slow_fraction, "Probability that a GPU is slow (default 0)",
      "F" },
    { "slow-factor", 0, 0, G_OPTION_ARG_DOUBLE, &sp.slow_factor, "Compute time multiplier of a slow GPU "
      "(default 1)", "X" },
    { "link-sigma", 0, 0, G_OPTION_ARG_DOUBLE, &sp.link_sigma, "Lognormal sigma of scale-out link bandwidth "
      "(capped at the line rate; default 0)", "S" },
    { "degraded-links", 0, 0, G_OPTION_ARG_INT, &sp.degraded_links, "Scale-out links drawn degraded (default 0)",
      "N" },
    { "degraded-factor", 0, 0, G_OPTION_ARG_DOUBLE, &sp.degraded_factor, "Bandwidth multiplier of a degraded "
      "link (default 0.5)", "X" },
    { "samples", 0, 0, G_OPTION_ARG_INT, &samples, "Steps simulated per GPU count (default 20)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Seed (default 1)", "SEED" },
    { "sweep-gpus", 0, 0, G_OPTION_ARG_STRING, &sweep, "GPU counts (default: the scenario's)", "N,N,..." },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format, "Output format: text (default) or tsv", "FORMAT" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini...] - step time under stragglers");
  g_option_context_set_summary (ctx,
    "Simulates every rank (--full) with seeded compute variation: per-op and per-GPU lognormal\n"
    "jitter of mean 1 and a fraction of slow GPUs (sim/straggler.h). Prints the step time without\n"
    "variation, p50/p99 over the sampled steps, the straggler efficiency (step without\n"
    "variation / p50) and the weak-scaling efficiency against the first GPU count.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim straggler: %s\n", error->message);
      g_error_free (error);
      return 2;
    }
  gboolean tsv = format && strcmp (format, "tsv") == 0;
  if ((format && !tsv && strcmp (format, "text") != 0) || samples < 1 || sp.op_sigma < 0 || sp.op_sigma > 2
      || sp.gpu_sigma < 0 || sp.gpu_sigma > 2 || sp.link_sigma < 0 || sp.link_sigma > 2 || sp.degraded_links < 0
      || !(sp.degraded_factor > 0 && sp.degraded_factor <= 1)
      || sp.slow_fraction < 0 || sp.slow_fraction > 1 || sp.slow_factor < 1)
    {
      fprintf (stderr, "trainsim straggler: need --format text|tsv, --samples >= 1, 0 <= --sigma <= 2, "
                       "0 <= --slow-fraction <= 1, --slow-factor >= 1, sigmas in 0..2, --degraded-links >= 0, "
                       "0 < --degraded-factor <= 1\n");
      return 2;
    }
  g_autoptr (GArray) gpus = g_array_new (FALSE, FALSE, sizeof (int));
  if (sweep && !parse_gpus (sweep, gpus))
    {
      fprintf (stderr, "trainsim straggler: --sweep-gpus %s: give a comma-separated list of GPU counts\n", sweep);
      return 2;
    }
  if (gpus->len == 0)
    {
      int zero = 0;
      g_array_append_val (gpus, zero);
    }
  printf ("# tool: trainsim straggler\n# version: %s (git %s)\n# command: %s\n# seed: %" G_GINT64_FORMAT "\n"
          "# jitter: lognormal sigma %g per compute op, %g per GPU (mean 1); slow GPUs: fraction %g, factor %g; "
          "%d samples; links: sigma %g, %d degraded to x%g\n",
          PACKAGE_VERSION, TRAINSIM_GIT_REV, argv_text, seed, sp.op_sigma, sp.gpu_sigma, sp.slow_fraction, sp.slow_factor,
          samples, sp.link_sigma, sp.degraded_links, sp.degraded_factor);
  if (tsv)
    printf ("gpus\tbase_step_s\tmean_step_s\tp50_step_s\tp99_step_s\tmax_step_s\tslow_gpus\tstraggler_eff\t"
            "weak_eff_base\tweak_eff_p50\n");
  else
    printf ("%8s %12s %12s %12s %12s %9s %10s %10s %10s\n", "GPUs", "base s", "mean s", "p50 s", "p99 s",
            "slow GPUs", "strag.eff", "weak base", "weak p50");
  Row first = { 0 };
  for (guint i = 0; i < gpus->len; i++)
    {
      Row r = { 0 };
      if (!evaluate (files, sets, g_array_index (gpus, int, i), &sp, samples, (guint64) seed, &r, &error))
        {
          fprintf (stderr, "trainsim straggler: %s\n", error->message);
          int status = error->domain == SIM_SCENARIO_ERROR ? 2 : 1;
          g_error_free (error);
          return status;
        }
      if (i == 0)
        first = r;
      double se = r.base_s / r.p50_s, wb = first.base_s / r.base_s, wp = first.p50_s / r.p50_s;
      if (tsv)
        printf ("%d\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.3f\t%.5f\t%.5f\t%.5f\n", r.gpus, r.base_s, r.mean_s, r.p50_s,
                r.p99_s, r.max_s, r.slow_gpus, se, wb, wp);
      else
        printf ("%8d %12.5f %12.5f %12.5f %12.5f %9.2f %10.4f %10.4f %10.4f\n", r.gpus, r.base_s, r.mean_s,
                r.p50_s, r.p99_s, r.slow_gpus, se, wb, wp);
      fflush (stdout);
    }
  return 0;
}
