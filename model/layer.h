/* Op lists of a training step for one micro-batch on one rank: transformer layers (dense or MoE),
 * embedding, LM head + loss, and the optimizer step, sharded by the plan's TP (with or without
 * sequence parallelism), CP, EP/ETP. Lists append ModelOps (model/op.h) to a GArray in issue order.
 *
 * Where the collectives sit (Megatron-LM / Megatron-Core, Korthikanti et al. 2022 Fig. 5):
 *   SP: all-gather before the QKV and FC1 GEMMs, reduce-scatter after the output projection and
 *       FC2; backward: all-gather before those GEMMs' dgrad, and for QKV/FC1 an input re-gather
 *       (overlapped with dgrad) for the wgrad and a reduce-scatter of the dgrad (overlapped with
 *       wgrad).
 *   no SP (tp > 1): all-reduce after the output projection and FC2 in forward, after the QKV and
 *       FC1 dgrad in backward (overlapped with wgrad).
 *   CP: K/V exchange around the CP ring overlapped with attention (backward: K/V and dK/dV).
 *   MoE (Megatron-Core all-to-all dispatcher): router on the SP-local tokens, all-to-all dispatch
 *       over EP, all-gather over expert TP, grouped expert GEMMs, reduce-scatter over expert TP,
 *       all-to-all combine; routing assumed uniform (each expert gets tokens*top_k/experts).
 *   Vocab-parallel embedding (all-reduce, or reduce-scatter with SP), column-parallel LM head,
 *   vocab-parallel cross entropy (one all-reduce of 3 fp32 values per token: max, sum, target).
 * Recompute: FULL repeats the whole layer forward (phase RECOMPUTE) before its backward;
 *   SELECTIVE repeats the attention core (and its CP exchange) right before the attention backward
 *   (Korthikanti et al. 2022, §4); SELECTIVE_OP (torchtitan's per-op policy) repeats the layer
 *   forward but for the ops it saved: attention, reduce-scatters, all-to-alls and every other
 *   linear layer (model/layer.c, before emit).
 * Unfused attention (plan unfused_attention) adds the memory-bound score traffic (score tensor
 * write/read, softmax, attention dropout when dropout is on); dropout adds the hidden-dropout mask
 * to the residual kernels (see model/layer.c).
 * Low-precision recipes (matmul_dtype fp8/fp4): memory-bound quantize, amax and transpose kernels
 * (flag MODEL_OP_RECIPE) of Transformer Engine around every layer GEMM (see model/layer.c). */
#pragma once
#include <glib.h>
#include "model/op.h"
#include "model/plan.h"
#include "model/shape.h"

typedef enum { MODEL_PASS_FORWARD, MODEL_PASS_BACKWARD } ModelPass;

/* Transformer layer `layer` (0-based; dense or MoE per the shape). BACKWARD includes the
 * recompute ops the plan asks for. */
void model_layer_ops (const ModelShape *shape, const ModelPlan *plan, int layer, ModelPass pass,
                      GArray *ops);
/* Bytes one micro-batch of layer `layer` keeps for backward under SELECTIVE_OP, beyond its input:
 * the outputs of the ops torchtitan's per-op policy saves (linear layers but every second,
 * attention output and log-sum-exp, reduce-scatter and all-to-all outputs). */
double model_layer_selective_op_saved_bytes (const ModelShape *shape, const ModelPlan *plan, int layer);
/* Word (+ learned position) embedding on the first pipeline stage. */
void model_layer_embedding_ops (const ModelShape *shape, const ModelPlan *plan, ModelPass pass,
                                GArray *ops);
/* Final norm, LM head and cross-entropy loss on the last pipeline stage. */
void model_layer_head_ops (const ModelShape *shape, const ModelPlan *plan, ModelPass pass,
                           GArray *ops);
/* Everything model chunk `chunk` of pipeline rank `pp_rank` runs for one micro-batch: embedding if
 * it holds virtual stage 0, its layers, head and loss if it holds the last virtual stage
 * (backward: reverse order). */
void model_layer_chunk_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk,
                            ModelPass pass, GArray *ops);

/* One micro-batch of pipeline rank pp_rank: the forward and then the backward of every chunk
 * (calibration and FLOP accounting; the schedule decides the real interleaving). */
void model_layer_rank_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, GArray *ops);

/* Parameters held by one rank of pipeline stage pp_rank before any ZeRO sharding (padded vocab):
 * dense parameters (sharded by ZeRO over dp*cp) and expert parameters (over the expert DP group). */
typedef struct {
  gint64 dense;
  gint64 expert;
} ModelRankParams;
/* The GEMM dtype of transformer layer `layer` (global index; < 0: embedding/head): matmul_dtype, or
 * param_dtype for the recipe's BF16 first/last layers (plan bf16_layers_first/last). */
ModelDtype model_layer_matmul_dtype (const ModelShape *shape, const ModelPlan *plan, int layer);
void model_layer_rank_params (const ModelShape *shape, const ModelPlan *plan, int pp_rank,
                              ModelRankParams *out);

/* The activation (FORWARD) or its gradient (BACKWARD) a pipeline rank sends to the next/previous
 * stage per micro-batch and chunk boundary: Ts x h in the param dtype (with SP each TP rank sends
 * its sequence shard, as Megatron-Core does). SEND_RECV over PP. */
ModelOp model_layer_pp_op (const ModelShape *shape, const ModelPlan *plan, ModelPass pass);

/* Data-parallel collectives of the parameters of one chunk, in buckets of dp_bucket_mb MiB:
 *   zero 0: all-reduce of the gradients (grad_dtype) in BWD;
 *   zero >= 1: reduce-scatter of the gradients in BWD; zero 1/2: all-gather of the updated
 *   parameters (param_dtype) in OPTIMIZER; zero 3: all-gather of the parameters in FWD and again
 *   in BWD (re-gathered before use).
 * Dense parameters use the data-parallel group with context parallelism: dim DP with
 * group_size dp*cp (model_plan_group_ranks mask DP|CP); expert parameters the expert-DP group
 * (expert_group TRUE, group_size edp). No ops when the group has one rank. With tied embeddings
 * and pp > 1 the chunks holding the embedding and the LM head also all-reduce the word-embedding
 * gradient between the first and last stage (dim PP, group_size 2). Where the buckets run
 * (overlap with backward) is the schedule's choice. */
void model_layer_dp_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk,
                         GArray *ops);

/* Adam step of one rank of pipeline stage pp_rank over the parameters it owns: all of them, or its
 * 1/(dp*cp) (dense) and 1/edp (expert) shard when zero >= 1. Fused multi-tensor Adam traffic per
 * element: reads grad, fp32 master, m, v; writes master, m, v and the low-precision param copy
 * (master_weights: a bf16 remainder, or no master, read and written in its place).
 * With matmul_dtype fp8/fp4 also the once-per-step quantization of the rank's layer-GEMM weights
 * (fp8_weight_cast, nvfp4_weight_amax/_quant: see model/layer.c). */
/* Weights of the matmul-dtype GEMMs of the low-precision recipes (attention, dense MLP, experts,
 * shared experts; not the embedding, LM head or router; not the recipe's BF16 layers) that one rank
 * of pipeline stage pp_rank holds before ZeRO, in its virtual chunk `chunk` (-1: all chunks).
 * 0 unless matmul_dtype is fp8 or fp4. */
/* Copies of each routed token the expert all-to-all carries, when the EP group spans `domains`
 * NVLink domains: moe_top_k k under the all-to-all dispatcher (one per selected expert); under DeepEP
 * one per distinct target node: with the routing limited to n = min(moe_node_limit, domains) nodes
 * (all of them without a limit) and the k experts drawn uniformly from their experts, a token
 * reaches n·(1 − (1 − 1/n)^k) nodes on average (DeepSeek-V3, k = 8, n = 4: 3.60 of 8). One domain:
 * k (NVLink only, nothing to deduplicate across the network). */
double model_moe_dispatch_copies (const ModelShape *shape, const ModelPlan *plan, int domains);
double model_layer_quantized_weights (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk);
/* Bytes fp8_param_gather takes off a rank's copy of those weights in `chunk` (-1: all chunks): they
 * are held and gathered at 1 byte instead of param_dtype. 0 without fp8_param_gather. */
double model_layer_fp8_param_saving (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk);
/* The optimizer step of pp rank `pp_rank`: grad_norm (the clipping norm's read of the optimizer's
 * gradient shard), adam, grad_zero (the framework's per-step gradient-buffer zeroing, where it has
 * one), all three streaming (MODEL_OP_STREAMING), then the low-precision recipe's weight casts. */
void model_layer_optimizer_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank,
                                GArray *ops);
