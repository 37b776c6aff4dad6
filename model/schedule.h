/* Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes
 * of its micro-batches and model chunks within one training step.
 *
 * GPipe: all forwards, then all backwards (Huang et al., 2019). 1F1B (PipeDream-flush,
 * Narayanan et al., SC21): stage s runs min(p − s − 1, m) warm-up forwards, then alternates one
 * forward and one backward, then drains the remaining backwards. Interleaved 1F1B (virtual
 * pipeline, Narayanan et al., SC21 §2.2) as Megatron-Core orders it
 * (megatron/core/pipeline_parallel/schedules.py: get_pp_rank_microbatches, get_schedule_table,
 * forward_backward_pipelining_with_interleaving): forwards walk a table that takes the
 * micro-batches in groups of p and, per group, each chunk in turn; warm-up is
 * (p − s − 1)·2 + (v − 1)·p forwards (capped at m·v), then one forward and one backward per
 * iteration; the k-th backward uses the k-th table entry with its chunk mirrored (v − 1 − c). */
#pragma once
#include <glib.h>
#include "model/plan.h"
#include "model/layer.h" /* ModelPass */

typedef struct {
  int microbatch;   /* 0 .. m-1 */
  int chunk;        /* model chunk on this stage, 0 .. v-1 (virtual stage = chunk·p + stage) */
  ModelPass pass;
} ModelScheduleSlot;

/* Checks that (kind, pp, vpp, microbatches) is a schedule Megatron-Core would run:
 * sizes >= 1; vpp == 1 unless interleaved; interleaved needs m a multiple of pp. */
gboolean model_schedule_check (ModelSchedule kind, int pp, int vpp, int microbatches, GError **error);

/* Slots per stage: 2·m·v (one forward and one backward of every (micro-batch, chunk)). */
int model_schedule_n_slots (int vpp, int microbatches);

/* Forwards a stage runs before its first backward. */
int model_schedule_warmup (ModelSchedule kind, int pp, int vpp, int microbatches, int stage);

/* Writes the ordered slots of `stage` (0 .. pp-1) into out[model_schedule_n_slots()].
 * Interleaved with vpp == 1 is run as 1F1B (Megatron only interleaves with v > 1).
 * Preconditions as model_schedule_check(). */
void model_schedule_fill (ModelSchedule kind, int pp, int vpp, int microbatches, int stage,
                          ModelScheduleSlot *out);

/* Parses "gpipe", "1f1b", "interleaved". */
gboolean model_schedule_parse (const char *s, ModelSchedule *out);
const char *model_schedule_name (ModelSchedule kind);
