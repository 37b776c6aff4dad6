/* Fitting a few named profile constants to the user's own measured step times (`trainsim fit
 * --runs RUNS.csv`, RUNS in the deck format of sim/calibrate/validate.h).
 *
 * Model: each run i is simulated (sim/calibrate/validate.h row → scenario) with the parameters p applied as
 * `--set` layers; the fit minimizes Σ_i ((T_i(p) − M_i) / M_i)², the relative step-time errors, by
 * nonlinear least squares (calib_fit_nlinear_full: GSL trust region, finite-difference Jacobian
 * with a 1% step because T is piecewise constant at ns scale). Uncertainties are 1σ from the
 * covariance scaled by χ²/dof (calib/fit.h). Values are clamped to each key's physical range while
 * fitting; a parameter that ends at a bound is flagged. Leave-one-out cross-validation refits
 * without each run in turn and predicts it: the honest out-of-sample error.
 * Every run must use the same gpu (one profile layer per GPU type). */
#pragma once
#include <glib.h>
#include "calib/fit.h"
#include "sim/calibrate/validate.h"

#define SIM_FITRUNS_MAX_PARAMS 6

/* The parameters trainsim can fit, by name: gemm_eff_max_<bf16|fp16|fp8|fp4>, attn_eff,
 * attn_bwd_eff, mem_eff, nvlink_eff ([hardware]), nic_eff ([fabric]), overlap_slowdown ([hardware]). */
guint sim_fitruns_n_known (void);
const char *sim_fitruns_known (guint i);
/* The defaults: gemm_eff_max_bf16, nic_eff, overlap_slowdown. */
extern const char *const sim_fitruns_default_params[];

typedef struct {
  const char *name, *group, *key;
  double start;               /* the profile's value (0 if the profile has none and 0 is allowed) */
  double value, sigma;        /* fitted */
  gboolean at_bound;
} SimFitrunsParam;

typedef struct {
  int np;
  SimFitrunsParam params[SIM_FITRUNS_MAX_PARAMS];
  guint n;                    /* runs */
  double *before_pct;         /* per run: error with the profile as shipped */
  double *after_pct;          /* per run: error with the fitted parameters */
  double *loo_pct;            /* per run: leave-one-out error (NULL without cross-validation) */
  double chisq;
  int dof, iterations;
  const char *gpu;
} SimFitrunsResult;

void sim_fitruns_result_clear (SimFitrunsResult *r);

/* Fits `names` (NULL: the defaults) over every row of `deck`. options: layers and sets applied to
 * every run before the parameters, threads. Errors: unknown parameter, more than one gpu, a run that
 * cannot be modelled (naming it), fewer runs than parameters, no convergence. */
gboolean sim_fitruns_fit (const SimValidateDeck *deck, const char *const *names, const SimValidateOptions *options,
                          gboolean cross_validate, SimFitrunsResult *out, GError **error);

/* The profile layer ([hardware] and [fabric] keys with KEY.source lines naming the runs file, the
 * fit's 1σ and the errors before and after). */
char *sim_fitruns_layer (const SimFitrunsResult *r, const char *runs_path, const char *command_line);
