/* Predicted vs measured for one real run: a trainsim-trainer per-step TSV (calib/trainer) held
 * against trainsim's prediction of the scenario that describes the same run.
 *
 * Measured figures are medians over the steps after a warm-up (as MLPerf takes the median of logged
 * step times over steps >= 5): the first steps pay for cuBLASLt heuristics, NCCL set-up and the
 * allocator growing, none of which trainsim models. */
#pragma once
#include <glib.h>

typedef enum {
  SIM_PHASE_STEP,          /* whole optimizer step */
  SIM_PHASE_FORWARD,       /* forward compute of every micro-batch */
  SIM_PHASE_BACKWARD,      /* backward compute, recompute included */
  SIM_PHASE_OPTIMIZER,     /* optimizer step */
  SIM_PHASE_COMM_EXPOSED,  /* compute stream waiting on communication */
  SIM_PHASE_COUNT
} SimPhase;

const char *sim_phase_name (SimPhase p);

typedef struct {
  int rows;                          /* step rows in the file */
  int used;                          /* rows after the warm-up skip */
  int skipped;
  double median_s[SIM_PHASE_COUNT];  /* < 0: column absent */
  GPtrArray *provenance;             /* the file's `#` lines, without '#' (owned) */
} SimTrainerLog;

/* Reads a trainer TSV: `#` provenance lines, a header row naming the columns (step, step_ms and
 * optionally forward_ms, backward_ms, optimizer_ms, comm_exposed_ms), one row per step. Skips the
 * first `skip` steps. Errors name FILE:LINE and the column. *out is set even on failure: clear it. */
gboolean sim_trainer_log_read (const char *path, int skip, SimTrainerLog *out, GError **error);
/* The same on a log's text; `name` stands for the file in messages. */
gboolean sim_trainer_log_parse (const char *name, const char *text, int skip, SimTrainerLog *out, GError **error);
void sim_trainer_log_clear (SimTrainerLog *log);

/* Signed relative error of a prediction in percent: 100 (predicted - measured) / measured. */
double sim_compare_error_pct (double predicted, double measured);
