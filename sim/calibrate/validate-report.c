/* The validation report (sim/calibrate/validate.h): error statistics and the text, TSV, JSON and
 * plot outputs.
 *
 * Error of a row: e = 100 · (predicted − measured) / measured. Statistics over the modelled rows:
 * MAPE = mean |e|, median |e|, max |e|; the same per source and per GPU type, with the
 * leave-one-source-out errors and band coverage where given. Coverage = modelled rows / all rows
 * (skipped rows are listed with their reason, never dropped). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include "sim/calibrate/validate.h"
#include "sim/report/report.h"
#include "sim/report/plots.h"

/* ---- Statistics -------------------------------------------------------------------------------- */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

void
sim_validate_stats (const double *v, guint n, SimValidateStats *out)
{
  memset (out, 0, sizeof *out);
  out->n = n;
  out->max_index = -1;
  if (n == 0)
    {
      out->mape_pct = out->median_abs_pct = out->max_abs_pct = NAN;
      return;
    }
  double sum = 0;
  for (guint i = 0; i < n; i++)
    {
      sum += v[i];
      if (out->max_index < 0 || v[i] > out->max_abs_pct)
        {
          out->max_abs_pct = v[i];
          out->max_index = (int) i;
        }
    }
  out->mape_pct = sum / n;
  g_autofree double *s = g_memdup2 (v, n * sizeof *v);
  qsort (s, n, sizeof *s, cmp_double);
  out->median_abs_pct = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* ---- Report ------------------------------------------------------------------------------------ */

typedef struct {
  const char *key;
  guint total;
  GArray *abs;      /* double: |error| of the modelled rows */
  GArray *loso;     /* double: |leave-one-source-out error| where cross-validated */
  guint banded, in_band;
} Group;

static Group *
group_get (GPtrArray *groups, const char *key)
{
  for (guint i = 0; i < groups->len; i++)
    {
      Group *g = g_ptr_array_index (groups, i);
      if (strcmp (g->key, key) == 0)
        return g;
    }
  Group *g = g_new0 (Group, 1);
  g->key = key;
  g->abs = g_array_new (FALSE, FALSE, sizeof (double));
  g->loso = g_array_new (FALSE, FALSE, sizeof (double));
  g_ptr_array_add (groups, g);
  return g;
}

static void
group_free (gpointer p)
{
  Group *g = p;
  g_array_free (g->abs, TRUE);
  g_array_free (g->loso, TRUE);
  g_free (g);
}

/* The measurement lies inside the row's band (a banded, modelled row). */
static gboolean
in_band (const SimValidateResult *x)
{
  return x->measured_s >= x->band_lo_s && x->measured_s <= x->band_hi_s;
}

/* by = 0 all, 1 source, 2 gpu */
static GPtrArray *
groups_by (const SimValidateDeck *deck, const SimValidateResult *res, int by)
{
  GPtrArray *groups = g_ptr_array_new_with_free_func (group_free);
  for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      Group *g = group_get (groups, by == 0 ? "all" : by == 1 ? r->source : r->gpu);
      g->total++;
      if (res[i].status == SIM_VALIDATE_OK)
        {
          double a = fabs (res[i].error_pct);
          g_array_append_val (g->abs, a);
          if (res[i].band_hi_s > 0)
            {
              g->banded++;
              g->in_band += in_band (&res[i]);
            }
        }
      if (isfinite (res[i].loso_pct))
        {
          double a = fabs (res[i].loso_pct);
          g_array_append_val (g->loso, a);
        }
    }
  return groups;
}

/* The largest component of the breakdown besides compute. */
static SimBreakdown
main_loss (const SimValidateResult *res)
{
  SimBreakdown best = SIM_BD_TP;
  for (int b = SIM_BD_TP; b < SIM_BD_COUNT; b++)
    if (res->breakdown_s[b] > res->breakdown_s[best])
      best = b;
  return best;
}

static void
write_stats_line (FILE *out, const char *label, const Group *g)
{
  SimValidateStats st;
  sim_validate_stats ((const double *) g->abs->data, g->abs->len, &st);
  if (st.n == 0)
    fprintf (out, "  %3u/%-3u modelled  %-41s  %s\n", st.n, g->total, "", label);
  else
    {
      fprintf (out, "  %3u/%-3u modelled  MAPE %6.1f%%  median %6.1f%%  max %6.1f%%", st.n, g->total, st.mape_pct,
               st.median_abs_pct, st.max_abs_pct);
      SimValidateStats lo;
      sim_validate_stats ((const double *) g->loso->data, g->loso->len, &lo);
      if (lo.n > 0)
        fprintf (out, "  LOSO MAPE %6.1f%% max %6.1f%%", lo.mape_pct, lo.max_abs_pct);
      if (g->banded > 0)
        fprintf (out, "  in band %3.0f%%", 100.0 * g->in_band / g->banded);
      fprintf (out, "  %s\n", label);
    }
}

static void
write_text (FILE *out, const SimValidateDeck *deck, const SimValidateResult *res)
{
  guint n = sim_validate_deck_n_rows (deck);
  fprintf (out, "%-52s %11s %11s %8s %8s %-20s %s\n", "id", "predicted_s", "measured_s", "error_%", "LOSO_%",
           "band_s", "breakdown: compute; largest loss; MFU");
  for (guint i = 0; i < n; i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      const SimValidateResult *x = &res[i];
      if (x->status != SIM_VALIDATE_OK)
        {
          fprintf (out, "%-52s %11s %11.4f %8s  SKIPPED: %s\n", r->id, "-", r->step_time_s, "-", x->reason);
          continue;
        }
      SimBreakdown b = main_loss (x);
      g_autofree char *band = x->band_hi_s > 0 ? g_strdup_printf ("%.4g–%.4g%s", x->band_lo_s, x->band_hi_s,
                                                                 in_band (x) ? "" : " OUT")
                                               : g_strdup ("-");
      g_autofree char *loso = isfinite (x->loso_pct) ? g_strdup_printf ("%+.1f", x->loso_pct) : g_strdup ("-");
      fprintf (out, "%-52s %11.4f %11.4f %+8.1f %8s %-20s compute %.3f s; %s %.3f s (%.0f%%); MFU %.1f%%%s\n", r->id,
               x->predicted_s, x->measured_s, x->error_pct, loso, band, x->breakdown_s[SIM_BD_COMPUTE], sim_breakdown_name (b),
               x->breakdown_s[b], 100.0 * x->breakdown_s[b] / x->predicted_s, 100.0 * x->mfu,
               x->memory_over ? "; memory model over the GPU's memory" : "");
    }
  gboolean resolved = FALSE;
  for (guint i = 0; i < n; i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      if (r->micro_batch == r->micro_batch_deck)
        continue;
      if (!resolved)
        fprintf (out, "\nmicro-batch not stated (the deck's is a placeholder): the fastest that fits, simulated "
                      "uncalibrated\n");
      resolved = TRUE;
      fprintf (out, "  %-52s %d (deck: %d)\n", r->id, r->micro_batch, r->micro_batch_deck);
    }
  const char *titles[] = { "overall", "per source", "per GPU type" };
  for (int by = 0; by < 3; by++)
    {
      g_autoptr (GPtrArray) groups = groups_by (deck, res, by);
      fprintf (out, "\n%s (|error|: mean = MAPE, median, max)\n", titles[by]);
      for (guint i = 0; i < groups->len; i++)
        {
          const Group *g = g_ptr_array_index (groups, i);
          write_stats_line (out, g->key, g);
        }
    }
  g_autoptr (GPtrArray) all = groups_by (deck, res, 0);
  const Group *g = g_ptr_array_index (all, 0);
  fprintf (out, "\ncoverage %u/%u rows modelled (%.0f%%); %u skipped\n", g->abs->len, n,
           n ? 100.0 * g->abs->len / n : 0.0, n - g->abs->len);
  guint over = 0;
  for (guint i = 0; i < n; i++)
    over += res[i].status == SIM_VALIDATE_OK && res[i].memory_over;
  if (over > 0)
    fprintf (out, "memory model: %u row(s) ran but are predicted above their GPU's memory (simulated anyway)\n",
             over);
  double wall = 0;
  for (guint i = 0; i < n; i++)
    wall += res[i].wall_s;
  fprintf (out, "simulation time summed over rows %.1f s\n", wall);
}

static void
write_tsv (FILE *out, const SimValidateDeck *deck, const SimValidateResult *res)
{
  fprintf (out, "id\tsource\tgpu\tstatus\tpredicted_s\tmeasured_s\terror_pct\tmfu");
  for (int b = 0; b < SIM_BD_COUNT; b++)
    fprintf (out, "\t%s_s", sim_breakdown_name (b));
  fprintf (out, "\tband_lo_s\tband_hi_s\tloso_error_pct\twall_s\treason\n");
  for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      const SimValidateResult *x = &res[i];
      gboolean ok = x->status == SIM_VALIDATE_OK;
      fprintf (out, "%s\t%s\t%s\t%s\t", r->id, r->source, r->gpu, ok ? "ok" : "skipped");
      if (ok)
        fprintf (out, "%.6g\t%.6g\t%.3f\t%.4f", x->predicted_s, x->measured_s, x->error_pct, x->mfu);
      else
        fprintf (out, "NaN\t%.6g\tNaN\tNaN", x->measured_s);
      for (int b = 0; b < SIM_BD_COUNT; b++)
        fprintf (out, ok ? "\t%.6g" : "\tNaN", x->breakdown_s[b]);
      if (ok && x->band_hi_s > 0)
        fprintf (out, "\t%.6g\t%.6g", x->band_lo_s, x->band_hi_s);
      else
        fprintf (out, "\tNaN\tNaN");
      if (ok && isfinite (x->loso_pct))
        fprintf (out, "\t%.3f", x->loso_pct);
      else
        fprintf (out, "\tNaN");
      fprintf (out, "\t%.2f\t%s\n", x->wall_s, ok ? "" : x->reason);
    }
  for (int by = 0; by < 3; by++)
    {
      g_autoptr (GPtrArray) groups = groups_by (deck, res, by);
      for (guint i = 0; i < groups->len; i++)
        {
          const Group *g = g_ptr_array_index (groups, i);
          SimValidateStats st;
          sim_validate_stats ((const double *) g->abs->data, g->abs->len, &st);
          fprintf (out, "# summary\t%s\t%s\tmodelled=%u\ttotal=%u\tmape_pct=%.3f\tmedian_abs_error_pct=%.3f\t"
                        "max_abs_error_pct=%.3f\n",
                   by == 0 ? "all" : by == 1 ? "source" : "gpu", g->key, st.n, g->total, st.mape_pct,
                   st.median_abs_pct, st.max_abs_pct);
        }
    }
}

static void
json_stats (JsonBuilder *b, const Group *g)
{
  SimValidateStats st;
  sim_validate_stats ((const double *) g->abs->data, g->abs->len, &st);
  json_builder_set_member_name (b, "modeled");
  json_builder_add_int_value (b, st.n);
  json_builder_set_member_name (b, "total");
  json_builder_add_int_value (b, g->total);
  if (st.n > 0)
    {
      json_builder_set_member_name (b, "mape_pct");
      json_builder_add_double_value (b, st.mape_pct);
      json_builder_set_member_name (b, "median_abs_error_pct");
      json_builder_add_double_value (b, st.median_abs_pct);
      json_builder_set_member_name (b, "max_abs_error_pct");
      json_builder_add_double_value (b, st.max_abs_pct);
    }
  else
    {
      const char *names[] = { "mape_pct", "median_abs_error_pct", "max_abs_error_pct" };
      for (int i = 0; i < 3; i++)
        {
          json_builder_set_member_name (b, names[i]);
          json_builder_add_null_value (b);
        }
    }
  SimValidateStats lo;
  sim_validate_stats ((const double *) g->loso->data, g->loso->len, &lo);
  sim_report_json_double_or_null (b, "loso_mape_pct", lo.n > 0, lo.mape_pct);
  sim_report_json_double_or_null (b, "loso_max_abs_error_pct", lo.n > 0, lo.max_abs_pct);
  sim_report_json_double_or_null (b, "band_coverage_pct", g->banded > 0, 100.0 * g->in_band / MAX (g->banded, 1));
}

static void
write_json (FILE *out, const SimValidateDeck *deck, const SimValidateResult *res, const char *argv_text)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "tool");
  json_builder_add_string_value (b, "trainsim validate " PACKAGE_VERSION);
  json_builder_set_member_name (b, "command");
  json_builder_add_string_value (b, argv_text ? argv_text : "");
  json_builder_set_member_name (b, "deck");
  json_builder_add_string_value (b, sim_validate_deck_name (deck));
  json_builder_set_member_name (b, "rows");
  json_builder_begin_array (b);
  for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      const SimValidateResult *x = &res[i];
      gboolean ok = x->status == SIM_VALIDATE_OK;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, r->id);
      json_builder_set_member_name (b, "source");
      json_builder_add_string_value (b, r->source);
      json_builder_set_member_name (b, "gpu");
      json_builder_add_string_value (b, r->gpu);
      json_builder_set_member_name (b, "status");
      json_builder_add_string_value (b, ok ? "ok" : "skipped");
      json_builder_set_member_name (b, "micro_batch");
      json_builder_add_int_value (b, r->micro_batch);
      if (r->micro_batch != r->micro_batch_deck)
        {
          json_builder_set_member_name (b, "micro_batch_deck");
          json_builder_add_int_value (b, r->micro_batch_deck);
        }
      json_builder_set_member_name (b, "measured_s");
      json_builder_add_double_value (b, x->measured_s);
      json_builder_set_member_name (b, "predicted_s");
      if (ok)
        json_builder_add_double_value (b, x->predicted_s);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "error_pct");
      if (ok)
        json_builder_add_double_value (b, x->error_pct);
      else
        json_builder_add_null_value (b);
      if (ok)
        {
          json_builder_set_member_name (b, "mfu");
          json_builder_add_double_value (b, x->mfu);
          sim_report_json_double_or_null (b, "band_lo_s", x->band_hi_s > 0, x->band_lo_s);
          sim_report_json_double_or_null (b, "band_hi_s", x->band_hi_s > 0, x->band_hi_s);
          sim_report_json_double_or_null (b, "loso_error_pct", isfinite (x->loso_pct), x->loso_pct);
          json_builder_set_member_name (b, "memory_gib");
          json_builder_add_double_value (b, x->memory_gib);
          json_builder_set_member_name (b, "memory_over");
          json_builder_add_boolean_value (b, x->memory_over);
          json_builder_set_member_name (b, "breakdown_s");
          json_builder_begin_object (b);
          for (int k = 0; k < SIM_BD_COUNT; k++)
            {
              json_builder_set_member_name (b, sim_breakdown_name (k));
              json_builder_add_double_value (b, x->breakdown_s[k]);
            }
          json_builder_end_object (b);
          json_builder_set_member_name (b, "comm_busy_s");
          json_builder_begin_object (b);
          for (int k = SIM_BD_TP; k <= SIM_BD_EP; k++)
            {
              json_builder_set_member_name (b, sim_breakdown_name (k));
              json_builder_add_double_value (b, x->comm_busy_s[k]);
            }
          json_builder_end_object (b);
        }
      else
        {
          json_builder_set_member_name (b, "reason");
          json_builder_add_string_value (b, x->reason);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  g_autoptr (GPtrArray) all = groups_by (deck, res, 0);
  json_stats (b, g_ptr_array_index (all, 0));
  for (int by = 1; by < 3; by++)
    {
      g_autoptr (GPtrArray) groups = groups_by (deck, res, by);
      json_builder_set_member_name (b, by == 1 ? "per_source" : "per_gpu");
      json_builder_begin_array (b);
      for (guint i = 0; i < groups->len; i++)
        {
          const Group *g = g_ptr_array_index (groups, i);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, by == 1 ? "source" : "gpu");
          json_builder_add_string_value (b, g->key);
          json_stats (b, g);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  sim_report_print_json (out, b);
}

void
sim_validate_write (FILE *out, const SimValidateDeck *deck, const SimValidateResult *results,
                    SimValidateFormat format, const char *argv_text)
{
  switch (format)
    {
    case SIM_VALIDATE_TSV:
      fprintf (out, "# tool\ttrainsim validate %s\n# command\t%s\n# deck\t%s\n", PACKAGE_VERSION,
               argv_text ? argv_text : "", sim_validate_deck_name (deck));
      write_tsv (out, deck, results);
      break;
    case SIM_VALIDATE_JSON:
      write_json (out, deck, results, argv_text);
      break;
    case SIM_VALIDATE_TEXT:
    default:
      fprintf (out, "trainsim validate %s: %s (%u rows)\n\n", PACKAGE_VERSION, sim_validate_deck_name (deck),
               sim_validate_deck_n_rows (deck));
      write_text (out, deck, results);
      break;
    }
}

gboolean
sim_validate_plot (const SimValidateDeck *deck, const SimValidateResult *res, const char *script, const char *png,
                   GError **error)
{
  if (!g_file_test (script, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "plot script %s not found; set TRAINSIM_PLOTS_DIR to the directory holding validate.gp", script);
      return FALSE;
    }
  g_autofree char *data_path = g_strconcat (png, ".tsv", NULL);
  g_autoptr (GString) data = g_string_new ("# trainsim validate: predicted vs measured step time per GPU type\n");
  g_autoptr (GPtrArray) gpus = groups_by (deck, res, 2);
  for (guint k = 0; k < gpus->len; k++)
    {
      const Group *g = g_ptr_array_index (gpus, k);
      if (g->abs->len == 0)
        continue;
      g_string_append_printf (data, "%s\n", g->key);
      for (guint i = 0; i < sim_validate_deck_n_rows (deck); i++)
        {
          const SimValidateRow *r = sim_validate_deck_row (deck, i);
          if (res[i].status == SIM_VALIDATE_OK && strcmp (r->gpu, g->key) == 0)
            g_string_append_printf (data, "%.6g\t%.6g\t%s\n", res[i].measured_s, res[i].predicted_s, r->id);
        }
      g_string_append (data, "\n\n");
    }
  if (!g_file_set_contents (data_path, data->str, -1, error))
    return FALSE;
  return sim_plots_gnuplot (script, data_path, png, NULL, error);
}
