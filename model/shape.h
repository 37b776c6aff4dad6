/* The architecture of a decoder-only transformer (dense or MoE): sizes only, no parallelism.
 *
 * Filled by the scenario loader from the [model] group; model_shape_finish() derives the
 * dependent fields and checks consistency. */
#pragma once
#include <glib.h>

/* GeGLU (T5 v1.1, Gemma) is gated like SwiGLU (three matrices); squared ReLU (Primer, Nemotron-4)
 * is a two-matrix MLP like GeLU. */
typedef enum { MODEL_ACT_GELU, MODEL_ACT_SWIGLU, MODEL_ACT_GEGLU, MODEL_ACT_SQUARED_RELU } ModelActivation;
typedef enum { MODEL_NORM_LAYERNORM, MODEL_NORM_RMSNORM } ModelNorm;
/* ALiBi (Press et al., arXiv 2108.12409; MPT, BLOOM): a per-head linear bias added to the attention
 * scores inside the attention kernel, no parameters and no kernel of its own. */
typedef enum { MODEL_POS_LEARNED, MODEL_POS_ROPE, MODEL_POS_ALIBI } ModelPosition;

typedef struct {
  char name[64];
  int layers;
  int hidden;            /* d_model */
  int heads;             /* query heads */
  int kv_heads;          /* == heads for MHA, fewer for GQA */
  int head_dim;          /* 0 in input means hidden / heads */
  int ffn_hidden;        /* dense MLP width (each of gate/up for SwiGLU) */
  int vocab;             /* tokenizer size, unpadded */
  int vocab_multiple;    /* Megatron pads vocab to a multiple of vocab_multiple * tp (default 128) */
  int seq_len;           /* training sequence length */
  int max_positions;     /* learned position table size (0: seq_len) */
  ModelActivation activation;
  ModelNorm norm;
  ModelPosition position;
  gboolean tied_embeddings;
  gboolean bias;         /* linear and norm biases (GPT-2/3 style) */
  /* MoE: moe_experts == 0 means dense. */
  int moe_experts;
  int moe_top_k;
  int moe_ffn_hidden;
  int moe_shared_experts;   /* always-active experts of width moe_ffn_hidden */
  double moe_capacity_factor; /* 0: dropless */
  double moe_imbalance;     /* dropless: the busiest EP rank's routed tokens over the mean (>= 1; 0: 1) */
  int moe_layer_freq;       /* every n-th layer is MoE (1: all); 0 treated as 1 */
  int moe_layer_offset;     /* ... counting from this layer: i % freq == offset (0 .. freq - 1) */
  int moe_dense_layers;     /* the first n layers are dense whatever moe_layer_freq says */
  int moe_node_limit;       /* nodes a token's experts may span (DeepSeek-V3's node-limited routing,
                             * M = 4); 0: any */
  /* Encoder (BERT): bidirectional attention over every key (s² pairs, not causal); the masked-LM
   * head scores only the masked share of the tokens (mlm_fraction; 0: every token). */
  gboolean encoder;
  double mlm_fraction;
  /* Sliding-window attention: a query sees the attention_window keys up to itself (0: all); every
   * window_layer_freq-th layer from layer 0 is windowed (1: all; gpt-oss alternates: 2). */
  int attention_window;
  int window_layer_freq;
  /* Document masking (training data packed into sequences, attention kept within each document:
   * FlashAttention varlen / cu_seqlens, Megatron's THD format, flex attention's block-causal mask):
   * the documents' length-weighted mean Σl²/Σl in tokens, which makes the pair count exact for
   * bidirectional attention and within a token per document for causal; 0: one document per
   * sequence. */
  int doc_tokens;
  /* Multi-token prediction (DeepSeek-V3 §2.2): mtp_depth extra modules on the last stage, each a
   * projection [2h -> h] after two norms, one transformer layer and the shared head's loss. */
  int mtp_depth;
  /* Multi-head latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0: queries through a q_lora_rank
   * latent (0: a plain [h, a·(nope+rope)] projection), keys and values through a kv_lora_rank
   * latent plus one shared rope key of qk_rope_head_dim; per head qk dim nope+rope, v dim v_head_dim. */
  int q_lora_rank;
  int kv_lora_rank;
  int qk_nope_head_dim;
  int qk_rope_head_dim;
  int v_head_dim;
} ModelShape;

/* The MLP is gated (SwiGLU, GeGLU): FC1 holds two matrices of width ffn. */
gboolean model_shape_glu (const ModelShape *shape);
/* Layer i is sliding-window attention. */
gboolean model_shape_layer_windowed (const ModelShape *shape, int layer);
/* Query-key pairs one head scores per sequence of seq_len tokens at `layer`: causal s(s+1)/2,
 * bidirectional s², a window W < s W(W+1)/2 + (s - W)W, each within documents of doc_tokens when
 * set (seq_len / doc_tokens whole documents and the remainder). */
double model_shape_attention_pairs (const ModelShape *shape, int layer);
/* Attention parameters of one layer on one of `tp` ranks (weights; biases when with_bias and the
 * shape has them). MLA's down projections and their norms are replicated over TP (Megatron-Core's
 * MLA builds them duplicated). */
gint64 model_shape_attention_rank_params (const ModelShape *shape, int tp, gboolean with_bias);

/* Derives the dependent fields and validates every field; the error (MODEL_ERROR_INVALID_SHAPE)
 * names the [model] key at fault. Defaults applied to zero inputs: kv_heads = heads,
 * head_dim = hidden / heads, vocab_multiple = 128, max_positions = seq_len,
 * moe_ffn_hidden = ffn_hidden (MoE only), moe_layer_freq = 1. */
gboolean model_shape_finish (ModelShape *shape, GError **error);

/* Vocabulary as Megatron allocates it: vocab rounded up to a multiple of vocab_multiple * tp
 * (megatron/training/tokenizer: _vocab_size_with_padding). */
gint64 model_shape_padded_vocab (const ModelShape *shape, int tp);

/* Layer i (0-based) is an MoE layer: moe_experts > 0, i >= moe_dense_layers and
 * i % moe_layer_freq == moe_layer_offset (Megatron-Core's integer --moe-layer-freq pattern: layer 0
 * is MoE, offset 0; Llama 4's interleave_moe_layer_step: layers step - 1, 2 step - 1, ..., offset
 * step - 1; DeepSeek-V3's first_k_dense_replace for the leading dense layers). */
gboolean model_shape_layer_is_moe (const ModelShape *shape, int layer);
/* The routed-token load of the busiest EP rank over the mean under dropless routing: moe_imbalance,
 * 1 when unset. */
double model_shape_moe_load (const ModelShape *shape);
/* Number of MoE layers. */
int model_shape_moe_layers (const ModelShape *shape);

/* Exact parameter counts (elements). Per-layer entries count one layer. */
typedef struct {
  gint64 embedding;        /* word embedding table, vocab * hidden */
  gint64 positions;        /* learned position table, max_positions * hidden (0 for RoPE) */
  gint64 lm_head;          /* output projection, vocab * hidden; 0 when tied to the embedding */
  gint64 final_norm;       /* norm after the last layer (an encoder's: the embedding norm) */
  gint64 encoder_extra;    /* encoder: token types 2h, MLM transform h·h + h and its norm, decoder
                              bias (vocab), pooler h·h + h (BERT, google-research/bert modeling.py) */
  gint64 attention;        /* per layer: QKV + output projection (+ biases) */
  gint64 norms;            /* per layer: the two pre-norms */
  gint64 dense_mlp;        /* per dense layer: FC1 (gate+up for SwiGLU) + FC2 (+ biases) */
  gint64 moe_router;       /* per MoE layer: hidden * experts, no bias */
  gint64 moe_expert;       /* one routed expert MLP of width moe_ffn_hidden */
  gint64 moe_shared;       /* per MoE layer: all shared experts */
  gint64 dense_layer;      /* attention + norms + dense_mlp */
  gint64 moe_layer;        /* attention + norms + router + experts * moe_expert + moe_shared */
  gint64 moe_layer_active; /* the same with top_k routed experts instead of all */
  gint64 total;            /* every parameter */
  gint64 active;           /* parameters one token uses (== total for dense models) */
  gint64 non_embedding;    /* total - embedding - positions - lm_head */
  gint64 mtp;              /* all MTP modules (projection, 3 norms, layer; embedding and head shared):
                              not in total, as model cards count them apart (DeepSeek-V3: 671B + 14B) */
} ModelParams;

/* Counts the parameters of a finished shape with the given vocabulary (shape->vocab for the
 * published count, model_shape_padded_vocab() for what Megatron allocates). */
void model_shape_params (const ModelShape *shape, gint64 vocab, ModelParams *out);

/* Matmul weights one token multiplies with, per layer: the active linear weights without biases
 * and norms (router included). 2x this is the forward GEMM FLOPs per token of that layer. */
gint64 model_shape_layer_matmul_params (const ModelShape *shape, int layer);
