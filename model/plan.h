/* The parallelism plan: how one training step of a ModelShape is split over GPUs.
 *
 * Rank layout follows Megatron-Core: the `order` names dimensions innermost first
 * (default tp,cp,ep,dp,pp), so consecutive global ranks differ first in the innermost one. */
#pragma once
#include <glib.h>
#include "model/dtype.h"
#include "model/shape.h"
#include "model/tpoverlap.h"

typedef enum { MODEL_SCHED_GPIPE, MODEL_SCHED_1F1B, MODEL_SCHED_INTERLEAVED, MODEL_SCHED_DUALPIPE } ModelSchedule;
/* SELECTIVE is Megatron's (the attention core); SELECTIVE_OP is torchtitan's per-op policy (model/layer.h). */
typedef enum {
  MODEL_RECOMPUTE_NONE, MODEL_RECOMPUTE_SELECTIVE, MODEL_RECOMPUTE_FULL, MODEL_RECOMPUTE_SELECTIVE_OP
} ModelRecompute;
/* What selective recompute recomputes (Megatron-Core's --recompute-modules,
 * transformer_config.py): the attention core (its default), the two pre-norms, MLA's up-projections
 * with their rope, the routed experts' activation function. A bit set; 0 means core_attn. */
typedef enum {
  MODEL_RC_CORE_ATTN = 1u << 0,
  MODEL_RC_LAYERNORM = 1u << 1,
  MODEL_RC_MLA_UP_PROJ = 1u << 2,
  MODEL_RC_MOE_ACT = 1u << 3,
} ModelRecomputeModule;
/* How FP8 scaling factors are found (Transformer Engine recipes): DELAYED from the amax history of
 * earlier steps, recorded by the cast kernels themselves (TE's DelayedScaling, the Hopper default);
 * CURRENT from the tensor's own amax, an extra pass over it before the cast (Float8CurrentScaling). */
typedef enum { MODEL_FP8_DELAYED, MODEL_FP8_CURRENT } ModelFp8Scaling;
/* The optimizer's high-precision copy beside low-precision weights: FP32 a full fp32 master (4 bytes
 * a parameter); REMAINDER the 16 low bits an fp32 value has beyond the bf16 weight (2 bytes: Apex
 * DistributedFusedAdam store_param_remainders, which NeMo turns on for bf16 models with fp32
 * optimizer state); NONE no copy (the optimizer updates the weights themselves: NeMo with its
 * optimizer dtype equal to the model's). */
typedef enum { MODEL_MASTER_FP32, MODEL_MASTER_REMAINDER, MODEL_MASTER_NONE } ModelMaster;
/* Which fused attention kernel runs (sim/gpu/gpu.c times each): DEFAULT the profile's (attn_eff: cuDNN's
 * on Hopper, FlashAttention-2 on the A100), FA2 FlashAttention-2 (flash-attn 2.x, PyTorch's
 * FLASH_ATTENTION backend), TRITON the 2022 FlashAttention in Triton (flash_attn_triton.py, run by
 * llm-foundry's attn_impl: triton). */
typedef enum { MODEL_ATTN_DEFAULT, MODEL_ATTN_FA2, MODEL_ATTN_TRITON } ModelAttnKernel;
/* How a micro-batch's weight gradient joins the step's gradient (model/layer.c):
 *   fused     the wgrad GEMM accumulates into the grad_dtype buffer in its epilogue (Megatron
 *             --gradient-accumulation-fusion, TE fuse_wgrad_accumulation; Megatron-Core's default);
 *   add       the GEMM writes the gradient in param_dtype, then main_grad.add_ (Megatron's local DDP
 *             hook, megatron/model/distributed.py) every micro-batch;
 *   autograd  torch DDP: autograd keeps the first micro-batch's gradient and adds the later ones in
 *             place (AccumulateGrad), in param_dtype. */
typedef enum { MODEL_GRAD_ACCUM_FUSED, MODEL_GRAD_ACCUM_ADD, MODEL_GRAD_ACCUM_AUTOGRAD } ModelGradAccum;
/* How routed tokens travel (model/layer.h model_moe_dispatch_copies): ALLTOALL one copy per selected
 * expert (Megatron's all-to-all token dispatcher); DEEPEP one copy per target node over the network,
 * forwarded to the node's experts over NVLink beside it (DeepSeek-V3 §3.2.2, DeepEP). */
typedef enum { MODEL_MOE_DISPATCH_ALLTOALL, MODEL_MOE_DISPATCH_DEEPEP } ModelMoeDispatcher;
typedef enum { MODEL_DIM_TP, MODEL_DIM_CP, MODEL_DIM_EP, MODEL_DIM_DP, MODEL_DIM_PP, MODEL_DIM_COUNT } ModelDim;
/* The training framework whose DP schedule the step follows (model/framework.c: each one's
 * choices and their sources); in the order of the parallel.framework key's enum strings. */
typedef enum {
  MODEL_FW_MEGATRON,  /* Megatron-LM / Megatron-Core (the default) */
  MODEL_FW_NEMO,      /* NeMo 2: Megatron-Core's DDP and distributed optimizer underneath */
  MODEL_FW_DEEPSPEED, /* DeepSpeed ZeRO stages 0..3 */
  MODEL_FW_FSDP2,     /* torchtitan on PyTorch FSDP2 (fully_shard) */
  MODEL_FW_COMPOSER,  /* MosaicML Composer with PyTorch FSDP1 (FullyShardedDataParallel) */
  MODEL_FW_COUNT
} ModelFramework;

typedef struct {
  int gpus;              /* total; must equal tp*cp*dp*pp */
  int tp, pp, vpp, cp, dp, ep;
  gboolean sp;           /* Megatron sequence parallelism (needs tp > 1: validate rejects it at tp 1) */
  int zero;              /* 0..3: what is sharded over DP (1: optimizer = distributed optimizer) */
  gboolean fsdp;         /* FSDP-style per-layer collectives (needs zero >= 2) */
  int micro_batch;       /* sequences per micro-batch per model replica */
  int global_batch;      /* sequences per optimizer step */
  ModelSchedule schedule;
  ModelRecompute recompute;
  guint recompute_modules;   /* ModelRecomputeModule bits under selective recompute (0: core_attn) */
  ModelDtype matmul_dtype;   /* GEMM precision (bf16, fp8, fp4) */
  ModelDtype param_dtype;    /* weights/activations in memory (bf16) */
  gboolean tp_comm_overlap;  /* TP all-gather/reduce-scatter overlapped with GEMMs */
  gboolean dp_overlap;       /* DP grad reduce-scatter / param all-gather overlapped */
  int dp_bucket_mb;          /* DP bucket size in MiB (Megatron default 40) */
  ModelDim order[MODEL_DIM_COUNT]; /* innermost first */
  /* Added by the model module (zero keeps the documented default): */
  int etp;                   /* expert tensor parallel size (0: = tp, Megatron-Core's default) */
  gboolean pp_embed_loss_layers; /* count embedding and loss as one pipeline layer each, so the
                                  * first and last virtual stage hold one transformer layer fewer
                                  * (MLPerf Llama 3.1 405B: 126 + 2 = 128 over pp8 vpp8) */
  int mb_group;              /* interleaved: micro-batches per group of the schedule table (Megatron-Core
                              * microbatch_group_size_per_vp_stage); 0: pp */
  int pp_first_layers;       /* transformer layers of the first / last pipeline rank, over all its */
  int pp_last_layers;        /* model chunks (Megatron-Core --decoder-first/last-pipeline-num-layers;
                              * the other ranks split the rest evenly); 0: even split */
  const int *pp_layout;      /* transformer layers per virtual stage as a pipeline layout gives them
                              * (model_plan_parse_pp_layout): [0] the stage count, [1 + v] stage v;
                              * interned, never freed, so plans copy it freely; NULL: the rules above */
  ModelDtype grad_dtype;     /* gradient accumulation buffer (0 = fp32: Megatron's main grads) */
  ModelDtype moment_dtype;   /* AdamW's first and second moments (0 = fp32; DeepSeek-V3 keeps bf16) */
  ModelMaster master_weights; /* the optimizer's copy beside low-precision weights (0 = fp32) */
  gboolean fp8_any_layout;   /* the GPU's FP8 GEMMs take any operand layout (from [hardware]
                              * fp8_any_layout; FALSE: Hopper's TN only, so FP8 operands of the
                              * backward GEMMs need transposed copies) */
  gboolean unfused_attention; /* materialise the s x s scores (Megatron core attention, as in
                                  * Korthikanti et al. 2022) instead of a fused flash kernel */
  ModelAttnKernel attention_kernel; /* the fused attention kernel (0 = the profile's) */
  gboolean dropout;          /* attention/hidden dropout on (stores masks; GPT-3 era) */
  gboolean loss_fusion;      /* one fused cross-entropy kernel (Megatron --cross-entropy-loss-fusion);
                              * FALSE: Megatron-Core's unfused fp32 vocab-parallel cross entropy */
  ModelFp8Scaling fp8_scaling; /* with matmul_dtype fp8 (0 = delayed) */
  int bf16_layers_first;     /* with matmul_dtype fp8/fp4: the first / last transformer layers run their */
  int bf16_layers_last;      /* GEMMs in param_dtype (Megatron first_last_layers_bf16 with
                              * num_layers_at_start/end_in_bf16); 0: every layer low-precision */
  gboolean pp_blocking;      /* pipeline sends block the compute stream until delivered (2021 Megatron's
                              * p2p: batch_isend_irecv, wait, torch.cuda.synchronize); FALSE: on send
                              * streams beside compute (overlap_p2p_comm) */
  gboolean pp_scatter_gather; /* without SP: a pipeline send carries 1/tp of the activation and the
                              * receiver all-gathers it over TP (Megatron's default; FALSE:
                              * --no-scatter-gather-tensors-in-pipeline, whole activations) */
  gboolean zero3_blocking;   /* ZeRO-3 as DeepSpeed <= 0.3.16 ran it: one all-gather per weight matrix,
                              * each after a torch.cuda.synchronize, the next one prefetched beside
                              * the GEMM while under 1e9 gathered elements, gradients reduced
                              * on the compute stream (overlap_comm off: an ASSUMPTION for the
                              * SC21 rows, sim/calibrate/validate.c) */
  gboolean fp8_reduce_amax;  /* fp8 with delayed scaling: amaxes all-reduced over the TP x CP x DP ranks of
                              * the stage at every fp8_autocast exit (TE DelayedScaling reduce_amax;
                              * Megatron-Core's amax reduction group) */
  gboolean fp8_amax_tp_only; /* ... over the TP x CP ranks only (Megatron-Core tp_only_amax_red; TE's
                              * NVTE_DP_AMAX_REDUCE_INTERVAL=0) */
  gboolean fp8_amax_async;   /* ... without blocking the compute stream: TE waits for the handle only at
                              * the next update (NVTE_ASYNC_AMAX_REDUCTION=1) */
  ModelGradAccum grad_accum; /* weight-gradient accumulation over micro-batches (0 = fused) */
  gboolean fp8_param_gather; /* fp8 recipe with the distributed optimizer: the FP8 layers' GEMM weights are
                              * kept in FP8 and all-gathered in FP8 (Megatron-Core --fp8-param-gather,
                              * NeMo fp8_params); norms, biases and embeddings stay in param_dtype */
  int nccl_ctas[MODEL_DIM_COUNT]; /* NCCL's CTA (SM) cap per communicator, indexed by ModelDim
                              * (Megatron-Core's nccl_communicator_config_path max_ctas,
                              * MEGATRON_CORE_P2P_MAX_CTAS); 0 = NCCL's own choice */
  ModelMoeDispatcher moe_dispatcher; /* expert all-to-all copies (0 = one per expert) */
  gboolean fp8_attention;     /* fp8/fp4 recipes: fused attention in FP8, its Q/K/V and dO quantized
                              * (TE fp8_dpa, NeMo fp8_dot_product_attention; model/layer.c) */
  gboolean gemm_gelu_fusion;  /* fp8, dense GELU MLP: FC1's GEMM applies bias + GELU in its epilogue and writes
                              * FC2's FP8 input; backward's dGELU fused with the gradient's cast
                              * (model/layer.c) */
  gboolean cuda_graphs;       /* transformer-layer kernels replayed from CUDA graphs: no per-kernel host launch
                              * gap for them (sim/gpu/gpu.c sim_gpu_op_ns) */
  ModelUbConfig ub[MODEL_UB_COUNT]; /* tp_comm_overlap: how each TP-adjacent GEMM is cut and how
                                     * many SMs it lends (model/tpoverlap.h; 0 = TE's default) */
  ModelUbDefaults ub_defaults;      /* which TE version's defaults (0 = TE 2.x) */
  ModelFramework framework;  /* DP schedule of this framework (0 = megatron; model/framework.h) */
  gboolean compile;          /* fsdp2: torch.compile fuses the model's element-wise chains (model/layer.c) */
} ModelPlan;

/* A valid 1-GPU plan: every degree 1, 1F1B, no recompute, bf16, zero 0, micro/global batch 1,
 * bucket 40 MiB, default order. The scenario loader starts from it. */
void model_plan_init (ModelPlan *plan);

const char *model_dim_name (ModelDim d);

/* Micro-batches per pipeline per step: global_batch / (dp * micro_batch). */
int model_plan_microbatches (const ModelPlan *plan);
/* Parses "tp,cp,ep,dp,pp" (any permutation; missing dims appended in default order). */
gboolean model_plan_parse_order (const char *s, ModelDim order[MODEL_DIM_COUNT], GError **error);
/* Every rule a plan must satisfy for this shape; the error says which and why, with the remedy. */
gboolean model_plan_validate (const ModelPlan *plan, const ModelShape *shape, GError **error);

#define MODEL_ERROR (model_error_quark ())
GQuark model_error_quark (void);
typedef enum { MODEL_ERROR_INVALID_SHAPE, MODEL_ERROR_INVALID_PLAN, MODEL_ERROR_OUT_OF_MEMORY } ModelError;

/* ---- Rank mapping (Megatron-Core RankGenerator semantics) ----
 * Global rank r decomposes in mixed radix over `order`, innermost first. Two views exist:
 *  - dense view: sizes tp, cp, ep := 1, dp, pp (attention, dense MLP, embedding);
 *  - expert view: sizes etp, cp := 1, ep, edp = tp*cp*dp / (etp*ep), pp (MoE experts).
 * So EP is carved out of the tp*cp*dp ranks of a pipeline stage, as in Megatron-Core. */

/* Degree of a dimension in the dense view (EP: ep). */
int model_plan_dim_size (const ModelPlan *plan, ModelDim dim);
/* Expert tensor-parallel degree (etp, or tp when 0) and expert data-parallel degree. */
int model_plan_expert_tp (const ModelPlan *plan);
int model_plan_expert_dp (const ModelPlan *plan);
/* Bytes per parameter of the optimizer's copy beside the weights (master_weights; 0 with fp32
 * weights, which the optimizer updates in place). */
double model_plan_master_bytes (const ModelPlan *plan);
/* Coordinates of `rank`: TP, CP, DP, PP from the dense view, EP from the expert view. */
void model_plan_rank_coords (const ModelPlan *plan, int rank, int coords[MODEL_DIM_COUNT]);
/* Inverse of the dense view: the rank with coordinates TP, CP, DP, PP (coords[EP] ignored). */
int model_plan_rank_of (const ModelPlan *plan, const int coords[MODEL_DIM_COUNT]);
/* The ranks that share every coordinate of `rank` except the dims in `dim_mask` (bits
 * 1 << ModelDim), ordered by those coordinates innermost first; `expert` selects the expert view.
 * Writes at most the product of the masked sizes into `ranks` and returns that count.
 * E.g. DP peers of r: mask 1 << MODEL_DIM_DP; dense gradients reduce over DP and CP together
 * (Megatron's data-parallel group with context parallelism): mask (1 << DP) | (1 << CP). */
int model_plan_group_ranks (const ModelPlan *plan, int rank, guint dim_mask, gboolean expert,
                            int *ranks);
/* Every group of those dims at once: group_of[rank] its group, numbered as their smallest ranks
 * ascend, and members[g * size ..] each group's ranks in model_plan_group_ranks's order. Returns
 * the number of groups (gpus / size); O(gpus). */
int model_plan_group_partition (const ModelPlan *plan, guint dim_mask, gboolean expert, int *group_of,
                                int *members);
/* Shorthand: the group of `rank` along one dim (EP in the expert view, others dense). */
int model_plan_group (const ModelPlan *plan, int rank, ModelDim dim, int *ranks);

/* ---- Pipeline split ----
 * Model chunk c (0..vpp-1) of pipeline rank p is virtual stage v = c*pp + p (Megatron's interleaved
 * assignment). Even split: layers / (pp*vpp) per virtual stage. With pp_embed_loss_layers the
 * (layers + 2) pipeline layers split evenly and virtual stage 0 (embedding) and the last one
 * (loss) each hold one transformer layer fewer. With pp_first_layers / pp_last_layers the first
 * and last pipeline ranks hold those counts over their chunks and the others split the rest. A
 * pp_layout gives every virtual stage its own count. */
/* Gives `plan` a pipeline split of shape's layers where its own does not divide them: the even
 * split, else the embedding and loss (and MTP modules) counted as layers, else uneven first and
 * last ranks: the others hold the fewest layers, a multiple of vpp, that fit, and the last rank
 * (output layer and loss) the lighter half of the rest. Framework fsdp2 splits as torchtitan
 * does instead (a pp_layout of its generate_split_points counts). A stated layout or first/last
 * count, or pp_embed_loss_layers where it divides, is kept. FALSE where no split gives every
 * chunk a layer (DualPipe: only even ones). */
gboolean model_plan_fit_pipeline_split (ModelPlan *plan, const ModelShape *shape);
/* Megatron-Core's pipeline layout (--pipeline-model-parallel-layout, core/transformer/
 * pipeline_parallel_layer_layout.py): stages split by '|' in virtual-stage order (v = chunk·pp +
 * rank), E the embedding, t a transformer layer, m an MTP layer, L the loss; x*n and (…)*n repeat,
 * commas and blanks are cosmetic. Checked as Megatron-Core checks it (a multiple of pp stages; E
 * first and L last, once each; `layers` t and `mtp_depth` m, the MTP after every t) and as the
 * simulator can run it: E in the first stage, L and the MTP layers in the last (a stage may hold no
 * transformer layer: the embedding or the loss alone, or nothing). *layout gets the interned
 * per-stage counts (ModelPlan.pp_layout), *vpp the stages over pp. */
gboolean model_plan_parse_pp_layout (const char *text, int pp, int layers, int mtp_depth, const int **layout,
                                     int *vpp, GError **error);
/* Gives an interleaved `plan` whose micro-batch count pp does not divide the smallest micro-batch
 * group Megatron-Core accepts (pp <= g <= m, m mod g 0 or >= pp); a stated group is kept. FALSE
 * where none exists (m < pp). */
gboolean model_plan_fit_microbatch_group (ModelPlan *plan);
/* Transformer layers of chunk `chunk` on pipeline rank `pp_rank`; *first_layer gets the index of
 * its first layer (may be NULL). */
int model_plan_chunk_layers (const ModelPlan *plan, const ModelShape *shape, int pp_rank,
                             int chunk, int *first_layer);
/* Transformer layers over all chunks of a pipeline rank. */
int model_plan_rank_layers (const ModelPlan *plan, const ModelShape *shape, int pp_rank);
/* Whether the embedding (first virtual stage) / LM head and loss (last) live on this chunk. */
gboolean model_plan_chunk_has_embedding (const ModelPlan *plan, int pp_rank, int chunk);
gboolean model_plan_chunk_has_loss (const ModelPlan *plan, int pp_rank, int chunk);

/* Whether selective recompute recomputes `module` (ModelRecomputeModule). */
gboolean model_plan_recomputes (const ModelPlan *plan, ModelRecomputeModule module);
/* Parses a comma/space list of core_attn, layernorm, mla_up_proj, moe_act into bits. */
gboolean model_plan_parse_recompute_modules (const char *text, guint *out, GError **error);
