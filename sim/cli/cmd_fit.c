/* `trainsim fit MEASUREMENTS… -o PROFILE.ini [--plot DIR]`: reads benchmark TSVs and nccl-tests
 * output, fits the calibration models (calib/profile.c) and writes a [hardware] profile layer.
 * `trainsim fit --runs RUNS.csv -o LAYER.ini [--param NAME]… [--cross-validate]`: fits named profile
 * constants to measured step times (sim/calibrate/fitruns.h) and writes them as a profile layer. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <glib.h>
#include "calib/measure.h"
#include "calib/profile.h"
#include "sim/cli/cmd.h"
#include "sim/calibrate/fitruns.h"
#include "sim/calibrate/calibration.h"
#include "sim/report/plots.h"

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
      if (!sim_plots_gnuplot (script, data_paths[i], png, NULL, error))
        return FALSE;
      printf ("plot: %s\n", png);
    }
  return TRUE;
}

static void
print_errors (const SimValidateDeck *deck, const SimFitrunsResult *r)
{
  printf ("\n%-44s %11s %10s %10s%s\n", "run", "measured_s", "before_%", "fitted_%",
          r->loo_pct ? "  leave-one-out_%" : "");
  double sb = 0, sa = 0, sl = 0, mb = 0, ma = 0, ml = 0;
  for (guint i = 0; i < r->n; i++)
    {
      const SimValidateRow *row = sim_validate_deck_row (deck, i);
      printf ("%-44s %11.4g %+10.2f %+10.2f", row->id, row->step_time_s, r->before_pct[i], r->after_pct[i]);
      if (r->loo_pct)
        printf ("  %+16.2f", r->loo_pct[i]);
      printf ("\n");
      sb += fabs (r->before_pct[i]);
      sa += fabs (r->after_pct[i]);
      mb = MAX (mb, fabs (r->before_pct[i]));
      ma = MAX (ma, fabs (r->after_pct[i]));
      if (r->loo_pct)
        {
          sl += fabs (r->loo_pct[i]);
          ml = MAX (ml, fabs (r->loo_pct[i]));
        }
    }
  printf ("%-44s %11s %9.2f%% %9.2f%%", "MAPE", "", sb / r->n, sa / r->n);
  if (r->loo_pct)
    printf ("  %15.2f%%", sl / r->n);
  printf ("\n%-44s %11s %9.2f%% %9.2f%%", "max |error|", "", mb, ma);
  if (r->loo_pct)
    printf ("  %15.2f%%", ml);
  printf ("\n");
}

/* The deck, its unstated micro-batches resolved (sim_validate_deck_resolve). */
static SimValidateDeck *
load_runs (const char *runs, int threads)
{
  g_autoptr (GError) error = NULL;
  SimValidateDeck *deck = sim_validate_deck_load (runs, &error);
  if (deck == NULL)
    fprintf (stderr, "trainsim fit: --runs: %s\n", error->message);
  else
    sim_validate_deck_resolve (deck, threads);
  return deck;
}

static int
fit_runs (const char *runs, const char *out_path, GStrv params, GStrv layers, GStrv sets, int threads,
          gboolean cross_validate, const char *cmdline)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = load_runs (runs, threads);
  if (deck == NULL)
    return 2;
  /* --param a,b --param c */
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; params && params[i]; i++)
    {
      g_auto (GStrv) parts = g_strsplit (params[i], ",", -1);
      for (guint j = 0; parts[j]; j++)
        if (*g_strstrip (parts[j]))
          g_ptr_array_add (names, g_strdup (parts[j]));
    }
  g_ptr_array_add (names, NULL);
  SimValidateOptions opts = { (const char *const *) layers, (const char *const *) sets, threads, FALSE, FALSE };
  SimFitrunsResult r;
  if (!sim_fitruns_fit (deck, (const char *const *) names->pdata, &opts, cross_validate, &r, &error))
    {
      fprintf (stderr, "trainsim fit: %s\n", error->message);
      return error->domain == SIM_VALIDATE_ERROR && error->code == SIM_VALIDATE_ERROR_PARSE ? 2 : 1;
    }
  printf ("trainsim fit --runs %s: %u runs on %s, %d parameters, relative least squares (%d iterations, "
          "chi2/dof %.3g)\n\n",
          runs, r.n, r.gpu, r.np, r.iterations, r.dof > 0 ? r.chisq / r.dof : NAN);
  printf ("%-18s %-9s %10s %12s %10s\n", "parameter", "group", "start", "fitted", "1 sigma");
  for (int j = 0; j < r.np; j++)
    printf ("%-18s %-9s %10.4g %12.4g %10.2g%s\n", r.params[j].name, r.params[j].group, r.params[j].start,
            r.params[j].value, r.params[j].sigma, r.params[j].at_bound ? "  (at the bound of its range)" : "");
  print_errors (deck, &r);
  g_autofree char *text = sim_fitruns_layer (&r, runs, cmdline);
  sim_fitruns_result_clear (&r);
  if (!g_file_set_contents (out_path, text, -1, &error))
    {
      fprintf (stderr, "trainsim fit: cannot write the profile layer: %s\n", error->message);
      return 1;
    }
  printf ("\nprofile layer: %s\n", out_path);
  return 0;
}

/* --calibrate: the per-generation constants of sim/calibration.h over a deck of any GPU types; one
 * layer per generation, into DIR (or into FILE.ini when the deck has one generation). */
static int
fit_calibrate (const char *runs, const char *out_path, GStrv layers, GStrv sets, int threads,
               gboolean cross_validate, gboolean finite_differences, const char *cmdline)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = load_runs (runs, threads);
  if (deck == NULL)
    return 2;
  SimCalibrationOptions o = { { (const char *const *) layers, (const char *const *) sets, threads, FALSE, FALSE,
                                TRUE },
                              cross_validate, 0, finite_differences };
  SimCalibrationResult r;
  if (!sim_calibration_fit (deck, &o, &r, &error))
    {
      fprintf (stderr, "trainsim fit: %s\n", error->message);
      return error->domain == SIM_VALIDATE_ERROR && error->code == SIM_VALIDATE_ERROR_PARSE ? 2 : 1;
    }
  sim_calibration_write (stdout, &r, deck);
  int gens = 0;
  for (int g = 0; g < SIM_CALIBRATION_N_GENERATIONS; g++)
    for (guint i = 0; i < r.n; i++)
      if (r.generation[i] == g)
        {
          gens++;
          break;
        }
  gboolean to_file = g_str_has_suffix (out_path, ".ini");
  if (to_file && gens != 1)
    {
      fprintf (stderr, "trainsim fit: the deck spans %d GPU generations: give -o a directory for one layer each\n",
               gens);
      sim_calibration_result_clear (&r);
      return 2;
    }
  if (!to_file && g_mkdir_with_parents (out_path, 0755) != 0)
    {
      fprintf (stderr, "trainsim fit: cannot create %s\n", out_path);
      sim_calibration_result_clear (&r);
      return 1;
    }
  int status = 0;
  for (int g = 0; g < SIM_CALIBRATION_N_GENERATIONS && status == 0; g++)
    {
      g_autofree char *text = sim_calibration_layer (&r, deck, g, cmdline);
      if (text == NULL)
        continue;
      g_autofree char *name = g_strdup_printf ("%s.ini", sim_calibration_generation_name (g));
      g_autofree char *path = to_file ? g_strdup (out_path) : g_build_filename (out_path, name, NULL);
      if (!g_file_set_contents (path, text, -1, &error))
        {
          fprintf (stderr, "trainsim fit: cannot write the layer: %s\n", error->message);
          status = 1;
        }
      else
        printf ("layer: %s\n", path);
    }
  sim_calibration_result_clear (&r);
  return status;
}

int
sim_cmd_fit (int argc, char **argv)
{
  g_autofree char *out_path = NULL, *plot_dir = NULL, *hw_path = NULL, *runs = NULL;
  g_auto (GStrv) params = NULL;
  g_auto (GStrv) layers = NULL;
  g_auto (GStrv) sets = NULL;
  gboolean cross_validate = FALSE, calibrate = FALSE, finite_differences = FALSE;
  int threads = 0;
  GOptionEntry entries[] = {
    { "runs", 0, 0, G_OPTION_ARG_FILENAME, &runs,
      "fit profile constants to measured step times (deck format, see trainsim validate)", "RUNS.csv" },
    { "param", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &params,
      "with --runs: constant to fit (gemm_eff_max_bf16|fp16|fp8|fp4, attn_eff, attn_bwd_eff, mem_eff, nvlink_eff, nic_eff, overlap_slowdown; "
      "default gemm_eff_max_bf16,nic_eff,overlap_slowdown)", "NAME[,NAME…]" },
    { "cross-validate", 0, 0, G_OPTION_ARG_NONE, &cross_validate,
      "with --runs: also the leave-one-out error of every run (with --calibrate: leave-one-source-out and the "
      "band)", NULL },
    { "calibrate", 0, 0, G_OPTION_ARG_NONE, &calibrate,
      "with --runs: fit the per-generation in-situ constants (gemm_insitu_<dtype>, mem_insitu, launch_us) over a "
      "deck of any GPU types, robustly, with priors at the microbenchmark profile (sim/calibration.h); -o DIR "
      "gets one layer per generation (FILE.ini for a one-generation deck)", NULL },
    { "finite-differences", 0, 0, G_OPTION_ARG_NONE, &finite_differences,
      "with --calibrate: Jacobian by forward differences (a simulation per row and constant) and Broyden "
      "updates, instead of the simulations' own sensitivities (the default; one simulation per row)", NULL },
    { "layer", 'l', 0, G_OPTION_ARG_FILENAME_ARRAY, &layers, "with --runs: scenario file applied to every run",
      "FILE" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "with --runs: override one key in every run",
      "GROUP.KEY=VALUE" },
    { "threads", 'j', 0, G_OPTION_ARG_INT, &threads, "with --runs: runs simulated at once", "N" },
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
  if (runs != NULL)
    {
      if (out_path == NULL || argc > 1)
        {
          fprintf (stderr, "trainsim fit: --runs takes -o LAYER.ini and no measurement files (see trainsim fit "
                           "--help)\n");
          return 2;
        }
      if (finite_differences && !calibrate)
        {
          fprintf (stderr, "trainsim fit: --finite-differences goes with --calibrate\n");
          return 2;
        }
      if (calibrate)
        {
          if (params != NULL)
            {
              fprintf (stderr, "trainsim fit: --calibrate fits its own constants; drop --param\n");
              return 2;
            }
          return fit_calibrate (runs, out_path, layers, sets, threads, cross_validate, finite_differences, cmdline);
        }
      return fit_runs (runs, out_path, params, layers, sets, threads, cross_validate, cmdline);
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
