/* ModelOp constructors and the FLOP/byte equations of each op kind.
 *
 *   GEMM:      flops = 2*m*n*k*batch; read (m*k + k*n)*batch*size(dtype); write m*n*batch*size(out)
 *   attention: forward flops = 4*seqs*heads*head_dim*pairs (QK^T and AV, 2 FLOPs per MAC);
 *              backward = 2x forward (dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q).
 *              Fused (FlashAttention) traffic: forward reads Q, K, V and writes O (+ fp32 row
 *              statistics); backward reads Q, K, V, O, dO and writes dQ, dK, dV.
 *   causal pairs: s(s+1)/2 per sequence; with CP load balancing (sequence in 2cp chunks, rank r
 *              holds chunks r and 2cp-1-r, Megatron-Core / Transformer Engine) each rank computes
 *              (2cp-1)c^2 + c(c+1) pairs with c = s/(2cp), which is s(s+1)/(2cp) on every rank. */
#include "model/op.h"

static const char *const kind_names[] = { "gemm", "attention", "membound", "comm" };
static const char *const phase_names[] = { "fwd", "bwd", "recompute", "optimizer" };
static const char *const coll_names[MODEL_COLL_COUNT] = {
  "none", "all-gather", "reduce-scatter", "all-reduce", "all-to-all", "send-recv", "cp-kv-exchange",
};

const char *
model_op_kind_name (ModelOpKind kind)
{
  g_return_val_if_fail ((unsigned) kind < G_N_ELEMENTS (kind_names), "invalid");
  return kind_names[kind];
}

const char *
model_phase_name (ModelPhase phase)
{
  g_return_val_if_fail ((unsigned) phase < G_N_ELEMENTS (phase_names), "invalid");
  return phase_names[phase];
}

const char *
model_collective_name (ModelCollective coll)
{
  g_return_val_if_fail ((unsigned) coll < MODEL_COLL_COUNT, "invalid");
  return coll_names[coll];
}

static ModelOp
op_base (ModelOpKind kind, const char *name, ModelPhase phase)
{
  ModelOp op = { 0 };
  op.kind = kind;
  op.name = name;
  op.phase = phase;
  op.layer = -1;
  op.batch = 1;
  op.dtype = MODEL_DTYPE_BF16;
  return op;
}

ModelOp
model_op_gemm (const char *name, ModelPhase phase, ModelGrad grad, gint64 m, gint64 n, gint64 k,
               gint64 batch, ModelDtype dtype, ModelDtype out_dtype)
{
  ModelOp op = op_base (MODEL_OP_GEMM, name, phase);
  op.grad = grad;
  op.m = m, op.n = n, op.k = k, op.batch = batch;
  op.dtype = dtype;
  op.flops = 2.0 * (double) m * (double) n * (double) k * (double) batch;
  op.bytes_read = ((double) m * k + (double) k * n) * batch * model_dtype_bytes (dtype);
  op.bytes_written = (double) m * n * batch * model_dtype_bytes (out_dtype);
  return op;
}

ModelOp
model_op_attention (const char *name, ModelPhase phase, gint64 seqs, gint64 heads, gint64 kv_heads,
                    gint64 seq_q, gint64 seq_kv, gint64 head_dim, gint64 pairs, ModelDtype dtype)
{
  ModelOp op = op_base (MODEL_OP_ATTENTION, name, phase);
  op.seqs = seqs, op.heads = heads, op.kv_heads = kv_heads;
  op.seq_q = seq_q, op.seq_kv = seq_kv, op.head_dim = head_dim, op.pairs = pairs;
  op.dtype = dtype;
  double e = model_dtype_bytes (dtype);
  double fwd = 4.0 * (double) seqs * (double) heads * (double) head_dim * (double) pairs;
  double q = (double) seqs * seq_q * heads * head_dim * e;
  double kv = 2.0 * (double) seqs * seq_kv * kv_heads * head_dim * e;
  double stats = 4.0 * (double) seqs * seq_q * heads; /* fp32 log-sum-exp per query row */
  if (phase == MODEL_PHASE_BWD)
    {
      op.flops = 2.0 * fwd;
      op.bytes_read = 3.0 * q + kv + stats; /* Q, O, dO, K, V, LSE */
      op.bytes_written = q + kv;            /* dQ, dK, dV */
    }
  else
    {
      op.flops = fwd;
      op.bytes_read = q + kv;
      op.bytes_written = q + stats;
    }
  return op;
}

ModelOp
model_op_membound (const char *name, ModelPhase phase, double bytes_read, double bytes_written,
                   double flops, ModelDtype dtype)
{
  ModelOp op = op_base (MODEL_OP_MEMBOUND, name, phase);
  op.bytes_read = bytes_read;
  op.bytes_written = bytes_written;
  op.flops = flops;
  op.dtype = dtype;
  return op;
}

ModelOp
model_op_comm (const char *name, ModelPhase phase, ModelCollective coll, ModelDim dim,
               int group_size, double comm_bytes)
{
  ModelOp op = op_base (MODEL_OP_COMM, name, phase);
  op.coll = coll;
  op.dim = dim;
  op.group_size = group_size;
  op.comm_bytes = comm_bytes;
  op.expert_group = FALSE;
  return op;
}

gint64
model_op_causal_pairs (gint64 seq, int cp)
{
  g_return_val_if_fail (seq > 0 && cp > 0, 0);
  if (cp == 1)
    return seq * (seq + 1) / 2;
  g_return_val_if_fail (seq % (2 * cp) == 0, 0);
  gint64 c = seq / (2 * cp);
  return (2 * (gint64) cp - 1) * c * c + c * (c + 1);
}

GArray *
model_op_array_new (void)
{
  return g_array_new (FALSE, TRUE, sizeof (ModelOp));
}

double
model_op_array_matmul_flops (const GArray *ops, guint phase_mask)
{
  g_return_val_if_fail (ops != NULL, 0.0);
  double sum = 0.0;
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *op = &g_array_index (ops, ModelOp, i);
      if ((op->kind == MODEL_OP_GEMM || op->kind == MODEL_OP_ATTENTION)
          && (phase_mask & (1u << op->phase)))
        {
          /* A flash backward's recomputed scores (0.5 of the forward's 2.5) are recompute work. */
          if ((op->flags & MODEL_OP_FLASH_BWD) && !(phase_mask & (1u << MODEL_PHASE_RECOMPUTE)))
            sum += op->flops * (2.0 / 2.5);
          else
            sum += op->flops;
        }
    }
  return sum;
}

void
model_op_array_unique_gemms (const GArray *ops, GArray *out)
{
  g_return_if_fail (ops != NULL && out != NULL);
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *op = &g_array_index (ops, ModelOp, i);
      if (op->kind != MODEL_OP_GEMM)
        continue;
      gboolean seen = FALSE;
      for (guint j = 0; j < out->len && !seen; j++)
        {
          const ModelOp *u = &g_array_index (out, ModelOp, j);
          seen = u->kind == MODEL_OP_GEMM && u->m == op->m && u->n == op->n && u->k == op->k
                 && u->batch == op->batch && u->dtype == op->dtype;
        }
      if (!seen)
        g_array_append_val (out, *op);
    }
}
