/* `trainsim fit MEASUREMENTS… -o PROFILE.ini [--plot DIR]`: reads benchmark TSVs and nccl-tests
 * output, fits the calibration models (calib/profile.c) and writes a [hardware] profile layer. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "calib/measure.h"
#include "calib/profile.h"
#include "sim/cmd.h"

/* plots/calib-fit.gp: $TRAINSIM_PLOTS_DIR, else the source tree's plots/. */
static char *
plot_script (void)
{
  const char *dir = g_getenv ("TRAINSIM_PLOTS_DIR");
  return g_build_filename (dir ? dir : TRAINSIM_SRCDIR "/plots", "calib-fit.gp", NULL);
}

static gboolean
render (GStrv data_paths, GError **error)
{
#ifdef GNUPLOT_PATH
  g_autofree char *script = plot_script ();
  if (!g_file_test (script, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "plot script %s not found; set TRAINSIM_PLOTS_DIR to the directory holding calib-fit.gp", script);
      return FALSE;
    }
  for (guint i = 0; data_paths[i]; i++)
    {
      g_autofree char *stem = g_strndup (data_paths[i], strlen (data_paths[i]) - 4);
      g_autofree char *png = g_strconcat (stem, ".png", NULL);
      const char *argv[] = { GNUPLOT_PATH, "-c", script, data_paths[i], png, NULL };
      int status = 0;
      g_autofree char *err_out = NULL;
      if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_out, &status,
                         error))
        return FALSE;
      if (!g_spawn_check_wait_status (status, NULL))
        {
          g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "gnuplot failed on %s: %s", data_paths[i],
                       err_out ? err_out : "");
          return FALSE;
        }
      printf ("plot: %s\n", png);
    }
  return TRUE;
#else
  g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT,
               "plots need gnuplot, which configure did not find; install gnuplot-nox and reconfigure");
  return FALSE;
#endif
}

int
sim_cmd_fit (int argc, char **argv)
{
  g_autofree char *out_path = NULL, *plot_dir = NULL, *hw_path = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path, "write the profile layer to FILE (required)", "FILE" },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot_dir, "also draw measured points and fits into DIR (gnuplot)",
      "DIR" },
    { "hardware", 0, 0, G_OPTION_ARG_FILENAME, &hw_path,
      "datasheet profile of this GPU (e.g. scenarios/hardware/h100-sxm.ini): peaks for the efficiencies", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("MEASUREMENTS… - fit a hardware profile");
  g_option_context_set_summary (ctx,
                                "Reads trainsim-bench-* TSVs and nccl-tests outputs, fits alpha-beta lines per\n"
                                "collective and scale (weighted linear least squares) and saturating GEMM,\n"
                                "attention and memory curves (nonlinear least squares), and writes a [hardware]\n"
                                "layer with every constant's 1-sigma, chi2/dof and source files.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *cmdline = g_strjoinv (" ", argv);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim fit: %s\n", error->message);
      return 2;
    }
  if (argc < 2 || out_path == NULL)
    {
      fprintf (stderr, "trainsim fit: give measurement files and -o PROFILE.ini (see trainsim fit --help)\n");
      return 2;
    }
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  for (int i = 1; i < argc; i++)
    if (!calib_measure_set_load (set, argv[i], &error))
      {
        fprintf (stderr, "trainsim fit: %s\n", error->message);
        return 2;
      }
  g_autoptr (CalibProfile) prof = calib_profile_fit (set, &error);
  if (prof == NULL)
    {
      fprintf (stderr, "trainsim fit: %s\n", error->message);
      return 1;
    }
  g_autoptr (GKeyFile) hw = NULL;
  if (hw_path != NULL)
    {
      hw = g_key_file_new ();
      if (!g_key_file_load_from_file (hw, hw_path, G_KEY_FILE_NONE, &error)
          || !g_key_file_has_group (hw, "hardware"))
        {
          fprintf (stderr, "trainsim fit: --hardware %s: %s; give a scenarios/hardware/*.ini file\n", hw_path,
                   error ? error->message : "no [hardware] group");
          return 2;
        }
    }
  for (guint i = 0; i < calib_profile_n_notes (prof); i++)
    fprintf (stderr, "trainsim fit: note: %s\n", calib_profile_note (prof, i));
  g_autofree char *data = calib_profile_to_data (prof, cmdline, hw, hw_path);
  if (!g_file_set_contents (out_path, data, -1, &error))
    {
      fprintf (stderr, "trainsim fit: cannot write the profile: %s\n", error->message);
      return 1;
    }
  printf ("profile: %s (%u collective lines, %u curves from %u points in %u files)\n", out_path,
          calib_profile_n_collectives (prof), calib_profile_n_curves (prof), calib_measure_set_n_points (set),
          calib_measure_set_n_sources (set));
  if (plot_dir != NULL)
    {
      g_auto (GStrv) paths = NULL;
      if (!calib_profile_write_plot_data (prof, plot_dir, &paths, &error) || !render (paths, &error))
        {
          fprintf (stderr, "trainsim fit: %s\n", error->message);
          return 1;
        }
    }
  return 0;
}
