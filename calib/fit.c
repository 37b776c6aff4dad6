/* Least-squares wrappers over GSL (see fit.h for the uncertainty convention).
 * Linear: gsl_fit_wlinear (or gsl_fit_linear without weights) gives c0, c1, their covariance and
 * χ²; we scale the covariance by χ²/dof. Nonlinear: gsl_multifit_nlinear's trust-region solver
 * with Levenberg–Marquardt steps and a finite-difference Jacobian; the covariance is
 * (JᵀWJ)⁻¹ · χ²/dof from gsl_multifit_nlinear_covar. Checked against NIST StRD (Norris, Misra1a)
 * in tests/test-calib-fit.c. */
#include "config.h"
#include "calib/fit.h"

#include <math.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit_nlinear.h>

G_DEFINE_QUARK (calib-fit-error-quark, calib_fit_error)

gboolean
calib_fit_linear (const double *x, const double *y, const double *w, gsize n, CalibLinearFit *out, GError **error)
{
  g_return_val_if_fail (x != NULL && y != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  gboolean distinct = FALSE;
  for (gsize i = 1; i < n; i++)
    distinct |= x[i] != x[0];
  if (n < 2 || !distinct)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW,
                   "a line needs at least 2 points with distinct x, got %" G_GSIZE_FORMAT "; measure more sizes", n);
      return FALSE;
    }
  double c0, c1, cov00, cov01, cov11, chisq;
  gsl_error_handler_t *old = gsl_set_error_handler_off ();
  int st;
  if (w != NULL)
    st = gsl_fit_wlinear (x, 1, w, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
  else
    {
      /* gsl_fit_linear already scales its covariance by the residual variance. */
      st = gsl_fit_linear (x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
    }
  gsl_set_error_handler (old);
  if (st != GSL_SUCCESS || !isfinite (c0) || !isfinite (c1))
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_NO_CONVERGENCE, "linear fit failed: %s",
                   gsl_strerror (st));
      return FALSE;
    }
  out->c0 = c0;
  out->c1 = c1;
  out->chisq = chisq;
  out->dof = (int) n - 2;
  double scale = w == NULL ? 1.0 : (out->dof > 0 ? chisq / out->dof : NAN);
  out->sigma_c0 = out->dof > 0 ? sqrt (cov00 * scale) : NAN;
  out->sigma_c1 = out->dof > 0 ? sqrt (cov11 * scale) : NAN;
  out->cov01 = cov01 * scale;
  return TRUE;
}

typedef struct {
  CalibModelFn f;
  gpointer user;
  const double *x, *y;
  gsize n;
} NlinData;

static int
nlin_residual (const gsl_vector *p, void *data, gsl_vector *r)
{
  NlinData *d = data;
  for (gsize i = 0; i < d->n; i++)
    gsl_vector_set (r, i, d->f (d->x[i], p->data, d->user) - d->y[i]);
  return GSL_SUCCESS;
}

gboolean
calib_fit_nlinear (CalibModelFn f, gpointer user, int np, const double *p0, const double *x, const double *y,
                   const double *w, gsize n, CalibNlinFit *out, GError **error)
{
  return calib_fit_nlinear_full (f, user, np, p0, x, y, w, n, NULL, out, error);
}

gboolean
calib_fit_nlinear_full (CalibModelFn f, gpointer user, int np, const double *p0, const double *x, const double *y,
                        const double *w, gsize n, const CalibNlinOptions *options, CalibNlinFit *out,
                        GError **error)
{
  g_return_val_if_fail (f != NULL && p0 != NULL && out != NULL, FALSE);
  g_return_val_if_fail (np >= 1 && np <= CALIB_FIT_MAX_PARAMS, FALSE);
  memset (out, 0, sizeof *out);
  out->np = np;
  if (n < (gsize) np)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW,
                   "a %d-parameter curve needs at least %d points, got %" G_GSIZE_FORMAT "; measure more sizes", np,
                   np, n);
      return FALSE;
    }
  NlinData data = { f, user, x, y, n };
  gsl_multifit_nlinear_fdf fdf;
  memset (&fdf, 0, sizeof fdf);
  fdf.f = nlin_residual;
  fdf.df = NULL; /* finite differences */
  fdf.fvv = NULL;
  fdf.n = n;
  fdf.p = (size_t) np;
  fdf.params = &data;
  gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters ();
  int max_iter = 500;
  double xtol = 1e-12;
  if (options != NULL)
    {
      if (options->h_df > 0)
        params.h_df = options->h_df;
      if (options->max_iter > 0)
        max_iter = options->max_iter;
      if (options->xtol > 0)
        xtol = options->xtol;
    }
  gsl_error_handler_t *old = gsl_set_error_handler_off ();
  gsl_multifit_nlinear_workspace *ws = gsl_multifit_nlinear_alloc (gsl_multifit_nlinear_trust, &params, n,
                                                                   (size_t) np);
  gsl_vector_const_view pv = gsl_vector_const_view_array (p0, (size_t) np);
  int st;
  if (w != NULL)
    {
      gsl_vector_const_view wv = gsl_vector_const_view_array (w, n);
      st = gsl_multifit_nlinear_winit (&pv.vector, &wv.vector, &fdf, ws);
    }
  else
    st = gsl_multifit_nlinear_init (&pv.vector, &fdf, ws);
  int info = 0;
  if (st == GSL_SUCCESS)
    st = gsl_multifit_nlinear_driver ((size_t) max_iter, xtol, 1e-12, 1e-12, NULL, NULL, &info, ws);
  gboolean ok = st == GSL_SUCCESS;
  if (ok)
    {
      gsl_matrix *covar = gsl_matrix_alloc ((size_t) np, (size_t) np);
      gsl_vector *res = gsl_multifit_nlinear_residual (ws);
      gsl_vector *p = gsl_multifit_nlinear_position (ws);
      double chisq;
      gsl_blas_ddot (res, res, &chisq); /* residuals are already √w-weighted */
      gsl_multifit_nlinear_covar (gsl_multifit_nlinear_jac (ws), 0.0, covar);
      out->chisq = chisq;
      out->dof = (int) n - np;
      out->iterations = (int) gsl_multifit_nlinear_niter (ws);
      double scale = out->dof > 0 ? chisq / out->dof : NAN;
      for (int i = 0; i < np; i++)
        {
          out->p[i] = gsl_vector_get (p, (size_t) i);
          out->sigma[i] = sqrt (gsl_matrix_get (covar, (size_t) i, (size_t) i) * scale);
          ok &= isfinite (out->p[i]);
        }
      gsl_matrix_free (covar);
    }
  gsl_multifit_nlinear_free (ws);
  gsl_set_error_handler (old);
  if (!ok)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_NO_CONVERGENCE,
                   "nonlinear fit did not converge (%s); check the measurements for outliers or measure a wider "
                   "range of sizes",
                   gsl_strerror (st));
      return FALSE;
    }
  return TRUE;
}

double
calib_fit_saturating (double x, const double *p, gpointer user)
{
  /* P / (1 + (x½/x)^γ), written with logs so huge x and x½ stay finite. */
  return p[0] / (1.0 + pow (10.0, p[2] * (p[1] - log10 (x))));
}

gboolean
calib_fit_saturating_curve (const double *x, const double *y, const double *w_in, gsize n, CalibNlinFit *out,
                            GError **error)
{
  if (n < 4)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW,
                   "a saturating curve (3 parameters) needs at least 4 sizes, got %" G_GSIZE_FORMAT
                   "; sweep more sizes",
                   n);
      return FALSE;
    }
  /* Start: P a little above the best rate; x½ where the data first reaches half of it. */
  double ymax = 0, xmin = INFINITY, xmax = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!(x[i] > 0) || !(y[i] > 0))
        {
          g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                       "saturating fit: sizes and rates must be positive (point %" G_GSIZE_FORMAT ")", i);
          return FALSE;
        }
      ymax = MAX (ymax, y[i]);
      xmin = MIN (xmin, x[i]);
      xmax = MAX (xmax, x[i]);
    }
  double half = INFINITY;
  for (gsize i = 0; i < n; i++)
    if (y[i] >= 0.55 * ymax && x[i] < half)
      half = x[i];
  double p0[3] = { 1.05 * ymax, log10 (MAX (half / 2, xmin)), 1.0 };
  double *w = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    w[i] = w_in ? w_in[i] : 1.0 / (1e-4 * y[i] * y[i]); /* σ = 1% of the rate */
  gboolean ok = calib_fit_nlinear (calib_fit_saturating, NULL, 3, p0, x, y, w, n, out, error);
  g_free (w);
  if (ok && !(out->p[0] > 0 && out->p[2] > 0))
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_NO_CONVERGENCE,
                   "saturating fit ended at an unphysical point (peak %g, sharpness %g); the rates do not level "
                   "off over the measured sizes, so extend the sweep to larger sizes",
                   out->p[0], out->p[2]);
      return FALSE;
    }
  return ok;
}
