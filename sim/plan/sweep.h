/* Parameter sweeps: a grid of scenario overrides (`--vary group.key=V1,V2,…`, several axes make a
 * grid, the first axis outermost), each point loaded through the scenario loader exactly as
 * `--set` would, then predicted. Invalid points (plan invalid, does not fit) are rows with the
 * reason, never dropped.
 *
 * Rows serialize to one TSV line each (numbers with 17 significant digits, so a row read back is
 * the same row): `--out FILE` appends them as they are computed and a rerun resumes from the file
 * without recomputing, and MPI ranks ship rows to rank 0 the same way. The table printed at the end
 * is produced from the rows alone, so a resumed, a distributed and a serial sweep print the same
 * bytes. */
#pragma once
#include <stdio.h>
#include <glib.h>
#include "sim/plan/estimate.h"
#include "sim/scenario/scenario.h"
#include "model/memory.h"

#define SIM_SWEEP_ERROR (sim_sweep_error_quark ())
GQuark sim_sweep_error_quark (void);
typedef enum {
  SIM_SWEEP_ERROR_USAGE,     /* bad --vary, unknown key */
  SIM_SWEEP_ERROR_RESUME,    /* --out file from another sweep or unreadable */
} SimSweepErrorCode;

/* NO_FIT: over the GPU's memory by the memory model, and predicted as if it fit (a finding, not a
 * refusal: the model may overstate a run that ran). */
typedef enum { SIM_SWEEP_OK, SIM_SWEEP_INVALID, SIM_SWEEP_NO_FIT } SimSweepStatus;
const char *sim_sweep_status_name (SimSweepStatus s);

typedef enum { SIM_SWEEP_TEXT, SIM_SWEEP_TSV, SIM_SWEEP_JSON } SimSweepFormat;
gboolean sim_sweep_parse_format (const char *s, SimSweepFormat *out);

typedef struct {
  guint index;                 /* point number in grid order */
  char **values;               /* one per axis (owned) */
  SimSweepStatus status;
  char *reason;                /* why not OK (owned; NULL when OK); NO_FIT rows keep their prediction */
  int gpus, tp, pp, vpp, cp, dp, ep, micro_batch, global_batch;
  double step_s;
  double step_lo_s, step_hi_s; /* the calibration's band (sim_runner_band); 0: none (uncalibrated, estimate) */
  double part_s[SIM_EST_COUNT];
  double mfu;
  double tokens_per_s;
  double memory_bytes;         /* fullest stage; 0 when the plan is invalid */
  double time_to_train_s;      /* 0 without [training] steps or tokens */
} SimSweepRow;

void sim_sweep_row_clear (SimSweepRow *row);
/* Whether the row carries a prediction (OK, or NO_FIT predicted as if it fit). */
gboolean sim_sweep_row_predicted (const SimSweepRow *row);

typedef struct SimSweep SimSweep;

/* `files` and `sets` are the base scenario (as for `trainsim run`); both may be NULL. */
SimSweep *sim_sweep_new (const char *const *files, const char *const *sets);
void sim_sweep_free (SimSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimSweep, sim_sweep_free)

/* Predicts each point with the step simulator (sim/step/runner.h, the default) or, with FALSE, with the
 * closed-form estimate only (sim/plan/estimate.h: thousands of points a second). */
void sim_sweep_set_simulate (SimSweep *sw, gboolean simulate);
gboolean sim_sweep_get_simulate (const SimSweep *sw);

/* Adds an axis from "group.key=V1,V2,…". Checks the key exists in the scenario key table. */
gboolean sim_sweep_add_vary (SimSweep *sw, const char *spec, GError **error);
guint sim_sweep_n_axes (const SimSweep *sw);
const char *sim_sweep_axis_key (const SimSweep *sw, guint axis);
guint sim_sweep_n_points (const SimSweep *sw);
/* The `group.key=value` assignments of point i (caller frees with g_strfreev). */
char **sim_sweep_point_sets (const SimSweep *sw, guint index);

/* Loads point 0 without predicting it: FALSE for the errors that would stop the sweep (unreadable
 * file, unknown key, syntax), TRUE when the scenario loads or fails only for a point's reason. */
gboolean sim_sweep_check (const SimSweep *sw, GError **error);

/* Evaluates point `index` into `row` (cleared first). Returns FALSE only for errors that are not a
 * property of the point (unknown key, unreadable file): those stop the sweep. */
gboolean sim_sweep_eval (const SimSweep *sw, guint index, SimSweepRow *row, GError **error);

/* The memory breakdown of point `index` (fullest stage) and the GPU's capacity; FALSE if the point
 * does not load. For plots. */
gboolean sim_sweep_memory (const SimSweep *sw, guint index, ModelMemory *out, double *capacity_bytes);

/* One TSV line (no newline) and back. `n_axes` values follow the fixed columns. */
char *sim_sweep_row_to_line (const SimSweepRow *row, guint n_axes);
gboolean sim_sweep_row_from_line (const char *line, guint n_axes, SimSweepRow *row, GError **error);
/* The header line of the row format, for the --out file and TSV output. */
char *sim_sweep_header_line (const SimSweep *sw);
/* A line identifying the sweep (base files, sets, axes): the --out file refuses another sweep's rows. */
char *sim_sweep_signature (const SimSweep *sw);

/* --out file: reads the rows already there (TRUE with none if the file does not exist), drops a torn
 * last line, and leaves the file open for appending; fails if the file is from another sweep. */
typedef struct SimSweepLog SimSweepLog;
SimSweepLog *sim_sweep_log_open (const SimSweep *sw, const char *path, GPtrArray *rows_out, GError **error);
gboolean sim_sweep_log_append (SimSweepLog *log, const char *line, GError **error);
void sim_sweep_log_close (SimSweepLog *log);

/* Scaling efficiency (the axis `cluster.gpus` must be swept): rows that share every other axis
 * value form a curve; its base is the row with `base_gpus` GPUs (0: the smallest OK row). Weak:
 * step(base) / step; strong: step(base)·gpus(base) / (step·gpus). `mode` picks the formula; AUTO
 * uses strong where the row's global batch equals the base's and weak where it grew with the
 * GPUs. NaN where undefined. */
typedef enum { SIM_SWEEP_SCALING_AUTO, SIM_SWEEP_SCALING_WEAK, SIM_SWEEP_SCALING_STRONG } SimSweepScaling;
void sim_sweep_scaling (const SimSweep *sw, SimSweepRow *const *rows, guint n, int base_gpus, SimSweepScaling mode,
                        double *eff_out);

/* Prints the table of `rows` (in index order). `scaling` may be NULL (no efficiency column). */
void sim_sweep_write (FILE *out, const SimSweep *sw, SimSweepRow *const *rows, guint n, const double *scaling,
                      SimSweepScaling mode, SimSweepFormat format, const char *argv_text);
