/* bench/step: wall time and peak memory of simulating one step of a scenario (default: the embedded
 * GPT-3 175B case on 10,752 H100), with representatives and with --full.
 * Usage: bench/step [SCENARIO.ini]… [--set group.key=value]… [--skip-full] [--representatives]
 *                   [--sensitivities]
 *   --representatives: the default case keeps one rank per stage even where the placement check
 *   would run every rank (what that check protects: compare with the --full line)
 *   --sensitivities: also carry the step's derivatives in the calibration's constants, as each
 *   simulation of `trainsim fit --calibrate` does (what they cost)
 * Ends with: default_wall_s=… default_rss_mib=… full_wall_s=… full_rss_mib=… */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <glib.h>
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/des/heap.h"

static double
rss_mib (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static gboolean sensitivities;

static gboolean
one (const SimScenario *sc, gboolean full, gboolean representatives, double *wall_s, double *rss, GError **error)
{
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  o.run.full = full;
  o.run.sensitivities = sensitivities;
  o.run.force_symmetric = representatives;
  SimRunnerPrediction p;
  gint64 t0 = g_get_monotonic_time ();
  if (!sim_runner_predict (sc, &o, &p, error))
    return FALSE;
  *wall_s = (g_get_monotonic_time () - t0) / 1e6;
  *rss = rss_mib ();
  printf ("%-8s step %.4f s, %d ranks simulated, %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
          " ops: wall %.3f s, peak RSS %.1f MiB\n", full ? "full" : "default", p.step_s,
          p.step.ranks_simulated, p.step.events, p.step.ops_executed, *wall_s, *rss);
  return TRUE;
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  g_autoptr (GPtrArray) files = g_ptr_array_new ();
  g_autoptr (GPtrArray) sets = g_ptr_array_new ();
  gboolean skip_full = FALSE, representatives = FALSE;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--set") == 0 && i + 1 < argc)
      g_ptr_array_add (sets, argv[++i]);
    else if (strcmp (argv[i], "--skip-full") == 0)
      skip_full = TRUE;
    else if (strcmp (argv[i], "--representatives") == 0)
      representatives = TRUE;
    else if (strcmp (argv[i], "--sensitivities") == 0)
      sensitivities = TRUE;
    else
      g_ptr_array_add (files, argv[i]);
  g_ptr_array_add (files, NULL);
  g_ptr_array_add (sets, NULL);
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files->pdata,
                                                   (const char *const *) sets->pdata, &error);
  if (sc == NULL)
    {
      fprintf (stderr, "bench/step: %s\n", error->message);
      return 2;
    }
  printf ("# heap in %s\n", sim_heap_describe ());
  double dw = 0, dr = 0, fw = 0, fr = 0;
  if (!one (sc, FALSE, representatives, &dw, &dr, &error)
      || (!skip_full && !one (sc, TRUE, FALSE, &fw, &fr, &error)))
    {
      fprintf (stderr, "bench/step: %s\n", error->message);
      return 1;
    }
  printf ("default_wall_s=%.3f default_rss_mib=%.1f full_wall_s=%.3f full_rss_mib=%.1f\n", dw, dr, fw, fr);
  return 0;
}
