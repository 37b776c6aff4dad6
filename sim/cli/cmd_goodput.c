/* `trainsim goodput [SCENARIO…] [--set g.k=v]… [--step-s S | --simulate] [--interval-min M] [--trials N] [--seed S]
 *  [--sweep-interval] [--sweep-gpus N,N,…] [--format text|tsv|json]`
 *
 * Expected time to train and goodput under the scenario's [reliability] failure rates, by the
 * analytic model and by Monte Carlo (sim/plan/goodput.h), with cost and energy from [cost] (sim/report/cost.h).
 * The step time is --step-s, else the scenario's published measurement at its GPU count, else (or
 * with --simulate) the step simulator's prediction (sim/step/runner.h), evaluations included. Sweeps:
 * over the checkpoint interval (from Daly's optimum / 16 to × 16), or over GPU counts, where the
 * step time is simulated at each scale with --simulate, or else follows from the reference one at
 * constant throughput per GPU (ideal scaling, stated in the output), so the curve shows what
 * failures and checkpoints alone cost at scale. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "sim/report/report.h"
#include "sim/cli/cmd.h"
#include "sim/report/cost.h"
#include "sim/plan/goodput.h"
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"

typedef struct {
  int gpus;
  double step_s;
  double step_lo_s, step_hi_s; /* the calibration's 90% band; 0: uncalibrated */
  double steps;
  double tokens;
  SimGoodputInputs in;
  SimGoodputAnalytic an;
  SimGoodputMonteCarlo mc;
  gboolean has_cost;
  SimCost cost;
} Row;

typedef struct {
  char **files, **sets;
  double step_s;
  double interval_min;
  int trials;
  gint64 seed;
  gboolean sweep_interval;
  gboolean simulate;
  int cached_gpus;            /* the last simulated scale, reused by the interval sweep */
  double cached_step_s, cached_work_s, cached_param_sigma;
  char *sweep_gpus;
  char *format;
  const char *step_source;
  char *argv_text;
} Options;

static SimScenario *
load (const Options *o, int gpus, GError **error)
{
  GPtrArray *sets = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; o->sets && o->sets[i]; i++)
    g_ptr_array_add (sets, g_strdup (o->sets[i]));
  if (gpus > 0)
    g_ptr_array_add (sets, g_strdup_printf ("cluster.gpus=%d", gpus));
  if (o->interval_min > 0)
    g_ptr_array_add (sets, g_strdup_printf ("reliability.checkpoint_interval_min=%.17g", o->interval_min));
  g_ptr_array_add (sets, NULL);
  SimScenario *sc = sim_scenario_load ((const char *const *) o->files, (const char *const *) sets->pdata, error);
  g_ptr_array_unref (sets);
  return sc;
}

static double
tokens_per_step (const SimScenario *sc)
{
  return (double) sim_scenario_plan (sc)->global_batch * sim_scenario_shape (sc)->seq_len;
}

/* Fills one row: the step time scaled from the reference (ref_gpus, ref_step_s, ref_tokens) at
 * constant tokens per second per GPU; interval_s > 0 overrides the scenario's. */
static gboolean
evaluate (Options *o, const SimScenario *sc, double ref_step_s, int ref_gpus, double ref_tokens,
          double interval_s, Row *row, GError **error)
{
  const SimScenarioRun *run = sim_scenario_run (sc);
  row->gpus = sim_scenario_cluster (sc)->gpus;
  row->steps = (double) run->steps;
  row->tokens = run->tokens;
  if (run->steps <= 0)
    {
      g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_MISSING,
                   "[training] steps: the run's length is not given; set training.steps or training.tokens");
      return FALSE;
    }
  double work;
  if (o->simulate)
    {
      /* The step simulator's prediction at this scale, evaluations included in the work. */
      if (o->cached_gpus != row->gpus)
        {
          SimPredictOptions po = { 0 };
          sim_runner_options_init (&po.run);
          SimRunnerPrediction pred;
          if (!sim_runner_predict (sc, &po, &pred, error))
            return FALSE;
          o->cached_gpus = row->gpus;
          o->cached_step_s = pred.step_s;
          o->cached_param_sigma = pred.param_sigma;
          o->cached_work_s = pred.time_to_train_s - run->init_s;
        }
      row->step_s = o->cached_step_s;
      work = o->cached_work_s;
    }
  else
    {
      row->step_s = ref_step_s * (tokens_per_step (sc) / ref_tokens) * ((double) ref_gpus / row->gpus);
      work = row->steps * row->step_s;
    }
  /* The band belongs to a simulated step, not to a given or measured one. */
  if (o->simulate)
    sim_runner_band (sim_scenario_run (sc), 0, row->step_s, o->cached_param_sigma, &row->step_lo_s, &row->step_hi_s);
  if (!sim_goodput_from_scenario (sc, row->step_s, work, &row->in, error))
    return FALSE;
  if (interval_s > 0)
    row->in.params.interval_s = interval_s;
  if (!sim_goodput_analytic (&row->in.params, &row->an, error))
    return FALSE;
  if (!sim_goodput_monte_carlo (&row->in.params, (guint64) o->seed, o->trials, &row->mc, error))
    return FALSE;
  SimCostParams cp;
  if (!sim_cost_from_scenario (sc, &cp, error))
    return FALSE;
  row->has_cost = sim_cost_is_set (&cp);
  /* Lost work is redone at training power; everything else beyond the work runs idle. */
  sim_cost_compute (&cp, row->step_s, work + row->mc.lost_s, row->mc.mean_s, row->tokens, &row->cost);
  return TRUE;
}

static void
write_provenance (FILE *out, const Options *o, const SimScenario *sc, guint64 seed)
{
  fprintf (out, "# tool: trainsim goodput\n# version: %s (git %s)\n", PACKAGE_VERSION, TRAINSIM_GIT_REV);
  fprintf (out, "# command: %s\n", o->argv_text);
  fprintf (out, "# scenario: %s\n# files:", sim_scenario_run (sc)->name ? sim_scenario_run (sc)->name : "");
  for (const char *const *f = sim_scenario_files (sc); *f; f++)
    fprintf (out, " %s", *f);
  fprintf (out, "\n# step time: %s\n# seed: %" G_GUINT64_FORMAT "\n", o->step_source, seed);
}

static const char *const columns =
  "gpus\tstep_s\tsteps\tplain_s\tfailures_per_day\tmtbf_h\tcheckpoint_GB\tcheckpoint_block_s\trestart_s\t"
  "young_min\tdaly_min\tinterval_min\tanalytic_expected_s\tanalytic_goodput\tmc_mean_s\tmc_ci95_s\tmc_p05_s\t"
  "mc_p95_s\tmc_goodput\tmc_goodput_lo\tmc_goodput_hi\tmc_failures\trun_usd\trun_kWh\trun_tCO2e\tusd_per_Mtok\t"
  "kWh_per_Mtok\n";

static void
write_row_tsv (FILE *out, const Row *r)
{
  fprintf (out, "%d\t%.6g\t%.0f\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.8g\t%.6f\t%.8g\t%.4g\t%.8g\t"
           "%.8g\t%.6f\t%.6f\t%.6f\t%.4g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\n",
           r->gpus, r->step_s, r->steps, r->an.plain_s, r->in.failures_per_day, r->an.mtbf_s / 3600,
           r->in.checkpoint_bytes / 1e9, r->in.params.checkpoint_block_s, r->in.params.restart_s,
           r->an.young_interval_s / 60, r->an.daly_interval_s / 60, r->an.interval_s / 60, r->an.expected_s,
           r->an.goodput, r->mc.mean_s, r->mc.ci95_s, r->mc.p05_s, r->mc.p95_s, r->mc.goodput, r->mc.goodput_lo,
           r->mc.goodput_hi, r->mc.failures, r->cost.run_usd, r->cost.run_kwh, r->cost.run_kg_co2e / 1000,
           r->cost.mtok_usd, r->cost.mtok_kwh);
}

static void
add_double (JsonBuilder *b, const char *name, double v)
{
  json_builder_set_member_name (b, name);
  json_builder_add_double_value (b, isfinite (v) ? v : 0);
}

static void
write_row_json (JsonBuilder *b, const Row *r)
{
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "gpus");
  json_builder_add_int_value (b, r->gpus);
  add_double (b, "step_s", r->step_s);
  add_double (b, "step_time_lo_s", r->step_lo_s);
  add_double (b, "step_time_hi_s", r->step_hi_s);
  add_double (b, "steps", r->steps);
  add_double (b, "plain_s", r->an.plain_s);
  json_builder_set_member_name (b, "failures");
  json_builder_begin_object (b);
  for (int i = 0; i < SIM_FAILURE_COUNT; i++)
    {
      json_builder_set_member_name (b, sim_failure_source_name (i));
      json_builder_begin_object (b);
      add_double (b, "count", r->in.count[i]);
      add_double (b, "per_component_per_day", r->in.rate_per_s[i] * 86400);
      add_double (b, "job_per_day", r->in.count[i] * r->in.rate_per_s[i] * 86400);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  add_double (b, "failures_per_day", r->in.failures_per_day);
  add_double (b, "mtbf_h", r->an.mtbf_s / 3600);
  add_double (b, "hardware_fraction", r->in.params.hardware_fraction);
  add_double (b, "checkpoint_bytes", r->in.checkpoint_bytes);
  json_builder_set_member_name (b, "checkpoint_derived");
  json_builder_add_boolean_value (b, r->in.checkpoint_derived);
  json_builder_set_member_name (b, "async_checkpoint");
  json_builder_add_boolean_value (b, r->in.async);
  add_double (b, "checkpoint_write_s", r->in.write_s);
  add_double (b, "checkpoint_block_s", r->in.params.checkpoint_block_s);
  add_double (b, "checkpoint_read_s", r->in.read_s);
  add_double (b, "restart_s", r->in.params.restart_s);
  add_double (b, "young_interval_s", r->an.young_interval_s);
  add_double (b, "daly_interval_s", r->an.daly_interval_s);
  add_double (b, "interval_s", r->an.interval_s);
  json_builder_set_member_name (b, "analytic");
  json_builder_begin_object (b);
  add_double (b, "expected_s", r->an.expected_s);
  add_double (b, "goodput", r->an.goodput);
  add_double (b, "failures", r->an.expected_failures);
  add_double (b, "checkpoint_s", r->an.checkpoint_s);
  add_double (b, "lost_and_restart_s", r->an.lost_restart_s);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "monte_carlo");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "seed");
  json_builder_add_int_value (b, (gint64) r->mc.seed);
  json_builder_set_member_name (b, "trials");
  json_builder_add_int_value (b, r->mc.trials);
  add_double (b, "mean_s", r->mc.mean_s);
  add_double (b, "ci95_s", r->mc.ci95_s);
  add_double (b, "p05_s", r->mc.p05_s);
  add_double (b, "p50_s", r->mc.p50_s);
  add_double (b, "p95_s", r->mc.p95_s);
  add_double (b, "goodput", r->mc.goodput);
  add_double (b, "goodput_lo", r->mc.goodput_lo);
  add_double (b, "goodput_hi", r->mc.goodput_hi);
  add_double (b, "failures", r->mc.failures);
  add_double (b, "checkpoint_s", r->mc.checkpoint_s);
  add_double (b, "lost_s", r->mc.lost_s);
  add_double (b, "restart_s", r->mc.restart_s);
  add_double (b, "wait_s", r->mc.wait_s);
  json_builder_end_object (b);
  if (r->has_cost)
    {
      json_builder_set_member_name (b, "cost");
      json_builder_begin_object (b);
      add_double (b, "it_W", r->cost.it_w);
      add_double (b, "facility_W", r->cost.facility_w);
      add_double (b, "usd_per_hour", r->cost.usd_per_hour);
      add_double (b, "step_usd", r->cost.step_usd);
      add_double (b, "step_kWh", r->cost.step_kwh);
      add_double (b, "step_kgCO2e", r->cost.step_kg_co2e);
      add_double (b, "run_usd", r->cost.run_usd);
      add_double (b, "run_kWh", r->cost.run_kwh);
      add_double (b, "run_kgCO2e", r->cost.run_kg_co2e);
      add_double (b, "usd_per_Mtok", r->cost.mtok_usd);
      add_double (b, "kWh_per_Mtok", r->cost.mtok_kwh);
      add_double (b, "kgCO2e_per_Mtok", r->cost.mtok_kg_co2e);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

static char *
hours (double s)
{
  if (s >= 2 * 86400)
    return g_strdup_printf ("%.2f days", s / 86400);
  if (s >= 7200)
    return g_strdup_printf ("%.2f h", s / 3600);
  if (s >= 120)
    return g_strdup_printf ("%.1f min", s / 60);
  return g_strdup_printf ("%.2f s", s);
}

static void
write_text (FILE *out, const Options *o, const SimScenario *sc, const Row *r)
{
  const SimGoodputInputs *in = &r->in;
  const SimGoodputParams *p = &in->params;
  fprintf (out, "scenario          %s\n", sim_scenario_run (sc)->name ? sim_scenario_run (sc)->name : "");
  fprintf (out, "GPUs              %d in %d nodes\n", r->gpus, sim_scenario_run (sc)->nodes);
  if (r->step_hi_s > 0)
    fprintf (out, "step time         %.4f s (%.4f–%.4f, 90%%; %s)\n", r->step_s, r->step_lo_s, r->step_hi_s,
             o->step_source);
  else
    fprintf (out, "step time         %.4f s (%s%s)\n", r->step_s, o->step_source,
             o->simulate ? "; no band: profile not calibrated" : "");
  g_autofree char *plain = hours (r->an.plain_s);
  fprintf (out, "run               %.0f steps, %.4g tokens; without failures %s (init %.0f s + steps)\n", r->steps,
           r->tokens, plain, p->init_s);
  fprintf (out, "\nfailures          count      per component/day   job/day    MTBF of the job\n");
  for (int i = 0; i < SIM_FAILURE_COUNT; i++)
    if (in->rate_per_s[i] > 0)
      fprintf (out, "  %-14s %9.0f  %14.4g  %10.4f\n", sim_failure_source_name (i), in->count[i],
               in->rate_per_s[i] * 86400, in->count[i] * in->rate_per_s[i] * 86400);
  if (in->failures_per_day > 0)
    fprintf (out, "  %-14s %9s  %14s  %10.4f  %.3f h (%s failures, %.0f%% take a node out)\n", "total", "", "",
             in->failures_per_day, r->an.mtbf_s / 3600,
             p->distribution == SIM_GOODPUT_WEIBULL ? "Weibull" : "exponential", 100 * p->hardware_fraction);
  else
    fprintf (out, "  none: [reliability] gives no failure rates\n");
  fprintf (out, "\ncheckpoint        %.1f GB (%s); write %.1f s at %.4g GB/s, read %.1f s; %s\n",
           in->checkpoint_bytes / 1e9, in->checkpoint_derived ? "weights + optimizer state" : "given",
           in->write_s, in->write_bytes_per_s / 1e9, in->read_s,
           in->async ? "asynchronous" : "synchronous");
  if (in->async)
    fprintf (out, "                  training blocks %.2f s per checkpoint (snapshot), durable %.1f s after it starts\n",
             p->checkpoint_block_s, p->checkpoint_write_s);
  fprintf (out, "restart           %.1f s (re-init + reload + warm-up)", p->restart_s);
  if (p->repair_s > 0)
    fprintf (out, "; repair %.1f h, %d spare nodes", p->repair_s / 3600, p->spare_nodes);
  fprintf (out, "\n");
  if (r->an.mtbf_s > 0)
    fprintf (out, "interval          Young %.1f min, Daly %.1f min; used %.1f min (%" G_GINT64_FORMAT " steps)%s\n",
             r->an.young_interval_s / 60, r->an.daly_interval_s / 60, r->an.interval_s / 60, r->an.interval_steps,
             p->interval_s > 0 ? ", given" : "");
  g_autofree char *exp_a = hours (r->an.expected_s);
  g_autofree char *exp_m = hours (r->mc.mean_s);
  fprintf (out, "\nanalytic          expected %s, goodput %.4f, %.1f failures, %.0f checkpoints (%s%s)\n", exp_a,
           r->an.goodput, r->an.expected_failures, r->an.checkpoints,
           p->distribution == SIM_GOODPUT_EXPONENTIAL && !in->async && (p->repair_s == 0 || p->spare_nodes > 0)
             ? "Daly's model, exact for these inputs" : "Daly's model, approximate for these inputs",
           p->spare_nodes > 0 && p->repair_s > 0 ? " if spares never run out" : "");
  fprintf (out, "Monte Carlo       expected %s ± %.2f%% (95%% CI), goodput %.4f [%.4f, %.4f]\n", exp_m,
           100 * r->mc.ci95_s / r->mc.mean_s, r->mc.goodput, r->mc.goodput_lo, r->mc.goodput_hi);
  fprintf (out, "                  %d runs, seed %" G_GUINT64_FORMAT "; p5 %.4g h, p50 %.4g h, p95 %.4g h; per run: "
           "%.1f failures, lost %.2f h, restarts %.2f h, checkpoints %.2f h, waits %.2f h\n",
           r->mc.trials, r->mc.seed, r->mc.p05_s / 3600, r->mc.p50_s / 3600, r->mc.p95_s / 3600, r->mc.failures,
           r->mc.lost_s / 3600, r->mc.restart_s / 3600, r->mc.checkpoint_s / 3600, r->mc.wait_s / 3600);
  if (r->has_cost)
    {
      fprintf (out, "\ncost              IT %.1f kW, facility %.1f kW; $%.0f per hour of the job\n", r->cost.it_w / 1e3,
               r->cost.facility_w / 1e3, r->cost.usd_per_hour);
      fprintf (out, "  per step        $%.4g   %.4g kWh   %.4g kgCO2e\n", r->cost.step_usd, r->cost.step_kwh,
               r->cost.step_kg_co2e);
      fprintf (out, "  per run         $%.4g   %.4g MWh   %.4g tCO2e (Monte Carlo mean wall time)\n", r->cost.run_usd,
               r->cost.run_kwh / 1e3, r->cost.run_kg_co2e / 1e3);
      if (r->tokens > 0)
        fprintf (out, "  per 1M tokens   $%.4g   %.4g kWh   %.4g kgCO2e\n", r->cost.mtok_usd, r->cost.mtok_kwh,
                 r->cost.mtok_kg_co2e);
    }
}

static gboolean
parse_gpus (const char *text, GArray *out, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      char *end = NULL;
      gint64 v = g_ascii_strtoll (g_strstrip (parts[i]), &end, 10);
      if (!*parts[i] || *end || v < 1 || v > 4194304)
        {
          g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_SYNTAX,
                       "--sweep-gpus: '%s' is not a GPU count; give a comma-separated list such as 2688,5376,10752",
                       parts[i]);
          return FALSE;
        }
      int n = (int) v;
      g_array_append_val (out, n);
    }
  return TRUE;
}

static int
fail (GError *error)
{
  fprintf (stderr, "trainsim goodput: %s\n", error->message);
  int status = error->domain == SIM_SCENARIO_ERROR || error->domain == G_OPTION_ERROR ? 2 : 1;
  g_error_free (error);
  return status;
}

int
sim_cmd_goodput (int argc, char **argv)
{
  Options o = { 0 };
  o.trials = 1000;
  o.seed = 1;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o.sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { "step-s", 0, 0, G_OPTION_ARG_DOUBLE, &o.step_s, "Step time in seconds at the scenario's GPU count "
      "(default: the scenario's published measurement)", "S" },
    { "simulate", 0, 0, G_OPTION_ARG_NONE, &o.simulate, "Step time (and evaluations) from the step simulator "
      "at every scale (default when there is neither --step-s nor a measurement)", NULL },
    { "interval-min", 0, 0, G_OPTION_ARG_DOUBLE, &o.interval_min, "Minutes of training between checkpoints "
      "(default: [reliability] checkpoint_interval_min, 0 = Daly's optimum)", "M" },
    { "trials", 0, 0, G_OPTION_ARG_INT, &o.trials, "Monte Carlo runs (default 1000)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "Monte Carlo seed (default 1)", "SEED" },
    { "sweep-interval", 0, 0, G_OPTION_ARG_NONE, &o.sweep_interval, "Goodput over checkpoint intervals "
      "(Daly's optimum / 16 to x 16)", NULL },
    { "sweep-gpus", 0, 0, G_OPTION_ARG_STRING, &o.sweep_gpus, "Goodput over GPU counts (step time simulated with "
      "--simulate, else at constant throughput per GPU)", "N,N,..." },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o.format, "Output format: text (default), tsv, json", "FORMAT" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.files, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini...] - expected time to train under failures");
  g_option_context_set_summary (ctx,
    "Expected time to train, goodput (time without failures / expected time with them) and\n"
    "the checkpoint interval (Young, Daly) under the scenario's [reliability] failure rates,\n"
    "by Daly's analytic model and by seeded Monte Carlo over whole runs; cost and energy from\n"
    "[cost]. Scenario files and --set as for `trainsim run`.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  o.argv_text = argv_text;
  GError *error = NULL;
  int status = 0;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      status = fail (error);
      goto out;
    }
  const char *fmt = o.format ? o.format : "text";
  if (strcmp (fmt, "text") != 0 && strcmp (fmt, "tsv") != 0 && strcmp (fmt, "json") != 0)
    {
      fprintf (stderr, "trainsim goodput: --format %s: unknown format; use text, tsv or json\n", fmt);
      status = 2;
      goto out;
    }
  if (o.trials < 2 || o.step_s < 0 || o.interval_min < 0)
    {
      fprintf (stderr, "trainsim goodput: --trials must be >= 2, --step-s and --interval-min >= 0\n");
      status = 2;
      goto out;
    }
  {
    g_autoptr (SimScenario) base = load (&o, 0, &error);
    if (!base)
      {
        status = fail (error);
        goto out;
      }
    const SimScenarioRun *run = sim_scenario_run (base);
    int ref_gpus = sim_scenario_cluster (base)->gpus;
    double ref_step = o.step_s;
    o.step_source = "given (--step-s)";
    if (ref_step <= 0 && !o.simulate)
      {
        if (run->measured_step_time_s > 0 && sim_scenario_measured_applies (base, ref_gpus))
          {
            ref_step = run->measured_step_time_s;
            o.step_source = "published measurement of the scenario";
          }
        else
          o.simulate = TRUE;
      }
    if (o.simulate)
      {
        if (o.step_s > 0)
          {
            fprintf (stderr, "trainsim goodput: --simulate and --step-s exclude each other; keep one\n");
            status = 2;
            goto out;
          }
        o.step_source = "simulated (sim/runner.c), evaluations included";
        ref_step = 1;
      }
    double ref_tokens = tokens_per_step (base);
    GArray *rows = g_array_new (FALSE, TRUE, sizeof (Row));
    if (o.sweep_gpus)
      {
        if (!o.simulate)
          o.step_source = o.step_s > 0 ? "--step-s at the scenario's GPU count, ideal scaling to others"
                                       : "measurement at the scenario's GPU count, ideal scaling to others";
        g_autoptr (GArray) gpus = g_array_new (FALSE, FALSE, sizeof (int));
        if (!parse_gpus (o.sweep_gpus, gpus, &error))
          {
            g_array_unref (rows);
            status = fail (error);
            goto out;
          }
        for (guint i = 0; i < gpus->len && !error; i++)
          {
            g_autoptr (SimScenario) sc = load (&o, g_array_index (gpus, int, i), &error);
            Row r = { 0 };
            if (sc && evaluate (&o, sc, ref_step, ref_gpus, ref_tokens, 0, &r, &error))
              g_array_append_val (rows, r);
          }
      }
    else if (o.sweep_interval)
      {
        Row r0 = { 0 };
        if (evaluate (&o, base, ref_step, ref_gpus, ref_tokens, 0, &r0, &error))
          {
            double daly = r0.an.daly_interval_s > 0 ? r0.an.daly_interval_s : r0.an.interval_s;
            for (int k = -8; k <= 8 && !error; k++)
              {
                Row r = { 0 };
                if (evaluate (&o, base, ref_step, ref_gpus, ref_tokens, daly * pow (2, k / 2.0), &r, &error))
                  g_array_append_val (rows, r);
              }
          }
      }
    else
      {
        Row r = { 0 };
        if (evaluate (&o, base, ref_step, ref_gpus, ref_tokens, 0, &r, &error))
          g_array_append_val (rows, r);
      }
    if (error)
      {
        g_array_unref (rows);
        status = fail (error);
        goto out;
      }
    gboolean sweep = o.sweep_gpus || o.sweep_interval;
    if (strcmp (fmt, "json") == 0)
      {
        g_autoptr (JsonBuilder) b = json_builder_new ();
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "tool");
        json_builder_add_string_value (b, "trainsim goodput");
        json_builder_set_member_name (b, "version");
        json_builder_add_string_value (b, PACKAGE_VERSION " (git " TRAINSIM_GIT_REV ")");
        json_builder_set_member_name (b, "command");
        json_builder_add_string_value (b, argv_text);
        json_builder_set_member_name (b, "scenario");
        json_builder_add_string_value (b, run->name ? run->name : "");
        json_builder_set_member_name (b, "step_time_source");
        json_builder_add_string_value (b, o.step_source);
        json_builder_set_member_name (b, "rows");
        json_builder_begin_array (b);
        for (guint i = 0; i < rows->len; i++)
          write_row_json (b, &g_array_index (rows, Row, i));
        json_builder_end_array (b);
        json_builder_end_object (b);
        sim_report_print_json (stdout, b);
      }
    else if (strcmp (fmt, "tsv") == 0 || sweep)
      {
        write_provenance (stdout, &o, base, (guint64) o.seed);
        fputs (columns, stdout);
        for (guint i = 0; i < rows->len; i++)
          write_row_tsv (stdout, &g_array_index (rows, Row, i));
      }
    else
      write_text (stdout, &o, base, &g_array_index (rows, Row, 0));
    g_array_unref (rows);
  }
out:
  g_strfreev (o.files);
  g_strfreev (o.sets);
  g_free (o.sweep_gpus);
  g_free (o.format);
  return status;
}
