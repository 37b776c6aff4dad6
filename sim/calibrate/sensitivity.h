/* Sensitivity of a prediction to its hardware and fabric constants: which figure of the profile the
 * step time hangs on, so a user knows what to measure first (calib-plan says how).
 *
 * Every numeric [hardware] and [fabric] key of the resolved scenario with a nonzero value is scaled
 * by 1 − δ and by 1 + δ in turn, each as one more `--set` layer on top of the scenario (the same
 * loader, checks and simulator as `trainsim run`), and the step is simulated again. The elasticity
 * is the central difference
 *     e = (t₊ − t₋) / (2δ · t₀)   ≈ d ln t / d ln c,
 * so e = −0.6 says a 1% better constant takes 0.6% off the step. A side the loader refuses (an
 * efficiency pushed above 1, a plan that no longer fits) leaves the one-sided difference against
 * t₀, and the row says why. Constants that do not move the step at all (a NIC on a one-node run)
 * come out exactly 0: the simulation is deterministic. The scaling base ([scenario] base_gpus) is
 * not simulated: only the step matters here. */
#pragma once
#include <stdio.h>
#include <glib.h>

#define SIM_SENSITIVITY_ERROR (sim_sensitivity_error_quark ())
GQuark sim_sensitivity_error_quark (void);
typedef enum {
  SIM_SENSITIVITY_ERROR_USAGE, /* δ out of range */
} SimSensitivityErrorCode;

typedef struct {
  char *key;          /* "group.key" */
  char *value;        /* as resolved */
  char *provenance;   /* the key's .source text, else FILE:LINE or "default" */
  double lo_s, hi_s;  /* step at (1 − δ)·value and (1 + δ)·value; NAN for a refused side */
  double elasticity;  /* d ln t / d ln c; NAN when both sides were refused */
  char *refused;      /* why a side was refused: "-5 %: message" (and/or "+5 %: …"), or NULL */
} SimSensitivityRow;

typedef struct {
  double delta;       /* relative step, in (0, 0.5]; 0: 0.05 */
  int threads;        /* simulations at once; <= 0: one per processor */
} SimSensitivityOptions;

typedef struct SimSensitivity SimSensitivity;

/* Loads `files` then `sets` (as `trainsim run`; files NULL or empty: the embedded default),
 * simulates the step, then every perturbation. FALSE when the base scenario does not load or
 * simulate (the error names it) or δ is out of range. */
SimSensitivity *sim_sensitivity_run (const char *const *files, const char *const *sets,
                                     const SimSensitivityOptions *options, GError **error);
void sim_sensitivity_free (SimSensitivity *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimSensitivity, sim_sensitivity_free)

const char *sim_sensitivity_scenario (const SimSensitivity *s);
double sim_sensitivity_delta (const SimSensitivity *s);
double sim_sensitivity_base_s (const SimSensitivity *s);
/* Rows by decreasing |elasticity| (refused-both rows last), ties in key-table order. */
guint sim_sensitivity_n_rows (const SimSensitivity *s);
const SimSensitivityRow *sim_sensitivity_row (const SimSensitivity *s, guint i);

/* Reports. Text lists rows with |e| >= `min_abs` (all with min_abs <= 0) and names the others;
 * TSV and JSON carry every row. */
void sim_sensitivity_print_text (const SimSensitivity *s, FILE *out, double min_abs);
void sim_sensitivity_print_tsv (const SimSensitivity *s, FILE *out);
char *sim_sensitivity_to_json (const SimSensitivity *s);
