/* Stays ~850 lines: grid, evaluation, resume log and table output share the SimSweep row format. */
/* Parameter sweeps over scenario keys: grid, evaluation, row format, resume log, table output.
 * See sim/plan/sweep.h. A point is predicted by the step simulator (sim/step/runner.h) or, with --estimate,
 * by sim/plan/estimate.h's closed form; the `model` provenance line says which. */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sim/plan/sweep.h"
#include "model/plan.h"
#include "sim/step/runner.h"

G_DEFINE_QUARK (sim-sweep-error-quark, sim_sweep_error)

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct {
  char *key;        /* group.key */
  GPtrArray *values;
} Axis;

struct SimSweep {
  char **files;
  char **sets;
  GPtrArray *axes;  /* Axis* */
  gboolean simulate;
};

void
sim_sweep_set_simulate (SimSweep *sw, gboolean simulate)
{
  sw->simulate = simulate;
}

gboolean
sim_sweep_get_simulate (const SimSweep *sw)
{
  return sw->simulate;
}

static const char *
model_name (const SimSweep *sw)
{
  return sw->simulate ? "step simulation (sim/runner.c)" : "closed-form estimate (sim/estimate.c)";
}

static const char *const status_names[] = { "ok", "invalid", "no-fit" };

gboolean
sim_sweep_row_predicted (const SimSweepRow *row)
{
  return row->status == SIM_SWEEP_OK || row->status == SIM_SWEEP_NO_FIT;
}

const char *
sim_sweep_status_name (SimSweepStatus s)
{
  g_return_val_if_fail ((unsigned) s < G_N_ELEMENTS (status_names), "?");
  return status_names[s];
}

gboolean
sim_sweep_parse_format (const char *s, SimSweepFormat *out)
{
  if (g_strcmp0 (s, "text") == 0)
    *out = SIM_SWEEP_TEXT;
  else if (g_strcmp0 (s, "tsv") == 0)
    *out = SIM_SWEEP_TSV;
  else if (g_strcmp0 (s, "json") == 0)
    *out = SIM_SWEEP_JSON;
  else
    return FALSE;
  return TRUE;
}

void
sim_sweep_row_clear (SimSweepRow *row)
{
  if (!row)
    return;
  g_strfreev (row->values);
  g_free (row->reason);
  memset (row, 0, sizeof *row);
}

static void
axis_free (gpointer p)
{
  Axis *a = p;
  g_free (a->key);
  g_ptr_array_unref (a->values);
  g_free (a);
}

SimSweep *
sim_sweep_new (const char *const *files, const char *const *sets)
{
  SimSweep *sw = g_new0 (SimSweep, 1);
  sw->files = g_strdupv ((char **) (files ? files : (const char *const[]) { NULL }));
  sw->sets = g_strdupv ((char **) (sets ? sets : (const char *const[]) { NULL }));
  sw->axes = g_ptr_array_new_with_free_func (axis_free);
  sw->simulate = TRUE;
  return sw;
}

void
sim_sweep_free (SimSweep *sw)
{
  if (!sw)
    return;
  g_strfreev (sw->files);
  g_strfreev (sw->sets);
  g_ptr_array_unref (sw->axes);
  g_free (sw);
}

static gboolean
key_known (const char *group, const char *key)
{
  for (guint i = 0; i < sim_scenario_n_keys (); i++)
    {
      const SimScenarioKeyInfo *k = sim_scenario_key (i);
      if (strcmp (k->group, group) == 0 && strcmp (k->key, key) == 0)
        return TRUE;
    }
  return FALSE;
}

/* A value may not carry the characters of the row format. */
static gboolean
value_ok (const char *v)
{
  return *v && !strpbrk (v, "\t\n\r\"\\");
}

gboolean
sim_sweep_add_vary (SimSweep *sw, const char *spec, GError **error)
{
  const char *eq = strchr (spec, '=');
  const char *dot = strchr (spec, '.');
  if (!eq || !dot || dot > eq || dot == spec || dot + 1 == eq || !eq[1])
    {
      g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_USAGE,
                   "--vary '%s': expected group.key=V1,V2,… (e.g. --vary cluster.gpus=1024,2048,4096)", spec);
      return FALSE;
    }
  g_autofree char *group = g_strstrip (g_strndup (spec, dot - spec));
  g_autofree char *key = g_strstrip (g_strndup (dot + 1, eq - dot - 1));
  if (!key_known (group, key))
    {
      g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_USAGE,
                   "--vary '%s': [%s] %s is not a scenario key; `trainsim run --keys` lists them", spec, group, key);
      return FALSE;
    }
  /* Values that themselves hold commas (parallel.order) are separated by ';'. */
  const char *sep = strchr (eq + 1, ';') ? ";" : ",";
  g_auto (GStrv) parts = g_strsplit (eq + 1, sep, -1);
  Axis *a = g_new0 (Axis, 1);
  a->key = g_strdup_printf ("%s.%s", group, key);
  a->values = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; parts[i]; i++)
    {
      char *v = g_strstrip (parts[i]);
      if (!value_ok (v))
        {
          g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_USAGE,
                       "--vary '%s': value %d is empty or holds a tab, quote or backslash", spec, i + 1);
          axis_free (a);
          return FALSE;
        }
      g_ptr_array_add (a->values, g_strdup (v));
    }
  for (guint i = 0; i < sw->axes->len; i++)
    if (strcmp (((Axis *) sw->axes->pdata[i])->key, a->key) == 0)
      {
        g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_USAGE,
                     "--vary %s given twice; list all its values in one --vary", a->key);
        axis_free (a);
        return FALSE;
      }
  g_ptr_array_add (sw->axes, a);
  return TRUE;
}

guint
sim_sweep_n_axes (const SimSweep *sw)
{
  return sw->axes->len;
}

const char *
sim_sweep_axis_key (const SimSweep *sw, guint axis)
{
  g_return_val_if_fail (axis < sw->axes->len, NULL);
  return ((Axis *) sw->axes->pdata[axis])->key;
}

guint
sim_sweep_n_points (const SimSweep *sw)
{
  guint64 n = 1;
  for (guint i = 0; i < sw->axes->len; i++)
    n *= ((Axis *) sw->axes->pdata[i])->values->len;
  return (guint) MIN (n, G_MAXUINT);
}

/* Value index of each axis for point `index`: the last axis varies fastest. */
static const char *
point_value (const SimSweep *sw, guint index, guint axis)
{
  guint rest = index;
  for (guint i = sw->axes->len; i-- > 0;)
    {
      const Axis *a = sw->axes->pdata[i];
      guint k = rest % a->values->len;
      rest /= a->values->len;
      if (i == axis)
        return a->values->pdata[k];
    }
  return NULL;
}

char **
sim_sweep_point_sets (const SimSweep *sw, guint index)
{
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; i < sw->axes->len; i++)
    g_ptr_array_add (out, g_strdup_printf ("%s=%s", ((Axis *) sw->axes->pdata[i])->key, point_value (sw, index, i)));
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* One line, no tabs: row fields cannot hold them. */
static char *
flatten (const char *msg)
{
  char *s = g_strdup (msg);
  for (char *p = s; *p; p++)
    if (*p == '\t' || *p == '\n' || *p == '\r')
      *p = ' ';
  return s;
}

static void
fill_plan (SimSweepRow *row, const ModelPlan *plan)
{
  row->gpus = plan->gpus, row->tp = plan->tp, row->pp = plan->pp, row->vpp = plan->vpp;
  row->cp = plan->cp, row->dp = plan->dp, row->ep = plan->ep;
  row->micro_batch = plan->micro_batch, row->global_batch = plan->global_batch;
}

/* The reason of a point that does not fit: its memory against the GPU's, and what was done. */
static char *
no_fit_reason (const SimScenario *sc, double bytes, const char *how)
{
  return g_strdup_printf ("does not fit: %.2f GiB per GPU of %.2f GiB; step %s as if it fit (the memory model "
                          "may overstate a run that ran: `trainsim run` prints the largest item and the cheapest "
                          "change that fits)", bytes / GIB, sim_scenario_gpu (sc)->hbm_bytes / GIB, how);
}

static gboolean
point_error (const GError *err)
{
  return err->domain == SIM_SCENARIO_ERROR
         && (err->code == SIM_SCENARIO_ERROR_VALUE || err->code == SIM_SCENARIO_ERROR_INVALID);
}

gboolean
sim_sweep_check (const SimSweep *sw, GError **error)
{
  if (sim_sweep_n_points (sw) == 0)
    return TRUE;
  g_auto (GStrv) point = sim_sweep_point_sets (sw, 0);
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_strv_builder_addv (b, (const char **) sw->sets);
  g_strv_builder_addv (b, (const char **) point);
  g_auto (GStrv) sets = g_strv_builder_end (b);
  GError *err = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) sw->files, (const char *const *) sets, &err);
  if (sc || point_error (err))
    {
      g_clear_error (&err);
      return TRUE;
    }
  g_propagate_error (error, err);
  return FALSE;
}

gboolean
sim_sweep_eval (const SimSweep *sw, guint index, SimSweepRow *row, GError **error)
{
  sim_sweep_row_clear (row);
  row->index = index;
  GPtrArray *vals = g_ptr_array_new ();
  for (guint i = 0; i < sw->axes->len; i++)
    g_ptr_array_add (vals, g_strdup (point_value (sw, index, i)));
  g_ptr_array_add (vals, NULL);
  row->values = (char **) g_ptr_array_free (vals, FALSE);

  g_auto (GStrv) point = sim_sweep_point_sets (sw, index);
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_strv_builder_addv (b, (const char **) sw->sets);
  g_strv_builder_addv (b, (const char **) point);
  /* The sweep computes scaling efficiency from its own rows: the simulator need not simulate the
   * scenario's [scenario] base_gpus scale at every point. */
  if (sw->simulate)
    g_strv_builder_add (b, "scenario.base_gpus=0");
  g_auto (GStrv) sets = g_strv_builder_end (b);
  GError *err = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) sw->files, (const char *const *) sets, &err);
  if (!sc)
    {
      if (point_error (err))
        {
          row->status = SIM_SWEEP_INVALID;
          row->reason = flatten (err->message);
          g_error_free (err);
          return TRUE;
        }
      g_propagate_error (error, err);
      return FALSE;
    }
  const ModelPlan *plan = sim_scenario_plan (sc);
  fill_plan (row, plan);
  if (sw->simulate)
    {
      SimPredictOptions po = { 0 };
      sim_runner_options_init (&po.run);
      po.run.memory_overhead_bytes = sim_scenario_run (sc)->memory_overhead_bytes;
      /* Over capacity is a finding, never a refusal (as in `run`): the memory model may overstate a
       * run that ran, so the point is simulated as if it fit and marked no-fit. */
      po.run.memory_advisory = TRUE;
      SimRunnerPrediction pred;
      if (!sim_runner_predict (sc, &po, &pred, &err))
        {
          /* Every failure here is the point's: an invalid plan, a collective the fabric cannot carry
           * (memory is advisory, so not a fit). */
          row->status = SIM_SWEEP_INVALID;
          row->reason = flatten (err->message);
          g_error_free (err);
          ModelMemory mem;
          model_memory_check (sim_scenario_shape (sc), plan, sim_scenario_gpu (sc)->hbm_bytes,
                              sim_scenario_run (sc)->memory_overhead_bytes, &mem, NULL);
          row->memory_bytes = mem.total_bytes;
          return TRUE;
        }
      row->status = pred.step.memory_over ? SIM_SWEEP_NO_FIT : SIM_SWEEP_OK;
      if (pred.step.memory_over)
        row->reason = no_fit_reason (sc, pred.step.memory_bytes, "simulated");
      row->step_s = pred.step_s;
      row->step_lo_s = pred.step_lo_s;
      row->step_hi_s = pred.step_hi_s;
      /* The breakdown sums to the simulated step; scale it to the reported one (VM overhead). */
      double sim_s = pred.step.step_ns * 1e-9;
      double f = sim_s > 0 ? pred.step_s / sim_s : 1.0;
      G_STATIC_ASSERT ((int) SIM_EST_COUNT == (int) SIM_BD_COUNT);
      for (int i = 0; i < SIM_EST_COUNT; i++)
        row->part_s[i] = pred.step.breakdown_s[i] * f;
      row->mfu = pred.step.mfu / f;
      row->tokens_per_s = pred.step.tokens_per_step / pred.step_s;
      row->memory_bytes = pred.step.memory_bytes;
      row->time_to_train_s = pred.time_to_train_s;
      return TRUE;
    }
  SimEstimateHw hw;
  sim_estimate_hw_from_scenario (sc, &hw);
  SimEstimate est;
  gboolean ok = sim_estimate_step (sim_scenario_shape (sc), plan, &hw, TRUE, &est, &err);
  row->memory_bytes = est.memory_bytes;
  row->status = SIM_SWEEP_OK;
  if (!ok && g_error_matches (err, MODEL_ERROR, MODEL_ERROR_OUT_OF_MEMORY))
    {
      /* Over capacity: estimated as if it fit (see the simulated branch). */
      g_clear_error (&err);
      row->status = SIM_SWEEP_NO_FIT;
      row->reason = no_fit_reason (sc, est.memory_bytes, "estimated");
      ok = sim_estimate_step (sim_scenario_shape (sc), plan, &hw, FALSE, &est, &err);
    }
  if (!ok)
    {
      row->status = SIM_SWEEP_INVALID;
      g_free (row->reason);
      row->reason = flatten (err->message);
      g_error_free (err);
      return TRUE;
    }
  row->step_s = est.step_s;
  memcpy (row->part_s, est.part_s, sizeof row->part_s);
  row->mfu = est.mfu;
  row->tokens_per_s = est.tokens_per_s;
  const SimScenarioRun *run = sim_scenario_run (sc);
  double steps = (double) run->steps;
  if (steps <= 0 && run->tokens > 0)
    steps = ceil (run->tokens / ((double) plan->global_batch * sim_scenario_shape (sc)->seq_len));
  if (steps > 0)
    row->time_to_train_s = run->init_s + steps * row->step_s;
  return TRUE;
}

gboolean
sim_sweep_memory (const SimSweep *sw, guint index, ModelMemory *out, double *capacity_bytes)
{
  g_auto (GStrv) point = sim_sweep_point_sets (sw, index);
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  g_strv_builder_addv (b, (const char **) sw->sets);
  g_strv_builder_addv (b, (const char **) point);
  g_auto (GStrv) sets = g_strv_builder_end (b);
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) sw->files, (const char *const *) sets, NULL);
  if (!sc)
    return FALSE;
  *capacity_bytes = sim_scenario_gpu (sc)->hbm_bytes;
  model_memory_check (sim_scenario_shape (sc), sim_scenario_plan (sc), *capacity_bytes,
                      sim_scenario_run (sc)->memory_overhead_bytes, out, NULL);
  return TRUE;
}

/* ---- Row format ------------------------------------------------------------------------------ */

#define N_INT 9
#define N_DBL (7 + SIM_EST_COUNT)

char *
sim_sweep_header_line (const SimSweep *sw)
{
  GString *s = g_string_new ("point\tstatus\tgpus\ttp\tpp\tvpp\tcp\tdp\tep\tmicro_batch\tglobal_batch\tstep_s\t"
                              "step_lo_s\tstep_hi_s");
  for (int i = 0; i < SIM_EST_COUNT; i++)
    g_string_append_printf (s, "\t%s_s", sim_estimate_part_name (i));
  g_string_append (s, "\tmfu\ttokens_per_s\tmemory_GiB\ttime_to_train_s");
  for (guint i = 0; i < sw->axes->len; i++)
    g_string_append_printf (s, "\t%s", ((Axis *) sw->axes->pdata[i])->key);
  g_string_append (s, "\treason");
  return g_string_free (s, FALSE);
}

char *
sim_sweep_row_to_line (const SimSweepRow *row, guint n_axes)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%u\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", row->index,
                          sim_sweep_status_name (row->status), row->gpus, row->tp, row->pp, row->vpp, row->cp,
                          row->dp, row->ep, row->micro_batch, row->global_batch);
  double d[N_DBL];
  int k = 0;
  d[k++] = row->step_s;
  d[k++] = row->step_lo_s;
  d[k++] = row->step_hi_s;
  for (int i = 0; i < SIM_EST_COUNT; i++)
    d[k++] = row->part_s[i];
  d[k++] = row->mfu;
  d[k++] = row->tokens_per_s;
  d[k++] = row->memory_bytes / GIB;
  d[k++] = row->time_to_train_s;
  for (int i = 0; i < k; i++)
    g_string_append_printf (s, "\t%.17g", d[i]);
  for (guint i = 0; i < n_axes; i++)
    g_string_append_printf (s, "\t%s", row->values && row->values[i] ? row->values[i] : "");
  g_string_append_printf (s, "\t%s", row->reason ? row->reason : "");
  return g_string_free (s, FALSE);
}

gboolean
sim_sweep_row_from_line (const char *line, guint n_axes, SimSweepRow *row, GError **error)
{
  sim_sweep_row_clear (row);
  g_auto (GStrv) f = g_strsplit (line, "\t", -1);
  guint want = 2 + N_INT + N_DBL + n_axes + 1;
  if (g_strv_length (f) != want)
    goto bad;
  char *end;
  guint64 idx = g_ascii_strtoull (f[0], &end, 10);
  if (*end || end == f[0])
    goto bad;
  row->index = (guint) idx;
  gboolean found = FALSE;
  for (guint s = 0; s < G_N_ELEMENTS (status_names); s++)
    if (strcmp (f[1], status_names[s]) == 0)
      row->status = s, found = TRUE;
  if (!found)
    goto bad;
  int *ints[N_INT] = { &row->gpus, &row->tp, &row->pp, &row->vpp, &row->cp, &row->dp, &row->ep,
                       &row->micro_batch, &row->global_batch };
  for (int i = 0; i < N_INT; i++)
    {
      gint64 v = g_ascii_strtoll (f[2 + i], &end, 10);
      if (*end || end == f[2 + i])
        goto bad;
      *ints[i] = (int) v;
    }
  double d[N_DBL];
  for (int i = 0; i < N_DBL; i++)
    {
      d[i] = g_ascii_strtod (f[2 + N_INT + i], &end);
      if (*end || end == f[2 + N_INT + i])
        goto bad;
    }
  int k = 0;
  row->step_s = d[k++];
  row->step_lo_s = d[k++];
  row->step_hi_s = d[k++];
  for (int i = 0; i < SIM_EST_COUNT; i++)
    row->part_s[i] = d[k++];
  row->mfu = d[k++];
  row->tokens_per_s = d[k++];
  row->memory_bytes = d[k++] * GIB;
  row->time_to_train_s = d[k++];
  GPtrArray *vals = g_ptr_array_new ();
  for (guint i = 0; i < n_axes; i++)
    g_ptr_array_add (vals, g_strdup (f[2 + N_INT + N_DBL + i]));
  g_ptr_array_add (vals, NULL);
  row->values = (char **) g_ptr_array_free (vals, FALSE);
  const char *reason = f[2 + N_INT + N_DBL + n_axes];
  row->reason = *reason ? g_strdup (reason) : NULL;
  return TRUE;
bad:
  g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_RESUME, "not a sweep row: '%.80s'", line);
  return FALSE;
}

char *
sim_sweep_signature (const SimSweep *sw)
{
  GString *s = g_string_new (sw->simulate ? "# sweep" : "# sweep --estimate");
  for (int i = 0; sw->files[i]; i++)
    g_string_append_printf (s, " %s", sw->files[i]);
  for (int i = 0; sw->sets[i]; i++)
    g_string_append_printf (s, " --set %s", sw->sets[i]);
  for (guint i = 0; i < sw->axes->len; i++)
    {
      const Axis *a = sw->axes->pdata[i];
      g_string_append_printf (s, " --vary %s=", a->key);
      for (guint k = 0; k < a->values->len; k++)
        g_string_append_printf (s, "%s%s", k ? ";" : "", (char *) a->values->pdata[k]);
    }
  return g_string_free (s, FALSE);
}

/* ---- Resume log -------------------------------------------------------------------------------- */

struct SimSweepLog {
  FILE *f;
  char *path;
};

SimSweepLog *
sim_sweep_log_open (const SimSweep *sw, const char *path, GPtrArray *rows_out, GError **error)
{
  g_autofree char *sig = sim_sweep_signature (sw);
  g_autofree char *header = sim_sweep_header_line (sw);
  g_autofree char *text = NULL;
  gsize len = 0;
  gsize keep = 0;
  GError *err = NULL;
  if (g_file_get_contents (path, &text, &len, &err))
    {
      /* Only whole lines count: a line cut by an interrupt is dropped and recomputed. */
      const char *p = text;
      int line_no = 0;
      while (p < text + len)
        {
          const char *nl = memchr (p, '\n', text + len - p);
          if (!nl)
            break;
          g_autofree char *line = g_strndup (p, nl - p);
          line_no++;
          if (line_no == 1 && strcmp (line, sig) != 0)
            {
              g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_RESUME,
                           "%s: written by another sweep (first line '%.100s', expected '%.100s'); remove the "
                           "file or give another --out",
                           path, line, sig);
              return NULL;
            }
          if (line_no == 2 && strcmp (line, header) != 0)
            {
              g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_RESUME,
                           "%s:2: the column header differs from this version's; remove the file or give another --out",
                           path);
              return NULL;
            }
          if (line_no > 2)
            {
              SimSweepRow *row = g_new0 (SimSweepRow, 1);
              if (!sim_sweep_row_from_line (line, sw->axes->len, row, &err))
                {
                  g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_RESUME, "%s:%d: %s; remove the file to start over",
                               path, line_no, err->message);
                  g_error_free (err);
                  sim_sweep_row_clear (row);
                  g_free (row);
                  return NULL;
                }
              g_ptr_array_add (rows_out, row);
            }
          p = nl + 1;
          keep = p - text;
        }
      if (line_no < 2)
        keep = 0;
    }
  else if (!g_error_matches (err, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    {
      g_propagate_prefixed_error (error, err, "--out: ");
      return NULL;
    }
  else
    g_clear_error (&err);
  /* Rewrite to the last whole line (drops a torn row), then append. */
  FILE *f = fopen (path, keep > 0 ? "r+" : "w");
  if (!f || (keep > 0 && ftruncate (fileno (f), (off_t) keep) != 0) || fseek (f, 0, SEEK_END) != 0)
    {
      g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_RESUME, "--out %s: cannot write: %s", path,
                   g_strerror (errno));
      if (f)
        fclose (f);
      return NULL;
    }
  if (keep == 0)
    fprintf (f, "%s\n%s\n", sig, header);
  fflush (f);
  SimSweepLog *log = g_new0 (SimSweepLog, 1);
  log->f = f;
  log->path = g_strdup (path);
  return log;
}

gboolean
sim_sweep_log_append (SimSweepLog *log, const char *line, GError **error)
{
  /* One write per row, flushed: an interrupt loses at most the row being written. */
  if (fprintf (log->f, "%s\n", line) < 0 || fflush (log->f) != 0)
    {
      g_set_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_RESUME, "--out %s: write failed: %s", log->path,
                   g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

void
sim_sweep_log_close (SimSweepLog *log)
{
  if (!log)
    return;
  fclose (log->f);
  g_free (log->path);
  g_free (log);
}

/* ---- Scaling and output ---------------------------------------------------------------------- */

static int
gpus_axis (const SimSweep *sw)
{
  for (guint i = 0; i < sw->axes->len; i++)
    if (strcmp (((Axis *) sw->axes->pdata[i])->key, "cluster.gpus") == 0)
      return (int) i;
  return -1;
}

static gboolean
same_curve (const SimSweepRow *a, const SimSweepRow *b, guint n_axes, int skip)
{
  for (guint i = 0; i < n_axes; i++)
    if ((int) i != skip && g_strcmp0 (a->values[i], b->values[i]) != 0)
      return FALSE;
  return TRUE;
}

void
sim_sweep_scaling (const SimSweep *sw, SimSweepRow *const *rows, guint n, int base_gpus, SimSweepScaling mode,
                   double *eff_out)
{
  int ga = gpus_axis (sw);
  for (guint i = 0; i < n; i++)
    {
      eff_out[i] = NAN;
      if (ga < 0 || !sim_sweep_row_predicted (rows[i]))
        continue;
      const SimSweepRow *base = NULL;
      for (guint j = 0; j < n; j++)
        {
          const SimSweepRow *r = rows[j];
          if (!sim_sweep_row_predicted (r) || !same_curve (r, rows[i], sw->axes->len, ga))
            continue;
          if (base_gpus > 0 ? r->gpus == base_gpus : (!base || r->gpus < base->gpus))
            base = base && base_gpus > 0 ? base : r;
        }
      if (!base || base->step_s <= 0)
        continue;
      gboolean weak = mode == SIM_SWEEP_SCALING_WEAK
                      || (mode == SIM_SWEEP_SCALING_AUTO && rows[i]->global_batch != base->global_batch);
      eff_out[i] = weak ? base->step_s / rows[i]->step_s
                        : base->step_s * base->gpus / (rows[i]->step_s * rows[i]->gpus);
    }
}

static void
json_string (FILE *out, const char *s)
{
  fputc ('"', out);
  for (const char *p = s; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        fprintf (out, "\\%c", *p);
      else if ((unsigned char) *p < 0x20)
        fprintf (out, "\\u%04x", *p);
      else
        fputc (*p, out);
    }
  fputc ('"', out);
}

static void
json_number (FILE *out, double v)
{
  if (isfinite (v))
    fprintf (out, "%.6g", v);
  else
    fputs ("null", out);
}

void
sim_sweep_write (FILE *out, const SimSweep *sw, SimSweepRow *const *rows, guint n, const double *scaling,
                 SimSweepScaling mode, SimSweepFormat format, const char *argv_text)
{
  gboolean weak = mode == SIM_SWEEP_SCALING_WEAK;
  guint na = sw->axes->len;
  const char *scale_name = mode == SIM_SWEEP_SCALING_AUTO ? "scaling_eff"
                           : weak ? "weak_scaling_eff" : "strong_scaling_eff";
  if (format == SIM_SWEEP_TSV)
    {
      fprintf (out, "# trainsim %s sweep\n# command: %s\n# model: %s\n", PACKAGE_VERSION, argv_text ? argv_text : "",
               model_name (sw));
      for (guint i = 0; i < na; i++)
        fprintf (out, "%s\t", ((Axis *) sw->axes->pdata[i])->key);
      fprintf (out, "status\tgpus\ttp\tpp\tvpp\tcp\tdp\tep\tmicro_batch\tglobal_batch\tstep_s\tstep_lo_s\tstep_hi_s");
      for (int p = 0; p < SIM_EST_COUNT; p++)
        fprintf (out, "\t%s_s", sim_estimate_part_name (p));
      fprintf (out, "\tmfu\ttokens_per_s\tmemory_GiB\ttime_to_train_s%s%s\treason\n", scaling ? "\t" : "",
               scaling ? scale_name : "");
      for (guint r = 0; r < n; r++)
        {
          const SimSweepRow *w = rows[r];
          for (guint i = 0; i < na; i++)
            fprintf (out, "%s\t", w->values[i]);
          fprintf (out, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.6g", sim_sweep_status_name (w->status), w->gpus,
                   w->tp, w->pp, w->vpp, w->cp, w->dp, w->ep, w->micro_batch, w->global_batch, w->step_s);
          fprintf (out, "\t%.6g\t%.6g", w->step_lo_s, w->step_hi_s);
          for (int p = 0; p < SIM_EST_COUNT; p++)
            fprintf (out, "\t%.6g", w->part_s[p]);
          fprintf (out, "\t%.6g\t%.6g\t%.6g\t%.6g", w->mfu, w->tokens_per_s, w->memory_bytes / GIB,
                   w->time_to_train_s);
          if (scaling)
            fprintf (out, "\t%.6g", scaling[r]);
          fprintf (out, "\t%s\n", w->reason ? w->reason : "");
        }
      return;
    }
  if (format == SIM_SWEEP_JSON)
    {
      fprintf (out, "{\n  \"tool\": \"trainsim %s sweep\",\n  \"model\": \"%s\",\n  \"command\": ", PACKAGE_VERSION,
               model_name (sw));
      json_string (out, argv_text ? argv_text : "");
      fprintf (out, ",\n  \"axes\": [");
      for (guint i = 0; i < na; i++)
        {
          fprintf (out, "%s", i ? ", " : "");
          json_string (out, ((Axis *) sw->axes->pdata[i])->key);
        }
      fprintf (out, "],\n  \"rows\": [");
      for (guint r = 0; r < n; r++)
        {
          const SimSweepRow *w = rows[r];
          fprintf (out, "%s\n    {\"values\": {", r ? "," : "");
          for (guint i = 0; i < na; i++)
            {
              fprintf (out, "%s", i ? ", " : "");
              json_string (out, ((Axis *) sw->axes->pdata[i])->key);
              fprintf (out, ": ");
              json_string (out, w->values[i]);
            }
          fprintf (out, "}, \"status\": \"%s\", \"gpus\": %d, \"tp\": %d, \"pp\": %d, \"vpp\": %d, \"cp\": %d, "
                        "\"dp\": %d, \"ep\": %d, \"micro_batch\": %d, \"global_batch\": %d",
                   sim_sweep_status_name (w->status), w->gpus, w->tp, w->pp, w->vpp, w->cp, w->dp, w->ep,
                   w->micro_batch, w->global_batch);
          if (sim_sweep_row_predicted (w))
            {
              fprintf (out, ", \"step_s\": ");
              json_number (out, w->step_s);
              fprintf (out, ", \"step_time_lo_s\": ");
              json_number (out, w->step_hi_s > 0 ? w->step_lo_s : NAN);
              fprintf (out, ", \"step_time_hi_s\": ");
              json_number (out, w->step_hi_s > 0 ? w->step_hi_s : NAN);
              fprintf (out, ", \"breakdown_s\": {");
              for (int p = 0; p < SIM_EST_COUNT; p++)
                {
                  fprintf (out, "%s\"%s\": ", p ? ", " : "", sim_estimate_part_name (p));
                  json_number (out, w->part_s[p]);
                }
              fprintf (out, "}, \"mfu\": ");
              json_number (out, w->mfu);
              fprintf (out, ", \"tokens_per_s\": ");
              json_number (out, w->tokens_per_s);
              fprintf (out, ", \"time_to_train_s\": ");
              json_number (out, w->time_to_train_s);
              if (scaling)
                {
                  fprintf (out, ", \"%s\": ", scale_name);
                  json_number (out, scaling[r]);
                }
            }
          fprintf (out, ", \"memory_GiB\": ");
          json_number (out, w->memory_bytes / GIB);
          if (w->reason)
            {
              fprintf (out, ", \"reason\": ");
              json_string (out, w->reason);
            }
          fprintf (out, "}");
        }
      fprintf (out, "\n  ]\n}\n");
      return;
    }
  /* Text: one line per point; reasons of invalid points below the table. */
  fprintf (out, "Sweep: %u points (model: %s)\n\n", n, model_name (sw));
  int w_axis[64];
  for (guint i = 0; i < na && i < 64; i++)
    {
      w_axis[i] = (int) strlen (((Axis *) sw->axes->pdata[i])->key);
      for (guint r = 0; r < n; r++)
        w_axis[i] = MAX (w_axis[i], (int) strlen (rows[r]->values[i]));
    }
  for (guint i = 0; i < na && i < 64; i++)
    fprintf (out, "%-*s  ", w_axis[i], ((Axis *) sw->axes->pdata[i])->key);
  fprintf (out, "%-7s %6s %-22s %9s %-15s %6s %9s %9s %9s %9s %8s%s\n", "status", "gpus", "plan tp.pp.vpp.cp.dp.ep",
           "step s", "band s", "MFU %", "compute", "comm", "bubble", "mem GiB", "TTT h",
           scaling ? (mode == SIM_SWEEP_SCALING_AUTO ? "  scale eff" : weak ? "  weak eff" : "  strong eff") : "");
  for (guint r = 0; r < n; r++)
    {
      const SimSweepRow *w = rows[r];
      for (guint i = 0; i < na && i < 64; i++)
        fprintf (out, "%-*s  ", w_axis[i], w->values[i]);
      g_autofree char *plan = w->gpus ? g_strdup_printf ("%d.%d.%d.%d.%d.%d", w->tp, w->pp, w->vpp, w->cp, w->dp, w->ep)
                                      : g_strdup ("-");
      if (!sim_sweep_row_predicted (w))
        {
          fprintf (out, "%-7s %6d %-22s %9s %-15s %6s %9s %9s %9s ", sim_sweep_status_name (w->status), w->gpus, plan,
                   "-", "-", "-", "-", "-", "-");
          if (w->memory_bytes > 0)
            fprintf (out, "%9.1f\n", w->memory_bytes / GIB);
          else
            fprintf (out, "%9s\n", "-");
          continue;
        }
      double comm = w->part_s[SIM_EST_TP] + w->part_s[SIM_EST_CP] + w->part_s[SIM_EST_PP] + w->part_s[SIM_EST_DP]
                    + w->part_s[SIM_EST_EP];
      g_autofree char *band = w->step_hi_s > 0 ? g_strdup_printf ("%.4f–%.4f", w->step_lo_s, w->step_hi_s)
                                                : g_strdup ("-");
      fprintf (out, "%-7s %6d %-22s %9.4f %-15s %6.1f %9.4f %9.4f %9.4f %9.1f %8.2f", sim_sweep_status_name (w->status),
               w->gpus, plan, w->step_s,
               band, 100.0 * w->mfu, w->part_s[SIM_EST_COMPUTE], comm, w->part_s[SIM_EST_BUBBLE], w->memory_bytes / GIB,
               w->time_to_train_s / 3600.0);
      if (scaling)
        {
          if (isfinite (scaling[r]))
            fprintf (out, "  %8.1f%%", 100.0 * scaling[r]);
          else
            fprintf (out, "  %9s", "-");
        }
      fputc ('\n', out);
    }
  for (int pass = 0; pass < 2; pass++)
    {
      gboolean any = FALSE;
      for (guint r = 0; r < n; r++)
        if (rows[r]->reason && sim_sweep_row_predicted (rows[r]) == (pass == 1))
          {
            if (!any)
              fprintf (out, "\n%s:\n", pass ? "Over memory (predicted as if they fit)" : "Not predicted");
            any = TRUE;
            fprintf (out, "  point %u (", rows[r]->index);
            for (guint i = 0; i < na; i++)
              fprintf (out, "%s%s=%s", i ? ", " : "", ((Axis *) sw->axes->pdata[i])->key, rows[r]->values[i]);
            fprintf (out, "): %s\n", rows[r]->reason);
          }
    }
  if (scaling)
    fprintf (out, "\nScaling efficiency (%s): weak = step(base) / step where the global batch grows with the "
                  "GPUs, strong = step(base)·gpus(base) / (step·gpus) where it is kept; base: the smallest "
                  "predicted scale of each curve unless --base-gpus.\n",
             mode == SIM_SWEEP_SCALING_AUTO ? "weak or strong by whether the global batch grew"
             : weak ? "weak" : "strong");
}
