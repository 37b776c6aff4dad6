/* The workload report of `trainsim run`: the scenario as resolved (with the provenance of every
 * hardware figure), the model's size and work per step, memory per GPU, plan validity, and the
 * ideal compute-only step time at peak FLOP/s, a LOWER BOUND and not a prediction, beside the
 * published measurement when the scenario has one. Text for people, TSV and JSON for scripts. */
#pragma once
#include <stdio.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include "sim/scenario/scenario.h"
#include "sim/step/runner.h"
#include "model/memory.h"

typedef enum { SIM_REPORT_TEXT, SIM_REPORT_TSV, SIM_REPORT_JSON } SimReportFormat;

/* Parses "text", "tsv", "json". */
gboolean sim_report_parse_format (const char *s, SimReportFormat *out);
/* Prints the document built in b (a finished JsonBuilder) pretty, with a final newline. */
void sim_report_print_json (FILE *out, JsonBuilder *b);
/* Member `name`: v where known, else null. */
void sim_report_json_double_or_null (JsonBuilder *b, const char *name, gboolean known, double v);

/* Numbers derived from a resolved scenario. FLOPs count one optimizer step over all GPUs. */
typedef struct {
  gint64 params_total;          /* published count (unpadded vocab) */
  gint64 params_active;         /* per token (MoE: top-k experts) */
  gint64 params_allocated;      /* with Megatron's padded vocab */
  gint64 tokens_per_step;       /* global_batch × seq_len */
  int dp;
  int microbatches;             /* per pipeline per step */
  double model_flops;           /* forward + backward, no recompute (the MFU numerator) */
  double hardware_flops;        /* what the GPUs execute, recompute included */
  double peak_flops_per_gpu;    /* at the plan's matmul dtype */
  double ideal_step_s;          /* hardware_flops / (gpus × peak): LOWER BOUND */
  double measured_step_s;       /* from the scenario, 0 if none */
  double measured_mfu;          /* model_flops / (gpus × peak × measured), 0 if none */
  gint64 evals;                 /* evaluations during the run: floor(steps / interval steps) - eval_skip */
  gint64 eval_interval_steps;   /* eval_interval_seqs rounded up to whole steps; 0: no evaluation */
  double ideal_eval_s;          /* one evaluation's forward FLOPs at peak: LOWER BOUND */
  double ideal_time_to_train_s; /* init + steps × ideal_step_s + evals × ideal_eval_s, 0 without steps */
  ModelMemory memory;           /* the fullest pipeline stage */
  double memory_capacity_bytes; /* the GPU's HBM */
  gboolean memory_fits;
} SimReportWorkload;

/* Fills `out` from a resolved scenario. FALSE (with the reason) if the plan's matmul precision has
 * no peak in the hardware profile. */
gboolean sim_report_workload (const SimScenario *sc, SimReportWorkload *out, GError **error);

/* Writes the report. `argv_text` (may be NULL) is the command line, for provenance. Text leads with
 * the answer (step time and band, throughput, memory fit, time to train, largest loss); this call
 * also prints every resolved key with its file:line and source (explain). */
gboolean sim_report_write (FILE *out, const SimScenario *sc, SimReportFormat format, const char *argv_text,
                           GError **error);

/* The same with the simulated prediction (sim/step/runner.h): a prediction section in text, extra columns
 * in TSV, and in JSON the top-level members step_time_s, mfu, tokens_per_s and breakdown (seconds
 * per component of the critical rank's step) beside a `prediction` object. pred may be NULL.
 * explain: text lists every resolved key (TSV and JSON are complete either way). */
gboolean sim_report_write_prediction (FILE *out, const SimScenario *sc, SimReportFormat format,
                                      const char *argv_text, const SimRunnerPrediction *pred,
                                      gboolean explain, GError **error);
