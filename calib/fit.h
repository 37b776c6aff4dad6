/* Least-squares fits for calibration, thin wrappers over GSL with uncertainties:
 * - weighted straight line (gsl_fit_wlinear / gsl_fit_linear) for α-β collective models;
 * - nonlinear least squares (gsl_multifit_nlinear, trust region Levenberg–Marquardt) for
 *   saturating efficiency curves.
 * Uncertainty convention: weights are relative (w_i ∝ 1/σ_i²) and the covariance is scaled by
 * χ²/dof, so the reported 1σ comes from the observed scatter (NIST StRD's convention for its
 * certified standard deviations). With dof = 0 the sigmas are NAN. */
#pragma once
#include <glib.h>

#define CALIB_FIT_ERROR (calib_fit_error_quark ())
GQuark calib_fit_error_quark (void);
typedef enum {
  CALIB_FIT_ERROR_INPUT,     /* unreadable or inconsistent measurements */
  CALIB_FIT_ERROR_TOO_FEW,   /* fewer points than parameters */
  CALIB_FIT_ERROR_NO_CONVERGENCE,
} CalibFitError;

typedef struct {
  double c0, c1;           /* y = c0 + c1·x */
  double sigma_c0, sigma_c1;
  double cov01;            /* scaled covariance of (c0, c1) */
  double chisq;            /* weighted residual sum of squares */
  int dof;
} CalibLinearFit;

/* w may be NULL (all weights 1). Needs n >= 2 distinct x. */
gboolean calib_fit_linear (const double *x, const double *y, const double *w, gsize n, CalibLinearFit *out,
                           GError **error);

#define CALIB_FIT_MAX_PARAMS 8

typedef double (*CalibModelFn) (double x, const double *p, gpointer user);

typedef struct {
  int np;
  double p[CALIB_FIT_MAX_PARAMS];
  double sigma[CALIB_FIT_MAX_PARAMS];
  double chisq;
  int dof;
  int iterations;
} CalibNlinFit;

/* Minimizes Σ w_i (y_i − f(x_i; p))² from p0 (finite-difference Jacobian). w may be NULL. */
gboolean calib_fit_nlinear (CalibModelFn f, gpointer user, int np, const double *p0, const double *x,
                            const double *y, const double *w, gsize n, CalibNlinFit *out, GError **error);

/* Options of calib_fit_nlinear_full; 0 keeps a default. A model that is piecewise constant at fine
 * scale (a discrete-event simulation in integer ns) needs a finite-difference step far above GSL's
 * √ε: h_df is the relative step (h = h_df·|p|, or h_df when p = 0). */
typedef struct {
  double h_df;     /* default √ε (GSL) */
  int max_iter;    /* default 500 */
  double xtol;     /* default 1e-12 */
} CalibNlinOptions;

gboolean calib_fit_nlinear_full (CalibModelFn f, gpointer user, int np, const double *p0, const double *x,
                                 const double *y, const double *w, gsize n, const CalibNlinOptions *options,
                                 CalibNlinFit *out, GError **error);

/* The saturating curve used for GEMM/attention TFLOP/s and memory GB/s against work size x:
 *   r(x) = P · xᵞ / (xᵞ + x½ᵞ),   p = { P, log10 x½, γ }
 * (a Hill curve: r → P for large x, r = P/2 at x = x½, γ the sharpness). */
double calib_fit_saturating (double x, const double *p, gpointer user);

/* Fits calib_fit_saturating from a data-driven start. w = 1/σ²; NULL means σ = 1% of each rate
 * (relative errors), so χ²/dof reads as (typical scatter / 1%)². */
gboolean calib_fit_saturating_curve (const double *x, const double *y, const double *w, gsize n, CalibNlinFit *out,
                                     GError **error);
