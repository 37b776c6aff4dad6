/* The validation trainer's host parts: the strict [model] reader, the parameter layout, the byte
 * corpus, and the double-precision reference model (finite-difference gradients on every
 * parameter tensor type, loss falling under SGD). The CUDA kernels are checked against this
 * reference by tests/test-trainer-gpu on machines with a GPU. */
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

#include "calib/trainer/data.h"
#include "calib/trainer/emit.h"
#include "calib/trainer/layout.h"
#include "calib/trainer/ref.h"
#include "calib/trainer/shape.h"
#include "sim/scenario/scenario.h"

/* GPT-2 small as published (Radford et al. 2019; HF config: n_layer 12, n_embd 768, n_head 12,
 * n_positions 1024, vocab 50257, tied embeddings, biases). */
static const char gpt2_small[] =
  "# GPT-2 small\n"
  "[scenario]\nname = ignored = still fine\n"
  "[model]\nname = gpt2-small\nlayers = 12\nhidden = 768\nheads = 12\nkv_heads = 12\nffn_hidden = 3072\n"
  "vocab = 50257\nvocab_multiple = 1\nactivation = gelu\nnorm = layernorm\n"
  "position = learned\ntied_embeddings = true\nbias = true\n"
  "[training]\nseq_len = 1024\n";

static void
test_shape_parse (void)
{
  TrainerShape s;
  char err[256] = "";
  g_assert_cmpint (trainer_shape_parse (gpt2_small, "gpt2", 0, &s, err, sizeof err), ==, 0);
  g_assert_cmpstr (s.name, ==, "gpt2-small");
  g_assert_cmpint (s.head_dim, ==, 64);   /* 768 / 12 */
  g_assert_cmpint (s.seq_len, ==, 1024);  /* from [training] */
  g_assert_cmpint (s.max_positions, ==, 1024);
  g_assert_cmpint (s.vocab_padded, ==, 50257);
  g_assert_false (s.swiglu || s.rmsnorm || s.rope);
  TrainerLayout L;
  trainer_layout_init (&L, &s);
  /* GPT-2 small's published parameter count is 124,439,808 (wte 38,597,376 + wpe 786,432 +
   * 12 × 7,087,872 per block + final LayerNorm 1,536), tied head not counted twice. */
  g_assert_cmpuint (L.total, ==, 124439808);
}

static void
test_shape_llama (void)
{
  /* Llama-style options: GQA, RoPE, RMSNorm, SwiGLU, untied, no biases, vocab padded to 128. */
  const char *text = "[model]\nlayers = 2\nhidden = 64\nheads = 8\nkv_heads = 2\nffn_hidden = 96\n"
                     "vocab = 300\nactivation = swiglu\nnorm = rmsnorm\nposition = rope\n";
  TrainerShape s;
  char err[256] = "";
  /* no [training] seq_len: the caller's 16 is used; tied_embeddings and bias default to false */
  g_assert_cmpint (trainer_shape_parse (text, "llama", 16, &s, err, sizeof err), ==, 0);
  g_assert_cmpint (s.seq_len, ==, 16);
  g_assert_cmpint (s.vocab_padded, ==, 384);
  TrainerLayout L;
  trainer_layout_init (&L, &s);
  /* per layer: norms 2·64, qkv (64 + 2·16)·64 = 6144, o 64·64 = 4096, fc 192·64 = 12288,
   * proj 64·96 = 6144 → 28,800; embeddings 384·64 twice (untied) = 49,152; final norm 64. */
  g_assert_cmpuint (L.layer_stride, ==, 28800);
  g_assert_cmpuint (L.total, ==, 2 * 28800 + 49152 + 64);
  g_assert_cmpuint (L.size[TRAINER_WPE], ==, 0);
  g_assert_cmpuint (L.size[TRAINER_QKV_B], ==, 0);
}

static void
expect_error (const char *text, const char *needle)
{
  TrainerShape s;
  char err[256] = "";
  g_assert_cmpint (trainer_shape_parse (text, "bad.ini", 8, &s, err, sizeof err), ==, -1);
  if (!strstr (err, needle))
    g_error ("error \"%s\" does not mention \"%s\"", err, needle);
}

static void
test_shape_strict (void)
{
  const char *base = "[model]\nlayers = 1\nhidden = 8\nheads = 2\nkv_heads = 2\nffn_hidden = 8\nvocab = 256\n"
                     "activation = gelu\nnorm = layernorm\nposition = learned\n";
  g_autofree char *unknown = g_strconcat (base, "hiden = 8\n", NULL);
  expect_error (unknown, "unknown key [model] hiden");
  g_autofree char *bad_int = g_strconcat (base, "head_dim = 2x\n", NULL);
  expect_error (bad_int, "is not an integer");
  g_autofree char *bad_enum = g_strdup (base);
  memcpy (strstr (bad_enum, "gelu"), "relu", 4);
  expect_error (bad_enum, "gelu, swiglu, geglu or squared_relu");
  g_autofree char *twice = g_strconcat (base, "layers = 2\n", NULL);
  expect_error (twice, "given twice");
  g_autofree char *gqa = g_strconcat ("[model]\nkv_heads = 3\n", base + 8, NULL);
  expect_error (gqa, "given twice");
  g_autofree char *moe = g_strconcat (base, "moe_experts = 8\n", NULL);
  expect_error (moe, "dense models only");
  expect_error ("[model]\nlayers = 1\n", "missing required key [model] hidden");
  expect_error ("[model]\nlayers = 1\nhidden = 8\nheads = 2\nkv_heads = 3\nffn_hidden = 8\nvocab = 256\n"
                "activation = gelu\nnorm = layernorm\nposition = learned\n", "must divide heads");
  expect_error ("[model]\nlayers = 1\nhidden = 8\nheads = 2\nkv_heads = 2\nffn_hidden = 8\nvocab = 256\n"
                "activation = gelu\nnorm = layernorm\n", "missing required key [model] position");
  expect_error ("[run]\nx = 1\n", "no [model] group");
}

static void
test_shape_load_file (void)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("trainer-shape-XXXXXX.ini", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  g_assert_true (g_file_set_contents (path, gpt2_small, -1, NULL));
  close (fd);
  TrainerShape s;
  char err[256] = "";
  g_assert_cmpint (trainer_shape_load (path, 128, &s, err, sizeof err), ==, 0);
  g_assert_cmpint (s.layers, ==, 12);
  g_assert_cmpint (s.seq_len, ==, 128); /* the caller's length overrides [training] */
  g_unlink (path);
  g_assert_cmpint (trainer_shape_load (path, 0, &s, err, sizeof err), ==, -1);
  g_assert_nonnull (strstr (err, "cannot open"));
}

static void
test_data_split (void)
{
  GString *text = g_string_new (NULL);
  for (int i = 0; i < 100; i++)
    g_string_append_printf (text, "line %03d of the corpus\n", i);
  TrainerData d;
  char err[256];
  g_assert_cmpint (trainer_data_from_text (&d, text->str, text->len, 0.1, err, sizeof err), ==, 0);
  g_assert_cmpuint (d.train_len, ==, (size_t) (text->len * 0.9));
  int tok[2 * 16], tgt[2 * 16], tok2[2 * 16], tgt2[2 * 16];
  trainer_data_batch (&d, 1, 42, 0, 2, 16, tok, tgt);
  for (int i = 0; i < 32; i++)
    {
      g_assert_cmpint (tok[i], >=, 0);
      g_assert_cmpint (tok[i], <, TRAINER_DATA_VOCAB);
    }
  /* targets are the next byte: window[1..T] */
  for (int t = 0; t + 1 < 16; t++)
    g_assert_cmpint (tgt[t], ==, tok[t + 1]);
  /* held-out windows start inside the held-out part; same (seed, stream) → same batch */
  const char *p = memchr (d.text + d.train_len, tok[0], d.len - d.train_len);
  g_assert_nonnull (p);
  trainer_data_batch (&d, 1, 42, 0, 2, 16, tok2, tgt2);
  g_assert_cmpmem (tok, sizeof tok, tok2, sizeof tok2);
  trainer_data_batch (&d, 0, 42, 1, 2, 16, tok2, tgt2);
  g_assert_true (memcmp (tok, tok2, sizeof tok) != 0);
  trainer_data_clear (&d);
  g_string_free (text, TRUE);
}

/* Tiny shapes covering every tensor type: GPT-2 style (LayerNorm with bias, GELU, learned positions,
 * tied head) and Llama style (RMSNorm, SwiGLU, RoPE, GQA 4:2, untied head, padded vocab). */
static TrainerShape
tiny (int llama)
{
  TrainerShape s;
  trainer_shape_defaults (&s);
  s.layers = 2;
  s.hidden = 8;
  s.heads = llama ? 4 : 2;
  s.kv_heads = llama ? 2 : 2;
  s.ffn_hidden = 12;
  s.vocab = 11;
  s.vocab_multiple = llama ? 8 : 1;
  s.seq_len = 5;
  s.swiglu = s.rmsnorm = s.rope = llama;
  s.tied_embeddings = !llama;
  s.bias = !llama;
  s.rope_theta = 10000.0;
  char err[256];
  g_assert_cmpint (trainer_shape_finish (&s, err, sizeof err), ==, 0);
  return s;
}

static double *
init_params (const TrainerLayout *L, const TrainerShape *s, double scale_up, double perturb)
{
  float *pf = g_new (float, L->total);
  trainer_layout_init_params (L, s, 1234, pf);
  double *p = g_new (double, L->total);
  /* Larger weights than GPT-2's 0.02 so every path (attention mixing, GELU curvature) carries
   * signal well above rounding in the finite differences; biases and gains perturbed off 0 / 1. */
  for (size_t i = 0; i < L->total; i++)
    p[i] = pf[i] * scale_up + perturb * sin (1.7 * (double) i);
  g_free (pf);
  return p;
}

static void
batch_for (const TrainerShape *s, int B, int *tok, int *tgt)
{
  for (int i = 0; i < B * s->seq_len; i++)
    {
      tok[i] = (i * 7 + 3) % s->vocab;
      tgt[i] = (i * 5 + 1) % s->vocab;
    }
}

static void
gradcheck (gconstpointer data)
{
  int llama = GPOINTER_TO_INT (data);
  TrainerShape s = tiny (llama);
  const int B = 2;
  TrainerRef *r = trainer_ref_new (&s, B);
  const TrainerLayout *L = trainer_ref_layout (r);
  double *p = init_params (L, &s, 25.0, 0.05);
  double *g = g_new (double, L->total);
  int tok[2 * 5], tgt[2 * 5];
  batch_for (&s, B, tok, tgt);
  trainer_ref_forward (r, p, tok, tgt);
  trainer_ref_backward (r, p, g);
  int checked_types = 0;
  for (int t = 0; t < TRAINER_TENSOR_COUNT; t++)
    {
      if (!L->size[t])
        continue;
      checked_types++;
      int nl = (t >= TRAINER_FIRST_LAYER_TENSOR && t <= TRAINER_LAST_LAYER_TENSOR) ? s.layers : 1;
      for (int l = 0; l < nl; l++)
        for (int k = 0; k < 4; k++)
          {
            /* spread the probes over the tensor; token ids 3, 10, 6 … so wte rows that are used */
            size_t i = trainer_layout_offset (L, (TrainerTensor) t, l) + (size_t) (k * 37 + 3) % L->size[t];
            double h = 1e-5, old = p[i];
            p[i] = old + h;
            double lp = trainer_ref_forward (r, p, tok, tgt);
            p[i] = old - h;
            double lm = trainer_ref_forward (r, p, tok, tgt);
            p[i] = old;
            double fd = (lp - lm) / (2 * h);
            /* central differences: truncation O(h²·f''') ≈ 1e-10 here, rounding ≈ 1e-16/h = 1e-11 */
            double tol = 1e-7 + 1e-5 * fabs (fd);
            if (fabs (fd - g[i]) > tol)
              g_error ("%s layer %d index %zu: analytic %.10g, finite difference %.10g",
                       trainer_layout_tensor_name ((TrainerTensor) t), l, i, g[i], fd);
          }
    }
  /* GPT-2 style: wte wpe ln1_w ln1_b qkv_w qkv_b o_w o_b ln2_w ln2_b fc_w fc_b proj_w proj_b lnf_w lnf_b
   * (16); Llama style: wte ln1_w qkv_w o_w ln2_w fc_w proj_w lnf_w head (9). */
  g_assert_cmpint (checked_types, ==, llama ? 9 : 16);
  /* A gradient that is identically zero would pass trivially: the embedding gradient is not. */
  double norm = 0;
  for (size_t i = 0; i < L->size[TRAINER_WTE]; i++)
    norm += g[i] * g[i];
  g_assert_cmpfloat (norm, >, 1e-8);
  g_free (p);
  g_free (g);
  trainer_ref_free (r);
}

static void
sgd_learns (gconstpointer data)
{
  int llama = GPOINTER_TO_INT (data);
  TrainerShape s = tiny (llama);
  const int B = 2;
  TrainerRef *r = trainer_ref_new (&s, B);
  const TrainerLayout *L = trainer_ref_layout (r);
  double *p = init_params (L, &s, 1.0, 0.0);
  double *g = g_new (double, L->total);
  int tok[2 * 5], tgt[2 * 5];
  batch_for (&s, B, tok, tgt);
  double first = trainer_ref_forward (r, p, tok, tgt), loss = first;
  /* At init the logits are near zero, so the loss starts near ln(vocab) = ln 11 ≈ 2.40. */
  g_assert_cmpfloat (fabs (first - log (11.0)), <, 0.1);
  for (int step = 0; step < 150; step++)
    {
      trainer_ref_backward (r, p, g);
      for (size_t i = 0; i < L->total; i++)
        p[i] -= 0.5 * g[i];
      loss = trainer_ref_forward (r, p, tok, tgt);
    }
  /* One fixed batch of 10 positions is memorisable: the loss must fall well below its start. */
  g_test_message ("loss %.4f -> %.4f", first, loss);
  g_assert_cmpfloat (loss, <, 0.5 * first);
  g_free (p);
  g_free (g);
  trainer_ref_free (r);
}

/* The emitted scenario names the run's plan with the loader's keys and carries the model in full: read
 * back by the strict [model] reader it gives the same shape. */
static void
test_emit_roundtrip (void)
{
  const char *text = "[model]\nname = tiny\nlayers = 3\nhidden = 96\nheads = 6\nkv_heads = 2\nffn_hidden = 200\n"
                     "vocab = 300\nvocab_multiple = 64\nactivation = swiglu\nnorm = rmsnorm\nposition = rope\n";
  TrainerShape s, back;
  char err[256] = "";
  g_assert_cmpint (trainer_shape_parse (text, "tiny", 64, &s, err, sizeof err), ==, 0);
  TrainerRun run = { &s, "h100-sxm", "ndr400-rail-optimized", "NVIDIA H100 80GB HBM3", "tiny.ini", 16, 8,
                     1, 4, 128, 1, 1, 25, 300 };
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp ("trainer-emit-XXXXXX.ini", &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  FILE *f = fopen (path, "w");
  g_assert_nonnull (f);
  g_assert_cmpint (trainer_emit_scenario (f, &run), ==, 0);
  fclose (f);
  g_assert_cmpint (trainer_shape_load (path, 0, &back, err, sizeof err), ==, 0);
  g_assert_cmpint (back.seq_len, ==, 64); /* through [training] seq_len */
  g_assert_cmpint (memcmp (&s, &back, sizeof s), ==, 0);
  g_autofree char *contents = NULL;
  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  const char *expect[] = { "resource:///trainsim/scenarios/hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini",
                           "\ngpus = 16\n", "\ngpus_per_node = 8\n", "\nzero = 1\n", "\nmicro_batch = 4\n",
                           "\nglobal_batch = 128\n", "\nrecompute = full\n", "\ndp_bucket_MiB = 25\n",
                           "\ndp_overlap = true\n", "\ntp = 1\n", "\nname = trainer-tiny-16gpu\n" };
  for (size_t i = 0; i < G_N_ELEMENTS (expect); i++)
    if (!strstr (contents, expect[i]))
      g_error ("emitted scenario lacks \"%s\":\n%s", expect[i], contents);
  /* and trainsim's own loader takes it: embedded hardware and fabric, this model, this plan */
  const char *files[] = { path, NULL };
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (files, NULL, &error);
  g_assert_no_error (error);
  const ModelShape *ms = sim_scenario_shape (sc);
  const ModelPlan *mp = sim_scenario_plan (sc);
  g_assert_cmpint (ms->layers, ==, 3);
  g_assert_cmpint (ms->kv_heads, ==, 2);
  g_assert_cmpint (ms->seq_len, ==, 64);
  g_assert_cmpint (ms->activation, ==, MODEL_ACT_SWIGLU);
  g_assert_cmpint (mp->dp, ==, 16);
  g_assert_cmpint (mp->zero, ==, 1);
  g_assert_cmpint (mp->micro_batch, ==, 4);
  g_assert_cmpint (mp->global_batch, ==, 128);
  g_assert_cmpint (mp->recompute, ==, MODEL_RECOMPUTE_FULL);
  g_assert_cmpint (mp->dp_bucket_mb, ==, 25);
  g_assert_true (mp->dp_overlap);
  g_assert_cmpint (sim_scenario_run (sc)->nodes, ==, 2);
  sim_scenario_free (sc);
  g_unlink (path);
}

/* One source of truth (at sequence 512, which every file's position table holds): every model file of scenarios/models (and the trainer-sized ones of
 * calib/trainer/models) reads the same in the trainer's plain-C reader as in trainsim's loader (dense
 * ones; MoE files are refused by the trainer by name). */
static void
test_models_agree (gconstpointer where)
{
  const char *src = g_getenv ("TRAINSIM_SRCDIR") ? g_getenv ("TRAINSIM_SRCDIR") : TRAINSIM_SRCDIR;
  g_autofree char *dir = g_build_filename (src, (const char *) where, NULL);
  GDir *d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  const char *entry;
  int checked = 0;
  while ((entry = g_dir_read_name (d)))
    {
      if (!g_str_has_suffix (entry, ".ini"))
        continue;
      g_autofree char *path = g_build_filename (dir, entry, NULL);
      TrainerShape t;
      char err[512] = "";
      int rc = trainer_shape_load (path, 512, &t, err, sizeof err);
      const char *files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", path, NULL };
      const char *sets[] = { "cluster.gpus=8", "parallel.micro_batch=1", "parallel.global_batch=8",
                             "training.seq_len=512", NULL };
      GError *error = NULL;
      SimScenario *sc = sim_scenario_load (files, sets, &error);
      g_assert_no_error (error);
      const ModelShape *m = sim_scenario_shape (sc);
      gboolean beyond = m->activation == MODEL_ACT_GEGLU || m->activation == MODEL_ACT_SQUARED_RELU
                        || m->position == MODEL_POS_ALIBI || m->encoder || m->attention_window > 0
                        || m->mtp_depth > 0 || m->kv_lora_rank > 0;
      if (m->moe_experts > 0)
        {
          g_assert_cmpint (rc, ==, -1);
          g_assert_nonnull (strstr (err, "dense models only"));
        }
      else if (beyond)
        {
          g_assert_cmpint (rc, ==, -1);
          g_assert_nonnull (strstr (err, "GPT/Llama-style decoders only"));
        }
      else
        {
          if (rc != 0)
            g_error ("%s: %s", entry, err);
          g_assert_cmpint (t.layers, ==, m->layers);
          g_assert_cmpint (t.hidden, ==, m->hidden);
          g_assert_cmpint (t.heads, ==, m->heads);
          g_assert_cmpint (t.kv_heads, ==, m->kv_heads);
          g_assert_cmpint (t.head_dim, ==, m->head_dim);
          g_assert_cmpint (t.ffn_hidden, ==, m->ffn_hidden);
          g_assert_cmpint (t.vocab, ==, m->vocab);
          g_assert_cmpint (t.vocab_multiple, ==, m->vocab_multiple);
          g_assert_cmpint (t.max_positions, ==, m->max_positions ? m->max_positions : 512);
          g_assert_cmpint (t.swiglu, ==, m->activation == MODEL_ACT_SWIGLU);
          g_assert_cmpint (t.rmsnorm, ==, m->norm == MODEL_NORM_RMSNORM);
          g_assert_cmpint (t.rope, ==, m->position == MODEL_POS_ROPE);
          g_assert_cmpint (t.tied_embeddings, ==, !!m->tied_embeddings);
          g_assert_cmpint (t.bias, ==, !!m->bias);
          g_assert_cmpstr (t.name, ==, m->name);
        }
      sim_scenario_free (sc);
      checked++;
    }
  g_dir_close (d);
  g_assert_cmpint (checked, >=, 2);
}

/* The whole pipeline on CPU: the fortunes corpus, byte tokens, the reference model and AdamW. A
 * 2-layer width-32 model must take the held-out loss well below the uniform ln 256 = 5.55 nats within
 * 120 steps: English bytes carry about 4.1–4.5 bits (2.9–3.1 nats) at the unigram level alone, so a
 * model that learns anything passes 4.0 nats, and one that learns nothing stays at 5.55. */
static void
test_learns_corpus (void)
{
  TrainerData d;
  char err[512];
  if (trainer_data_load (&d, TRAINER_DATA_DEFAULT_DIR, 0.1, err, sizeof err) != 0)
    {
      g_test_skip (err); /* dev.sh installs the fortunes package */
      return;
    }
  g_assert_cmpuint (d.len, >, 1000000); /* fortunes ships ≈2.5 MB of text */
  TrainerShape s;
  trainer_shape_defaults (&s);
  s.layers = 2; s.hidden = 32; s.heads = 2; s.kv_heads = 2; s.ffn_hidden = 64; s.vocab = 256;
  s.seq_len = 32; s.tied_embeddings = 1; s.bias = 1;
  g_assert_cmpint (trainer_shape_finish (&s, err, sizeof err), ==, 0);
  const int B = 4, N = B * s.seq_len;
  TrainerRef *r = trainer_ref_new (&s, B);
  const TrainerLayout *L = trainer_ref_layout (r);
  double *p = init_params (L, &s, 1.0, 0.0);
  double *g = g_new (double, L->total), *m = g_new0 (double, L->total), *v = g_new0 (double, L->total);
  int *tok = g_new (int, N), *tgt = g_new (int, N);
  double first = 0, last = 0;
  for (int k = 0; k < 4; k++)
    {
      trainer_data_batch (&d, 1, 7, k, B, s.seq_len, tok, tgt);
      first += trainer_ref_forward (r, p, tok, tgt) / 4;
    }
  for (int step = 1; step <= 120; step++)
    {
      trainer_data_batch (&d, 0, 7, step, B, s.seq_len, tok, tgt);
      trainer_ref_forward (r, p, tok, tgt);
      trainer_ref_backward (r, p, g);
      for (size_t i = 0; i < L->total; i++)
        {
          m[i] = 0.9 * m[i] + 0.1 * g[i];
          v[i] = 0.95 * v[i] + 0.05 * g[i] * g[i];
          p[i] -= 1e-2 * (m[i] / (1 - pow (0.9, step))) / (sqrt (v[i] / (1 - pow (0.95, step))) + 1e-8);
        }
    }
  for (int k = 0; k < 4; k++)
    {
      trainer_data_batch (&d, 1, 7, k, B, s.seq_len, tok, tgt);
      last += trainer_ref_forward (r, p, tok, tgt) / 4;
    }
  g_test_message ("held-out loss %.3f -> %.3f nats", first, last);
  g_assert_cmpfloat (fabs (first - log (256.0)), <, 0.1);
  g_assert_cmpfloat (last, <, 4.0);
  g_free (p); g_free (g); g_free (m); g_free (v); g_free (tok); g_free (tgt);
  trainer_ref_free (r);
  trainer_data_clear (&d);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trainer/shape/parse-gpt2-small", test_shape_parse);
  g_test_add_func ("/trainer/shape/llama-options", test_shape_llama);
  g_test_add_func ("/trainer/shape/strict", test_shape_strict);
  g_test_add_func ("/trainer/shape/load-file", test_shape_load_file);
  g_test_add_func ("/trainer/data/split-and-batches", test_data_split);
  g_test_add_func ("/trainer/emit/roundtrip", test_emit_roundtrip);
  g_test_add_data_func ("/trainer/shape/scenario-models-agree-with-loader", "scenarios/models", test_models_agree);
  g_test_add_data_func ("/trainer/shape/trainer-models-agree-with-loader", "calib/trainer/models", test_models_agree);
  g_test_add_data_func ("/trainer/ref/gradcheck-gpt2", GINT_TO_POINTER (0), gradcheck);
  g_test_add_data_func ("/trainer/ref/gradcheck-llama", GINT_TO_POINTER (1), gradcheck);
  g_test_add_data_func ("/trainer/ref/sgd-loss-falls-gpt2", GINT_TO_POINTER (0), sgd_learns);
  g_test_add_data_func ("/trainer/ref/sgd-loss-falls-llama", GINT_TO_POINTER (1), sgd_learns);
  g_test_add_func ("/trainer/ref/learns-fortunes-corpus", test_learns_corpus);
  return g_test_run ();
}
