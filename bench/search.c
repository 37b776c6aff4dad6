/* bench/search: speed of `trainsim search` on the Llama 3.1 405B / 8,192 GB200 space (the MLPerf
 * Training v6.0 scenario), on one core.
 *   stage 1, pruned:     the closed-form stage as the search runs it (lower-bound skip on)
 *   stage 1, exhaustive: every valid plan estimated (memory check + closed form each)
 *   full search:         stage 1 + selection + stage 2 (confirmation)
 * Configurations evaluated per second = closed-form evaluations (memory check + estimate) / wall.
 *   --simulate K:        also simulates the K best distinct plans (stage 2 of trainsim search,
 *                        sim/step/runner.h) and reports the time per simulated plan
 * Usage: bench/search [SCENARIO.ini] [--set group.key=value]… [--simulate K]
 * Ends with: plans_enumerated= plans_valid= exhaustive_evals= exhaustive_evals_per_s=
 *            pruned_evals= pruned_wall_s= closed_form_search_s= [simulated= sim_s_per_plan= full_search_s=] */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "sim/scenario/scenario.h"
#include "sim/plan/search.h"
#include "sim/step/runner.h"
#include "sim/des/heap.h"

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  g_autoptr (GPtrArray) files = g_ptr_array_new ();
  g_autoptr (GPtrArray) sets = g_ptr_array_new ();
  int simulate = 0;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--simulate") == 0 && i + 1 < argc)
        simulate = atoi (argv[++i]);
      else if (strcmp (argv[i], "--set") == 0 && i + 1 < argc)
        g_ptr_array_add (sets, argv[++i]);
      else
        g_ptr_array_add (files, argv[i]);
    }
  if (files->len == 0)
    g_ptr_array_add (files, (gpointer) "runs/llama31-405b-gb200-mlperf-v6.0.ini");
  g_ptr_array_add (files, NULL);
  g_ptr_array_add (sets, NULL);
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files->pdata, (const char *const *) sets->pdata,
                                                  &error);
  if (!sc)
    {
      fprintf (stderr, "bench/search: %s\n", error->message);
      return 1;
    }
  SimSearchOptions o;
  SimSearchStats ex, pr;

  sim_search_options_init (&o);
  o.exhaustive = TRUE;
  g_autoptr (GArray) all = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  gint64 t0 = g_get_monotonic_time ();
  sim_search_stage1 (sc, &o, all, &ex);
  double ex_s = (g_get_monotonic_time () - t0) / 1e6;

  sim_search_options_init (&o);
  g_autoptr (GArray) cands = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  t0 = g_get_monotonic_time ();
  sim_search_stage1 (sc, &o, cands, &pr);
  double pr_s = (g_get_monotonic_time () - t0) / 1e6;
  sim_search_select (cands, &o);
  sim_search_rank (cands);
  double full_s = (g_get_monotonic_time () - t0) / 1e6;

  const ModelPlan *p = sim_scenario_plan (sc);
  printf ("search space: %s on %d GPUs, global batch %d\n", sim_scenario_shape (sc)->name, p->gpus, p->global_batch);
  printf ("plans enumerated %" G_GUINT64_FORMAT ", valid %" G_GUINT64_FORMAT "\n", ex.enumerated, ex.valid);
  printf ("exhaustive stage 1: %" G_GUINT64_FORMAT " closed-form evaluations (memory check + estimate) "
          "in %.3f s: %.0f evaluations/s; %.0f valid plans/s\n",
          ex.estimated + ex.no_fit, ex_s, (ex.estimated + ex.no_fit) / ex_s, ex.valid / ex_s);
  printf ("pruned stage 1: %" G_GUINT64_FORMAT " evaluations, %" G_GUINT64_FORMAT " skipped by the bound, %.3f s\n",
          pr.estimated + pr.no_fit, pr.bound_skipped, pr_s);
  printf ("closed-form search (stage 1 + selection of %u plans): %.3f s\n", cands->len, full_s);
  if (cands->len > 0)
    {
      g_autofree char *d = sim_search_describe_plan (&g_array_index (cands, SimSearchCandidate, 0).plan);
      printf ("best: %s, %.4f s/step (estimate)\n", d, g_array_index (cands, SimSearchCandidate, 0).confirmed_s);
    }
  double sim_total = 0.0;
  int simulated = 0;
  for (guint i = 0; i < cands->len && simulated < simulate; i++)
    {
      SimCollectiveProfile prof;
      SimRunnerOptions ro;
      sim_runner_options_init (&ro);
      ro.memory_overhead_bytes = sim_scenario_run (sc)->memory_overhead_bytes;
      SimRunnerResult r;
      gint64 s0 = g_get_monotonic_time ();
      if (!sim_scenario_collective_profile (sc, &prof, &error)
          || !sim_runner_run (sim_scenario_shape (sc), &g_array_index (cands, SimSearchCandidate, i).plan,
                              sim_scenario_gpu (sc), sim_scenario_cluster (sc), sim_scenario_fabric (sc), &prof, &ro, &r,
                              &error))
        {
          fprintf (stderr, "bench/search: %s\n", error->message);
          g_clear_error (&error);
          continue;
        }
      double dt = (g_get_monotonic_time () - s0) / 1e6;
      sim_total += dt;
      simulated++;
      g_autofree char *d = sim_search_describe_plan (&g_array_index (cands, SimSearchCandidate, i).plan);
      printf ("simulated %s: %.4f s/step (estimate %.4f), %.2f s wall, %" G_GUINT64_FORMAT " events\n", d,
              r.step_ns * 1e-9, g_array_index (cands, SimSearchCandidate, i).estimate_s, dt, r.events);
    }
  printf ("plans_enumerated=%" G_GUINT64_FORMAT " plans_valid=%" G_GUINT64_FORMAT " exhaustive_evals=%" G_GUINT64_FORMAT
          " exhaustive_evals_per_s=%.0f valid_plans_per_s=%.0f pruned_evals=%" G_GUINT64_FORMAT
          " pruned_wall_s=%.3f closed_form_search_s=%.3f",
          ex.enumerated, ex.valid, ex.estimated + ex.no_fit, (ex.estimated + ex.no_fit) / ex_s, ex.valid / ex_s,
          pr.estimated + pr.no_fit, pr_s, full_s);
  if (simulated > 0)
    printf (" simulated=%d sim_s_per_plan=%.2f full_search_s=%.2f", simulated, sim_total / simulated,
            full_s + sim_total);
  printf ("\n");
  return 0;
}
