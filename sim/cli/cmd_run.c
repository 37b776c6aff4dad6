/* `trainsim run [SCENARIO…] [--set group.key=value]… [--format text|tsv|json]`: loads the scenario
 * (files merged in order, then --set overrides; no file: the embedded default) and prints the report.
 * Exit status: 0 ok, 1 the report could not be computed, 2 bad usage or scenario input. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gio/gio.h>
#include "sim/cli/cmd.h"
#include "sim/report/report.h"
#include "sim/scenario/scenario.h"
#include "sim/report/trace.h"
#include "sim/report/plots.h"
#include "sim/step/runner.h"

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
list_embedded (const char *path, int depth)
{
  g_auto (GStrv) names = g_resources_enumerate_children (path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  if (!names)
    return;
  qsort (names, g_strv_length (names), sizeof *names, compare_names);
  for (int i = 0; names[i]; i++)
    {
      g_autofree char *child = g_strconcat (path, names[i], NULL);
      if (g_str_has_suffix (names[i], "/"))
        list_embedded (child, depth + 1);
      else
        printf ("%s\n", child + strlen ("/trainsim/scenarios/"));
    }
}

int
sim_cmd_run (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) files = NULL;
  g_auto (GStrv) layers = NULL;
  g_autofree char *format_name = NULL;
  gboolean keys = FALSE, list = FALSE, full = FALSE, no_sim = FALSE, explain = FALSE;
  int base_gpus = 0;
  double band = 0.9;
  g_autofree char *scaling = NULL;
  g_autofree char *trace_path = NULL, *plots_dir = NULL, *links_path = NULL;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "Output format: text (default), tsv, json", "FORMAT" },
    { "keys", 0, 0, G_OPTION_ARG_NONE, &keys, "Print every scenario key (the tables of scenarios/README.md)", NULL },
    { "list", 0, 0, G_OPTION_ARG_NONE, &list, "List the scenarios embedded in the binary", NULL },
    { "full", 0, 0, G_OPTION_ARG_NONE, &full, "Simulate every rank (default: one per pipeline stage, or one "
      "per TP group where stages sit unevenly on the NVLink domains; every flow still on the fabric)", NULL },
    { "explain", 'v', 0, G_OPTION_ARG_NONE, &explain, "Text: also print every resolved key with its value, "
      "file:line and source (the answer comes first either way)", NULL },
    { "verbose", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &explain, "Same as --explain", NULL },
    { "no-simulate", 0, 0, G_OPTION_ARG_NONE, &no_sim, "Only the workload report (no step simulation)", NULL },
    { "base-gpus", 0, 0, G_OPTION_ARG_INT, &base_gpus, "Scaling efficiency against this many GPUs "
      "(DP shrunk to fit)", "N" },
    { "band", 0, 0, G_OPTION_ARG_DOUBLE, &band, "Central probability of the step time's band from the profile's "
      "calibration (default 0.9)", "P" },
    { "scaling", 0, 0, G_OPTION_ARG_STRING, &scaling, "weak (default: global batch per DP replica kept) "
      "or strong (global batch kept)", "KIND" },
    { "layer", 'l', 0, G_OPTION_ARG_FILENAME_ARRAY, &layers, "Scenario file applied after the others (e.g. a "
      "`trainsim fit --runs --calibrate` layer; with no other file, after the embedded default)", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &trace_path,
      "Write the simulated step as Chrome trace JSON (Perfetto): a track per simulated rank and stream", "FILE" },
    { "link-stats", 0, 0, G_OPTION_ARG_FILENAME, &links_path,
      "Write the bytes and utilisation of every fabric link in the simulated step (TSV)", "FILE" },
    { "plots", 0, 0, G_OPTION_ARG_FILENAME, &plots_dir,
      "Write the step breakdown, memory and pipeline timeline plots (TSV, PNG, SVG) into DIR", "DIR" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini...] - predict one training scenario");
  g_option_context_set_summary (ctx,
    "Loads the scenario files in order (later files override earlier keys; each file's\n"
    "[scenario] include list is loaded before it), then applies every --set. A path that\n"
    "does not exist on disk is looked up among the embedded scenarios (see --list).\n"
    "Without a file: the embedded default, " SIM_SCENARIO_DEFAULT ".\n\n"
    "Prints the resolved scenario with the provenance of every hardware figure, the\n"
    "parameter count, tokens and FLOPs per step, the plan, the ideal compute-only step\n"
    "time at peak FLOP/s (a LOWER BOUND), then the prediction: one training step simulated\n"
    "on the cluster (step time, its breakdown, MFU, tokens/s, memory, time to train).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  /* Keep the full command line for provenance before GOption consumes it. */
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim run: %s\n(`trainsim run --help` lists the options)\n", error->message);
      g_error_free (error);
      return 2;
    }
  if (keys)
    {
      sim_scenario_write_key_table (stdout);
      return 0;
    }
  if (list)
    {
      /* Loading the default registers the embedded resources. */
      g_autoptr (SimScenario) sc = sim_scenario_new ();
      sim_scenario_add_file (sc, SIM_SCENARIO_DEFAULT, NULL);
      list_embedded ("/trainsim/scenarios/", 0);
      return 0;
    }
  if (!(band > 0 && band < 1))
    {
      fprintf (stderr, "trainsim run: --band %g: give a probability between 0 and 1\n", band);
      return 2;
    }
  SimReportFormat format = SIM_REPORT_TEXT;
  if (format_name && !sim_report_parse_format (format_name, &format))
    {
      fprintf (stderr, "trainsim run: --format %s: unknown format; use text, tsv or json\n", format_name);
      return 2;
    }
  if (layers != NULL)
    {
      /* --layer files come after the scenario's (the embedded default when none is named). */
      g_autoptr (GStrvBuilder) all = g_strv_builder_new ();
      if (files == NULL || files[0] == NULL)
        g_strv_builder_add (all, SIM_SCENARIO_DEFAULT);
      else
        g_strv_builder_addv (all, (const char **) files);
      g_strv_builder_addv (all, (const char **) layers);
      g_strfreev (files);
      files = g_strv_builder_end (all);
    }
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files, (const char *const *) sets, &error);
  if (!sc)
    {
      fprintf (stderr, "%s\n", error->message);
      g_error_free (error);
      return 2;
    }
  SimPredictOptions po = { 0 };
  sim_runner_options_init (&po.run);
  po.run.full = full;
  po.base_gpus = base_gpus;
  po.band_level = band;
  po.weak = TRUE;
  if (scaling && strcmp (scaling, "strong") == 0)
    po.weak = FALSE;
  else if (scaling && strcmp (scaling, "weak") != 0)
    {
      fprintf (stderr, "trainsim run: --scaling %s: use weak or strong\n", scaling);
      return 2;
    }
  g_autoptr (SimTrace) trace = NULL;
  if ((trace_path || plots_dir || links_path) && !no_sim)
    {
      if (!(trace = sim_trace_new (trace_path, &error)))
        {
          fprintf (stderr, "trainsim run: %s\n", error->message);
          g_error_free (error);
          return 2;
        }
      po.run.trace = trace_path || plots_dir ? sim_trace_event : NULL;
      po.run.trace_user = trace;
      if (links_path)
        {
          sim_trace_set_link_stats (trace, links_path);
          po.run.link_stats = sim_trace_links;
        }
    }
  /* A plan over the memory model's capacity is still simulated: a run that ran must never be
   * refused, and the report names what is over and the cheapest change that fits. */
  po.run.memory_advisory = TRUE;
  SimRunnerPrediction pred;
  if (!no_sim)
    sim_runner_predict (sc, &po, &pred, &error);
  if (error != NULL)
    {
      fprintf (stderr, "trainsim run: %s\n", error->message);
      int status = error->domain == MODEL_ERROR ? 2 : 1;
      g_error_free (error);
      return status;
    }
  if (!sim_report_write_prediction (stdout, sc, format, argv_text, no_sim ? NULL : &pred, explain, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      int status = error->domain == SIM_SCENARIO_ERROR ? 2 : 1;
      g_error_free (error);
      return status;
    }
  if ((trace && !sim_trace_finish (trace, &error))
      || (plots_dir && !sim_plots_run (plots_dir, sc, no_sim ? NULL : &pred, trace_path || plots_dir ? trace : NULL,
                                       &error)))
    {
      fprintf (stderr, "trainsim run: %s\n", error->message);
      g_error_free (error);
      return 1;
    }
  return 0;
}
