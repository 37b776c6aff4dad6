/* Parallelism search: every plan of a scenario's model on its cluster (same GPUs, same global
 * batch, same dtypes), ranked by predicted step time.
 *
 * Space (the scenario fixes the model, GPUs, global batch, dtypes, dp_overlap and bucket size):
 * tp, pp, cp dividing the GPU count (dp = gpus / (tp·pp·cp)), vpp, ep (MoE), micro-batch,
 * recompute (none, selective, full), ZeRO 0–3 and FSDP (zero ≥ 2), TP communication overlap,
 * and the placement order (`tp,cp,ep,dp,pp` or `tp,cp,ep,pp,dp`); sequence parallelism is on
 * whenever tp > 1. A plan must pass model_plan_validate and fit (model_memory_check).
 *
 * Two stages.
 *  1. Closed form (sim/plan/estimate.h) for every valid plan. A plan is skipped before its memory check
 *     and estimate when its lower bound, compute + bubble (both terms of the estimate, which only
 *     adds non-negative terms to them), already exceeds (1 + margin) × the best estimate so far:
 *     such a plan can never be within the margin of the best.
 *  2. Pruning rule: the plans whose estimate is within (1 + margin) of the best estimate, at most
 *     `confirm` of them in estimate order (plans with the same estimate count once: the first
 *     enumerated stands for them), are simulated (sim/step/runner.h); the ranking is by the simulated
 *     time. The rule keeps the true best as long as the
 *     estimate's error relative to the confirmation is below the margin: tests/test-planning.c checks
 *     on small cases that the pruned search returns the exhaustive search's best (within 1%).
 * Ties are broken by enumeration order, so the result does not depend on how the work was split. */
#pragma once
#include <glib.h>
#include "model/plan.h"
#include "model/shape.h"
#include "sim/plan/estimate.h"
#include "sim/scenario/scenario.h"

typedef struct {
  ModelPlan plan;
  guint index;                /* enumeration order */
  double estimate_s;          /* closed-form step */
  SimEstimate estimate;
  double confirmed_s;         /* confirm_fn's step (= estimate_s when there is none) */
  double param_sigma;         /* its band's parameter term (sim_runner_param_sigma); 0: none */
  double confirmed_part_s[SIM_EST_COUNT];
  double memory_bytes;
} SimSearchCandidate;

typedef struct {
  int tp, pp;
  double best_s;
} SimSearchHeat;

typedef struct {
  double margin;              /* stage-2 window (default 0.25) */
  guint confirm;              /* stage-2 size cap (default 8, as trainsim search's --confirm) */
  gboolean keep_zero;         /* only the scenario's ZeRO stage and FSDP setting */
  gboolean keep_order;        /* only the scenario's placement order */
  gboolean exhaustive;        /* no lower-bound skip, every valid plan estimated (for tests) */
  int max_micro_batch;        /* default 8 */
  int max_cp;                 /* default 16 */
  int max_vpp;                /* default 16 */
  int rank, size;             /* this worker's share: candidates with index % size == rank */
  GArray *heat;               /* optional SimSearchHeat: best estimate per (tp, pp) that fits; use
                               * with exhaustive (the bound skip would hide cells) */
} SimSearchOptions;

void sim_search_options_init (SimSearchOptions *o);

typedef struct {
  guint64 enumerated;         /* plans generated */
  guint64 valid;              /* passed model_plan_validate */
  guint64 bound_skipped;      /* skipped by the lower bound (depends on order: not for output) */
  guint64 no_fit;             /* failed the memory check (of those not skipped by the bound) */
  guint64 estimated;          /* closed-form evaluations */
} SimSearchStats;

/* Stage 1 on this worker's share: appends to `out` every candidate that fits and whose estimate may be
 * within the margin (a superset of the stage-2 set). */
void sim_search_stage1 (const SimScenario *sc, const SimSearchOptions *o, GArray *out, SimSearchStats *stats);

/* Stage 2 selection: sorts `cands` by (estimate, index), keeps those within the margin of the best,
 * at most o->confirm. */
void sim_search_select (GArray *cands, const SimSearchOptions *o);

/* Sorts by (confirmed, index). */
void sim_search_rank (GArray *cands);

/* A candidate as one line of text and back (for MPI): the fields the search varies. */
char *sim_search_candidate_to_line (const SimSearchCandidate *c);
gboolean sim_search_candidate_from_line (const char *line, SimSearchCandidate *c);
/* Copies the fields the search varies from `searched` into `plan` (the scenario's plan). */
void sim_search_merge_plan (ModelPlan *plan, const ModelPlan *searched);

/* "tp4 pp8 vpp8 cp2 dp128 ep1 mbs1 recompute=none zero1 overlap order=tp,cp,ep,dp,pp", with
 * " dualpipe", " embed-loss-layers", " first=3 last=2" or " group=6" where the pipeline has them
 * (caller frees). */
char *sim_search_describe_plan (const ModelPlan *plan);
