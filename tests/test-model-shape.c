/* Parameter counts against published model sizes, derived fields and shape validation. */
#include <string.h>
#include "model/dtype.h"
#include "model/plan.h"
#include "model/shape.h"
#include "tests/model-presets.h"

static ModelParams
count (ModelShape s)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (model_shape_finish (&s, &error));
  g_assert_no_error (error);
  ModelParams p;
  model_shape_params (&s, s.vocab, &p);
  return p;
}

/* GPT-3 175B: Brown et al. 2020 quote "175B"; the exact GPT-2-layout count with vocab 50257 is
 * 96*(12h^2 + 13h) + 50257h + 2048h + 2h = 174,604,259,328 (h = 12288), the 174.6B usually cited. */
static void
test_gpt3 (void)
{
  ModelParams p = count (preset_gpt3_175b ());
  g_assert_cmpint (p.total, ==, G_GINT64_CONSTANT (174604259328));
  g_assert_cmpint (p.active, ==, p.total);
  g_assert_cmpint (p.lm_head, ==, 0);
  g_assert_cmpint (p.positions, ==, 2048 * 12288);
  g_assert_cmpint (p.dense_layer, ==, G_GINT64_CONSTANT (12) * 12288 * 12288 + 13 * 12288);
}

/* Llama 3.1: 8.03B, 70.55B and 405.85B are the sizes Meta's model cards / Hugging Face report
 * (safetensors totals 8,030,261,248; 70,553,706,496; 405,853,388,800). */
static void
test_llama (void)
{
  g_assert_cmpint (count (preset_llama_8b ()).total, ==, G_GINT64_CONSTANT (8030261248));
  g_assert_cmpint (count (preset_llama_70b ()).total, ==, G_GINT64_CONSTANT (70553706496));
  g_assert_cmpint (count (preset_llama_405b ()).total, ==, G_GINT64_CONSTANT (405853388800));
  ModelParams p = count (preset_llama_8b ());
  /* GQA: q and o are 4096x4096, k and v 4096x1024 each. */
  g_assert_cmpint (p.attention, ==, 2 * 4096 * 4096 + 2 * 4096 * 1024);
  g_assert_cmpint (p.dense_mlp, ==, 3 * 4096 * 14336);
  g_assert_cmpint (p.lm_head, ==, p.embedding);
}

/* Mixtral 8x7B: Jiang et al. 2024 give 46.7B total and 12.9B active parameters; the exact counts
 * are 46,702,792,704 (the Hugging Face checkpoint) and 12,879,925,248. */
static void
test_mixtral (void)
{
  ModelParams p = count (preset_mixtral_8x7b ());
  g_assert_cmpint (p.total, ==, G_GINT64_CONSTANT (46702792704));
  g_assert_cmpint (p.active, ==, G_GINT64_CONSTANT (12879925248));
  g_assert_cmpint (p.moe_router, ==, 4096 * 8);
  g_assert_cmpint (p.moe_layer - p.moe_layer_active, ==, 6 * p.moe_expert);
}

/* Shared experts and a dense/MoE alternation (moe_layer_freq 2: layers 0, 2, ... are MoE). */
static void
test_moe_pattern (void)
{
  ModelShape s = preset_mixtral_8x7b ();
  s.moe_layer_freq = 2;
  s.moe_shared_experts = 1;
  s.moe_ffn_hidden = 1024;
  g_assert_true (model_shape_finish (&s, NULL));
  ModelParams p = count (s);
  g_assert_true (model_shape_layer_is_moe (&s, 0));
  g_assert_false (model_shape_layer_is_moe (&s, 1));
  g_assert_cmpint (model_shape_moe_layers (&s), ==, 16);
  g_assert_cmpint (p.moe_shared, ==, 3 * 4096 * 1024);
  g_assert_cmpint (p.total, ==, 16 * p.dense_layer + 16 * p.moe_layer + 2 * p.embedding + 4096);
  /* matmul weights of a MoE layer: attention + router + (top-k + shared) experts */
  g_assert_cmpint (model_shape_layer_matmul_params (&s, 0), ==,
                   p.attention + 4096 * 8 + 3 * p.moe_expert);
  /* Llama 4's phase (moe_layer_offset 1: layers 1, 3, ... are MoE): the same count and parameters;
   * an offset outside the pattern is refused naming its key. */
  ModelShape o = s;
  o.moe_layer_offset = 1;
  g_assert_true (model_shape_finish (&o, NULL));
  g_assert_false (model_shape_layer_is_moe (&o, 0));
  g_assert_true (model_shape_layer_is_moe (&o, 1));
  g_assert_true (model_shape_layer_is_moe (&o, 31));
  g_assert_cmpint (model_shape_moe_layers (&o), ==, 16);
  g_assert_cmpint (count (o).total, ==, p.total);
  o.moe_layer_offset = 2;
  g_autoptr (GError) error = NULL;
  g_assert_false (model_shape_finish (&o, &error));
  g_assert_nonnull (strstr (error->message, "moe_layer_offset"));
}

/* Megatron pads vocab to a multiple of 128*tp: 50257 -> 50304 = 393*128 (tp 1),
 * 51200 = 50*1024 (tp 8, the padded GPT-2 vocab of Narayanan et al.); 128256 = 1002*128 is already a
 * multiple of 128 but not of 512: 128512 = 251*512 at tp 4. */
static void
test_padded_vocab (void)
{
  ModelShape s = preset_gpt3_175b ();
  g_assert_true (model_shape_finish (&s, NULL));
  g_assert_cmpint (s.vocab_multiple, ==, 128);
  g_assert_cmpint (model_shape_padded_vocab (&s, 1), ==, 50304);
  g_assert_cmpint (model_shape_padded_vocab (&s, 8), ==, 51200);
  ModelShape l = preset_llama_8b ();
  g_assert_true (model_shape_finish (&l, NULL));
  g_assert_cmpint (model_shape_padded_vocab (&l, 1), ==, 128256);
  g_assert_cmpint (model_shape_padded_vocab (&l, 4), ==, 128512);
}

static void
test_defaults (void)
{
  ModelShape s = preset_gpt3_175b ();
  g_assert_true (model_shape_finish (&s, NULL));
  g_assert_cmpint (s.kv_heads, ==, 96);
  g_assert_cmpint (s.head_dim, ==, 128);
  g_assert_cmpint (s.max_positions, ==, 2048);
  g_assert_cmpint (s.moe_layer_freq, ==, 1);
}

static void
expect_bad (ModelShape s, const char *key)
{
  g_autoptr (GError) error = NULL;
  g_assert_false (model_shape_finish (&s, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_SHAPE);
  g_autofree char *want = g_strdup_printf ("[model] %s:", key);
  if (!g_str_has_prefix (error->message, want))
    g_error ("expected an error naming %s, got: %s", key, error->message);
}

static void
test_invalid (void)
{
  ModelShape s;
  s = preset_gpt3_175b (), s.layers = 0, expect_bad (s, "layers");
  s = preset_gpt3_175b (), s.hidden = -1, expect_bad (s, "hidden");
  s = preset_gpt3_175b (), s.heads = 0, expect_bad (s, "heads");
  s = preset_llama_8b (), s.kv_heads = 5, expect_bad (s, "kv_heads");
  s = preset_llama_8b (), s.kv_heads = 64, expect_bad (s, "kv_heads");
  s = preset_gpt3_175b (), s.heads = 7, expect_bad (s, "head_dim");
  s = preset_gpt3_175b (), s.ffn_hidden = 0, expect_bad (s, "ffn_hidden");
  s = preset_gpt3_175b (), s.vocab = 0, expect_bad (s, "vocab");
  s = preset_gpt3_175b (), s.seq_len = 0, expect_bad (s, "seq_len");
  s = preset_gpt3_175b (), s.max_positions = 1024, expect_bad (s, "max_positions");
  s = preset_gpt3_175b (), s.vocab_multiple = -8, expect_bad (s, "vocab_multiple");
  s = preset_gpt3_175b (), s.activation = 9, expect_bad (s, "activation");
  s = preset_gpt3_175b (), s.moe_top_k = 2, expect_bad (s, "moe_top_k");
  s = preset_mixtral_8x7b (), s.moe_top_k = 9, expect_bad (s, "moe_top_k");
  s = preset_mixtral_8x7b (), s.moe_capacity_factor = 0.5, expect_bad (s, "moe_capacity_factor");
  s = preset_mixtral_8x7b (), s.moe_capacity_factor = -1, expect_bad (s, "moe_capacity_factor");
  s = preset_mixtral_8x7b (), s.moe_shared_experts = -1, expect_bad (s, "moe_shared_experts");
  /* RoPE models need no position table: a short max_positions is fine. */
  s = preset_llama_8b (), s.max_positions = 16;
  g_assert_true (model_shape_finish (&s, NULL));
}

/* Element sizes: fp32/tf32 4, fp16/bf16 2, fp8 1, fp4 0.5 (two per byte); names round-trip. */
static void
test_dtype (void)
{
  const double bytes[MODEL_DTYPE_COUNT] = { 4, 4, 2, 2, 1, 0.5 };
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    {
      ModelDtype back;
      g_assert_cmpfloat (model_dtype_bytes (d), ==, bytes[d]);
      g_assert_true (model_dtype_parse (model_dtype_name (d), &back));
      g_assert_cmpint (back, ==, d);
    }
  ModelDtype x = MODEL_DTYPE_BF16;
  g_assert_true (model_dtype_parse ("FP8", &x));
  g_assert_cmpint (x, ==, MODEL_DTYPE_FP8);
  g_assert_false (model_dtype_parse ("int8", &x));
  g_assert_false (model_dtype_parse (NULL, &x));
  g_assert_cmpint (x, ==, MODEL_DTYPE_FP8); /* untouched on failure */
}

/* The family keys' bad values name their key; an MLA shape finishes twice to the same head_dim. */
static void
test_invalid_families (void)
{
  ModelShape mla = preset_llama_8b ();
  mla.kv_heads = mla.heads, mla.kv_lora_rank = 512, mla.qk_nope_head_dim = 128, mla.qk_rope_head_dim = 64;
  mla.v_head_dim = 128;
  ModelShape s;
  s = mla, s.head_dim = 64, expect_bad (s, "head_dim");
  s = mla, s.v_head_dim = 0, expect_bad (s, "v_head_dim");
  s = mla, s.kv_heads = 8, expect_bad (s, "kv_heads");
  s = preset_llama_8b (), s.q_lora_rank = 1536, expect_bad (s, "kv_lora_rank");
  s = preset_gpt3_175b (), s.mlm_fraction = 0.15, expect_bad (s, "mlm_fraction");
  s = preset_gpt3_175b (), s.encoder = TRUE, s.attention_window = 128, expect_bad (s, "attention_window");
  s = preset_mixtral_8x7b (), s.moe_dense_layers = 33, expect_bad (s, "moe_dense_layers");
  s = mla;
  g_assert_true (model_shape_finish (&s, NULL));
  g_assert_cmpint (s.head_dim, ==, 160);
  g_assert_true (model_shape_finish (&s, NULL));
  g_assert_cmpint (s.head_dim, ==, 160);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/dtype/sizes-and-names", test_dtype);
  g_test_add_func ("/model/shape/gpt3-175b", test_gpt3);
  g_test_add_func ("/model/shape/llama3.1", test_llama);
  g_test_add_func ("/model/shape/mixtral-8x7b", test_mixtral);
  g_test_add_func ("/model/shape/moe-pattern", test_moe_pattern);
  g_test_add_func ("/model/shape/padded-vocab", test_padded_vocab);
  g_test_add_func ("/model/shape/defaults", test_defaults);
  g_test_add_func ("/model/shape/invalid", test_invalid);
  g_test_add_func ("/model/shape/invalid-families", test_invalid_families);
  return g_test_run ();
}
