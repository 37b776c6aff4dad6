/* A Megatron-LM argument list as trainsim keys (import-megatron.h).
 *
 * First the words are cut into arguments (import-megatron-flags.c says which take a value), then
 * the mapping below reads the ones it knows, each marked as used; what is left is listed as
 * ignored or unknown. Unless said otherwise, a meaning or default cited as arguments.py is
 * megatron/training/arguments.py at Megatron-LM core_v0.15.0 (the argument's add_argument, or
 * validate_args where the default is derived). */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/scenario/import-megatron.h"
#include "sim/scenario/import-megatron-flags.h"

typedef struct {
  char *name;                 /* "--num-layers" */
  const SimMegatronFlag *flag;/* NULL: not a Megatron-LM argument */
  GPtrArray *values;          /* char * */
  gboolean inline_value;      /* written --name=value */
  gboolean used;
} Arg;

typedef struct {
  GArray *args;               /* Arg, in the order given */
  SimImport *imp;
  GError **error;
  gboolean failed;
} Ctx;

static void
arg_clear (gpointer p)
{
  Arg *a = p;
  g_free (a->name);
  g_ptr_array_unref (a->values);
}

/* "--name v1 v2" as written, for messages and key comments. */
static char *
arg_text (const Arg *a)
{
  GString *s = g_string_new (a->name);
  for (guint i = 0; i < a->values->len; i++)
    g_string_append_printf (s, "%s%s", a->inline_value ? "=" : " ", (const char *) g_ptr_array_index (a->values, i));
  return g_string_free (s, FALSE);
}

static gboolean
bad (Ctx *c, SimImportError code, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
bad (Ctx *c, SimImportError code, const char *fmt, ...)
{
  if (c->failed)
    return FALSE;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (c->error, SIM_IMPORT_ERROR, code, msg);
  c->failed = TRUE;
  return FALSE;
}

/* Cuts WORDS into arguments. A word starting with "--" opens an argument; the words after it up to
 * the next "--" word are its values (argparse also reads "-1" as a value). */
static gboolean
split_args (Ctx *c, const char *const *words)
{
  for (int i = 0; words[i]; i++)
    {
      const char *w = words[i];
      if (!g_str_has_prefix (w, "--") || w[2] == '\0')
        return bad (c, SIM_IMPORT_ERROR_SYNTAX, "'%s': not an option; pretrain_gpt.py takes only --options "
                    "(put trainsim's own options before `--`)", w);
      Arg a = { NULL, NULL, g_ptr_array_new_with_free_func (g_free), FALSE, FALSE };
      const char *eq = strchr (w, '=');
      a.name = eq ? g_strndup (w, (gsize) (eq - w)) : g_strdup (w);
      if (eq)
        {
          a.inline_value = TRUE;
          g_ptr_array_add (a.values, g_strdup (eq + 1));
        }
      while (words[i + 1] && !g_str_has_prefix (words[i + 1], "--"))
        g_ptr_array_add (a.values, g_strdup (words[++i]));
      a.flag = sim_megatron_flag (a.name);
      g_array_append_val (c->args, a);
      if (!a.flag)
        continue;
      /* argparse's own refusals: a flag with a value, an option without one or with several. */
      if (a.flag->arity == SIM_MEGATRON_FLAG && a.values->len > 0)
        return bad (c, SIM_IMPORT_ERROR_SYNTAX, "%s takes no value (given '%s')", a.name,
                    (const char *) g_ptr_array_index (a.values, 0));
      if (a.flag->arity == SIM_MEGATRON_VALUE && a.values->len != 1)
        return bad (c, SIM_IMPORT_ERROR_SYNTAX, "%s takes one value (given %u)", a.name, a.values->len);
      /* argparse's type=int / type=float, for every argument, mapped or not. */
      for (guint v = 0; v < a.values->len; v++)
        {
          const char *val = g_ptr_array_index (a.values, v);
          char *end = NULL;
          if (a.flag->type == SIM_MEGATRON_INT && !g_ascii_string_to_signed (val, 10, G_MININT64, G_MAXINT64, NULL, NULL))
            return bad (c, SIM_IMPORT_ERROR_VALUE, "%s '%s': not an integer", a.name, val);
          if (a.flag->type == SIM_MEGATRON_FLOAT && (g_ascii_strtod (val, &end), end == val || *end != '\0'))
            return bad (c, SIM_IMPORT_ERROR_VALUE, "%s '%s': not a number", a.name, val);
        }
    }
  return TRUE;
}

/* The last occurrence of NAME (argparse keeps the last), every occurrence marked used; NULL if absent. */
static Arg *
take (Ctx *c, const char *name)
{
  g_return_val_if_fail (sim_megatron_flag (name) != NULL, NULL);
  Arg *last = NULL;
  for (guint i = 0; i < c->args->len; i++)
    {
      Arg *a = &g_array_index (c->args, Arg, i);
      if (strcmp (a->name, name) == 0)
        {
          a->used = TRUE;
          last = a;
        }
    }
  return last;
}

static gboolean
has (Ctx *c, const char *name)
{
  return take (c, name) != NULL;
}

static const char *
value_of (const Arg *a)
{
  return a && a->values->len ? g_ptr_array_index (a->values, 0) : NULL;
}

/* An integer argument (Python int()), at least MIN; DEF when absent. */
static gint64
get_int (Ctx *c, const char *name, gint64 def, gint64 min)
{
  Arg *a = take (c, name);
  if (!a)
    return def;
  const char *v = value_of (a);
  gint64 out = 0;
  if (!g_ascii_string_to_signed (v, 10, G_MININT64, G_MAXINT64, &out, NULL))
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "%s '%s': not an integer", name, v);
      return def;
    }
  if (out < min)
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "%s %s: must be at least %" G_GINT64_FORMAT, name, v, min);
      return def;
    }
  return out;
}

/* A float argument (Python float()), finite; DEF when absent. */
static double
get_double (Ctx *c, const char *name, double def)
{
  Arg *a = take (c, name);
  if (!a)
    return def;
  const char *v = value_of (a);
  char *end = NULL;
  double d = g_ascii_strtod (v, &end);
  if (end == v || *end != '\0' || !isfinite (d))
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "%s '%s': not a number", name, v);
      return def;
    }
  return d;
}

/* A string argument with argparse choices (NULL-terminated); DEF when absent. */
static const char *
get_choice (Ctx *c, const char *name, const char *def, const char *const *choices)
{
  Arg *a = take (c, name);
  if (!a)
    return def;
  const char *v = value_of (a);
  for (int i = 0; choices[i]; i++)
    if (strcmp (v, choices[i]) == 0)
      return choices[i];
  g_autofree char *list = g_strjoinv (", ", (char **) choices);
  bad (c, SIM_IMPORT_ERROR_VALUE, "%s '%s': not one of its choices (%s)", name, v, list);
  return def;
}

/* The FROM comment of a key: the arguments that gave it, as written. */
static char *
from (Ctx *c, const char *const *names)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; names[i]; i++)
    for (guint j = 0; j < c->args->len; j++)
      {
        const Arg *a = &g_array_index (c->args, Arg, j);
        if (strcmp (a->name, names[i]) == 0)
          {
            g_autofree char *t = arg_text (a);
            g_string_append_printf (s, "%s%s", s->len ? " " : "", t);
          }
      }
  return g_string_free (s, FALSE);
}

#define FROM(...) from (c, (const char *const[]) { __VA_ARGS__, NULL })

/* Sets a key with a comment: the arguments that gave it, or DEFAULT_WHY when none was given. */
static void
put (Ctx *c, const char *group, const char *key, const char *value, const char *given, const char *default_why)
{
  g_autofree char *text = given && *given ? g_strdup (given) : g_strdup_printf ("Megatron-LM default: %s", default_why);
  sim_import_set (c->imp, group, key, value, text);
}

static void
put_int (Ctx *c, const char *group, const char *key, gint64 v, const char *given, const char *default_why)
{
  g_autofree char *s = g_strdup_printf ("%" G_GINT64_FORMAT, v);
  put (c, group, key, s, given, default_why);
}

static void
unknown_arg (Ctx *c, const char *name, const char *why)
{
  Arg *a = take (c, name);
  g_autofree char *t = a ? arg_text (a) : g_strdup (name);
  sim_import_unknown (c->imp, t, why);
}

/* Lists NAME as ignored when given: read, but without effect with the other arguments. */
static void
ignored_arg (Ctx *c, const char *name)
{
  Arg *a = take (c, name);
  g_autofree char *t = a ? arg_text (a) : NULL;
  if (t)
    sim_import_ignored (c->imp, t);
}

typedef struct {
  gint64 layers, hidden, heads, tp, pp, vpp, cp;
  gboolean model;             /* the arguments describe a model (else [model] comes from elsewhere) */
  const char *mdt;            /* matmul dtype */
} Plan;

/* Tokenizer vocabulary (megatron/training/tokenizer/tokenizer.py, build_tokenizer): the
 * NullTokenizer appends an EOD token to --vocab-size; TikTokenizer takes --vocab-size; GPT-2 BPE's
 * vocabulary file has 50,257 entries; the other tokenizers read theirs from a file. A
 * --padded-vocab-size is the padded size itself. */
static void
map_vocab (Ctx *c, const SimImportOptions *o)
{
  static const char *const types[] = { "BertWordPieceLowerCase", "BertWordPieceCase", "GPT2BPETokenizer",
    "SentencePieceTokenizer", "GPTSentencePieceTokenizer", "HuggingFaceTokenizer", "Llama2Tokenizer",
    "TikTokenizer", "MultimodalTokenizer", "NullTokenizer", "NullMultimodalTokenizer", "SFTTokenizer", NULL };
  const char *type = get_choice (c, "--tokenizer-type", NULL, types);
  gint64 vs = get_int (c, "--vocab-size", 0, 1);
  gint64 padded = get_int (c, "--padded-vocab-size", 0, 1);
  gint64 multiple = get_int (c, "--make-vocab-size-divisible-by", 128, 1);
  g_autofree char *fm = FROM ("--make-vocab-size-divisible-by");
  if (o && o->vocab > 0)
    {
      g_autofree char *f = FROM ("--tokenizer-type", "--vocab-size", "--padded-vocab-size");
      g_autofree char *t = g_strdup_printf ("trainsim import --vocab %d%s%s%s", o->vocab, *f ? " (over " : "", f, *f ? ")" : "");
      sim_import_set_int (c->imp, "model", "vocab", o->vocab, t);
    }
  else if (padded > 0)
    {
      g_autofree char *f = FROM ("--padded-vocab-size");
      sim_import_set_int (c->imp, "model", "vocab", padded, f);
      sim_import_set_int (c->imp, "model", "vocab_multiple", 1, "--padded-vocab-size is already padded");
      return;
    }
  else if (type && strcmp (type, "NullTokenizer") == 0 && vs > 0)
    {
      g_autofree char *f = FROM ("--tokenizer-type", "--vocab-size");
      g_autofree char *t = g_strdup_printf ("%s (the NullTokenizer adds an EOD token)", f);
      sim_import_set_int (c->imp, "model", "vocab", vs + 1, t);
    }
  else if (type && strcmp (type, "TikTokenizer") == 0)
    {
      g_autofree char *f = FROM ("--tokenizer-type", "--vocab-size");
      sim_import_set_int (c->imp, "model", "vocab", vs > 0 ? vs : 131072,
                          vs > 0 ? f : "--tokenizer-type TikTokenizer without --vocab-size: 131072 (tokenizer.py)");
    }
  else if (type && strcmp (type, "GPT2BPETokenizer") == 0)
    {
      g_autofree char *f = FROM ("--tokenizer-type");
      g_autofree char *t = g_strdup_printf ("%s: the GPT-2 BPE vocabulary file has 50257 entries", f);
      sim_import_set_int (c->imp, "model", "vocab", 50257, t);
    }
  else if (vs > 0)
    {
      g_autofree char *f = FROM ("--vocab-size");
      sim_import_set_int (c->imp, "model", "vocab", vs, f);
      if (type)
        sim_import_note (c->imp, "[model] vocab: --vocab-size taken as the vocabulary; the %s reads its own from "
                         "its file (pass trainsim import --vocab N when they differ)", type);
    }
  else
    {
      g_autofree char *f = FROM ("--tokenizer-type");
      sim_import_note (c->imp, "[model] vocab: the tokenizer%s%s%s reads it from its files; pass trainsim import "
                       "--vocab N or add [model] vocab", *f ? " (" : "", f, *f ? ")" : "");
    }
  put_int (c, "model", "vocab_multiple", multiple, fm, "--make-vocab-size-divisible-by 128");
}

/* Attention variants (arguments.py _add_mla_args, _add_network_size_args). Multi-latent attention:
 * --q-lora-rank (default None: no query latent), --kv-lora-rank (32), --qk-head-dim (128, the part
 * without rotary), --qk-pos-emb-head-dim (64), --v-head-dim (128); they count only with
 * --multi-latent-attention. --mtp-num-layers N: N multi-token-prediction modules. --window-size
 * (left, right): Transformer Engine's sliding window, a query at i attending keys i - left .. i +
 * right, so left + 1 keys when right is 0; --window-attn-skip-freq N leaves layer n (from 1) windowed
 * when n % N != 0 (megatron/core/transformer/utils.py is_layer_window_attention), which is
 * trainsim's every-other-layer pattern for N = 2. */
static void
map_attention_variants (Ctx *c)
{
  static const char *const mla_args[] = { "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim",
                                          "--v-head-dim", NULL };
  if (has (c, "--multi-latent-attention"))
    {
      static const char *const keys[] = { "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                          "v_head_dim" };
      static const gint64 defs[] = { 0, 32, 128, 64, 128 };
      static const char *const why[] = { "no query latent (--q-lora-rank None)", "--kv-lora-rank 32", "--qk-head-dim 128",
                                         "--qk-pos-emb-head-dim 64", "--v-head-dim 128" };
      for (int i = 0; mla_args[i]; i++)
        {
          gint64 v = get_int (c, mla_args[i], defs[i], i == 0 ? 0 : 1);
          /* kv_lora_rank > 0 is what makes trainsim's attention multi-latent */
          g_autofree char *f = i == 1 ? FROM ("--multi-latent-attention", mla_args[i]) : FROM (mla_args[i]);
          put_int (c, "model", keys[i], v, f, why[i]);
        }
    }
  else
    for (int i = 0; mla_args[i]; i++)
      ignored_arg (c, mla_args[i]);
  gint64 mtp = get_int (c, "--mtp-num-layers", 0, 0);
  if (mtp > 0)
    {
      g_autofree char *f = FROM ("--mtp-num-layers");
      put_int (c, "model", "mtp_depth", mtp, f, "");
    }
  Arg *w = take (c, "--window-size");
  if (!w)
    {
      ignored_arg (c, "--window-attn-skip-freq"); /* read only with a window */
      return;
    }
  g_autofree char *wt = arg_text (w);
  g_autofree char *inner = g_strstrip (g_strdup (value_of (w)));
  size_t n = strlen (inner);
  if (n >= 2 && inner[0] == '(' && inner[n - 1] == ')')
    {
      memmove (inner, inner + 1, n - 2);
      inner[n - 2] = '\0';
    }
  g_auto (GStrv) parts = g_strsplit (inner, ",", -1);
  gint64 left = 0, right = 0;
  if (g_strv_length (parts) != 2 || !g_ascii_string_to_signed (g_strstrip (parts[0]), 10, 0, G_MAXINT32, &left, NULL)
      || !g_ascii_string_to_signed (g_strstrip (parts[1]), 10, 0, G_MAXINT32, &right, NULL))
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--window-size '%s': not two non-negative integers (left,right)", value_of (w));
      return;
    }
  if (right != 0)
    {
      sim_import_unknown (c->imp, wt, "a window reaching later tokens: trainsim's windows are causal");
      ignored_arg (c, "--window-attn-skip-freq");
      return;
    }
  Arg *sk = take (c, "--window-attn-skip-freq");
  gint64 freq = 1;
  if (sk && !g_ascii_string_to_signed (value_of (sk), 10, 1, G_MAXINT32, &freq, NULL))
    freq = 0;
  g_autofree char *skt = sk ? arg_text (sk) : NULL;
  if (freq == 1 && sk)
    {
      /* layer n % 1 == 0 for every n: no layer is windowed */
      g_autofree char *f = g_strdup_printf ("%s %s", wt, skt);
      put_int (c, "model", "attention_window", 0, f, "");
      return;
    }
  put_int (c, "model", "attention_window", left + 1, wt, "");
  if (freq == 2)
    put_int (c, "model", "window_layer_freq", 2, skt, "");
  else if (sk)
    sim_import_unknown (c->imp, skt, "a full-attention layer every third or later layer, or a pattern list: "
                        "trainsim windows every layer or every other one; written as every layer");
}

/* [model]: the transformer's shape. */
static void
map_model (Ctx *c, const SimImportOptions *o, Plan *p)
{
  p->layers = get_int (c, "--num-layers", 0, 1);
  p->hidden = get_int (c, "--hidden-size", 0, 1);
  p->heads = get_int (c, "--num-attention-heads", 0, 1);
  gboolean swiglu = has (c, "--swiglu");
  p->model = p->layers || p->hidden || p->heads;
  if (!p->model)
    {
      sim_import_note (c->imp, "no --num-layers, --hidden-size or --num-attention-heads: [model] is left to "
                       "another scenario file");
      return;
    }
  g_autofree char *f_layers = FROM ("--num-layers");
  g_autofree char *f_hidden = FROM ("--hidden-size");
  g_autofree char *f_heads = FROM ("--num-attention-heads");
  if (p->layers)
    put_int (c, "model", "layers", p->layers, f_layers, "");
  if (p->hidden)
    put_int (c, "model", "hidden", p->hidden, f_hidden, "");
  if (p->heads)
    put_int (c, "model", "heads", p->heads, f_heads, "");
  for (int i = 0; i < 3; i++)
    if (!(i == 0 ? p->layers : i == 1 ? p->hidden : p->heads))
      sim_import_note (c->imp, "[model] %s: %s not given (Megatron-LM requires it)",
                       i == 0 ? "layers" : i == 1 ? "hidden" : "heads",
                       i == 0 ? "--num-layers" : i == 1 ? "--hidden-size" : "--num-attention-heads");
  /* GQA: num_query_groups counts only with --group-query-attention (arguments.py,
   * core_transformer_config_from_args); its default is 1. */
  gboolean gqa = has (c, "--group-query-attention");
  gint64 groups = get_int (c, "--num-query-groups", 1, 1);
  g_autofree char *f_gqa = FROM ("--group-query-attention", "--num-query-groups");
  if (gqa)
    put_int (c, "model", "kv_heads", groups, f_gqa, "");
  else
    {
      if (p->heads)
        put_int (c, "model", "kv_heads", p->heads, NULL, "no --group-query-attention: a key/value head per query head");
      if (*f_gqa)
        sim_import_ignored (c->imp, f_gqa); /* --num-query-groups counts only with --group-query-attention */
    }
  gint64 kvc = get_int (c, "--kv-channels", 0, 1);
  g_autofree char *f_kvc = FROM ("--kv-channels");
  if (kvc)
    put_int (c, "model", "head_dim", kvc, f_kvc, "");
  /* ffn_hidden_size: 4h, or int(4h·2/3 / 64)·64 with --swiglu (arguments.py, validate_args). */
  gint64 ffn = get_int (c, "--ffn-hidden-size", 0, 1);
  g_autofree char *f_ffn = FROM ("--ffn-hidden-size");
  if (ffn)
    put_int (c, "model", "ffn_hidden", ffn, f_ffn, "");
  else if (p->hidden)
    {
      ffn = swiglu ? (gint64) ((4.0 * (double) p->hidden * 2.0 / 3.0) / 64.0) * 64 : 4 * p->hidden;
      put_int (c, "model", "ffn_hidden", ffn, NULL, swiglu ? "int(4 x hidden x 2/3 / 64) x 64 with --swiglu"
                                                           : "4 x hidden");
    }
  map_attention_variants (c);
  map_vocab (c, o);
  /* Activation: GeLU unless --swiglu (F.silu, gated) or --squared-relu / --quick-geglu
   * (core_transformer_config_from_args). */
  gboolean sqrelu = has (c, "--squared-relu"), qgeglu = has (c, "--quick-geglu");
  g_autofree char *f_swiglu = FROM ("--swiglu");
  put (c, "model", "activation", swiglu || qgeglu ? "swiglu" : "gelu", swiglu ? f_swiglu : NULL, "GeLU");
  if (sqrelu)
    sim_import_unknown (c->imp, "--squared-relu", "squared ReLU: written as gelu, the same two matrices");
  if (qgeglu)
    sim_import_unknown (c->imp, "--quick-geglu", "gated quick-GeLU: written as swiglu, the same three matrices");
  static const char *const norms[] = { "LayerNorm", "RMSNorm", NULL };
  const char *norm = get_choice (c, "--normalization", "LayerNorm", norms);
  g_autofree char *f_norm = FROM ("--normalization");
  put (c, "model", "norm", strcmp (norm, "RMSNorm") == 0 ? "rmsnorm" : "layernorm", f_norm, "LayerNorm");
  /* Positions: learned_absolute by default; --use-rotary-position-embeddings is the deprecated rope. */
  static const char *const positions[] = { "learned_absolute", "rope", "mrope", "relative", "none", NULL };
  const char *pos = get_choice (c, "--position-embedding-type", "learned_absolute", positions);
  g_autofree char *f_pos = FROM ("--position-embedding-type", "--use-rotary-position-embeddings");
  if (has (c, "--use-rotary-position-embeddings"))
    pos = "rope";
  if (has (c, "--no-position-embedding"))
    unknown_arg (c, "--no-position-embedding", "a model without position embeddings: [model] position is learned or rope");
  if (strcmp (pos, "learned_absolute") == 0)
    {
      put (c, "model", "position", "learned", f_pos, "learned_absolute");
      gint64 maxpos = get_int (c, "--max-position-embeddings", 0, 1);
      g_autofree char *f_max = FROM ("--max-position-embeddings");
      if (maxpos)
        put_int (c, "model", "max_positions", maxpos, f_max, "");
      else
        sim_import_note (c->imp, "[model] max_positions: --max-position-embeddings not given (Megatron-LM requires "
                         "it); trainsim takes seq_len");
    }
  else if (strcmp (pos, "rope") == 0 || strcmp (pos, "mrope") == 0)
    {
      put (c, "model", "position", "rope", f_pos, "");
      if (strcmp (pos, "mrope") == 0)
        sim_import_unknown (c->imp, "--position-embedding-type mrope", "multimodal rope: written as rope");
      ignored_arg (c, "--max-position-embeddings"); /* no table with rope: a limit only */
    }
  else
    {
      g_autofree char *t = g_strdup_printf ("--position-embedding-type %s", pos);
      sim_import_unknown (c->imp, t, "trainsim models learned or rope positions: set [model] position");
    }
  /* Tied embeddings and linear biases are Megatron's defaults. */
  g_autofree char *f_untie = FROM ("--untie-embeddings-and-output-weights");
  gboolean untie = has (c, "--untie-embeddings-and-output-weights");
  put (c, "model", "tied_embeddings", untie ? "false" : "true", f_untie, "tied (no --untie-embeddings-and-output-weights)");
  g_autofree char *f_bias = FROM ("--disable-bias-linear");
  gboolean nobias = has (c, "--disable-bias-linear");
  put (c, "model", "bias", nobias ? "false" : "true", f_bias, "biases (no --disable-bias-linear)");
  /* MoE (arguments.py _add_moe_args): --moe-ffn-hidden-size defaults to ffn_hidden_size; the
   * shared experts are one MLP of --moe-shared-expert-intermediate-size. */
  gint64 experts = get_int (c, "--num-experts", 0, 1);
  if (experts)
    {
      g_autofree char *f_e = FROM ("--num-experts", "--moe-grouped-gemm", "--moe-token-dispatcher-type");
      put_int (c, "model", "moe_experts", experts, f_e, "");
      gint64 topk = get_int (c, "--moe-router-topk", 2, 1);
      g_autofree char *f_k = FROM ("--moe-router-topk");
      put_int (c, "model", "moe_top_k", topk, f_k, "--moe-router-topk 2");
      gint64 mffn = get_int (c, "--moe-ffn-hidden-size", ffn, 1);
      g_autofree char *f_m = FROM ("--moe-ffn-hidden-size");
      if (mffn)
        put_int (c, "model", "moe_ffn_hidden", mffn, f_m, "the dense ffn_hidden_size");
      gint64 shared = get_int (c, "--moe-shared-expert-intermediate-size", 0, 1);
      g_autofree char *f_s = FROM ("--moe-shared-expert-intermediate-size");
      if (shared && mffn && shared % mffn == 0)
        put_int (c, "model", "moe_shared_experts", shared / mffn, f_s, "");
      else if (shared)
        unknown_arg (c, "--moe-shared-expert-intermediate-size", "not a multiple of the expert width: trainsim's "
                     "shared experts are moe_ffn_hidden wide");
      double cap = get_double (c, "--moe-expert-capacity-factor", 0);
      g_autofree char *f_cap = FROM ("--moe-expert-capacity-factor");
      if (cap > 0)
        {
          g_autofree char *v = g_strdup_printf ("%g", cap);
          put (c, "model", "moe_capacity_factor", v, f_cap, "");
        }
      Arg *freq = take (c, "--moe-layer-freq");
      gint64 n = 0;
      if (freq && g_ascii_string_to_signed (value_of (freq), 10, 1, 10000, &n, NULL))
        {
          g_autofree char *f_f = arg_text (freq);
          put_int (c, "model", "moe_layer_freq", n, f_f, "");
        }
      else if (freq)
        {
          g_autofree char *t = arg_text (freq);
          sim_import_unknown (c->imp, t, "a layer pattern: trainsim's moe_layer_freq is one integer");
        }
      /* Expert GEMMs: trainsim models Transformer Engine's grouped GEMMs (model/layer.c) and an
       * all-to-all dispatch; Megatron's defaults are one GEMM per expert and the all-gather
       * dispatcher. */
      if (!has (c, "--moe-grouped-gemm"))
        sim_import_unknown (c->imp, "--moe-grouped-gemm (absent)", "experts run one GEMM each; trainsim models grouped GEMMs");
      /* The flex dispatcher with --moe-enable-deepep sends DeepEP's one copy per target node
       * (parallel.moe_dispatcher deepep). */
      static const char *const disp[] = { "allgather", "alltoall", "flex", NULL };
      const char *d = get_choice (c, "--moe-token-dispatcher-type", "allgather", disp);
      gboolean deepep = strcmp (d, "flex") == 0 && has (c, "--moe-enable-deepep");
      if (deepep)
        {
          g_autofree char *f = FROM ("--moe-token-dispatcher-type", "--moe-enable-deepep");
          put (c, "parallel", "moe_dispatcher", "deepep", f, "");
        }
      else
        ignored_arg (c, "--moe-enable-deepep"); /* read by the flex dispatcher only */
      if (!deepep && strcmp (d, "alltoall") != 0)
        {
          g_autofree char *t = g_strdup_printf ("--moe-token-dispatcher-type %s", d);
          sim_import_unknown (c->imp, t, "trainsim models the all-to-all dispatch and DeepEP's (flex with "
                              "--moe-enable-deepep)");
        }
    }
}

/* Virtual pipeline stages (arguments.py, validate_args): layers per virtual stage divide the layers
 * per pipeline rank, counting the embedding and the loss as layers when accounted for. */
static void
map_pipeline (Ctx *c, Plan *p)
{
  gboolean emb = has (c, "--account-for-embedding-in-pipeline-split");
  gboolean loss = has (c, "--account-for-loss-in-pipeline-split");
  gint64 per_vstage = get_int (c, "--num-layers-per-virtual-pipeline-stage", 0, 1);
  gint64 vstages = get_int (c, "--num-virtual-stages-per-pipeline-rank", 0, 1);
  g_autofree char *f_v = FROM ("--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank");
  p->vpp = 1;
  if (per_vstage && vstages)
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--num-layers-per-virtual-pipeline-stage and "
           "--num-virtual-stages-per-pipeline-rank: Megatron-LM takes one of them");
      return;
    }
  if (per_vstage && (has (c, "--decoder-first-pipeline-num-layers") || has (c, "--decoder-last-pipeline-num-layers")))
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--num-layers-per-virtual-pipeline-stage with uneven first or last stages: "
           "Megatron-LM asks for --num-virtual-stages-per-pipeline-rank there");
      return;
    }
  if (vstages)
    p->vpp = vstages;
  else if (per_vstage && p->layers)
    {
      gint64 layers = p->layers + (emb ? 1 : 0) + (loss ? 1 : 0);
      if (layers % p->pp != 0 || (layers / p->pp) % per_vstage != 0)
        {
          bad (c, SIM_IMPORT_ERROR_VALUE, "--num-layers-per-virtual-pipeline-stage %" G_GINT64_FORMAT ": does not "
               "divide the %" G_GINT64_FORMAT " layers per pipeline rank (%" G_GINT64_FORMAT " layers over "
               "pp %" G_GINT64_FORMAT ")", per_vstage, layers / p->pp, layers, p->pp);
          return;
        }
      p->vpp = layers / p->pp / per_vstage;
      g_free (f_v);
      f_v = g_strdup_printf ("--num-layers-per-virtual-pipeline-stage %" G_GINT64_FORMAT ": %" G_GINT64_FORMAT
                             " layers%s / pp %" G_GINT64_FORMAT " / %" G_GINT64_FORMAT, per_vstage, layers,
                             emb || loss ? " (embedding and loss counted)" : "", p->pp, per_vstage);
    }
  else if (per_vstage)
    unknown_arg (c, "--num-layers-per-virtual-pipeline-stage", "without --num-layers the stages per rank are unknown: "
                 "set [parallel] vpp");
  if (p->vpp > 1 || vstages || per_vstage)
    put_int (c, "parallel", "vpp", p->vpp, f_v, "");
  if (emb && loss)
    {
      g_autofree char *f = FROM ("--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split");
      put (c, "parallel", "pp_embed_loss_layers", "true", f, "");
    }
  else if (emb || loss)
    sim_import_unknown (c->imp, emb ? "--account-for-embedding-in-pipeline-split" : "--account-for-loss-in-pipeline-split",
                        "trainsim counts the embedding and the loss as pipeline layers together or not at all");
  /* Uneven first and last stages (TransformerConfig num_layers_in_first/last_pipeline_stage). */
  if (has (c, "--decoder-first-pipeline-num-layers"))
    {
      g_autofree char *f = FROM ("--decoder-first-pipeline-num-layers");
      put_int (c, "parallel", "pp_first_stage_layers", get_int (c, "--decoder-first-pipeline-num-layers", 0, 1), f, "");
    }
  if (has (c, "--decoder-last-pipeline-num-layers"))
    {
      g_autofree char *f = FROM ("--decoder-last-pipeline-num-layers");
      put_int (c, "parallel", "pp_last_stage_layers", get_int (c, "--decoder-last-pipeline-num-layers", 0, 1), f, "");
    }
  /* A layer-by-layer pipeline layout (its stages over pp set vpp, as in Megatron-Core). */
  Arg *layout = take (c, "--pipeline-model-parallel-layout");
  if (layout && value_of (layout))
    {
      g_autofree char *f = FROM ("--pipeline-model-parallel-layout");
      put (c, "parallel", "pp_layout", value_of (layout), f, "");
    }
  /* The interleaved schedule groups pp micro-batches per virtual stage unless told otherwise. */
  gint64 group = get_int (c, "--microbatch-group-size-per-virtual-pipeline-stage", p->pp, 1);
  g_autofree char *f_group = FROM ("--microbatch-group-size-per-virtual-pipeline-stage");
  if (group != p->pp)
    put_int (c, "parallel", "microbatch_group_size", group, f_group, "");
  else if (*f_group)
    sim_import_ignored (c->imp, f_group); /* Megatron's default, trainsim's schedule */
  /* Blocking sends: without the interleaved schedule Megatron turns overlap_p2p_comm off
   * (arguments.py), so batch_p2p_comm is on, and p2p_communication.py synchronizes the device after
   * each batched send/receive (batch_p2p_sync, on by default in model_parallel_config.py). */
  gboolean no_overlap = has (c, "--no-overlap-p2p-communication");
  if (p->pp == 1 && no_overlap)
    sim_import_ignored (c->imp, "--no-overlap-p2p-communication");
  if (p->pp > 1)
    {
      gboolean blocking = p->vpp == 1 || no_overlap;
      g_autofree char *f = FROM ("--no-overlap-p2p-communication");
      put (c, "parallel", "pp_blocking", blocking ? "true" : "false", f,
           blocking ? "no interleaved schedule: batched p2p, then torch.cuda.synchronize()"
                    : "overlap_p2p_comm with the interleaved schedule");
    }
  if (has (c, "--no-scatter-gather-tensors-in-pipeline"))
    {
      g_autofree char *f = FROM ("--no-scatter-gather-tensors-in-pipeline");
      put (c, "parallel", "pp_scatter_gather", "false", f, "");
    }
}

/* Recompute (arguments.py; megatron/core/transformer/transformer_config.py __post_init__): full needs
 * a method; uniform recomputes every layer (groups of N checkpointed together), block the first N
 * layers of each pipeline rank's chunk. */
static void
map_recompute (Ctx *c, const Plan *p)
{
  static const char *const gran[] = { "full", "selective", NULL };
  static const char *const meth[] = { "uniform", "block", NULL };
  gboolean act = has (c, "--recompute-activations");
  const char *g = get_choice (c, "--recompute-granularity", act ? "selective" : NULL, gran);
  const char *m = get_choice (c, "--recompute-method", NULL, meth);
  gint64 n = get_int (c, "--recompute-num-layers", 0, 1);
  g_autofree char *f = FROM ("--recompute-activations", "--recompute-granularity", "--recompute-method",
                             "--recompute-num-layers");
  Arg *mods = take (c, "--recompute-modules");
  if (mods && (!g || strcmp (g, "selective") != 0))
    {
      g_autofree char *t = arg_text (mods);
      sim_import_ignored (c->imp, t); /* modules count only with selective recompute */
    }
  if (!g)
    {
      put (c, "parallel", "recompute", "none", f, "no recompute");
      return;
    }
  if (strcmp (g, "selective") == 0)
    {
      put (c, "parallel", "recompute", "selective", f, "");
      for (guint i = 0; mods && i < mods->values->len; i++)
        if (strcmp (g_ptr_array_index (mods->values, i), "core_attn") != 0)
          {
            g_autofree char *t = arg_text (mods);
            sim_import_unknown (c->imp, t, "trainsim's selective recompute is the core attention's");
            break;
          }
      return;
    }
  if (!m || !n)
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--recompute-granularity full: needs --recompute-method (uniform or block) "
           "and --recompute-num-layers (transformer_config.py)");
      return;
    }
  put (c, "parallel", "recompute", "full", f, "");
  gint64 chunk = p->layers > 0 && p->pp > 0 && p->vpp > 0 ? p->layers / (p->pp * p->vpp) : 0;
  if (strcmp (m, "uniform") == 0 && n > 1)
    sim_import_unknown (c->imp, "--recompute-num-layers", "uniform groups of several layers keep fewer inputs than "
                        "trainsim's per-layer full recompute (same compute)");
  else if (strcmp (m, "block") == 0 && (!chunk || n < chunk))
    sim_import_unknown (c->imp, "--recompute-method block", "recomputes only some layers of each stage: written as "
                        "full, an upper bound on the recompute time");
}

/* Precision (arguments.py validate_args and _add_mixed_precision_args, _add_transformer_engine_args):
 * parameters in bf16 or fp16, else fp32; FP8/FP4 recipes run the layer GEMMs in that format. Main
 * gradients are fp32 with bf16 unless reduced in bf16; with fp16 only with
 * --accumulate-allreduce-grads-in-fp32. */
static void
map_precision (Ctx *c, Plan *p)
{
  gboolean bf16 = has (c, "--bf16"), fp16 = has (c, "--fp16");
  if (bf16 && fp16)
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--bf16 and --fp16: Megatron-LM takes one of them");
      return;
    }
  const char *pdt = bf16 ? "bf16" : fp16 ? "fp16" : "fp32";
  g_autofree char *f_p = FROM ("--bf16", "--fp16");
  put (c, "parallel", "param_dtype", pdt, f_p, "fp32 parameters (no --bf16 or --fp16)");
  static const char *const fp8s[] = { "e4m3", "hybrid", NULL };
  static const char *const fp4s[] = { "e2m1", NULL };
  static const char *const recipes[] = { "tensorwise", "delayed", "mxfp8", "blockwise", NULL };
  static const char *const fp4_recipes[] = { "nvfp4", NULL };
  const char *fp8 = get_choice (c, "--fp8-format", NULL, fp8s);
  const char *fp4 = get_choice (c, "--fp4-format", NULL, fp4s);
  const char *recipe = get_choice (c, "--fp8-recipe", "delayed", recipes);
  get_choice (c, "--fp4-recipe", "nvfp4", fp4_recipes);
  p->mdt = fp4 ? "fp4" : fp8 ? "fp8" : pdt;
  g_autofree char *f_m = FROM ("--fp8-format", "--fp4-format", "--fp4-recipe");
  put (c, "parallel", "matmul_dtype", p->mdt, f_m, "GEMMs in the parameter dtype");
  if (fp8 && !fp4)
    {
      g_autofree char *f_r = FROM ("--fp8-recipe");
      if (strcmp (recipe, "delayed") == 0 || strcmp (recipe, "tensorwise") == 0)
        put (c, "parallel", "fp8_scaling", strcmp (recipe, "delayed") == 0 ? "delayed" : "current", f_r,
             "--fp8-recipe delayed");
      else
        {
          g_autofree char *t = g_strdup_printf ("--fp8-recipe %s", recipe);
          sim_import_unknown (c->imp, t, "block-scaled FP8: trainsim models delayed or tensor-wise (current) scaling; "
                              "fp8_scaling left at its default");
        }
    }
  if (has (c, "--fp8-param-gather"))
    {
      g_autofree char *f = FROM ("--fp8-param-gather");
      put (c, "parallel", "fp8_param_gather", "true", f, "");
    }
  /* Layer CUDA graphs: --cuda-graph-impl local or transformer_engine (core_v0.15), or the older
   * --enable-cuda-graph and --external-cuda-graph. */
  static const char *const graph_impls[] = { "none", "local", "transformer_engine", NULL };
  const char *graphs = get_choice (c, "--cuda-graph-impl", "none", graph_impls);
  if (strcmp (graphs, "none") != 0 || has (c, "--enable-cuda-graph") || has (c, "--external-cuda-graph"))
    {
      g_autofree char *f = FROM ("--cuda-graph-impl", "--enable-cuda-graph", "--external-cuda-graph");
      put (c, "parallel", "cuda_graphs", "true", f, "");
    }
  gboolean firstlast = has (c, "--first-last-layers-bf16");
  gint64 first = get_int (c, "--num-layers-at-start-in-bf16", 1, 0);
  gint64 last = get_int (c, "--num-layers-at-end-in-bf16", 1, 0);
  if (!firstlast)
    {
      g_autofree char *f = FROM ("--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16");
      if (*f)
        sim_import_ignored (c->imp, f); /* they count only with --first-last-layers-bf16 */
    }
  if (firstlast)
    {
      g_autofree char *f1 = FROM ("--first-last-layers-bf16", "--num-layers-at-start-in-bf16");
      g_autofree char *f2 = FROM ("--first-last-layers-bf16", "--num-layers-at-end-in-bf16");
      put_int (c, "parallel", "bf16_layers_first", first, f1, "");
      put_int (c, "parallel", "bf16_layers_last", last, f2, "");
    }
  gboolean in_bf16 = has (c, "--grad-reduce-in-bf16");
  gboolean acc32 = has (c, "--accumulate-allreduce-grads-in-fp32");
  static const char *const mg[] = { "fp32", "bf16", NULL };
  const char *main_grads = get_choice (c, "--main-grads-dtype", "fp32", mg);
  const char *gdt = "fp32";
  if (bf16)
    gdt = in_bf16 || (strcmp (main_grads, "bf16") == 0 && !acc32) ? "bf16" : "fp32";
  else if (fp16)
    gdt = acc32 ? "fp32" : "fp16";
  g_autofree char *f_g = FROM ("--grad-reduce-in-bf16", "--accumulate-allreduce-grads-in-fp32", "--main-grads-dtype");
  put (c, "parallel", "grad_dtype", gdt, f_g, bf16 ? "fp32 main gradients with --bf16" : "gradients in the parameter dtype");
  /* Optimizer state (megatron/core/optimizer/__init__.py, _get_megatron_optimizer_based_on_param_groups):
   * with --use-precision-aware-optimizer Transformer Engine's FusedAdam keeps the master weights in
   * --main-params-dtype and the moments in --exp-avg-dtype / --exp-avg-sq-dtype, and Megatron asks it
   * for store_param_remainders (from TE 2.1), which keeps only the 16 bits an fp32 master has beyond
   * a bf16 weight. Without the flag Megatron's fp32 masters and moments stay and the dtypes are
   * unused. */
  if (!has (c, "--use-precision-aware-optimizer"))
    {
      ignored_arg (c, "--main-params-dtype");
      ignored_arg (c, "--exp-avg-dtype");
      ignored_arg (c, "--exp-avg-sq-dtype");
      return;
    }
  static const char *const mp[] = { "fp32", "fp16", NULL };
  static const char *const md[] = { "fp32", "fp16", "bf16", "fp8", NULL };
  const char *main_params = get_choice (c, "--main-params-dtype", "fp32", mp);
  const char *m1 = get_choice (c, "--exp-avg-dtype", "fp32", md), *m2 = get_choice (c, "--exp-avg-sq-dtype", "fp32", md);
  g_autofree char *f_mw = FROM ("--use-precision-aware-optimizer", "--main-params-dtype");
  if (strcmp (main_params, "fp16") == 0)
    sim_import_unknown (c->imp, "--main-params-dtype fp16", "fp16 master weights: trainsim's master_weights are fp32, "
                        "bf16 remainders or none; left fp32");
  else if (bf16)
    put (c, "parallel", "master_weights", "remainder", f_mw, "");
  g_autofree char *f_mo = FROM ("--use-precision-aware-optimizer", "--exp-avg-dtype", "--exp-avg-sq-dtype");
  if (strcmp (m1, m2) == 0 && strcmp (m1, "fp8") != 0)
    put (c, "parallel", "moment_dtype", m1, f_mo, "fp32 moments");
  else
    {
      g_autofree char *t = g_strdup_printf ("--exp-avg-dtype %s --exp-avg-sq-dtype %s", m1, m2);
      sim_import_unknown (c->imp, t, "trainsim keeps both moments in one dtype of 2 or 4 bytes; left fp32");
    }
}

/* Data parallelism: the distributed optimizer shards the optimizer state (ZeRO-1); Megatron FSDP's
 * sharding strategy and torch FSDP2 shard more (arguments.py _add_distributed_args). */
static void
map_data_parallel (Ctx *c)
{
  gint64 zero = 0;
  gboolean fsdp = FALSE;
  gboolean distopt = has (c, "--use-distributed-optimizer");
  gboolean mfsdp = has (c, "--use-megatron-fsdp"), tfsdp = has (c, "--use-torch-fsdp2");
  static const char *const strat[] = { "no_shard", "optim", "optim_grads", "optim_grads_params", NULL };
  const char *s = get_choice (c, "--data-parallel-sharding-strategy", "no_shard", strat);
  if (distopt)
    zero = 1;
  if (!mfsdp)
    {
      g_autofree char *f = FROM ("--data-parallel-sharding-strategy");
      if (*f)
        sim_import_ignored (c->imp, f); /* Megatron FSDP's option */
    }
  if (mfsdp)
    {
      zero = strcmp (s, "optim_grads_params") == 0 ? 3 : strcmp (s, "optim_grads") == 0 ? 2 : strcmp (s, "optim") == 0 ? 1 : 0;
      fsdp = zero >= 2;
    }
  if (tfsdp)
    zero = 3, fsdp = TRUE;
  g_autofree char *f_z = FROM ("--use-distributed-optimizer", "--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                               "--use-torch-fsdp2");
  put_int (c, "parallel", "zero", zero, f_z, "no sharding (no --use-distributed-optimizer)");
  if (fsdp)
    put (c, "parallel", "fsdp", "true", f_z, "");
  gboolean grads = has (c, "--overlap-grad-reduce"), params = has (c, "--overlap-param-gather");
  if (params && !grads)
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--overlap-param-gather: Megatron-LM needs --overlap-grad-reduce with it");
      return;
    }
  g_autofree char *f_o = FROM ("--overlap-grad-reduce", "--overlap-param-gather");
  put (c, "parallel", "dp_overlap", grads ? "true" : "false", f_o, "no --overlap-grad-reduce");
  if (grads && zero >= 1 && !params)
    sim_import_unknown (c->imp, "--overlap-param-gather (absent)", "trainsim's dp_overlap also overlaps the "
                        "distributed optimizer's parameter all-gather");
}

static void
map_parallel (Ctx *c, const SimImportOptions *o, Plan *p)
{
  p->tp = get_int (c, "--tensor-model-parallel-size", 1, 1);
  p->pp = get_int (c, "--pipeline-model-parallel-size", 1, 1);
  p->cp = get_int (c, "--context-parallel-size", 1, 1);
  g_autofree char *f_tp = FROM ("--tensor-model-parallel-size");
  g_autofree char *f_pp = FROM ("--pipeline-model-parallel-size");
  g_autofree char *f_cp = FROM ("--context-parallel-size");
  if (o && o->gpus > 0)
    {
      g_autofree char *t = g_strdup_printf ("trainsim import --gpus %d", o->gpus);
      sim_import_set_int (c->imp, "cluster", "gpus", o->gpus, t);
    }
  else
    sim_import_note (c->imp, "[cluster] gpus: Megatron-LM takes the world size from the launcher (data parallelism "
                     "= gpus / (tp x pp x cp)); pass trainsim import --gpus N or add it");
  put_int (c, "parallel", "tp", p->tp, f_tp, "1");
  put_int (c, "parallel", "pp", p->pp, f_pp, "1");
  put_int (c, "parallel", "cp", p->cp, f_cp, "1");
  map_pipeline (c, p);
  gint64 ep = get_int (c, "--expert-model-parallel-size", 1, 1);
  g_autofree char *f_ep = FROM ("--expert-model-parallel-size");
  put_int (c, "parallel", "ep", ep, f_ep, "1");
  gint64 etp = get_int (c, "--expert-tensor-parallel-size", 0, 1);
  g_autofree char *f_etp = FROM ("--expert-tensor-parallel-size");
  if (etp)
    put_int (c, "parallel", "etp", etp, f_etp, "");
  Arg *cpt = take (c, "--cp-comm-type");
  gboolean p2p = TRUE;
  for (guint i = 0; cpt && i < cpt->values->len; i++)
    p2p &= strcmp (g_ptr_array_index (cpt->values, i), "p2p") == 0;
  if (cpt)
    {
      g_autofree char *t = arg_text (cpt);
      if (p2p)
        sim_import_ignored (c->imp, t); /* Megatron's default, trainsim's ring */
      else
        sim_import_unknown (c->imp, t, "trainsim models context parallelism as the p2p ring");
    }
  /* Sequence parallelism is turned off with TP 1 (arguments.py, validate_args). */
  gboolean sp = has (c, "--sequence-parallel") && p->tp > 1;
  g_autofree char *f_sp = FROM ("--sequence-parallel");
  put (c, "parallel", "sp", sp ? "true" : "false", f_sp, "no --sequence-parallel");
  if (has (c, "--tp-comm-overlap"))
    {
      g_autofree char *f = FROM ("--tp-comm-overlap");
      put (c, "parallel", "tp_comm_overlap", "true", f, "");
    }
  map_data_parallel (c);
  /* Batch: without --global-batch-size it is micro_batch_size x data-parallel size (validate_args),
   * i.e. one micro-batch per replica. */
  gint64 mbs = get_int (c, "--micro-batch-size", 0, 1);
  gint64 gbs = get_int (c, "--global-batch-size", 0, 1);
  g_autofree char *f_mbs = FROM ("--micro-batch-size");
  g_autofree char *f_gbs = FROM ("--global-batch-size");
  if (mbs)
    put_int (c, "parallel", "micro_batch", mbs, f_mbs, "");
  else
    sim_import_note (c->imp, "[parallel] micro_batch: --micro-batch-size not given (Megatron-LM requires it)");
  if (gbs)
    put_int (c, "parallel", "global_batch", gbs, f_gbs, "");
  else if (mbs)
    put_int (c, "parallel", "global_batch_per_dp", mbs, NULL, "micro_batch_size x data-parallel size");
  map_recompute (c, p);
  map_precision (c, p);
  /* Attention (arguments.py --attention-backend; the default auto picks a fused kernel). */
  Arg *backend = take (c, "--attention-backend");
  const char *be = value_of (backend);
  gboolean flash = has (c, "--use-flash-attn");
  g_autofree char *f_att = FROM ("--attention-backend", "--use-flash-attn");
  if (be && strcmp (be, "unfused") == 0)
    put (c, "parallel", "unfused_attention", "true", f_att, "");
  else if (be && strcmp (be, "local") == 0)
    sim_import_unknown (c->imp, "--attention-backend local", "Megatron's own attention: trainsim models TE's kernels");
  else if (be && strcmp (be, "flash") != 0 && strcmp (be, "fused") != 0 && strcmp (be, "auto") != 0)
    bad (c, SIM_IMPORT_ERROR_VALUE, "--attention-backend '%s': not one of flash, fused, unfused, local, auto", be);
  else if (be || flash)
    put (c, "parallel", "unfused_attention", "false", f_att, "");
  static const char *const impls[] = { "local", "transformer_engine", NULL };
  g_autofree char *f_impl = FROM ("--transformer-impl");
  if (strcmp (get_choice (c, "--transformer-impl", "transformer_engine", impls), "local") == 0)
    sim_import_unknown (c->imp, "--transformer-impl local", "Megatron's own layers: trainsim models Transformer Engine's");
  else if (*f_impl)
    sim_import_ignored (c->imp, f_impl); /* Megatron's default, the kernels trainsim models */
  /* Dropout: attention and hidden dropout are 0.1 by default (arguments.py _add_regularization_args). */
  double ad = get_double (c, "--attention-dropout", 0.1), hd = get_double (c, "--hidden-dropout", 0.1);
  g_autofree char *f_d = FROM ("--attention-dropout", "--hidden-dropout");
  put (c, "parallel", "dropout", ad > 0 || hd > 0 ? "true" : "false", f_d, "--attention-dropout 0.1 --hidden-dropout 0.1");
  if (has (c, "--no-gradient-accumulation-fusion"))
    {
      g_autofree char *f = FROM ("--no-gradient-accumulation-fusion");
      put (c, "parallel", "grad_accum", "add", f, "");
    }
  if (has (c, "--cross-entropy-loss-fusion"))
    {
      g_autofree char *f = FROM ("--cross-entropy-loss-fusion");
      put (c, "parallel", "loss_fusion", "true", f, "");
    }
  static const char *const opts[] = { "adam", "sgd", NULL };
  g_autofree char *f_opt = FROM ("--optimizer");
  if (strcmp (get_choice (c, "--optimizer", "adam", opts), "sgd") == 0)
    sim_import_unknown (c->imp, "--optimizer sgd", "trainsim's optimizer state is Adam's");
  else if (*f_opt)
    sim_import_ignored (c->imp, f_opt); /* Megatron's default, trainsim's optimizer */
  /* Rank order: tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with --use-tp-pp-dp-mapping (its help text). */
  g_autofree char *f_ord = FROM ("--use-tp-pp-dp-mapping");
  gboolean tppp = has (c, "--use-tp-pp-dp-mapping");
  put (c, "parallel", "order", tppp ? "tp,cp,ep,pp,dp" : "tp,cp,ep,dp,pp", f_ord, "tp-cp-ep-dp-pp");
}

/* [training]: sequence length, run length and evaluation (arguments.py _add_data_args,
 * _add_training_args, _add_validation_args). --eval-interval and --eval-iters count global batches. */
static void
map_training (Ctx *c, const SimImportOptions *o)
{
  Arg *sl = take (c, "--seq-length"), *esl = take (c, "--encoder-seq-length");
  if (sl && esl)
    {
      bad (c, SIM_IMPORT_ERROR_VALUE, "--seq-length and --encoder-seq-length: Megatron-LM takes one of them");
      return;
    }
  gint64 seq = get_int (c, sl ? "--seq-length" : "--encoder-seq-length", 0, 1);
  g_autofree char *f_seq = FROM ("--seq-length", "--encoder-seq-length");
  if (seq)
    put_int (c, "training", "seq_len", seq, f_seq, "");
  else
    sim_import_note (c->imp, "[training] seq_len: --seq-length not given");
  gint64 iters = get_int (c, "--train-iters", 0, 1), samples = get_int (c, "--train-samples", 0, 1);
  g_autofree char *f_it = FROM ("--train-iters");
  g_autofree char *f_sa = FROM ("--train-samples");
  if (iters)
    put_int (c, "training", "steps", iters, f_it, "");
  else if (samples && seq)
    {
      g_autofree char *v = g_strdup_printf ("%.17g", (double) samples * (double) seq);
      g_autofree char *t = g_strdup_printf ("%s x seq_len", f_sa);
      put (c, "training", "tokens", v, t, "");
    }
  /* Sequences per global batch: given, or mbs x dp when the GPU count gives dp. */
  gint64 gbs = 0;
  const char *g = sim_import_get (c->imp, "parallel", "global_batch");
  const char *per = sim_import_get (c->imp, "parallel", "global_batch_per_dp");
  if (g)
    gbs = g_ascii_strtoll (g, NULL, 10);
  else if (per && o && o->gpus > 0)
    {
      gint64 model = g_ascii_strtoll (sim_import_get (c->imp, "parallel", "tp"), NULL, 10)
                     * g_ascii_strtoll (sim_import_get (c->imp, "parallel", "pp"), NULL, 10)
                     * g_ascii_strtoll (sim_import_get (c->imp, "parallel", "cp"), NULL, 10);
      if (model > 0 && o->gpus % model == 0)
        gbs = g_ascii_strtoll (per, NULL, 10) * (o->gpus / model);
    }
  Arg *ei = take (c, "--eval-interval"), *en = take (c, "--eval-iters");
  if (!ei && !en)
    return;
  gint64 interval = get_int (c, "--eval-interval", 1000, 1), n = get_int (c, "--eval-iters", 100, 0);
  g_autofree char *f_e = FROM ("--eval-interval", "--eval-iters");
  if (!gbs)
    {
      sim_import_unknown (c->imp, f_e, "evaluation counts global batches, whose size is not known without --gpus");
      return;
    }
  g_autofree char *t1 = g_strdup_printf ("%s (iterations x %" G_GINT64_FORMAT " sequences per global batch)", f_e, gbs);
  put_int (c, "training", "eval_interval_seqs", interval * gbs, t1, "");
  if (n > 0)
    put_int (c, "training", "eval_seqs", n * gbs, t1, "");
}

gboolean
sim_import_megatron (SimImport *imp, const char *const *args, const SimImportOptions *opts, GError **error)
{
  g_return_val_if_fail (imp != NULL && args != NULL, FALSE);
  Ctx cx = { g_array_new (FALSE, TRUE, sizeof (Arg)), imp, error, FALSE }, *c = &cx;
  g_array_set_clear_func (c->args, arg_clear);
  Plan plan = { 0 };
  if (split_args (c, args))
    {
      map_model (c, opts, &plan);
      if (!c->failed)
        map_parallel (c, opts, &plan);
      if (!c->failed)
        map_training (c, opts);
    }
  /* What the mapping read without a key or line of its own (a default restated, an option another
   * one overrides): one note, so that no argument goes unmentioned. */
  g_autoptr (GString) quiet = g_string_new (NULL);
  for (guint i = 0; i < c->args->len && !c->failed; i++)
    {
      const Arg *a = &g_array_index (c->args, Arg, i);
      g_autofree char *t = arg_text (a);
      if (a->used && !sim_import_mentions (imp, t))
        g_string_append_printf (quiet, "%s%s", quiet->len ? ", " : "", t);
    }
  if (quiet->len)
    sim_import_note (imp, "read, with no effect beyond the keys above: %s", quiet->str);
  /* What the mapping did not read: ignored, unknown, or not a Megatron-LM argument at all. */
  for (guint i = 0; i < c->args->len && !c->failed; i++)
    {
      Arg *a = &g_array_index (c->args, Arg, i);
      if (a->used)
        continue;
      g_autofree char *t = arg_text (a);
      if (!a->flag)
        sim_import_unknown (imp, t, "not an argument of Megatron-LM core_v0.15.0's pretrain_gpt.py");
      else if (a->flag->cls == SIM_MEGATRON_MAPPED)
        sim_import_unknown (imp, t, "read only with arguments not given here ([model] needs --num-layers, "
                            "--hidden-size or --num-attention-heads; MoE options need --num-experts)");
      else if (a->flag->cls == SIM_MEGATRON_UNKNOWN)
        sim_import_unknown (imp, t, a->flag->why);
      else
        sim_import_ignored (imp, t);
    }
  gboolean ok = !c->failed;
  g_array_unref (c->args);
  return ok;
}

char **
sim_import_megatron_read_args (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  GError *io = NULL;
  if (!g_file_get_contents (path, &text, NULL, &io))
    {
      g_set_error (error, SIM_IMPORT_ERROR, SIM_IMPORT_ERROR_IO, "%s", io->message);
      g_error_free (io);
      return NULL;
    }
  char **words = NULL;
  GError *sh = NULL;
  if (!g_shell_parse_argv (text, NULL, &words, &sh))
    {
      gboolean empty = g_error_matches (sh, G_SHELL_ERROR, G_SHELL_ERROR_EMPTY_STRING);
      if (!empty)
        g_set_error (error, SIM_IMPORT_ERROR, SIM_IMPORT_ERROR_SYNTAX, "%s: %s", path, sh->message);
      g_error_free (sh);
      return empty ? g_new0 (char *, 1) : NULL;
    }
  /* Drop a launcher and the script: everything up to the first word ending in .py. */
  int start = 0;
  for (int i = 0; words[i]; i++)
    if (g_str_has_suffix (words[i], ".py"))
      {
        start = i + 1;
        break;
      }
  char **out = g_strdupv (words + start);
  g_strfreev (words);
  return out;
}
