/* Chrome trace writer and merged timeline; see sim/report/trace.h. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sim/report/trace.h"

typedef struct {
  int rank, stage, stream;
  const char *category, *stream_name;
  gint64 start_ns, end_ns;
} Interval;

struct SimTrace {
  FILE *f;
  char *path;
  guint64 n;
  GArray *intervals;      /* Interval, merged */
  GHashTable *last;       /* (rank, stream) -> index of its last interval + 1 */
  GHashTable *named;      /* rank -> stage, for metadata; (rank << 4 | stream) for thread names */
  char *link_path;
  gboolean link_failed;
};

void
sim_trace_set_link_stats (SimTrace *t, const char *path)
{
  g_free (t->link_path);
  t->link_path = g_strdup (path);
}

static const char *
node_name (SimNodeKind k)
{
  static const char *const names[] = { "gpu", "nvswitch", "nic", "leaf", "spine", "core" };
  return (unsigned) k < G_N_ELEMENTS (names) ? names[k] : "?";
}

void
sim_trace_links (gpointer user, const SimTopology *topo, const double *bytes, gint64 step_ns)
{
  SimTrace *t = user;
  if (!t->link_path)
    return;
  FILE *f = fopen (t->link_path, "w");
  if (!f)
    {
      t->link_failed = TRUE;
      return;
    }
  int n = sim_topology_n_links (topo);
  double step_s = step_ns > 0 ? step_ns * 1e-9 : 1.0;
  double sum[SIM_LINK_KIND_COUNT] = { 0 }, max[SIM_LINK_KIND_COUNT] = { 0 };
  int cnt[SIM_LINK_KIND_COUNT] = { 0 }, used[SIM_LINK_KIND_COUNT] = { 0 };
  for (int i = 0; i < n; i++)
    {
      const SimLink *l = sim_topology_link (topo, i);
      double u = l->bandwidth_bytes_per_s > 0 ? bytes[i] / (l->bandwidth_bytes_per_s * step_s) : 0.0;
      cnt[l->kind]++;
      sum[l->kind] += u;
      max[l->kind] = MAX (max[l->kind], u);
      used[l->kind] += bytes[i] > 0;
    }
  fprintf (f, "# trainsim run: bytes per link over one simulated step of %.6f s (every flow of the step is\n"
              "# on the fabric, also with representative ranks); utilisation = bytes / (capacity x step)\n"
              "# kind\tlinks\tused\tmean_util\tmax_util\n", step_s);
  for (int k = 0; k < SIM_LINK_KIND_COUNT; k++)
    if (cnt[k] > 0)
      fprintf (f, "# %s\t%d\t%d\t%.4f\t%.4f\n", sim_link_kind_name (k), cnt[k], used[k], sum[k] / cnt[k], max[k]);
  fprintf (f, "link\tkind\tfrom\tto\tcapacity_GBps\tbytes\tutilisation\n");
  for (int i = 0; i < n; i++)
    {
      if (bytes[i] <= 0)
        continue;
      const SimLink *l = sim_topology_link (topo, i);
      SimNodeRef a, b;
      sim_topology_link_ends (topo, i, &a, &b);
      fprintf (f, "%d\t%s\t%s%d\t%s%d\t%.3f\t%.0f\t%.6f\n", i, sim_link_kind_name (l->kind), node_name (a.kind),
               a.index, node_name (b.kind), b.index, l->bandwidth_bytes_per_s / 1e9, bytes[i],
               l->bandwidth_bytes_per_s > 0 ? bytes[i] / (l->bandwidth_bytes_per_s * step_s) : 0.0);
    }
  if (ferror (f))
    t->link_failed = TRUE;
  if (fclose (f) != 0)
    t->link_failed = TRUE;
}

SimTrace *
sim_trace_new (const char *path, GError **error)
{
  SimTrace *t = g_new0 (SimTrace, 1);
  if (path)
    {
      t->f = fopen (path, "w");
      if (!t->f)
        {
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "--trace %s: cannot write: %s", path,
                       g_strerror (errno));
          g_free (t);
          return NULL;
        }
      t->path = g_strdup (path);
      fputs ("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", t->f);
    }
  t->intervals = g_array_new (FALSE, FALSE, sizeof (Interval));
  t->last = g_hash_table_new (g_direct_hash, g_direct_equal);
  t->named = g_hash_table_new (g_direct_hash, g_direct_equal);
  return t;
}

void
sim_trace_event (gpointer user, const SimRunnerTraceEvent *e)
{
  SimTrace *t = user;
  if (t->f)
    {
      gpointer pkey = GINT_TO_POINTER (e->rank * 16 + 15);
      if (!g_hash_table_contains (t->named, pkey))
        {
          g_hash_table_add (t->named, pkey);
          fprintf (t->f,
                   "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"rank %d, stage %d\"}},\n"
                   "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"args\": {\"sort_index\": %d}}",
                   t->n ? ",\n" : "", e->rank, e->rank, e->stage, e->rank, e->rank);
          t->n++;
        }
      gpointer tkey = GINT_TO_POINTER (e->rank * 16 + e->stream);
      if (!g_hash_table_contains (t->named, tkey))
        {
          g_hash_table_add (t->named, tkey);
          fprintf (t->f, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                   e->rank, e->stream, e->stream_name);
        }
      /* name: the op (fc1, qkv_ag, dp_grad_rs, ...); cat: what its time is accounted to. */
      fprintf (t->f, ",\n{\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, "
                     "\"dur\": %.3f",
               e->name ? e->name : e->category, e->category, e->rank, e->stream, e->start_ns / 1e3,
               (e->end_ns - e->start_ns) / 1e3);
      if (e->bytes > 0)
        fprintf (t->f, ", \"args\": {\"bytes\": %.0f}", e->bytes);
      fputc ('}', t->f);
    }
  t->n++;
  /* Merged timeline: extend the stream's last interval when this op continues it. */
  gpointer key = GINT_TO_POINTER (e->rank * 16 + e->stream);
  guint idx = GPOINTER_TO_UINT (g_hash_table_lookup (t->last, key));
  if (idx > 0)
    {
      Interval *last = &g_array_index (t->intervals, Interval, idx - 1);
      if (last->category == e->category && e->start_ns <= last->end_ns)
        {
          last->end_ns = MAX (last->end_ns, e->end_ns);
          return;
        }
    }
  Interval iv = { e->rank, e->stage, e->stream, e->category, e->stream_name, e->start_ns, e->end_ns };
  g_array_append_val (t->intervals, iv);
  g_hash_table_insert (t->last, key, GUINT_TO_POINTER (t->intervals->len));
}

guint64
sim_trace_n_events (const SimTrace *t)
{
  return t->n;
}

gboolean
sim_trace_finish (SimTrace *t, GError **error)
{
  if (t->link_failed)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--link-stats %s: write failed", t->link_path);
      return FALSE;
    }
  if (!t->f)
    return TRUE;
  fputs ("\n]}\n", t->f);
  int bad = ferror (t->f);
  if (fclose (t->f) != 0 || bad)
    {
      t->f = NULL;
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--trace %s: write failed", t->path);
      return FALSE;
    }
  t->f = NULL;
  return TRUE;
}

static int
cmp_iv (const void *a, const void *b)
{
  const Interval *x = a, *y = b;
  if (x->stage != y->stage)
    return x->stage - y->stage;
  if (x->rank != y->rank)
    return x->rank - y->rank;
  if (x->stream != y->stream)
    return x->stream - y->stream;
  return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

gboolean
sim_trace_write_timeline (const SimTrace *t, const char *path, int max_ranks, GError **error)
{
  FILE *f = fopen (path, "w");
  if (!f)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "cannot write %s: %s", path, g_strerror (errno));
      return FALSE;
    }
  g_autoptr (GArray) iv = g_array_sized_new (FALSE, FALSE, sizeof (Interval), t->intervals->len);
  g_array_append_vals (iv, t->intervals->data, t->intervals->len);
  g_array_sort (iv, cmp_iv);
  fprintf (f, "# trainsim: one simulated step, merged intervals per rank and stream (sim/trace.c)\n"
              "lane\tlabel\tkind\tstart_ms\tend_ms\ttext\n");
  int lane = -1, ranks = 0, cur_rank = -1, cur_stream = -1;
  for (guint i = 0; i < iv->len; i++)
    {
      const Interval *x = &g_array_index (iv, Interval, i);
      if (x->rank != cur_rank)
        {
          if (++ranks > max_ranks)
            break;
          cur_rank = x->rank, cur_stream = -1;
        }
      if (x->stream != cur_stream)
        lane++, cur_stream = x->stream;
      const char *kind = strcmp (x->category, "compute") == 0 ? "compute"
                         : strcmp (x->category, "optimizer") == 0 ? "optimizer" : "comm";
      fprintf (f, "%d\trank %d (stage %d) %s\t%s\t%.4f\t%.4f\t%s\n", lane, x->rank, x->stage, x->stream_name, kind,
               x->start_ns / 1e6, x->end_ns / 1e6, x->stream == 0 ? "" : x->category);
    }
  fclose (f);
  return TRUE;
}

void
sim_trace_free (SimTrace *t)
{
  if (!t)
    return;
  if (t->f)
    fclose (t->f);
  g_free (t->path);
  g_free (t->link_path);
  g_array_unref (t->intervals);
  g_hash_table_unref (t->last);
  g_hash_table_unref (t->named);
  g_free (t);
}
