/* Strict reader for the [model] group of a trainsim key file (see shape.h). The syntax is the
 * subset of GLib key files that scenarios use: `[group]` lines, `key = value` lines, `#` comment
 * lines, blank lines. Values have no inline comments (GKeyFile takes the rest of the line). */
#include "calib/trainer/shape.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
trainer_fail (char *err, size_t err_len, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  if (err && err_len)
    vsnprintf (err, err_len, fmt, ap);
  va_end (ap);
  return -1;
}

static char *
trim (char *s)
{
  while (isspace ((unsigned char) *s))
    s++;
  size_t n = strlen (s);
  while (n > 0 && isspace ((unsigned char) s[n - 1]))
    s[--n] = '\0';
  return s;
}

static int
parse_int (const char *v, int *out)
{
  char *end;
  errno = 0;
  long x = strtol (v, &end, 10);
  if (errno || end == v || *end != '\0' || x < -2147483647L || x > 2147483647L)
    return -1;
  *out = (int) x;
  return 0;
}

static int
parse_double (const char *v, double *out)
{
  char *end;
  errno = 0;
  double x = strtod (v, &end);
  if (errno || end == v || *end != '\0')
    return -1;
  *out = x;
  return 0;
}

static int
parse_bool (const char *v, int *out)
{
  if (!strcmp (v, "true") || !strcmp (v, "1"))
    *out = 1;
  else if (!strcmp (v, "false") || !strcmp (v, "0"))
    *out = 0;
  else
    return -1;
  return 0;
}

static int
parse_choice (const char *v, const char *one, const char *zero, int *out)
{
  if (!strcmp (v, one))
    *out = 1;
  else if (!strcmp (v, zero))
    *out = 0;
  else
    return -1;
  return 0;
}

void
trainer_shape_defaults (TrainerShape *s)
{
  memset (s, 0, sizeof *s);
  s->vocab_multiple = 128;
  s->rope_theta = 10000.0;
}

/* Every key the [model] group may hold, with how to store it. MoE keys are accepted so a file is
 * never misread, and trainer_shape_finish refuses MoE models (the trainer is dense only). */
/* K_BEYOND: an integer or boolean key of an architecture the trainer does not build; a value other
 * than 0 / false makes trainer_shape_finish refuse the file by that key's name. */
enum { K_INT, K_DOUBLE, K_BOOL, K_STR, K_ACT, K_NORM, K_POS, K_BEYOND };
typedef struct { const char *key; int kind; size_t off; int required; } Key;
#define F(f) offsetof (TrainerShape, f)
static const Key keys[] = {
  { "name", K_STR, F (name), 0 },
  { "layers", K_INT, F (layers), 1 },
  { "hidden", K_INT, F (hidden), 1 },
  { "heads", K_INT, F (heads), 1 },
  { "kv_heads", K_INT, F (kv_heads), 1 },
  { "head_dim", K_INT, F (head_dim), 0 },
  { "ffn_hidden", K_INT, F (ffn_hidden), 1 },
  { "vocab", K_INT, F (vocab), 1 },
  { "vocab_multiple", K_INT, F (vocab_multiple), 0 },
  { "max_positions", K_INT, F (max_positions), 0 },
  { "activation", K_ACT, F (swiglu), 1 },
  { "norm", K_NORM, F (rmsnorm), 1 },
  { "position", K_POS, F (rope), 1 },
  { "tied_embeddings", K_BOOL, F (tied_embeddings), 0 },
  { "bias", K_BOOL, F (bias), 0 },
  { "moe_experts", K_INT, F (moe_experts), 0 },
  { "moe_top_k", K_INT, (size_t) -1, 0 },
  { "moe_ffn_hidden", K_INT, (size_t) -1, 0 },
  { "moe_shared_experts", K_INT, (size_t) -1, 0 },
  { "moe_capacity_factor", K_DOUBLE, (size_t) -1, 0 },
  { "moe_imbalance", K_DOUBLE, (size_t) -1, 0 },
  { "moe_layer_freq", K_INT, (size_t) -1, 0 },
  { "moe_layer_offset", K_INT, (size_t) -1, 0 },
  { "moe_dense_layers", K_INT, (size_t) -1, 0 },
  { "moe_node_limit", K_INT, (size_t) -1, 0 },
  { "encoder", K_BEYOND, (size_t) -1, 0 },
  { "mlm_fraction", K_DOUBLE, (size_t) -1, 0 },
  { "attention_window", K_BEYOND, (size_t) -1, 0 },
  { "window_layer_freq", K_INT, (size_t) -1, 0 },
  { "mtp_depth", K_BEYOND, (size_t) -1, 0 },
  { "q_lora_rank", K_BEYOND, (size_t) -1, 0 },
  { "kv_lora_rank", K_BEYOND, (size_t) -1, 0 },
  { "qk_nope_head_dim", K_BEYOND, (size_t) -1, 0 },
  { "qk_rope_head_dim", K_BEYOND, (size_t) -1, 0 },
  { "v_head_dim", K_BEYOND, (size_t) -1, 0 },
};
#undef F
#define N_KEYS (sizeof keys / sizeof keys[0])

static int
set_key (TrainerShape *s, const Key *k, const char *v)
{
  int idummy;
  double ddummy;
  int *ip = k->off == (size_t) -1 ? &idummy : (int *) ((char *) s + k->off);
  double *dp = k->off == (size_t) -1 ? &ddummy : (double *) ((char *) s + k->off);
  switch (k->kind)
    {
    case K_INT: return parse_int (v, ip);
    case K_DOUBLE: return parse_double (v, dp);
    case K_BOOL: return parse_bool (v, ip);
    case K_ACT:
      if (!strcmp (v, "geglu") || !strcmp (v, "squared_relu"))
        {
          s->beyond = s->beyond ? s->beyond : k->key;
          return 0;
        }
      return parse_choice (v, "swiglu", "gelu", ip);
    case K_NORM: return parse_choice (v, "rmsnorm", "layernorm", ip);
    case K_POS:
      if (!strcmp (v, "alibi"))
        {
          s->beyond = s->beyond ? s->beyond : k->key;
          return 0;
        }
      return parse_choice (v, "rope", "learned", ip);
    case K_BEYOND:
      if (parse_bool (v, ip) != 0 && parse_int (v, ip) != 0)
        return -1;
      if (*ip != 0 && !s->beyond)
        s->beyond = k->key;
      return 0;
    case K_STR:
      if (strlen (v) >= sizeof s->name)
        return -1;
      strcpy (s->name, v);
      return 0;
    default: return -1;
    }
}

static const char *
expected (int kind)
{
  switch (kind)
    {
    case K_INT: return "an integer";
    case K_DOUBLE: return "a number";
    case K_BOOL: return "true or false";
    case K_ACT: return "gelu, swiglu, geglu or squared_relu";
    case K_NORM: return "layernorm or rmsnorm";
    case K_POS: return "learned, rope or alibi";
    case K_BEYOND: return "an integer or true/false";
    default: return "a name of at most 63 bytes";
    }
}

int
trainer_shape_parse (const char *text, const char *name, int seq_len, TrainerShape *s, char *err, size_t err_len)
{
  trainer_shape_defaults (s);
  int seen[N_KEYS] = { 0 };
  int in_model = 0, in_training = 0, saw_model = 0, lineno = 0;
  const char *p = text;
  char line[1024];
  while (*p)
    {
      const char *nl = strchr (p, '\n');
      size_t n = nl ? (size_t) (nl - p) : strlen (p);
      lineno++;
      if (n >= sizeof line)
        return trainer_fail (err, err_len, "%s:%d: line too long", name, lineno);
      memcpy (line, p, n);
      line[n] = '\0';
      p += n + (nl ? 1 : 0);
      char *l = trim (line);
      if (*l == '\0' || *l == '#')
        continue;
      if (*l == '[')
        {
          char *close = strchr (l, ']');
          if (!close || close[1] != '\0')
            return trainer_fail (err, err_len, "%s:%d: malformed group line \"%s\"", name, lineno, l);
          *close = '\0';
          in_model = !strcmp (l + 1, "model");
          in_training = !strcmp (l + 1, "training");
          if (in_model && saw_model)
            return trainer_fail (err, err_len, "%s:%d: group [model] appears twice", name, lineno);
          saw_model |= in_model;
          continue;
        }
      char *eq = strchr (l, '=');
      if (!eq)
        return trainer_fail (err, err_len, "%s:%d: expected key = value, got \"%s\"", name, lineno, l);
      if (!in_model && !in_training)
        continue;
      *eq = '\0';
      char *key = trim (l), *val = trim (eq + 1);
      if (in_training)
        {
          /* only the sequence length is taken from [training]; the rest belongs to the simulator */
          if (!strcmp (key, "seq_len") && parse_int (val, &s->seq_len) != 0)
            return trainer_fail (err, err_len, "%s:%d: [training] seq_len = \"%s\" is not an integer", name, lineno, val);
          continue;
        }
      size_t i;
      for (i = 0; i < N_KEYS; i++)
        if (!strcmp (keys[i].key, key))
          break;
      if (i == N_KEYS)
        return trainer_fail (err, err_len, "%s:%d: unknown key [model] %s: remove it or fix its spelling (see scenarios/README.md)",
                     name, lineno, key);
      if (seen[i])
        return trainer_fail (err, err_len, "%s:%d: key [model] %s given twice", name, lineno, key);
      seen[i] = 1;
      if (set_key (s, &keys[i], val) != 0)
        return trainer_fail (err, err_len, "%s:%d: [model] %s = \"%s\" is not %s", name, lineno, key, val,
                     expected (keys[i].kind));
    }
  if (!saw_model)
    return trainer_fail (err, err_len, "%s: no [model] group: give a trainsim model file (scenarios/models/NAME.ini)", name);
  for (size_t i = 0; i < N_KEYS; i++)
    if (keys[i].required && !seen[i])
      return trainer_fail (err, err_len, "%s: missing required key [model] %s", name, keys[i].key);
  if (seq_len > 0)
    s->seq_len = seq_len;
  if (s->seq_len < 1)
    return trainer_fail (err, err_len, "%s: no sequence length: the model file has no [training] seq_len, give one", name);
  return trainer_shape_finish (s, err, err_len);
}

int
trainer_shape_load (const char *path, int seq_len, TrainerShape *s, char *err, size_t err_len)
{
  FILE *f = fopen (path, "rb");
  if (!f)
    return trainer_fail (err, err_len, "%s: cannot open: %s", path, strerror (errno));
  char *buf = NULL;
  size_t len = 0, cap = 0, got;
  do
    {
      if (len + 4096 + 1 > cap)
        {
          cap = cap ? 2 * cap : 8192;
          char *nb = realloc (buf, cap);
          if (!nb)
            {
              free (buf);
              fclose (f);
              return trainer_fail (err, err_len, "%s: out of memory", path);
            }
          buf = nb;
        }
      got = fread (buf + len, 1, 4096, f);
      len += got;
    }
  while (got > 0);
  fclose (f);
  buf[len] = '\0';
  int rc = trainer_shape_parse (buf, path, seq_len, s, err, err_len);
  free (buf);
  return rc;
}

int
trainer_shape_finish (TrainerShape *s, char *err, size_t err_len)
{
  if (s->moe_experts > 0)
    return trainer_fail (err, err_len, "[model] moe_experts = %d: the validation trainer builds dense models only; "
                 "pick a dense model file", s->moe_experts);
  if (s->beyond)
    return trainer_fail (err, err_len, "[model] %s: the validation trainer builds GPT/Llama-style decoders only "
                 "(learned or rope positions, gelu or swiglu, causal attention); pick such a model file", s->beyond);
  if (s->layers < 1 || s->hidden < 1 || s->heads < 1 || s->ffn_hidden < 1 || s->vocab < 1 || s->seq_len < 1)
    return trainer_fail (err, err_len, "[model] layers, hidden, heads, ffn_hidden, vocab and seq_len must be positive");
  if (s->kv_heads < 1 || s->heads % s->kv_heads)
    return trainer_fail (err, err_len, "[model] kv_heads = %d must divide heads = %d", s->kv_heads, s->heads);
  if (s->head_dim == 0)
    {
      if (s->hidden % s->heads)
        return trainer_fail (err, err_len, "[model] hidden = %d is not a multiple of heads = %d: give head_dim",
                     s->hidden, s->heads);
      s->head_dim = s->hidden / s->heads;
    }
  if (s->head_dim < 2 || s->head_dim % 2)
    return trainer_fail (err, err_len, "[model] head_dim = %d must be even and at least 2", s->head_dim);
  if (s->vocab_multiple < 1)
    return trainer_fail (err, err_len, "[model] vocab_multiple = %d must be positive", s->vocab_multiple);
  if (s->max_positions == 0)
    s->max_positions = s->seq_len;
  if (!s->rope && s->max_positions < s->seq_len)
    return trainer_fail (err, err_len, "[model] max_positions = %d is below seq_len = %d", s->max_positions, s->seq_len);
  s->vocab_padded = (s->vocab + s->vocab_multiple - 1) / s->vocab_multiple * s->vocab_multiple;
  s->q_dim = s->heads * s->head_dim;
  s->kv_dim = s->kv_heads * s->head_dim;
  return 0;
}
