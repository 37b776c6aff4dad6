/* Published model shapes shared by the model tests (unfinished: call model_shape_finish()).
 * GPT-3 175B: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (96 layers,
 *   d_model 12288, 96 heads, context 2048), GPT-2 BPE vocab 50257, learned positions, LayerNorm and
 *   linear biases, tied embeddings (GPT-2 architecture, Radford et al. 2019).
 * Llama 3.1: Llama Team 2024, "The Llama 3 Herd of Models", Table 3 (8B: 32 layers, 4096, FFN 14336,
 *   32 heads; 70B: 80, 8192, 28672, 64; 405B: 126, 16384, 53248, 128; 8 KV heads; vocab 128256),
 *   and the Hugging Face config.json files (untied embeddings, RMSNorm, no biases, SwiGLU, RoPE).
 * Mixtral 8x7B: Jiang et al. 2024, "Mixtral of Experts", Table 1 (32 layers, dim 4096, 32 heads,
 *   8 KV heads, hidden 14336, vocab 32000, 8 experts, top-2). */
#pragma once
#include <string.h>
#include "model/shape.h"

static inline ModelShape
preset_gpt3_175b (void)
{
  ModelShape s;
  memset (&s, 0, sizeof s);
  g_strlcpy (s.name, "gpt3-175b", sizeof s.name);
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.ffn_hidden = 4 * 12288;
  s.vocab = 50257;
  s.seq_len = 2048;
  s.activation = MODEL_ACT_GELU;
  s.norm = MODEL_NORM_LAYERNORM;
  s.position = MODEL_POS_LEARNED;
  s.tied_embeddings = TRUE;
  s.bias = TRUE;
  return s;
}

static inline ModelShape
preset_llama (int layers, int hidden, int ffn, int heads)
{
  ModelShape s;
  memset (&s, 0, sizeof s);
  g_strlcpy (s.name, "llama3.1", sizeof s.name);
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = 8;
  s.ffn_hidden = ffn;
  s.vocab = 128256;
  s.seq_len = 8192;
  s.activation = MODEL_ACT_SWIGLU;
  s.norm = MODEL_NORM_RMSNORM;
  s.position = MODEL_POS_ROPE;
  return s;
}

static inline ModelShape preset_llama_8b (void) { return preset_llama (32, 4096, 14336, 32); }
static inline ModelShape preset_llama_70b (void) { return preset_llama (80, 8192, 28672, 64); }
static inline ModelShape preset_llama_405b (void) { return preset_llama (126, 16384, 53248, 128); }

static inline ModelShape
preset_mixtral_8x7b (void)
{
  ModelShape s = preset_llama (32, 4096, 14336, 32);
  g_strlcpy (s.name, "mixtral-8x7b", sizeof s.name);
  s.vocab = 32000;
  s.seq_len = 4096;
  s.moe_experts = 8;
  s.moe_top_k = 2;
  s.moe_ffn_hidden = 14336;
  return s;
}

/* A GPT shape as in Narayanan et al. 2021 / Korthikanti et al. 2022: MHA, 4h GeLU MLP, padded
 * GPT-2 vocab 51200. */
static inline ModelShape
preset_gpt (int layers, int hidden, int heads, int seq)
{
  ModelShape s = preset_gpt3_175b ();
  g_strlcpy (s.name, "gpt", sizeof s.name);
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.ffn_hidden = 4 * hidden;
  s.vocab = 51200;
  s.seq_len = seq;
  return s;
}
