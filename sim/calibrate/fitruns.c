/* Fitting named profile constants to measured step times (sim/calibrate/fitruns.h).
 *
 * Residual of run i: r_i(p) = T_i(p) / M_i − 1 (relative error), minimized in the least-squares
 * sense; T_i(p) is one simulated step of run i's scenario with p set. The finite-difference step is
 * 1% of each parameter: the simulated step is a sum of integer-ns kernel times, flat under GSL's
 * default √ε step. The ranges below are the keys' physical ranges (efficiencies in (0, 1], the
 * overlap slowdown in [0, 1)), not tuning bounds. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/calibrate/fitruns.h"

typedef struct {
  const char *name, *group, *key;
  double lo, hi;
  gboolean zero_start_ok;     /* absent from the profile: start at 0 */
} Known;

static const Known known[] = {
  { "gemm_eff_max_bf16", "hardware", "gemm_eff_max_bf16", 0.02, 1.0, FALSE },
  { "gemm_eff_max_fp16", "hardware", "gemm_eff_max_fp16", 0.02, 1.0, FALSE },
  { "gemm_eff_max_fp8", "hardware", "gemm_eff_max_fp8", 0.02, 1.0, FALSE },
  { "gemm_eff_max_fp4", "hardware", "gemm_eff_max_fp4", 0.02, 1.0, FALSE },
  { "attn_eff", "hardware", "attn_eff", 0.02, 1.0, FALSE },
  { "attn_bwd_eff", "hardware", "attn_bwd_eff", 0.02, 1.0, FALSE },
  { "mem_eff", "hardware", "mem_eff", 0.02, 1.0, FALSE },
  { "nvlink_eff", "hardware", "nvlink_eff", 0.02, 1.0, FALSE },
  { "nic_eff", "fabric", "nic_eff", 0.02, 1.0, FALSE },
  { "overlap_slowdown", "hardware", "overlap_slowdown", 0.0, 0.95, TRUE },
};

const char *const sim_fitruns_default_params[] = { "gemm_eff_max_bf16", "nic_eff", "overlap_slowdown", NULL };

guint
sim_fitruns_n_known (void)
{
  return G_N_ELEMENTS (known);
}

const char *
sim_fitruns_known (guint i)
{
  return i < G_N_ELEMENTS (known) ? known[i].name : NULL;
}

void
sim_fitruns_result_clear (SimFitrunsResult *r)
{
  g_clear_pointer (&r->before_pct, g_free);
  g_clear_pointer (&r->after_pct, g_free);
  g_clear_pointer (&r->loo_pct, g_free);
}

typedef struct {
  const SimValidateDeck *deck;
  const SimValidateOptions *base;
  const Known *k[SIM_FITRUNS_MAX_PARAMS];
  int np;
  gboolean *active;           /* runs in the current fit */
  /* Cache of the last parameter vector's predictions. */
  gboolean have;
  double p[SIM_FITRUNS_MAX_PARAMS];
  double *pred;
  char *failure;              /* first run that failed at some p */
} Fit;

typedef struct {
  Fit *fit;
  SimValidateOptions opts;
} Eval;

static void
eval_row (gpointer data, gpointer user)
{
  Eval *e = user;
  guint i = GPOINTER_TO_UINT (data) - 1;
  SimValidateResult res;
  sim_validate_run_row (sim_validate_deck_row (e->fit->deck, i), &e->opts, &res);
  e->fit->pred[i] = res.status == SIM_VALIDATE_OK ? res.predicted_s : NAN;
  sim_validate_result_clear (&res);
}

static double
clamp_param (const Known *k, double v)
{
  return isfinite (v) ? CLAMP (v, k->lo, k->hi) : k->lo;
}

/* Simulates every active run at p (in parallel). */
static void
evaluate (Fit *fit, const double *p)
{
  g_autoptr (GPtrArray) sets = g_ptr_array_new_with_free_func (g_free);
  if (fit->base->sets)
    for (int i = 0; fit->base->sets[i]; i++)
      g_ptr_array_add (sets, g_strdup (fit->base->sets[i]));
  for (int j = 0; j < fit->np; j++)
    g_ptr_array_add (sets, g_strdup_printf ("%s.%s=%.17g", fit->k[j]->group, fit->k[j]->key,
                                            clamp_param (fit->k[j], p[j])));
  g_ptr_array_add (sets, NULL);
  Eval e = { fit, *fit->base };
  e.opts.sets = (const char *const *) sets->pdata;
  guint n = sim_validate_deck_n_rows (fit->deck);
  int threads = fit->base->threads > 0 ? fit->base->threads : (int) g_get_num_processors ();
  GThreadPool *pool = threads > 1 ? g_thread_pool_new (eval_row, &e, threads, TRUE, NULL) : NULL;
  for (guint i = 0; i < n; i++)
    {
      if (!fit->active[i])
        continue;
      if (pool)
        g_thread_pool_push (pool, GUINT_TO_POINTER (i + 1), NULL);
      else
        eval_row (GUINT_TO_POINTER (i + 1), &e);
    }
  if (pool)
    g_thread_pool_free (pool, FALSE, TRUE);
  memcpy (fit->p, p, (gsize) fit->np * sizeof *p);
  fit->have = TRUE;
}

/* The model for calib_fit_nlinear_full: x = run index, value T_i(p) / M_i (target y = 1). */
static double
model (double x, const double *p, gpointer user)
{
  Fit *fit = user;
  if (!fit->have || memcmp (fit->p, p, (gsize) fit->np * sizeof *p) != 0)
    evaluate (fit, p);
  guint i = (guint) x;
  const SimValidateRow *r = sim_validate_deck_row (fit->deck, i);
  double t = fit->pred[i];
  if (!isfinite (t))
    {
      if (fit->failure == NULL)
        fit->failure = g_strdup (r->id);
      return 1e3; /* a run the simulator refuses at p: far from any measurement */
    }
  return t / r->step_time_s;
}

static gboolean
run_fit (Fit *fit, const double *p0, CalibNlinFit *out, GError **error)
{
  guint n = sim_validate_deck_n_rows (fit->deck);
  g_autoptr (GArray) x = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) y = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < n; i++)
    if (fit->active[i])
      {
        double xi = i, one = 1;
        g_array_append_val (x, xi);
        g_array_append_val (y, one);
      }
  CalibNlinOptions o = { 0.01, 40, 1e-4 };
  fit->have = FALSE;
  return calib_fit_nlinear_full (model, fit, fit->np, p0, (double *) x->data, (double *) y->data, NULL, x->len, &o,
                                 out, error);
}

static void
errors_at (Fit *fit, const double *p, double *pct)
{
  evaluate (fit, p);
  for (guint i = 0; i < sim_validate_deck_n_rows (fit->deck); i++)
    if (fit->active[i])
      {
        double m = sim_validate_deck_row (fit->deck, i)->step_time_s;
        pct[i] = 100.0 * (fit->pred[i] - m) / m;
      }
}

gboolean
sim_fitruns_fit (const SimValidateDeck *deck, const char *const *names, const SimValidateOptions *options,
                 gboolean cross_validate, SimFitrunsResult *out, GError **error)
{
  memset (out, 0, sizeof *out);
  SimValidateOptions base = { 0 };
  if (options)
    base = *options;
  if (names == NULL || names[0] == NULL)
    names = sim_fitruns_default_params;
  guint n = sim_validate_deck_n_rows (deck);
  Fit fit = { deck, &base };
  for (int j = 0; names[j]; j++)
    {
      const Known *k = NULL;
      for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
        if (strcmp (names[j], known[i].name) == 0)
          k = &known[i];
      if (k == NULL)
        {
          g_autoptr (GString) list = g_string_new (NULL);
          for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
            g_string_append_printf (list, "%s%s", i ? ", " : "", known[i].name);
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "unknown fit parameter '%s'; use one of %s", names[j], list->str);
          return FALSE;
        }
      if (fit.np == SIM_FITRUNS_MAX_PARAMS)
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE, "at most %d fit parameters",
                       SIM_FITRUNS_MAX_PARAMS);
          return FALSE;
        }
      for (int i = 0; i < fit.np; i++)
        if (fit.k[i] == k)
          {
            g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE, "fit parameter '%s' given twice",
                         names[j]);
            return FALSE;
          }
      fit.k[fit.np++] = k;
    }
  if (n == 0)
    {
      g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE, "%s has no runs",
                   sim_validate_deck_name (deck));
      return FALSE;
    }
  if (n <= (guint) fit.np)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW,
                   "%u runs for %d parameters: a fit with uncertainties needs more runs than parameters; add runs "
                   "or fit fewer parameters (--param)",
                   n, fit.np);
      return FALSE;
    }
  const char *gpu = sim_validate_deck_row (deck, 0)->gpu;
  for (guint i = 1; i < n; i++)
    if (strcmp (sim_validate_deck_row (deck, i)->gpu, gpu) != 0)
      {
        g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                     "%s:%d: run '%s' is on gpu '%s' but the first run on '%s'; fit one GPU type at a time "
                     "(one profile layer per GPU type)",
                     sim_validate_deck_name (deck), sim_validate_deck_row (deck, i)->line,
                     sim_validate_deck_row (deck, i)->id, sim_validate_deck_row (deck, i)->gpu, gpu);
        return FALSE;
      }
  /* Start values: the profile's (every run shares it). */
  {
    g_autoptr (SimScenario) sc = sim_validate_row_scenario (sim_validate_deck_row (deck, 0), &base, error);
    if (sc == NULL)
      return FALSE;
    for (int j = 0; j < fit.np; j++)
      {
        SimFitrunsParam *q = &out->params[j];
        q->name = fit.k[j]->name;
        q->group = fit.k[j]->group;
        q->key = fit.k[j]->key;
        const SimScenarioValue *v = sim_scenario_lookup (sc, q->group, q->key);
        if (v && v->value && *v->value)
          q->start = g_ascii_strtod (v->value, NULL);
        else if (!fit.k[j]->zero_start_ok)
          {
            g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_UNSUPPORTED,
                         "the profile of gpu '%s' has no [%s] %s to start the fit from; give one with --set "
                         "%s.%s=VALUE",
                         gpu, q->group, q->key, q->group, q->key);
            return FALSE;
          }
      }
  }
  out->np = fit.np;
  out->n = n;
  out->gpu = gpu;
  fit.active = g_new (gboolean, n);
  fit.pred = g_new0 (double, n);
  for (guint i = 0; i < n; i++)
    fit.active[i] = TRUE;
  double p0[SIM_FITRUNS_MAX_PARAMS];
  for (int j = 0; j < fit.np; j++)
    p0[j] = out->params[j].start;
  out->before_pct = g_new0 (double, n);
  out->after_pct = g_new0 (double, n);
  gboolean ok = TRUE;
  errors_at (&fit, p0, out->before_pct);
  for (guint i = 0; i < n && ok; i++)
    if (!isfinite (out->before_pct[i]))
      {
        /* Say why: simulate it alone for the reason. */
        SimValidateResult res;
        sim_validate_run_row (sim_validate_deck_row (deck, i), &base, &res);
        g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_UNSUPPORTED,
                     "%s:%d: run '%s' cannot be simulated: %s; fix or remove it",
                     sim_validate_deck_name (deck), sim_validate_deck_row (deck, i)->line,
                     sim_validate_deck_row (deck, i)->id, res.reason ? res.reason : "unknown");
        sim_validate_result_clear (&res);
        ok = FALSE;
      }
  CalibNlinFit f;
  if (ok)
    ok = run_fit (&fit, p0, &f, error);
  if (ok && fit.failure)
    {
      g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_UNSUPPORTED,
                   "run '%s' could not be simulated at some of the fit's trial values; fit fewer parameters",
                   fit.failure);
      ok = FALSE;
    }
  if (ok)
    {
      double p[SIM_FITRUNS_MAX_PARAMS];
      for (int j = 0; j < fit.np; j++)
        {
          const Known *k = fit.k[j];
          p[j] = clamp_param (k, f.p[j]);
          out->params[j].value = p[j];
          out->params[j].sigma = f.sigma[j];
          out->params[j].at_bound = p[j] != f.p[j] || p[j] <= k->lo || p[j] >= k->hi;
        }
      out->chisq = f.chisq;
      out->dof = f.dof;
      out->iterations = f.iterations;
      errors_at (&fit, p, out->after_pct);
    }
  if (ok && cross_validate)
    {
      out->loo_pct = g_new0 (double, n);
      for (guint i = 0; i < n && ok; i++)
        {
          for (guint j = 0; j < n; j++)
            fit.active[j] = j != i;
          CalibNlinFit g;
          ok = run_fit (&fit, p0, &g, error);
          if (!ok)
            {
              g_prefix_error (error, "leave-one-out without run '%s': ", sim_validate_deck_row (deck, i)->id);
              break;
            }
          double p[SIM_FITRUNS_MAX_PARAMS];
          for (int j = 0; j < fit.np; j++)
            p[j] = clamp_param (fit.k[j], g.p[j]);
          for (guint j = 0; j < n; j++)
            fit.active[j] = j == i;
          errors_at (&fit, p, out->loo_pct);
        }
    }
  g_free (fit.active);
  g_free (fit.pred);
  g_free (fit.failure);
  if (!ok)
    sim_fitruns_result_clear (out);
  return ok;
}

static double
mape (const double *v, guint n)
{
  double s = 0;
  for (guint i = 0; i < n; i++)
    s += fabs (v[i]);
  return n ? s / n : NAN;
}

char *
sim_fitruns_layer (const SimFitrunsResult *r, const char *runs_path, const char *command_line)
{
  GString *s = g_string_new (NULL);
  g_string_append_printf (s,
                          "# Profile layer written by `trainsim %s`.\n"
                          "# %u measured runs on gpu %s (%s), relative least squares: MAPE %.2f%% with the shipped "
                          "profile, %.2f%% fitted",
                          command_line ? command_line : "trainsim fit --runs", r->n, r->gpu, runs_path,
                          mape (r->before_pct, r->n), mape (r->after_pct, r->n));
  if (r->loo_pct)
    g_string_append_printf (s, ", %.2f%% leave-one-out", mape (r->loo_pct, r->n));
  g_string_append_printf (s, ".\n# Apply it after the hardware and fabric files (trainsim run … THIS.ini, or trainsim "
                             "validate --layer THIS.ini).\n");
  const char *groups[] = { "hardware", "fabric" };
  for (int gi = 0; gi < 2; gi++)
    {
      gboolean any = FALSE;
      for (int j = 0; j < r->np; j++)
        {
          const SimFitrunsParam *q = &r->params[j];
          if (strcmp (q->group, groups[gi]) != 0)
            continue;
          if (!any)
            g_string_append_printf (s, "\n[%s]\n", groups[gi]);
          any = TRUE;
          g_string_append_printf (s, "%s = %.6g\n", q->key, q->value);
          g_string_append_printf (s,
                                  "%s.source = trainsim fit --runs %s: fitted to %u measured step times, 1 sigma %.3g, "
                                  "chi2/dof %.3g (relative), start %.6g from the shipped profile%s\n",
                                  q->key, runs_path, r->n, q->sigma, r->dof > 0 ? r->chisq / r->dof : NAN, q->start,
                                  q->at_bound ? "; ended at the bound of its range" : "");
        }
    }
  return g_string_free (s, FALSE);
}
