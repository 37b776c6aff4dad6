/* `trainsim sweep SCENARIO… --vary group.key=V1,V2,… [--vary …]`: a grid of what-ifs.
 *
 * Points are spread over MPI ranks (round-robin over the points still to do), and every row
 * travels as its serialized line to rank 0, which appends it to --out as it arrives and prints
 * the table from the rows alone: a resumed, a distributed and a serial sweep print the same bytes.
 * Exit status: 0 ok (invalid points are rows, not failures), 1 output failed, 2 bad usage. */
#include "config.h"
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/cli/cmd.h"
#include "sim/plan/dist.h"
#include "sim/report/plots.h"
#include "sim/plan/progress.h"
#include "sim/plan/sweep.h"
#include "model/memory.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static int
compare_rows (const void *a, const void *b)
{
  const SimSweepRow *x = *(SimSweepRow *const *) a, *y = *(SimSweepRow *const *) b;
  return (x->index > y->index) - (x->index < y->index);
}

static void
row_free (gpointer p)
{
  sim_sweep_row_clear (p);
  g_free (p);
}

static int
fail (const char *msg, int status)
{
  if (sim_dist_rank () == 0)
    fprintf (stderr, "trainsim sweep: %s\n", msg);
  sim_dist_finalize ();
  return status;
}

/* A point's label in plots: its axis values. */
static char *
point_label (const SimSweep *sw, const SimSweepRow *r)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < sim_sweep_n_axes (sw); i++)
    g_string_append_printf (s, "%s%s", i ? "/" : "", r->values[i]);
  for (char *p = s->str; *p; p++)
    if (*p == ' ' || *p == '\t')
      *p = '_';
  return g_string_free (s, FALSE);
}

/* --measured FILE: lines "GPUS STEP_S" ('#' comments); written as (gpus, efficiency against the
 * file's smallest scale, by the same formula as the predicted curve) for plots/scaling.gp. */
static gboolean
write_measured (const char *in, const char *out, gboolean weak, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (in, &text, NULL, error))
    return FALSE;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  GArray *g = g_array_new (FALSE, FALSE, sizeof (double)), *t = g_array_new (FALSE, FALSE, sizeof (double));
  for (int i = 0; lines[i]; i++)
    {
      double a, b;
      if (lines[i][0] == '#' || sscanf (lines[i], "%lf %lf", &a, &b) != 2)
        continue;
      if (!(a > 0 && b > 0))
        continue;
      g_array_append_val (g, a);
      g_array_append_val (t, b);
    }
  gboolean ok = g->len > 0;
  if (!ok)
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                 "--measured %s: no \"GPUS STEP_S\" lines; give one measured step time per GPU count", in);
  FILE *f = ok ? fopen (out, "w") : NULL;
  if (ok && !f)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--plots: cannot write %s", out);
      ok = FALSE;
    }
  if (ok)
    {
      guint base = 0;
      for (guint i = 1; i < g->len; i++)
        if (g_array_index (g, double, i) < g_array_index (g, double, base))
          base = i;
      double g0 = g_array_index (g, double, base), t0 = g_array_index (t, double, base);
      fprintf (f, "# measured scaling from %s (base %.0f GPUs, %s)\ngpus\tefficiency\n", in, g0, weak ? "weak" : "strong");
      for (guint i = 0; i < g->len; i++)
        {
          double gi = g_array_index (g, double, i), ti = g_array_index (t, double, i);
          fprintf (f, "%.0f\t%.6g\n", gi, weak ? t0 / ti : t0 * g0 / (ti * gi));
        }
      fclose (f);
    }
  g_array_unref (g);
  g_array_unref (t);
  return ok;
}

static gboolean
write_plots (const SimSweep *sw, SimSweepRow *const *rows, guint n, const double *scaling, SimSweepScaling mode,
             const char *dir, const char *measured, const char *argv_text, GError **error)
{
  if (!sim_plots_prepare_dir (dir, error))
    return FALSE;
  g_autofree char *tsv = g_build_filename (dir, "sweep.tsv", NULL);
  g_autofree char *bd = g_build_filename (dir, "sweep-breakdown.tsv", NULL);
  g_autofree char *mem = g_build_filename (dir, "sweep-memory.tsv", NULL);
  FILE *f = fopen (tsv, "w"), *fb = fopen (bd, "w"), *fm = fopen (mem, "w");
  if (!f || !fb || !fm)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--plots: cannot write into %s", dir);
      if (f)
        fclose (f);
      if (fb)
        fclose (fb);
      if (fm)
        fclose (fm);
      return FALSE;
    }
  sim_sweep_write (f, sw, rows, n, scaling, mode, SIM_SWEEP_TSV, argv_text);
  fclose (f);
  GString *axes = g_string_new (NULL);
  for (guint i = 0; i < sim_sweep_n_axes (sw); i++)
    g_string_append_printf (axes, "%s%s", i ? " / " : "", sim_sweep_axis_key (sw, i));
  fprintf (fb, "# trainsim sweep: step breakdown per predicted point\n%s", axes->str);
  for (int k = 0; k < SIM_EST_COUNT; k++)
    fprintf (fb, "\t%s_s", sim_estimate_part_name (k));
  fprintf (fb, "\n");
  fprintf (fm, "# trainsim sweep: memory per GPU of the fullest pipeline stage (GiB)\n"
               "%s\tweights_GiB\tgrads_GiB\toptimizer_GiB\tactivations_GiB\tother_GiB\tcapacity_GiB\n", axes->str);
  g_string_free (axes, TRUE);
  for (guint r = 0; r < n; r++)
    {
      if (rows[r]->status == SIM_SWEEP_INVALID)
        continue;
      g_autofree char *label = point_label (sw, rows[r]);
      if (sim_sweep_row_predicted (rows[r]))
        {
          fprintf (fb, "%s", label);
          for (int k = 0; k < SIM_EST_COUNT; k++)
            fprintf (fb, "\t%.6g", rows[r]->part_s[k]);
          fprintf (fb, "\n");
        }
      ModelMemory m;
      double cap;
      if (sim_sweep_memory (sw, rows[r]->index, &m, &cap))
        fprintf (fm, "%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n", label, m.weights_bytes / GIB, m.grads_bytes / GIB,
                 m.optimizer_bytes / GIB, m.activations_bytes / GIB,
                 (m.zero3_gather_bytes + m.embedding_head_bytes + m.overhead_bytes) / GIB, cap / GIB);
    }
  fclose (fb);
  fclose (fm);
  if (!sim_plots_render ("breakdown", bd, dir, "breakdown", error))
    return FALSE;
  if (!sim_plots_render ("memory", mem, dir, "memory", error))
    return FALSE;
  if (scaling)
    {
      /* One curve: the rows of the first values of the other axes (the curve of point 0). */
      g_autofree char *sp = g_build_filename (dir, "sweep-scaling.tsv", NULL);
      FILE *fs = fopen (sp, "w");
      if (!fs)
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--plots: cannot write %s", sp);
          return FALSE;
        }
      fprintf (fs, "# trainsim sweep: scaling efficiency\n# scaling:\t%s\ngpus\tstep_s\tefficiency\n",
               mode == SIM_SWEEP_SCALING_WEAK ? "weak" : mode == SIM_SWEEP_SCALING_STRONG ? "strong"
               : n > 1 && rows[0]->global_batch != rows[n - 1]->global_batch ? "weak" : "strong");
      int ga = -1;
      for (guint i = 0; i < sim_sweep_n_axes (sw); i++)
        if (strcmp (sim_sweep_axis_key (sw, i), "cluster.gpus") == 0)
          ga = (int) i;
      for (guint r = 0; r < n; r++)
        {
          gboolean same = TRUE;
          for (guint i = 0; i < sim_sweep_n_axes (sw) && n > 0; i++)
            if ((int) i != ga && strcmp (rows[r]->values[i], rows[0]->values[i]) != 0)
              same = FALSE;
          if (same && sim_sweep_row_predicted (rows[r]) && isfinite (scaling[r]))
            fprintf (fs, "%d\t%.6g\t%.6g\n", rows[r]->gpus, rows[r]->step_s, scaling[r]);
        }
      fclose (fs);
      gboolean weak = mode == SIM_SWEEP_SCALING_WEAK
                      || (mode == SIM_SWEEP_SCALING_AUTO && n > 1 && rows[0]->global_batch != rows[n - 1]->global_batch);
      g_autofree char *mp = g_build_filename (dir, "measured-scaling.tsv", NULL);
      if (measured && !write_measured (measured, mp, weak, error))
        return FALSE;
      if (!sim_plots_render_with (("scaling"), sp, measured ? mp : NULL, dir, "scaling", error))
        return FALSE;
    }
  return TRUE;
}

int
sim_cmd_sweep (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) varies = NULL;
  g_auto (GStrv) files = NULL;
  g_autofree char *format_name = NULL, *out_path = NULL, *scaling_name = NULL, *plots_dir = NULL, *measured = NULL;
  int base_gpus = 0;
  gboolean estimate = FALSE;
  GOptionEntry entries[] = {
    { "estimate", 'e', 0, G_OPTION_ARG_NONE, &estimate,
      "Closed-form estimate only (sim/estimate.c), no step simulation: thousands of points a second", NULL },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { "vary", 'v', 0, G_OPTION_ARG_STRING_ARRAY, &varies,
      "Sweep a key over values (repeatable: a grid, first --vary outermost); values holding commas "
      "(parallel.order) are separated by ';'", "GROUP.KEY=V1,V2,..." },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "Output format: text (default), tsv, json", "FORMAT" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
      "Append rows to FILE as they are computed; rerunning the same sweep resumes from it", "FILE" },
    { "scaling", 0, 0, G_OPTION_ARG_STRING, &scaling_name,
      "Scaling efficiency over cluster.gpus: weak (step(base)/step), strong (step(base)·base/(step·gpus)) "
      "or auto (default: weak where the global batch grew with the GPUs, else strong)", "auto|weak|strong" },
    { "base-gpus", 0, 0, G_OPTION_ARG_INT, &base_gpus, "Base scale of the efficiency (default: the smallest)", "N" },
    { "plots", 0, 0, G_OPTION_ARG_FILENAME, &plots_dir, "Write sweep.tsv and gnuplot PNG/SVG plots into DIR", "DIR" },
    { "measured", 0, 0, G_OPTION_ARG_FILENAME, &measured,
      "Measured step times (lines \"GPUS STEP_S\") drawn on the scaling plot", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini...] --vary GROUP.KEY=V1,V2,... - what-if grid");
  g_option_context_set_summary (ctx,
    "Evaluates the scenario at every point of the grid of --vary values (each point is the\n"
    "scenario with `--set KEY=VALUE` per axis) and prints one row per point: plan, step time\n"
    "and its breakdown, MFU, memory per GPU, time to train. Points whose plan is invalid are\n"
    "rows with the reason; points over the GPU's memory are rows marked no-fit with the reason\n"
    "and predicted as if they fit (the memory model may overstate a run that ran). Sweeping\n"
    "cluster.gpus adds the scaling efficiency. Under `mpirun -n N` the points are split over the\n"
    "ranks; the output is the same as a serial run's.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim sweep: %s\n(`trainsim sweep --help` lists the options)\n", error->message);
      g_error_free (error);
      return 2;
    }
  sim_dist_init (&argc, &argv);
  SimSweepFormat format = SIM_SWEEP_TEXT;
  if (format_name && !sim_sweep_parse_format (format_name, &format))
    return fail ("--format: unknown format; use text, tsv or json", 2);
  SimSweepScaling mode = SIM_SWEEP_SCALING_AUTO;
  if (scaling_name && strcmp (scaling_name, "strong") == 0)
    mode = SIM_SWEEP_SCALING_STRONG;
  else if (scaling_name && strcmp (scaling_name, "weak") == 0)
    mode = SIM_SWEEP_SCALING_WEAK;
  else if (scaling_name && strcmp (scaling_name, "auto") != 0)
    return fail ("--scaling: use auto, weak or strong", 2);
  if (!varies || !varies[0])
    return fail ("nothing to sweep; give at least one --vary GROUP.KEY=V1,V2,...", 2);
  g_autoptr (SimSweep) sw = sim_sweep_new ((const char *const *) files, (const char *const *) sets);
  sim_sweep_set_simulate (sw, !estimate);
  for (int i = 0; varies[i]; i++)
    if (!sim_sweep_add_vary (sw, varies[i], &error))
      {
        int st = fail (error->message, 2);
        g_error_free (error);
        return st;
      }
  guint n = sim_sweep_n_points (sw);
  const guint n_axes = sim_sweep_n_axes (sw);
  gboolean root = sim_dist_rank () == 0;
  int size = sim_dist_size ();

  /* Errors that are not a property of a point (unreadable file, unknown key) stop the sweep
   * before any work: point 0 shows them. */
  if (!sim_sweep_check (sw, &error))
    {
      int st = fail (error->message, 2);
      g_error_free (error);
      return st;
    }

  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (row_free);
  SimSweepLog *log = NULL;
  g_autofree char *done_map = NULL;
  if (root)
    {
      done_map = g_malloc0 (n + 1);
      memset (done_map, '0', n);
      if (out_path)
        {
          log = sim_sweep_log_open (sw, out_path, rows, &error);
          if (!log)
            {
              fprintf (stderr, "trainsim sweep: %s\n", error->message);
              g_clear_error (&error);
              done_map[0] = 'X'; /* tells the other ranks to stop */
            }
          else
            for (guint i = 0; i < rows->len; i++)
              {
                SimSweepRow *r = rows->pdata[i];
                if (r->index < n)
                  done_map[r->index] = '1';
              }
        }
    }
  g_autofree char *done = sim_dist_bcast_string (done_map);
  if (done[0] == 'X')
    {
      sim_dist_finalize ();
      return 2;
    }
  /* Drop duplicate rows of a resumed file (a point written twice keeps its first row). */
  if (root && rows->len > 0)
    {
      g_autofree gboolean *seen = g_new0 (gboolean, n);
      for (guint i = 0; i < rows->len;)
        {
          SimSweepRow *r = rows->pdata[i];
          if (r->index >= n || seen[r->index])
            g_ptr_array_remove_index (rows, i);
          else
            seen[r->index] = TRUE, i++;
        }
    }
  g_autoptr (GArray) pending = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < n; i++)
    if (done[i] != '1')
      g_array_append_val (pending, i);

  g_autoptr (SimProgress) progress = sim_progress_new ("points", n, root);
  guint have = n - pending->len;
  sim_progress_update (progress, have);
  int status = 0;
  const char *ka = g_getenv ("TRAINSIM_TEST_KILL_AFTER_ROWS");
  guint kill_after = ka ? (guint) g_ascii_strtoull (ka, NULL, 10) : 0, written = 0;
  for (guint start = 0; start < pending->len; start += size)
    {
      g_autoptr (GPtrArray) mine = g_ptr_array_new_with_free_func (g_free);
      guint k = start + sim_dist_rank ();
      if (k < pending->len)
        {
          SimSweepRow row = { 0 };
          if (sim_sweep_eval (sw, g_array_index (pending, guint, k), &row, &error))
            g_ptr_array_add (mine, sim_sweep_row_to_line (&row, n_axes));
          else
            {
              g_ptr_array_add (mine, g_strdup_printf ("!%s", error->message));
              g_clear_error (&error);
            }
          sim_sweep_row_clear (&row);
        }
      g_autoptr (GPtrArray) got = g_ptr_array_new_with_free_func (g_free);
      sim_dist_gather_lines (mine, got);
      int stop = 0;
      if (root)
        for (guint i = 0; i < got->len && !stop; i++)
          {
            const char *line = got->pdata[i];
            if (line[0] == '!')
              {
                fprintf (stderr, "trainsim sweep: %s\n", line + 1);
                stop = 2;
                break;
              }
            SimSweepRow *r = g_new0 (SimSweepRow, 1);
            if (!sim_sweep_row_from_line (line, n_axes, r, &error) || (log && !sim_sweep_log_append (log, line, &error)))
              {
                fprintf (stderr, "trainsim sweep: %s\n", error->message);
                g_clear_error (&error);
                row_free (r);
                stop = 1;
                break;
              }
            g_ptr_array_add (rows, r);
            sim_progress_update (progress, ++have);
            /* The resume test's interrupt: killed right after a row reached the file. */
            if (log && kill_after > 0 && ++written == kill_after)
              raise (SIGKILL);
          }
      stop = sim_dist_bcast_int (stop);
      if (stop)
        {
          status = stop;
          break;
        }
    }
  sim_sweep_log_close (log);
  g_clear_pointer (&progress, sim_progress_free);
  if (root && status == 0)
    {
      g_ptr_array_sort (rows, compare_rows);
      SimSweepRow *const *rv = (SimSweepRow *const *) rows->pdata;
      gboolean scale = FALSE;
      for (guint i = 0; i < n_axes; i++)
        scale |= strcmp (sim_sweep_axis_key (sw, i), "cluster.gpus") == 0;
      g_autofree double *eff = NULL;
      if (scale)
        {
          eff = g_new (double, rows->len);
          sim_sweep_scaling (sw, rv, rows->len, base_gpus, mode, eff);
        }
      sim_sweep_write (stdout, sw, rv, rows->len, eff, mode, format, argv_text);
      if (fflush (stdout) != 0)
        status = 1;
      if (plots_dir && !write_plots (sw, rv, rows->len, eff, mode, plots_dir, measured, argv_text, &error))
        {
          fprintf (stderr, "trainsim sweep: %s\n", error->message);
          g_clear_error (&error);
          status = 1;
        }
    }
  status = sim_dist_bcast_int (status);
  sim_dist_finalize ();
  return status;
}
