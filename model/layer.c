/* Stays ~1030 lines: forward, backward (derived from the forward list) and per-rank parameter
 * counts share the GEMM, quantization and collective helpers of one op list builder. */
/* Op lists of one micro-batch on one rank (see model/layer.h for where collectives sit).
 *
 * Sizes with b = micro_batch, s = seq_len, h = hidden, a/g = query/KV heads, d = head_dim,
 * f = ffn_hidden, t = tp, c = cp, V = padded vocab:
 *   tokens per rank T = b*s/c; between TP regions Ts = T/t with SP, else T.
 *   QKV   [T, (a+2g)d/t] = [T, h] x [h, (a+2g)d/t]      output projection [T, h] = [T, ad/t] x [ad/t, h]
 *   FC1   [T, f/t] (SwiGLU: 2f/t, gate and up fused)     FC2 [T, h] = [T, f/t] x [f/t, h]
 *   attention: b sequences x a/t heads, s/c queries vs s keys, causal pairs s(s+1)/(2c)
 *   MoE: Tm = Ts routed tokens, top_k copies (x capacity factor when set) dispatched; experts E/ep
 *        per rank, etp-way split, each with m = etp*Tm*k*ep/E tokens (uniform routing)
 *   LM head [T, V/t] = [T, h] x [h, V/t]
 *   backward of GEMM [m,n,k]: dgrad [m,k] = [m,n] x [n,k], wgrad [k,n] = [k,m] x [m,n]
 * Memory-bound ops: bytes of their inputs and outputs; elementwise FLOPs are rough (norm 5/element
 * LayerNorm, 3 RMSNorm; GeLU 8, SwiGLU 6; residual 1) and never enter model FLOPs. Backward of a
 * memory-bound op reads twice its forward inputs (inputs and output gradient) and writes the input
 * gradient. Embedding, LM head and loss run in the param dtype (FP8/FP4 recipes keep them in BF16).
 *
 * Unfused core attention (plan unfused_attention; Megatron-LM before flash attention,
 * megatron/model/transformer.py ParallelAttention: baddbmm Q·Kᵀ into an [b·a/t, s/c, s] score
 * tensor, FusedScaleMaskSoftmax (one kernel: --masked-softmax-fusion is on by default in
 * megatron/arguments.py), attention dropout as its own kernel, bmm with V). The attention op keeps
 * the causal FLOPs (what MFU credits) but is flagged MODEL_OP_UNFUSED_BMM: it is timed as the
 * batched GEMMs that run, over the full square (sim/gpu/gpu.c); the score traffic the fused kernel
 * never makes is added as memory-bound ops over the
 * E = b·(a/t)·(s/c)·s score elements (the full square: the causal mask is applied, not skipped),
 * with p = param-dtype bytes:
 *   attn_scores_io  forward: Q·Kᵀ writes the scores, P·V reads the probabilities: E·p + E·p;
 *                   backward: P read for dV, dS read by the dQ and the dK bmm (3E·p), dP written
 *                   (E·p).
 *   attn_softmax    forward: read E·p, write E·p; backward: read y and dy 2E·p, write E·p.
 *   attn_dropout    (with dropout) forward: read E·p, write E·p and a 1-byte mask E;
 *                   backward: read dy E·p and the mask E, write E·p.
 * Cross entropy (last stage). With loss_fusion, one kernel reads the E = T x V/t local logits once.
 * Otherwise Megatron-Core's vocab-parallel cross entropy (megatron/core/tensor_parallel/
 * cross_entropy.py, the default without --cross-entropy-loss-fusion) runs separate kernels over fp32
 * logits: .float() (read p, write 4), max (read 4), in-place subtract (4 + 4), in-place exp (4 + 4),
 * sum (read 4), in-place divide to the saved softmax (4 + 4): read (p + 20)E, write 16E forward;
 * backward an in-place multiply (4 + 4) and the cast back to the logits' dtype (read 4, write p).
 * Hidden dropout (plan dropout; Megatron's fused bias-dropout-add after the output projection and
 * FC2): the residual kernel also writes a 1-byte mask per element and its backward reads it.
 *
 * Low-precision recipes (matmul_dtype fp8 or fp4): Transformer Engine quantizes every input of a
 * transformer-layer GEMM (Megatron-Core's TE spec: QKV and FC1 are TELayerNormColumnParallelLinear,
 * the output projection and FC2 TERowParallelLinear, expert GEMMs TE grouped linears; the activation
 * function runs outside TE in BF16, so FC2's input is cast by its own kernel). Each quantize, amax and
 * transpose is a memory-bound op (flag MODEL_OP_RECIPE, no backward of its own) over the E elements of
 * the tensor, p = param-dtype bytes; for a GEMM [m, n, k] × batch the input has E_in = m·k·batch and
 * the output gradient E_out = m·n·batch elements. Under SP a tensor that crosses a TP all-gather (the
 * input of QKV/FC1, the output gradient of proj/FC2) is quantized on its local 1/t shard before it and
 * the all-gather carries the quantized copy (TE's quantized all-gather): 1 byte per element for FP8,
 * q (below) for NVFP4's row-wise copy, 2q for an NVFP4 gradient (row- and column-wise); the input's
 * backward re-gather likewise (FP8 row-wise, NVFP4 column-wise), while the dgrad reduce-scatter stays
 * in the param dtype (TE docs, low-precision training "Performance considerations": tensor-parallel
 * communication is in high precision except the SP all-gathers of input and output gradient, which
 * TE does on quantized tensors; a row-wise copy made in forward may be transposed to the column-wise
 * one in backward, the FP8 case below). Embedding, LM head, router and attention stay in BF16, but for
 * FP8 attention (plan fp8_attention: TE DotProductAttention under fp8_dpa, cuDNN's FP8 fused
 * attention, forward and backward as NVTE_FP8_DPA_BWD defaults): the attention op runs in FP8
 * (sim/gpu/gpu.c prices it) and its inputs are quantized first: attn_qkv_quant over Q, K and V
 * (E = T·(a+2g)d/t elements, read E·p, write E), and in backward attn_grad_quant over dO (T·ad/t; O
 * itself stays in p: NVTE_DPA_FP8CS_O_in_F16 defaults to 1), each after an _amax pass (read E·p) when
 * the scaling is current (fp8_scaling current, or an FP4 recipe, whose attention runs
 * Float8CurrentScaling: NVTE_DPA_FP8_RECIPE of NVIDIA's MLPerf v5.1 Llama 3.1 8B FP4 configs).
 *   FP8 on Hopper (TE transformer_engine/pytorch/module/linear.py and layernorm_linear.py; the FP8
 *   GEMM takes both operands K-major, so wgrad needs transposed FP8 copies):
 *     <gemm>_in_cast      forward: cast_transpose of a plain Linear input, read E_in·p, write 2·E_in
 *                         (FP8 copy and its transpose, 1 byte each); an input crossing an SP all-gather
 *                         is cast row-wise only on its shard: read E_in·p/t, write E_in/t.
 *     norm-fused input    (QKV, dense FC1, delayed scaling): the norm writes FP8 itself (attn_norm and
 *                         mlp_norm write Ts·h bytes instead of Ts·h·p; layernorm_fwd_fp8) and no cast
 *                         runs.
 *     <gemm>_in_transpose backward, for a norm-written or gathered FP8 input: fp8_transpose of the
 *                         (gathered) input before wgrad, read E_in, write E_in.
 *     <gemm>_grad_cast    backward: cast_transpose of the output gradient (grad_output_preprocess),
 *                         read E_out·p, write 2·E_out; under SP for proj/FC2 row-wise on the shard
 *                         (read E_out·p/t, write E_out/t), then <gemm>_grad_transpose of the gathered
 *                         gradient, read E_out, write E_out.
 *     current scaling     (fp8_scaling current, Float8CurrentScaling): every cast is preceded by an
 *                         amax pass <gemm>_in_amax / _grad_amax reading the tensor (E·p) and the norm
 *                         output is not fused (the amax must be known before the cast): the norm
 *                         writes p bytes and QKV/FC1 inputs get an amax and a cast as a plain input.
 *     gemm_gelu_fusion    (plan key; dense GELU MLP, NVIDIA's MLPerf BERT te_layers.py _LayerNormMLP:
 *                         fp8_gemm gelu=True): FC1's epilogue applies bias and GELU and writes FC2's
 *                         FP8 input (FC1 writes T·f/t bytes more; no act, no fc2_in_cast);
 *                         backward, fc1_grad_dgelu_cast (fp8_cast_transpose_bgrad_dgelu_fused) reads
 *                         the gradient and the kept pre-activation, 2·E_out·p, and writes 2·E_out in
 *                         place of act_bwd and fc1_grad_cast; FC2's FP8 input gets an fc2_in_transpose.
 *     fp8_weight_cast     once per step (TE caches the FP8 weights over the micro-batches of a step:
 *                         is_first_microbatch), an optimizer-phase op over the W layer-GEMM weights of
 *                         the rank: read W·p, write 2·W (+ an amax pass W·p with current scaling).
 *   FP8 where the GEMM takes any operand layout (plan fp8_any_layout, from [hardware]: cuBLASLt on
 *   compute capability 10.x; TE 2.x quantizer.cpp makes no transpose when
 *   nvte_is_non_tn_fp8_gemm_supported(), and the FP8 data serves both usages): the same kernels,
 *   each writing one FP8 copy (E instead of 2·E), and no <gemm>_in_transpose, <gemm>_grad_transpose
 *   or fp8_weight_transpose.
 *   NVFP4 on Blackwell (NVIDIA, "Pretraining Large Language Models with NVFP4", arXiv 2509.25149;
 *   TE docs features/low_precision_training/nvfp4): E2M1 values, two per byte, plus one E4M3 scale
 *   per 16 elements: q = 1/2 + 1/16 bytes per element (the FP32 per-tensor scale is negligible). The
 *   per-tensor scale needs the global amax before quantizing, and wgrad operands are quantized
 *   column-wise after a 16×16 random Hadamard transform whose amax is that of the rotated tensor. The
 *   NVFP4 GEMM takes only the TN layout, so every tensor gets a row-wise and a column-wise
 *   (transposed) copy, written by one fused kernel; no transpose kernels.
 *     <gemm>_in_amax      forward: amax of the input and of its Hadamard rotation in one pass, read E·p
 *                         (also for norm-fused inputs: the norm's fused amax is of the unrotated tensor).
 *     <gemm>_in_quant     forward: row-wise and RHT column-wise quantization, read E·p, write 2·q·E
 *                         (E = E_in, or its 1/t shard before an SP all-gather).
 *     <gemm>_grad_amax, <gemm>_grad_quant   backward: the same over E_out (or its shard).
 *     nvfp4_weight_amax, nvfp4_weight_quant   once per step over W (2D 16×16 scaled weights):
 *                         read W·p; read W·p, write 2·q·W.
 * Weight-gradient accumulation over the micro-batches of a step (plan grad_accum, W = the k·n·batch
 * elements of a wgrad GEMM's output, g = grad_dtype bytes):
 *   fused     the wgrad GEMM reads and writes its W·g accumulator in the epilogue (Megatron-Core's
 *             gradient_accumulation_fusion into main_grad, TE fuse_wgrad_accumulation): its bytes
 *             become A + B + 2·W·g, timed by the roofline like any GEMM;
 *   add       the GEMM writes W·p, then <gemm>_grad_accum (main_grad.add_ in Megatron's local DDP
 *             hook, megatron/model/distributed.py) reads W·p + W·g and writes W·g, every micro-batch;
 *   autograd  the same add, flagged MODEL_OP_LATER_MICROBATCHES: torch's AccumulateGrad keeps the
 *             first micro-batch's gradient as it is and adds the later ones in place.
 * Issue order: the backward recipe kernels of a GEMM run before its dgrad and its backward
 * collectives (a transpose of a gathered tensor really runs after the gather); on the one compute
 * stream the sum is the same, and the all-gathers stay next to the GEMMs they overlap with.
 * The recipe's BF16 layers (plan bf16_layers_first / bf16_layers_last; Megatron-Core's
 * first_last_layers_bf16 with num_layers_at_start/end_in_bf16, counted over the global layer index;
 * NVIDIA's NVFP4 recipes keep the last few blocks in BF16 for stability) run their GEMMs in
 * param_dtype with no recipe kernels, and their weights are not quantized. */
#include <math.h>
#include <string.h>
#include "model/layer.h"
#include "model/framework.h"

typedef struct {
  const ModelShape *s;
  const ModelPlan *p;
  GArray *ops;
  int layer;
  ModelPhase phase;
  gint64 T, Ts;
  double act;   /* bytes per activation element */
  ModelDtype adt, mdt;
} Ctx;

static const char *
suffixed (const char *name, const char *suffix)
{
  char buf[96];
  g_snprintf (buf, sizeof buf, "%s%s", name, suffix);
  return g_intern_string (buf);
}

static ModelOp *
add (Ctx *c, ModelOp op)
{
  op.layer = c->layer;
  op.phase = c->phase;
  g_array_append_val (c->ops, op);
  return &g_array_index (c->ops, ModelOp, c->ops->len - 1);
}

static void
ctx_init (Ctx *c, const ModelShape *s, const ModelPlan *p, int layer, GArray *ops)
{
  memset (c, 0, sizeof *c);
  c->s = s, c->p = p, c->ops = ops, c->layer = layer;
  c->phase = MODEL_PHASE_FWD;
  c->T = (gint64) p->micro_batch * s->seq_len / p->cp;
  c->Ts = p->sp ? c->T / p->tp : c->T;
  c->adt = p->param_dtype;
  c->mdt = model_layer_matmul_dtype (s, p, layer);
  c->act = model_dtype_bytes (p->param_dtype);
}

static ModelOp *
gemm (Ctx *c, const char *name, gint64 m, gint64 n, gint64 k, gint64 batch, ModelDtype dt,
      gboolean column)
{
  ModelOp *op = add (c, model_op_gemm (name, c->phase, MODEL_GRAD_NONE, m, n, k, batch, dt, c->adt));
  if (column && c->p->tp > 1)
    op->flags |= MODEL_OP_COLUMN_PARALLEL;
  return op;
}


static void
membound (Ctx *c, const char *name, double elems_in, double elems_out, double flops_per_out)
{
  add (c, model_op_membound (name, c->phase, elems_in * c->act, elems_out * c->act,
                             flops_per_out * elems_out, c->adt));
}

/* FP8 delayed scaling: the norm before a TE LayerNormLinear writes the FP8 GEMM input itself. */
static gboolean
norm_writes_fp8 (const Ctx *c)
{
  return c->mdt == MODEL_DTYPE_FP8 && c->p->fp8_scaling == MODEL_FP8_DELAYED;
}

/* Eager PyTorch (framework fsdp2 without torch.compile): torchtitan's model runs its element-wise
 * chains as one kernel per tensor op (torchtitan @9dec370, torchtitan/models/norms.py RMSNorm and
 * torchtitan/models/llama/model.py apply_rotary_emb, repeat_kv, Attention.forward, FeedForward):
 *   RMSNorm: x.float(), pow(2), mean(-1), + eps, rsqrt, x * r, type_as(x), * weight: 8 kernels,
 *     reading 20 and writing 16 bytes per bf16 element (fused: 2 and 2);
 *   RoPE of Q and of K: .float(), complex multiply, type_as: 3 kernels each, 10 + 10 bytes per
 *     element (fused: one kernel, 2 + 2);
 *   repeat_kv (GQA): K and V expanded to every query head, a copy each (reshape of an expand);
 *   the attention output's transpose(1, 2).contiguous(): a copy;
 *   SwiGLU: silu(w1 x), then * w3 x: 2 kernels (fused: 1).
 * Each is priced as the memory-bound kernel it is (bytes at the achieved HBM rate, one launch);
 * backward follows the generic element-wise rule. torch.compile (parallel.compile) fuses the chains
 * back into the single kernels priced otherwise. */
static gboolean
eager (const Ctx *c)
{
  return c->p->framework == MODEL_FW_FSDP2 && !c->p->compile;
}

/* Element-wise kernels of eager PyTorch (ATen's, vectorized, one pass) run at the copy's rate: on an
 * H200, add, mul, scale, pow, silu and the fp32-to-bf16 cast move 0.94-1.06 of a copy's bytes per
 * second, where an upcast to fp32 moves 0.51 and the fused norms 0.55 forward and 0.35 backward
 * (calib/results/h200-sxm-2026-11-27/torch-kernels-elementwise.tsv); the profiles' mem_insitu is
 * fitted on Transformer Engine's fused kernels. So an op flagged MODEL_OP_ELEMENTWISE is priced at
 * mem_eff (sim/gpu/gpu.c): torchtitan's eager chains but their upcasts and row means, and the
 * residual adds and activations of the eager frameworks (fsdp2 without torch.compile; Composer's
 * models, nn.GELU and the residual +). The eager RMSNorm below, 8 kernels over [16384, 4096],
 * is then priced at 0.72 ms on an H200 against 0.886 ms measured (the attn_norm* ops of the trace of
 * `trainsim run hardware/h200-sxm.ini fabrics/ndr400-rail-optimized.ini models/llama3.1-8b.ini` with
 * cluster.gpus=1, parallel.framework=fsdp2, micro_batch 2, seq_len 8192; all eight at the in-situ
 * rate, the same bytes would take 1.02 ms). */
static gboolean
aten_eager (const Ctx *c)
{
  return eager (c) || (c->p->framework == MODEL_FW_COMPOSER && !c->p->compile);
}

static ModelOp *
elementwise (Ctx *c, ModelOp op)
{
  if (aten_eager (c))
    op.flags |= MODEL_OP_ELEMENTWISE;
  return add (c, op);
}

/* membound() for an element-wise kernel (see elementwise()). */
static void
membound_ew (Ctx *c, const char *name, double elems_in, double elems_out, double flops_per_out)
{
  elementwise (c, model_op_membound (name, c->phase, elems_in * c->act, elems_out * c->act,
                                     flops_per_out * elems_out, c->adt));
}

static void
eager_rmsnorm (Ctx *c, const char *const names[8], double e, double rows)
{
  double a = c->act;
  const double rd[8] = { a * e, 4 * e, 4 * e, 4 * rows, 4 * rows, 4 * e + 4 * rows, 4 * e, a * e + a * c->s->hidden };
  const double wr[8] = { 4 * e, 4 * e, 4 * rows, 4 * rows, 4 * rows, 4 * e, a * e, a * e };
  for (int k = 0; k < 8; k++)
    {
      ModelOp op = model_op_membound (names[k], c->phase, rd[k], wr[k], e, c->adt);
      if (k == 0 || k == 2) /* the upcast and the row mean are not copy-rate kernels */
        add (c, op);
      else
        elementwise (c, op);
    }
}

/* A norm over `tokens`; fp8_out: it feeds a LayerNormLinear and writes FP8 (see above). */
static void
norm (Ctx *c, const char *name, gint64 tokens, gboolean fp8_out)
{
  double e = (double) tokens * c->s->hidden;
  if (eager (c) && c->s->norm == MODEL_NORM_RMSNORM && !fp8_out)
    {
      static const char *const attn[8] = { "attn_norm_float", "attn_norm_pow", "attn_norm_mean",
                                           "attn_norm_eps", "attn_norm_rsqrt", "attn_norm_mul",
                                           "attn_norm_type_as", "attn_norm" };
      static const char *const mlp[8] = { "mlp_norm_float", "mlp_norm_pow", "mlp_norm_mean",
                                          "mlp_norm_eps", "mlp_norm_rsqrt", "mlp_norm_mul",
                                          "mlp_norm_type_as", "mlp_norm" };
      static const char *const other[8] = { "norm_float", "norm_pow", "norm_mean", "norm_eps",
                                            "norm_rsqrt", "norm_mul", "norm_type_as", "norm" };
      eager_rmsnorm (c, strcmp (name, "attn_norm") == 0 ? attn : strcmp (name, "mlp_norm") == 0 ? mlp : other,
                     e, (double) tokens);
      return;
    }
  add (c, model_op_membound (name, c->phase, e * c->act, e * (fp8_out ? 1.0 : c->act),
                             (c->s->norm == MODEL_NORM_LAYERNORM ? 5.0 : 3.0) * e, c->adt));
}

/* NVFP4 bytes per element: 4-bit E2M1 plus one E4M3 scale per 16 elements. */
#define NVFP4_BYTES (0.5 + 1.0 / 16.0)

static gboolean
quantized (ModelDtype d)
{
  return d == MODEL_DTYPE_FP8 || d == MODEL_DTYPE_FP4;
}

ModelDtype
model_layer_matmul_dtype (const ModelShape *shape, const ModelPlan *plan, int layer)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, MODEL_DTYPE_BF16);
  if (layer >= 0 && quantized (plan->matmul_dtype)
      && (layer < plan->bf16_layers_first || layer >= shape->layers - plan->bf16_layers_last))
    return plan->param_dtype;
  return plan->matmul_dtype;
}

static void
recipe_op (Ctx *c, const char *name, double bytes_read, double bytes_written, double elems)
{
  ModelOp *op = add (c, model_op_membound (name, c->phase, bytes_read, bytes_written, elems, c->adt));
  op->flags |= MODEL_OP_RECIPE;
}

/* The wgrad GEMM of forward GEMM f with its gradient accumulation (see the header comment). */
static ModelOp
wgrad_op (const Ctx *c, const ModelOp *f)
{
  ModelOp w = model_op_gemm (suffixed (f->name, "_wgrad"), c->phase, MODEL_GRAD_WEIGHT, f->k, f->n, f->m,
                             f->batch, f->dtype, c->adt);
  if (c->p->grad_accum == MODEL_GRAD_ACCUM_FUSED)
    {
      double acc = (double) f->k * f->n * f->batch * model_dtype_bytes (c->p->grad_dtype);
      w.bytes_read += acc;
      w.bytes_written = acc;
    }
  return w;
}

static void
add_wgrad (Ctx *c, const ModelOp *f, ModelOp wgrad)
{
  add (c, wgrad);
  if (c->p->grad_accum == MODEL_GRAD_ACCUM_FUSED)
    return;
  double w = (double) f->k * f->n * f->batch, g = model_dtype_bytes (c->p->grad_dtype);
  ModelOp *op = add (c, model_op_membound (suffixed (f->name, "_grad_accum"), c->phase, w * (c->act + g), w * g,
                                           w, c->adt));
  if (c->p->grad_accum == MODEL_GRAD_ACCUM_AUTOGRAD)
    op->flags |= MODEL_OP_LATER_MICROBATCHES;
}

/* Bytes per element of one quantized copy sent over TP: FP8 1, NVFP4 q. */
static double
quant_bytes (ModelDtype d)
{
  return d == MODEL_DTYPE_FP8 ? 1.0 : NVFP4_BYTES;
}

static ModelOp *
comm (Ctx *c, const char *name, ModelCollective coll, ModelDim dim, int group, double bytes)
{
  return add (c, model_op_comm (name, c->phase, coll, dim, group, bytes));
}

/* A tensor quantized on its local 1/tp shard before an SP all-gather with a per-tensor scale from its
 * own amax (FP8 current scaling, NVFP4) needs the global amax first: TE's quantizer reduces it over
 * the TP group (with_amax_reduction, amax_reduction_group = tp_group, set for the column-parallel
 * input and the row-parallel output gradient under sequence parallelism), one float, blocking. */
static void
tp_amax_reduction (Ctx *c, const char *name)
{
  if (c->p->tp > 1 && (c->mdt == MODEL_DTYPE_FP4 || c->p->fp8_scaling == MODEL_FP8_CURRENT))
    comm (c, name, MODEL_COLL_ALL_REDUCE, MODEL_DIM_TP, c->p->tp, 4.0);
}

/* Forward quantization of the `elems`-element input of GEMM `gemm` (see the header comment);
 * norm_fused: the input is the output of a norm feeding a LayerNormLinear; gathered: it goes on to an
 * SP all-gather. TRUE when backward must transpose the (gathered) FP8 input for wgrad. */
static gboolean
quantize_input (Ctx *c, const char *gemm, double elems, gboolean norm_fused, gboolean gathered)
{
  double p = c->act;
  if (c->mdt == MODEL_DTYPE_FP8)
    {
      gboolean any = c->p->fp8_any_layout;
      if (norm_fused && norm_writes_fp8 (c))
        return !any;
      if (c->p->fp8_scaling == MODEL_FP8_CURRENT)
        recipe_op (c, suffixed (gemm, "_in_amax"), elems * p, 0, elems);
      if (gathered)
        tp_amax_reduction (c, suffixed (gemm, "_in_amax_ar"));
      recipe_op (c, suffixed (gemm, "_in_cast"), elems * p, (gathered || any ? 1.0 : 2.0) * elems, elems);
      return gathered && !any;
    }
  recipe_op (c, suffixed (gemm, "_in_amax"), elems * p, 0, 2.0 * elems);
  if (gathered)
    tp_amax_reduction (c, suffixed (gemm, "_in_amax_ar"));
  recipe_op (c, suffixed (gemm, "_in_quant"), elems * p, 2.0 * NVFP4_BYTES * elems, 2.0 * elems);
  return FALSE;
}

/* Residual add (with dropout: Megatron's fused bias-dropout-add, which also writes a 1-byte mask
 * per element). */
static void
residual (Ctx *c, const char *name)
{
  double e = (double) c->Ts * c->s->hidden;
  elementwise (c, model_op_membound (name, c->phase, 2.0 * e * c->act, e * c->act + (c->p->dropout ? e : 0.0),
                                     e, c->adt));
}

/* TP collective entering a column-parallel GEMM (SP all-gather) or leaving a row-parallel one. */
static ModelOp *
tp_enter (Ctx *c, const char *name)
{
  if (c->p->tp > 1 && c->p->sp)
    return comm (c, name, MODEL_COLL_ALL_GATHER, MODEL_DIM_TP, c->p->tp, (double) c->T * c->s->hidden * c->act);
  return NULL;
}

static void
tp_leave (Ctx *c, const char *rs_name, const char *ar_name)
{
  if (c->p->tp == 1)
    return;
  double bytes = (double) c->T * c->s->hidden * c->act;
  if (c->p->sp)
    comm (c, rs_name, MODEL_COLL_REDUCE_SCATTER, MODEL_DIM_TP, c->p->tp, bytes);
  else
    comm (c, ar_name, MODEL_COLL_ALL_REDUCE, MODEL_DIM_TP, c->p->tp, bytes);
}

/* A transformer-layer GEMM [T, n, k] in the matmul dtype, with its input quantization: a column-
 * parallel input entering through SP all-gather `ag` is quantized before it, on the local Ts tokens,
 * and the all-gather carries the quantized copy. norm_fused: the input is the output of the
 * preceding norm (TE LayerNormLinear). */
static ModelOp *
layer_gemm (Ctx *c, const char *name, gint64 n, gint64 k, gboolean column, gboolean norm_fused,
            const char *ag)
{
  gboolean q = quantized (c->mdt);
  gboolean gathered = ag != NULL && c->p->tp > 1 && c->p->sp;
  gboolean transpose = FALSE;
  if (q && gathered)
    transpose = quantize_input (c, name, (double) c->Ts * k, norm_fused, TRUE);
  if (ag)
    {
      ModelOp *o = tp_enter (c, ag);
      if (o && q)
        o->comm_bytes = (double) c->T * k * quant_bytes (c->mdt); /* the row-wise quantized copy */
    }
  if (q && !gathered)
    transpose = quantize_input (c, name, (double) c->T * k, norm_fused, FALSE);
  ModelOp *op = gemm (c, name, c->T, n, k, 1, c->mdt, column);
  if (transpose)
    op->flags |= MODEL_OP_FP8_INPUT_TRANSPOSE;
  return op;
}

/* Query-key pairs one rank scores per sequence: plain causal attention as the load-balanced CP
 * split gives them (model_op_causal_pairs); an encoder, a sliding window or document masking
 * (model_shape_attention_pairs) split evenly over CP. */
static gint64
attention_pairs (const Ctx *c)
{
  const ModelShape *s = c->s;
  gint64 seq = s->seq_len;
  gboolean plain = !s->encoder && !(model_shape_layer_windowed (s, c->layer) && s->attention_window < seq)
                   && !(s->doc_tokens > 0 && s->doc_tokens < seq);
  if (plain)
    return model_op_causal_pairs (seq, c->p->cp);
  return (gint64) (model_shape_attention_pairs (s, c->layer) / c->p->cp);
}

/* A norm over `elems` elements of width other than hidden (MLA's latent norms). */
static void
norm_elems (Ctx *c, const char *name, double elems, gboolean fp8_out)
{
  add (c, model_op_membound (name, c->phase, elems * c->act, elems * (fp8_out ? 1.0 : c->act),
                             (c->s->norm == MODEL_NORM_LAYERNORM ? 5.0 : 3.0) * elems, c->adt));
}

/* A plain (not LayerNorm-fused, not gathered) linear [m, n, k] with its input quantization. */
static void
plain_gemm (Ctx *c, const char *name, gint64 m, gint64 n, gint64 k)
{
  gboolean transpose = quantized (c->mdt) && quantize_input (c, name, (double) m * k, FALSE, FALSE);
  ModelOp *op = gemm (c, name, m, n, k, 1, c->mdt, FALSE);
  if (transpose)
    op->flags |= MODEL_OP_FP8_INPUT_TRANSPOSE;
}

/* Multi-head latent attention as Megatron-Core builds it (megatron/core/transformer/
 * multi_latent_attention.py, MLASelfAttention; DeepSeek-V2 arXiv 2405.04434 §2.1): the down
 * projections q_down [h, ql] and kv_down [h, kl + rope] are duplicated over TP and run on the
 * rank's own tokens (Ts under SP); their latents are all-gathered over TP under SP (T·ql and
 * T·(kl + rope) elements) and normalized by the LayerNorm-fused up projections q_up
 * [ql, a/t·(nope + rope)] and kv_up [kl, a/t·(nope + v)]; rotary on the rope parts of the queries
 * and the one shared rope key; attention with qk dim nope + rope and v dim v (timed at the mean of
 * the two, shape->head_dim: exact FLOPs, and K/V/Q bytes within the difference of the dims); the
 * output projection [a/t·v, h] row-parallel. Without a query latent q_up is a column-parallel
 * [h, a/t·(nope + rope)] entered through the SP all-gather. */
static void
mla_projections (Ctx *c, gint64 *kv_width)
{
  const ModelShape *s = c->s;
  const ModelPlan *p = c->p;
  gint64 a = s->heads / p->tp, h = s->hidden;
  gint64 dn = s->qk_nope_head_dim, dr = s->qk_rope_head_dim, dv = s->v_head_dim;
  gint64 ql = s->q_lora_rank, kl = s->kv_lora_rank;
  gboolean sp_gather = p->tp > 1 && p->sp;
  norm (c, "attn_norm", c->Ts, ql == 0 && norm_writes_fp8 (c));
  if (ql > 0)
    {
      plain_gemm (c, "q_down", c->Ts, ql, h);
      if (sp_gather)
        comm (c, "q_latent_ag", MODEL_COLL_ALL_GATHER, MODEL_DIM_TP, p->tp, (double) c->T * ql * c->act);
      norm_elems (c, "q_norm", (double) c->T * ql, norm_writes_fp8 (c));
      layer_gemm (c, "q_up", a * (dn + dr), ql, TRUE, TRUE, NULL);
    }
  else
    layer_gemm (c, "q_proj", a * (dn + dr), h, TRUE, TRUE, "q_ag");
  plain_gemm (c, "kv_down", c->Ts, kl + dr, h);
  if (sp_gather)
    comm (c, "kv_latent_ag", MODEL_COLL_ALL_GATHER, MODEL_DIM_TP, p->tp, (double) c->T * (kl + dr) * c->act);
  norm_elems (c, "kv_norm", (double) c->T * kl, norm_writes_fp8 (c));
  layer_gemm (c, "kv_up", a * (dn + dv), kl, TRUE, TRUE, NULL);
  membound (c, "rope", (double) c->T * (a * dr + dr), (double) c->T * (a * dr + dr), 3.0);
  *kv_width = a * (dn + dr + dv);
}

double
model_moe_dispatch_copies (const ModelShape *shape, const ModelPlan *plan, int domains)
{
  int k = shape->moe_top_k;
  if (plan->moe_dispatcher != MODEL_MOE_DISPATCH_DEEPEP || domains <= 1 || k <= 1)
    return k;
  int n = shape->moe_node_limit > 0 ? MIN (shape->moe_node_limit, domains) : domains;
  return n * (1.0 - pow (1.0 - 1.0 / n, k));
}

/* FP8 attention (see the header): the fused kernel reads FP8 Q, K, V (dO in backward). */
static gboolean
fp8_attention (const Ctx *c)
{
  return c->p->fp8_attention && !c->p->unfused_attention
         && (c->mdt == MODEL_DTYPE_FP8 || c->mdt == MODEL_DTYPE_FP4);
}

static void
attention_quantize (Ctx *c, const char *tensor, double elems)
{
  if (c->mdt == MODEL_DTYPE_FP4 || c->p->fp8_scaling == MODEL_FP8_CURRENT)
    recipe_op (c, suffixed (tensor, "_amax"), elems * c->act, 0, elems);
  recipe_op (c, suffixed (tensor, "_quant"), elems * c->act, elems, elems);
}

static void
attention_block (Ctx *c)
{
  const ModelShape *s = c->s;
  const ModelPlan *p = c->p;
  gint64 qd = (gint64) s->heads * s->head_dim / p->tp;
  gint64 kvd = (gint64) s->kv_heads * s->head_dim / p->tp;
  gint64 kv_width = 2 * kvd; /* K and V elements per token on this rank */
  if (s->kv_lora_rank > 0)
    {
      mla_projections (c, &kv_width);
      qd = (gint64) s->heads / p->tp * s->v_head_dim; /* the output projection's input */
    }
  else
    {
      norm (c, "attn_norm", c->Ts, norm_writes_fp8 (c));
      layer_gemm (c, "qkv", qd + 2 * kvd, s->hidden, TRUE, TRUE, "qkv_ag");
      if (s->position == MODEL_POS_ROPE && eager (c))
        {
          double a = c->act, q = (double) c->T * qd, k = (double) c->T * kvd;
          add (c, model_op_membound ("rope_q_float", c->phase, a * q, 4 * q, q, c->adt));
          elementwise (c, model_op_membound ("rope_q_mul", c->phase, 4 * q, 4 * q, 3 * q, c->adt));
          elementwise (c, model_op_membound ("rope", c->phase, 4 * q, a * q, q, c->adt));
          add (c, model_op_membound ("rope_k_float", c->phase, a * k, 4 * k, k, c->adt));
          elementwise (c, model_op_membound ("rope_k_mul", c->phase, 4 * k, 4 * k, 3 * k, c->adt));
          elementwise (c, model_op_membound ("rope_k", c->phase, 4 * k, a * k, k, c->adt));
        }
      else if (s->position == MODEL_POS_ROPE)
        membound (c, "rope", (double) c->T * (qd + kvd), (double) c->T * (qd + kvd), 3.0);
      if (eager (c) && s->kv_heads < s->heads)
        {
          membound_ew (c, "repeat_k", (double) c->T * kvd, (double) c->T * qd, 0.0);
          membound_ew (c, "repeat_v", (double) c->T * kvd, (double) c->T * qd, 0.0);
        }
    }
  if (p->cp > 1)
    {
      ModelOp *op = comm (c, "cp_kv", MODEL_COLL_CP_KV_EXCHANGE, MODEL_DIM_CP, p->cp,
                          (double) (p->cp - 1) * c->T * kv_width * c->act);
      op->overlap_next = TRUE;
    }
  if (fp8_attention (c))
    attention_quantize (c, "attn_qkv", (double) c->T * (qd + kv_width));
  ModelOp attn = model_op_attention ("attn", c->phase, p->micro_batch, s->heads / p->tp,
                                     s->kv_heads / p->tp, s->seq_len / p->cp, s->seq_len, s->head_dim,
                                     attention_pairs (c), fp8_attention (c) ? MODEL_DTYPE_FP8 : c->adt);
  if (p->unfused_attention)
    attn.flags |= MODEL_OP_UNFUSED_BMM;
  add (c, attn);
  if (p->unfused_attention)
    {
      double E = (double) p->micro_batch * (s->heads / p->tp) * (s->seq_len / p->cp) * s->seq_len;
      add (c, model_op_membound ("attn_scores_io", c->phase, E * c->act, E * c->act, 0, c->adt));
      membound (c, "attn_softmax", E, E, 5.0);
      if (p->dropout)
        add (c, model_op_membound ("attn_dropout", c->phase, E * c->act, E * c->act + E, E, c->adt));
    }
  if (eager (c))
    membound_ew (c, "attn_out_contiguous", (double) c->T * qd, (double) c->T * qd, 0.0);
  layer_gemm (c, "proj", s->hidden, qd, FALSE, FALSE, NULL);
  tp_leave (c, "proj_rs", "proj_ar");
  residual (c, "attn_residual");
}

/* Elementwise FLOPs of the activation per output element (rough; never in model FLOPs). */
static double
act_flops (const ModelShape *s)
{
  switch (s->activation)
    {
    case MODEL_ACT_SWIGLU: return 6.0;
    case MODEL_ACT_GEGLU: return 9.0;
    case MODEL_ACT_SQUARED_RELU: return 2.0;
    case MODEL_ACT_GELU:
    default: return 8.0;
    }
}

/* Dense MLP of width f (per TP rank f/tp), used for dense layers and shared experts; norm_fused:
 * FC1 is a LayerNormLinear fed by the preceding norm (dense layers; MoE shared experts share the
 * norm with the router and are plain linears). */
static void
dense_mlp (Ctx *c, gint64 f, const char *ag, const char *fc1, const char *actn, const char *fc2,
           const char *rs, const char *ar, gboolean norm_fused)
{
  const ModelShape *s = c->s;
  gboolean glu = model_shape_glu (s);
  gint64 fl = f / c->p->tp;
  ModelOp *up = layer_gemm (c, fc1, (glu ? 2 : 1) * fl, s->hidden, TRUE, norm_fused, ag);
  if (c->p->gemm_gelu_fusion && !glu && c->mdt == MODEL_DTYPE_FP8)
    {
      /* GELU in FC1's epilogue, which writes FC2's FP8 input and keeps the pre-activation (p bytes)
       * for dGELU; FC2's wgrad takes the FP8 input transposed (fp8_transpose). */
      up->flags |= MODEL_OP_GELU_EPILOGUE;
      up->bytes_written += (double) c->T * fl;
      ModelOp *down = gemm (c, fc2, c->T, s->hidden, fl, 1, c->mdt, FALSE);
      if (!c->p->fp8_any_layout)
        down->flags |= MODEL_OP_FP8_INPUT_TRANSPOSE;
      tp_leave (c, rs, ar);
      return;
    }
  if (glu && eager (c))
    {
      /* silu(w1 x) writes its own tensor; the product with w3 x reads both. */
      membound_ew (c, "act_silu", (double) c->T * fl, (double) c->T * fl, act_flops (s));
      membound_ew (c, actn, 2.0 * c->T * fl, (double) c->T * fl, 1.0);
    }
  else
    membound_ew (c, actn, (double) c->T * fl * (glu ? 2 : 1), (double) c->T * fl, act_flops (s));
  layer_gemm (c, fc2, s->hidden, fl, FALSE, FALSE, NULL);
  tp_leave (c, rs, ar);
}

static void
moe_mlp (Ctx *c)
{
  const ModelShape *s = c->s;
  const ModelPlan *p = c->p;
  gboolean glu = model_shape_glu (s);
  int E = s->moe_experts, k = s->moe_top_k, ep = p->ep, etp = model_plan_expert_tp (p);
  gint64 h = s->hidden;
  gint64 Tm = c->Ts;
  /* Routed copies this rank handles: capacity-padded, or the busiest rank's share (moe_imbalance): every
   * rank waits for that one at the combine, so the simulated rank stands for it. */
  double disp = (double) Tm * k * (s->moe_capacity_factor > 0 ? s->moe_capacity_factor : model_shape_moe_load (s));
  gint64 m_e = (gint64) ceil ((double) etp * disp * ep / E);
  gint64 fe = s->moe_ffn_hidden / etp;
  double tok_bytes = h * c->act;

  gemm (c, "router", Tm, E, h, 1, c->adt, FALSE);
  add (c, model_op_membound ("router_topk", c->phase, (double) Tm * E * 4, (double) Tm * k * 8,
                             (double) Tm * E * 4, MODEL_DTYPE_FP32));
  membound (c, "permute", (double) Tm * h, disp * h, 0.0);
  if (ep > 1)
    {
      ModelOp *op = comm (c, "moe_dispatch", MODEL_COLL_ALL_TO_ALL, MODEL_DIM_EP, ep,
                          disp * tok_bytes);
      op->expert_group = TRUE;
    }
  if (etp > 1)
    {
      ModelOp *op = comm (c, "moe_etp_ag", MODEL_COLL_ALL_GATHER, MODEL_DIM_TP, etp, etp * disp * tok_bytes);
      op->expert_group = TRUE;
    }
  if (quantized (c->mdt))
    quantize_input (c, "expert_fc1", (double) m_e * (E / ep) * h, FALSE, FALSE);
  gemm (c, "expert_fc1", m_e, (glu ? 2 : 1) * fe, h, E / ep, c->mdt, FALSE);
  membound (c, "expert_act", (double) m_e * (E / ep) * fe * (glu ? 2 : 1), (double) m_e * (E / ep) * fe,
            act_flops (s));
  if (quantized (c->mdt))
    quantize_input (c, "expert_fc2", (double) m_e * (E / ep) * fe, FALSE, FALSE);
  gemm (c, "expert_fc2", m_e, h, fe, E / ep, c->mdt, FALSE);
  if (etp > 1)
    {
      ModelOp *op = comm (c, "moe_etp_rs", MODEL_COLL_REDUCE_SCATTER, MODEL_DIM_TP, etp, etp * disp * tok_bytes);
      op->expert_group = TRUE;
    }
  if (ep > 1)
    {
      ModelOp *op = comm (c, "moe_combine", MODEL_COLL_ALL_TO_ALL, MODEL_DIM_EP, ep,
                          disp * tok_bytes);
      op->expert_group = TRUE;
    }
  membound (c, "unpermute", disp * h, (double) Tm * h, (double) k);
  if (s->moe_shared_experts > 0)
    dense_mlp (c, (gint64) s->moe_shared_experts * s->moe_ffn_hidden, "shared_ag", "shared_fc1",
               "shared_act", "shared_fc2", "shared_rs", "shared_ar", FALSE);
}

static void
layer_forward (Ctx *c)
{
  attention_block (c);
  gboolean moe = model_shape_layer_is_moe (c->s, c->layer);
  norm (c, "mlp_norm", c->Ts, !moe && norm_writes_fp8 (c));
  if (moe)
    moe_mlp (c);
  else
    dense_mlp (c, c->s->ffn_hidden, "fc1_ag", "fc1", "act", "fc2", "fc2_rs", "fc2_ar", TRUE);
  residual (c, "mlp_residual");
}

/* Backward recipe kernels of quantized GEMM f (see the header comment): the output gradient's
 * quantization (gathered: on the local 1/tp shard before the SP all-gather, FP8 row-wise with the
 * transpose of the gathered copy), and the transpose of an FP8 input flagged for it. */
static void
backward_quantize (Ctx *c, const ModelOp *f, gboolean gathered)
{
  double p = c->act;
  double b = (double) MAX (f->batch, 1);
  double e_out = (double) f->m * f->n * b, e_in = (double) f->m * f->k * b;
  double e_loc = gathered ? e_out / c->p->tp : e_out;
  if (f->dtype == MODEL_DTYPE_FP8)
    {
      double copies = c->p->fp8_any_layout ? 1.0 : 2.0; /* the cast's FP8 copy, and its transpose */
      if (c->p->fp8_scaling == MODEL_FP8_CURRENT)
        recipe_op (c, suffixed (f->name, "_grad_amax"), e_loc * p, 0, e_loc);
      if (gathered)
        tp_amax_reduction (c, suffixed (f->name, "_grad_amax_ar"));
      if (f->flags & MODEL_OP_GELU_EPILOGUE)
        /* fp8_cast_transpose_bgrad_dgelu_fused: dGELU of the kept pre-activation, cast and transpose */
        recipe_op (c, suffixed (f->name, "_grad_dgelu_cast"), 2.0 * e_loc * p, copies * e_loc, 2.0 * e_loc);
      else
        recipe_op (c, suffixed (f->name, "_grad_cast"), e_loc * p, (gathered ? 1.0 : copies) * e_loc, e_loc);
      if (gathered && !c->p->fp8_any_layout)
        recipe_op (c, suffixed (f->name, "_grad_transpose"), e_out, e_out, 0);
      if (f->flags & MODEL_OP_FP8_INPUT_TRANSPOSE)
        recipe_op (c, suffixed (f->name, "_in_transpose"), e_in, e_in, 0);
    }
  else
    {
      recipe_op (c, suffixed (f->name, "_grad_amax"), e_loc * p, 0, 2.0 * e_loc);
      if (gathered)
        tp_amax_reduction (c, suffixed (f->name, "_grad_amax_ar"));
      recipe_op (c, suffixed (f->name, "_grad_quant"), e_loc * p, 2.0 * NVFP4_BYTES * e_loc, 2.0 * e_loc);
    }
}

/* TRUE when forward op i is a quantized GEMM whose output is reduce-scattered over TP (SP): its
 * backward starts with the all-gather of the output gradient. */
static gboolean
sp_scattered (const ModelOp *fwd, int n, int i)
{
  return fwd[i].kind == MODEL_OP_GEMM && quantized (fwd[i].dtype) && i + 1 < n && fwd[i + 1].kind == MODEL_OP_COMM
         && fwd[i + 1].coll == MODEL_COLL_REDUCE_SCATTER && fwd[i + 1].dim == MODEL_DIM_TP && !fwd[i + 1].expert_group;
}

/* Appends the backward of forward list fwd[0..n) (in reverse), per the rules in model/layer.h. */
static void
backward_of (Ctx *c, const ModelOp *fwd, int n)
{
  const ModelPlan *p = c->p;
  for (int i = n - 1; i >= 0; i--)
    {
      const ModelOp *f = &fwd[i];
      ModelOp op;
      switch (f->kind)
        {
        case MODEL_OP_GEMM:
          {
            gboolean column = (f->flags & MODEL_OP_COLUMN_PARALLEL) != 0;
            /* Recipe kernels of the backward, issued before the GEMM's dgrad and its collectives
             * (so the overlap of those with dgrad/wgrad stays as it is; on one compute stream the
             * order does not change the sum). */
            if (quantized (f->dtype) && !sp_scattered (fwd, n, i))
              backward_quantize (c, f, FALSE);
            gboolean gathered = column && p->sp && i > 0 && fwd[i - 1].kind == MODEL_OP_COMM
                                && fwd[i - 1].coll == MODEL_COLL_ALL_GATHER
                                && fwd[i - 1].dim == MODEL_DIM_TP && !fwd[i - 1].expert_group;
            ModelOp dgrad = model_op_gemm (suffixed (f->name, "_dgrad"), c->phase, MODEL_GRAD_INPUT,
                                           f->m, f->k, f->n, f->batch, f->dtype, c->adt);
            ModelOp wgrad = wgrad_op (c, f);
            if (gathered && p->framework == MODEL_FW_FSDP2)
              {
                /* DTensor TP (torchtitan's ColwiseParallel over a Shard(1) input): autograd keeps the
                 * forward's gathered input for wgrad (the recompute gathers it again where the layer
                 * is checkpointed), so nothing is re-gathered; the reduce-scatter of dgrad is the
                 * backward of the input's redistribute, a node after the matmul's, so it runs once
                 * both dgrad and wgrad are done and the norm backward before it waits for it. Async
                 * TP (torch's micro-pipelined matmul-reduce-scatter) instead runs it beside wgrad. */
                add (c, dgrad);
                if (!p->tp_comm_overlap)
                  add_wgrad (c, f, wgrad);
                ModelOp *o = comm (c, suffixed (f->name, "_dgrad_rs"), MODEL_COLL_REDUCE_SCATTER, MODEL_DIM_TP,
                                   p->tp, (double) f->m * f->k * c->act);
                o->overlap_next = p->tp_comm_overlap;
                if (p->tp_comm_overlap)
                  add_wgrad (c, f, wgrad);
                i--;
              }
            else if (gathered)
              {
                /* Re-gather the SP-sharded input for wgrad while dgrad runs, then reduce-scatter
                 * dgrad while wgrad runs (Megatron's LinearWithGradAccumulation...). */
                const ModelOp *ag = &fwd[i - 1];
                ModelOp *o = comm (c, suffixed (f->name, "_input_ag"), MODEL_COLL_ALL_GATHER,
                                   MODEL_DIM_TP, p->tp, ag->comm_bytes);
                o->overlap_next = TRUE;
                add (c, dgrad);
                /* dgrad is in the param dtype whatever the input's all-gather carried */
                o = comm (c, suffixed (f->name, "_dgrad_rs"), MODEL_COLL_REDUCE_SCATTER, MODEL_DIM_TP,
                          p->tp, (double) f->m * f->k * c->act);
                o->overlap_next = TRUE;
                add_wgrad (c, f, wgrad);
                i--; /* the forward all-gather is accounted for */
              }
            else if (column && !p->sp)
              {
                add (c, dgrad);
                ModelOp *o = comm (c, suffixed (f->name, "_dgrad_ar"), MODEL_COLL_ALL_REDUCE,
                                   MODEL_DIM_TP, p->tp, (double) f->m * f->k * c->act);
                o->overlap_next = TRUE;
                add_wgrad (c, f, wgrad);
              }
            else
              {
                add (c, dgrad);
                add_wgrad (c, f, wgrad);
              }
            break;
          }
        case MODEL_OP_ATTENTION:
          {
            gboolean ring = i > 0 && fwd[i - 1].kind == MODEL_OP_COMM
                            && fwd[i - 1].coll == MODEL_COLL_CP_KV_EXCHANGE;
            if (model_plan_recomputes (p, MODEL_RC_CORE_ATTN))
              {
                ModelPhase saved = c->phase;
                c->phase = MODEL_PHASE_RECOMPUTE;
                if (ring)
                  add (c, fwd[i - 1]);
                add (c, *f);
                c->phase = saved;
              }
            if (ring)
              {
                /* Backward ring passes K,V and accumulates dK,dV: twice the forward bytes. */
                op = fwd[i - 1];
                op.name = suffixed (op.name, "_bwd");
                op.comm_bytes *= 2.0;
                op.overlap_next = TRUE;
                add (c, op);
                i--;
              }
            if (f->dtype == MODEL_DTYPE_FP8 && fp8_attention (c))
              attention_quantize (c, "attn_grad", (double) f->seqs * f->seq_q * f->heads * f->head_dim);
            op = model_op_attention (suffixed (f->name, "_bwd"), MODEL_PHASE_BWD, f->seqs, f->heads,
                                     f->kv_heads, f->seq_q, f->seq_kv, f->head_dim, f->pairs, f->dtype);
            /* A flash kernel keeps no scores: its backward recomputes S = QKᵀ and P before dV, dP,
             * dQ, dK, five matmuls to the forward's two (FlashAttention's benchmark counts backward
             * FLOPs as 2.5x forward: benchmarks/benchmark_flash_attention.py). The unfused path
             * stored P (attn_scores_io) and does the four. */
            if (!c->p->unfused_attention)
              {
                op.flops *= 1.25;
                op.flags |= MODEL_OP_FLASH_BWD;
              }
            else
              op.flags |= MODEL_OP_UNFUSED_BMM;
            add (c, op);
            break;
          }
        case MODEL_OP_MEMBOUND:
          if (f->flags & MODEL_OP_RECIPE)
            continue; /* quantization is straight-through: the gradient needs no kernel of its own */
          if (strcmp (f->name, "attn_scores_io") == 0)
            /* dP = dO·Vᵀ written, P read for dV = Pᵀ·dO, dS read by dQ and dK (E·p each). */
            add (c, model_op_membound ("attn_scores_io_bwd", c->phase, 3.0 * f->bytes_read,
                                       f->bytes_read, 0, f->dtype));
          else if (strcmp (f->name, "loss_unfused") == 0)
            /* In-place multiply by the loss gradient (read and write 4 B), then the cast back to the
             * logits' dtype (read 4 B, write p). */
            add (c, model_op_membound ("loss_unfused_bwd", c->phase, 8.0 * f->bytes_written / 16.0,
                                       (4.0 + c->act) * f->bytes_written / 16.0, f->flops, f->dtype));
          else if (strcmp (f->name, "attn_dropout") == 0)
            /* read dy and the 1-byte mask (forward wrote E·p + E), write dx. */
            add (c, model_op_membound ("attn_dropout_bwd", c->phase, f->bytes_written,
                                       f->bytes_read, f->flops, f->dtype));
          else
            {
              /* The dropout mask a fused bias-dropout-add wrote is read back. */
              double mask = c->p->dropout && (strcmp (f->name, "attn_residual") == 0
                                              || strcmp (f->name, "mlp_residual") == 0)
                              ? f->bytes_written - f->bytes_read / 2.0 : 0.0;
              ModelOp *b = add (c, model_op_membound (suffixed (f->name, "_bwd"), c->phase,
                                                      2.0 * f->bytes_read + mask, f->bytes_read, 2.0 * f->flops,
                                                      f->dtype));
              b->flags |= f->flags & MODEL_OP_ELEMENTWISE; /* autograd's backward of an ATen kernel */
            }
          break;
        case MODEL_OP_COMM:
          /* A row-parallel GEMM's output gradient under SP: quantized on the local shard before the
           * all-gather (TE gathers it in the low precision, as in forward), so the all-gather still
           * directly precedes the dgrad it overlaps with. */
          op = *f;
          op.name = suffixed (f->name, "_bwd");
          if (i > 0 && sp_scattered (fwd, n, i - 1))
            {
              backward_quantize (c, &fwd[i - 1], TRUE);
              /* FP8 gathers the row-wise copy; NVFP4 the row-wise and the column-wise one. */
              op.comm_bytes = f->comm_bytes / c->act
                              * (fwd[i - 1].dtype == MODEL_DTYPE_FP8 ? 1.0 : 2.0 * NVFP4_BYTES);
            }
          op.overlap_next = FALSE;
          switch (f->coll)
            {
            case MODEL_COLL_ALL_GATHER: op.coll = MODEL_COLL_REDUCE_SCATTER; break;
            case MODEL_COLL_REDUCE_SCATTER: op.coll = MODEL_COLL_ALL_GATHER; break;
            case MODEL_COLL_ALL_REDUCE:
              if (f->dim == MODEL_DIM_TP && !f->expert_group)
                continue; /* forward "g" all-reduce is the identity in backward */
              break;
            default: break;
            }
          add (c, op);
          break;
        }
    }
}

/* Forward ops of a unit (layer, embedding or head) into a scratch array, then the pass. */
typedef void (*UnitForward) (Ctx *c);

/* torchtitan's per-op selective checkpointing (torchtitan/distributed/activation_checkpoint.py,
 * SelectiveAC with the "op" policy): inside a checkpointed block the outputs of the save-list ops
 * are kept (attention kernels, amax, reduce-scatter and all-to-all, and the linear layers), except
 * that every second linear layer of the block, counted in forward order, is recomputed; every other
 * op is recomputed, and early_stop is off, so the whole block forward replays minus what was kept.
 * Linear layers are torchtitan's modules: a fused "qkv" GEMM stands for wq, wk, wv and a gated
 * "fc1" for w1, w3, so a Llama block keeps wq, wv, w1, w2 and recomputes wk, wo, w3.
 * linear_parts() gives the widths (n) of the modules a GEMM stands for; op_recomputed_n() the width
 * it replays, advancing the block's count. */
static int
linear_parts (const ModelShape *s, const ModelPlan *p, const ModelOp *f, gint64 *w)
{
  if (strcmp (f->name, "qkv") == 0)
    {
      gint64 kvd = (gint64) s->kv_heads * s->head_dim / p->tp;
      w[0] = f->n - 2 * kvd, w[1] = kvd, w[2] = kvd;
      return 3;
    }
  if (model_shape_glu (s) && (strcmp (f->name, "fc1") == 0 || strcmp (f->name, "shared_fc1") == 0
                              || strcmp (f->name, "expert_fc1") == 0))
    {
      w[0] = w[1] = f->n / 2;
      return 2;
    }
  w[0] = f->n;
  return 1;
}

static gint64
op_recomputed_n (const ModelShape *s, const ModelPlan *p, const ModelOp *f, int *count)
{
  gint64 w[3], n = 0;
  int parts = linear_parts (s, p, f, w);
  for (int i = 0; i < parts; i++)
    if (++*count % 2 == 0)
      n += w[i];
  return n;
}

/* Whether a forward op replays in the recompute of SELECTIVE_OP (GEMMs: see op_recomputed_n). */
static gboolean
op_replays (const ModelOp *f)
{
  switch (f->kind)
    {
    case MODEL_OP_ATTENTION:
      return FALSE;
    case MODEL_OP_COMM:
      return f->coll == MODEL_COLL_ALL_GATHER || f->coll == MODEL_COLL_ALL_REDUCE;
    default:
      return TRUE;
    }
}

/* The forward GEMM f narrowed to n output columns (the recomputed linear layers it stands for). */
static ModelOp
gemm_narrowed (const ModelOp *f, gint64 n)
{
  ModelOp op = *f;
  double in = f->bytes_read / (((double) f->m * f->k + (double) f->k * f->n) * f->batch);
  double out = f->bytes_written / ((double) f->m * f->n * f->batch);
  op.n = n;
  op.flops = 2.0 * (double) f->m * (double) n * (double) f->k * (double) f->batch;
  op.bytes_read = ((double) f->m * f->k + (double) f->k * n) * f->batch * in;
  op.bytes_written = (double) f->m * n * f->batch * out;
  return op;
}

/* Whether forward op `f` belongs to a module selective recompute replays in the backward
 * (model_plan_recomputes; Megatron-Core's --recompute-modules): the pre-norms (layernorm), MLA's
 * latent norms, up-projections and rope (mla_up_proj: Megatron's checkpoint spans the latents to
 * Q, K and V), the routed experts' activation (moe_act). Casts to FP8 of a recomputed GEMM's input
 * count with it. */
static gboolean
op_in_recomputed_module (const ModelPlan *plan, const ModelOp *f)
{
  static const char *const norm[] = { "attn_norm", "mlp_norm", NULL };
  static const char *const mla[] = { "q_norm", "q_up", "kv_norm", "kv_up", "rope", NULL };
  static const char *const act[] = { "expert_act", NULL };
  const struct { ModelRecomputeModule bit; const char *const *names; } mods[] = {
    { MODEL_RC_LAYERNORM, norm }, { MODEL_RC_MLA_UP_PROJ, mla }, { MODEL_RC_MOE_ACT, act },
  };
  if (f->kind == MODEL_OP_COMM || f->name == NULL)
    return FALSE;
  for (gsize m = 0; m < G_N_ELEMENTS (mods); m++)
    {
      if (!model_plan_recomputes (plan, mods[m].bit))
        continue;
      for (int i = 0; mods[m].names[i]; i++)
        {
          gsize n = strlen (mods[m].names[i]);
          if (strncmp (f->name, mods[m].names[i], n) == 0 && (f->name[n] == '\0' || f->name[n] == '_'))
            return TRUE;
        }
    }
  return FALSE;
}

static void
emit (const ModelShape *shape, const ModelPlan *plan, int layer, ModelPass pass, GArray *ops,
      UnitForward forward, gboolean recomputable)
{
  Ctx c;
  if (pass == MODEL_PASS_FORWARD)
    {
      ctx_init (&c, shape, plan, layer, ops);
      forward (&c);
      return;
    }
  g_autoptr (GArray) fwd = model_op_array_new ();
  ctx_init (&c, shape, plan, layer, fwd);
  forward (&c);
  c.ops = ops;
  if (recomputable && plan->recompute == MODEL_RECOMPUTE_FULL)
    for (guint i = 0; i < fwd->len; i++)
      {
        ModelOp op = g_array_index (fwd, ModelOp, i);
        op.phase = MODEL_PHASE_RECOMPUTE;
        g_array_append_val (ops, op);
      }
  if (recomputable && plan->recompute == MODEL_RECOMPUTE_SELECTIVE_OP)
    {
      int count = 0;
      for (guint i = 0; i < fwd->len; i++)
        {
          const ModelOp *f = &g_array_index (fwd, ModelOp, i);
          ModelOp op = *f;
          if (f->kind == MODEL_OP_GEMM)
            {
              gint64 n = op_recomputed_n (shape, plan, f, &count);
              if (n == 0)
                continue;
              op = gemm_narrowed (f, n);
            }
          else if (!op_replays (f))
            continue;
          op.phase = MODEL_PHASE_RECOMPUTE;
          g_array_append_val (ops, op);
        }
    }
  if (recomputable && plan->recompute == MODEL_RECOMPUTE_SELECTIVE)
    /* The recomputed modules' forward ops, replayed at the start of the layer's backward. */
    for (guint i = 0; i < fwd->len; i++)
      {
        ModelOp op = g_array_index (fwd, ModelOp, i);
        if (!op_in_recomputed_module (plan, &op))
          continue;
        op.phase = MODEL_PHASE_RECOMPUTE;
        g_array_append_val (ops, op);
      }
  c.phase = MODEL_PHASE_BWD;
  backward_of (&c, (const ModelOp *) fwd->data, (int) fwd->len);
}

double
model_layer_selective_op_saved_bytes (const ModelShape *shape, const ModelPlan *plan, int layer)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, 0.0);
  g_autoptr (GArray) fwd = model_op_array_new ();
  model_layer_ops (shape, plan, layer, MODEL_PASS_FORWARD, fwd);
  double saved = 0.0;
  int count = 0;
  for (guint i = 0; i < fwd->len; i++)
    {
      const ModelOp *f = &g_array_index (fwd, ModelOp, i);
      switch (f->kind)
        {
        case MODEL_OP_GEMM:
          {
            gint64 kept = f->n - op_recomputed_n (shape, plan, f, &count);
            saved += f->bytes_written * (double) kept / (double) f->n;
            break;
          }
        case MODEL_OP_ATTENTION:
          saved += f->bytes_written;  /* output and fp32 log-sum-exp */
          break;
        case MODEL_OP_COMM:
          if (f->coll == MODEL_COLL_REDUCE_SCATTER)
            saved += f->comm_bytes / MAX (f->group_size, 1);
          else if (f->coll == MODEL_COLL_ALL_TO_ALL)
            saved += f->comm_bytes;
          break;
        default:
          break;
        }
    }
  return saved;
}

void
model_layer_ops (const ModelShape *shape, const ModelPlan *plan, int layer, ModelPass pass,
                 GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  g_return_if_fail (layer >= 0 && layer < shape->layers);
  emit (shape, plan, layer, pass, ops, layer_forward, TRUE);
}

/* Embedding lookup of `tokens` token ids (4 bytes each) into rows of h. */
static void
lookup (Ctx *c, const char *name, gint64 tokens)
{
  double h = c->s->hidden;
  add (c, model_op_membound (name, c->phase, (double) tokens * (h * c->act + 4), (double) tokens * h * c->act,
                             0.0, c->adt));
}

static void
embedding_forward (Ctx *c)
{
  const ModelShape *s = c->s;
  gint64 h = s->hidden;
  /* Vocab-parallel lookup: every rank writes T x h (zeros for tokens outside its vocab shard). */
  lookup (c, "embedding", c->T);
  if (s->position == MODEL_POS_LEARNED)
    membound (c, "position_add", 2.0 * c->T * h, (double) c->T * h, 1.0);
  tp_leave (c, "embedding_rs", "embedding_ar");
}

/* The head: final norm, LM head and loss over the T tokens. An encoder's masked-LM head
 * (google-research/bert run_pretraining.py get_masked_lm_output; NVIDIA's MLPerf BERT gathers the
 * masked positions first) scores only the masked share: a transform [h, h] (GeLU, norm, run
 * replicated over TP) and the decoder over ceil(mlm_fraction·T) tokens. */
static void
head_forward (Ctx *c)
{
  const ModelShape *s = c->s;
  const ModelPlan *p = c->p;
  gint64 vl = model_shape_padded_vocab (s, p->tp) / p->tp;
  if (s->encoder && s->mlm_fraction > 0)
    {
      gint64 Tm = (gint64) ceil (s->mlm_fraction * (double) c->T);
      gemm (c, "mlm_transform", Tm, s->hidden, s->hidden, 1, c->adt, FALSE);
      membound (c, "mlm_act", (double) Tm * s->hidden, (double) Tm * s->hidden, 8.0);
      norm (c, "final_norm", Tm, FALSE);
      gemm (c, "lm_head", Tm, vl, s->hidden, 1, c->adt, TRUE);
      add (c, model_op_membound ("loss", c->phase, (double) Tm * vl * c->act, (double) Tm * 4, 5.0 * Tm * vl,
                                 MODEL_DTYPE_FP32));
      if (p->tp > 1)
        comm (c, "loss_ar", MODEL_COLL_ALL_REDUCE, MODEL_DIM_TP, p->tp, 3.0 * Tm * 4);
      return;
    }
  norm (c, "final_norm", c->Ts, FALSE);
  tp_enter (c, "lm_head_ag");
  gemm (c, "lm_head", c->T, vl, s->hidden, 1, c->adt, TRUE);
  double E = (double) c->T * vl;
  if (p->loss_fusion)
    /* One fused kernel: the logits read once, a loss per token written. */
    add (c, model_op_membound ("loss", c->phase, E * c->act, (double) c->T * 4, 5.0 * E, MODEL_DTYPE_FP32));
  else
    /* Unfused (see the top comment): cast, max, subtract, exp, sum, divide over E fp32 logits. */
    add (c, model_op_membound ("loss_unfused", c->phase, E * (c->act + 20.0), 16.0 * E, 5.0 * E,
                               MODEL_DTYPE_FP32));
  if (p->tp > 1)
    comm (c, "loss_ar", MODEL_COLL_ALL_REDUCE, MODEL_DIM_TP, p->tp, 3.0 * c->T * 4);
}

void
model_layer_embedding_ops (const ModelShape *shape, const ModelPlan *plan, ModelPass pass,
                           GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  emit (shape, plan, -1, pass, ops, embedding_forward, FALSE);
}

void
model_layer_head_ops (const ModelShape *shape, const ModelPlan *plan, ModelPass pass, GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  emit (shape, plan, -1, pass, ops, head_forward, FALSE);
}

/* One multi-token-prediction module (DeepSeek-V3 §2.2; Megatron-Core multi_token_prediction.py):
 * the embedding of the tokens shifted by d + 1 (the shared table) and the previous depth's hidden
 * state, each normalized, concatenated and projected [2h -> h] (timed on the rank's Ts tokens:
 * the FLOPs of the TP-split projection over T, without its collectives), one transformer layer
 * (layer index layers + d, so MoE when the main model's layers there would be) and the shared
 * head with its own norm and loss. */
static void
mtp_forward (Ctx *c)
{
  gint64 h = c->s->hidden;
  lookup (c, "mtp_embedding", c->Ts);
  norm (c, "mtp_enorm", c->Ts, FALSE);
  norm (c, "mtp_hnorm", c->Ts, FALSE);
  gemm (c, "mtp_eh_proj", c->Ts, h, 2 * h, 1, c->adt, FALSE);
  layer_forward (c);
  head_forward (c);
}

static void
mtp_ops (const ModelShape *shape, const ModelPlan *plan, ModelPass pass, GArray *ops)
{
  for (int i = 0; i < shape->mtp_depth; i++)
    {
      int d = pass == MODEL_PASS_FORWARD ? i : shape->mtp_depth - 1 - i;
      emit (shape, plan, shape->layers + d, pass, ops, mtp_forward, TRUE);
    }
}

void
model_layer_chunk_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk,
                       ModelPass pass, GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  int first = 0;
  int n = model_plan_chunk_layers (plan, shape, pp_rank, chunk, &first);
  gboolean emb = model_plan_chunk_has_embedding (plan, pp_rank, chunk);
  gboolean loss = model_plan_chunk_has_loss (plan, pp_rank, chunk);
  if (pass == MODEL_PASS_FORWARD)
    {
      if (emb)
        model_layer_embedding_ops (shape, plan, pass, ops);
      for (int l = first; l < first + n; l++)
        model_layer_ops (shape, plan, l, pass, ops);
      if (loss)
        {
          mtp_ops (shape, plan, pass, ops);
          model_layer_head_ops (shape, plan, pass, ops);
        }
    }
  else
    {
      if (loss)
        {
          model_layer_head_ops (shape, plan, pass, ops);
          mtp_ops (shape, plan, pass, ops);
        }
      for (int l = first + n - 1; l >= first; l--)
        model_layer_ops (shape, plan, l, pass, ops);
      if (emb)
        model_layer_embedding_ops (shape, plan, pass, ops);
    }
}

void
model_layer_rank_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  for (int c = 0; c < plan->vpp; c++)
    model_layer_chunk_ops (shape, plan, pp_rank, c, MODEL_PASS_FORWARD, ops);
  for (int c = plan->vpp - 1; c >= 0; c--)
    model_layer_chunk_ops (shape, plan, pp_rank, c, MODEL_PASS_BACKWARD, ops);
}

/* Parameters of one MLP of width f split `split` ways (column FC1, row FC2: the FC2 bias is
 * replicated). */
static gint64
mlp_rank_params (const ModelShape *s, gint64 f, int split)
{
  gboolean glu = model_shape_glu (s);
  gint64 up = (glu ? 2 : 1) * f;
  gint64 w = (up + f) * s->hidden / split;
  return w + (s->bias ? up / split + s->hidden : 0);
}

static gint64
norm_rank_params (const ModelShape *s)
{
  return (gint64) s->hidden * (s->norm == MODEL_NORM_LAYERNORM && s->bias ? 2 : 1);
}

/* Parameters of chunk `chunk` of pipeline rank pp_rank (see model_layer_rank_params). */
static void
chunk_params (const ModelShape *s, const ModelPlan *plan, int pp_rank, int chunk, ModelRankParams *r)
{
  int tp = plan->tp;
  gint64 h = s->hidden;
  gint64 attn = model_shape_attention_rank_params (s, tp, TRUE);
  int first = 0;
  int n = model_plan_chunk_layers (plan, s, pp_rank, chunk, &first);
  gboolean loss = model_plan_chunk_has_loss (plan, pp_rank, chunk);
  r->dense = r->expert = 0;
  /* The last chunk also holds the MTP modules: projection [2h, h] (split over TP), three norms and
   * a layer each. */
  for (int l = first; l < first + n + (loss ? s->mtp_depth : 0); l++)
    {
      if (l >= first + n)
        r->dense += 2 * h * h / tp + 3 * norm_rank_params (s);
      r->dense += attn + 2 * norm_rank_params (s);
      if (model_shape_layer_is_moe (s, l))
        {
          int etp = model_plan_expert_tp (plan);
          r->dense += h * s->moe_experts; /* router, replicated */
          if (s->moe_shared_experts > 0)
            r->dense += mlp_rank_params (s, (gint64) s->moe_shared_experts * s->moe_ffn_hidden, tp);
          r->expert += (gint64) (s->moe_experts / plan->ep) * mlp_rank_params (s, s->moe_ffn_hidden, etp);
        }
      else
        r->dense += mlp_rank_params (s, s->ffn_hidden, tp);
    }
  gint64 vocab_shard = model_shape_padded_vocab (s, tp) / tp * h;
  if (model_plan_chunk_has_embedding (plan, pp_rank, chunk))
    r->dense += vocab_shard + (s->position == MODEL_POS_LEARNED ? (gint64) s->max_positions * h : 0);
  if (loss)
    {
      r->dense += norm_rank_params (s);
      if (s->encoder)
        {
          /* Token types, the MLM transform and its norm, decoder bias, pooler (model/shape.h). */
          ModelParams mp = { 0 };
          model_shape_params (s, s->vocab, &mp);
          r->dense += mp.encoder_extra;
        }
      /* Untied head, or the copy of the tied embedding Megatron keeps on the last stage. */
      if (!s->tied_embeddings || plan->pp > 1)
        r->dense += vocab_shard;
    }
}

void
model_layer_rank_params (const ModelShape *shape, const ModelPlan *plan, int pp_rank,
                         ModelRankParams *out)
{
  g_return_if_fail (shape != NULL && plan != NULL && out != NULL);
  ModelRankParams r = { 0, 0 };
  for (int chunk = 0; chunk < plan->vpp; chunk++)
    {
      ModelRankParams c;
      chunk_params (shape, plan, pp_rank, chunk, &c);
      r.dense += c.dense;
      r.expert += c.expert;
    }
  *out = r;
}

ModelOp
model_layer_pp_op (const ModelShape *shape, const ModelPlan *plan, ModelPass pass)
{
  gint64 T = (gint64) plan->micro_batch * shape->seq_len / plan->cp;
  gint64 Ts = plan->sp ? T / plan->tp : T;
  double bytes = (double) Ts * shape->hidden * model_dtype_bytes (plan->param_dtype);
  gboolean fwd = pass == MODEL_PASS_FORWARD;
  return model_op_comm (fwd ? "pp_send_act" : "pp_send_grad", fwd ? MODEL_PHASE_FWD : MODEL_PHASE_BWD,
                        MODEL_COLL_SEND_RECV, MODEL_DIM_PP, plan->pp, bytes);
}

/* Appends ceil(bytes / bucket) collectives of at most `bucket` bytes. */
static void
buckets (GArray *ops, const char *name, ModelPhase phase, ModelCollective coll, int group,
         gboolean expert, double bytes, double bucket)
{
  while (bytes > 0)
    {
      double b = MIN (bytes, bucket);
      ModelOp op = model_op_comm (name, phase, coll, MODEL_DIM_DP, group, b);
      op.expert_group = expert;
      g_array_append_val (ops, op);
      bytes -= b;
    }
}

void
model_layer_dp_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk, GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  ModelRankParams r;
  chunk_params (shape, plan, pp_rank, chunk, &r);
  double gb = model_dtype_bytes (plan->grad_dtype), pb = model_dtype_bytes (plan->param_dtype);
  double bucket = (double) plan->dp_bucket_mb * 1024 * 1024;
  const struct { double params; int group; gboolean expert; } parts[2] = {
    { (double) r.dense, plan->dp * plan->cp, FALSE },
    { (double) r.expert, model_plan_expert_dp (plan), TRUE },
  };
  /* Tied embeddings over pipeline stages: Megatron all-reduces the word-embedding gradient
   * between the first and the last stage (its embedding group) before the optimizer. */
  if (shape->tied_embeddings && plan->pp > 1
      && (model_plan_chunk_has_embedding (plan, pp_rank, chunk)
          || model_plan_chunk_has_loss (plan, pp_rank, chunk)))
    {
      double bytes = (double) model_shape_padded_vocab (shape, plan->tp) / plan->tp * shape->hidden * gb;
      ModelOp op = model_op_comm ("embedding_grad_ar", MODEL_PHASE_BWD, MODEL_COLL_ALL_REDUCE,
                                  MODEL_DIM_PP, 2, bytes);
      g_array_append_val (ops, op);
    }
  for (int i = 0; i < 2; i++)
    {
      if (parts[i].params <= 0 || parts[i].group <= 1)
        continue;
      double g = parts[i].params * gb, w = parts[i].params * pb;
      if (plan->zero == 0)
        buckets (ops, "dp_grad_ar", MODEL_PHASE_BWD, MODEL_COLL_ALL_REDUCE, parts[i].group,
                 parts[i].expert, g, bucket);
      else
        buckets (ops, "dp_grad_rs", MODEL_PHASE_BWD, MODEL_COLL_REDUCE_SCATTER, parts[i].group,
                 parts[i].expert, g, bucket);
      if (plan->zero == 1 || plan->zero == 2)
        buckets (ops, "dp_param_ag", MODEL_PHASE_OPTIMIZER, MODEL_COLL_ALL_GATHER, parts[i].group,
                 parts[i].expert, w, bucket);
      else if (plan->zero == 3)
        {
          /* Parameters re-gathered before the forward and again before the backward. */
          buckets (ops, "dp_param_ag", MODEL_PHASE_FWD, MODEL_COLL_ALL_GATHER, parts[i].group,
                   parts[i].expert, w, bucket);
          buckets (ops, "dp_param_ag", MODEL_PHASE_BWD, MODEL_COLL_ALL_GATHER, parts[i].group,
                   parts[i].expert, w, bucket);
        }
    }
}

double
model_layer_quantized_weights (const ModelShape *s, const ModelPlan *plan, int pp_rank, int chunk_only)
{
  g_return_val_if_fail (s != NULL && plan != NULL, 0.0);
  gint64 h = s->hidden;
  gint64 up = model_shape_glu (s) ? 2 : 1;
  double attn = (double) model_shape_attention_rank_params (s, plan->tp, FALSE);
  double w = 0;
  if (!quantized (plan->matmul_dtype))
    return 0;
  for (int chunk = 0; chunk < plan->vpp; chunk++)
    {
      if (chunk_only >= 0 && chunk != chunk_only)
        continue;
      int first = 0;
      int n = model_plan_chunk_layers (plan, s, pp_rank, chunk, &first);
      for (int l = first; l < first + n; l++)
        {
          if (!quantized (model_layer_matmul_dtype (s, plan, l)))
            continue; /* a BF16 layer of the recipe: nothing to quantize */
          w += attn;
          if (model_shape_layer_is_moe (s, l))
            {
              double fe = (double) s->moe_ffn_hidden;
              w += (double) (s->moe_experts / plan->ep) * (up + 1) * fe * h / model_plan_expert_tp (plan);
              w += (double) s->moe_shared_experts * (up + 1) * fe * h / plan->tp;
            }
          else
            w += (double) (up + 1) * s->ffn_hidden * h / plan->tp;
        }
    }
  return w;
}

double
model_layer_fp8_param_saving (const ModelShape *shape, const ModelPlan *plan, int pp_rank, int chunk)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, 0.0);
  if (!plan->fp8_param_gather)
    return 0;
  return model_layer_quantized_weights (shape, plan, pp_rank, chunk)
         * (model_dtype_bytes (plan->param_dtype) - model_dtype_bytes (MODEL_DTYPE_FP8));
}

static void
weight_op (GArray *ops, const char *name, double rd, double wr, double elems, ModelDtype dt)
{
  ModelOp o = model_op_membound (name, MODEL_PHASE_OPTIMIZER, rd, wr, elems, dt);
  o.flags |= MODEL_OP_RECIPE;
  g_array_append_val (ops, o);
}

void
model_layer_optimizer_ops (const ModelShape *shape, const ModelPlan *plan, int pp_rank, GArray *ops)
{
  g_return_if_fail (shape != NULL && plan != NULL && ops != NULL);
  ModelRankParams r;
  model_layer_rank_params (shape, plan, pp_rank, &r);
  double n = (double) r.dense + (double) r.expert;
  if (plan->zero >= 1)
    n = (double) r.dense / (plan->dp * plan->cp) + (double) r.expert / model_plan_expert_dp (plan);
  double pb = model_dtype_bytes (plan->param_dtype);
  double gb = model_dtype_bytes (plan->grad_dtype);
  /* Read: grad, m, v and the weight in fp32 (the master, or an fp32 weight itself), or rebuilt from
   * the bf16 weight and its remainder, or the bf16 weight alone without a master. Written: m, v,
   * the master (or remainder) and the weight. */
  double mb = 2.0 * model_dtype_bytes (plan->moment_dtype);
  double master = model_plan_master_bytes (plan);
  double own = plan->param_dtype == MODEL_DTYPE_FP32 ? 4.0 : master == 4.0 ? 0.0 : pb;
  double rd = gb + mb + master + own;
  double wr = mb + master + (plan->param_dtype == MODEL_DTYPE_FP32 ? 4.0 : pb);
  /* The recipe's low-precision GEMM weights (0 without one); with fp8_param_gather the optimizer's
   * shard of them (ws) is cast to FP8 below instead of written back in pb bytes. */
  double w = model_layer_quantized_weights (shape, plan, pp_rank, -1);
  double ws = plan->fp8_param_gather ? w / ((double) plan->dp * plan->cp) : 0;
  /* The gradient norm for clipping reads the optimizer's shard of the main gradients once
   * (Megatron-Core optimizer/clip_grads.py get_grad_norm_fp32: multi_tensor_l2norm; ASSUMPTION:
   * clipping on, as in every recipe of the deck). The scaling pass that follows only when the norm
   * exceeds the maximum (clip_coeff < 1) is not counted. */
  ModelOp norm = model_op_membound ("grad_norm", MODEL_PHASE_OPTIMIZER, n * gb, 0, 2.0 * n, MODEL_DTYPE_FP32);
  norm.flags |= MODEL_OP_STREAMING;
  g_array_append_val (ops, norm);
  ModelOp op = model_op_membound ("adam", MODEL_PHASE_OPTIMIZER, n * rd, n * wr - ws * pb, 12.0 * n,
                                  MODEL_DTYPE_FP32);
  op.flags |= MODEL_OP_STREAMING;
  g_array_append_val (ops, op);
  /* The next step's gradient accumulation starts from a zeroed buffer: the whole local buffer
   * (its DP shard where gradients are sharded at rest), written once (model/framework.h). */
  if (model_framework_zeroes_grad_buffer (plan))
    {
      double local = (double) r.dense + (double) r.expert;
      if (model_framework_shards_grads (plan))
        local = n;
      ModelOp zero = model_op_membound ("grad_zero", MODEL_PHASE_OPTIMIZER, 0, local * gb, 0, MODEL_DTYPE_FP32);
      zero.flags |= MODEL_OP_STREAMING;
      g_array_append_val (ops, zero);
    }
  /* The once-per-step weight quantization of the low-precision recipes (model/layer.c header). */
  if (!quantized (plan->matmul_dtype))
    return;
  ModelDtype dt = plan->param_dtype;
  if (plan->matmul_dtype == MODEL_DTYPE_FP8 && plan->fp8_param_gather)
    {
      /* The distributed optimizer casts its updated FP32 shard of the FP8 weights straight into the
       * FP8 parameter buffer (Megatron-Core quantize_param_shard) and the all-gather carries FP8
       * (sim/step/runner.c); Hopper's FP8 GEMM then needs the column-wise copy of each gathered weight,
       * one transpose per step. No BF16 copy of these weights is written. */
      if (plan->fp8_scaling == MODEL_FP8_CURRENT)
        weight_op (ops, "fp8_param_shard_amax", 4.0 * ws, 0, ws, MODEL_DTYPE_FP32);
      weight_op (ops, "fp8_param_shard_cast", 4.0 * ws, ws, ws, MODEL_DTYPE_FP32);
      if (!plan->fp8_any_layout)
        weight_op (ops, "fp8_weight_transpose", w, w, w, MODEL_DTYPE_FP8);
    }
  else if (plan->matmul_dtype == MODEL_DTYPE_FP8)
    {
      if (plan->fp8_scaling == MODEL_FP8_CURRENT)
        weight_op (ops, "fp8_weight_amax", w * pb, 0, w, dt);
      weight_op (ops, "fp8_weight_cast", w * pb, (plan->fp8_any_layout ? 1.0 : 2.0) * w, w, dt);
    }
  else
    {
      weight_op (ops, "nvfp4_weight_amax", w * pb, 0, w, dt);
      weight_op (ops, "nvfp4_weight_quant", w * pb, 2.0 * NVFP4_BYTES * w, w, dt);
    }
}
