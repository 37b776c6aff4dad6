/* A main for a libFuzzer harness without libFuzzer: passes each file named, and each file in a
 * folder named (not recursive, in name order), once to LLVMFuzzerTestOneInput. Every build links
 * the harnesses with it, so `make check` replays the corpora, under ASan/UBSan in the sanitizer
 * build. Prints nothing when all is well; exits 1 when an input cannot be read (a crash in the
 * harness ends the process, as it would under libFuzzer). */
#include "fuzz/fuzz.h"
#include <stdio.h>
#include <string.h>

/* One input, in a buffer of exactly its size (no NUL after it), as libFuzzer passes it, so ASan
 * sees a read past the end. */
static gboolean
replay_file (const char *path)
{
  g_autofree char *text = NULL;
  gsize size = 0;
  GError *error = NULL;
  if (!g_file_get_contents (path, &text, &size, &error))
    {
      fprintf (stderr, "replay: %s\n", error->message);
      g_error_free (error);
      return FALSE;
    }
  g_autofree uint8_t *data = g_malloc (MAX (size, 1)); /* never NULL, as libFuzzer's */
  memcpy (data, text, size);
  LLVMFuzzerTestOneInput (data, size);
  return TRUE;
}

static int
by_name (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static gboolean
replay_dir (const char *path)
{
  GError *error = NULL;
  GDir *dir = g_dir_open (path, 0, &error);
  if (!dir)
    {
      fprintf (stderr, "replay: %s\n", error->message);
      g_error_free (error);
      return FALSE;
    }
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  for (const char *name; (name = g_dir_read_name (dir));)
    g_ptr_array_add (names, g_build_filename (path, name, NULL));
  g_dir_close (dir);
  g_ptr_array_sort (names, by_name);
  gboolean ok = TRUE;
  for (guint i = 0; i < names->len; i++)
    if (!g_file_test (g_ptr_array_index (names, i), G_FILE_TEST_IS_DIR))
      ok = replay_file (g_ptr_array_index (names, i)) && ok;
  return ok;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE|DIR…\nPasses each file (each file in a DIR) once to the fuzz harness.\n",
               argv[0]);
      return 2;
    }
  gboolean ok = TRUE;
  for (int i = 1; i < argc; i++)
    ok = (g_file_test (argv[i], G_FILE_TEST_IS_DIR) ? replay_dir (argv[i]) : replay_file (argv[i])) && ok;
  return ok ? 0 : 1;
}
