/* Measurement reader: trainsim-bench-* TSVs and nccl-tests text output into CalibPoints.
 *
 * Our TSVs: '#' provenance lines, one header row whose first column is "bench", then rows whose
 * columns are found by header name (so added columns do not break old readers).
 * nccl-tests (github.com/NVIDIA/nccl-tests, src/common.cu's output): '#' lines including one
 * "#  Rank  N … device D [bus] GPU NAME" per rank, then data rows
 *   size count type [redop root] | time algbw busbw #wrong (out-of-place) | time algbw busbw #wrong (in-place)
 * read from the right so both the older (no redop/root) and newer layouts parse. The collective
 * comes from the command or "Collective test starting" line naming *_perf, else from the file
 * name. The out-of-place time is used (in-place when it is N/A). */
#include "config.h"
#include "calib/measure.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include "calib/fit.h"

struct _CalibMeasureSet {
  GArray *points;      /* CalibPoint */
  GPtrArray *sources;  /* char* paths */
  GPtrArray *gpus;     /* char* per source */
  GStringChunk *strings;
};

CalibMeasureSet *
calib_measure_set_new (void)
{
  CalibMeasureSet *set = g_new0 (CalibMeasureSet, 1);
  set->points = g_array_new (FALSE, TRUE, sizeof (CalibPoint));
  set->sources = g_ptr_array_new_with_free_func (g_free);
  set->gpus = g_ptr_array_new_with_free_func (g_free);
  set->strings = g_string_chunk_new (1024);
  return set;
}

void
calib_measure_set_free (CalibMeasureSet *set)
{
  if (set == NULL)
    return;
  g_array_unref (set->points);
  g_ptr_array_unref (set->sources);
  g_ptr_array_unref (set->gpus);
  g_string_chunk_free (set->strings);
  g_free (set);
}

guint
calib_measure_set_n_points (const CalibMeasureSet *set)
{
  return set->points->len;
}

const CalibPoint *
calib_measure_set_point (const CalibMeasureSet *set, guint i)
{
  g_return_val_if_fail (i < set->points->len, NULL);
  return &g_array_index (set->points, CalibPoint, i);
}

guint
calib_measure_set_n_sources (const CalibMeasureSet *set)
{
  return set->sources->len;
}

const char *
calib_measure_set_source (const CalibMeasureSet *set, guint i)
{
  g_return_val_if_fail (i < set->sources->len, NULL);
  return g_ptr_array_index (set->sources, i);
}

const char *
calib_measure_set_source_gpu (const CalibMeasureSet *set, guint i)
{
  g_return_val_if_fail (i < set->gpus->len, NULL);
  return g_ptr_array_index (set->gpus, i);
}

double
calib_measure_bus_factor (const char *c, int n)
{
  if (n < 1)
    return 0;
  if (strcmp (c, "all_reduce") == 0)
    return 2.0 * (n - 1) / n;
  if (strcmp (c, "all_gather") == 0 || strcmp (c, "reduce_scatter") == 0 || strcmp (c, "alltoall") == 0)
    return (double) (n - 1) / n;
  if (strcmp (c, "broadcast") == 0 || strcmp (c, "reduce") == 0 || strcmp (c, "sendrecv") == 0)
    return 1.0;
  return 0;
}

static const char *const collectives[] = { "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                                           "reduce", "sendrecv" };

/* The collective a text names as "<name>_perf" (or, for file names, "<name>"). */
static const char *
find_collective (const char *text, gboolean bare)
{
  for (gsize i = 0; i < G_N_ELEMENTS (collectives); i++)
    {
      g_autofree char *needle = g_strdup_printf ("%s%s", collectives[i], bare ? "" : "_perf");
      if (strstr (text, needle) != NULL)
        return collectives[i];
    }
  return NULL;
}

static gboolean
parse_double (const char *s, double *out)
{
  char *end;
  if (s == NULL || *s == '\0')
    return FALSE;
  if (g_ascii_strcasecmp (s, "N/A") == 0 || g_ascii_strcasecmp (s, "nan") == 0)
    {
      *out = NAN;
      return TRUE;
    }
  *out = g_ascii_strtod (s, &end);
  return *end == '\0';
}

/* A count in 0..INT_MAX (NaN, a fraction or a figure out of range is not one: converting it to int
 * would be undefined). */
static gboolean
is_count (double v)
{
  return v >= 0 && v <= INT_MAX && v == floor (v);
}

static guint
add_source (CalibMeasureSet *set, const char *name)
{
  g_ptr_array_add (set->sources, g_strdup (name));
  g_ptr_array_add (set->gpus, g_strdup (""));
  return set->sources->len - 1;
}

static void
set_gpu (CalibMeasureSet *set, guint src, const char *gpu)
{
  if (*(const char *) g_ptr_array_index (set->gpus, src) != '\0')
    return;
  g_free (g_ptr_array_index (set->gpus, src));
  g_ptr_array_index (set->gpus, src) = g_strstrip (g_strdup (gpu));
}

static gboolean
reject_wrong (const char *name, guint lineno, int wrong, GError **error)
{
  if (wrong <= 0)
    return TRUE;
  g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
               "%s:%u: the benchmark counted %d wrong results on this row; fix the GPU or the run and measure "
               "again (wrong results are never fitted)",
               name, lineno, wrong);
  return FALSE;
}

static gboolean
load_nccl_tests (CalibMeasureSet *set, const char *name, char **lines, GError **error)
{
  const char *coll = NULL;
  int nranks = 0;
  guint src = add_source (set, name);
  g_autoptr (GHashTable) hosts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; lines[i]; i++)
    {
      const char *l = lines[i];
      if (l[0] != '#')
        continue;
      if (coll == NULL)
        coll = find_collective (l, FALSE);
      /* "#  Rank  0 Group  0 Pid 1234 on host device  0 [0x1b] NVIDIA H100 80GB HBM3" */
      const char *r = l + 1;
      while (*r == ' ')
        r++;
      if (g_str_has_prefix (r, "Rank "))
        {
          nranks++;
          /* "… Pid 1234 on HOST device …": distinct hosts are the node count. */
          const char *on = strstr (r, " on ");
          /* From the space after "on", so "on device" (no host) cannot end before the host starts. */
          const char *dev = on ? strstr (on + 3, " device ") : NULL;
          if (dev != NULL)
            {
              g_autofree char *host = g_strstrip (g_strndup (on + 3, (gsize) (dev - (on + 3))));
              g_hash_table_add (hosts, g_steal_pointer (&host));
            }
          const char *br = strchr (l, ']');
          if (br != NULL)
            set_gpu (set, src, br + 1);
        }
    }
  if (coll == NULL)
    {
      g_autofree char *base = g_path_get_basename (name);
      coll = find_collective (base, TRUE);
    }
  if (coll == NULL)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s: cannot tell which collective this nccl-tests output measured; name the file after it "
                   "(e.g. all_reduce_perf.txt) or keep the command line in it",
                   name);
      return FALSE;
    }
  if (nranks == 0)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s: no '#  Rank N …' lines, so the rank count is unknown; keep nccl-tests' full output", name);
      return FALSE;
    }
  guint rows = 0;
  for (guint i = 0; lines[i]; i++)
    {
      g_autofree char *copy = g_strstrip (g_strdup (lines[i]));
      if (copy[0] == '#' || copy[0] == '\0')
        continue;
      g_auto (GStrv) tok = g_strsplit_set (copy, " \t", -1);
      GPtrArray *t = g_ptr_array_new ();
      for (guint j = 0; tok[j]; j++)
        if (tok[j][0] != '\0')
          g_ptr_array_add (t, tok[j]);
      guint n = t->len;
      double size, count, oop_t, oop_bus, oop_w, ip_t, ip_bus, ip_w;
      gboolean ok = n >= 10 && parse_double (g_ptr_array_index (t, 0), &size)
                    && parse_double (g_ptr_array_index (t, 1), &count)
                    && parse_double (g_ptr_array_index (t, n - 8), &oop_t)
                    && parse_double (g_ptr_array_index (t, n - 6), &oop_bus)
                    && parse_double (g_ptr_array_index (t, n - 5), &oop_w)
                    && parse_double (g_ptr_array_index (t, n - 4), &ip_t)
                    && parse_double (g_ptr_array_index (t, n - 2), &ip_bus)
                    && parse_double (g_ptr_array_index (t, n - 1), &ip_w)
                    && (isnan (oop_w) || is_count (oop_w)) && (isnan (ip_w) || is_count (ip_w));
      g_ptr_array_unref (t);
      if (!ok)
        continue; /* nccl-tests also prints non-'#' banners (warnings, NCCL INFO); only data rows parse */
      gboolean use_ip = isnan (oop_t);
      double tm = use_ip ? ip_t : oop_t, bus = use_ip ? ip_bus : oop_bus, w = use_ip ? ip_w : oop_w;
      if (isnan (tm) || tm <= 0 || size <= 0)
        continue;
      if (!reject_wrong (name, i + 1, isnan (w) ? 0 : (int) w, error))
        return FALSE;
      CalibPoint p = { 0 };
      p.kind = CALIB_KIND_NCCL;
      p.op = coll;
      p.dtype = "float";
      p.nranks = nranks;
      p.nodes = (int) g_hash_table_size (hosts);
      p.size_bytes = size;
      p.time_us = tm;
      p.time_us_p10 = p.time_us_p90 = NAN;
      p.rate = bus;
      p.wrong = isnan (w) ? -1 : (int) w;
      p.source = src;
      g_array_append_val (set->points, p);
      rows++;
    }
  if (rows == 0)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s: nccl-tests output with no data rows (size count … time algbw busbw #wrong …)", name);
      return FALSE;
    }
  return TRUE;
}

static int
col_index (char **hdr, const char *name)
{
  for (int i = 0; hdr[i]; i++)
    if (strcmp (hdr[i], name) == 0)
      return i;
  return -1;
}

typedef struct {
  char **hdr;
  char **row;
  int ncol;
  const char *file;
  guint line;
  GError **error;
} Row;

static gboolean
field (Row *r, const char *name, const char **out)
{
  int i = col_index (r->hdr, name);
  if (i < 0 || i >= r->ncol)
    {
      g_set_error (r->error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s:%u: no column '%s' (header or row too short); was the file written by a trainsim-bench "
                   "program and not truncated?",
                   r->file, r->line, name);
      return FALSE;
    }
  *out = r->row[i];
  return TRUE;
}

static gboolean
num (Row *r, const char *name, double *out)
{
  const char *s;
  if (!field (r, name, &s))
    return FALSE;
  if (!parse_double (s, out))
    {
      g_set_error (r->error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT, "%s:%u: column '%s' is '%s', not a number",
                   r->file, r->line, name, s);
      return FALSE;
    }
  return TRUE;
}

/* A column that is a count (ranks, matrix and attention sizes): a whole number in 1..INT_MAX. */
static gboolean
count (Row *r, const char *name, double *out)
{
  const char *s;
  if (!field (r, name, &s))
    return FALSE;
  if (!parse_double (s, out) || *out < 1 || !is_count (*out))
    {
      g_set_error (r->error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s:%u: column '%s' is '%s', not a whole number from 1 to %d", r->file, r->line, name, s, INT_MAX);
      return FALSE;
    }
  return TRUE;
}

/* The #wrong column: a count, or N/A when the bench did not check. */
static gboolean
wrong_count (Row *r, int *out)
{
  const char *s;
  double v;
  if (!field (r, "wrong", &s))
    return FALSE;
  if (strcmp (s, "N/A") == 0)
    {
      *out = -1;
      return TRUE;
    }
  if (!parse_double (s, &v) || !is_count (v))
    {
      g_set_error (r->error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s:%u: column 'wrong' is '%s', not a count of wrong results (or N/A)", r->file, r->line, s);
      return FALSE;
    }
  *out = (int) v;
  return TRUE;
}

static gboolean
load_tsv (CalibMeasureSet *set, const char *name, char **lines, GError **error)
{
  guint src = add_source (set, name);
  g_auto (GStrv) hdr = NULL;
  guint rows = 0;
  int nodes = 0;
  for (guint i = 0; lines[i]; i++)
    {
      const char *l = lines[i];
      if (l[0] == '\0')
        continue;
      if (l[0] == '#')
        {
          if (g_str_has_prefix (l, "# gpu\t"))
            set_gpu (set, src, l + 6);
          if (g_str_has_prefix (l, "# nodes\t"))
            nodes = (int) CLAMP (g_ascii_strtoll (l + 8, NULL, 10), 0, INT_MAX);
          continue;
        }
      g_auto (GStrv) f = g_strsplit (l, "\t", -1);
      if (hdr == NULL)
        {
          if (strcmp (f[0], "bench") != 0)
            {
              g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                           "%s:%u: expected the header row (starting 'bench'), found '%.40s'", name, i + 1, l);
              return FALSE;
            }
          hdr = g_steal_pointer (&f);
          continue;
        }
      Row r = { hdr, f, (int) g_strv_length (f), name, i + 1, error };
      CalibPoint p = { 0 };
      p.source = src;
      p.time_us_p10 = p.time_us_p90 = NAN;
      const char *kind = f[0], *s;
      double v;
      if (!num (&r, "time_us_median", &p.time_us) || !num (&r, "time_us_p10", &p.time_us_p10)
          || !num (&r, "time_us_p90", &p.time_us_p90) || !wrong_count (&r, &p.wrong) || !field (&r, "dtype", &s))
        return FALSE;
      p.dtype = g_string_chunk_insert_const (set->strings, s);
      if (!reject_wrong (name, i + 1, p.wrong, error))
        return FALSE;
      if (strcmp (kind, "nccl") == 0)
        {
          p.kind = CALIB_KIND_NCCL;
          if (!field (&r, "op", &s) || !num (&r, "size_bytes", &p.size_bytes) || !count (&r, "nranks", &v)
              || !num (&r, "busbw_GBps", &p.rate))
            return FALSE;
          p.nranks = (int) v;
          p.nodes = nodes;
        }
      else if (strcmp (kind, "gemm") == 0)
        {
          double m, n, k;
          p.kind = CALIB_KIND_GEMM;
          s = "gemm";
          if (!count (&r, "M", &m) || !count (&r, "N", &n) || !count (&r, "K", &k)
              || !num (&r, "TFLOPS_median", &p.rate))
            return FALSE;
          double batch = 1;
          if (col_index (hdr, "batch") >= 0 && !count (&r, "batch", &batch))
            return FALSE;
          p.m = (gint64) m, p.n = (gint64) n, p.k = (gint64) k, p.batch = (gint64) batch;
          p.flop = 2.0 * m * n * k * batch;
        }
      else if (strcmp (kind, "attention") == 0)
        {
          double b, h, hk, sq, d;
          p.kind = CALIB_KIND_ATTENTION;
          if (!field (&r, "pass", &s) || !count (&r, "B", &b) || !count (&r, "H", &h) || !count (&r, "Hkv", &hk)
              || !count (&r, "S", &sq) || !count (&r, "D", &d) || !num (&r, "TFLOPS_median", &p.rate))
            return FALSE;
          p.b = (int) b, p.h = (int) h, p.hkv = (int) hk, p.s = (int) sq, p.d = (int) d;
          /* Same convention as the bench: causal forward 4·B·H·S²·D/2, backward twice that. */
          p.flop = 2.0 * b * h * sq * sq * d * (strcmp (s, "bwd") == 0 ? 2.0 : 1.0);
        }
      else if (strcmp (kind, "memory") == 0)
        {
          p.kind = CALIB_KIND_MEMORY;
          if (!field (&r, "op", &s) || !num (&r, "bytes_moved", &p.size_bytes) || !num (&r, "GBps_median", &p.rate))
            return FALSE;
        }
      else
        {
          g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                       "%s:%u: unknown bench '%s' (nccl, gemm, attention, memory)", name, i + 1, kind);
          return FALSE;
        }
      p.op = g_string_chunk_insert_const (set->strings, s);
      /* busbw is 0 on one rank (nothing crosses a link); every other rate is positive. */
      if (!(p.time_us > 0) || !(p.rate > 0 || (p.kind == CALIB_KIND_NCCL && p.rate == 0 && p.nranks == 1)))
        {
          g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                       "%s:%u: time and rate must be positive numbers", name, i + 1);
          return FALSE;
        }
      g_array_append_val (set->points, p);
      rows++;
    }
  if (rows == 0)
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
                   "%s: no measurement rows (did the benchmark skip? it exits 77 without a GPU)", name);
      return FALSE;
    }
  return TRUE;
}

gboolean
calib_measure_set_load_data (CalibMeasureSet *set, const char *name, const char *data, GError **error)
{
  g_return_val_if_fail (set != NULL && name != NULL && data != NULL, FALSE);
  g_auto (GStrv) lines = g_strsplit (data, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      g_strchomp (lines[i]); /* CRLF files */
      /* mpirun --tag-output prefixes every line with "[job,rank]<stdout>:". */
      const char *tag = lines[i][0] == '[' ? strstr (lines[i], "]<stdout>:") : NULL;
      if (tag != NULL)
        memmove (lines[i], tag + 10, strlen (tag + 10) + 1);
    }
  gboolean ours = FALSE, nccl_tests = FALSE;
  for (guint i = 0; lines[i]; i++)
    {
      if (g_str_has_prefix (lines[i], "bench\t"))
        ours = TRUE;
      if (g_str_has_prefix (lines[i], "# nThread") || strstr (lines[i], "out-of-place") != NULL)
        nccl_tests = TRUE;
    }
  if (ours)
    return load_tsv (set, name, lines, error);
  if (nccl_tests)
    return load_nccl_tests (set, name, lines, error);
  g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT,
               "%s: neither a trainsim-bench TSV (header row 'bench…') nor nccl-tests output ('# nThread …', "
               "'out-of-place'); pass the files the benchmarks wrote",
               name);
  return FALSE;
}

gboolean
calib_measure_set_load (CalibMeasureSet *set, const char *path, GError **error)
{
  g_autofree char *data = NULL;
  g_autoptr (GError) err = NULL;
  if (!g_file_get_contents (path, &data, NULL, &err))
    {
      g_set_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT, "cannot read measurements: %s", err->message);
      return FALSE;
    }
  return calib_measure_set_load_data (set, path, data, error);
}
