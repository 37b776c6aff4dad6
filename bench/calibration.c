/* bench/calibration: the accuracy and cost of the shipped calibration, as the calibration issue
 * measures them.
 *   1. The fit: `trainsim fit --runs DECK --calibrate --cross-validate` on one thread (or -j N):
 *      wall time, simulations, mean seconds per simulated row, and which phase dominates.
 *   2. The deck with the shipped profiles (scenarios/calibration/ applied): in-sample MAPE and max,
 *      the leave-one-source-out MAPE and max of the fit above, and how often the measured step falls
 *      inside its 90% band.
 *   3. The seed records with the shipped profiles: the GPT-3 175B run scenario, the Llama 3.1 405B
 *      scenario at 8,192 and 7,168 GPUs, each against its published step.
 * Usage: bench/calibration [DECK.csv] [-j N] [--no-fit]   (default deck: ../shared/validation/deck.csv
 * next to the source tree; --no-fit skips part 1 and the LOSO figures, which `trainsim fit --runs DECK
 * --calibrate --cross-validate` prints too). Ends with one key=value line. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "sim/calibrate/calibration.h"
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/des/heap.h"

static double
seed (const char *file, const char *set, double measured, double *lo, double *hi)
{
  const char *files[] = { file, NULL };
  const char *sets[] = { set, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load (files, set ? sets : NULL, &error);
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  SimRunnerPrediction p;
  if (sc == NULL || !sim_runner_predict (sc, &o, &p, &error))
    {
      fprintf (stderr, "bench/calibration: %s: %s\n", file, error->message);
      exit (1);
    }
  *lo = p.step_lo_s;
  *hi = p.step_hi_s;
  printf ("  %-52s %-22s %8.4f s  (%.4f–%.4f)  measured %.4f s  %+6.1f%%\n", file, set ? set : "", p.step_s,
          p.step_lo_s, p.step_hi_s, measured, 100.0 * (p.step_s - measured) / measured);
  return 100.0 * (p.step_s - measured) / measured;
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  int threads = 1;
  gboolean fit = TRUE;
  const char *deck_path = TRAINSIM_SRCDIR "/../shared/validation/deck.csv";
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "-j") == 0 && i + 1 < argc)
      threads = atoi (argv[++i]);
    else if (strcmp (argv[i], "--no-fit") == 0)
      fit = FALSE;
    else
      deck_path = argv[i];
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_load (deck_path, &error);
  if (deck == NULL)
    {
      fprintf (stderr, "bench/calibration: %s\n", error->message);
      return 1;
    }
  sim_validate_deck_resolve (deck, threads);
  guint n = sim_validate_deck_n_rows (deck);

  SimCalibrationResult cr = { 0 };
  if (fit)
    {
      printf ("== 1. the fit (%d thread%s) ==\n", threads, threads == 1 ? "" : "s");
      SimCalibrationOptions co = { { NULL, NULL, threads, FALSE, FALSE, TRUE, 0 }, TRUE, 0 };
      if (!sim_calibration_fit (deck, &co, &cr, &error))
        {
          fprintf (stderr, "bench/calibration: %s\n", error->message);
          return 1;
        }
      sim_calibration_write (stdout, &cr, deck);
      double per_sim = cr.simulations ? cr.wall_s * threads / cr.simulations : 0;
      printf ("cost: %.1f s wall, %u simulated steps at %.3f s each (× %d threads): the simulations are %.0f%% of "
              "the wall time; the linear algebra the rest\n",
              cr.wall_s, cr.simulations, per_sim, threads,
              100.0 * (cr.jacobian_s + cr.steps_s + cr.loso_s) / MAX (cr.wall_s, 1e-9));
      /* What dominates: the rows that took the most simulation time, all their simulations together. */
      double total = 0;
      for (guint i = 0; i < n; i++)
        total += cr.row_sim_s[i];
      gboolean *shown = g_new0 (gboolean, n);
      printf ("rows that cost the most (all their simulations):\n");
      for (int t = 0; t < 3 && total > 0; t++)
        {
          guint best = n;
          for (guint i = 0; i < n; i++)
            if (!shown[i] && (best == n || cr.row_sim_s[i] > cr.row_sim_s[best]))
              best = i;
          if (best == n)
            break;
          shown[best] = TRUE;
          printf ("  %6.1f s  %4.1f%%  %s\n", cr.row_sim_s[best], 100.0 * cr.row_sim_s[best] / total,
                  sim_validate_deck_row (deck, best)->id);
        }
      g_free (shown);
    }

  printf ("\n== 2. the deck with the shipped calibration ==\n");
  SimValidateOptions vo = { NULL, NULL, threads, FALSE, FALSE, FALSE, 0.9 };
  g_autofree SimValidateResult *res = g_new0 (SimValidateResult, MAX (n, 1));
  sim_validate_run (deck, &vo, res);
  guint ok = 0, banded = 0, inside = 0;
  double sum = 0, max = 0, lsum = 0, lmax = 0;
  guint ln = 0;
  for (guint i = 0; i < n; i++)
    {
      if (res[i].status != SIM_VALIDATE_OK)
        continue;
      ok++;
      sum += fabs (res[i].error_pct);
      max = MAX (max, fabs (res[i].error_pct));
      if (res[i].band_hi_s > 0)
        {
          banded++;
          inside += res[i].measured_s >= res[i].band_lo_s && res[i].measured_s <= res[i].band_hi_s;
        }
      if (cr.loso_pct && isfinite (cr.loso_pct[i]))
        {
          ln++;
          lsum += fabs (cr.loso_pct[i]);
          lmax = MAX (lmax, fabs (cr.loso_pct[i]));
        }
    }
  double mape = ok ? sum / ok : NAN, loso = ln ? lsum / ln : NAN, cover = banded ? 100.0 * inside / banded : NAN;
  printf ("modelled %u/%u rows; in-sample MAPE %.1f%%, max %.1f%%; ", ok, n, mape, max);
  if (ln > 0)
    printf ("leave-one-source-out MAPE %.1f%%, max %.1f%%; ", loso, lmax);
  else
    printf ("leave-one-source-out not run (--no-fit); ");
  printf ("90%% band holds the measurement in %.0f%% of %u rows\n", cover, banded);
  printf ("targets: in-sample MAPE <= 5%% and max <= 15%%, LOSO MAPE <= 8%%, coverage >= 85%%\n");

  printf ("\n== 3. the seed records (shipped profiles) ==\n");
  double lo, hi;
  double e1 = seed ("runs/gpt3-175b-mlperf-v3.1.ini", NULL, 0.9296, &lo, &hi);
  double e2 = seed ("runs/llama31-405b-gb200-mlperf-v6.0.ini", "cluster.gpus=8192", 1.2712, &lo, &hi);
  double e3 = seed ("runs/llama31-405b-gb200-mlperf-v6.0.ini", "cluster.gpus=7168", 1.2734, &lo, &hi);
  printf ("targets: each within 5%%\n");
  printf ("\nfit_wall_s=%.1f simulations=%u in_sample_mape_pct=%.2f in_sample_max_pct=%.2f loso_mape_pct=%.2f "
          "loso_max_pct=%.2f band_coverage_pct=%.1f gpt3_err_pct=%.2f llama8192_err_pct=%.2f llama7168_err_pct=%.2f\n",
          cr.wall_s, cr.simulations, mape, max, loso, lmax, cover, e1, e2, e3);
  for (guint i = 0; i < n; i++)
    sim_validate_result_clear (&res[i]);
  sim_calibration_result_clear (&cr);
  return 0;
}
