/* One unit of work of a training step on one rank: a GEMM, an attention core, a memory-bound
 * kernel or a collective. A plain value; op lists are GArrays of ModelOp (model_op_array_new()).
 *
 * Conventions (see model/op.c for the equations):
 *  - flops: multiply-add = 2 FLOPs. GEMM 2*m*n*k*batch. Attention forward 4*head_dim*pairs per
 *    (sequence, head) for QK^T and AV, where pairs counts the (query, key) products actually needed
 *    (causal: s(s+1)/2); backward 2x forward (dQ, dK, dV, dP: the model-FLOPs convention;
 *    FlashAttention's extra QK^T recompute in backward is not counted, calib absorbs it into the
 *    attention efficiency). Memory-bound ops carry approximate elementwise FLOPs.
 *  - bytes_read / bytes_written: HBM traffic assuming each operand is read once and each result
 *    written once (GEMM: A, B in `dtype`, C in the activation dtype).
 *  - COMM: comm_bytes is the message size as nccl-tests counts it: the whole (gathered, or
 *    pre-reduction) buffer per rank for all-gather, reduce-scatter and all-reduce; the whole send
 *    buffer per rank for all-to-all (its own 1/n share included, which never leaves the GPU: the
 *    wire carries (n-1)/n of it, as nccl-tests' bus bandwidth assumes); the bytes sent for
 *    send/recv; for the CP KV exchange the K and V blocks a rank forwards over the whole ring pass
 *    ((cp-1) blocks).
 *  - Order: a list is in issue order; every op may depend on every earlier op, except that a COMM
 *    op with overlap_next runs concurrently with the next compute op (which does not need its
 *    result); the compute op after that waits for it. */
#pragma once
#include <glib.h>
#include "model/dtype.h"
#include "model/plan.h"

typedef enum { MODEL_OP_GEMM, MODEL_OP_ATTENTION, MODEL_OP_MEMBOUND, MODEL_OP_COMM } ModelOpKind;
typedef enum {
  MODEL_PHASE_FWD,
  MODEL_PHASE_BWD,
  MODEL_PHASE_RECOMPUTE, /* forward work repeated in backward (activation recomputation) */
  MODEL_PHASE_OPTIMIZER
} ModelPhase;
/* Backward GEMMs split into input-gradient (dgrad) and weight-gradient (wgrad) products. */
typedef enum { MODEL_GRAD_NONE, MODEL_GRAD_INPUT, MODEL_GRAD_WEIGHT } ModelGrad;
typedef enum {
  MODEL_COLL_NONE,
  MODEL_COLL_ALL_GATHER,
  MODEL_COLL_REDUCE_SCATTER,
  MODEL_COLL_ALL_REDUCE,
  MODEL_COLL_ALL_TO_ALL,
  MODEL_COLL_SEND_RECV,
  MODEL_COLL_CP_KV_EXCHANGE, /* ring attention: K,V blocks passed around the CP ring */
  MODEL_COLL_COUNT
} ModelCollective;

/* GEMM flags */
#define MODEL_OP_COLUMN_PARALLEL 1u /* input replicated over TP (backward reduces its gradient) */
#define MODEL_OP_FP8_INPUT_TRANSPOSE 2u /* FP8 input written by the norm (TE LayerNormLinear) or
                                        * gathered over SP: backward transposes it for wgrad
                                        * (model/layer.c) */
#define MODEL_OP_GELU_EPILOGUE 128u /* FC1 with the GELU in its epilogue (plan gemm_gelu_fusion): its
                                      * gradient's cast also applies dGELU (model/layer.c) */
/* MEMBOUND flags */
#define MODEL_OP_RECIPE 4u          /* low-precision recipe kernel (quantize, amax, transpose): no backward */
#define MODEL_OP_STREAMING 64u      /* one long pass over a whole buffer set (the fused multi-tensor
                                     * optimizer, grad-norm, grad-buffer zeroing): streams at the
                                     * microbenchmark bandwidth, not the in-situ one (sim/gpu/gpu.c) */
#define MODEL_OP_ELEMENTWISE 256u   /* an element-wise ATen kernel of eager PyTorch (same dtype in and out,
                                     * one pass): at the copy's rate, hbm_bw · mem_eff, not the in-situ
                                     * rate fitted on fused kernels (sim/gpu/gpu.c, model/layer.c) */
#define MODEL_OP_LATER_MICROBATCHES 16u /* runs from a step's second micro-batch on (torch autograd's
                                        * in-place gradient accumulation): the runner drops it from the
                                        * first */
/* ATTENTION flags */
#define MODEL_OP_FLASH_BWD 8u       /* fused (flash) backward: recomputes the scores, 2.5x the forward
                                     * FLOPs, timed at the profile's backward efficiency */
#define MODEL_OP_UNFUSED_BMM 32u    /* unfused attention (plan unfused_attention): cuBLAS batched GEMMs
                                     * over the whole score square, causal mask applied after; its
                                     * FLOPs stay the causal count (what MFU and HFU credit), its time
                                     * is that of the bmms (sim/gpu/gpu.c) */

typedef struct {
  ModelOpKind kind;
  ModelPhase phase;
  ModelGrad grad;
  const char *name;  /* static string, stable across runs: "qkv", "attn", "fc1_wgrad", … */
  int layer;         /* transformer layer index; -1 for embedding, head, loss, optimizer */
  ModelDtype dtype;  /* input precision of GEMM / attention; element type of memory-bound ops */
  guint flags;
  /* GEMM: batch independent products C[m,n] = A[m,k] B[k,n] (batch > 1: grouped expert GEMM) */
  gint64 m, n, k, batch;
  /* ATTENTION: seqs sequences x heads query heads (kv_heads key/value heads) of head_dim;
   * seq_q local queries against seq_kv keys; pairs (query, key) products per sequence and head */
  gint64 seqs, heads, kv_heads, seq_q, seq_kv, head_dim, pairs;
  double flops;
  double bytes_read, bytes_written;
  /* COMM */
  ModelCollective coll;
  ModelDim dim;          /* parallel dimension of the group (TP, CP, EP, DP, PP) */
  gboolean expert_group; /* group from the expert view (EP, expert TP/DP), see model/plan.h */
  int group_size;
  double comm_bytes;
  gboolean overlap_next;
} ModelOp;

const char *model_op_kind_name (ModelOpKind kind);
const char *model_phase_name (ModelPhase phase);
const char *model_collective_name (ModelCollective coll);

/* Constructors; `name` must be a static string. Output activations are `out_dtype` elements. */
ModelOp model_op_gemm (const char *name, ModelPhase phase, ModelGrad grad, gint64 m, gint64 n,
                       gint64 k, gint64 batch, ModelDtype dtype, ModelDtype out_dtype);
/* Forward (phase FWD/RECOMPUTE) or backward (BWD) attention core. */
ModelOp model_op_attention (const char *name, ModelPhase phase, gint64 seqs, gint64 heads,
                            gint64 kv_heads, gint64 seq_q, gint64 seq_kv, gint64 head_dim,
                            gint64 pairs, ModelDtype dtype);
ModelOp model_op_membound (const char *name, ModelPhase phase, double bytes_read,
                           double bytes_written, double flops, ModelDtype dtype);
ModelOp model_op_comm (const char *name, ModelPhase phase, ModelCollective coll, ModelDim dim,
                       int group_size, double comm_bytes);

/* Exact count of (query, key) pairs of causal attention per sequence and head on one of cp
 * context-parallel ranks with the load-balanced 2*cp-chunk split (seq % (2*cp) == 0 when cp > 1):
 * s(s+1)/2 / cp, the same on every rank. */
gint64 model_op_causal_pairs (gint64 seq, int cp);

GArray *model_op_array_new (void);
/* Appends to `out` one op per distinct GEMM (m, n, k, batch, dtype) of `ops`, in order of first
 * appearance (what calibration has to measure). */
void model_op_array_unique_gemms (const GArray *ops, GArray *out);
/* Sum of flops of the ops in `ops` whose kind is GEMM or ATTENTION and whose phase bit is set in
 * phase_mask (1 << ModelPhase). A flash backward's score recomputation (MODEL_OP_FLASH_BWD: 0.5 of
 * its 2.5 forward-equivalents) counts only when the mask has MODEL_PHASE_RECOMPUTE (hardware
 * FLOPs), so model FLOPs keep the 3-pass convention. */
double model_op_array_matmul_flops (const GArray *ops, guint phase_mask);
