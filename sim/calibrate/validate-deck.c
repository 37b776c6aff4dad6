/* The validation deck's reader (sim/calibrate/validate.h): RFC 4180 records, columns found by
 * header name, typed rows checked against DECK.md's invariants, the optional arch column. Every
 * error names FILE:LINE, the column and what is wrong. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/calibrate/validate.h"

G_DEFINE_QUARK (sim-validate-error-quark, sim_validate_error)

/* Logical columns: the 37 required ones of DECK.md, then the optional ones (absent = empty). */
static const char *const column_names[SIM_VALIDATE_N_ALL_COLUMNS] = {
  "id", "source", "model", "family", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
  "seq_len", "activation", "moe_experts", "moe_top_k", "moe_ffn_hidden", "global_batch_seqs", "micro_batch",
  "gpus", "gpu", "gpus_per_node", "nvlink_domain", "nic_gbps_per_gpu", "tp", "pp", "vpp", "cp", "dp", "ep",
  "sequence_parallel", "zero", "fsdp", "recompute", "precision", "step_time_s", "step_time_basis",
  "confidence", "notes", "framework", "arch",
};

struct SimValidateDeck {
  char *name;
  int phys[SIM_VALIDATE_N_ALL_COLUMNS]; /* file column (0-based) of each logical column; -1: absent */
  GStringChunk *strings;
  GArray *rows; /* SimValidateRow */
};

void
sim_validate_deck_free (SimValidateDeck *deck)
{
  if (!deck)
    return;
  g_free (deck->name);
  g_string_chunk_free (deck->strings);
  g_array_free (deck->rows, TRUE);
  g_free (deck);
}

guint
sim_validate_deck_n_rows (const SimValidateDeck *deck)
{
  return deck->rows->len;
}

const SimValidateRow *
sim_validate_deck_row (const SimValidateDeck *deck, guint i)
{
  g_return_val_if_fail (i < deck->rows->len, NULL);
  return &g_array_index (deck->rows, SimValidateRow, i);
}

void
sim_validate_deck_set_micro_batch (SimValidateDeck *deck, guint i, int micro_batch)
{
  g_return_if_fail (i < deck->rows->len && micro_batch >= 1);
  g_array_index (deck->rows, SimValidateRow, i).micro_batch = micro_batch;
}

const char *
sim_validate_deck_name (const SimValidateDeck *deck)
{
  return deck->name;
}

/* ---- CSV ------------------------------------------------------------------------------------- */

typedef struct {
  const char *p, *end, *name;
  int line;             /* current line (1-based) */
} Csv;

/* Reads one record into fields; FALSE at end of input (no record). Sets *error on malformed input. */
static gboolean
csv_record (Csv *c, GPtrArray *fields, int *record_line, GError **error)
{
  g_ptr_array_set_size (fields, 0);
  if (c->p >= c->end)
    return FALSE;
  *record_line = c->line;
  GString *f = g_string_new (NULL);
  for (;;)
    {
      int column = (int) fields->len + 1;
      g_string_truncate (f, 0);
      gboolean quoted = FALSE;
      if (c->p < c->end && *c->p == '"')
        {
          quoted = TRUE;
          c->p++;
          for (;;)
            {
              if (c->p >= c->end)
                {
                  g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                               "%s:%d: column %d: quoted field not closed before the end of the file; "
                               "close it with \"",
                               c->name, *record_line, column);
                  g_string_free (f, TRUE);
                  return FALSE;
                }
              if (*c->p == '"')
                {
                  if (c->p + 1 < c->end && c->p[1] == '"')
                    {
                      g_string_append_c (f, '"');
                      c->p += 2;
                      continue;
                    }
                  c->p++;
                  break;
                }
              if (*c->p == '\n')
                c->line++;
              g_string_append_c (f, *c->p++);
            }
        }
      else
        while (c->p < c->end && *c->p != ',' && *c->p != '\r' && *c->p != '\n')
          {
            if (*c->p == '"')
              {
                g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                             "%s:%d: column %d: a quote inside an unquoted field; quote the whole field "
                             "and double the embedded quote (RFC 4180)",
                             c->name, c->line, column);
                g_string_free (f, TRUE);
                return FALSE;
              }
            g_string_append_c (f, *c->p++);
          }
      g_ptr_array_add (fields, g_strdup (f->str));
      (void) quoted;
      if (c->p >= c->end)
        break;
      if (*c->p == ',')
        {
          c->p++;
          continue;
        }
      if (*c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n')
        {
          c->p += 2;
          c->line++;
          break;
        }
      if (*c->p == '\n')
        {
          c->p++;
          c->line++;
          break;
        }
      g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                   "%s:%d: column %d: unexpected character after the closing quote (or a bare CR); "
                   "a quoted field ends at a comma or the line end",
                   c->name, c->line, column);
      g_string_free (f, TRUE);
      return FALSE;
    }
  g_string_free (f, TRUE);
  return TRUE;
}

static gboolean
parse_int (const char *s, int lo, int hi, int *out)
{
  if (!*s)
    return FALSE;
  char *end = NULL;
  gint64 v = g_ascii_strtoll (s, &end, 10);
  if (*end || v < lo || v > hi)
    return FALSE;
  *out = (int) v;
  return TRUE;
}

static gboolean
parse_double (const char *s, double *out)
{
  if (!*s)
    return FALSE;
  char *end = NULL;
  double v = g_ascii_strtod (s, &end);
  if (*end || !isfinite (v))
    return FALSE;
  *out = v;
  return TRUE;
}

static gboolean
one_of (const char *s, const char *const *options)
{
  for (int i = 0; options[i]; i++)
    if (strcmp (s, options[i]) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
bad_field (GError **error, const SimValidateDeck *deck, int line, int col, const char *value, const char *what)
{
  g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE, "%s:%d: column %d (%s): '%s': %s",
               deck->name, line, deck->phys[col] + 1, column_names[col], value, what);
  return FALSE;
}

static gboolean
row_error (GError **error, const char *name, int line, const char *what)
{
  g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE, "%s:%d: %s", name, line, what);
  return FALSE;
}

/* ---- The arch column ---------------------------------------------------------------------------- */

gboolean
sim_validate_arch_parse (const char *text, SimValidateArch *out, GError **error)
{
  static const char *const attentions[] = { "mha", "gqa", "mla", "swa", NULL };
  static const char *const positions[] = { "rope", "alibi", "learned", NULL };
  static const char *const norms[] = { "layernorm", "rmsnorm", NULL };
  static const char *const acts[] = { "gelu", "squared_relu", "swiglu", "geglu", NULL };
  static const struct { const char *key; gsize offset; int lo, hi; } ints[] = {
    { "q_lora_rank", G_STRUCT_OFFSET (SimValidateArch, q_lora_rank), 1, 1 << 24 },
    { "kv_lora_rank", G_STRUCT_OFFSET (SimValidateArch, kv_lora_rank), 1, 1 << 24 },
    { "qk_rope_head_dim", G_STRUCT_OFFSET (SimValidateArch, qk_rope_head_dim), 1, 1 << 16 },
    { "qk_nope_head_dim", G_STRUCT_OFFSET (SimValidateArch, qk_nope_head_dim), 1, 1 << 16 },
    { "v_head_dim", G_STRUCT_OFFSET (SimValidateArch, v_head_dim), 1, 1 << 16 },
    { "moe_shared_experts", G_STRUCT_OFFSET (SimValidateArch, moe_shared_experts), 0, 1 << 16 },
    { "moe_dense_layers", G_STRUCT_OFFSET (SimValidateArch, moe_dense_layers), 0, 1 << 20 },
    { "moe_layer_freq", G_STRUCT_OFFSET (SimValidateArch, moe_layer_freq), 1, 1 << 20 },
    { "moe_node_limit", G_STRUCT_OFFSET (SimValidateArch, moe_node_limit), 1, 1 << 20 },
    { "mtp_depth", G_STRUCT_OFFSET (SimValidateArch, mtp_depth), 0, 1 << 10 },
    { "encoder", G_STRUCT_OFFSET (SimValidateArch, encoder), 0, 1 },
    { "tied_embeddings", G_STRUCT_OFFSET (SimValidateArch, tied_embeddings), 0, 1 },
  };
  memset (out, 0, sizeof *out);
  for (gsize i = 0; i < G_N_ELEMENTS (ints); i++)
    G_STRUCT_MEMBER (int, out, ints[i].offset) = -1;
  out->swa_window = -1;
  g_auto (GStrv) pairs = g_strsplit (text, ";", -1);
  for (int i = 0; pairs[i]; i++)
    {
      const char *kv = pairs[i];
      if (*kv == '\0')
        continue;
      const char *eq = strchr (kv, '=');
      if (eq == NULL || eq == kv || eq[1] == '\0')
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "'%s' is not key=value (arch pairs are separated by ';')", kv);
          return FALSE;
        }
      g_autofree char *key = g_strndup (kv, eq - kv);
      const char *v = eq + 1;
      const char *const *set = NULL;
      const char **dst = NULL;
      if (strcmp (key, "attention") == 0)
        {
          if (g_str_has_prefix (v, "swa:"))
            {
              if (!parse_int (v + 4, 1, 1 << 30, &out->swa_window))
                goto bad;
              out->attention = "swa";
              continue;
            }
          set = attentions, dst = &out->attention;
        }
      else if (strcmp (key, "position") == 0)
        set = positions, dst = &out->position;
      else if (strcmp (key, "norm") == 0)
        set = norms, dst = &out->norm;
      else if (strcmp (key, "mlp_act") == 0)
        set = acts, dst = &out->mlp_act;
      if (set != NULL)
        {
          int j = 0;
          while (set[j] && strcmp (set[j], v) != 0)
            j++;
          if (set[j] == NULL || strcmp (v, "swa") == 0)
            goto bad;
          *dst = set[j];
          continue;
        }
      gsize k = 0;
      while (k < G_N_ELEMENTS (ints) && strcmp (ints[k].key, key) != 0)
        k++;
      if (k == G_N_ELEMENTS (ints))
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "unknown arch key '%s' (DECK.md \"Optional columns\" lists the keys)", key);
          return FALSE;
        }
      if (!parse_int (v, ints[k].lo, ints[k].hi, &G_STRUCT_MEMBER (int, out, ints[k].offset)))
        goto bad;
      continue;
    bad:
      g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE, "arch key '%s': bad value '%s'", key, v);
      return FALSE;
    }
  return TRUE;
}

static gboolean
convert_row (SimValidateDeck *deck, GPtrArray *fields, int line, SimValidateRow *r, GError **error)
{
  static const char *const frameworks[] = { "", "megatron", "nemo", "deepspeed", "fsdp2", "composer", "other", NULL };
  static const char *const families[] = { "gpt", "llama", "mixtral", "deepseek", "other", NULL };
  static const char *const activations[] = { "gelu", "swiglu", NULL };
  static const char *const recomputes[] = { "none", "selective", "full", NULL };
  static const char *const precisions[] = { "fp16", "bf16", "fp8", "fp4", NULL };
  static const char *const bases[] = { "log", "tflops_eq3", "tflops_eq7", "tokens_per_s", NULL };
  static const char *const confidences[] = { "high", "medium", "low", NULL };
  const char *name = deck->name;
  GError *local = NULL;
  const char *f[SIM_VALIDATE_N_ALL_COLUMNS];
  for (int c = 0; c < SIM_VALIDATE_N_ALL_COLUMNS; c++)
    f[c] = deck->phys[c] >= 0 ? g_ptr_array_index (fields, deck->phys[c]) : "";
  memset (r, 0, sizeof *r);
  r->line = line;
#define STR(col, dst) (dst) = g_string_chunk_insert_const (deck->strings, f[col])
#define INT(col, dst, lo, hi)                                                                         \
  if (!parse_int (f[col], lo, hi, &(dst)))                                                            \
  return bad_field (error, deck, line, col, f[col], "expected an integer in " #lo ".." #hi)
#define ENUM(col, dst, set, what)                                                                     \
  if (!one_of (f[col], set))                                                                          \
    return bad_field (error, deck, line, col, f[col], "expected one of " what);                       \
  STR (col, dst)
  for (int c = 0; c < SIM_VALIDATE_N_COLUMNS; c++)
    if (c != 21 && f[c][0] == '\0')
      return bad_field (error, deck, line, c, f[c], "empty; every column but nic_gbps_per_gpu is required");
  STR (0, r->id);
  STR (1, r->source);
  STR (2, r->model);
  ENUM (3, r->family, families, "gpt, llama, mixtral, deepseek, other");
  INT (4, r->layers, 1, 100000);
  INT (5, r->hidden, 1, 10000000);
  INT (6, r->heads, 1, 100000);
  INT (7, r->kv_heads, 1, 100000);
  INT (8, r->ffn_hidden, 1, 100000000);
  INT (9, r->vocab, 1, 100000000);
  INT (10, r->seq_len, 1, 100000000);
  ENUM (11, r->activation, activations, "gelu, swiglu");
  INT (12, r->moe_experts, 0, 1000000);
  INT (13, r->moe_top_k, 0, 100000);
  INT (14, r->moe_ffn_hidden, 0, 100000000);
  INT (15, r->global_batch_seqs, 1, 1000000000);
  INT (16, r->micro_batch, 1, 1000000);
  r->micro_batch_deck = r->micro_batch;
  INT (17, r->gpus, 1, 10000000);
  STR (18, r->gpu);
  INT (19, r->gpus_per_node, 1, 100000);
  INT (20, r->nvlink_domain, 1, 100000);
  if (f[21][0] != '\0' && (!parse_double (f[21], &r->nic_gbps_per_gpu) || r->nic_gbps_per_gpu <= 0))
    return bad_field (error, deck, line, 21, f[21], "expected a positive number of Gb/s or nothing");
  INT (22, r->tp, 1, 1000000);
  INT (23, r->pp, 1, 1000000);
  INT (24, r->vpp, 1, 1000000);
  INT (25, r->cp, 1, 1000000);
  INT (26, r->dp, 1, 10000000);
  INT (27, r->ep, 1, 1000000);
  int sp = 0, fsdp = 0;
  INT (28, sp, 0, 1);
  INT (29, r->zero, 0, 3);
  INT (30, fsdp, 0, 1);
  r->sequence_parallel = sp;
  r->fsdp = fsdp;
  ENUM (31, r->recompute, recomputes, "none, selective, full");
  ENUM (32, r->precision, precisions, "fp16, bf16, fp8, fp4");
  if (!parse_double (f[33], &r->step_time_s) || r->step_time_s <= 0)
    return bad_field (error, deck, line, 33, f[33], "expected a positive number of seconds");
  ENUM (34, r->step_time_basis, bases, "log, tflops_eq3, tflops_eq7, tokens_per_s");
  ENUM (35, r->confidence, confidences, "high, medium, low");
  STR (36, r->notes);
  ENUM (37, r->framework, frameworks, "megatron, nemo, deepspeed, fsdp2, composer, other (or empty)");
  if (!sim_validate_arch_parse (f[38], &r->arch, &local))
    {
      bad_field (error, deck, line, 38, f[38], local->message);
      g_error_free (local);
      return FALSE;
    }
#undef STR
#undef INT
#undef ENUM
  /* The invariants of DECK.md. The products are taken where they cannot overflow: tp·pp·cp·dp of
   * degrees up to 10^7 in double (exact whenever it can equal gpus), dp·micro_batch in gint64. */
  if ((double) r->tp * r->pp * r->cp * r->dp != r->gpus)
    return row_error (error, name, line, "tp·pp·cp·dp differs from gpus; fix the parallel degrees");
  if (r->global_batch_seqs % ((gint64) r->dp * r->micro_batch) != 0)
    return row_error (error, name, line, "global_batch_seqs is not divisible by dp·micro_batch");
  if (r->pp == 1 && r->vpp != 1)
    return row_error (error, name, line, "vpp must be 1 when pp is 1");
  if (r->tp == 1 && r->sequence_parallel)
    return row_error (error, name, line, "sequence_parallel must be 0 when tp is 1");
  if (r->fsdp && r->zero < 2)
    return row_error (error, name, line, "fsdp = 1 needs zero >= 2");
  if (r->heads % r->kv_heads != 0)
    return row_error (error, name, line, "heads is not a multiple of kv_heads");
  return TRUE;
}

SimValidateDeck *
sim_validate_deck_parse (const char *text, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail (text != NULL && name != NULL, NULL);
  g_autoptr (SimValidateDeck) deck = g_new0 (SimValidateDeck, 1);
  deck->name = g_strdup (name);
  deck->strings = g_string_chunk_new (4096);
  deck->rows = g_array_new (FALSE, TRUE, sizeof (SimValidateRow));
  Csv c = { text, text + length, name, 1 };
  if (length >= 3 && memcmp (text, "\xEF\xBB\xBF", 3) == 0)
    c.p += 3;
  g_autoptr (GPtrArray) fields = g_ptr_array_new_with_free_func (g_free);
  int line = 0;
  if (!csv_record (&c, fields, &line, error))
    {
      if (error && !*error)
        g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                     "%s:1: empty file; a deck starts with the header row of DECK.md", name);
      return NULL;
    }
  /* Columns are found by header name (DECK.md: "a reader finds columns by their header name"). */
  for (int k = 0; k < SIM_VALIDATE_N_ALL_COLUMNS; k++)
    deck->phys[k] = -1;
  for (guint i = 0; i < fields->len; i++)
    {
      const char *h = g_ptr_array_index (fields, i);
      int k = 0;
      while (k < SIM_VALIDATE_N_ALL_COLUMNS && strcmp (h, column_names[k]) != 0)
        k++;
      if (k == SIM_VALIDATE_N_ALL_COLUMNS)
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "%s:%d: column %u of the header is '%s', not a deck column (DECK.md lists them)", name,
                       line, i + 1, h);
          return NULL;
        }
      if (deck->phys[k] >= 0)
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "%s:%d: column %u of the header repeats '%s' (column %d)", name, line, i + 1, h,
                       deck->phys[k] + 1);
          return NULL;
        }
      deck->phys[k] = (int) i;
    }
  for (int k = 0; k < SIM_VALIDATE_N_COLUMNS; k++)
    if (deck->phys[k] < 0)
      {
        g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                     "%s:%d: the header lacks the required column '%s' (DECK.md)", name, line, column_names[k]);
        return NULL;
      }
  guint n_columns = fields->len;
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  for (;;)
    {
      GError *local = NULL;
      if (!csv_record (&c, fields, &line, &local))
        {
          if (local)
            {
              g_propagate_error (error, local);
              return NULL;
            }
          break;
        }
      if (fields->len == 1 && ((char *) g_ptr_array_index (fields, 0))[0] == '\0')
        continue; /* blank line */
      if (fields->len != n_columns)
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "%s:%d: column %u: the row has %u fields, the header %u; quote fields that hold commas",
                       name, line, MIN (fields->len, n_columns) + 1, fields->len, n_columns);
          return NULL;
        }
      SimValidateRow r;
      if (!convert_row (deck, fields, line, &r, error))
        return NULL;
      if (g_hash_table_contains (ids, r.id))
        {
          g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE,
                       "%s:%d: column 1 (id): '%s' repeats an earlier row's id; ids must be unique", name, line,
                       r.id);
          return NULL;
        }
      g_hash_table_add (ids, (gpointer) r.id);
      g_array_append_val (deck->rows, r);
    }
  return g_steal_pointer (&deck);
}

SimValidateDeck *
sim_validate_deck_load (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  GError *local = NULL;
  if (!g_file_get_contents (path, &text, &length, &local))
    {
      g_set_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_IO, "cannot read the deck: %s", local->message);
      g_error_free (local);
      return NULL;
    }
  return sim_validate_deck_parse (text, length, path, error);
}
