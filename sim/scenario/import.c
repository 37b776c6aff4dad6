/* The imported scenario: keys in the order found, leftovers, and the file written from them
 * (import.h). Every key is checked against trainsim's key table, so a reader cannot write a key the
 * loader would refuse as unknown. */
#include "config.h"
#include <stdarg.h>
#include <string.h>
#include "sim/scenario/import.h"
#include "sim/scenario/scenario.h"

G_DEFINE_QUARK (sim-import-error-quark, sim_import_error)

typedef struct {
  char *group, *key, *value, *from;
} Entry;

struct SimImport {
  char *framework;
  GArray *entries;            /* Entry, in the order first set */
  GPtrArray *lines;           /* "ignored: …", "unknown: …", "note: …" */
};

static void
entry_clear (gpointer p)
{
  Entry *e = p;
  g_free (e->group);
  g_free (e->key);
  g_free (e->value);
  g_free (e->from);
}

SimImport *
sim_import_new (const char *framework)
{
  SimImport *imp = g_new0 (SimImport, 1);
  imp->framework = g_strdup (framework);
  imp->entries = g_array_new (FALSE, TRUE, sizeof (Entry));
  g_array_set_clear_func (imp->entries, entry_clear);
  imp->lines = g_ptr_array_new_with_free_func (g_free);
  return imp;
}

void
sim_import_free (SimImport *imp)
{
  if (!imp)
    return;
  g_free (imp->framework);
  g_array_unref (imp->entries);
  g_ptr_array_unref (imp->lines);
  g_free (imp);
}

static gboolean
known_key (const char *group, const char *key)
{
  for (guint i = 0; i < sim_scenario_n_keys (); i++)
    {
      const SimScenarioKeyInfo *k = sim_scenario_key (i);
      if (strcmp (k->group, group) == 0 && strcmp (k->key, key) == 0)
        return TRUE;
    }
  return FALSE;
}

static Entry *
find (const SimImport *imp, const char *group, const char *key)
{
  for (guint i = 0; i < imp->entries->len; i++)
    {
      Entry *e = &g_array_index (imp->entries, Entry, i);
      if (strcmp (e->group, group) == 0 && strcmp (e->key, key) == 0)
        return e;
    }
  return NULL;
}

void
sim_import_set (SimImport *imp, const char *group, const char *key, const char *value, const char *from)
{
  g_return_if_fail (known_key (group, key));
  Entry *e = find (imp, group, key);
  if (!e)
    {
      Entry fresh = { g_strdup (group), g_strdup (key), NULL, NULL };
      g_array_append_val (imp->entries, fresh);
      e = &g_array_index (imp->entries, Entry, imp->entries->len - 1);
    }
  g_free (e->value);
  g_free (e->from);
  e->value = g_strdup (value);
  e->from = g_strdup (from);
}

void
sim_import_set_int (SimImport *imp, const char *group, const char *key, gint64 value, const char *from)
{
  char buf[32];
  g_snprintf (buf, sizeof buf, "%" G_GINT64_FORMAT, value);
  sim_import_set (imp, group, key, buf, from);
}

void
sim_import_set_bool (SimImport *imp, const char *group, const char *key, gboolean value, const char *from)
{
  sim_import_set (imp, group, key, value ? "true" : "false", from);
}

const char *
sim_import_get (const SimImport *imp, const char *group, const char *key)
{
  const Entry *e = find (imp, group, key);
  return e ? e->value : NULL;
}

void
sim_import_ignored (SimImport *imp, const char *input)
{
  g_ptr_array_add (imp->lines, g_strdup_printf ("ignored: %s (no trainsim equivalent)", input));
}

void
sim_import_unknown (SimImport *imp, const char *input, const char *why)
{
  g_ptr_array_add (imp->lines, g_strdup_printf ("unknown: %s (%s)", input, why));
}

void
sim_import_note (SimImport *imp, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_ptr_array_add (imp->lines, g_strconcat ("note: ", text, NULL));
}

gboolean
sim_import_mentions (const SimImport *imp, const char *text)
{
  for (guint i = 0; i < imp->entries->len; i++)
    {
      const Entry *e = &g_array_index (imp->entries, Entry, i);
      if (e->from && strstr (e->from, text))
        return TRUE;
    }
  for (guint i = 0; i < imp->lines->len; i++)
    if (strstr (g_ptr_array_index (imp->lines, i), text))
      return TRUE;
  return FALSE;
}

guint
sim_import_n_lines (const SimImport *imp)
{
  return imp->lines->len;
}

const char *
sim_import_line (const SimImport *imp, guint i)
{
  g_return_val_if_fail (i < imp->lines->len, NULL);
  return g_ptr_array_index (imp->lines, i);
}

/* An include entry for a hardware or fabric option: an embedded name or an absolute path. */
static char *
include_path (const char *dir, const char *name)
{
  if (!strchr (name, '/') && !g_str_has_suffix (name, ".ini"))
    return g_strdup_printf ("embedded:%s/%s.ini", dir, name);
  if (g_path_is_absolute (name))
    return g_strdup (name);
  return g_canonicalize_filename (name, NULL);
}

static void
write_comment (GString *out, const char *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    g_string_append_printf (out, "# %s\n", lines[i]);
}

/* One group's keys; PREAMBLE (or NULL) comes first under the group's header. */
static void
write_group (GString *out, const SimImport *imp, const char *group, const char *preamble)
{
  gboolean opened = FALSE;
  if (preamble)
    {
      g_string_append_printf (out, "\n[%s]\n%s", group, preamble);
      opened = TRUE;
    }
  for (guint i = 0; i < imp->entries->len; i++)
    {
      const Entry *e = &g_array_index (imp->entries, Entry, i);
      if (strcmp (e->group, group) != 0)
        continue;
      if (!opened)
        g_string_append_printf (out, "\n[%s]\n", group);
      opened = TRUE;
      if (e->from && *e->from)
        write_comment (out, e->from);
      g_string_append_printf (out, "%s = %s\n", e->key, e->value);
    }
}

char *
sim_import_write (const SimImport *imp, const SimImportOptions *opts, const char *input)
{
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "# Imported by `trainsim import` (trainsim %s) from %s: %s.\n", PACKAGE_VERSION,
                          imp->framework, input);
  g_string_append (out, "# Each key names the input it comes from. Inputs with no trainsim key are listed\n"
                        "# on stderr (\"ignored:\", \"unknown:\"); the unknown ones and the notes end this file.\n");
  g_autoptr (GPtrArray) includes = g_ptr_array_new_with_free_func (g_free);
  if (opts && opts->hardware)
    g_ptr_array_add (includes, include_path ("hardware", opts->hardware));
  if (opts && opts->fabric)
    g_ptr_array_add (includes, include_path ("fabrics", opts->fabric));
  g_autoptr (GString) include = NULL;
  if (includes->len)
    {
      include = g_string_new ("# trainsim import --hardware/--fabric\ninclude = ");
      for (guint i = 0; i < includes->len; i++)
        g_string_append_printf (include, "%s%s", i ? ";" : "", (const char *) g_ptr_array_index (includes, i));
      g_string_append_c (include, '\n');
    }
  else
    g_string_append (out, "# No hardware or fabric: add `[scenario] include = hardware/X.ini;fabrics/Y.ini`\n"
                          "# (trainsim run --list) or pass these files to `trainsim run` before this one.\n");
  if (!sim_import_get (imp, "cluster", "gpus"))
    g_string_append (out, "# [cluster] gpus is not in the input (the launcher sets the world size): add\n"
                          "# `[cluster] gpus = N` with N = tp x pp x cp x dp, or `trainsim run --set cluster.gpus=N`.\n");
  static const char *const order[] = { "scenario", "cluster", "model", "parallel", "training" };
  for (gsize g = 0; g < G_N_ELEMENTS (order); g++)
    write_group (out, imp, order[g], g == 0 && include ? include->str : NULL);
  /* Any other group, in the order first set. */
  for (guint i = 0; i < imp->entries->len; i++)
    {
      const Entry *e = &g_array_index (imp->entries, Entry, i);
      gboolean listed = FALSE, earlier = FALSE;
      for (gsize g = 0; g < G_N_ELEMENTS (order); g++)
        listed |= strcmp (e->group, order[g]) == 0;
      for (guint j = 0; j < i; j++)
        earlier |= strcmp (g_array_index (imp->entries, Entry, j).group, e->group) == 0;
      if (!listed && !earlier)
        write_group (out, imp, e->group, NULL);
    }
  gboolean any = FALSE;
  for (guint i = 0; i < imp->lines->len; i++)
    {
      const char *l = g_ptr_array_index (imp->lines, i);
      if (g_str_has_prefix (l, "ignored: "))
        continue;
      if (!any)
        g_string_append (out, "\n# Not expressed above:\n");
      any = TRUE;
      write_comment (out, l);
    }
  return g_string_free (out, FALSE);
}
