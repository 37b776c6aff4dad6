/* gnuplot driver for --plots; see sim/report/plots.h. */
#include "config.h"
#include <errno.h>
#include <gio/gio.h>
#include "sim/report/plots.h"
#include <stdio.h>
#include "model/memory.h"

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
  return sim_plots_render_with (script, in_tsv, NULL, dir, base, error);
}

gboolean
sim_plots_gnuplot (const char *script_path, const char *in, const char *out, const char *extra, GError **error)
{
#ifndef GNUPLOT_PATH
  (void) script_path, (void) in, (void) out, (void) extra;
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
               "plots need gnuplot, which configure did not find; install gnuplot-nox and reconfigure");
  return FALSE;
#else
  const char *argv[] = { GNUPLOT_PATH, "-c", script_path, in, out, extra, NULL };
  g_autofree char *err_text = NULL;
  int status = 0;
  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_text, &status,
                     error))
    return FALSE;
  if (!g_spawn_check_wait_status (status, NULL))
    {
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "gnuplot -c %s %s %s failed: %s", script_path, in, out,
                   err_text ? err_text : "");
      return FALSE;
    }
  return TRUE;
#endif
}

gboolean
sim_plots_render_with (const char *script, const char *in_tsv, const char *extra, const char *dir, const char *base,
                       GError **error)
{
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
      if (!sim_plots_gnuplot (path, in_tsv, out, extra, error))
        return FALSE;
    }
  return TRUE;
}

#define GIB (1024.0 * 1024.0 * 1024.0)

gboolean
sim_plots_run (const char *dir, const SimScenario *sc, const SimRunnerPrediction *pred, const SimTrace *trace,
               GError **error)
{
  if (!sim_plots_prepare_dir (dir, error))
    return FALSE;
  const ModelPlan *p = sim_scenario_plan (sc);
  g_autofree char *label = g_strdup_printf ("tp%d pp%d vpp%d cp%d dp%d mbs%d", p->tp, p->pp, p->vpp, p->cp, p->dp,
                                            p->micro_batch);
  if (pred)
    {
      g_autofree char *path = g_build_filename (dir, "run-breakdown.tsv", NULL);
      FILE *f = fopen (path, "w");
      if (!f)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--plots: cannot write %s", path);
          return FALSE;
        }
      fprintf (f, "# trainsim run: simulated step breakdown (s)\nplan");
      for (int i = 0; i < SIM_BD_COUNT; i++)
        fprintf (f, "\t%s_s", sim_breakdown_name (i));
      fprintf (f, "\n%s", label);
      double k = pred->step.step_ns > 0 ? pred->step_s / (pred->step.step_ns * 1e-9) : 1.0;
      for (int i = 0; i < SIM_BD_COUNT; i++)
        fprintf (f, "\t%.6g", pred->step.breakdown_s[i] * k);
      fprintf (f, "\n");
      fclose (f);
      if (!sim_plots_render ("breakdown", path, dir, "run-breakdown", error))
        return FALSE;
    }
  {
    g_autofree char *path = g_build_filename (dir, "run-memory.tsv", NULL);
    FILE *f = fopen (path, "w");
    if (!f)
      {
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--plots: cannot write %s", path);
        return FALSE;
      }
    fprintf (f, "# trainsim run: memory per GPU of each pipeline stage (model/memory.c), GiB\n"
                "pipeline stage (%s)\tweights_GiB\tgrads_GiB\toptimizer_GiB\tactivations_GiB\tother_GiB\tcapacity_GiB\n",
             label);
    int step = p->pp > 16 ? (p->pp + 15) / 16 : 1;
    for (int r = 0; r < p->pp; r += step)
      {
        ModelMemory m;
        model_memory_rank (sim_scenario_shape (sc), p, r, sim_scenario_run (sc)->memory_overhead_bytes, &m);
        fprintf (f, "stage %d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n", r, m.weights_bytes / GIB, m.grads_bytes / GIB,
                 m.optimizer_bytes / GIB, m.activations_bytes / GIB,
                 (m.zero3_gather_bytes + m.embedding_head_bytes + m.overhead_bytes) / GIB,
                 sim_scenario_gpu (sc)->hbm_bytes / GIB);
      }
    fclose (f);
    if (!sim_plots_render ("memory", path, dir, "run-memory", error))
      return FALSE;
  }
  if (trace)
    {
      g_autofree char *path = g_build_filename (dir, "run-timeline.tsv", NULL);
      if (!sim_trace_write_timeline (trace, path, 4, error)
          || !sim_plots_render ("timeline", path, dir, "run-timeline", error))
        return FALSE;
    }
  return TRUE;
}
