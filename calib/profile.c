/* Calibrated profile: fits of a measurement set, written as a [hardware] scenario layer.
 *
 * Collectives (α-β, DESIGN.md §4 "closed-form α-β"): for each (collective, nranks, dtype),
 *   t_us = α_us + x / busbw,   x = S · f(n) bus bytes (nccl-tests factor, calib_measure_bus_factor)
 * by weighted linear least squares, σ_t = max(spread, 1% of t) where spread = (p90−p10)/2.563
 * (the p10–p90 width of a normal distribution is 2.563σ) and 1% of t where the source gives no
 * spread (nccl-tests). Uncertainties are scaled by χ²/dof (fit.h), so their absolute scale does
 * not matter, only the relative weights.
 * GEMM (per dtype), attention (per pass) and memory (per op): the saturating curve
 * r(x) = P / (1 + (x½/x)^γ) of fit.h against FLOPs or bytes moved, with relative weights; the
 * measured GEMM and attention tables are written too, for the simulator to interpolate.
 * The GEMM efficiencies written for the simulator come from a second fit of its own curve to the
 * same points, rate = peak · e_max · G / (G + G½) · waves(M, N) (sim/gpu/gpu.h: 128×128 output tiles
 * over the datasheet's sm_count), so the profile reproduces the measurements inside the simulator;
 * the γ curve above is kept for plots and the comments. */
#include "config.h"
#include "calib/profile.h"
#include "model/dtype.h"
#include "sim/gpu/gpu.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

typedef struct {
  CalibCollectiveFit pub;
  GArray *x, *y; /* bus bytes, µs */
  char *dtype;
} CollEntry;

typedef struct {
  CalibCurveFit pub;
  GArray *x, *y;
  GArray *w;          /* the fit's weights */
  GArray *rows, *cols, *depth; /* GEMM: M·batch, N and K of each point, for the simulator-form fit */
} CurveEntry;

struct _CalibProfile {
  GPtrArray *colls;  /* CollEntry */
  GPtrArray *curves; /* CurveEntry */
  GPtrArray *gemm_table, *attention_table; /* char* entries */
  GPtrArray *sources;
  GPtrArray *gpus;
  GPtrArray *notes; /* series not fitted, and why (also written into the profile) */
};

static void
coll_entry_free (gpointer p)
{
  CollEntry *e = p;
  g_array_unref (e->x);
  g_array_unref (e->y);
  g_free (e->pub.sources);
  g_free (e->dtype);
  g_free (e);
}

static void
curve_entry_free (gpointer p)
{
  CurveEntry *e = p;
  g_array_unref (e->x);
  g_array_unref (e->y);
  g_array_unref (e->w);
  g_array_unref (e->rows);
  g_array_unref (e->cols);
  g_array_unref (e->depth);
  g_free (e->pub.sources);
  g_free (e);
}

void
calib_profile_free (CalibProfile *profile)
{
  if (profile == NULL)
    return;
  g_ptr_array_unref (profile->colls);
  g_ptr_array_unref (profile->curves);
  g_ptr_array_unref (profile->gemm_table);
  g_ptr_array_unref (profile->attention_table);
  g_ptr_array_unref (profile->sources);
  g_ptr_array_unref (profile->gpus);
  g_ptr_array_unref (profile->notes);
  g_free (profile);
}

guint
calib_profile_n_collectives (const CalibProfile *profile)
{
  return profile->colls->len;
}

const CalibCollectiveFit *
calib_profile_collective (const CalibProfile *profile, guint i)
{
  g_return_val_if_fail (i < profile->colls->len, NULL);
  return &((CollEntry *) g_ptr_array_index (profile->colls, i))->pub;
}

guint
calib_profile_n_notes (const CalibProfile *profile)
{
  return profile->notes->len;
}

const char *
calib_profile_note (const CalibProfile *profile, guint i)
{
  g_return_val_if_fail (i < profile->notes->len, NULL);
  return g_ptr_array_index (profile->notes, i);
}

guint
calib_profile_n_curves (const CalibProfile *profile)
{
  return profile->curves->len;
}

const CalibCurveFit *
calib_profile_curve (const CalibProfile *profile, guint i)
{
  g_return_val_if_fail (i < profile->curves->len, NULL);
  return &((CurveEntry *) g_ptr_array_index (profile->curves, i))->pub;
}

static const char *
kind_name (CalibKind k)
{
  switch (k)
    {
    case CALIB_KIND_NCCL: return "nccl";
    case CALIB_KIND_GEMM: return "gemm";
    case CALIB_KIND_ATTENTION: return "attention";
    default: return "memory";
    }
}

/* Comma-separated basenames of the sources used by points[idx]. */
static char *
sources_of (const CalibMeasureSet *set, GArray *idx)
{
  GString *s = g_string_new (NULL);
  gboolean *seen = g_new0 (gboolean, calib_measure_set_n_sources (set) + 1);
  for (guint i = 0; i < idx->len; i++)
    {
      guint src = calib_measure_set_point (set, g_array_index (idx, guint, i))->source;
      if (seen[src])
        continue;
      seen[src] = TRUE;
      g_autofree char *base = g_path_get_basename (calib_measure_set_source (set, src));
      g_string_append_printf (s, "%s%s", s->len ? ", " : "", base);
    }
  g_free (seen);
  return g_string_free (s, FALSE);
}

static int
cmp_double (gconstpointer a, gconstpointer b, gpointer unused)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* Sorts the k parallel double arrays of one series by the first (x), so plots draw in order and
 * every per-point array stays aligned with x. */
static void
sort_points (GArray *const *cols, int k)
{
  guint n = cols[0]->len;
  double *rows = g_new (double, (gsize) k * n);
  for (guint i = 0; i < n; i++)
    for (int c = 0; c < k; c++)
      rows[(gsize) k * i + c] = g_array_index (cols[c], double, i);
  g_qsort_with_data (rows, (gint) n, (gsize) k * sizeof (double), cmp_double, NULL);
  for (guint i = 0; i < n; i++)
    for (int c = 0; c < k; c++)
      g_array_index (cols[c], double, i) = rows[(gsize) k * i + c];
  g_free (rows);
}

static gboolean
fit_collectives (CalibProfile *prof, const CalibMeasureSet *set, GError **error)
{
  guint n = calib_measure_set_n_points (set);
  gboolean *done = g_new0 (gboolean, n);
  gboolean ok = TRUE;
  for (guint i = 0; i < n && ok; i++)
    {
      const CalibPoint *p0 = calib_measure_set_point (set, i);
      if (done[i] || p0->kind != CALIB_KIND_NCCL)
        continue;
      g_autoptr (GArray) idx = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint j = i; j < n; j++)
        {
          const CalibPoint *p = calib_measure_set_point (set, j);
          if (!done[j] && p->kind == CALIB_KIND_NCCL && strcmp (p->op, p0->op) == 0 && p->nranks == p0->nranks
              && p->nodes == p0->nodes && strcmp (p->dtype, p0->dtype) == 0)
            {
              done[j] = TRUE;
              g_array_append_val (idx, j);
            }
        }
      double f = calib_measure_bus_factor (p0->op, p0->nranks);
      if (f <= 0)
        {
          /* One rank: nothing crosses a link (factor 0 for all-reduce, all-gather…); no line to fit. */
          g_ptr_array_add (prof->notes, g_strdup_printf ("nccl %s at %d rank(s) not fitted: no data crosses a link "
                                                         "(bus factor 0); run on 2 or more GPUs",
                                                         p0->op, p0->nranks));
          continue;
        }
      CollEntry *e = g_new0 (CollEntry, 1);
      e->x = g_array_new (FALSE, FALSE, sizeof (double));
      e->y = g_array_new (FALSE, FALSE, sizeof (double));
      e->dtype = g_strdup (p0->dtype);
      double *w = g_new (double, idx->len);
      for (guint k = 0; k < idx->len; k++)
        {
          const CalibPoint *p = calib_measure_set_point (set, g_array_index (idx, guint, k));
          double x = p->size_bytes * f, y = p->time_us;
          double sigma = 0.01 * y;
          if (isfinite (p->time_us_p10) && isfinite (p->time_us_p90))
            sigma = MAX (sigma, (p->time_us_p90 - p->time_us_p10) / 2.563);
          w[k] = 1.0 / (sigma * sigma);
          g_array_append_val (e->x, x);
          g_array_append_val (e->y, y);
        }
      CalibLinearFit lf;
      g_autoptr (GError) err = NULL;
      if (!calib_fit_linear ((double *) e->x->data, (double *) e->y->data, w, idx->len, &lf, &err)
          && g_error_matches (err, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW))
        {
          /* One size (e.g. a calib-plan run): nothing to fit a line to; say so, keep going. */
          g_ptr_array_add (prof->notes, g_strdup_printf ("nccl %s at %d ranks not fitted: %s", p0->op, p0->nranks,
                                                         err->message));
          coll_entry_free (e);
          g_free (w);
          continue;
        }
      if (err != NULL)
        {
          g_set_error (error, CALIB_FIT_ERROR, err->code, "%s at %d ranks (%s): %s", p0->op, p0->nranks, p0->dtype,
                       err->message);
          ok = FALSE;
          coll_entry_free (e);
          g_free (w);
          break;
        }
      g_free (w);
      GArray *cols[] = { e->x, e->y };
      sort_points (cols, 2);
      e->pub.collective = p0->op;
      e->pub.nranks = p0->nranks;
      e->pub.nodes = p0->nodes;
      e->pub.alpha_us = lf.c0;
      e->pub.sigma_alpha_us = lf.sigma_c0;
      /* c1 is µs per bus byte: busbw = 1/c1 B/µs = 1e-3/c1 GB/s. */
      e->pub.busbw_GBps = 1e-3 / lf.c1;
      e->pub.sigma_busbw_GBps = e->pub.busbw_GBps * lf.sigma_c1 / fabs (lf.c1);
      e->pub.dof = lf.dof;
      e->pub.chisq_dof = lf.dof > 0 ? lf.chisq / lf.dof : NAN;
      e->pub.n_points = idx->len;
      e->pub.sources = sources_of (set, idx);
      if (!(lf.c1 > 0))
        {
          g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                       "%s at %d ranks: time does not grow with size (slope %g us/B); the sweep must reach "
                       "bandwidth-bound sizes (MiB and up)",
                       p0->op, p0->nranks, lf.c1);
          coll_entry_free (e);
          ok = FALSE;
          break;
        }
      g_ptr_array_add (prof->colls, e);
    }
  g_free (done);
  return ok;
}

static gboolean
fit_curves (CalibProfile *prof, const CalibMeasureSet *set, CalibKind kind, GError **error)
{
  guint n = calib_measure_set_n_points (set);
  gboolean *done = g_new0 (gboolean, n);
  gboolean ok = TRUE;
  for (guint i = 0; i < n && ok; i++)
    {
      const CalibPoint *p0 = calib_measure_set_point (set, i);
      if (done[i] || p0->kind != kind)
        continue;
      /* Series: GEMM by dtype, attention by pass, memory by op. */
      const char *series = kind == CALIB_KIND_GEMM ? p0->dtype : p0->op;
      g_autoptr (GArray) idx = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint j = i; j < n; j++)
        {
          const CalibPoint *p = calib_measure_set_point (set, j);
          if (!done[j] && p->kind == kind && strcmp (kind == CALIB_KIND_GEMM ? p->dtype : p->op, series) == 0)
            {
              done[j] = TRUE;
              g_array_append_val (idx, j);
            }
        }
      CurveEntry *e = g_new0 (CurveEntry, 1);
      e->x = g_array_new (FALSE, FALSE, sizeof (double));
      e->y = g_array_new (FALSE, FALSE, sizeof (double));
      e->w = g_array_new (FALSE, FALSE, sizeof (double));
      e->rows = g_array_new (FALSE, FALSE, sizeof (double));
      e->cols = g_array_new (FALSE, FALSE, sizeof (double));
      e->depth = g_array_new (FALSE, FALSE, sizeof (double));
      GArray *w = e->w;
      for (guint k = 0; k < idx->len; k++)
        {
          const CalibPoint *p = calib_measure_set_point (set, g_array_index (idx, guint, k));
          double x = kind == CALIB_KIND_MEMORY ? p->size_bytes : p->flop;
          /* σ of the rate: the relative time spread (as for collectives), at least 1%. */
          double rel = 0.01;
          if (isfinite (p->time_us_p10) && isfinite (p->time_us_p90))
            rel = MAX (rel, (p->time_us_p90 - p->time_us_p10) / 2.563 / p->time_us);
          double wk = 1.0 / (rel * rel * p->rate * p->rate);
          double rows = (double) p->m * MAX (p->batch, 1), cols = (double) p->n, depth = (double) p->k;
          g_array_append_val (e->x, x);
          g_array_append_val (e->y, p->rate);
          g_array_append_val (w, wk);
          g_array_append_val (e->rows, rows);
          g_array_append_val (e->cols, cols);
          g_array_append_val (e->depth, depth);
        }
      g_autoptr (GError) err = NULL;
      if (!calib_fit_saturating_curve ((double *) e->x->data, (double *) e->y->data, (double *) w->data, e->x->len,
                                       &e->pub.fit, &err)
          && (g_error_matches (err, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW)
              || g_error_matches (err, CALIB_FIT_ERROR, CALIB_FIT_ERROR_NO_CONVERGENCE)))
        {
          /* Too few sizes for a curve (e.g. only calib-plan shapes), or points no single saturating
           * curve follows (calib-plan attention shapes of several head dimensions): the measured
           * table still goes into the profile; the note says the curve is missing and why. */
          g_ptr_array_add (prof->notes, g_strdup_printf ("%s %s curve not fitted (its measured rows are in the "
                                                         "table): %s",
                                                         kind_name (kind), series, err->message));
          curve_entry_free (e);
          continue;
        }
      if (err != NULL)
        {
          g_set_error (error, CALIB_FIT_ERROR, err->code, "%s %s: %s", kind_name (kind), series, err->message);
          curve_entry_free (e);
          ok = FALSE;
          break;
        }
      GArray *cols[] = { e->x, e->y, e->w, e->rows, e->cols, e->depth };
      sort_points (cols, G_N_ELEMENTS (cols));
      e->pub.kind = kind;
      e->pub.series = series;
      e->pub.n_points = idx->len;
      e->pub.sources = sources_of (set, idx);
      g_ptr_array_add (prof->curves, e);
    }
  g_free (done);
  return ok;
}

CalibProfile *
calib_profile_fit (const CalibMeasureSet *set, GError **error)
{
  g_return_val_if_fail (set != NULL, NULL);
  g_autoptr (CalibProfile) prof = g_new0 (CalibProfile, 1);
  prof->colls = g_ptr_array_new_with_free_func (coll_entry_free);
  prof->curves = g_ptr_array_new_with_free_func (curve_entry_free);
  prof->gemm_table = g_ptr_array_new_with_free_func (g_free);
  prof->attention_table = g_ptr_array_new_with_free_func (g_free);
  prof->sources = g_ptr_array_new_with_free_func (g_free);
  prof->gpus = g_ptr_array_new_with_free_func (g_free);
  prof->notes = g_ptr_array_new_with_free_func (g_free);
  if (calib_measure_set_n_points (set) == 0)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW, "no measurements to fit; pass benchmark TSVs");
      return NULL;
    }
  const char *gpu = NULL;
  guint gpu_src = 0;
  for (guint i = 0; i < calib_measure_set_n_sources (set); i++)
    {
      const char *g = calib_measure_set_source_gpu (set, i);
      g_ptr_array_add (prof->sources, g_strdup (calib_measure_set_source (set, i)));
      g_ptr_array_add (prof->gpus, g_strdup (g));
      /* A profile describes one kind of machine: fitting an A100 and an H200 run into one line
       * would describe neither. */
      if (*g != '\0' && gpu == NULL)
        gpu = g, gpu_src = i;
      else if (*g != '\0' && strcmp (g, gpu) != 0)
        {
          g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                       "measurements from different GPUs: %s reports '%s', %s reports '%s'; fit each cluster "
                       "into its own profile",
                       calib_measure_set_source (set, gpu_src), gpu, calib_measure_set_source (set, i), g);
          return NULL;
        }
    }
  if (!fit_collectives (prof, set, error) || !fit_curves (prof, set, CALIB_KIND_GEMM, error)
      || !fit_curves (prof, set, CALIB_KIND_ATTENTION, error) || !fit_curves (prof, set, CALIB_KIND_MEMORY, error))
    return NULL;
  for (guint i = 0; i < calib_measure_set_n_points (set); i++)
    {
      const CalibPoint *p = calib_measure_set_point (set, i);
      if (p->kind == CALIB_KIND_GEMM)
        {
          g_autofree char *b = p->batch > 1 ? g_strdup_printf ("x%" G_GINT64_FORMAT, p->batch) : g_strdup ("");
          g_ptr_array_add (prof->gemm_table, g_strdup_printf ("%s:%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                                                              "x%" G_GINT64_FORMAT "%s:%.4g",
                                                              p->dtype, p->m, p->n, p->k, b, p->rate));
        }
      else if (p->kind == CALIB_KIND_ATTENTION)
        g_ptr_array_add (prof->attention_table, g_strdup_printf ("%s:%dx%dx%dx%dx%d:%.4g", p->op, p->b, p->h, p->hkv,
                                                                 p->s, p->d, p->rate));
    }
  if (prof->colls->len == 0 && prof->curves->len == 0 && prof->gemm_table->len == 0
      && prof->attention_table->len == 0)
    {
      g_autofree char *why = NULL;
      g_ptr_array_add (prof->notes, NULL);
      why = g_strjoinv ("; ", (char **) prof->notes->pdata);
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW, "nothing could be fitted: %s", why);
      return NULL;
    }
  return g_steal_pointer (&prof);
}

/* "%.6g" with '.' whatever the locale, into a list. */
static void
append_num (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (buf, sizeof buf, "%.6g", v);
  g_string_append_printf (s, "%s;", buf);
}

static void
write_curve_keys (GString *out, const CalibProfile *prof, CalibKind kind, const char *prefix, const char *list_key,
                  const char *peak_key, const char *half_key, double half_unit, const char *half_unit_name,
                  const char *rate_unit)
{
  GString *names = g_string_new (NULL), *peak = g_string_new (NULL), *half = g_string_new (NULL),
          *hill = g_string_new (NULL);
  for (guint i = 0; i < prof->curves->len; i++)
    {
      const CalibCurveFit *c = &((CurveEntry *) g_ptr_array_index (prof->curves, i))->pub;
      if (c->kind != kind)
        continue;
      double xh = pow (10.0, c->fit.p[1]);
      double sxh = xh * G_LN10 * c->fit.sigma[1];
      g_string_append_printf (out,
                              "# %s %s: peak %.4g ± %.2g %s, x½ %.4g ± %.2g %s, hill %.3f ± %.2g (1σ); "
                              "chi2/dof %.3g (dof %d), %u points from %s\n",
                              prefix, c->series, c->fit.p[0], c->fit.sigma[0], rate_unit, xh / half_unit,
                              sxh / half_unit, half_unit_name, c->fit.p[2], c->fit.sigma[2],
                              c->fit.dof > 0 ? c->fit.chisq / c->fit.dof : NAN, c->fit.dof, c->n_points, c->sources);
      g_string_append_printf (names, "%s;", c->series);
      append_num (peak, c->fit.p[0]);
      append_num (half, xh / half_unit);
      append_num (hill, c->fit.p[2]);
    }
  if (names->len > 0)
    g_string_append_printf (out, "%s = %s\n%s = %s\n%s = %s\n%s_hill = %s\n", list_key, names->str, peak_key,
                            peak->str, half_key, half->str, prefix, hill->str);
  g_string_free (names, TRUE);
  g_string_free (peak, TRUE);
  g_string_free (half, TRUE);
  g_string_free (hill, TRUE);
}

static const CalibCurveFit *
find_curve (const CalibProfile *prof, CalibKind kind, const char *series)
{
  for (guint i = 0; i < prof->curves->len; i++)
    {
      const CalibCurveFit *c = &((CurveEntry *) g_ptr_array_index (prof->curves, i))->pub;
      if (c->kind == kind && (series == NULL || strcmp (c->series, series) == 0))
        return c;
    }
  return NULL;
}

/* A datasheet figure of the [hardware] group; 0 when absent or not a number. */
static double
hw_number (GKeyFile *hw, const char *key)
{
  g_autoptr (GError) err = NULL;
  double v = hw ? g_key_file_get_double (hw, "hardware", key, &err) : 0;
  return err || !isfinite (v) ? 0 : v;
}

static void
write_eff (GString *out, const char *key, double value, const char *source)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (buf, sizeof buf, "%.4f", value);
  g_string_append_printf (out, "%s = %s\n%s.source = %s\n", key, buf, key, source);
}

/* The simulator's GEMM curve as a fit model (sim_gpu_gemm_efficiency itself, its two constants set
 * from the parameters); x is the point's index into the per-point shape arrays. */
typedef struct {
  SimGpuSpec spec;
  ModelDtype dtype;
  const CurveEntry *e;
  double peak; /* TFLOP/s */
} SimCurve;

static double
sim_curve (double x, const double *p, gpointer user)
{
  SimCurve *c = user;
  guint i = (guint) x;
  c->spec.gemm_eff_max[c->dtype] = p[0];
  c->spec.gemm_eff_half_gflop[c->dtype] = pow (10.0, p[1]);
  return c->peak * sim_gpu_gemm_efficiency (&c->spec, c->dtype, (gint64) g_array_index (c->e->rows, double, i),
                                            (gint64) g_array_index (c->e->cols, double, i),
                                            (gint64) g_array_index (c->e->depth, double, i));
}

/* e_max (p[0]) and log10 G½ in GFLOP (p[1]) of the simulator's curve for one GEMM series, started
 * from its γ-curve fit; waves over `sms` SMs (0: none, as the simulator does without sm_count),
 * later waves quantized as the profile says (gemm_wave_quantization). */
static gboolean
fit_sim_curve (const CurveEntry *e, ModelDtype dtype, double peak, int sms, gboolean wave_quantization,
               CalibNlinFit *out)
{
  gsize n = e->x->len;
  g_autofree double *idx = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    idx[i] = (double) i;
  SimCurve c = { .dtype = dtype, .e = e, .peak = peak };
  c.spec.sm_count = sms;
  c.spec.wave_quantization = wave_quantization;
  double p0[2] = { MIN (0.95, e->pub.fit.p[0] / peak), e->pub.fit.p[1] - 9.0 };
  g_autoptr (GError) err = NULL;
  return calib_fit_nlinear (sim_curve, &c, 2, p0, idx, (const double *) e->y->data, (const double *) e->w->data, n,
                            out, &err)
         && out->p[0] > 0;
}

/* The simulator's scalar efficiencies, from the fits and the datasheet peaks. */
static void
write_efficiencies (GString *out, const CalibProfile *prof, GKeyFile *hw, const char *hw_name)
{
  /* One efficiency and size curve per fitted GEMM dtype: gemm_eff_max_<dtype> and
   * gemm_eff_half_GFLOP_<dtype> (the simulator never applies one dtype's figure to another). */
  for (guint i = 0; i < prof->curves->len; i++)
    {
      const CurveEntry *ce = g_ptr_array_index (prof->curves, i);
      const CalibCurveFit *g = &ce->pub;
      ModelDtype dt;
      if (g->kind != CALIB_KIND_GEMM || !model_dtype_parse (g->series, &dt))
        continue;
      g_autofree char *peak_key = g_strdup_printf ("peak_%s_TFLOPS", g->series);
      g_autofree char *eff_key = g_strdup_printf ("gemm_eff_max_%s", g->series);
      g_autofree char *half_key = g_strdup_printf ("gemm_eff_half_GFLOP_%s", g->series);
      double peak = hw_number (hw, peak_key), xh = pow (10.0, g->fit.p[1]);
      double chi = g->fit.dof > 0 ? g->fit.chisq / g->fit.dof : NAN;
      int sms = (int) hw_number (hw, "sm_count");
      /* Absent: true, the scenario key's default (sim/scenario/keys.c). */
      g_autoptr (GError) no_key = NULL;
      gboolean wq = g_key_file_get_boolean (hw, "hardware", "gemm_wave_quantization", &no_key);
      if (no_key != NULL)
        wq = TRUE;
      CalibNlinFit sf;
      if (peak > 0 && fit_sim_curve (ce, dt, peak, sms, wq, &sf) && sf.p[0] <= 1.0)
        {
          double half = pow (10.0, sf.p[1]);
          double schi = sf.dof > 0 ? sf.chisq / sf.dof : NAN;
          g_autofree char *curve = sms > 0 ? g_strdup_printf ("e_max · G/(G + G½) · the share of %d SMs (sm_count of %s) "
                                                               "that 128×128 tiles fill, K split below one wave%s",
                                                               sms, hw_name, wq ? ", later waves quantized" : "")
                                           : g_strdup ("e_max · G/(G + G½), no sm_count for waves");
          g_autofree char *src = g_strdup_printf (
              "trainsim fit of the simulator's GEMM curve %s to %u %s points from %s: e_max %.4g ± %.2g (1σ, "
              "chi2/dof %.3g) of %s %g",
              curve, g->n_points, g->series, g->sources, sf.p[0], sf.sigma[0], schi, peak_key, peak);
          write_eff (out, eff_key, sf.p[0], src);
          g_autofree char *hsrc = g_strdup_printf (
              "trainsim fit of the simulator's GEMM curve %s to %u %s points from %s: G½ %.4g ± %.2g GFLOP (1σ, "
              "chi2/dof %.3g)",
              curve, g->n_points, g->series, g->sources, half, half * G_LN10 * sf.sigma[1], schi);
          char hb[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_formatd (hb, sizeof hb, "%.4g", half);
          g_string_append_printf (out, "%s = %s\n%s.source = %s\n", half_key, hb, half_key, hsrc);
          continue;
        }
      if (peak > 0 && g->fit.p[0] / peak <= 1.0)
        {
          g_autofree char *src = g_strdup_printf (
              "trainsim fit: %s GEMM fitted peak %.4g ± %.2g TFLOP/s (1σ, chi2/dof %.3g, %u points from %s) / %s %g "
              "of %s",
              g->series, g->fit.p[0], g->fit.sigma[0], chi, g->n_points, g->sources, peak_key, peak, hw_name);
          write_eff (out, eff_key, g->fit.p[0] / peak, src);
        }
      else if (hw != NULL)
        g_string_append_printf (out, "# %s not written: %s is %s in %s\n", eff_key, peak_key,
                                peak > 0 ? "below the fitted peak" : "absent", hw_name);
      g_autofree char *src = g_strdup_printf (
          "trainsim fit: %s GEMM x_half %.4g ± %.2g GFLOP (1σ, chi2/dof %.3g, %u points from %s)", g->series,
          xh / 1e9, xh / 1e9 * G_LN10 * g->fit.sigma[1], chi, g->n_points, g->sources);
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (buf, sizeof buf, "%.4g", xh / 1e9);
      g_string_append_printf (out, "%s = %s\n%s.source = %s\n", half_key, buf, half_key, src);
    }
  const CalibCurveFit *m = find_curve (prof, CALIB_KIND_MEMORY, "copy");
  if (m == NULL)
    m = find_curve (prof, CALIB_KIND_MEMORY, "read");
  double hbm = hw_number (hw, "hbm_TBps");
  if (m != NULL && hbm > 0 && m->fit.p[0] / (hbm * 1e3) <= 1.0)
    {
      g_autofree char *src = g_strdup_printf (
          "trainsim fit: HBM %s fitted peak %.4g ± %.2g GB/s (1σ, chi2/dof %.3g, %u points from %s) / hbm_TBps %g of %s",
          m->series, m->fit.p[0], m->fit.sigma[0], m->fit.dof > 0 ? m->fit.chisq / m->fit.dof : NAN, m->n_points,
          m->sources, hbm, hw_name);
      write_eff (out, "mem_eff", m->fit.p[0] / (hbm * 1e3), src);
    }
  const CalibCollectiveFit *ring = NULL;
  const char *ring_ops[2] = { "all_gather", "reduce_scatter" };
  for (int o = 0; o < 2 && ring == NULL; o++)
    for (guint i = 0; i < prof->colls->len; i++)
      {
        const CalibCollectiveFit *c = &((CollEntry *) g_ptr_array_index (prof->colls, i))->pub;
        if (strcmp (c->collective, ring_ops[o]) == 0 && c->nodes == 1 && (ring == NULL || c->nranks > ring->nranks))
          ring = c;
      }
  double nvl = hw_number (hw, "nvlink_unidir_GBps");
  if (ring != NULL && nvl > 0 && ring->busbw_GBps / nvl <= 1.0)
    {
      g_autofree char *src = g_strdup_printf (
          "trainsim fit: %s busbw %.4g ± %.2g GB/s on %d GPUs of one node (1σ, chi2/dof %.3g, %u points from %s) / "
          "nvlink_unidir_GBps %g of %s",
          ring->collective, ring->busbw_GBps, ring->sigma_busbw_GBps, ring->nranks, ring->chisq_dof, ring->n_points,
          ring->sources, nvl, hw_name);
      write_eff (out, "nvlink_eff", ring->busbw_GBps / nvl, src);
    }
  else if (hw != NULL && prof->colls->len > 0)
    g_string_append (out, "# nvlink_eff not written: it needs a single-node all_gather or reduce_scatter line "
                          "(ring bus bandwidth) within nvlink_unidir_GBps\n");
  if (find_curve (prof, CALIB_KIND_ATTENTION, NULL) != NULL)
    g_string_append (out, "# attn_eff not written: trainsim-bench-attention measures an unfused kernel and attn_eff "
                          "means a fused one; see attention_* below\n");
}

char *
calib_profile_to_data (const CalibProfile *prof, const char *command_line, GKeyFile *hardware,
                       const char *hardware_name)
{
  GString *out = g_string_new (NULL);
  g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format_iso8601 (now);
  g_string_append_printf (out, "# Hardware profile fitted by trainsim %s (git %s) on %s\n", PACKAGE_VERSION,
                          TRAINSIM_GIT_REV, date);
  if (command_line)
    g_string_append_printf (out, "# command: %s\n", command_line);
  g_string_append (out, "# Measurements:\n");
  for (guint i = 0; i < prof->sources->len; i++)
    g_string_append_printf (out, "#   %s%s%s%s\n", (char *) g_ptr_array_index (prof->sources, i),
                            *(char *) g_ptr_array_index (prof->gpus, i) ? " (" : "",
                            (char *) g_ptr_array_index (prof->gpus, i),
                            *(char *) g_ptr_array_index (prof->gpus, i) ? ")" : "");
  g_string_append (out, "# Models: collectives t = alpha + S*factor/busbw (nccl-tests bus factor); GEMM, attention\n"
                        "# and memory rate = peak / (1 + (x_half/x)^hill), x in FLOPs or bytes moved.\n"
                        "# Uncertainties are 1 sigma, scaled by chi2/dof. Use as a layer: trainsim run BASE.ini "
                        "THIS.ini\n\n[hardware]\n");
  g_autofree char *srcs = NULL;
  {
    GString *s = g_string_new (NULL);
    for (guint i = 0; i < prof->sources->len; i++)
      {
        g_autofree char *base = g_path_get_basename (g_ptr_array_index (prof->sources, i));
        g_string_append_printf (s, "%s%s", i ? ", " : "", base);
      }
    srcs = g_string_free (s, FALSE);
  }
  for (guint i = 0; i < prof->notes->len; i++)
    g_string_append_printf (out, "# note: %s\n", (char *) g_ptr_array_index (prof->notes, i));
  g_string_append_printf (out, "calib_source = trainsim fit of %s\n", srcs);
  if (hardware == NULL)
    g_string_append (out, "# gemm_eff_max_<dtype>, mem_eff, nvlink_eff need datasheet peaks: rerun with --hardware FILE\n");
  write_efficiencies (out, prof, hardware, hardware_name ? hardware_name : "the hardware file");
  if (prof->colls->len > 0)
    {
      GString *names = g_string_new (NULL), *ranks = g_string_new (NULL), *alpha = g_string_new (NULL),
              *bw = g_string_new (NULL);
      for (guint i = 0; i < prof->colls->len; i++)
        {
          const CalibCollectiveFit *c = &((CollEntry *) g_ptr_array_index (prof->colls, i))->pub;
          g_string_append_printf (out,
                                  "# nccl %s at %d ranks on %d node(s): alpha %.4g ± %.2g us, busbw %.4g ± %.2g GB/s "
                                  "(1σ); chi2/dof %.3g (dof %d), %u points from %s%s\n",
                                  c->collective, c->nranks, c->nodes, c->alpha_us, c->sigma_alpha_us, c->busbw_GBps,
                                  c->sigma_busbw_GBps, c->chisq_dof, c->dof, c->n_points, c->sources,
                                  c->alpha_us < 0 ? " (negative alpha: the line underestimates small sizes)" : "");
          g_string_append_printf (names, "%s;", c->collective);
          g_string_append_printf (ranks, "%d;", c->nranks);
          append_num (alpha, c->alpha_us);
          append_num (bw, c->busbw_GBps);
        }
      g_string_append_printf (out, "nccl_collectives = %s\nnccl_nranks = %s\nnccl_alpha_us = %s\nnccl_busbw_GBps = %s\n",
                              names->str, ranks->str, alpha->str, bw->str);
      g_string_free (names, TRUE);
      g_string_free (ranks, TRUE);
      g_string_free (alpha, TRUE);
      g_string_free (bw, TRUE);
    }
  write_curve_keys (out, prof, CALIB_KIND_GEMM, "gemm", "gemm_dtypes", "gemm_peak_TFLOPS", "gemm_half_GFLOP", 1e9,
                    "GFLOP", "TFLOP/s");
  write_curve_keys (out, prof, CALIB_KIND_ATTENTION, "attention", "attention_passes", "attention_peak_TFLOPS",
                    "attention_half_GFLOP", 1e9, "GFLOP", "TFLOP/s");
  write_curve_keys (out, prof, CALIB_KIND_MEMORY, "memory", "memory_ops", "memory_peak_GBps", "memory_half_MB", 1e6,
                    "MB", "GB/s");
  GPtrArray *tables[2] = { prof->gemm_table, prof->attention_table };
  const char *tkeys[2] = { "gemm_table", "attention_table" };
  const char *tdoc[2] = { "dtype:MxNxK[xBATCH]:TFLOPS", "pass:BxHxHkvxSxD:TFLOPS" };
  for (int t = 0; t < 2; t++)
    {
      if (tables[t]->len == 0)
        continue;
      g_string_append_printf (out, "# measured %s (%s), for interpolation\n%s = ", tkeys[t], tdoc[t], tkeys[t]);
      for (guint i = 0; i < tables[t]->len; i++)
        g_string_append_printf (out, "%s;", (char *) g_ptr_array_index (tables[t], i));
      g_string_append_c (out, '\n');
    }
  return g_string_free (out, FALSE);
}

static void
write_series (GString *s, const char *title, GArray *x, GArray *y, double xscale, double (*curve) (double, gconstpointer),
              gconstpointer cdata)
{
  g_string_append_printf (s, "\"%s\"\t\"rate\"\n", title);
  for (guint i = 0; i < x->len; i++)
    g_string_append_printf (s, "%.6g\t%.6g\n", g_array_index (x, double, i) / xscale, g_array_index (y, double, i));
  g_string_append (s, "\n\n");
  g_string_append_printf (s, "\"%s fit\"\t\"rate\"\n", title);
  double x0 = g_array_index (x, double, 0), x1 = g_array_index (x, double, x->len - 1);
  for (int i = 0; i <= 100; i++)
    {
      double xv = x0 * pow (x1 / x0, i / 100.0);
      g_string_append_printf (s, "%.6g\t%.6g\n", xv / xscale, curve (xv, cdata));
    }
  g_string_append (s, "\n\n");
}

static double
coll_curve (double x, gconstpointer data)
{
  const CollEntry *e = data;
  /* x is bus bytes; busbw at that size = x / t(x) in GB/s. */
  double t_us = e->pub.alpha_us + x * 1e-3 / e->pub.busbw_GBps;
  return x / t_us * 1e-3;
}

static double
sat_curve (double x, gconstpointer data)
{
  const CurveEntry *e = data;
  return calib_fit_saturating (x, e->pub.fit.p, NULL);
}

gboolean
calib_profile_write_plot_data (const CalibProfile *prof, const char *dir, GStrv *paths, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT, "cannot create plot directory %s: %s", dir,
                   g_strerror (errno));
      return FALSE;
    }
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();
  for (int k = CALIB_KIND_NCCL; k <= CALIB_KIND_MEMORY; k++)
    {
      GString *s = g_string_new (NULL);
      const char *xl = k == CALIB_KIND_NCCL ? "message size (bytes)"
                       : k == CALIB_KIND_MEMORY ? "bytes moved (MB)" : "work per call (GFLOP)";
      const char *yl = k == CALIB_KIND_NCCL ? "bus bandwidth (GB/s)"
                       : k == CALIB_KIND_MEMORY ? "bandwidth (GB/s)" : "achieved TFLOP/s";
      g_string_append_printf (s, "# trainsim fit plot data: %s\n# xlabel\t%s\n# ylabel\t%s\n", kind_name (k), xl, yl);
      guint nseries = 0;
      if (k == CALIB_KIND_NCCL)
        for (guint i = 0; i < prof->colls->len; i++)
          {
            CollEntry *e = g_ptr_array_index (prof->colls, i);
            /* Plot against message size S (nccl-tests' axis): x/factor, busbw from the line. */
            double f = calib_measure_bus_factor (e->pub.collective, e->pub.nranks);
            g_autofree char *title = g_strdup_printf ("%s n=%d", e->pub.collective, e->pub.nranks);
            g_autoptr (GArray) bus = g_array_new (FALSE, FALSE, sizeof (double));
            for (guint j = 0; j < e->x->len; j++)
              {
                double v = g_array_index (e->x, double, j) / g_array_index (e->y, double, j) * 1e-3;
                g_array_append_val (bus, v);
              }
            write_series (s, title, e->x, bus, f, coll_curve, e);
            nseries++;
          }
      else
        for (guint i = 0; i < prof->curves->len; i++)
          {
            CurveEntry *e = g_ptr_array_index (prof->curves, i);
            if ((int) e->pub.kind != k)
              continue;
            write_series (s, e->pub.series, e->x, e->y, k == CALIB_KIND_MEMORY ? 1e6 : 1e9, sat_curve, e);
            nseries++;
          }
      if (nseries > 0)
        {
          g_autofree char *name = g_strdup_printf ("calib-%s.tsv", kind_name (k));
          g_autofree char *path = g_build_filename (dir, name, NULL);
          if (!g_file_set_contents (path, s->str, (gssize) s->len, error))
            {
              g_string_free (s, TRUE);
              return FALSE;
            }
          g_strv_builder_add (b, path);
        }
      g_string_free (s, TRUE);
    }
  *paths = g_strv_builder_end (b);
  return TRUE;
}
