/* Reading trainer logs and comparing them with predictions (see compare.h). */
#include "sim/calibrate/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "sim/scenario/scenario.h"

static const char *const column_of_phase[SIM_PHASE_COUNT] = {
  [SIM_PHASE_STEP] = "step_ms",
  [SIM_PHASE_FORWARD] = "forward_ms",
  [SIM_PHASE_BACKWARD] = "backward_ms",
  [SIM_PHASE_OPTIMIZER] = "optimizer_ms",
  [SIM_PHASE_COMM_EXPOSED] = "comm_exposed_ms",
};

static const char *const phase_names[SIM_PHASE_COUNT] = {
  "step", "forward", "backward", "optimizer", "exposed_comm",
};

const char *
sim_phase_name (SimPhase p)
{
  g_return_val_if_fail (p < SIM_PHASE_COUNT, "?");
  return phase_names[p];
}

double
sim_compare_error_pct (double predicted, double measured)
{
  return 100.0 * (predicted - measured) / measured;
}

void
sim_trainer_log_clear (SimTrainerLog *log)
{
  if (log->provenance)
    g_ptr_array_unref (log->provenance);
  memset (log, 0, sizeof *log);
}

static gboolean
fail (GError **error, const char *path, int line, const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
fail (GError **error, const char *path, int line, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_SYNTAX, "%s:%d: %s", path, line, msg);
  return FALSE;
}

/* Parses the rows of a trainer log into per-phase value arrays (seconds). */
static gboolean
parse_rows (const char *path, const char *text, int skip, SimTrainerLog *out, GArray *values[SIM_PHASE_COUNT],
            GError **error)
{
  int col[SIM_PHASE_COUNT];
  int step_col = -1, n_cols = 0;
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    col[p] = -1;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  gboolean have_header = FALSE;
  for (int ln = 0; lines[ln]; ln++)
    {
      char *line = g_strchomp (lines[ln]); /* also drops a CR */
      if (line[0] == '\0')
        continue;
      if (line[0] == '#')
        {
          g_ptr_array_add (out->provenance, g_strdup (g_strstrip (line + 1)));
          continue;
        }
      g_auto (GStrv) fields = g_strsplit (line, "\t", -1);
      int nf = (int) g_strv_length (fields);
      if (!have_header)
        {
          have_header = TRUE;
          n_cols = nf;
          for (int i = 0; i < nf; i++)
            {
              if (strcmp (fields[i], "step") == 0)
                step_col = i;
              for (int p = 0; p < SIM_PHASE_COUNT; p++)
                if (strcmp (fields[i], column_of_phase[p]) == 0)
                  col[p] = i;
            }
          if (step_col < 0 || col[SIM_PHASE_STEP] < 0)
            return fail (error, path, ln + 1,
                         "header row has no `step` and `step_ms` columns; is this a trainsim-trainer TSV?");
          continue;
        }
      if (nf != n_cols)
        return fail (error, path, ln + 1, "%d fields where the header has %d", nf, n_cols);
      out->rows++;
      if (out->rows <= skip)
        {
          out->skipped++;
          continue;
        }
      for (int p = 0; p < SIM_PHASE_COUNT; p++)
        {
          if (col[p] < 0)
            continue;
          char *end = NULL;
          errno = 0;
          double v = g_ascii_strtod (fields[col[p]], &end);
          if (errno || end == fields[col[p]] || *end || !isfinite (v) || v < 0)
            return fail (error, path, ln + 1, "column %s: '%s' is not a finite non-negative number",
                         column_of_phase[p], fields[col[p]]);
          v *= 1e-3; /* ms -> s */
          g_array_append_val (values[p], v);
        }
    }
  if (!have_header)
    return fail (error, path, 1, "no header row: the file holds no steps");
  out->used = out->rows - out->skipped;
  if (out->used < 1)
    return fail (error, path, 1, "%d step rows, all within the %d skipped warm-up steps; lower --skip",
                 out->rows, skip);
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    {
      out->median_s[p] = -1;
      if (col[p] < 0)
        continue;
      double *v = (double *) values[p]->data;
      gsl_sort (v, 1, values[p]->len);
      out->median_s[p] = gsl_stats_median_from_sorted_data (v, 1, values[p]->len);
    }
  return TRUE;
}

gboolean
sim_trainer_log_parse (const char *name, const char *text, int skip, SimTrainerLog *out, GError **error)
{
  memset (out, 0, sizeof *out);
  out->provenance = g_ptr_array_new_with_free_func (g_free);
  GArray *values[SIM_PHASE_COUNT];
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    values[p] = g_array_new (FALSE, FALSE, sizeof (double));
  gboolean ok = parse_rows (name, text, skip, out, values, error);
  for (int p = 0; p < SIM_PHASE_COUNT; p++)
    g_array_free (values[p], TRUE);
  return ok;
}

gboolean
sim_trainer_log_read (const char *path, int skip, SimTrainerLog *out, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    {
      memset (out, 0, sizeof *out);
      return FALSE;
    }
  return sim_trainer_log_parse (path, text, skip, out, error);
}
