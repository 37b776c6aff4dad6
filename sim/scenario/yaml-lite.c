/* The block-mapping subset of YAML (yaml-lite.h says what is read and what is refused).
 *
 * Two passes: the text is cut into logical lines (indentation, content without its comment, line
 * number; blank and comment-only lines dropped), then a recursive descent builds the tree, each
 * block taking the lines of its indentation. Everything outside the subset is an error naming
 * FILE:LINE, never a guess. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/scenario/yaml-lite.h"

G_DEFINE_QUARK (sim-yaml-error-quark, sim_yaml_error)

typedef struct {
  int indent;
  char *text;                 /* content: indentation and comment removed, right-trimmed */
  int line;
} Line;

typedef struct {
  const char *name;
  Line *lines;
  int n, i;
} Parser;

static gboolean
fail (GError **error, const Parser *p, int line, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
fail (GError **error, const Parser *p, int line, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SIM_YAML_ERROR, SIM_YAML_ERROR_SYNTAX, "%s:%d: %s", p->name, line, msg);
  return FALSE;
}

static SimYamlNode *
node_new (SimYamlKind kind, int line)
{
  SimYamlNode *n = g_new0 (SimYamlNode, 1);
  n->kind = kind;
  n->line = line;
  if (kind != SIM_YAML_SCALAR)
    n->children = g_ptr_array_new_with_free_func ((GDestroyNotify) sim_yaml_free);
  return n;
}

void
sim_yaml_free (SimYamlNode *node)
{
  if (!node)
    return;
  g_free (node->key);
  g_free (node->value);
  if (node->children)
    g_ptr_array_unref (node->children);
  g_free (node);
}

static void
add_child (SimYamlNode *parent, SimYamlNode *child)
{
  child->parent = parent;
  g_ptr_array_add (parent->children, child);
}

/* A quote opens a quoted scalar only where a scalar can start: after the indentation, `: `, `- `,
 * `[` or `,` (so the apostrophe of `don't` stays text). */
static gboolean
quote_may_open (const char *start, const char *q)
{
  const char *b = q;
  while (b > start && (b[-1] == ' ' || b[-1] == '\t'))
    b--;
  return b == start || b[-1] == ':' || b[-1] == '-' || b[-1] == '[' || b[-1] == ',';
}

/* Cuts the comment off one line's content: `#` at the start or after white space, outside quotes. */
static void
strip_comment (char *s)
{
  char quote = 0;
  for (char *c = s; *c; c++)
    {
      if (quote)
        {
          if (*c == '\\' && quote == '"' && c[1])
            c++;
          else if (*c == quote)
            quote = 0;
        }
      else if ((*c == '\'' || *c == '"') && quote_may_open (s, c))
        quote = *c;
      else if (*c == '#' && (c == s || c[-1] == ' ' || c[-1] == '\t'))
        {
          *c = '\0';
          break;
        }
    }
  g_strchomp (s);
}

static gboolean
split_lines (Parser *p, const char *text, gsize len, GError **error)
{
  GArray *lines = g_array_new (FALSE, TRUE, sizeof (Line));
  const char *s = text, *end = text + len;
  int lineno = 0;
  gboolean ok = TRUE;
  while (s < end && ok)
    {
      const char *nl = memchr (s, '\n', (gsize) (end - s));
      const char *e = nl ? nl : end;
      lineno++;
      g_autofree char *raw = g_strndup (s, (gsize) (e - s));
      s = nl ? nl + 1 : end;
      gsize rl = strlen (raw);
      if (rl && raw[rl - 1] == '\r')
        raw[--rl] = '\0';
      int indent = 0;
      while (raw[indent] == ' ')
        indent++;
      if (raw[indent] == '\t')
        {
          ok = fail (error, p, lineno, "a tab in the indentation; YAML indents with spaces only");
          break;
        }
      char *content = raw + indent;
      strip_comment (content);
      if (*content == '\0')
        continue;
      Line l = { indent, g_strdup (content), lineno };
      g_array_append_val (lines, l);
    }
  p->n = (int) lines->len;
  p->lines = (Line *) g_array_free (lines, FALSE);
  return ok;
}

/* Is the content a sequence item (`- x` or a lone `-`)? */
static gboolean
is_item (const char *t)
{
  return t[0] == '-' && (t[1] == ' ' || t[1] == '\0');
}

/* Finds the `:` that ends a key: followed by a space or the end, outside quotes and `${...}`.
 * Returns its offset, or -1. */
static int
key_colon (const char *t)
{
  char quote = 0;
  int braces = 0;
  for (int i = 0; t[i]; i++)
    {
      char c = t[i];
      if (quote)
        {
          if (c == '\\' && quote == '"' && t[i + 1])
            i++;
          else if (c == quote)
            quote = 0;
        }
      else if ((c == '\'' || c == '"') && quote_may_open (t, t + i))
        quote = c;
      else if (c == '$' && t[i + 1] == '{')
        braces++, i++;
      else if (c == '{' && braces)
        braces++;
      else if (c == '}' && braces)
        braces--;
      else if (c == ':' && !braces && (t[i + 1] == ' ' || t[i + 1] == '\0'))
        return i;
    }
  return -1;
}

/* A quoted scalar spanning all of T; fills OUT. */
static gboolean
parse_quoted (const Parser *p, int line, const char *t, char **out, GError **error)
{
  char q = t[0];
  GString *s = g_string_new (NULL);
  const char *c = t + 1;
  for (;; c++)
    {
      if (*c == '\0')
        {
          g_string_free (s, TRUE);
          return fail (error, p, line, "unterminated %s-quoted scalar (a quoted scalar must end on its line)",
                       q == '"' ? "double" : "single");
        }
      if (q == '\'' && *c == '\'')
        {
          if (c[1] == '\'')
            {
              g_string_append_c (s, '\'');
              c++;
              continue;
            }
          break;
        }
      if (q == '"' && *c == '"')
        break;
      if (q == '"' && *c == '\\')
        {
          c++;
          switch (*c)
            {
            case '\\': g_string_append_c (s, '\\'); break;
            case '"': g_string_append_c (s, '"'); break;
            case '/': g_string_append_c (s, '/'); break;
            case 'n': g_string_append_c (s, '\n'); break;
            case 't': g_string_append_c (s, '\t'); break;
            default:
              g_string_free (s, TRUE);
              return fail (error, p, line, "escape \\%c in a double-quoted scalar is not read here "
                                           "(only \\\\ \\\" \\/ \\n \\t)", *c ? *c : '0');
            }
          continue;
        }
      g_string_append_c (s, *c);
    }
  if (c[1] != '\0')
    {
      g_string_free (s, TRUE);
      return fail (error, p, line, "text after the closing quote: '%s'", c + 1);
    }
  *out = g_string_free (s, FALSE);
  return TRUE;
}

/* One scalar as written inline (a value, an item or a flow element): quoted or plain. */
static SimYamlNode *
parse_scalar (const Parser *p, int line, const char *t, GError **error)
{
  SimYamlNode *n = node_new (SIM_YAML_SCALAR, line);
  if (t[0] == '\'' || t[0] == '"')
    {
      n->quoted = TRUE;
      if (!parse_quoted (p, line, t, &n->value, error))
        {
          sim_yaml_free (n);
          return NULL;
        }
      return n;
    }
  const char *what = NULL;
  switch (t[0])
    {
    case '&': what = "an anchor (&)"; break;
    case '*': what = "an alias (*)"; break;
    case '!': what = "a tag (!)"; break;
    case '|': case '>': what = "a block scalar (| or >)"; break;
    case '%': case '@': case '`': what = "a reserved indicator (% @ `) at the start of a scalar"; break;
    case '{': what = "a flow mapping ({...}; only {} is read)"; break;
    default: break;
    }
  if (what)
    {
      sim_yaml_free (n);
      fail (error, p, line, "%s is not read here; write the value as a plain or quoted scalar", what);
      return NULL;
    }
  if (key_colon (t) >= 0)
    {
      sim_yaml_free (n);
      fail (error, p, line, "a mapping inside a value ('%s'); nested mappings go on their own lines", t);
      return NULL;
    }
  n->value = g_strdup (t);
  return n;
}

/* `[a, b]`, `[]` or `{}` on one line, else a scalar. */
static SimYamlNode *
parse_inline (const Parser *p, int line, const char *t, GError **error)
{
  if (strcmp (t, "{}") == 0)
    return node_new (SIM_YAML_MAP, line);
  if (t[0] != '[')
    return parse_scalar (p, line, t, error);
  gsize len = strlen (t);
  if (t[len - 1] != ']')
    {
      fail (error, p, line, "a flow sequence must close on its line ('%s')", t);
      return NULL;
    }
  SimYamlNode *seq = node_new (SIM_YAML_SEQ, line);
  g_autofree char *body = g_strstrip (g_strndup (t + 1, len - 2));
  if (*body == '\0')
    return seq;
  /* Split at commas outside quotes. */
  char quote = 0;
  const char *start = body;
  for (const char *c = body;; c++)
    {
      if (quote && *c)
        {
          if (*c == quote)
            quote = 0;
          continue;
        }
      if (*c == '\'' || *c == '"')
        {
          quote = *c;
          continue;
        }
      if (*c == '[' || *c == '{')
        {
          sim_yaml_free (seq);
          fail (error, p, line, "nested flow collections are not read here ('%s')", t);
          return NULL;
        }
      if (*c == ',' || *c == '\0')
        {
          g_autofree char *item = g_strstrip (g_strndup (start, (gsize) (c - start)));
          SimYamlNode *n = *item ? parse_scalar (p, line, item, error) : NULL;
          if (!n)
            {
              if (!*item)
                fail (error, p, line, "an empty element in the flow sequence '%s'", t);
              sim_yaml_free (seq);
              return NULL;
            }
          add_child (seq, n);
          if (*c == '\0')
            break;
          start = c + 1;
        }
    }
  return seq;
}

static SimYamlNode *parse_block (Parser *p, int indent, GError **error);

/* Fails when the line after a complete value is indented deeper: YAML would read it as a
 * continuation of a plain scalar or as a malformed block. */
static gboolean
no_deeper_line (Parser *p, int indent, GError **error)
{
  if (p->i < p->n && p->lines[p->i].indent > indent)
    return fail (error, p, p->lines[p->i].line, "unexpected indentation: multi-line scalars and blocks "
                 "under a value that is already given are not read here");
  return TRUE;
}

/* Splits `key: rest` into a key and the inline rest (NULL when nothing follows the colon). */
static gboolean
split_key (Parser *p, const Line *l, char **key, const char **rest, GError **error)
{
  int colon = key_colon (l->text);
  if (colon < 0)
    return fail (error, p, l->line, "expected `key: value`, found '%s'", l->text);
  g_autofree char *k = g_strstrip (g_strndup (l->text, (gsize) colon));
  if (*k == '\0')
    return fail (error, p, l->line, "a mapping entry without a key");
  if (k[0] == '\'' || k[0] == '"')
    {
      if (!parse_quoted (p, l->line, k, key, error))
        return FALSE;
    }
  else if (k[0] == '?' || k[0] == '&' || k[0] == '*' || k[0] == '!' || k[0] == '[' || k[0] == '{')
    return fail (error, p, l->line, "complex keys, anchors, aliases and tags are not read here ('%s')", k);
  else
    *key = g_strdup (k);
  const char *r = l->text + colon + 1;
  while (*r == ' ')
    r++;
  *rest = *r ? r : NULL;
  return TRUE;
}

static SimYamlNode *
parse_seq (Parser *p, int indent, GError **error)
{
  SimYamlNode *seq = node_new (SIM_YAML_SEQ, p->lines[p->i].line);
  while (p->i < p->n && p->lines[p->i].indent == indent && is_item (p->lines[p->i].text))
    {
      const Line *l = &p->lines[p->i++];
      const char *t = l->text + 1;
      while (*t == ' ')
        t++;
      SimYamlNode *item = NULL;
      if (*t == '\0')
        fail (error, p, l->line, "an empty sequence item (or one whose block follows): only scalars "
                                 "and one-line `key: value` items are read here");
      else if (is_item (t))
        fail (error, p, l->line, "nested sequences are not read here");
      else if (key_colon (t) >= 0 && t[0] != '[')
        {
          /* One `key: value` pair, as in Hydra's defaults list. */
          Line one = { l->indent + 2, (char *) t, l->line };
          char *key = NULL;
          const char *rest = NULL;
          if (split_key (p, &one, &key, &rest, error))
            {
              SimYamlNode *v = rest ? parse_inline (p, l->line, rest, error) : node_new (SIM_YAML_SCALAR, l->line);
              if (v)
                {
                  if (!rest)
                    v->value = g_strdup ("");
                  v->key = key;
                  key = NULL;
                  item = node_new (SIM_YAML_MAP, l->line);
                  add_child (item, v);
                }
            }
          g_free (key);
        }
      else
        item = parse_inline (p, l->line, t, error);
      if (!item)
        {
          sim_yaml_free (seq);
          return NULL;
        }
      add_child (seq, item);
      if (item->kind == SIM_YAML_MAP && p->i < p->n && p->lines[p->i].indent > indent)
        {
          fail (error, p, p->lines[p->i].line, "sequences of multi-line mappings are not read here");
          sim_yaml_free (seq);
          return NULL;
        }
      if (!no_deeper_line (p, indent, error))
        {
          sim_yaml_free (seq);
          return NULL;
        }
    }
  return seq;
}

static SimYamlNode *
parse_map (Parser *p, int indent, GError **error)
{
  SimYamlNode *map = node_new (SIM_YAML_MAP, p->lines[p->i].line);
  while (p->i < p->n && p->lines[p->i].indent >= indent)
    {
      const Line *l = &p->lines[p->i];
      if (l->indent > indent)
        {
          fail (error, p, l->line, "unexpected indentation (%d spaces where the mapping has %d)", l->indent, indent);
          goto err;
        }
      if (is_item (l->text))
        {
          fail (error, p, l->line, "a sequence item where a `key: value` of the mapping was expected");
          goto err;
        }
      char *key = NULL;
      const char *rest = NULL;
      if (!split_key (p, l, &key, &rest, error))
        goto err;
      for (guint c = 0; c < map->children->len; c++)
        if (strcmp (((SimYamlNode *) g_ptr_array_index (map->children, c))->key, key) == 0)
          {
            fail (error, p, l->line, "duplicate key '%s' (first on line %d)", key,
                  ((SimYamlNode *) g_ptr_array_index (map->children, c))->line);
            g_free (key);
            goto err;
          }
      p->i++;
      SimYamlNode *v;
      if (rest)
        {
          v = parse_inline (p, l->line, rest, error);
          if (v && !no_deeper_line (p, indent, error))
            g_clear_pointer (&v, sim_yaml_free);
        }
      else if (p->i < p->n && p->lines[p->i].indent > indent)
        v = parse_block (p, p->lines[p->i].indent, error);
      else if (p->i < p->n && p->lines[p->i].indent == indent && is_item (p->lines[p->i].text))
        v = parse_seq (p, indent, error); /* `key:` then `- item` at the key's indentation */
      else
        {
          v = node_new (SIM_YAML_SCALAR, l->line);
          v->value = g_strdup ("");
        }
      if (!v)
        {
          g_free (key);
          goto err;
        }
      v->key = key;
      v->line = l->line;
      add_child (map, v);
    }
  return map;
err:
  sim_yaml_free (map);
  return NULL;
}

static SimYamlNode *
parse_block (Parser *p, int indent, GError **error)
{
  if (is_item (p->lines[p->i].text))
    return parse_seq (p, indent, error);
  return parse_map (p, indent, error);
}

SimYamlNode *
sim_yaml_parse (const char *text, gssize len, const char *name, GError **error)
{
  g_return_val_if_fail (text != NULL, NULL);
  gsize n = len < 0 ? strlen (text) : (gsize) len;
  Parser p = { name ? name : "(yaml)", NULL, 0, 0 };
  SimYamlNode *root = NULL;
  if (memchr (text, '\0', n))
    {
      fail (error, &p, 1, "a NUL byte: not a text file");
      return NULL;
    }
  if (!split_lines (&p, text, n, error))
    goto out;
  if (p.n > 0 && p.lines[0].indent == 0 && strcmp (p.lines[0].text, "---") == 0)
    p.i = 1;
  for (int i = 0; i < p.n; i++)
    {
      const char *t = p.lines[i].text;
      if (p.lines[i].indent == 0 && (g_str_has_prefix (t, "---") || strcmp (t, "...") == 0) && i >= p.i)
        {
          fail (error, &p, p.lines[i].line, "a second document or a document end marker: one document only");
          goto out;
        }
      if (p.lines[i].indent == 0 && t[0] == '%')
        {
          fail (error, &p, p.lines[i].line, "YAML directives are not read here");
          goto out;
        }
    }
  if (p.i >= p.n)
    {
      root = node_new (SIM_YAML_MAP, 1);
      goto out;
    }
  if (is_item (p.lines[p.i].text))
    {
      fail (error, &p, p.lines[p.i].line, "the document is a sequence; a config is a mapping of keys");
      goto out;
    }
  root = parse_map (&p, p.lines[p.i].indent, error);
  if (root && p.i < p.n)
    {
      fail (error, &p, p.lines[p.i].line, "indented less than the document's first key");
      g_clear_pointer (&root, sim_yaml_free);
    }
out:
  for (int i = 0; i < p.n; i++)
    g_free (p.lines[i].text);
  g_free (p.lines);
  return root;
}

SimYamlNode *
sim_yaml_parse_file (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *io = NULL;
  if (!g_file_get_contents (path, &text, &len, &io))
    {
      g_set_error (error, SIM_YAML_ERROR, SIM_YAML_ERROR_IO, "%s", io->message);
      g_error_free (io);
      return NULL;
    }
  return sim_yaml_parse (text, (gssize) len, path, error);
}

const SimYamlNode *
sim_yaml_lookup (const SimYamlNode *map, const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, ".", -1);
  const SimYamlNode *n = map;
  for (int i = 0; n && parts[i]; i++)
    {
      const SimYamlNode *next = NULL;
      if (n->kind == SIM_YAML_MAP)
        for (guint c = 0; c < n->children->len && !next; c++)
          {
            const SimYamlNode *ch = g_ptr_array_index (n->children, c);
            if (strcmp (ch->key, parts[i]) == 0)
              next = ch;
          }
      n = next;
    }
  return n;
}

char *
sim_yaml_path (const SimYamlNode *node)
{
  GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);
  for (const SimYamlNode *n = node; n && n->parent; n = n->parent)
    {
      if (n->key)
        g_ptr_array_insert (parts, 0, g_strdup (n->key));
      else
        {
          guint idx = 0;
          g_ptr_array_find (n->parent->children, n, &idx);
          g_ptr_array_insert (parts, 0, g_strdup_printf ("[%u]", idx));
        }
    }
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < parts->len; i++)
    {
      const char *part = g_ptr_array_index (parts, i);
      if (i > 0 && part[0] != '[')
        g_string_append_c (s, '.');
      g_string_append (s, part);
    }
  g_ptr_array_unref (parts);
  return g_string_free (s, FALSE);
}

gboolean
sim_yaml_is_null (const SimYamlNode *node)
{
  if (!node || node->kind != SIM_YAML_SCALAR || node->quoted)
    return FALSE;
  const char *v = node->value;
  return *v == '\0' || strcmp (v, "~") == 0 || strcmp (v, "null") == 0 || strcmp (v, "Null") == 0
         || strcmp (v, "NULL") == 0;
}

gboolean
sim_yaml_unresolved (const SimYamlNode *node)
{
  if (!node || node->kind != SIM_YAML_SCALAR)
    return FALSE;
  return strstr (node->value, "${") != NULL || (!node->quoted && strcmp (node->value, "???") == 0);
}

gboolean
sim_yaml_get_bool (const SimYamlNode *node, gboolean *out)
{
  if (!node || node->kind != SIM_YAML_SCALAR || node->quoted)
    return FALSE;
  const char *v = node->value;
  if (strcmp (v, "true") == 0 || strcmp (v, "True") == 0 || strcmp (v, "TRUE") == 0)
    *out = TRUE;
  else if (strcmp (v, "false") == 0 || strcmp (v, "False") == 0 || strcmp (v, "FALSE") == 0)
    *out = FALSE;
  else
    return FALSE;
  return TRUE;
}

gboolean
sim_yaml_get_int (const SimYamlNode *node, gint64 *out)
{
  if (!node || node->kind != SIM_YAML_SCALAR || node->quoted || !node->value[0])
    return FALSE;
  gint64 v = 0;
  return g_ascii_string_to_signed (node->value, 10, G_MININT64, G_MAXINT64, &v, NULL) && (*out = v, TRUE);
}

gboolean
sim_yaml_get_double (const SimYamlNode *node, double *out)
{
  if (!node || node->kind != SIM_YAML_SCALAR || node->quoted || !node->value[0])
    return FALSE;
  const char *v = node->value;
  char *end = NULL;
  double d = g_ascii_strtod (v, &end);
  /* g_ascii_strtod also takes hex, inf and nan: YAML's core schema reads none of them as plain. */
  if (*end != '\0' || !isfinite (d) || strpbrk (v, "xXnN") != NULL)
    return FALSE;
  *out = d;
  return TRUE;
}
