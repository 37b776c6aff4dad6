/* gnuplot driver for --plots; see sim/plots.h. */
#include "config.h"
#include <errno.h>
#include <gio/gio.h>
#include "sim/plots.h"

gboolean
sim_plots_prepare_dir (const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "--plots %s: cannot create the directory: %s",
                   dir, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

static char *
find_script (const char *script)
{
  g_autofree char *name = g_strdup_printf ("%s.gp", script);
  const char *dirs[] = { g_getenv ("TRAINSIM_PLOTS_DIR"),
#ifdef TRAINSIM_PLOTS_SRCDIR
                         TRAINSIM_PLOTS_SRCDIR,
#endif
#ifdef TRAINSIM_PLOTS_DATADIR
                         TRAINSIM_PLOTS_DATADIR,
#endif
                         NULL };
  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (!dirs[i])
        continue;
      char *path = g_build_filename (dirs[i], name, NULL);
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return path;
      g_free (path);
    }
  return NULL;
}

gboolean
sim_plots_render (const char *script, const char *in_tsv, const char *dir, const char *base, GError **error)
{
#ifndef GNUPLOT_PATH
  (void) script, (void) in_tsv, (void) dir, (void) base;
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
               "--plots: gnuplot was not found when trainsim was configured; install gnuplot-nox and reconfigure");
  return FALSE;
#else
  g_autofree char *path = find_script (script);
  if (!path)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "--plots: plots/%s.gp not found; set TRAINSIM_PLOTS_DIR to the plots/ directory of the source tree",
                   script);
      return FALSE;
    }
  const char *exts[] = { "png", "svg" };
  for (gsize i = 0; i < G_N_ELEMENTS (exts); i++)
    {
      g_autofree char *file = g_strdup_printf ("%s.%s", base, exts[i]);
      g_autofree char *out = g_build_filename (dir, file, NULL);
      const char *argv[] = { GNUPLOT_PATH, "-c", path, in_tsv, out, NULL };
      g_autofree char *err_text = NULL;
      int status = 0;
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_text, &status,
                         error))
        return FALSE;
      if (!g_spawn_check_wait_status (status, NULL))
        {
          g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "gnuplot -c %s %s %s failed: %s", path, in_tsv, out,
                       err_text ? err_text : "");
          return FALSE;
        }
    }
  return TRUE;
#endif
}
