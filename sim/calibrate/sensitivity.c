/* Elasticity of the predicted step to each hardware and fabric constant (see sensitivity.h).
 *
 * Each perturbation is a fresh scenario load with one more --set: the loader range-checks the new
 * value exactly as it would a user's, so a refused side is the loader speaking, never a clamp of
 * ours. Jobs (two per constant) run on a GThreadPool; each writes only its own slot. */
#include "sim/calibrate/sensitivity.h"
#include <math.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"

G_DEFINE_QUARK (sim-sensitivity-error-quark, sim_sensitivity_error)

struct SimSensitivity {
  char *scenario;
  double delta;
  double base_s;
  GPtrArray *rows; /* SimSensitivityRow*, sorted */
};

typedef struct {
  const char *const *files;
  GPtrArray *sets;      /* the base sets plus "scenario.base_gpus=0"; NULL-terminated */
  char **assign;        /* per job: "group.key=value" */
  double *step_s;       /* per job; NAN when refused */
  char **refused;       /* per job */
} Jobs;

/* Step time of the scenario with `extra` as the last layer (NULL: none); NAN and *why on failure. */
static double
predict (const char *const *files, GPtrArray *sets, const char *extra, char **why)
{
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  for (guint i = 0; i + 1 < sets->len; i++)
    g_ptr_array_add (all, g_ptr_array_index (sets, i));
  if (extra)
    g_ptr_array_add (all, (gpointer) extra);
  g_ptr_array_add (all, NULL);
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load (files, (const char *const *) all->pdata, &error);
  SimPredictOptions po = { 0 };
  sim_runner_options_init (&po.run);
  SimRunnerPrediction pred;
  if (sc && sim_runner_predict (sc, &po, &pred, &error))
    return pred.step_s;
  if (why)
    *why = g_strdup (error ? error->message : "failed");
  g_clear_error (&error);
  return NAN;
}

static void
job_run (gpointer data, gpointer user)
{
  Jobs *j = user;
  guint i = GPOINTER_TO_UINT (data) - 1;
  j->step_s[i] = predict (j->files, j->sets, j->assign[i], &j->refused[i]);
}

void
sim_sensitivity_free (SimSensitivity *s)
{
  if (!s)
    return;
  g_free (s->scenario);
  if (s->rows)
    g_ptr_array_unref (s->rows);
  g_free (s);
}

static void
row_free (gpointer p)
{
  SimSensitivityRow *r = p;
  g_free (r->key);
  g_free (r->value);
  g_free (r->provenance);
  g_free (r->refused);
  g_free (r);
}

static int
by_magnitude (gconstpointer a, gconstpointer b)
{
  const SimSensitivityRow *x = *(SimSensitivityRow *const *) a, *y = *(SimSensitivityRow *const *) b;
  double ex = isnan (x->elasticity) ? -1 : fabs (x->elasticity);
  double ey = isnan (y->elasticity) ? -1 : fabs (y->elasticity);
  return ex < ey ? 1 : ex > ey ? -1 : 0; /* g_ptr_array_sort is stable: ties keep key order */
}

SimSensitivity *
sim_sensitivity_run (const char *const *files, const char *const *sets, const SimSensitivityOptions *options,
                     GError **error)
{
  double delta = options && options->delta > 0 ? options->delta : 0.05;
  if (!(delta > 0 && delta <= 0.5))
    {
      g_set_error (error, SIM_SENSITIVITY_ERROR, SIM_SENSITIVITY_ERROR_USAGE,
                   "the relative step must be in (0, 50] %%, not %g %%", delta * 100);
      return NULL;
    }
  g_autoptr (GPtrArray) base_sets = g_ptr_array_new ();
  for (int i = 0; sets && sets[i]; i++)
    g_ptr_array_add (base_sets, (gpointer) sets[i]);
  g_ptr_array_add (base_sets, (gpointer) "scenario.base_gpus=0");
  g_ptr_array_add (base_sets, NULL);

  g_autoptr (SimScenario) sc = sim_scenario_load (files, (const char *const *) base_sets->pdata, error);
  if (!sc)
    return NULL;
  SimPredictOptions po = { 0 };
  sim_runner_options_init (&po.run);
  SimRunnerPrediction pred;
  if (!sim_runner_predict (sc, &po, &pred, error))
    return NULL;

  SimSensitivity *s = g_new0 (SimSensitivity, 1);
  const char *name = sim_scenario_run (sc)->name;
  s->scenario = g_strdup (name && *name ? name : "the scenario");
  s->delta = delta;
  s->base_s = pred.step_s;
  s->rows = g_ptr_array_new_with_free_func (row_free);

  /* The constants: numeric [hardware] and [fabric] keys with a nonzero resolved value (a zero is
   * "absent" or "off" for these keys, and scaling it changes nothing). */
  g_autoptr (GPtrArray) assign = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < sim_scenario_n_keys (); i++)
    {
      const SimScenarioKeyInfo *k = sim_scenario_key (i);
      if ((strcmp (k->group, "hardware") != 0 && strcmp (k->group, "fabric") != 0) || strcmp (k->type, "double") != 0)
        continue;
      const SimScenarioValue *v = sim_scenario_lookup (sc, k->group, k->key);
      if (!v || !v->value)
        continue;
      char *end = NULL;
      double x = g_ascii_strtod (v->value, &end);
      if (end == v->value || !isfinite (x) || x == 0)
        continue;
      SimSensitivityRow *r = g_new0 (SimSensitivityRow, 1);
      r->key = g_strdup_printf ("%s.%s", k->group, k->key);
      r->value = g_strdup (v->value);
      r->provenance = v->source ? g_strdup (v->source)
                      : v->line > 0 ? g_strdup_printf ("%s:%d", v->file, v->line)
                                    : g_strdup (v->file ? v->file : "default");
      g_ptr_array_add (s->rows, r);
      char lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (lo, sizeof lo, "%.15g", x * (1 - delta));
      g_ascii_formatd (hi, sizeof hi, "%.15g", x * (1 + delta));
      g_ptr_array_add (assign, g_strdup_printf ("%s=%s", r->key, lo));
      g_ptr_array_add (assign, g_strdup_printf ("%s=%s", r->key, hi));
    }

  guint n = assign->len;
  Jobs j = { files, base_sets, (char **) assign->pdata, g_new (double, MAX (n, 1)), g_new0 (char *, MAX (n, 1)) };
  int threads = options && options->threads > 0 ? options->threads : (int) g_get_num_processors ();
  threads = MAX (1, MIN (threads, (int) MAX (n, 1)));
  GThreadPool *pool = threads > 1 ? g_thread_pool_new (job_run, &j, threads, TRUE, NULL) : NULL;
  for (guint i = 0; i < n; i++)
    if (pool)
      g_thread_pool_push (pool, GUINT_TO_POINTER (i + 1), NULL);
    else
      job_run (GUINT_TO_POINTER (i + 1), &j);
  if (pool)
    g_thread_pool_free (pool, FALSE, TRUE);

  double t0 = s->base_s;
  for (guint i = 0; i < s->rows->len; i++)
    {
      SimSensitivityRow *r = g_ptr_array_index (s->rows, i);
      r->lo_s = j.step_s[2 * i];
      r->hi_s = j.step_s[2 * i + 1];
      if (!isnan (r->lo_s) && !isnan (r->hi_s))
        r->elasticity = (r->hi_s - r->lo_s) / (2 * delta * t0);
      else if (!isnan (r->hi_s))
        r->elasticity = (r->hi_s - t0) / (delta * t0);
      else if (!isnan (r->lo_s))
        r->elasticity = (t0 - r->lo_s) / (delta * t0);
      else
        r->elasticity = NAN;
      char *lo = j.refused[2 * i], *hi = j.refused[2 * i + 1];
      if (lo && hi)
        r->refused = g_strdup_printf ("-%g %%: %s; +%g %%: %s", delta * 100, lo, delta * 100, hi);
      else if (lo || hi)
        r->refused = g_strdup_printf ("%c%g %%: %s", lo ? '-' : '+', delta * 100, lo ? lo : hi);
      g_free (lo);
      g_free (hi);
    }
  g_free (j.step_s);
  g_free (j.refused);
  g_ptr_array_sort (s->rows, by_magnitude);
  return s;
}

const char *
sim_sensitivity_scenario (const SimSensitivity *s)
{
  return s->scenario;
}

double
sim_sensitivity_delta (const SimSensitivity *s)
{
  return s->delta;
}

double
sim_sensitivity_base_s (const SimSensitivity *s)
{
  return s->base_s;
}

guint
sim_sensitivity_n_rows (const SimSensitivity *s)
{
  return s->rows->len;
}

const SimSensitivityRow *
sim_sensitivity_row (const SimSensitivity *s, guint i)
{
  g_return_val_if_fail (i < s->rows->len, NULL);
  return g_ptr_array_index (s->rows, i);
}

/* A provenance line cut to `width` characters (on a character boundary) for the text table. */
static char *
shorten (const char *text, glong width)
{
  if (g_utf8_strlen (text, -1) <= width)
    return g_strdup (text);
  g_autofree char *head = g_utf8_substring (text, 0, width - 1);
  return g_strconcat (head, "…", NULL);
}

void
sim_sensitivity_print_text (const SimSensitivity *s, FILE *out, double min_abs)
{
  double pct = s->delta * 100;
  fprintf (out, "Sensitivity of %s: step %.4f s; each constant scaled by ±%g %%\n", s->scenario, s->base_s, pct);
  fprintf (out, "elasticity = d ln(step) / d ln(constant): -0.5 means 1 %% better takes 0.5 %% off the step\n\n");
  fprintf (out, "%-38s %12s %10s %10s %10s  %s\n", "constant", "value", "-step s", "+step s", "elasticity",
           "source");
  GString *quiet = g_string_new (NULL);
  guint n_quiet = 0;
  for (guint i = 0; i < s->rows->len; i++)
    {
      const SimSensitivityRow *r = g_ptr_array_index (s->rows, i);
      if (min_abs > 0 && !isnan (r->elasticity) && fabs (r->elasticity) < min_abs)
        {
          g_string_append_printf (quiet, "%s%s", n_quiet++ ? ", " : "", r->key);
          continue;
        }
      g_autofree char *src = shorten (r->provenance, 60);
      char lo[32], hi[32], e[32];
      g_snprintf (lo, sizeof lo, isnan (r->lo_s) ? "refused" : "%.4f", r->lo_s);
      g_snprintf (hi, sizeof hi, isnan (r->hi_s) ? "refused" : "%.4f", r->hi_s);
      g_snprintf (e, sizeof e, isnan (r->elasticity) ? "n/a" : "%+.3f", r->elasticity);
      fprintf (out, "%-38s %12s %10s %10s %10s  %s\n", r->key, r->value, lo, hi, e, src);
      if (r->refused)
        fprintf (out, "%-38s   refused %s\n", "", r->refused);
    }
  if (n_quiet)
    fprintf (out, "\n%u constants move the step by less than %g %% per %%: %s\n", n_quiet, min_abs * 100, quiet->str);
  g_string_free (quiet, TRUE);
}

/* Tabs and newlines of free text (messages, sources) as spaces, so a row stays one TSV line. */
static char *
one_field (const char *text)
{
  return g_strdelimit (g_strdup (text ? text : ""), "\t\n\r", ' ');
}

void
sim_sensitivity_print_tsv (const SimSensitivity *s, FILE *out)
{
  fprintf (out, "# scenario\t%s\n# step_s\t%.17g\n# delta\t%.17g\n", s->scenario, s->base_s, s->delta);
  fprintf (out, "key\tvalue\tlo_step_s\thi_step_s\telasticity\trefused\tsource\n");
  for (guint i = 0; i < s->rows->len; i++)
    {
      const SimSensitivityRow *r = g_ptr_array_index (s->rows, i);
      g_autofree char *why = one_field (r->refused);
      g_autofree char *src = one_field (r->provenance);
      fprintf (out, "%s\t%s\t%.17g\t%.17g\t%.17g\t%s\t%s\n", r->key, r->value, r->lo_s, r->hi_s, r->elasticity, why,
               src);
    }
}

/* JSON has no NaN: a refused side is null. */
static void
add_number (JsonBuilder *b, const char *name, double x)
{
  json_builder_set_member_name (b, name);
  if (isnan (x))
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, x);
}

char *
sim_sensitivity_to_json (const SimSensitivity *s)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "scenario");
  json_builder_add_string_value (b, s->scenario);
  add_number (b, "step_time_s", s->base_s);
  add_number (b, "delta", s->delta);
  json_builder_set_member_name (b, "constants");
  json_builder_begin_array (b);
  for (guint i = 0; i < s->rows->len; i++)
    {
      const SimSensitivityRow *r = g_ptr_array_index (s->rows, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "key");
      json_builder_add_string_value (b, r->key);
      json_builder_set_member_name (b, "value");
      json_builder_add_string_value (b, r->value);
      add_number (b, "lo_step_s", r->lo_s);
      add_number (b, "hi_step_s", r->hi_s);
      add_number (b, "elasticity", r->elasticity);
      json_builder_set_member_name (b, "refused");
      if (r->refused)
        json_builder_add_string_value (b, r->refused);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "source");
      json_builder_add_string_value (b, r->provenance);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}
