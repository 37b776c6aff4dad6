/* A NeMo Megatron GPT config as trainsim keys (import-nemo.h).
 *
 * Defaults and meanings cited as NeMo are NVIDIA/NeMo at e564e66 (the last NeMo 1.x
 * megatron_gpt_config.yaml): examples/nlp/language_modeling/conf/megatron_gpt_config.yaml for the
 * keys, nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py and
 * megatron_base_model.py for the defaults of keys a file leaves out (their cfg.get calls) and for
 * how they reach Megatron-Core, whose meaning then is the one import-megatron.c cites. Every key
 * read is marked; the rest of the file is listed as ignored or unknown at the end. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/scenario/import-nemo.h"

typedef struct {
  const SimYamlNode *root;
  const char *name;
  SimImport *imp;
  GHashTable *used;           /* SimYamlNode * read by the mapping */
  GError **error;
  gboolean failed;
} Ctx;

/* Where a key may be: NeMo 1.x under model:, NeMo 2.x under model.config: (the TransformerConfig),
 * trainer.strategy: (parallelism) or data: (batch and sequence length). */
#define MODEL(k) ((const char *const[]) { "model." k, "model.config." k, NULL })
#define PAR(k) ((const char *const[]) { "model." k, "model.config." k, "trainer.strategy." k, NULL })
#define BATCH(k) ((const char *const[]) { "model." k, "data." k, NULL })
#define AT(k) ((const char *const[]) { k, NULL })

static gboolean
bad (Ctx *c, const SimYamlNode *n, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
bad (Ctx *c, const SimYamlNode *n, const char *fmt, ...)
{
  if (c->failed)
    return FALSE;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_autofree char *path = sim_yaml_path (n);
  g_set_error (c->error, SIM_IMPORT_ERROR, SIM_IMPORT_ERROR_VALUE, "%s:%d: %s: %s", c->name, n->line, path, msg);
  c->failed = TRUE;
  return FALSE;
}

/* A node's value as written: the scalar, [a, b] or {}. */
static char *
shown (const SimYamlNode *n)
{
  if (n->kind == SIM_YAML_SCALAR)
    return g_strdup (n->value);
  GString *s = g_string_new (n->kind == SIM_YAML_SEQ ? "[" : "{");
  for (guint i = 0; i < n->children->len; i++)
    {
      const SimYamlNode *ch = g_ptr_array_index (n->children, i);
      g_autofree char *v = shown (ch);
      g_string_append_printf (s, "%s%s%s%s", i ? ", " : "", ch->key ? ch->key : "", ch->key ? ": " : "", v);
    }
  g_string_append (s, n->kind == SIM_YAML_SEQ ? "]" : "}");
  return g_string_free (s, FALSE);
}

/* "model.num_layers: 126 (line 57)": the FROM comment of a key. */
static char *
src (const Ctx *c, const SimYamlNode *n)
{
  g_autofree char *path = sim_yaml_path (n);
  g_autofree char *v = shown (n);
  (void) c;
  return g_strdup_printf ("%s: %s (line %d)", path, v, n->line);
}

/* The first of PATHS present, every present one marked read; NULL when absent, null (then NeMo's
 * default holds) or unresolved (reported). */
static const SimYamlNode *
lookup (Ctx *c, const char *const *paths)
{
  const SimYamlNode *first = NULL;
  for (int i = 0; paths[i]; i++)
    {
      const SimYamlNode *n = sim_yaml_lookup (c->root, paths[i]);
      if (!n)
        continue;
      g_hash_table_add (c->used, (gpointer) n);
      if (!first)
        first = n;
    }
  if (!first)
    return NULL;
  if (first->kind != SIM_YAML_SCALAR)
    {
      bad (c, first, "a %s where a value is expected", first->kind == SIM_YAML_MAP ? "mapping" : "sequence");
      return NULL;
    }
  if (sim_yaml_unresolved (first))
    {
      g_autofree char *s = src (c, first);
      sim_import_unknown (c->imp, s, "unresolved: trainsim does not resolve ${...} or ???; write the value");
      return NULL;
    }
  return sim_yaml_is_null (first) ? NULL : first;
}

static gint64
int_at (Ctx *c, const char *const *paths, gint64 def, gint64 min, const SimYamlNode **at)
{
  const SimYamlNode *n = lookup (c, paths);
  gint64 v = def;
  if (at)
    *at = n;
  if (!n)
    return def;
  if (!sim_yaml_get_int (n, &v))
    bad (c, n, "'%s': not an integer", n->value);
  else if (v < min)
    bad (c, n, "%" G_GINT64_FORMAT ": must be at least %" G_GINT64_FORMAT, v, min);
  return v;
}

static double
double_at (Ctx *c, const char *const *paths, double def, const SimYamlNode **at)
{
  const SimYamlNode *n = lookup (c, paths);
  double v = def;
  if (at)
    *at = n;
  if (n && !sim_yaml_get_double (n, &v))
    bad (c, n, "'%s': not a number", n->value);
  return v;
}

static gboolean
bool_at (Ctx *c, const char *const *paths, gboolean def, const SimYamlNode **at)
{
  const SimYamlNode *n = lookup (c, paths);
  gboolean v = def;
  if (at)
    *at = n;
  if (n && !sim_yaml_get_bool (n, &v))
    bad (c, n, "'%s': not a boolean (true or false)", n->value);
  return v;
}

static const char *
str_at (Ctx *c, const char *const *paths, const char *def, const SimYamlNode **at)
{
  const SimYamlNode *n = lookup (c, paths);
  if (at)
    *at = n;
  return n ? n->value : def;
}

/* Sets a key; its comment is where it came from, or NeMo's default. */
static void
put (Ctx *c, const char *group, const char *key, const char *value, const SimYamlNode *at, const char *default_why)
{
  g_autofree char *from = at ? src (c, at) : g_strdup_printf ("NeMo default: %s", default_why);
  sim_import_set (c->imp, group, key, value, from);
}

/* A key from several inputs: each one present, in order; DEFAULT_WHY when none is. */
static void
put_many (Ctx *c, const char *group, const char *key, const char *value, const SimYamlNode *const *ats, int n,
          const char *default_why)
{
  GString *from = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    if (ats[i])
      {
        g_autofree char *s = src (c, ats[i]);
        g_string_append_printf (from, "%s%s", from->len ? "; " : "", s);
      }
  if (!from->len)
    g_string_append_printf (from, "NeMo default: %s", default_why);
  sim_import_set (c->imp, group, key, value, from->str);
  g_string_free (from, TRUE);
}

#define ATS(...) (const SimYamlNode *const[]) { __VA_ARGS__ }, G_N_ELEMENTS (((const SimYamlNode *const[]) { __VA_ARGS__ }))

static void
put_int (Ctx *c, const char *group, const char *key, gint64 v, const SimYamlNode *at, const char *default_why)
{
  g_autofree char *s = g_strdup_printf ("%" G_GINT64_FORMAT, v);
  put (c, group, key, s, at, default_why);
}

static void
unknown_at (Ctx *c, const SimYamlNode *at, const char *why)
{
  g_autofree char *s = src (c, at);
  sim_import_unknown (c->imp, s, why);
}

/* Unknown: the key AT, or ABSENT (its default) when the file leaves it out. */
static void
unknown_or (Ctx *c, const SimYamlNode *at, const char *absent, const char *why)
{
  if (at)
    unknown_at (c, at, why);
  else
    sim_import_unknown (c->imp, absent, why);
}

/* Marks keys read whatever they hold (a 2.x callable's config, say). */
static void
mark (Ctx *c, const char *const *paths)
{
  for (int i = 0; paths[i]; i++)
    {
      const SimYamlNode *n = sim_yaml_lookup (c->root, paths[i]);
      if (n)
        g_hash_table_add (c->used, (gpointer) n);
    }
}

/* Reads PATHS and lists the one found as ignored: understood, without effect on what trainsim predicts. */
static void
ignore_read (Ctx *c, const char *const *paths)
{
  const SimYamlNode *n = lookup (c, paths);
  if (n)
    {
      g_autofree char *s = src (c, n);
      sim_import_ignored (c->imp, s);
    }
}

typedef struct {
  gint64 layers, hidden, heads, tp, pp, vpp, cp, gbs;
  const char *mdt;
} Plan;

/* Vocabulary: NeMo reads it from the tokenizer (megatron_base_model.py _build_vocab pads it to
 * make_vocab_size_divisible_by x TP); override_vocab_size replaces the padded size. */
static void
map_vocab (Ctx *c, const SimImportOptions *o)
{
  const SimYamlNode *at_o, *at_m, *at_lib = NULL, *at_type = NULL;
  gint64 over = int_at (c, MODEL ("override_vocab_size"), 0, 1, &at_o);
  gint64 mult = int_at (c, MODEL ("make_vocab_size_divisible_by"), 128, 1, &at_m);
  const char *lib = NULL, *type = NULL;
  if (!(o && o->vocab > 0) && !over)
    {
      lib = str_at (c, AT ("model.tokenizer.library"), NULL, &at_lib);
      type = str_at (c, AT ("model.tokenizer.type"), NULL, &at_type);
    }
  if (o && o->vocab > 0)
    {
      g_autofree char *t = g_strdup_printf ("trainsim import --vocab %d", o->vocab);
      sim_import_set_int (c->imp, "model", "vocab", o->vocab, t);
    }
  else if (over)
    {
      put_int (c, "model", "vocab", over, at_o, "");
      sim_import_set_int (c->imp, "model", "vocab_multiple", 1, "override_vocab_size is the padded size");
      return;
    }
  else if (lib && type && strcmp (lib, "megatron") == 0 && strcmp (type, "GPT2BPETokenizer") == 0)
    {
      g_autofree char *t = g_strdup_printf ("model.tokenizer.type: GPT2BPETokenizer (line %d): the GPT-2 BPE "
                                            "vocabulary file has 50257 entries", at_type->line);
      sim_import_set_int (c->imp, "model", "vocab", 50257, t);
    }
  else
    sim_import_note (c->imp, "[model] vocab: NeMo reads it from the tokenizer's files; pass trainsim import --vocab N "
                     "or add [model] vocab");
  put_int (c, "model", "vocab_multiple", mult, at_m, "make_vocab_size_divisible_by 128");
}

static void
map_model (Ctx *c, const SimImportOptions *o, Plan *p)
{
  const SimYamlNode *at;
  p->layers = int_at (c, MODEL ("num_layers"), 0, 1, &at);
  if (at)
    put_int (c, "model", "layers", p->layers, at, "");
  p->hidden = int_at (c, MODEL ("hidden_size"), 0, 1, &at);
  if (at)
    put_int (c, "model", "hidden", p->hidden, at, "");
  p->heads = int_at (c, MODEL ("num_attention_heads"), 0, 1, &at);
  if (at)
    put_int (c, "model", "heads", p->heads, at, "");
  if (!p->layers || !p->hidden || !p->heads)
    sim_import_note (c->imp, "[model]: num_layers, hidden_size or num_attention_heads not given; the shape needs "
                     "another scenario file");
  /* num_query_groups: null means one group per head (megatron_gpt_config.yaml). */
  gint64 groups = int_at (c, MODEL ("num_query_groups"), 0, 1, &at);
  if (groups)
    put_int (c, "model", "kv_heads", groups, at, "");
  else if (p->heads)
    put_int (c, "model", "kv_heads", p->heads, NULL, "num_query_groups null: multi-head attention");
  gint64 kvc = int_at (c, MODEL ("kv_channels"), 0, 1, &at);
  if (kvc)
    put_int (c, "model", "head_dim", kvc, at, "");
  gint64 ffn = int_at (c, MODEL ("ffn_hidden_size"), 0, 1, &at);
  if (ffn)
    put_int (c, "model", "ffn_hidden", ffn, at, "");
  else
    sim_import_note (c->imp, "[model] ffn_hidden: ffn_hidden_size not given (NeMo requires it)");
  map_vocab (c, o);
  /* Activation: names ending in glu are gated (megatron_base_model.py build_transformer_config); NeMo
   * 2.x gives gated_linear_unit instead. */
  static const char *const acts[] = { "gelu", "geglu", "swiglu", "reglu", "squared-relu", "fast-geglu",
                                      "fast-swiglu", "fast-reglu", NULL };
  const SimYamlNode *at_glu;
  const char *act = str_at (c, MODEL ("activation"), NULL, &at);
  gboolean glu = bool_at (c, MODEL ("gated_linear_unit"), FALSE, &at_glu);
  mark (c, MODEL ("activation_func")); /* 2.x: a callable; gated_linear_unit decides */
  if (act)
    {
      gboolean ok = FALSE;
      for (int i = 0; acts[i]; i++)
        ok |= strcmp (act, acts[i]) == 0;
      if (!ok)
        bad (c, at, "'%s': not one of gelu, geglu, swiglu, reglu, squared-relu, fast-geglu, fast-swiglu, fast-reglu", act);
      gboolean gated = g_str_has_suffix (act, "glu");
      put (c, "model", "activation", gated ? "swiglu" : "gelu", at, "");
      if (gated && !g_str_has_suffix (act, "swiglu"))
        unknown_at (c, at, "a gated GeLU/ReLU: written as swiglu, the same three matrices");
      if (strcmp (act, "squared-relu") == 0)
        unknown_at (c, at, "squared ReLU: written as gelu, the same two matrices");
    }
  else
    put (c, "model", "activation", glu ? "swiglu" : "gelu", at_glu, "activation gelu");
  const char *norm = str_at (c, MODEL ("normalization"), "layernorm", &at);
  if (g_ascii_strcasecmp (norm, "rmsnorm") == 0)
    put (c, "model", "norm", "rmsnorm", at, "");
  else if (g_ascii_strcasecmp (norm, "layernorm") == 0 || strcmp (norm, "layernorm1p") == 0
           || strcmp (norm, "low_precision_layernorm") == 0)
    put (c, "model", "norm", "layernorm", at, "normalization layernorm");
  else
    bad (c, at, "'%s': not layernorm, layernorm1p or rmsnorm", norm);
  const char *pos = str_at (c, MODEL ("position_embedding_type"), "learned_absolute", &at);
  if (strcmp (pos, "learned_absolute") == 0)
    {
      put (c, "model", "position", "learned", at, "position_embedding_type learned_absolute");
      /* max_position_embeddings defaults to encoder_seq_length (megatron_gpt_config.yaml). */
      const SimYamlNode *at_m;
      gint64 maxpos = int_at (c, MODEL ("max_position_embeddings"), 0, 1, &at_m);
      if (maxpos)
        put_int (c, "model", "max_positions", maxpos, at_m, "");
    }
  else if (strcmp (pos, "rope") == 0)
    {
      put (c, "model", "position", "rope", at, "");
      ignore_read (c, MODEL ("max_position_embeddings")); /* no table with rope: a limit only */
    }
  else
    unknown_at (c, at, "trainsim models learned or rope positions: set [model] position");
  const SimYamlNode *at_s;
  gboolean tied = bool_at (c, MODEL ("share_embeddings_and_output_weights"), TRUE, &at_s);
  put (c, "model", "tied_embeddings", tied ? "true" : "false", at_s, "share_embeddings_and_output_weights True");
  const SimYamlNode *at_b, *at_b2;
  gboolean bias = bool_at (c, AT ("model.bias"), TRUE, &at_b);
  gboolean bias2 = bool_at (c, MODEL ("add_bias_linear"), bias, &at_b2);
  put (c, "model", "bias", (at_b ? bias : bias2) ? "true" : "false", at_b ? at_b : at_b2, "bias True");
  /* MoE: the TransformerConfig names, passed through by build_transformer_config. */
  gint64 experts = int_at (c, MODEL ("num_moe_experts"), 0, 1, &at);
  if (!experts)
    return;
  put_int (c, "model", "moe_experts", experts, at, "");
  gint64 topk = int_at (c, MODEL ("moe_router_topk"), 2, 1, &at);
  put_int (c, "model", "moe_top_k", topk, at, "moe_router_topk 2");
  gint64 mffn = int_at (c, MODEL ("moe_ffn_hidden_size"), ffn, 1, &at);
  if (mffn)
    put_int (c, "model", "moe_ffn_hidden", mffn, at, "the dense ffn_hidden_size");
  gint64 shared = int_at (c, MODEL ("moe_shared_expert_intermediate_size"), 0, 1, &at);
  if (shared && mffn && shared % mffn == 0)
    put_int (c, "model", "moe_shared_experts", shared / mffn, at, "");
  else if (shared)
    unknown_at (c, at, "not a multiple of the expert width: trainsim's shared experts are moe_ffn_hidden wide");
  double cap = double_at (c, MODEL ("moe_expert_capacity_factor"), 0, &at);
  if (cap > 0)
    {
      g_autofree char *v = g_strdup_printf ("%g", cap);
      put (c, "model", "moe_capacity_factor", v, at, "");
    }
  const SimYamlNode *freq = lookup (c, MODEL ("moe_layer_freq"));
  gint64 n = 0;
  if (freq && sim_yaml_get_int (freq, &n) && n >= 1)
    put_int (c, "model", "moe_layer_freq", n, freq, "");
  else if (freq)
    unknown_at (c, freq, "a layer pattern: trainsim's moe_layer_freq is one integer");
  if (!bool_at (c, MODEL ("moe_grouped_gemm"), FALSE, &at))
    unknown_or (c, at, "model.moe_grouped_gemm (absent: False)", "experts run one GEMM each; trainsim models grouped GEMMs");
  const char *d = str_at (c, MODEL ("moe_token_dispatcher_type"), "allgather", &at);
  const SimYamlNode *at_ep;
  gboolean deepep = bool_at (c, MODEL ("moe_enable_deepep"), FALSE, &at_ep);
  if (strcmp (d, "flex") == 0 && deepep)
    put_many (c, "parallel", "moe_dispatcher", "deepep", ATS (at, at_ep), ""); /* DeepEP's one copy per node */
  else if (strcmp (d, "alltoall") != 0)
    unknown_or (c, at, "model.moe_token_dispatcher_type (absent: allgather)",
                "trainsim models the all-to-all dispatch and DeepEP's (flex with moe_enable_deepep)");
  if (deepep && strcmp (d, "flex") != 0)
    unknown_at (c, at_ep, "DeepEP runs under the flex dispatcher only: ignored with this one");
}

/* Recompute (build_transformer_config: activations_checkpoint_* become Megatron-Core's recompute_*). */
static void
map_recompute (Ctx *c, const Plan *p)
{
  const SimYamlNode *at_g, *at_m, *at_n;
  const char *g = str_at (c, AT ("model.activations_checkpoint_granularity"), NULL, &at_g);
  if (!g)
    g = str_at (c, MODEL ("recompute_granularity"), NULL, &at_g);
  const char *m = str_at (c, AT ("model.activations_checkpoint_method"), NULL, &at_m);
  if (!m)
    m = str_at (c, MODEL ("recompute_method"), NULL, &at_m);
  gint64 n = int_at (c, AT ("model.activations_checkpoint_num_layers"), 0, 1, &at_n);
  if (!at_n)
    n = int_at (c, MODEL ("recompute_num_layers"), 0, 1, &at_n);
  const SimYamlNode *at;
  if (int_at (c, AT ("model.num_micro_batches_with_partial_activation_checkpoints"), 0, 0, &at) && at)
    unknown_at (c, at, "recompute in only some micro-batches is not modelled");
  if (int_at (c, AT ("model.activations_checkpoint_layers_per_pipeline"), 0, 0, &at) && at)
    unknown_at (c, at, "fewer recomputed layers on later stages is not modelled");
  if (!g)
    {
      put (c, "parallel", "recompute", "none", NULL, "activations_checkpoint_granularity null");
      return;
    }
  if (strcmp (g, "selective") == 0)
    {
      put (c, "parallel", "recompute", "selective", at_g, "");
      return;
    }
  if (strcmp (g, "full") != 0)
    {
      bad (c, at_g, "'%s': not selective or full", g);
      return;
    }
  if (!m || (strcmp (m, "uniform") != 0 && strcmp (m, "block") != 0) || !n)
    {
      bad (c, at_g, "full: needs a method (uniform or block) and a number of layers (Megatron-Core's "
           "transformer_config.py)");
      return;
    }
  put (c, "parallel", "recompute", "full", at_g, "");
  gint64 chunk = p->layers > 0 && p->pp > 0 && p->vpp > 0 ? p->layers / (p->pp * p->vpp) : 0;
  if (strcmp (m, "uniform") == 0 && n > 1)
    unknown_at (c, at_n, "uniform groups of several layers keep fewer inputs than trainsim's per-layer full "
                "recompute (same compute)");
  else if (strcmp (m, "block") == 0 && (!chunk || n < chunk))
    unknown_at (c, at_m, "recomputes only some layers of each stage: written as full, an upper bound on the "
                "recompute time");
}

/* Precision: trainer.precision (16, bf16, 32, with -mixed; NeMo 2.x: trainer.plugins.precision);
 * megatron_amp_O2 keeps the weights in that dtype (else autocast over fp32 weights). FP8/FP4 run the
 * layer GEMMs in that format (fp8 true or a format name in 2.x, fp4 true). */
static void
map_precision (Ctx *c, Plan *p)
{
  const SimYamlNode *at_p, *at_o2;
  const char *prec = str_at (c, ((const char *const[]) { "trainer.precision", "trainer.plugins.precision", NULL }),
                             "32", &at_p);
  gboolean o2 = bool_at (c, AT ("model.megatron_amp_O2"), FALSE, &at_o2);
  const char *pdt;
  if (g_str_has_prefix (prec, "bf16"))
    pdt = "bf16";
  else if (strcmp (prec, "16") == 0 || strcmp (prec, "16-mixed") == 0)
    pdt = "fp16";
  else if (strcmp (prec, "32") == 0 || strcmp (prec, "32-true") == 0)
    pdt = "fp32";
  else
    {
      bad (c, at_p, "'%s': not 16, bf16, 32 (with -mixed)", prec);
      return;
    }
  if (strcmp (pdt, "fp32") != 0 && !o2 && !sim_yaml_lookup (c->root, "trainer.plugins.precision"))
    unknown_or (c, at_o2, "model.megatron_amp_O2 (absent: False)",
                        "autocast over fp32 weights: trainsim's param_dtype holds weights and activations alike; "
                        "written as the autocast dtype");
  put_many (c, "parallel", "param_dtype", pdt, ATS (at_p, at_o2), "PyTorch Lightning's precision 32");
  const SimYamlNode *at8, *at_h, *at_e, *at4, *at_r;
  const SimYamlNode *n8 = lookup (c, ((const char *const[]) { "model.fp8", "model.config.fp8", "trainer.plugins.fp8", NULL }));
  at8 = n8;
  gboolean fp8 = FALSE, b;
  if (n8 && sim_yaml_get_bool (n8, &b))
    fp8 = b;
  else if (n8 && (strcmp (n8->value, "hybrid") == 0 || strcmp (n8->value, "e4m3") == 0))
    fp8 = TRUE;
  else if (n8)
    bad (c, n8, "'%s': not true, false, hybrid or e4m3", n8->value);
  /* The FP8 format (hybrid or e4m3) does not change a GEMM's cost. */
  bool_at (c, AT ("model.fp8_hybrid"), FALSE, &at_h);
  bool_at (c, AT ("model.fp8_e4m3"), FALSE, &at_e);
  for (int i = 0; i < 2; i++)
    if (i == 0 ? at_h : at_e)
      {
        g_autofree char *s = src (c, i == 0 ? at_h : at_e);
        sim_import_ignored (c->imp, s);
      }
  gboolean fp4 = bool_at (c, MODEL ("fp4"), FALSE, &at4);
  if (fp4)
    {
      const SimYamlNode *at_4r;
      const char *fp4r = str_at (c, MODEL ("fp4_recipe"), "nvfp4", &at_4r);
      if (strcmp (fp4r, "nvfp4") != 0)
        bad (c, at_4r, "'%s': NeMo's FP4 recipe is nvfp4", fp4r);
      else if (at_4r)
        {
          g_autofree char *s4 = src (c, at_4r);
          sim_import_ignored (c->imp, s4); /* the one FP4 recipe */
        }
    }
  p->mdt = fp4 ? "fp4" : fp8 ? "fp8" : pdt;
  put (c, "parallel", "matmul_dtype", p->mdt, fp4 ? at4 : fp8 ? at8 : at_p, "GEMMs in the parameter dtype");
  if (fp8 && !fp4)
    {
      const char *recipe = str_at (c, ((const char *const[]) { "model.fp8_recipe", "model.config.fp8_recipe",
                                                               "trainer.plugins.fp8_recipe", NULL }), "delayed", &at_r);
      if (strcmp (recipe, "delayed") == 0 || strcmp (recipe, "tensorwise") == 0)
        put (c, "parallel", "fp8_scaling", strcmp (recipe, "delayed") == 0 ? "delayed" : "current", at_r,
             "fp8_recipe delayed");
      else
        unknown_at (c, at_r, "block-scaled FP8: trainsim models delayed or tensor-wise (current) scaling; "
                    "fp8_scaling left at its default");
      /* reduce_amax (TE DelayedScaling, default True); tp_only_amax_red reduces over TP only. */
      const SimYamlNode *at_a, *at_t;
      gboolean amax = bool_at (c, AT ("model.reduce_amax"), TRUE, &at_a);
      put (c, "parallel", "fp8_reduce_amax", amax ? "true" : "false", at_a, "reduce_amax True");
      if (bool_at (c, MODEL ("tp_only_amax_red"), FALSE, &at_t) && amax)
        put (c, "parallel", "fp8_amax_tp_only", "true", at_t, "tp_only_amax_red True");
    }
  /* Layer CUDA graphs: Megatron-Core's own (enable_cuda_graph) or TE's (external_cuda_graph). */
  const SimYamlNode *at_cg;
  if (bool_at (c, MODEL ("enable_cuda_graph"), FALSE, &at_cg) || bool_at (c, MODEL ("external_cuda_graph"), FALSE, &at_cg))
    put (c, "parallel", "cuda_graphs", "true", at_cg, "");
  const SimYamlNode *at_dpa;
  if ((fp8 || fp4) && bool_at (c, MODEL ("fp8_dot_product_attention"), FALSE, &at_dpa))
    put (c, "parallel", "fp8_attention", "true", at_dpa, "");
  const SimYamlNode *at_fp;
  gboolean fp8_params = bool_at (c, ((const char *const[]) { "model.fp8_params", "model.optim.fp8_param_gather",
                                                             "model.config.fp8_param", NULL }), FALSE, &at_fp);
  if (fp8_params)
    put (c, "parallel", "fp8_param_gather", "true", at_fp, "");
  /* Apex's distributed_fused_adam under NeMo 1.x (nemo/collections/nlp/models/language_modeling/
   * megatron_base_model.py setup_optimization, v1.23.0 to v2.0.0): the state is in optim.dtype (fp32
   * by default), the moments too (Apex distributed_fused_adam.py); with megatron_amp_O2 the weights
   * are in the precision's dtype, and NeMo stores no master copy when the two dtypes are equal, only
   * the 16-bit remainders for fp32 state over bf16 weights (store_param_remainders), and a full copy
   * with fp8_params. */
  const SimYamlNode *at_on, *at_od;
  const char *opt = str_at (c, AT ("model.optim.name"), "fused_adam", &at_on);
  const char *odt = str_at (c, AT ("model.optim.dtype"), "fp32", &at_od);
  const char *state = NULL;
  if (strcmp (odt, "fp32") == 0 || strcmp (odt, "float32") == 0 || strcmp (odt, "32") == 0)
    state = "fp32";
  else if (strcmp (odt, "bf16") == 0 || strcmp (odt, "bfloat16") == 0)
    state = "bf16";
  else if (strcmp (odt, "fp16") == 0 || strcmp (odt, "float16") == 0 || strcmp (odt, "16") == 0)
    state = "fp16";
  else
    unknown_at (c, at_od, "an optimizer state dtype trainsim does not know: left fp32");
  if (strcmp (opt, "distributed_fused_adam") == 0 && o2 && state && strcmp (pdt, "fp32") != 0 && !fp8_params)
    {
      if (strcmp (state, pdt) == 0)
        {
          put_many (c, "parallel", "master_weights", "none", ATS (at_on, at_od), "");
          put (c, "parallel", "moment_dtype", state, at_od, "");
        }
      else if (strcmp (state, "fp32") == 0 && strcmp (pdt, "bf16") == 0)
        put_many (c, "parallel", "master_weights", "remainder", ATS (at_on, at_od), "");
      else if (strcmp (state, "fp32") != 0)
        put (c, "parallel", "moment_dtype", state, at_od, "");
    }
  const SimYamlNode *at_fl, *at_1, *at_2;
  gboolean fl = bool_at (c, MODEL ("first_last_layers_bf16"), FALSE, &at_fl);
  gint64 first = int_at (c, MODEL ("num_layers_at_start_in_bf16"), 1, 0, &at_1);
  gint64 last = int_at (c, MODEL ("num_layers_at_end_in_bf16"), 1, 0, &at_2);
  if (fl)
    {
      put_int (c, "parallel", "bf16_layers_first", first, at_1, "num_layers_at_start_in_bf16 1");
      put_int (c, "parallel", "bf16_layers_last", last, at_2, "num_layers_at_end_in_bf16 1");
    }
}

/* Data parallelism and the optimizer: NeMo 1.x optim.name distributed_fused_adam (Apex, overlap_grad_sync
 * on by default) or mcore_distributed_optim (megatron_gpt_model.py setup_mcore_distributed_parallel:
 * overlap_grad_sync and overlap_param_sync off by default) shard the optimizer state; the MLPerf and
 * NeMo 2.x form is optim.use_distributed_optimizer with overlap_grad_reduce / overlap_param_gather.
 * model.fsdp shards more (fsdp_sharding_strategy full: everything, grad: gradients and state). */
static void
map_data_parallel (Ctx *c)
{
  const SimYamlNode *at_n, *at_d, *at_f, *at_s;
  const char *opt = str_at (c, AT ("model.optim.name"), "fused_adam", &at_n);
  gboolean dist = bool_at (c, ((const char *const[]) { "model.optim.use_distributed_optimizer",
                                                       "trainer.strategy.ddp.use_distributed_optimizer", NULL }),
                           FALSE, &at_d);
  gboolean apex = strcmp (opt, "distributed_fused_adam") == 0, mcore = strcmp (opt, "mcore_distributed_optim") == 0;
  gint64 zero = apex || mcore || dist ? 1 : 0;
  gboolean fsdp = bool_at (c, AT ("model.fsdp"), FALSE, &at_f);
  const char *strat = str_at (c, AT ("model.fsdp_sharding_strategy"), "full", &at_s);
  const SimYamlNode *zero_at = dist ? at_d : at_n;
  if (fsdp)
    {
      if (strcmp (strat, "full") == 0 || strcmp (strat, "grad") == 0)
        zero = strcmp (strat, "full") == 0 ? 3 : 2, zero_at = at_f;
      else
        unknown_at (c, at_s ? at_s : at_f, "hybrid sharding is not modelled");
    }
  g_autofree char *zv = g_strdup_printf ("%" G_GINT64_FORMAT, zero);
  put_many (c, "parallel", "zero", zv, ATS (at_n, zero_at != at_n ? zero_at : NULL), "optim fused_adam: no sharding");
  if (fsdp && zero >= 2)
    put (c, "parallel", "fsdp", "true", at_f, "");
  const SimYamlNode *at_g, *at_p;
  gboolean grads = bool_at (c, ((const char *const[]) { "model.optim.overlap_grad_sync", "model.optim.overlap_grad_reduce",
                                                         "trainer.strategy.ddp.overlap_grad_reduce", NULL }),
                            apex, &at_g);
  gboolean params = bool_at (c, ((const char *const[]) { "model.optim.overlap_param_sync",
                                                          "model.optim.overlap_param_gather",
                                                          "trainer.strategy.ddp.overlap_param_gather", NULL }),
                             FALSE, &at_p);
  put_many (c, "parallel", "dp_overlap", grads ? "true" : "false", ATS (at_g, at_p),
       apex ? "distributed_fused_adam overlaps the gradient sync" : "no gradient-sync overlap");
  if (grads && zero >= 1 && !params)
    unknown_or (c, at_p, "model.optim.overlap_param_sync (absent: False)",
                        "trainsim's dp_overlap also overlaps the distributed optimizer's parameter all-gather");
  const SimYamlNode *at_gd;
  const char *gsd = str_at (c, AT ("model.optim.grad_sync_dtype"), "fp32", &at_gd);
  if (at_gd && strcmp (gsd, "bf16") == 0)
    put (c, "parallel", "grad_dtype", "bf16", at_gd, "");
  else
    put (c, "parallel", "grad_dtype", "fp32", at_gd, "fp32 main gradients");
}

static void
map_parallel (Ctx *c, const SimImportOptions *o, Plan *p)
{
  const SimYamlNode *at, *at_n, *at_d;
  p->tp = int_at (c, PAR ("tensor_model_parallel_size"), 1, 1, &at);
  put_int (c, "parallel", "tp", p->tp, at, "1");
  p->pp = int_at (c, PAR ("pipeline_model_parallel_size"), 1, 1, &at);
  put_int (c, "parallel", "pp", p->pp, at, "1");
  p->vpp = int_at (c, PAR ("virtual_pipeline_model_parallel_size"), 1, 1, &at);
  put_int (c, "parallel", "vpp", p->vpp, at, "virtual_pipeline_model_parallel_size null");
  p->cp = int_at (c, PAR ("context_parallel_size"), 1, 1, &at);
  put_int (c, "parallel", "cp", p->cp, at, "1");
  gint64 ep = int_at (c, PAR ("expert_model_parallel_size"), 1, 1, &at);
  put_int (c, "parallel", "ep", ep, at, "1");
  gint64 etp = int_at (c, PAR ("expert_tensor_parallel_size"), 0, 1, &at);
  if (etp)
    put_int (c, "parallel", "etp", etp, at, "");
  /* GPUs: trainer.num_nodes x trainer.devices, unless trainsim's --gpus says otherwise. */
  gint64 nodes = int_at (c, AT ("trainer.num_nodes"), 0, 1, &at_n);
  gint64 devices = int_at (c, AT ("trainer.devices"), 0, 1, &at_d);
  if (o && o->gpus > 0)
    {
      g_autofree char *t = g_strdup_printf ("trainsim import --gpus %d", o->gpus);
      sim_import_set_int (c->imp, "cluster", "gpus", o->gpus, t);
      if (nodes && devices && nodes * devices != o->gpus)
        sim_import_note (c->imp, "[cluster] gpus: --gpus %d replaces trainer.num_nodes x trainer.devices = %" G_GINT64_FORMAT,
                         o->gpus, nodes * devices);
    }
  else if (nodes && devices)
    {
      g_autofree char *t = g_strdup_printf ("trainer.num_nodes: %" G_GINT64_FORMAT " (line %d) x trainer.devices: %"
                                            G_GINT64_FORMAT " (line %d)", nodes, at_n->line, devices, at_d->line);
      sim_import_set_int (c->imp, "cluster", "gpus", nodes * devices, t);
    }
  else
    sim_import_note (c->imp, "[cluster] gpus: trainer.num_nodes and trainer.devices not both given; pass trainsim "
                     "import --gpus N or add it");
  /* Sequence parallelism needs TP > 1 (megatron_base_model.py turns it off at TP 1). */
  gboolean sp = bool_at (c, PAR ("sequence_parallel"), FALSE, &at);
  put (c, "parallel", "sp", sp && p->tp > 1 ? "true" : "false", at, "sequence_parallel False");
  const SimYamlNode *at_ub, *at_ub2;
  gboolean ub = bool_at (c, PAR ("ub_tp_comm_overlap"), FALSE, &at_ub);
  gboolean ub2 = bool_at (c, PAR ("tp_comm_overlap"), FALSE, &at_ub2);
  put (c, "parallel", "tp_comm_overlap", ub || ub2 ? "true" : "false", at_ub ? at_ub : at_ub2, "ub_tp_comm_overlap False");
  const SimYamlNode *cfg = sim_yaml_lookup (c->root, "model.ub_tp_comm_overlap_cfg");
  if (cfg)
    {
      g_hash_table_add (c->used, (gpointer) cfg);
      if (!(cfg->kind == SIM_YAML_SCALAR && sim_yaml_is_null (cfg)))
        unknown_at (c, cfg, "userbuffers settings: give them as [tp_overlap] keys (scenarios/tp-overlap/)");
    }
  map_data_parallel (c);
  /* Batch: global_batch_size, else one micro-batch per data-parallel replica. */
  gint64 mbs = int_at (c, BATCH ("micro_batch_size"), 0, 1, &at);
  if (mbs)
    put_int (c, "parallel", "micro_batch", mbs, at, "");
  else
    sim_import_note (c->imp, "[parallel] micro_batch: micro_batch_size not given");
  p->gbs = int_at (c, BATCH ("global_batch_size"), 0, 1, &at);
  if (p->gbs)
    put_int (c, "parallel", "global_batch", p->gbs, at, "");
  else if (mbs)
    put_int (c, "parallel", "global_batch_per_dp", mbs, NULL, "micro_batch_size x data-parallel size");
  const SimYamlNode *ramp = lookup (c, AT ("model.rampup_batch_size"));
  if (ramp)
    unknown_at (c, ramp, "a batch-size ramp-up: trainsim simulates one batch size");
  /* Pipeline: NeMo leaves overlap_p2p_comm off and batch_p2p_comm on by default (megatron_gpt_config.yaml),
   * with batch_p2p_sync (build_model_parallel_config): sends block unless the interleaved schedule
   * overlaps them. */
  const SimYamlNode *at_ov, *at_e, *at_l;
  gboolean overlap = bool_at (c, PAR ("overlap_p2p_comm"), FALSE, &at_ov);
  ignore_read (c, PAR ("batch_p2p_comm")); /* overlap_p2p_comm decides; batched sends also block */
  if (p->pp > 1)
    put (c, "parallel", "pp_blocking", p->vpp > 1 && overlap ? "false" : "true", at_ov,
         p->vpp > 1 ? "overlap_p2p_comm False" : "no interleaved schedule: blocking sends");
  gboolean emb = bool_at (c, PAR ("account_for_embedding_in_pipeline_split"), FALSE, &at_e);
  gboolean loss = bool_at (c, PAR ("account_for_loss_in_pipeline_split"), FALSE, &at_l);
  if (emb && loss)
    put_many (c, "parallel", "pp_embed_loss_layers", "true", ATS (at_e, at_l), "");
  else if (emb || loss)
    unknown_at (c, emb ? at_e : at_l, "trainsim counts the embedding and the loss as pipeline layers together or not at all");
  /* The interleaved table's micro-batch group (ModelParallelConfig microbatch_group_size_per_vp_stage). */
  const SimYamlNode *at_g;
  gint64 group = int_at (c, PAR ("microbatch_group_size_per_vp_stage"), 0, 1, &at_g);
  if (at_g)
    put_int (c, "parallel", "microbatch_group_size", group, at_g, "");
  /* Uneven first and last stages (Megatron-Core TransformerConfig num_layers_in_first/last_pipeline_stage). */
  const SimYamlNode *at_1, *at_2;
  gint64 first = int_at (c, PAR ("num_layers_in_first_pipeline_stage"), 0, 1, &at_1);
  gint64 last = int_at (c, PAR ("num_layers_in_last_pipeline_stage"), 0, 1, &at_2);
  if (at_1)
    put_int (c, "parallel", "pp_first_stage_layers", first, at_1, "");
  if (at_2)
    put_int (c, "parallel", "pp_last_stage_layers", last, at_2, "");
  /* A pipeline layout (TransformerConfig pipeline_model_parallel_layout) given as Megatron-Core's
   * string; a layout given as a list of lists is left out, with its path named. */
  const SimYamlNode *at_layout;
  const char *layout = str_at (c, PAR ("pipeline_model_parallel_layout"), NULL, &at_layout);
  if (at_layout && layout && *layout && strcmp (layout, "null") != 0 && strcmp (layout, "None") != 0)
    put (c, "parallel", "pp_layout", layout, at_layout, "");
  else if (at_layout && at_layout->kind != SIM_YAML_SCALAR)
    sim_import_unknown (c->imp, "pipeline_model_parallel_layout",
                        "a layout as a list of lists; write it as Megatron-Core's string in [parallel] pp_layout");
  map_recompute (c, p);
  map_precision (c, p);
  /* Attention: Transformer Engine's fused kernel unless attention_backend is unfused. */
  const char *be = str_at (c, MODEL ("attention_backend"), "auto", &at);
  if (strcmp (be, "unfused") == 0)
    put (c, "parallel", "unfused_attention", "true", at, "");
  else if (strcmp (be, "local") == 0)
    unknown_at (c, at, "Megatron's own attention: trainsim models Transformer Engine's");
  /* Dropout: hidden and attention 0.1, FFN 0 by default (megatron_gpt_model.py). */
  const SimYamlNode *at_h, *at_a, *at_f;
  double hd = double_at (c, MODEL ("hidden_dropout"), 0.1, &at_h);
  double ad = double_at (c, MODEL ("attention_dropout"), 0.1, &at_a);
  double fd = double_at (c, AT ("model.ffn_dropout"), 0.0, &at_f);
  put_many (c, "parallel", "dropout", hd > 0 || ad > 0 || fd > 0 ? "true" : "false", ATS (at_h, at_a, at_f),
       "hidden_dropout 0.1, attention_dropout 0.1");
  gboolean fused = bool_at (c, MODEL ("gradient_accumulation_fusion"), FALSE, &at);
  put (c, "parallel", "grad_accum", fused ? "fused" : "add", at, "gradient_accumulation_fusion False");
  if (bool_at (c, MODEL ("cross_entropy_loss_fusion"), FALSE, &at))
    put (c, "parallel", "loss_fusion", "true", at, "");
  const SimYamlNode *at_o;
  gboolean tppp = bool_at (c, PAR ("use_tp_pp_dp_mapping"), FALSE, &at_o);
  put (c, "parallel", "order", tppp ? "tp,cp,ep,pp,dp" : "tp,cp,ep,dp,pp", at_o, "tp-cp-ep-dp-pp");
}

/* [training]: sequence length, steps and evaluation (trainer.val_check_interval and
 * limit_val_batches count global batches when they are integers). */
static void
map_training (Ctx *c, const Plan *p)
{
  const SimYamlNode *at;
  gint64 seq = int_at (c, ((const char *const[]) { "model.encoder_seq_length", "model.seq_length",
                                                   "model.config.seq_length", "data.seq_length", NULL }), 0, 1, &at);
  if (seq)
    put_int (c, "training", "seq_len", seq, at, "");
  else
    sim_import_note (c->imp, "[training] seq_len: encoder_seq_length not given");
  gint64 steps = int_at (c, AT ("trainer.max_steps"), -1, -1, &at);
  if (steps > 0)
    put_int (c, "training", "steps", steps, at, "");
  const SimYamlNode *vci = lookup (c, AT ("trainer.val_check_interval"));
  const SimYamlNode *lvb = lookup (c, AT ("trainer.limit_val_batches"));
  gint64 every = 0, batches = 0;
  if (vci && (!sim_yaml_get_int (vci, &every) || every < 1))
    unknown_at (c, vci, "a fraction of an epoch: trainsim evaluates every so many sequences");
  if (lvb && (!sim_yaml_get_int (lvb, &batches) || batches < 0))
    unknown_at (c, lvb, "a fraction of the validation set, whose size is not in the config");
  if (every && !p->gbs)
    unknown_at (c, vci, "counts global batches, whose size is not known without global_batch_size");
  else if (every)
    {
      g_autofree char *sv = src (c, vci);
      g_autofree char *t = g_strdup_printf ("%s x global_batch_size %" G_GINT64_FORMAT, sv, p->gbs);
      sim_import_set_int (c->imp, "training", "eval_interval_seqs", every * p->gbs, t);
      if (batches > 0)
        {
          g_autofree char *sl = src (c, lvb);
          g_autofree char *t2 = g_strdup_printf ("%s x global_batch_size %" G_GINT64_FORMAT, sl, p->gbs);
          sim_import_set_int (c->imp, "training", "eval_seqs", batches * p->gbs, t2);
        }
    }
}

/* Keys read and understood with no bearing on a step (ignored), or whose non-default values trainsim
 * cannot express (unknown when true / set). */
typedef enum { IGN, IF_TRUE, IF_SET } Rule;
static const struct {
  const char *path;
  Rule rule;
  const char *why;
} known[] = {
  { "model.mcore_gpt", IF_TRUE, NULL }, /* handled below: false is the legacy model */
  { "model.transformer_engine", IF_TRUE, NULL },
  { "model.transformer_block_type", IF_SET, NULL },
  { "model.cpu_offloading", IF_TRUE, "activation/weight offload to the CPU is not modelled" },
  { "model.sharp", IF_TRUE, "SHARP is the fabric's: set [fabric] sharp = true where its switches reduce" },
  { "model.defer_embedding_wgrad_compute", IF_TRUE, "deferred embedding weight-gradient GEMMs are not modelled" },
  { "model.deterministic_mode", IF_TRUE, "deterministic kernels are not modelled" },
  { "model.fp32_residual_connection", IF_TRUE, "an fp32 residual stream is not modelled" },
  { "model.tp_comm_overlap_ag", IF_TRUE, "Megatron-Core's own TP all-gather overlap is not modelled" },
  { "model.tp_comm_overlap_rs", IF_TRUE, "Megatron-Core's own TP reduce-scatter overlap is not modelled" },
  { "model.optim.overlap_param_gather_with_optimizer_step", IF_TRUE,
    "the parameter all-gather overlapped with the optimizer step is not modelled" },
  { "model.moe_shared_expert_overlap", IF_TRUE, "shared experts overlapped with the dispatch are not modelled" },
  { "model.moe_permute_fusion", IF_TRUE, "the fused token permutation is not modelled" },
  { "model.optim.bucket_size", IF_SET, "a DP bucket size in parameters: trainsim's buckets follow Megatron's default" },
  { "model.optim.ddp_bucket_size", IF_SET, "a DP bucket size in parameters: trainsim's buckets follow Megatron's default" },
  { "model.optim.bucket_cap_mb", IF_SET, "a DP bucket size: trainsim's buckets follow Megatron's default" },
  { "model.drop_layers", IF_SET, "dropped layers are not modelled" },
  { "model.overwritten_attributes", IF_SET, "overrides applied by a launcher script: write the final values" },
  { "model.tokenizer", IGN, NULL }, { "model.data", IGN, NULL }, { "model.nsys_profile", IGN, NULL },
  { "model.megatron_timer_kwargs", IGN, NULL }, { "model.optim.sched", IGN, NULL }, { "model.custom", IGN, NULL },
  { "exp_manager", IGN, NULL }, { "s3_checkpointing", IGN, NULL }, { "hydra", IGN, NULL }, { "misc", IGN, NULL },
  { "defaults", IGN, NULL }, { "name", IGN, NULL }, { "restore_from_path", IGN, NULL },
  { "trainer.accelerator", IGN, NULL }, { "trainer.logger", IGN, NULL }, { "trainer.enable_checkpointing", IGN, NULL },
  { "trainer.use_distributed_sampler", IGN, NULL }, { "trainer.replace_sampler_ddp", IGN, NULL },
  { "trainer.max_epochs", IGN, NULL }, { "trainer.log_every_n_steps", IGN, NULL },
  { "trainer.limit_test_batches", IGN, NULL }, { "trainer.limit_train_batches", IGN, NULL },
  { "trainer.accumulate_grad_batches", IGN, NULL }, { "trainer.gradient_clip_val", IGN, NULL },
  { "trainer.benchmark", IGN, NULL }, { "trainer.enable_model_summary", IGN, NULL },
  { "trainer.enable_progress_bar", IGN, NULL }, { "trainer.num_sanity_val_steps", IGN, NULL },
  { "model.restore_from_path", IGN, NULL }, { "model.restore_from_ckpt", IGN, NULL }, { "model.skip_train", IGN, NULL },
  { "model.resume_from_checkpoint", IGN, NULL }, { "model.init_method_std", IGN, NULL },
  { "model.use_scaled_init_method", IGN, NULL }, { "model.apply_query_key_layer_scaling", IGN, NULL },
  { "model.layernorm_epsilon", IGN, NULL }, { "model.do_layer_norm_weight_decay", IGN, NULL },
  { "model.pre_process", IGN, NULL }, { "model.post_process", IGN, NULL }, { "model.persist_layer_norm", IGN, NULL },
  { "model.headscale", IGN, NULL }, { "model.openai_gelu", IGN, NULL }, { "model.normalize_attention_scores", IGN, NULL },
  { "model.rotary_percentage", IGN, NULL }, { "model.rotary_base", IGN, NULL }, { "model.rotary_interleaved", IGN, NULL },
  { "model.attention_type", IGN, NULL }, { "model.seq_len_interpolation_factor", IGN, NULL },
  { "model.scale_positional_embedding", IGN, NULL }, { "model.reset_lr", IGN, NULL }, { "model.reset_lr_steps", IGN, NULL },
  { "model.native_amp_init_scale", IGN, NULL }, { "model.native_amp_growth_interval", IGN, NULL },
  { "model.hysteresis", IGN, NULL }, { "model.fp16_lm_cross_entropy", IGN, NULL },
  { "model.grad_allreduce_chunk_size_mb", IGN, NULL }, { "model.grad_div_ar_fusion", IGN, NULL },
  { "model.bias_activation_fusion", IGN, NULL }, { "model.bias_dropout_add_fusion", IGN, NULL },
  { "model.masked_softmax_fusion", IGN, NULL }, { "model.get_attention_mask_from_fusion", IGN, NULL },
  { "model.apply_rope_fusion", IGN, NULL }, { "model.seed", IGN, NULL }, { "model.use_cpu_initialization", IGN, NULL },
  { "model.onnx_safe", IGN, NULL }, { "model.apex_transformer_log_level", IGN, NULL },
  { "model.gradient_as_bucket_view", IGN, NULL }, { "model.sync_batch_comm", IGN, NULL },
  { "model.nccl_communicator_config_path", IGN, NULL }, { "model.validation_param_sync_overlap", IGN, NULL },
  { "model.fsdp_grad_reduce_dtype", IGN, NULL }, { "model.fsdp_sharded_checkpoint", IGN, NULL },
  { "model.fp8_margin", IGN, NULL }, { "model.fp8_interval", IGN, NULL }, { "model.fp8_amax_history_len", IGN, NULL },
  { "model.fp8_amax_compute_algo", IGN, NULL }, { "model.use_emha", IGN, NULL },
  { "model.use_flash_attention", IGN, NULL }, { "model.enable_megatron_timers", IGN, NULL },
  { "model.gc_interval", IGN, NULL }, { "model.gc_interval_train", IGN, NULL }, { "model.gc_interval_valid", IGN, NULL },
  { "model.name", IGN, NULL }, { "model.base_config", IGN, NULL }, { "model.use_te_rng_tracker", IGN, NULL },
  { "model.use_transformer_engine_op_fuser", IGN, NULL }, { "model.cross_entropy_fusion_impl", IGN, NULL },
  { "model.fused_single_qkv_rope", IGN, NULL }, { "model.cuda_graph_scope", IGN, NULL }, { "model.qkv_bias", IGN, NULL },
  { "model.cpu_offloading_num_layers", IGN, NULL }, { "model.cpu_offloading_activations", IGN, NULL },
  { "model.cpu_offloading_weights", IGN, NULL }, { "model.ub_tp_comm_bootstrap_backend", IGN, NULL },
  { "model.wgrad_deferral_limit", IGN, NULL }, { "model.dist_ckpt_format", IGN, NULL },
  { "model.dist_ckpt_load_on_device", IGN, NULL }, { "model.dist_ckpt_parallel_save", IGN, NULL },
  { "model.dist_ckpt_parallel_save_within_dp", IGN, NULL }, { "model.dist_ckpt_parallel_load", IGN, NULL },
  { "model.dist_ckpt_torch_dist_multiproc", IGN, NULL }, { "model.dist_ckpt_assume_constant_structure", IGN, NULL },
  { "model.dist_ckpt_parallel_dist_opt", IGN, NULL }, { "model.dist_ckpt_load_strictness", IGN, NULL },
  { "model.dist_ckpt_validate_access_integrity", IGN, NULL }, { "model.dist_ckpt_strict", IGN, NULL },
  { "model.dist_ckpt_no_dist", IGN, NULL }, { "model.moe_router_load_balancing_type", IGN, NULL },
  { "model.moe_aux_loss_coeff", IGN, NULL }, { "model.moe_z_loss_coeff", IGN, NULL },
  { "model.moe_input_jitter_eps", IGN, NULL }, { "model.moe_token_dropping", IGN, NULL },
  { "model.optim.lr", IGN, NULL }, { "model.optim.weight_decay", IGN, NULL }, { "model.optim.betas", IGN, NULL },
  { "model.optim.eps", IGN, NULL }, { "model.optim.lock_timeout", IGN, NULL }, { "model.optim.align_param_gather", IGN, NULL },
  { "model.optim.check_for_nan_in_grad", IGN, NULL }, { "model.optim.average_in_collective", IGN, NULL },
  { "model.fp4_recipe", IGN, NULL },
  /* Read only with FP8 (map_precision): without it they change nothing. */
  { "model.reduce_amax", IGN, NULL }, { "model.tp_only_amax_red", IGN, NULL }, { "model.fp8_recipe", IGN, NULL },
};

/* The rule for PATH: its own entry or that of a subtree above it; NULL if none. */
static const char *
rule_for (const char *path, Rule *rule, const char **why, gboolean *subtree)
{
  for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
    {
      gsize len = strlen (known[i].path);
      if (strncmp (path, known[i].path, len) == 0 && (path[len] == '\0' || path[len] == '.'))
        {
          *rule = known[i].rule;
          *why = known[i].why;
          *subtree = path[len] == '.';
          return known[i].path;
        }
    }
  return NULL;
}

static void
count_unread (Ctx *c, const SimYamlNode *n, int *count)
{
  if (n->kind == SIM_YAML_MAP && n->children->len)
    for (guint i = 0; i < n->children->len; i++)
      count_unread (c, g_ptr_array_index (n->children, i), count);
  else if (!g_hash_table_contains (c->used, n))
    (*count)++;
}

/* Lists every key the mapping did not read (import.h: ignored, unknown). */
static void
list_unread (Ctx *c, const SimYamlNode *map)
{
  for (guint i = 0; i < map->children->len; i++)
    {
      const SimYamlNode *n = g_ptr_array_index (map->children, i);
      g_autofree char *path = sim_yaml_path (n);
      Rule rule = IGN;
      const char *why = NULL;
      gboolean subtree = FALSE;
      const char *entry = rule_for (path, &rule, &why, &subtree);
      if (entry && rule == IGN && n->kind == SIM_YAML_MAP && n->children->len)
        {
          int count = 0;
          count_unread (c, n, &count);
          if (count)
            {
              g_autofree char *t = g_strdup_printf ("%s.* (%d key%s)", path, count, count == 1 ? "" : "s");
              sim_import_ignored (c->imp, t);
            }
          continue;
        }
      if (n->kind == SIM_YAML_MAP && n->children->len && !(entry && rule == IF_SET))
        {
          list_unread (c, n);
          continue;
        }
      if (g_hash_table_contains (c->used, n))
        continue;
      g_autofree char *s = src (c, n);
      gboolean on = FALSE;
      gboolean set = !(n->kind == SIM_YAML_SCALAR && sim_yaml_is_null (n))
                     && !(n->kind != SIM_YAML_SCALAR && n->children->len == 0);
      if (entry && rule == IF_TRUE && sim_yaml_get_bool (n, &on))
        {
          if (strcmp (entry, "model.mcore_gpt") == 0 || strcmp (entry, "model.transformer_engine") == 0)
            on = !on; /* false is what trainsim cannot model */
          if (on)
            sim_import_unknown (c->imp, s, why ? why : strcmp (entry, "model.mcore_gpt") == 0
                                ? "NeMo's legacy (non-Core) model: trainsim models Megatron-Core layers"
                                : "layers without Transformer Engine: trainsim models its kernels");
          else
            sim_import_ignored (c->imp, s);
        }
      else if (entry && rule == IF_SET && strcmp (entry, "model.transformer_block_type") == 0)
        {
          if (n->kind == SIM_YAML_SCALAR && strcmp (n->value, "pre_ln") != 0)
            sim_import_unknown (c->imp, s, "trainsim models pre-LN blocks");
          else
            sim_import_ignored (c->imp, s);
        }
      else if (entry && rule == IF_SET)
        {
          if (set)
            sim_import_unknown (c->imp, s, why);
          else
            sim_import_ignored (c->imp, s);
        }
      else if (entry && rule == IGN)
        sim_import_ignored (c->imp, s);
      else if (sim_yaml_unresolved (n))
        sim_import_unknown (c->imp, s, "unresolved, and not a key trainsim's NeMo reader knows");
      else
        sim_import_unknown (c->imp, s, "not a key trainsim's NeMo reader knows");
    }
}

static gint
by_line (gconstpointer a, gconstpointer b)
{
  const SimYamlNode *x = a, *y = b;
  return x->line - y->line;
}

/* Keys read without a key or line of their own (a default restated, a null, a key another one
 * overrides): one note, so that none goes unmentioned. */
static void
note_quiet (Ctx *c)
{
  GList *nodes = g_list_sort (g_hash_table_get_keys (c->used), by_line);
  g_autoptr (GString) quiet = g_string_new (NULL);
  for (GList *l = nodes; l; l = l->next)
    {
      const SimYamlNode *n = l->data;
      g_autofree char *path = sim_yaml_path (n);
      g_autofree char *s = src (c, n);
      g_autofree char *mention = g_strdup_printf ("%s: ", path);
      if (!sim_import_mentions (c->imp, mention))
        g_string_append_printf (quiet, "%s%s", quiet->len ? ", " : "", s);
    }
  g_list_free (nodes);
  if (quiet->len)
    sim_import_note (c->imp, "read, with no effect beyond the keys above: %s", quiet->str);
}

gboolean
sim_import_nemo (SimImport *imp, const SimYamlNode *root, const char *name, const SimImportOptions *opts,
                 GError **error)
{
  g_return_val_if_fail (imp != NULL && root != NULL, FALSE);
  Ctx cx = { root, name ? name : "(yaml)", imp, g_hash_table_new (NULL, NULL), error, FALSE }, *c = &cx;
  Plan plan = { 0 };
  if (!sim_yaml_lookup (root, "model"))
    sim_import_note (imp, "no model: section; is this a NeMo Megatron GPT config?");
  map_model (c, opts, &plan);
  if (!c->failed)
    map_parallel (c, opts, &plan);
  if (!c->failed)
    map_training (c, &plan);
  /* The legacy and non-TE switches count when absent too (their defaults are false). */
  if (!c->failed && !sim_yaml_lookup (root, "model.mcore_gpt") && !sim_yaml_lookup (root, "model.config"))
    sim_import_unknown (imp, "model.mcore_gpt (absent: False)",
                        "NeMo's legacy (non-Core) model: trainsim models Megatron-Core layers");
  if (!c->failed && !sim_yaml_lookup (root, "model.transformer_engine") && !sim_yaml_lookup (root, "model.config"))
    sim_import_unknown (imp, "model.transformer_engine (absent: False)",
                        "layers without Transformer Engine: trainsim models its kernels");
  if (!c->failed)
    note_quiet (c);
  if (!c->failed)
    list_unread (c, root);
  g_hash_table_unref (c->used);
  return !c->failed;
}
