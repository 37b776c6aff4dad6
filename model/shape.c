/* Transformer shape: derived fields, validation and exact parameter counts.
 *
 * With q = heads*head_dim, kv = kv_heads*head_dim, h = hidden, f = ffn width, b = 1 with biases:
 *   attention  = h*(q + 2kv) + q*h + b*(q + 2kv + h)            (fused QKV, output projection)
 *   norm       = h (+ h with LayerNorm biases)                    (two per layer, one final)
 *   MLP (GeLU) = 2*h*f + b*(f + h);  MLP (SwiGLU) = 3*h*f + b*(2f + h)
 *   MoE layer  = attention + norms + h*E (router, no bias, as Megatron-Core's TopKRouter)
 *                + E routed experts + shared experts, each an MLP of width moe_ffn_hidden
 *   total      = layers + vocab*h (embedding) + positions*h (learned) + vocab*h (untied head) + norm
 * These are the layouts of Megatron-LM's GPT model (ParallelAttention/ParallelMLP, TopKRouter);
 * they reproduce the published counts in tests/test-model-shape.c. */
#include <math.h>
#include "model/shape.h"
#include "model/plan.h" /* MODEL_ERROR */

static gboolean
fail (GError **error, const char *key, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError **error, const char *key, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_SHAPE, "[model] %s: %s", key, msg);
  return FALSE;
}

#define POSITIVE(field)                                                                          \
  do {                                                                                           \
    if (shape->field <= 0)                                                                       \
      return fail (error, #field, "must be a positive integer (got %d)", shape->field);          \
  } while (0)

gboolean
model_shape_finish (ModelShape *shape, GError **error)
{
  g_return_val_if_fail (shape != NULL, FALSE);
  POSITIVE (layers);
  POSITIVE (hidden);
  POSITIVE (heads);
  if (shape->kv_heads < 0)
    return fail (error, "kv_heads", "must be positive, or 0 for heads (got %d)", shape->kv_heads);
  if (shape->kv_heads == 0)
    shape->kv_heads = shape->heads;
  if (shape->kv_heads > shape->heads || shape->heads % shape->kv_heads != 0)
    return fail (error, "kv_heads",
                 "%d query heads cannot be grouped over %d key/value heads; kv_heads must divide "
                 "heads (GQA) or equal it (MHA)",
                 shape->heads, shape->kv_heads);
  if (shape->head_dim < 0)
    return fail (error, "head_dim", "must be positive, or 0 for hidden / heads (got %d)",
                 shape->head_dim);
  int head_dim_given = shape->head_dim;
  if (shape->head_dim == 0)
    {
      if (shape->hidden % shape->heads != 0)
        return fail (error, "head_dim",
                     "not given and hidden %d is not divisible by heads %d; set head_dim or fix "
                     "hidden/heads",
                     shape->hidden, shape->heads);
      shape->head_dim = shape->hidden / shape->heads;
    }
  if (shape->moe_experts < 0)
    return fail (error, "moe_experts", "must be 0 (dense) or positive (got %d)", shape->moe_experts);
  if (shape->moe_layer_freq < 0)
    return fail (error, "moe_layer_freq", "must be positive, or 0 for 1 (got %d)",
                 shape->moe_layer_freq);
  if (shape->moe_layer_freq == 0)
    shape->moe_layer_freq = 1;
  if (shape->moe_layer_offset < 0 || shape->moe_layer_offset >= shape->moe_layer_freq)
    return fail (error, "moe_layer_offset", "must be from 0 to moe_layer_freq - 1 = %d (got %d)",
                 shape->moe_layer_freq - 1, shape->moe_layer_offset);
  /* A dense MLP width is needed unless every layer is MoE. */
  gboolean all_moe = shape->moe_experts > 0 && shape->moe_layer_freq == 1;
  if (shape->ffn_hidden < 0 || (shape->ffn_hidden == 0 && !all_moe))
    return fail (error, "ffn_hidden", "must be a positive integer (got %d)", shape->ffn_hidden);
  POSITIVE (vocab);
  if (shape->vocab_multiple < 0)
    return fail (error, "vocab_multiple", "must be positive, or 0 for 128 (got %d)",
                 shape->vocab_multiple);
  if (shape->vocab_multiple == 0)
    shape->vocab_multiple = 128;
  POSITIVE (seq_len);
  if (shape->max_positions < 0)
    return fail (error, "max_positions", "must be positive, or 0 for seq_len (got %d)",
                 shape->max_positions);
  if (shape->max_positions == 0)
    shape->max_positions = shape->seq_len;
  if (shape->position == MODEL_POS_LEARNED && shape->max_positions < shape->seq_len)
    return fail (error, "max_positions",
                 "learned position table of %d entries is shorter than seq_len %d; raise "
                 "max_positions or lower seq_len",
                 shape->max_positions, shape->seq_len);
  if ((unsigned) shape->activation > MODEL_ACT_SQUARED_RELU)
    return fail (error, "activation", "unknown activation %d (gelu, swiglu, geglu or squared_relu)",
                 shape->activation);
  if ((unsigned) shape->norm > MODEL_NORM_RMSNORM)
    return fail (error, "norm", "unknown norm %d (layernorm or rmsnorm)", shape->norm);
  if ((unsigned) shape->position > MODEL_POS_ALIBI)
    return fail (error, "position", "unknown position encoding %d (learned, rope or alibi)",
                 shape->position);
  if (shape->moe_dense_layers < 0 || shape->moe_dense_layers > shape->layers)
    return fail (error, "moe_dense_layers", "must be between 0 and layers %d (got %d)", shape->layers,
                 shape->moe_dense_layers);
  if (!(shape->mlm_fraction >= 0.0 && shape->mlm_fraction <= 1.0))
    return fail (error, "mlm_fraction", "must be between 0 and 1 (got %g)", shape->mlm_fraction);
  if (shape->mlm_fraction > 0.0 && !shape->encoder)
    return fail (error, "mlm_fraction", "applies to an encoder: set encoder = true or remove it");
  if (shape->attention_window < 0)
    return fail (error, "attention_window", "must be 0 (full attention) or positive (got %d)",
                 shape->attention_window);
  if (shape->window_layer_freq < 0)
    return fail (error, "window_layer_freq", "must be positive, or 0 for 1 (got %d)",
                 shape->window_layer_freq);
  if (shape->window_layer_freq == 0)
    shape->window_layer_freq = 1;
  if (shape->doc_tokens < 0 || shape->doc_tokens > shape->seq_len)
    return fail (error, "document_tokens", "must be between 0 (one document per sequence) and seq_len %d (got %d)",
                 shape->seq_len, shape->doc_tokens);
  if (shape->attention_window > 0 && shape->encoder)
    return fail (error, "attention_window", "a sliding window is causal; an encoder attends both ways");
  if (shape->mtp_depth < 0)
    return fail (error, "mtp_depth", "must be 0 or positive (got %d)", shape->mtp_depth);
  if (shape->kv_lora_rank < 0 || shape->q_lora_rank < 0 || shape->qk_nope_head_dim < 0
      || shape->qk_rope_head_dim < 0 || shape->v_head_dim < 0)
    return fail (error, shape->kv_lora_rank < 0 ? "kv_lora_rank" : shape->q_lora_rank < 0 ? "q_lora_rank"
                        : shape->qk_nope_head_dim < 0 ? "qk_nope_head_dim"
                        : shape->qk_rope_head_dim < 0 ? "qk_rope_head_dim" : "v_head_dim",
                 "must be 0 or positive");
  if (shape->kv_lora_rank > 0)
    {
      if (shape->qk_nope_head_dim == 0 || shape->qk_rope_head_dim == 0 || shape->v_head_dim == 0)
        return fail (error, shape->qk_nope_head_dim == 0 ? "qk_nope_head_dim"
                            : shape->qk_rope_head_dim == 0 ? "qk_rope_head_dim" : "v_head_dim",
                     "multi-head latent attention (kv_lora_rank > 0) needs qk_nope_head_dim, "
                     "qk_rope_head_dim and v_head_dim");
      if (shape->kv_heads != shape->heads)
        return fail (error, "kv_heads", "multi-head latent attention gives every head its own key and "
                     "value: set kv_heads = heads (%d)", shape->heads);
      if (shape->position != MODEL_POS_ROPE)
        return fail (error, "position", "multi-head latent attention carries rotary keys: set rope");
      /* The attention kernel's per-head dims: qk = nope + rope, v; FLOPs and bytes are timed at
       * their mean (exact for FLOPs, 2·(qk + v) per pair; see model/layer.c). */
      int mean = (shape->qk_nope_head_dim + shape->qk_rope_head_dim + shape->v_head_dim) / 2;
      if (head_dim_given != 0 && head_dim_given != mean)
        return fail (error, "head_dim", "multi-head latent attention takes its per-head widths from "
                     "qk_nope_head_dim, qk_rope_head_dim and v_head_dim: remove head_dim (or set it to "
                     "their timed mean, %d)", mean);
      shape->head_dim = mean;
    }
  else if (shape->q_lora_rank > 0 || shape->qk_nope_head_dim > 0 || shape->qk_rope_head_dim > 0
           || shape->v_head_dim > 0)
    return fail (error, "kv_lora_rank", "the MLA sizes (q_lora_rank, qk_*_head_dim, v_head_dim) need "
                 "kv_lora_rank > 0");

  if (shape->moe_experts == 0)
    {
      if (shape->moe_top_k != 0 || shape->moe_shared_experts != 0)
        return fail (error, shape->moe_top_k != 0 ? "moe_top_k" : "moe_shared_experts",
                     "set for a dense model (moe_experts = 0); set moe_experts or remove it");
      return TRUE;
    }
  if (shape->moe_top_k <= 0 || shape->moe_top_k > shape->moe_experts)
    return fail (error, "moe_top_k", "must be between 1 and moe_experts %d (got %d)",
                 shape->moe_experts, shape->moe_top_k);
  if (shape->moe_ffn_hidden < 0)
    return fail (error, "moe_ffn_hidden", "must be positive, or 0 for ffn_hidden (got %d)",
                 shape->moe_ffn_hidden);
  if (shape->moe_ffn_hidden == 0)
    shape->moe_ffn_hidden = shape->ffn_hidden;
  if (shape->moe_ffn_hidden <= 0)
    return fail (error, "moe_ffn_hidden", "needed when ffn_hidden is 0");
  if (shape->moe_shared_experts < 0)
    return fail (error, "moe_shared_experts", "must be 0 or positive (got %d)",
                 shape->moe_shared_experts);
  if (!(shape->moe_capacity_factor >= 0.0) || shape->moe_capacity_factor > 1e6)
    return fail (error, "moe_capacity_factor", "must be 0 (dropless) or positive (got %g)",
                 shape->moe_capacity_factor);
  if (shape->moe_capacity_factor > 0.0 && shape->moe_capacity_factor < 1.0)
    return fail (error, "moe_capacity_factor",
                 "%g drops tokens even under perfectly even routing; use >= 1 or 0 (dropless)",
                 shape->moe_capacity_factor);
  if (shape->moe_imbalance == 0.0)
    shape->moe_imbalance = 1.0;
  if (!(shape->moe_imbalance >= 1.0) || shape->moe_imbalance > 1024)
    return fail (error, "moe_imbalance", "must be from 1 (even routing) to 1024 (got %g)", shape->moe_imbalance);
  if (shape->moe_imbalance > 1.0 && shape->moe_capacity_factor > 0.0)
    return fail (error, "moe_imbalance",
                 "applies to dropless routing; with moe_capacity_factor %g the capacity bounds each expert",
                 shape->moe_capacity_factor);
  return TRUE;
}

gint64
model_shape_padded_vocab (const ModelShape *shape, int tp)
{
  g_return_val_if_fail (shape != NULL && tp > 0, 0);
  gint64 mult = (gint64) (shape->vocab_multiple > 0 ? shape->vocab_multiple : 128) * tp;
  return (shape->vocab + mult - 1) / mult * mult;
}

gboolean
model_shape_layer_is_moe (const ModelShape *shape, int layer)
{
  g_return_val_if_fail (shape != NULL, FALSE);
  int freq = shape->moe_layer_freq > 0 ? shape->moe_layer_freq : 1;
  return shape->moe_experts > 0 && layer >= shape->moe_dense_layers && layer % freq == shape->moe_layer_offset;
}

gboolean
model_shape_glu (const ModelShape *shape)
{
  return shape->activation == MODEL_ACT_SWIGLU || shape->activation == MODEL_ACT_GEGLU;
}

gboolean
model_shape_layer_windowed (const ModelShape *shape, int layer)
{
  int freq = shape->window_layer_freq > 0 ? shape->window_layer_freq : 1;
  return shape->attention_window > 0 && layer % freq == 0;
}

/* Pairs of one span of n tokens attending within itself. */
static double
span_pairs (const ModelShape *shape, int layer, double n)
{
  double W = shape->attention_window;
  if (shape->encoder)
    return n * n;
  if (model_shape_layer_windowed (shape, layer) && W < n)
    return W * (W + 1) / 2 + (n - W) * W;
  return n * (n + 1) / 2;
}

double
model_shape_attention_pairs (const ModelShape *shape, int layer)
{
  double s = shape->seq_len, d = shape->doc_tokens;
  if (d <= 0 || d >= s)
    return span_pairs (shape, layer, s);
  double docs = floor (s / d);
  return docs * span_pairs (shape, layer, d) + span_pairs (shape, layer, s - docs * d);
}

double
model_shape_moe_load (const ModelShape *shape)
{
  return shape->moe_imbalance > 1.0 ? shape->moe_imbalance : 1.0;
}

int
model_shape_moe_layers (const ModelShape *shape)
{
  int n = 0;
  for (int i = 0; i < shape->layers; i++)
    n += model_shape_layer_is_moe (shape, i);
  return n;
}

/* One MLP of width f: weights, and biases when the shape has them. */
static gint64
mlp_params (const ModelShape *shape, gint64 f, gboolean with_bias)
{
  gint64 h = shape->hidden;
  gboolean glu = model_shape_glu (shape);
  gint64 w = (glu ? 3 : 2) * h * f;
  gint64 b = with_bias && shape->bias ? (glu ? 2 * f : f) + h : 0;
  return w + b;
}

gint64
model_shape_attention_rank_params (const ModelShape *shape, int tp, gboolean with_bias)
{
  g_return_val_if_fail (shape != NULL && tp > 0, 0);
  gint64 h = shape->hidden, a = shape->heads;
  if (shape->kv_lora_rank > 0)
    {
      /* MLA (DeepSeek-V3 config: q_lora 1536, kv_lora 512, nope 128, rope 64, v 128 give
       * 187.1M per layer at h 7168, a 128): replicated q_down [h, ql] + its RMSNorm, kv_down
       * [h, kl + rope] + its RMSNorm; split q_up [ql, a·(nope+rope)] (or [h, ...] without a q
       * latent), kv_up [kl, a·(nope+v)], output [a·v, h]. */
      gint64 ql = shape->q_lora_rank, kl = shape->kv_lora_rank;
      gint64 dqk = shape->qk_nope_head_dim + shape->qk_rope_head_dim;
      gint64 rep = h * (kl + shape->qk_rope_head_dim) + kl + (ql > 0 ? h * ql + ql : 0);
      gint64 split = (ql > 0 ? ql : h) * a * dqk + kl * a * (shape->qk_nope_head_dim + shape->v_head_dim)
                     + a * shape->v_head_dim * h;
      return rep + split / tp;
    }
  gint64 q = a * shape->head_dim;
  gint64 kv = (gint64) shape->kv_heads * shape->head_dim;
  gint64 w = (h * (q + 2 * kv) + q * h) / tp;
  return w + (with_bias && shape->bias ? (q + 2 * kv) / tp + h : 0);
}

static gint64
attention_params (const ModelShape *shape, gboolean with_bias)
{
  return model_shape_attention_rank_params (shape, 1, with_bias);
}

static gint64
norm_params (const ModelShape *shape)
{
  gint64 h = shape->hidden;
  return h + (shape->norm == MODEL_NORM_LAYERNORM && shape->bias ? h : 0);
}

void
model_shape_params (const ModelShape *shape, gint64 vocab, ModelParams *out)
{
  g_return_if_fail (shape != NULL && out != NULL && shape->head_dim > 0);
  gint64 h = shape->hidden;
  ModelParams p = { 0 };
  p.embedding = vocab * h;
  p.positions = shape->position == MODEL_POS_LEARNED ? (gint64) shape->max_positions * h : 0;
  p.lm_head = shape->tied_embeddings ? 0 : vocab * h;
  p.final_norm = norm_params (shape);
  p.attention = attention_params (shape, TRUE);
  p.norms = 2 * norm_params (shape);
  p.dense_mlp = shape->ffn_hidden > 0 ? mlp_params (shape, shape->ffn_hidden, TRUE) : 0;
  p.dense_layer = p.attention + p.norms + p.dense_mlp;
  if (shape->moe_experts > 0)
    {
      p.moe_router = h * shape->moe_experts;
      p.moe_expert = mlp_params (shape, shape->moe_ffn_hidden, TRUE);
      p.moe_shared = shape->moe_shared_experts * mlp_params (shape, shape->moe_ffn_hidden, TRUE);
      gint64 base = p.attention + p.norms + p.moe_router + p.moe_shared;
      p.moe_layer = base + shape->moe_experts * p.moe_expert;
      p.moe_layer_active = base + shape->moe_top_k * p.moe_expert;
    }
  gint64 n_moe = model_shape_moe_layers (shape);
  gint64 n_dense = shape->layers - n_moe;
  if (shape->encoder)
    p.encoder_extra = 2 * h + (h * h + h) + norm_params (shape) + vocab + (h * h + h);
  gint64 outer = p.embedding + p.positions + p.lm_head + p.final_norm + p.encoder_extra;
  p.total = n_dense * p.dense_layer + n_moe * p.moe_layer + outer;
  p.active = n_dense * p.dense_layer + n_moe * p.moe_layer_active + outer;
  p.non_embedding = p.total - p.embedding - p.positions - p.lm_head;
  for (int d = 0; d < shape->mtp_depth; d++)
    p.mtp += 2 * h * h + 3 * norm_params (shape)
             + (model_shape_layer_is_moe (shape, shape->layers + d) ? p.moe_layer : p.dense_layer);
  *out = p;
}

gint64
model_shape_layer_matmul_params (const ModelShape *shape, int layer)
{
  g_return_val_if_fail (shape != NULL && shape->head_dim > 0, 0);
  gint64 n = attention_params (shape, FALSE);
  if (model_shape_layer_is_moe (shape, layer))
    n += (gint64) shape->hidden * shape->moe_experts
         + (gint64) (shape->moe_top_k + shape->moe_shared_experts)
               * mlp_params (shape, shape->moe_ffn_hidden, FALSE);
  else
    n += mlp_params (shape, shape->ffn_hidden, FALSE);
  return n;
}
