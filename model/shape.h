/* The architecture of a decoder-only transformer (dense or MoE): sizes only, no parallelism.
 *
 * Filled by the scenario loader from the [model] group; model_shape_finish() derives the
 * dependent fields and checks consistency. */
#pragma once
#include <glib.h>

typedef enum { MODEL_ACT_GELU, MODEL_ACT_SWIGLU } ModelActivation;
typedef enum { MODEL_NORM_LAYERNORM, MODEL_NORM_RMSNORM } ModelNorm;
typedef enum { MODEL_POS_LEARNED, MODEL_POS_ROPE } ModelPosition;

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
  int moe_layer_freq;       /* every n-th layer is MoE (1: all); 0 treated as 1 */
} ModelShape;

/* Derives head_dim etc., validates ranges; errors name the [model] key at fault. */
gboolean model_shape_finish (ModelShape *shape, GError **error);
