/* `trainsim sensitivity [SCENARIO…] [--set group.key=value]… [--step PCT] [--format text|tsv|json]`:
 * how much the predicted step moves per percent of each hardware and fabric constant
 * (sim/calibrate/sensitivity.h). Exit status: 0 ok, 1 the base step could not be simulated, 2 bad usage or
 * scenario input. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "sim/cli/cmd.h"
#include "sim/scenario/scenario.h"
#include "sim/calibrate/sensitivity.h"

int
sim_cmd_sensitivity (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) files = NULL;
  g_autofree char *format_name = NULL;
  double step_pct = 5, min_pct = 0.1;
  int threads = 0;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { "step", 0, 0, G_OPTION_ARG_DOUBLE, &step_pct, "Relative change of each constant, in percent (default 5)", "PCT" },
    { "min", 0, 0, G_OPTION_ARG_DOUBLE, &min_pct, "Text: list constants whose elasticity is at least this, "
      "in percent of step per percent (default 0.1; 0 lists all)", "PCT" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "Output format: text (default), tsv, json", "FORMAT" },
    { "threads", 'j', 0, G_OPTION_ARG_INT, &threads, "Simulations at once (default: one per processor)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "[SCENARIO.ini…]" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini…] - which constants the step time hangs on");
  g_option_context_set_description (
      ctx, "Simulates the step of the scenario (as `trainsim run`), then again with every numeric\n"
           "[hardware] and [fabric] constant scaled by 1 - PCT/100 and 1 + PCT/100 in turn, and prints\n"
           "the elasticity d ln(step) / d ln(constant) of each, largest first, with the constant's source.\n"
           "A side the scenario loader refuses (an efficiency above 1, a plan that no longer fits) leaves\n"
           "a one-sided difference and says why. Use it to decide what to measure first (calib-plan).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim sensitivity: %s\n", error->message);
      g_error_free (error);
      return 2;
    }
  enum { TEXT, TSV, JSON } format = TEXT;
  if (format_name && strcmp (format_name, "tsv") == 0)
    format = TSV;
  else if (format_name && strcmp (format_name, "json") == 0)
    format = JSON;
  else if (format_name && strcmp (format_name, "text") != 0)
    {
      fprintf (stderr, "trainsim sensitivity: unknown format '%s' (text, tsv, json)\n", format_name);
      return 2;
    }
  if (!isfinite (step_pct) || step_pct <= 0 || step_pct > 50)
    {
      fprintf (stderr, "trainsim sensitivity: --step must be in (0, 50] percent, not %g\n", step_pct);
      return 2;
    }
  if (!isfinite (min_pct) || min_pct < 0)
    {
      fprintf (stderr, "trainsim sensitivity: --min must be a percentage >= 0, not %g\n", min_pct);
      return 2;
    }
  SimSensitivityOptions opt = { step_pct / 100, threads };
  g_autoptr (SimSensitivity) s = sim_sensitivity_run ((const char *const *) files, (const char *const *) sets, &opt,
                                                      &error);
  if (!s)
    {
      fprintf (stderr, "trainsim sensitivity: %s\n", error->message);
      int rc = error->domain == SIM_SCENARIO_ERROR || error->domain == SIM_SENSITIVITY_ERROR ? 2 : 1;
      g_error_free (error);
      return rc;
    }
  if (format == TSV)
    sim_sensitivity_print_tsv (s, stdout);
  else if (format == JSON)
    {
      g_autofree char *json = sim_sensitivity_to_json (s);
      printf ("%s\n", json);
    }
  else
    sim_sensitivity_print_text (s, stdout, min_pct / 100);
  return 0;
}
