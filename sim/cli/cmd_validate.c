/* `trainsim validate DECK.csv [--format text|tsv|json] [--plot FILE.png] [--threads N]
 *  [--layer FILE]… [--set group.key=value]…`: predicted against measured step time for every row of
 * a deck (sim/calibrate/validate.h); `--row ID` prints one row's scenario as a `trainsim run` command instead.
 * Exit status: 0 report (or command) written (skipped rows included), 1 the plot failed, 2 bad usage,
 * a malformed deck, or a row that is not there or cannot be modelled. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include "sim/cli/cmd.h"
#include "sim/calibrate/validate.h"
#include "sim/calibrate/calibration.h"

static char *
plot_script (void)
{
  const char *dir = g_getenv ("TRAINSIM_PLOTS_DIR");
  return g_build_filename (dir ? dir : TRAINSIM_SRCDIR "/plots", "validate.gp", NULL);
}

int
sim_cmd_validate (int argc, char **argv)
{
  g_autofree char *format_name = NULL, *plot = NULL, *row_id = NULL, *cross = NULL;
  gboolean uncalibrated = FALSE;
  double band = 0.9;
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) layers = NULL;
  g_auto (GStrv) files = NULL;
  int threads = 0;
  gboolean full = FALSE;
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "Output format: text (default), tsv, json", "FORMAT" },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "Draw predicted vs measured (log-log, +/-10% band) into a PNG",
      "FILE" },
    { "threads", 'j', 0, G_OPTION_ARG_INT, &threads, "Rows simulated at once (default: one per processor)", "N" },
    { "layer", 'l', 0, G_OPTION_ARG_FILENAME_ARRAY, &layers,
      "Scenario file applied to every row after its profile (e.g. a `trainsim fit --runs` layer)", "FILE" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key in every row (repeatable)",
      "GROUP.KEY=VALUE" },
    { "full", 0, 0, G_OPTION_ARG_NONE, &full, "Simulate every rank", NULL },
    { "cross-validate", 0, 0, G_OPTION_ARG_STRING, &cross,
      "Refit the calibration (trainsim fit --runs --calibrate) with each source left out and predict that "
      "source's rows: the out-of-sample error per row, source and GPU (BY: source)", "BY" },
    { "uncalibrated", 0, 0, G_OPTION_ARG_NONE, &uncalibrated,
      "Leave out the generations' calibration (scenarios/calibration/): datasheet and microbenchmark figures only",
      NULL },
    { "band", 0, 0, G_OPTION_ARG_DOUBLE, &band, "Central probability of each prediction's band (default 0.9)", "P" },
    { "row", 0, 0, G_OPTION_ARG_STRING, &row_id, "Print this row's scenario as a `trainsim run` command and exit", "ID" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("DECK.csv - predicted vs measured for published runs");
  g_option_context_set_summary (ctx,
    "Reads a validation deck (the format of ../shared/validation/DECK.md), builds each row's\n"
    "scenario from the embedded hardware profile of its `gpu` and the fabric that GPU ships with,\n"
    "simulates one step per row and prints predicted, measured and error per row, then MAPE,\n"
    "median and max |error| overall, per source and per GPU type, and coverage. Rows trainsim\n"
    "cannot model are listed as skipped with the reason. How a row becomes a scenario (family\n"
    "presets, overlap flags, placement) is documented in sim/calibrate/validate.h.\n"
    "\n"
    "Where the figures come from: peaks, memory sizes and link rates are datasheet figures, the\n"
    "capabilities (nvls, fp8_any_layout) the vendors' documents and library sources;\n"
    "gemm_eff_max_*, mem_eff, attn_eff, attn_fp8_*, attn_fa2_* and the NCCL constants are public or this\n"
    "project's microbenchmarks (each profile key names its source); gemm_insitu_*, mem_insitu,\n"
    "launch_us, step_overhead_ms and the band are fitted on this deck per GPU generation\n"
    "(scenarios/calibration/<generation>.ini; the model: sim/calibrate/calibration.h). Each row's\n"
    "band is predicted·exp(±z·σ), σ² the square of the leave-one-source-out scatter plus the fitted\n"
    "constants' own variance carried through the row's sensitivity to them ([calibration]\n"
    "covariance); --cross-validate source gives the leave-one-source-out errors, the figure to quote.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim validate: %s\n(`trainsim validate --help` lists the options)\n", error->message);
      return 2;
    }
  if (files == NULL || files[0] == NULL || files[1] != NULL)
    {
      fprintf (stderr, "trainsim validate: give exactly one deck file (see trainsim validate --help)\n");
      return 2;
    }
  SimValidateFormat format = SIM_VALIDATE_TEXT;
  if (format_name && strcmp (format_name, "tsv") == 0)
    format = SIM_VALIDATE_TSV;
  else if (format_name && strcmp (format_name, "json") == 0)
    format = SIM_VALIDATE_JSON;
  else if (format_name && strcmp (format_name, "text") != 0)
    {
      fprintf (stderr, "trainsim validate: --format %s: unknown format; use text, tsv or json\n", format_name);
      return 2;
    }
  if (cross != NULL && strcmp (cross, "source") != 0)
    {
      fprintf (stderr, "trainsim validate: --cross-validate %s: only 'source' is known\n", cross);
      return 2;
    }
  if (!(band > 0 && band < 1))
    {
      fprintf (stderr, "trainsim validate: --band %g: give a probability between 0 and 1\n", band);
      return 2;
    }
  if (threads < 0)
    {
      fprintf (stderr, "trainsim validate: --threads %d: give a positive count (0: one per processor)\n", threads);
      return 2;
    }
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_load (files[0], &error);
  if (deck == NULL)
    {
      fprintf (stderr, "trainsim validate: %s\n", error->message);
      return 2;
    }
  if (row_id != NULL)
    {
      sim_validate_deck_resolve (deck, threads);
      for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
        {
          const SimValidateRow *r = sim_validate_deck_row (deck, i);
          if (strcmp (r->id, row_id) != 0)
            continue;
          g_autofree char *cmd = sim_validate_row_command (r, &error);
          if (cmd == NULL)
            {
              fprintf (stderr, "trainsim validate: --row %s: %s\n", row_id, error->message);
              return 2;
            }
          printf ("%s\n", cmd);
          return 0;
        }
      fprintf (stderr, "trainsim validate: --row %s: no such row id in %s\n", row_id, files[0]);
      return 2;
    }
  SimValidateOptions opts = { (const char *const *) layers, (const char *const *) sets, threads, full,
                              isatty (fileno (stderr)), uncalibrated, band };
  guint n = sim_validate_deck_n_rows (deck);
  g_autofree SimValidateResult *results = g_new0 (SimValidateResult, MAX (n, 1));
  sim_validate_resolve_and_run (deck, &opts, results);
  if (cross != NULL)
    {
      SimCalibrationOptions co = { opts, TRUE, 0 };
      co.validate.progress = FALSE;
      SimCalibrationResult cr;
      if (!sim_calibration_fit (deck, &co, &cr, &error))
        {
          fprintf (stderr, "trainsim validate: --cross-validate: %s\n", error->message);
          for (guint i = 0; i < n; i++)
            sim_validate_result_clear (&results[i]);
          return 1;
        }
      for (guint i = 0; i < n; i++)
        results[i].loso_pct = cr.loso_pct[i];
      if (format == SIM_VALIDATE_TEXT)
        {
          sim_calibration_write (stdout, &cr, deck);
          printf ("\n");
        }
      sim_calibration_result_clear (&cr);
    }
  sim_validate_write (stdout, deck, results, format, argv_text);
  int status = 0;
  if (plot != NULL)
    {
      g_autofree char *script = plot_script ();
      if (!sim_validate_plot (deck, results, script, plot, &error))
        {
          fprintf (stderr, "trainsim validate: --plot: %s\n", error->message);
          status = 1;
        }
      else
        fprintf (stderr, "trainsim validate: plot written to %s\n", plot);
    }
  for (guint i = 0; i < n; i++)
    sim_validate_result_clear (&results[i]);
  return status;
}
