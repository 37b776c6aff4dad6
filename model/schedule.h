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
 * iteration; the k-th backward uses the k-th table entry with its chunk mirrored (v − 1 − c).
 * DualPipe (DeepSeek-V3, arXiv 2412.19437 §3.2.1; deepseek-ai/DualPipe dualpipe.py): two copies of a
 * p-stage pipeline run in opposite directions, rank s holding stage s of the first (chunk 0) and
 * stage p − 1 − s of the second (chunk 1), each fed half of the m micro-batches from its own end; in
 * the steady state a forward chunk and a backward chunk of the other direction run as one overlapped
 * pair (their all-to-alls and PP sends hide behind each other's compute). The slot order is the
 * reference implementation's eight steps, with its zero-bubble split (Qi et al., arXiv 2401.10241):
 * the backwards it runs with enable_zb compute input gradients only (`zb`), and a later W slot
 * (`weight`) runs the weight gradients of the oldest such backward, in order. */
#pragma once
#include <glib.h>
#include "model/plan.h"
#include "model/layer.h" /* ModelPass */

typedef struct {
  int microbatch;   /* 0 .. m-1 */
  int chunk;        /* model chunk on this stage, 0 .. v-1 (virtual stage = chunk·p + stage) */
  ModelPass pass;
  gboolean overlap_next; /* runs as one overlapped pair with the next slot (DualPipe's F&B) */
  gboolean zb;           /* a backward whose weight gradients wait for a later W slot */
  gboolean weight;       /* that W slot: the weight gradients of (microbatch, chunk)'s backward */
} ModelScheduleSlot;

/* Checks that (kind, pp, vpp, microbatches) is a schedule Megatron-Core would run:
 * sizes >= 1; vpp == 1 unless interleaved; interleaved runs micro-batches in groups of g (its
 * microbatch_group_size_per_vp_stage, default pp): pp <= g <= m and m mod g either 0 or at least pp
 * (with g = pp: m a multiple of pp). DualPipe, as its reference code asserts: vpp == 2 (the two
 * copies), pp even, m even and m >= 2·pp. The _grouped forms take g (0: pp); the others use pp. */
gboolean model_schedule_check (ModelSchedule kind, int pp, int vpp, int microbatches, GError **error);
gboolean model_schedule_check_grouped (ModelSchedule kind, int pp, int vpp, int microbatches, int group,
                                       GError **error);

/* Slots per stage: 2·m·v (one forward and one backward of every (micro-batch, chunk)); DualPipe
 * at most 2·m + pp (each micro-batch passes one of the two chunks, numbered 0 .. m/2 − 1 within
 * it, and up to pp W slots; model_schedule_fill returns the stage's count). */
int model_schedule_n_slots (ModelSchedule kind, int pp, int vpp, int microbatches);

/* Position of (stage, chunk) in its pipeline's layer order, 0 .. model_schedule_positions() − 1:
 * chunk·pp + stage; DualPipe stage for chunk 0, pp − 1 − stage for chunk 1. */
int model_schedule_position (ModelSchedule kind, int pp, int vpp, int stage, int chunk);
int model_schedule_positions (ModelSchedule kind, int pp, int vpp);

/* Where a (stage, chunk) sends its activation (forward) or gradient (backward): FALSE at the end
 * of its pipeline. */
gboolean model_schedule_next (ModelSchedule kind, int pp, int vpp, int stage, int chunk, ModelPass pass,
                              int *to_stage, int *to_chunk);

/* Forwards a stage runs before its first backward. */
int model_schedule_warmup (ModelSchedule kind, int pp, int vpp, int microbatches, int stage);
int model_schedule_warmup_grouped (ModelSchedule kind, int pp, int vpp, int microbatches, int group, int stage);

/* Writes the ordered slots of `stage` (0 .. pp-1) into out[model_schedule_n_slots()] and returns
 * how many. Interleaved with vpp == 1 is run as 1F1B (Megatron only interleaves with v > 1).
 * Preconditions as model_schedule_check(). */
int model_schedule_fill (ModelSchedule kind, int pp, int vpp, int microbatches, int stage,
                         ModelScheduleSlot *out);
int model_schedule_fill_grouped (ModelSchedule kind, int pp, int vpp, int microbatches, int group, int stage,
                                 ModelScheduleSlot *out);

/* Parses "gpipe", "1f1b", "interleaved", "dualpipe". */
gboolean model_schedule_parse (const char *s, ModelSchedule *out);
const char *model_schedule_name (ModelSchedule kind);
