/* The parallelism plan: how one training step of a ModelShape is split over GPUs.
 *
 * Rank layout follows Megatron-Core: the `order` names dimensions innermost first
 * (default tp,cp,ep,dp,pp), so consecutive global ranks differ first in the innermost one. */
#pragma once
#include <glib.h>
#include "model/dtype.h"
#include "model/shape.h"

typedef enum { MODEL_SCHED_GPIPE, MODEL_SCHED_1F1B, MODEL_SCHED_INTERLEAVED } ModelSchedule;
typedef enum { MODEL_RECOMPUTE_NONE, MODEL_RECOMPUTE_SELECTIVE, MODEL_RECOMPUTE_FULL } ModelRecompute;
typedef enum { MODEL_DIM_TP, MODEL_DIM_CP, MODEL_DIM_EP, MODEL_DIM_DP, MODEL_DIM_PP, MODEL_DIM_COUNT } ModelDim;

typedef struct {
  int gpus;              /* total; must equal tp*cp*dp*pp */
  int tp, pp, vpp, cp, dp, ep;
  gboolean sp;           /* Megatron sequence parallelism (needs tp > 1 to matter) */
  int zero;              /* 0..3: what is sharded over DP (1: optimizer = distributed optimizer) */
  gboolean fsdp;         /* FSDP-style per-layer collectives (needs zero >= 2) */
  int micro_batch;       /* sequences per micro-batch per model replica */
  int global_batch;      /* sequences per optimizer step */
  ModelSchedule schedule;
  ModelRecompute recompute;
  ModelDtype matmul_dtype;   /* GEMM precision (bf16, fp8, fp4) */
  ModelDtype param_dtype;    /* weights/activations in memory (bf16) */
  gboolean tp_comm_overlap;  /* TP all-gather/reduce-scatter overlapped with GEMMs */
  gboolean dp_overlap;       /* DP grad reduce-scatter / param all-gather overlapped */
  int dp_bucket_mb;          /* DP bucket size in MiB (Megatron default 40) */
  ModelDim order[MODEL_DIM_COUNT]; /* innermost first */
} ModelPlan;

/* Micro-batches per pipeline per step: global_batch / (dp * micro_batch). */
int model_plan_microbatches (const ModelPlan *plan);
/* Parses "tp,cp,ep,dp,pp" (any permutation; missing dims appended in default order). */
gboolean model_plan_parse_order (const char *s, ModelDim order[MODEL_DIM_COUNT], GError **error);
/* Every rule a plan must satisfy for this shape; the error says which and why, with the remedy. */
gboolean model_plan_validate (const ModelPlan *plan, const ModelShape *shape, GError **error);

#define MODEL_ERROR (model_error_quark ())
GQuark model_error_quark (void);
typedef enum { MODEL_ERROR_INVALID_SHAPE, MODEL_ERROR_INVALID_PLAN, MODEL_ERROR_OUT_OF_MEMORY } ModelError;
