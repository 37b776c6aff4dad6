/* The training framework (ModelPlan.framework, scenario key parallel.framework): when and how the
 * data-parallel collectives of a step run, as each framework's code does it with its defaults.
 * model/framework.c lists every choice with its source; sim/step/program.c builds the step's DP
 * collectives from the ModelDpSchedule below, sim/plan/estimate.c and model/memory.c read it too. */
#pragma once
#include <glib.h>
#include "model/plan.h"

const char *model_framework_name (ModelFramework f);

/* DeepSpeed's bucket sizes in elements: reduce_bucket_size, allgather_bucket_size and
 * MEMORY_OPT_ALLREDUCE_SIZE (deepspeed/runtime/zero/config.py, engine.py defaults). */
#define MODEL_DS_BUCKET_ELEMS 5e8
/* stage3_max_live_parameters (v0.3.13 stage3.py FP16_DeepSpeedZeroOptimizer_Stage3 default): no
 * prefetch while this many elements are gathered. */
#define MODEL_DS_MAX_LIVE_ELEMS 1e9

/* When a micro-batch's gradients are reduced over DP (with CP). */
typedef enum {
  MODEL_DP_REDUCE_LAST_MB,   /* only the last micro-batch's backward, bucket by bucket as they fill */
  MODEL_DP_REDUCE_EVERY_MB,  /* every micro-batch's backward, bucket by bucket as they fill */
  MODEL_DP_REDUCE_AFTER_BWD  /* once per step, after the chunk's last backward (all buckets then) */
} ModelDpReduce;

/* Gradient bucket size. */
typedef enum {
  MODEL_DP_BUCKET_MCORE,   /* Megatron-Core: max(40M, 1M × dp·cp) elements, dp_bucket_MiB the floor */
  MODEL_DP_BUCKET_ELEMS,   /* bucket_elems elements */
  MODEL_DP_BUCKET_BYTES,   /* bucket_bytes bytes */
  MODEL_DP_BUCKET_LAYER    /* one transformer layer (an FSDP unit / a ZeRO-3 layer) */
} ModelDpBucket;

/* The updated parameters' all-gather after the optimizer (sharded optimizer, unsharded weights). */
typedef enum {
  MODEL_DP_PARAM_AG_NONE,      /* none: no sharded optimizer, or the shard is the only copy */
  MODEL_DP_PARAM_AG_OVERLAP,   /* at the next step's start, each bucket before its first forward use */
  MODEL_DP_PARAM_AG_BLOCKING   /* after the optimizer; the step ends when it is done */
} ModelDpParamAg;

typedef struct {
  ModelDpReduce reduce;
  gboolean reduce_allreduce;   /* all-reduce (replicated gradients) instead of reduce-scatter */
  gboolean reduce_overlap;     /* buckets launch as they fill during the backward; FALSE: all of them
                                * after the step's last backward */
  gboolean reduce_blocking;    /* reductions run on the compute stream: the next kernel waits */
  gboolean reduce_wait;        /* the compute after a backward's reductions waits for all of them */
  gboolean reduce_one_in_flight; /* a bucket's reduction waits (on the compute stream) for the previous
                                  * one before it is issued: one reduction in flight */
  ModelDpBucket bucket;
  double bucket_elems, bucket_bytes;
  /* Per-layer parameter gathers (the parameters are sharded at rest). */
  gboolean gathers;
  gboolean reshard_after_forward;  /* a layer's parameters are freed after its forward */
  gboolean reshard_after_backward; /* ... and after its backward (FALSE: kept until the step ends) */
  gboolean recompute_gathers;      /* full recompute gathers again before the backward (FALSE: the
                                    * backward's gather, issued before the recompute, serves both) */
  gboolean head_reshard_after_forward;      /* the same for the final norm and LM head (with tied */
  gboolean embedding_reshard_after_forward; /* embeddings, the embedding too), and the embedding */
  double prefetch_elems;           /* gathers issued this many elements of later uses ahead (at least
                                    * one use); 0: one use ahead */
  double param_ag_elems;           /* param_ag bucket size in elements; 0: the gradient bucket rule */
  ModelDpParamAg param_ag;
} ModelDpSchedule;

/* The DP schedule of `plan` (framework, zero, fsdp, pp, dp_overlap). */
void model_framework_dp_schedule (const ModelPlan *plan, ModelDpSchedule *out);
/* Whether the gradients are sharded at rest (model/memory.c): ZeRO-2/3, except Megatron's
 * distributed optimizer at zero 2, which keeps the full gradient buffer. */
gboolean model_framework_shards_grads (const ModelPlan *plan);
/* Whether the framework zeroes a contiguous gradient buffer every step (Megatron-Core DDP's
 * zero_grad_buffer) rather than dropping the gradients (PyTorch's zero_grad(set_to_none=True)). */
gboolean model_framework_zeroes_grad_buffer (const ModelPlan *plan);
/* The framework's rules on plan combinations it does not offer; the error names the remedy. */
gboolean model_framework_validate (const ModelPlan *plan, GError **error);
