/* Stays ~1170 lines for now: not split in the layout move (issue 21) for time; the clean cut is the
 * deck reader (records, fields, rows) into its own file apart from row -> scenario and statistics. */
/* Validation against published runs (sim/calibrate/validate.h): deck parsing, row → scenario, the simulated
 * step per row and the error statistics.
 *
 * Error of a row: e = 100 · (predicted − measured) / measured. Statistics over the modelled rows:
 * MAPE = mean |e|, median |e|, max |e|; the same per source and per GPU type. Coverage = modelled
 * rows / all rows (skipped rows are listed with their reason, never dropped). No constant here is
 * a hardware figure: every figure comes from the scenario profiles, each with its source. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "sim/calibrate/validate.h"
#include "sim/report/report.h"
#include "sim/report/plots.h"

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
  /* The invariants of DECK.md. */
  if ((gint64) r->tp * r->pp * r->cp * r->dp != r->gpus)
    return row_error (error, name, line, "tp·pp·cp·dp differs from gpus; fix the parallel degrees");
  if (r->global_batch_seqs % (r->dp * r->micro_batch) != 0)
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

/* ---- Row → scenario ---------------------------------------------------------------------------- */

typedef struct {
  const char *token, *hardware, *fabric, *generation;
} GpuProfile;

/* The gpu token's hardware profile and the fabric its systems ship with (scenarios/fabrics/,
 * each figure sourced there). Tokens of DECK.md without a profile are skipped with the reason. */
static const GpuProfile gpu_profiles[] = {
  { "a100-sxm-80g", "hardware/a100-sxm-80g.ini", "fabrics/hdr200-rail-optimized.ini", "ampere" },
  { "h100-sxm", "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "hopper" },
  { "h200-sxm", "hardware/h200-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "hopper" },
  { "b200", "hardware/b200.ini", "fabrics/ndr400-rail-optimized.ini", "blackwell" },
  { "gb200", "hardware/gb200.ini", "fabrics/gb200-nvl72-eth800.ini", "blackwell" },
  { "gb300", "hardware/gb300.ini", "fabrics/gb200-nvl72-eth800.ini", "blackwell" },
};

const char *const sim_validate_uncalibrated_sets[] = {
  "hardware.gemm_insitu_fp16=1", "hardware.gemm_insitu_bf16=1", "hardware.gemm_insitu_fp8=1",
  "hardware.gemm_insitu_fp4=1", "hardware.mem_insitu=1", "hardware.launch_us=0", "calibration.band_log_sigma=0",
  "calibration.generation=none", NULL,
};

const char *
sim_validate_gpu_generation (const char *gpu)
{
  for (gsize i = 0; i < G_N_ELEMENTS (gpu_profiles); i++)
    if (strcmp (gpu, gpu_profiles[i].token) == 0)
      return gpu_profiles[i].generation;
  return NULL;
}

static gboolean
unsupported (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
unsupported (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_UNSUPPORTED, msg);
  return FALSE;
}

static void
add (GPtrArray *list, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
add (GPtrArray *list, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_ptr_array_add (list, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

static int
domain_used (const SimValidateRow *r)
{
  for (int d = MIN (r->nvlink_domain, r->gpus); d >= 1; d--)
    if (r->gpus % d == 0 && d % r->gpus_per_node == 0)
      return d;
  return r->nvlink_domain;
}

/* The row's settings as `group.key=value` strings after its scenario files (files[]: hardware
 * profile, fabric, then NULL or its TP-overlap settings, then NULL); NULL with the reason for a row
 * that cannot be modelled. Two rows with equal settings are the same simulation. */
#define ROW_FILES 4
static GPtrArray *
row_settings (const SimValidateRow *r, const char *files[ROW_FILES], GError **error)
{
  const GpuProfile *prof = NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (gpu_profiles); i++)
    if (strcmp (r->gpu, gpu_profiles[i].token) == 0)
      prof = &gpu_profiles[i];
  if (prof == NULL)
    {
      unsupported (error, "no hardware profile for gpu '%s' (scenarios/hardware/ has none)", r->gpu);
      return NULL;
    }
  gboolean llama_like = strcmp (r->family, "llama") == 0 || strcmp (r->family, "mixtral") == 0;
  gboolean other = strcmp (r->family, "other") == 0;
  const SimValidateArch *a = &r->arch;
  /* What the arch column may state that trainsim has no model of yet: named, never approximated. */
  const char *lacks = a->attention && (strcmp (a->attention, "mla") == 0 || strcmp (a->attention, "swa") == 0)
                          ? a->attention
                      : a->position && strcmp (a->position, "alibi") == 0 ? "alibi positions"
                      : a->mlp_act && strcmp (a->mlp_act, "geglu") == 0   ? "a GeGLU MLP"
                      : a->moe_shared_experts > 0                         ? "shared experts"
                      : a->moe_dense_layers > 0                           ? "leading dense layers"
                      : a->moe_layer_freq > 1                             ? "interleaved MoE layers"
                      : a->mtp_depth > 0                                  ? "MTP layers"
                      : a->encoder > 0                                    ? "an encoder"
                                                                          : NULL;
  if (lacks)
    {
      unsupported (error, "arch states %s, which trainsim does not model yet", lacks);
      return NULL;
    }
  if (!llama_like && !other && strcmp (r->family, "gpt") != 0)
    {
      unsupported (error, "family '%s': its architecture (e.g. MLA, shared experts, MTP) is not in the deck's "
                   "columns and trainsim has no preset for it", r->family);
      return NULL;
    }
  if (other && (a->norm == NULL || a->position == NULL))
    {
      unsupported (error, "family 'other' needs the arch column's norm and position to be modelled");
      return NULL;
    }
  files[0] = prof->hardware;
  files[1] = prof->fabric;
  files[2] = files[3] = NULL;
  GPtrArray *list = g_ptr_array_new_with_free_func (g_free);
  /* [model] */
  add (list, "model.layers=%d", r->layers);
  add (list, "model.hidden=%d", r->hidden);
  add (list, "model.heads=%d", r->heads);
  add (list, "model.kv_heads=%d", r->kv_heads);
  add (list, "model.ffn_hidden=%d", r->ffn_hidden);
  add (list, "model.vocab=%d", r->vocab);
  /* Squared ReLU (Nemotron-4) is a two-matrix MLP like GeLU; its elementwise kernel moves the same
   * bytes (DECK.md encodes it as gelu). */
  add (list, "model.activation=%s", r->activation);
  if (other)
    {
      /* Family 'other': what the arch column states, else the Megatron GPT defaults of its era for
       * Nemotron-style models (untied embeddings, no biases: Nemotron-4 340B report, arXiv 2406.11704). */
      add (list, "model.norm=%s", a->norm);
      add (list, "model.position=%s", strcmp (a->position, "learned") == 0 ? "learned" : "rope");
      add (list, "model.tied_embeddings=%s", a->tied_embeddings == 1 ? "true" : "false");
      add (list, "model.bias=false");
    }
  else if (llama_like)
    {
      add (list, "model.norm=rmsnorm");
      add (list, "model.position=rope");
      add (list, "model.tied_embeddings=%s", a->tied_embeddings == 1 ? "true" : "false");
      add (list, "model.bias=false");
    }
  else
    {
      add (list, "model.norm=layernorm");
      add (list, "model.position=learned");
      add (list, "model.tied_embeddings=%s",
           a->tied_embeddings >= 0 ? (a->tied_embeddings ? "true" : "false")
                                   : strstr (r->notes, "untied") ? "false" : "true");
      add (list, "model.bias=true");
    }
  if (r->moe_experts > 0)
    {
      add (list, "model.moe_experts=%d", r->moe_experts);
      add (list, "model.moe_top_k=%d", r->moe_top_k);
      add (list, "model.moe_ffn_hidden=%d", r->moe_ffn_hidden);
    }
  /* [cluster]: the row's sizes over the fabric file's defaults. */
  add (list, "cluster.gpus=%d", r->gpus);
  add (list, "cluster.gpus_per_node=%d", r->gpus_per_node);
  add (list, "cluster.nvlink_domain=%d", r->nvlink_domain);
  add (list, "cluster.gpus_per_domain_used=%d", domain_used (r));
  if (r->nic_gbps_per_gpu > 0)
    add (list, "cluster.nic_Gbps=%.17g", r->nic_gbps_per_gpu);
  /* [parallel] */
  add (list, "parallel.tp=%d", r->tp);
  add (list, "parallel.pp=%d", r->pp);
  add (list, "parallel.vpp=%d", r->vpp);
  add (list, "parallel.cp=%d", r->cp);
  add (list, "parallel.ep=%d", r->ep);
  add (list, "parallel.sp=%s", r->sequence_parallel ? "true" : "false");
  add (list, "parallel.zero=%d", r->zero);
  add (list, "parallel.fsdp=%s", r->fsdp ? "true" : "false");
  add (list, "parallel.micro_batch=%d", r->micro_batch);
  add (list, "parallel.global_batch=%d", r->global_batch_seqs);
  add (list, "parallel.recompute=%s", r->recompute);
  add (list, "parallel.matmul_dtype=%s", r->precision);
  add (list, "parallel.param_dtype=%s", strcmp (r->precision, "fp16") == 0 ? "fp16" : "bf16");
  add (list, "parallel.dp_overlap=%s", r->zero >= 1 ? "true" : "false");
  gboolean tp_overlap = r->sequence_parallel && !strstr (r->notes, "TP comm overlap off");
  add (list, "parallel.tp_comm_overlap=%s", tp_overlap ? "true" : "false");
  /* NVIDIA's MLPerf v3.1 GPT-3 code picks its userbuffers settings by GPU, TP, PP and micro-batch
   * (conf/custom.yaml: conf/tp_overlap/h100tp4pp8mbs1.yaml for these rows); the Azure+NVIDIA entry
   * runs the same code. Other rows run TE's defaults (model/tpoverlap.h). */
  if (tp_overlap && strstr (r->source, "MLPerf Training v3.1") != NULL && strstr (r->model, "GPT-3") != NULL
      && strcmp (r->gpu, "h100-sxm") == 0 && r->tp == 4 && r->pp == 8 && r->micro_batch == 1)
    files[2] = "tp-overlap/h100-tp4-pp8-mbs1.ini";
  /* Azure's MLPerf v6.0 Llama 3.1 405B submission sets NCCL_NVLS_ENABLE=0 (its
   * config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh), as the 405B run scenario does. */
  if (strstr (r->source, "MLPerf Training v6.0") != NULL && strstr (r->id, "azure") != NULL)
    add (list, "hardware.nvls=false");
  /* The Megatron-LM README table was measured with Megatron-Core r0.8.0 (July 2024), before TE 2.0
   * changed the userbuffers defaults. */
  if (tp_overlap && strstr (r->source, "Megatron-Core r0.8.0") != NULL)
    add (list, "tp_overlap.defaults=te1");
  /* Narayanan et al. SC21 ran 2021 Megatron-LM (examples/sc21: container pytorch:20.12): core
   * attention unfused (baddbmm scores, FusedScaleMaskSoftmax, separate attention dropout, bmm;
   * megatron/model/transformer.py ParallelAttention; FlashAttention, arXiv 2205.14135, came in
   * 2022) and dropout on: --attention-dropout and --hidden-dropout default 0.1 in
   * megatron/arguments.py and examples/sc21/CONFIG.sh does not override them. The ZeRO-3 rows of
   * that table are assumed to run the same GPT model code under DeepSpeed. */
  if (strstr (r->source, "Narayanan et al. SC21") != NULL)
    {
      add (list, "parallel.unfused_attention=true");
      add (list, "parallel.dropout=true");
      /* Its p2p_communication._communicate waits for batch_isend_irecv, then torch.cuda.synchronize()
       * ("to protect against race condition"): a pipeline send blocks the stage until delivered. */
      add (list, "parallel.pp_blocking=true");
      /* Its ZeRO-3 rows ran DeepSpeed of early 2021 (<= 0.3.16): per-parameter all-gathers after a
       * torch.cuda.synchronize() each ("the async version is not async at all", DeepSpeed PR #1188,
       * June 2021) and stage-3 gradient reduction on the compute stream (overlap_comm off). */
      if (r->zero >= 3 && !r->fsdp)
        add (list, "parallel.zero3_blocking=true");
      /* examples/sc21/CONFIG.sh passes --fp16 without --accumulate-allreduce-grads-in-fp32, so
       * gradients are accumulated and reduced in fp16, and the measurements predate Megatron's
       * --gradient-accumulation-fusion. run_table_1.sh runs the PP = 1 models with DDP=torch
       * (autograd accumulates in place from the second micro-batch; torch DDP's bucketed
       * all-reduce overlaps the last backward, Megatron's schedule running the others under
       * no_sync) and the rest with DDP=local (main_grad.add_ after every wgrad, all-reduce after
       * the backward). DeepSpeed's ZeRO-3 accumulates in param.grad as autograd does. */
      add (list, "parallel.grad_dtype=fp16");
      if (r->zero >= 3 || r->pp == 1)
        add (list, "parallel.grad_accum=autograd");
      else
        add (list, "parallel.grad_accum=add");
      if (r->zero == 0 && r->pp == 1)
        add (list, "parallel.dp_overlap=true");
    }
  int chunks = r->pp * r->vpp;
  if (r->pp > 1 && r->layers % chunks != 0 && (r->layers + 2) % chunks == 0)
    add (list, "parallel.pp_embed_loss_layers=true");
  /* [training] */
  add (list, "training.seq_len=%d", r->seq_len);
  return list;
}

SimScenario *
sim_validate_row_scenario (const SimValidateRow *r, const SimValidateOptions *options, GError **error)
{
  const char *files[ROW_FILES];
  g_autoptr (GPtrArray) list = row_settings (r, files, error);
  if (list == NULL)
    return NULL;
  g_autoptr (SimScenario) sc = sim_scenario_new ();
  for (int i = 0; files[i] != NULL; i++)
    if (!sim_scenario_add_file (sc, files[i], error))
      return NULL;
  g_autofree char *name = g_strdup_printf ("scenario.name=%s", r->id);
  g_autofree char *model = g_strdup_printf ("model.name=%.63s", r->model);
  const char *named[] = { name, model };
  for (int i = 0; i < 2; i++)
    if (!sim_scenario_add_set (sc, named[i], error))
      {
        g_prefix_error (error, "row value rejected: ");
        return NULL;
      }
  for (guint i = 0; i < list->len; i++)
    if (!sim_scenario_add_set (sc, g_ptr_array_index (list, i), error))
      {
        g_prefix_error (error, "row value rejected: ");
        return NULL;
      }
  /* Uncalibrated: the profile's datasheet and microbenchmark figures alone (its included
   * scenarios/calibration/ layer neutralized). */
  for (int i = 0; options && options->uncalibrated && sim_validate_uncalibrated_sets[i]; i++)
    if (!sim_scenario_add_set (sc, sim_validate_uncalibrated_sets[i], error))
      return NULL;
  if (options && options->layers)
    for (int i = 0; options->layers[i]; i++)
      if (!sim_scenario_add_file (sc, options->layers[i], error))
        return NULL;
  if (options && options->sets)
    for (int i = 0; options->sets[i]; i++)
      if (!sim_scenario_add_set (sc, options->sets[i], error))
        return NULL;
  if (!sim_scenario_resolve (sc, error))
    return NULL;
  return g_steal_pointer (&sc);
}

/* ---- Running ----------------------------------------------------------------------------------- */

void
sim_validate_result_clear (SimValidateResult *result)
{
  g_clear_pointer (&result->reason, g_free);
}

/* Profile keys the kernel-time model needs (sim_scenario_check_compute: the GEMM efficiency of the
 * row's dtypes, attn_eff, mem_eff): without them the row is skipped with the missing key named. */
static gboolean
profile_complete (const SimScenario *sc, const SimValidateRow *r, GError **error)
{
  g_autoptr (GError) missing = NULL;
  if (sim_scenario_check_compute (sc, &missing))
    return TRUE;
  return unsupported (error, "profile of gpu '%s' lacks a sourced figure: %s", r->gpu, missing->message);
}

void
sim_validate_run_row (const SimValidateRow *row, const SimValidateOptions *options, SimValidateResult *res)
{
  memset (res, 0, sizeof *res);
  res->measured_s = row->step_time_s;
  res->loso_pct = NAN;
  gint64 t0 = g_get_monotonic_time ();
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_validate_row_scenario (row, options, &error);
  SimRunnerPrediction pred;
  if (sc != NULL && profile_complete (sc, row, &error))
    {
      SimPredictOptions po = { 0 };
      po.band_level = options ? options->band_level : 0;
      sim_runner_options_init (&po.run);
      po.run.full = options ? options->full : FALSE;
      /* Every deck row ran: the memory model may only be found wrong by it, never refuse it. */
      po.run.memory_advisory = TRUE;
      po.weak = TRUE;
      if (sim_runner_predict (sc, &po, &pred, &error))
        {
          res->status = SIM_VALIDATE_OK;
          res->predicted_s = pred.step_s;
          res->error_pct = 100.0 * (pred.step_s - row->step_time_s) / row->step_time_s;
          memcpy (res->breakdown_s, pred.step.breakdown_s, sizeof res->breakdown_s);
          memcpy (res->comm_busy_s, pred.step.comm_busy_s, sizeof res->comm_busy_s);
          res->mfu = pred.step.mfu;
          res->memory_gib = pred.step.memory_bytes / (1024.0 * 1024.0 * 1024.0);
          res->memory_over = pred.step.memory_over;
          res->band_lo_s = pred.step_lo_s;
          res->band_hi_s = pred.step_hi_s;
        }
    }
  if (error != NULL)
    {
      res->status = SIM_VALIDATE_SKIPPED;
      res->reason = g_strdup (error->message);
      /* One line: the first line of the message. */
      char *nl = strchr (res->reason, '\n');
      if (nl)
        *nl = '\0';
      g_error_free (error);
    }
  res->wall_s = (double) (g_get_monotonic_time () - t0) / 1e6;
}

typedef struct {
  const SimValidateDeck *deck;
  const SimValidateOptions *options;
  SimValidateResult *results;
  GMutex lock;
  guint done;
} Job;

static void
job_progress (Job *job, guint i)
{
  if (!job->options || !job->options->progress)
    return;
  g_mutex_lock (&job->lock);
  job->done++;
  fprintf (stderr, "[%u/%u] %s: %.1f s\n", job->done, sim_validate_deck_n_rows (job->deck),
           sim_validate_deck_row (job->deck, i)->id, job->results[i].wall_s);
  g_mutex_unlock (&job->lock);
}

static void
job_run (gpointer data, gpointer user)
{
  Job *job = user;
  guint i = GPOINTER_TO_UINT (data) - 1;
  sim_validate_run_row (sim_validate_deck_row (job->deck, i), job->options, &job->results[i]);
  job_progress (job, i);
}

char *
sim_validate_row_command (const SimValidateRow *r, GError **error)
{
  g_return_val_if_fail (r != NULL, NULL);
  const char *files[ROW_FILES];
  g_autoptr (GPtrArray) list = row_settings (r, files, error);
  if (list == NULL)
    return NULL;
  GString *cmd = g_string_new ("trainsim run");
  for (int i = 0; files[i] != NULL; i++)
    g_string_append_printf (cmd, " %s", files[i]);
  g_autofree char *name = g_shell_quote (r->id);
  g_autofree char *model = g_strdup_printf ("model.name=%.63s", r->model);
  g_autofree char *qmodel = g_shell_quote (model);
  g_string_append_printf (cmd, " --set scenario.name=%s --set %s", name, qmodel);
  for (guint i = 0; i < list->len; i++)
    {
      g_autofree char *q = g_shell_quote (g_ptr_array_index (list, i));
      g_string_append_printf (cmd, " \\\n  --set %s", q);
    }
  return g_string_free (cmd, FALSE);
}

/* A row's simulation identity: its profile files and settings (NULL if it cannot be modelled). */
static char *
row_key (const SimValidateRow *r)
{
  const char *files[ROW_FILES];
  g_autoptr (GPtrArray) list = row_settings (r, files, NULL);
  if (list == NULL)
    return NULL;
  for (int i = ROW_FILES - 2; i >= 0; i--)
    if (files[i] != NULL)
      g_ptr_array_insert (list, 0, g_strdup (files[i]));
  g_ptr_array_add (list, NULL);
  return g_strjoinv ("\n", (char **) list->pdata);
}

/* The runner keeps no mutable static state (each run owns its engine, topology and programs) and
 * the scenario loader registers its embedded resources once under g_once, so rows run in threads.
 * Rows whose scenarios are identical (e.g. the same MLPerf case on two clusters) are simulated once
 * and share the prediction; each keeps its own measurement. */
void
sim_validate_run (const SimValidateDeck *deck, const SimValidateOptions *options, SimValidateResult *results)
{
  guint n = sim_validate_deck_n_rows (deck);
  int threads = options && options->threads > 0 ? options->threads : (int) g_get_num_processors ();
  threads = MAX (1, MIN (threads, (int) MAX (n, 1)));
  g_autofree int *same_as = g_new (int, MAX (n, 1));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < n; i++)
    {
      char *key = row_key (sim_validate_deck_row (deck, i));
      gpointer first = NULL;
      same_as[i] = -1;
      if (key == NULL)
        continue;
      if (g_hash_table_lookup_extended (seen, key, NULL, &first))
        {
          same_as[i] = GPOINTER_TO_INT (first);
          g_free (key);
        }
      else
        g_hash_table_insert (seen, key, GINT_TO_POINTER ((int) i));
    }
  Job job = { deck, options, results };
  g_mutex_init (&job.lock);
  GThreadPool *pool = threads > 1 ? g_thread_pool_new (job_run, &job, threads, TRUE, NULL) : NULL;
  /* Largest jobs first, so a big row does not start last. */
  g_autofree guint *order = g_new (guint, MAX (n, 1));
  g_autofree double *cost = g_new (double, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      order[i] = i;
      cost[i] = (double) r->pp * r->vpp * r->layers * (r->global_batch_seqs / (r->dp * r->micro_batch));
    }
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && cost[order[j]] > cost[order[j - 1]]; j--)
      {
        guint t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  for (guint i = 0; i < n; i++)
    {
      if (same_as[order[i]] >= 0)
        continue;
      if (pool)
        g_thread_pool_push (pool, GUINT_TO_POINTER (order[i] + 1), NULL);
      else
        job_run (GUINT_TO_POINTER (order[i] + 1), &job);
    }
  if (pool)
    g_thread_pool_free (pool, FALSE, TRUE);
  for (guint i = 0; i < n; i++)
    if (same_as[i] >= 0)
      {
        const SimValidateResult *src = &results[same_as[i]];
        const SimValidateRow *r = sim_validate_deck_row (deck, i);
        results[i] = *src;
        results[i].reason = g_strdup (src->reason);
        results[i].measured_s = r->step_time_s;
        results[i].error_pct = 100.0 * (src->predicted_s - r->step_time_s) / r->step_time_s;
        results[i].wall_s = 0;
        job_progress (&job, i);
      }
  g_mutex_clear (&job.lock);
}

/* ---- Statistics -------------------------------------------------------------------------------- */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

void
sim_validate_stats (const double *v, guint n, SimValidateStats *out)
{
  memset (out, 0, sizeof *out);
  out->n = n;
  out->max_index = -1;
  if (n == 0)
    {
      out->mape_pct = out->median_abs_pct = out->max_abs_pct = NAN;
      return;
    }
  double sum = 0;
  for (guint i = 0; i < n; i++)
    {
      sum += v[i];
      if (out->max_index < 0 || v[i] > out->max_abs_pct)
        {
          out->max_abs_pct = v[i];
          out->max_index = (int) i;
        }
    }
  out->mape_pct = sum / n;
  g_autofree double *s = g_memdup2 (v, n * sizeof *v);
  qsort (s, n, sizeof *s, cmp_double);
  out->median_abs_pct = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* ---- Report ------------------------------------------------------------------------------------ */

typedef struct {
  const char *key;
  guint total;
  GArray *abs;      /* double: |error| of the modelled rows */
  GArray *loso;     /* double: |leave-one-source-out error| where cross-validated */
  guint banded, in_band;
} Group;

static Group *
group_get (GPtrArray *groups, const char *key)
{
  for (guint i = 0; i < groups->len; i++)
    {
      Group *g = g_ptr_array_index (groups, i);
      if (strcmp (g->key, key) == 0)
        return g;
    }
  Group *g = g_new0 (Group, 1);
  g->key = key;
  g->abs = g_array_new (FALSE, FALSE, sizeof (double));
  g->loso = g_array_new (FALSE, FALSE, sizeof (double));
  g_ptr_array_add (groups, g);
  return g;
}

static void
group_free (gpointer p)
{
  Group *g = p;
  g_array_free (g->abs, TRUE);
  g_array_free (g->loso, TRUE);
  g_free (g);
}

/* by = 0 all, 1 source, 2 gpu */
static GPtrArray *
groups_by (const SimValidateDeck *deck, const SimValidateResult *res, int by)
{
  GPtrArray *groups = g_ptr_array_new_with_free_func (group_free);
  for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      Group *g = group_get (groups, by == 0 ? "all" : by == 1 ? r->source : r->gpu);
      g->total++;
      if (res[i].status == SIM_VALIDATE_OK)
        {
          double a = fabs (res[i].error_pct);
          g_array_append_val (g->abs, a);
          if (res[i].band_hi_s > 0)
            {
              g->banded++;
              g->in_band += res[i].measured_s >= res[i].band_lo_s && res[i].measured_s <= res[i].band_hi_s;
            }
        }
      if (isfinite (res[i].loso_pct))
        {
          double a = fabs (res[i].loso_pct);
          g_array_append_val (g->loso, a);
        }
    }
  return groups;
}

/* The largest component of the breakdown besides compute. */
static SimBreakdown
main_loss (const SimValidateResult *res)
{
  SimBreakdown best = SIM_BD_TP;
  for (int b = SIM_BD_TP; b < SIM_BD_COUNT; b++)
    if (res->breakdown_s[b] > res->breakdown_s[best])
      best = b;
  return best;
}

static void
write_stats_line (FILE *out, const char *label, const Group *g)
{
  SimValidateStats st;
  sim_validate_stats ((const double *) g->abs->data, g->abs->len, &st);
  if (st.n == 0)
    fprintf (out, "  %3u/%-3u modelled  %-41s  %s\n", st.n, g->total, "", label);
  else
    {
      fprintf (out, "  %3u/%-3u modelled  MAPE %6.1f%%  median %6.1f%%  max %6.1f%%", st.n, g->total, st.mape_pct,
               st.median_abs_pct, st.max_abs_pct);
      SimValidateStats lo;
      sim_validate_stats ((const double *) g->loso->data, g->loso->len, &lo);
      if (lo.n > 0)
        fprintf (out, "  LOSO MAPE %6.1f%% max %6.1f%%", lo.mape_pct, lo.max_abs_pct);
      if (g->banded > 0)
        fprintf (out, "  in band %3.0f%%", 100.0 * g->in_band / g->banded);
      fprintf (out, "  %s\n", label);
    }
}

static void
write_text (FILE *out, const SimValidateDeck *deck, const SimValidateResult *res)
{
  guint n = sim_validate_deck_n_rows (deck);
  fprintf (out, "%-52s %11s %11s %8s %8s %-20s %s\n", "id", "predicted_s", "measured_s", "error_%", "LOSO_%",
           "band_s", "breakdown: compute; largest loss; MFU");
  for (guint i = 0; i < n; i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      const SimValidateResult *x = &res[i];
      if (x->status != SIM_VALIDATE_OK)
        {
          fprintf (out, "%-52s %11s %11.4f %8s  SKIPPED: %s\n", r->id, "-", r->step_time_s, "-", x->reason);
          continue;
        }
      SimBreakdown b = main_loss (x);
      g_autofree char *band = x->band_hi_s > 0 ? g_strdup_printf ("%.4g–%.4g%s", x->band_lo_s, x->band_hi_s,
                                                                 x->measured_s < x->band_lo_s
                                                                         || x->measured_s > x->band_hi_s
                                                                     ? " OUT"
                                                                     : "")
                                               : g_strdup ("-");
      g_autofree char *loso = isfinite (x->loso_pct) ? g_strdup_printf ("%+.1f", x->loso_pct) : g_strdup ("-");
      fprintf (out, "%-52s %11.4f %11.4f %+8.1f %8s %-20s compute %.3f s; %s %.3f s (%.0f%%); MFU %.1f%%%s\n", r->id,
               x->predicted_s, x->measured_s, x->error_pct, loso, band, x->breakdown_s[SIM_BD_COMPUTE], sim_breakdown_name (b),
               x->breakdown_s[b], 100.0 * x->breakdown_s[b] / x->predicted_s, 100.0 * x->mfu,
               x->memory_over ? "; memory model over the GPU's memory" : "");
    }
  const char *titles[] = { "overall", "per source", "per GPU type" };
  for (int by = 0; by < 3; by++)
    {
      g_autoptr (GPtrArray) groups = groups_by (deck, res, by);
      fprintf (out, "\n%s (|error|: mean = MAPE, median, max)\n", titles[by]);
      for (guint i = 0; i < groups->len; i++)
        {
          const Group *g = g_ptr_array_index (groups, i);
          write_stats_line (out, g->key, g);
        }
    }
  g_autoptr (GPtrArray) all = groups_by (deck, res, 0);
  const Group *g = g_ptr_array_index (all, 0);
  fprintf (out, "\ncoverage %u/%u rows modelled (%.0f%%); %u skipped\n", g->abs->len, n,
           n ? 100.0 * g->abs->len / n : 0.0, n - g->abs->len);
  guint over = 0;
  for (guint i = 0; i < n; i++)
    over += res[i].status == SIM_VALIDATE_OK && res[i].memory_over;
  if (over > 0)
    fprintf (out, "memory model: %u row(s) ran but are predicted above their GPU's memory (simulated anyway)\n",
             over);
  double wall = 0;
  for (guint i = 0; i < n; i++)
    wall += res[i].wall_s;
  fprintf (out, "simulation time summed over rows %.1f s\n", wall);
}

static void
write_tsv (FILE *out, const SimValidateDeck *deck, const SimValidateResult *res)
{
  fprintf (out, "id\tsource\tgpu\tstatus\tpredicted_s\tmeasured_s\terror_pct\tmfu");
  for (int b = 0; b < SIM_BD_COUNT; b++)
    fprintf (out, "\t%s_s", sim_breakdown_name (b));
  fprintf (out, "\twall_s\treason\n");
  for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      const SimValidateResult *x = &res[i];
      gboolean ok = x->status == SIM_VALIDATE_OK;
      fprintf (out, "%s\t%s\t%s\t%s\t", r->id, r->source, r->gpu, ok ? "ok" : "skipped");
      if (ok)
        fprintf (out, "%.6g\t%.6g\t%.3f\t%.4f", x->predicted_s, x->measured_s, x->error_pct, x->mfu);
      else
        fprintf (out, "NaN\t%.6g\tNaN\tNaN", x->measured_s);
      for (int b = 0; b < SIM_BD_COUNT; b++)
        fprintf (out, ok ? "\t%.6g" : "\tNaN", x->breakdown_s[b]);
      fprintf (out, "\t%.2f\t%s\n", x->wall_s, ok ? "" : x->reason);
    }
  for (int by = 0; by < 3; by++)
    {
      g_autoptr (GPtrArray) groups = groups_by (deck, res, by);
      for (guint i = 0; i < groups->len; i++)
        {
          const Group *g = g_ptr_array_index (groups, i);
          SimValidateStats st;
          sim_validate_stats ((const double *) g->abs->data, g->abs->len, &st);
          fprintf (out, "# summary\t%s\t%s\tmodelled=%u\ttotal=%u\tmape_pct=%.3f\tmedian_abs_error_pct=%.3f\t"
                        "max_abs_error_pct=%.3f\n",
                   by == 0 ? "all" : by == 1 ? "source" : "gpu", g->key, st.n, g->total, st.mape_pct,
                   st.median_abs_pct, st.max_abs_pct);
        }
    }
}

static void
json_double_or_null (JsonBuilder *b, const char *name, gboolean known, double v)
{
  json_builder_set_member_name (b, name);
  if (known)
    json_builder_add_double_value (b, v);
  else
    json_builder_add_null_value (b);
}

static void
json_stats (JsonBuilder *b, const Group *g)
{
  SimValidateStats st;
  sim_validate_stats ((const double *) g->abs->data, g->abs->len, &st);
  json_builder_set_member_name (b, "modeled");
  json_builder_add_int_value (b, st.n);
  json_builder_set_member_name (b, "total");
  json_builder_add_int_value (b, g->total);
  if (st.n > 0)
    {
      json_builder_set_member_name (b, "mape_pct");
      json_builder_add_double_value (b, st.mape_pct);
      json_builder_set_member_name (b, "median_abs_error_pct");
      json_builder_add_double_value (b, st.median_abs_pct);
      json_builder_set_member_name (b, "max_abs_error_pct");
      json_builder_add_double_value (b, st.max_abs_pct);
    }
  else
    {
      const char *names[] = { "mape_pct", "median_abs_error_pct", "max_abs_error_pct" };
      for (int i = 0; i < 3; i++)
        {
          json_builder_set_member_name (b, names[i]);
          json_builder_add_null_value (b);
        }
    }
  SimValidateStats lo;
  sim_validate_stats ((const double *) g->loso->data, g->loso->len, &lo);
  json_double_or_null (b, "loso_mape_pct", lo.n > 0, lo.mape_pct);
  json_double_or_null (b, "loso_max_abs_error_pct", lo.n > 0, lo.max_abs_pct);
  json_double_or_null (b, "band_coverage_pct", g->banded > 0, 100.0 * g->in_band / MAX (g->banded, 1));
}

static void
write_json (FILE *out, const SimValidateDeck *deck, const SimValidateResult *res, const char *argv_text)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "tool");
  json_builder_add_string_value (b, "trainsim validate " PACKAGE_VERSION);
  json_builder_set_member_name (b, "command");
  json_builder_add_string_value (b, argv_text ? argv_text : "");
  json_builder_set_member_name (b, "deck");
  json_builder_add_string_value (b, sim_validate_deck_name (deck));
  json_builder_set_member_name (b, "rows");
  json_builder_begin_array (b);
  for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      const SimValidateResult *x = &res[i];
      gboolean ok = x->status == SIM_VALIDATE_OK;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, r->id);
      json_builder_set_member_name (b, "source");
      json_builder_add_string_value (b, r->source);
      json_builder_set_member_name (b, "gpu");
      json_builder_add_string_value (b, r->gpu);
      json_builder_set_member_name (b, "status");
      json_builder_add_string_value (b, ok ? "ok" : "skipped");
      json_builder_set_member_name (b, "measured_s");
      json_builder_add_double_value (b, x->measured_s);
      json_builder_set_member_name (b, "predicted_s");
      if (ok)
        json_builder_add_double_value (b, x->predicted_s);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "error_pct");
      if (ok)
        json_builder_add_double_value (b, x->error_pct);
      else
        json_builder_add_null_value (b);
      if (ok)
        {
          json_builder_set_member_name (b, "mfu");
          json_builder_add_double_value (b, x->mfu);
          json_double_or_null (b, "band_lo_s", x->band_hi_s > 0, x->band_lo_s);
          json_double_or_null (b, "band_hi_s", x->band_hi_s > 0, x->band_hi_s);
          json_double_or_null (b, "loso_error_pct", isfinite (x->loso_pct), x->loso_pct);
          json_builder_set_member_name (b, "memory_gib");
          json_builder_add_double_value (b, x->memory_gib);
          json_builder_set_member_name (b, "memory_over");
          json_builder_add_boolean_value (b, x->memory_over);
          json_builder_set_member_name (b, "breakdown_s");
          json_builder_begin_object (b);
          for (int k = 0; k < SIM_BD_COUNT; k++)
            {
              json_builder_set_member_name (b, sim_breakdown_name (k));
              json_builder_add_double_value (b, x->breakdown_s[k]);
            }
          json_builder_end_object (b);
          json_builder_set_member_name (b, "comm_busy_s");
          json_builder_begin_object (b);
          for (int k = SIM_BD_TP; k <= SIM_BD_EP; k++)
            {
              json_builder_set_member_name (b, sim_breakdown_name (k));
              json_builder_add_double_value (b, x->comm_busy_s[k]);
            }
          json_builder_end_object (b);
        }
      else
        {
          json_builder_set_member_name (b, "reason");
          json_builder_add_string_value (b, x->reason);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  g_autoptr (GPtrArray) all = groups_by (deck, res, 0);
  json_stats (b, g_ptr_array_index (all, 0));
  for (int by = 1; by < 3; by++)
    {
      g_autoptr (GPtrArray) groups = groups_by (deck, res, by);
      json_builder_set_member_name (b, by == 1 ? "per_source" : "per_gpu");
      json_builder_begin_array (b);
      for (guint i = 0; i < groups->len; i++)
        {
          const Group *g = g_ptr_array_index (groups, i);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, by == 1 ? "source" : "gpu");
          json_builder_add_string_value (b, g->key);
          json_stats (b, g);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  sim_report_print_json (out, b);
}

void
sim_validate_write (FILE *out, const SimValidateDeck *deck, const SimValidateResult *results,
                    SimValidateFormat format, const char *argv_text)
{
  switch (format)
    {
    case SIM_VALIDATE_TSV:
      fprintf (out, "# tool\ttrainsim validate %s\n# command\t%s\n# deck\t%s\n", PACKAGE_VERSION,
               argv_text ? argv_text : "", sim_validate_deck_name (deck));
      write_tsv (out, deck, results);
      break;
    case SIM_VALIDATE_JSON:
      write_json (out, deck, results, argv_text);
      break;
    case SIM_VALIDATE_TEXT:
    default:
      fprintf (out, "trainsim validate %s: %s (%u rows)\n\n", PACKAGE_VERSION, sim_validate_deck_name (deck),
               sim_validate_deck_n_rows (deck));
      write_text (out, deck, results);
      break;
    }
}

gboolean
sim_validate_plot (const SimValidateDeck *deck, const SimValidateResult *res, const char *script, const char *png,
                   GError **error)
{
  if (!g_file_test (script, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "plot script %s not found; set TRAINSIM_PLOTS_DIR to the directory holding validate.gp", script);
      return FALSE;
    }
  g_autofree char *data_path = g_strconcat (png, ".tsv", NULL);
  g_autoptr (GString) data = g_string_new ("# trainsim validate: predicted vs measured step time per GPU type\n");
  g_autoptr (GPtrArray) gpus = groups_by (deck, res, 2);
  for (guint k = 0; k < gpus->len; k++)
    {
      const Group *g = g_ptr_array_index (gpus, k);
      if (g->abs->len == 0)
        continue;
      g_string_append_printf (data, "%s\n", g->key);
      for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
        {
          const SimValidateRow *r = sim_validate_deck_row (deck, i);
          if (res[i].status == SIM_VALIDATE_OK && strcmp (r->gpu, g->key) == 0)
            g_string_append_printf (data, "%.6g\t%.6g\t%s\n", res[i].measured_s, res[i].predicted_s, r->id);
        }
      g_string_append (data, "\n\n");
    }
  if (!g_file_set_contents (data_path, data->str, -1, error))
    return FALSE;
  return sim_plots_gnuplot (script, data_path, png, NULL, error);
}
