/* `trainsim compare TRAINER.tsv SCENARIO… [--set g.k=v]… [--skip N] [--format text|tsv|json]`:
 * predicted vs measured step time and per-phase breakdown for a real run of trainsim-trainer.
 *
 * Phases of the prediction, for the trainer's plans (one pipeline stage, pure data parallel):
 *   forward      = the stage's forward compute of one micro-batch × micro-batches per step
 *   backward     = compute − forward (recompute lands here, as in the trainer's CUDA events)
 *   optimizer    = the optimizer step
 *   exposed_comm = TP + CP + PP + DP + EP communication the compute stream waited for
 * The trainer times the same phases with CUDA events on its compute stream. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "model/plan.h"
#include "sim/cli/cmd.h"
#include "sim/calibrate/compare.h"
#include "sim/report/report.h"
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"

static void
predicted_phases (const SimRunnerPrediction *pred, const ModelPlan *plan, double out[SIM_PHASE_COUNT])
{
  const double *bd = pred->step.breakdown_s;
  out[SIM_PHASE_STEP] = pred->step_s;
  out[SIM_PHASE_FORWARD] = pred->step.stage_forward_s * model_plan_microbatches (plan);
  out[SIM_PHASE_BACKWARD] = bd[SIM_BD_COMPUTE] - out[SIM_PHASE_FORWARD];
  out[SIM_PHASE_OPTIMIZER] = bd[SIM_BD_OPTIMIZER];
  out[SIM_PHASE_COMM_EXPOSED] = bd[SIM_BD_TP] + bd[SIM_BD_CP] + bd[SIM_BD_PP] + bd[SIM_BD_DP] + bd[SIM_BD_EP];
}

static void
write_text (const char *log_path, const SimTrainerLog *log, const SimScenario *sc,
            const double pred[SIM_PHASE_COUNT], int skip)
{
  printf ("trainsim compare: %s against scenario %s\n", log_path, sim_scenario_run (sc)->name);
  for (guint i = 0; i < log->provenance->len; i++)
    printf ("  # %s\n", (const char *) g_ptr_array_index (log->provenance, i));
  printf ("measured: median of %d steps (%d warm-up steps skipped of %d)\n\n", log->used, skip, log->rows);
  printf ("%-14s %14s %14s %10s\n", "phase", "predicted_ms", "measured_ms", "error_pct");
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    {
      if (log->median_s[p] < 0)
        printf ("%-14s %14.3f %14s %10s\n", sim_phase_name (p), pred[p] * 1e3, "n/a", "n/a");
      else if (log->median_s[p] == 0)
        printf ("%-14s %14.3f %14.3f %10s\n", sim_phase_name (p), pred[p] * 1e3, 0.0, "n/a");
      else
        printf ("%-14s %14.3f %14.3f %+10.1f\n", sim_phase_name (p), pred[p] * 1e3, log->median_s[p] * 1e3,
                sim_compare_error_pct (pred[p], log->median_s[p]));
    }
}

static void
write_tsv (const char *log_path, const SimTrainerLog *log, const SimScenario *sc, const double pred[SIM_PHASE_COUNT])
{
  printf ("# tool: trainsim compare %s (git %s)\n# log: %s (%d steps used)\n# scenario: %s\n", PACKAGE_VERSION,
          TRAINSIM_GIT_REV, log_path, log->used, sim_scenario_run (sc)->name);
  printf ("phase\tpredicted_s\tmeasured_s\terror_pct\n");
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    {
      if (log->median_s[p] <= 0)
        printf ("%s\t%.6g\t%s\tnan\n", sim_phase_name (p), pred[p], log->median_s[p] < 0 ? "nan" : "0");
      else
        printf ("%s\t%.6g\t%.6g\t%.3f\n", sim_phase_name (p), pred[p], log->median_s[p],
                sim_compare_error_pct (pred[p], log->median_s[p]));
    }
}

static void
write_json (const char *log_path, const SimTrainerLog *log, const SimScenario *sc, const double pred[SIM_PHASE_COUNT])
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "log");
  json_builder_add_string_value (b, log_path);
  json_builder_set_member_name (b, "scenario");
  json_builder_add_string_value (b, sim_scenario_run (sc)->name);
  json_builder_set_member_name (b, "steps_used");
  json_builder_add_int_value (b, log->used);
  json_builder_set_member_name (b, "predicted_step_s");
  json_builder_add_double_value (b, pred[SIM_PHASE_STEP]);
  json_builder_set_member_name (b, "measured_step_s");
  json_builder_add_double_value (b, log->median_s[SIM_PHASE_STEP]);
  json_builder_set_member_name (b, "error_pct");
  json_builder_add_double_value (b, sim_compare_error_pct (pred[SIM_PHASE_STEP], log->median_s[SIM_PHASE_STEP]));
  json_builder_set_member_name (b, "phases");
  json_builder_begin_array (b);
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "phase");
      json_builder_add_string_value (b, sim_phase_name (p));
      json_builder_set_member_name (b, "predicted_s");
      json_builder_add_double_value (b, pred[p]);
      json_builder_set_member_name (b, "measured_s");
      if (log->median_s[p] < 0)
        json_builder_add_null_value (b);
      else
        json_builder_add_double_value (b, log->median_s[p]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  sim_report_print_json (stdout, b);
}

int
sim_cmd_compare (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) args = NULL;
  g_autofree char *format_name = NULL;
  int skip = 5;
  GOptionEntry entries[] = {
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario key (repeatable)", "GROUP.KEY=VALUE" },
    { "skip", 0, 0, G_OPTION_ARG_INT, &skip, "Warm-up steps left out of the medians (default 5)", "N" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_name, "Output format: text, tsv or json", "FORMAT" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, "TRAINER.tsv SCENARIO…" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TRAINER.tsv SCENARIO… — predicted vs measured");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx,
      "Holds a trainsim-trainer per-step TSV against trainsim's prediction of the scenario that\n"
      "describes the same run (the trainer writes it with --emit-scenario). Measured figures are\n"
      "medians over the steps after --skip warm-up steps; errors are (predicted - measured) / measured.");
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim compare: %s\n", error->message);
      g_error_free (error);
      return 2;
    }
  if (!args || g_strv_length (args) < 2)
    {
      fprintf (stderr, "trainsim compare: needs a trainer TSV and at least one scenario file\n"
                       "usage: trainsim compare TRAINER.tsv SCENARIO… (see --help)\n");
      return 2;
    }
  if (skip < 0)
    {
      fprintf (stderr, "trainsim compare: --skip %d: must be 0 or more\n", skip);
      return 2;
    }
  SimReportFormat format = SIM_REPORT_TEXT;
  if (format_name && !sim_report_parse_format (format_name, &format))
    {
      fprintf (stderr, "trainsim compare: --format %s: unknown format; use text, tsv or json\n", format_name);
      return 2;
    }
  SimTrainerLog log;
  if (!sim_trainer_log_read (args[0], skip, &log, &error))
    {
      fprintf (stderr, "trainsim compare: %s\n", error->message);
      g_error_free (error);
      sim_trainer_log_clear (&log);
      return 2;
    }
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) args + 1, (const char *const *) sets, &error);
  SimRunnerPrediction pred;
  SimPredictOptions po = { 0 };
  sim_runner_options_init (&po.run);
  if (!sc || !sim_runner_predict (sc, &po, &pred, &error))
    {
      fprintf (stderr, "trainsim compare: %s\n", error->message);
      int status = error->domain == SIM_SCENARIO_ERROR || error->domain == MODEL_ERROR ? 2 : 1;
      g_error_free (error);
      sim_trainer_log_clear (&log);
      return status;
    }
  double phases[SIM_PHASE_COUNT];
  predicted_phases (&pred, sim_scenario_plan (sc), phases);
  if (format == SIM_REPORT_TSV)
    write_tsv (args[0], &log, sc, phases);
  else if (format == SIM_REPORT_JSON)
    write_json (args[0], &log, sc, phases);
  else
    write_text (args[0], &log, sc, phases, skip);
  sim_trainer_log_clear (&log);
  return 0;
}
