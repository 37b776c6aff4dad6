/* Measurement sets: the TSVs the trainsim-bench-* programs write, and nccl-tests' text output,
 * read into one list of points with their source files. */
#pragma once
#include <glib.h>

typedef enum {
  CALIB_KIND_NCCL,
  CALIB_KIND_GEMM,
  CALIB_KIND_ATTENTION,
  CALIB_KIND_MEMORY,
} CalibKind;

typedef struct {
  CalibKind kind;
  const char *op;     /* collective ("all_reduce"…), "gemm", attention pass ("fwd"/"bwd"), memory op */
  const char *dtype;  /* "float", "bf16", "fp8"…; as written by the tool */
  int nranks;         /* nccl: ranks in the communicator */
  int nodes;          /* nccl: hosts the ranks ran on; 0 when the source does not say */
  double size_bytes;  /* nccl: nccl-tests size; memory: bytes moved */
  gint64 m, n, k;     /* gemm shape */
  gint64 batch;       /* gemm: independent products per call (1 unless grouped) */
  int b, h, hkv, s, d; /* attention shape */
  double flop;        /* gemm, attention: useful FLOPs per call */
  double time_us;     /* median (nccl-tests: the out-of-place time) */
  double time_us_p10, time_us_p90; /* NAN when the source gives no spread (nccl-tests) */
  double rate;        /* nccl: busbw GB/s; gemm/attention: TFLOP/s; memory: GB/s (1 GB = 1e9 B) */
  int wrong;          /* the source's #wrong; -1 when not checked */
  guint source;       /* index of the file it came from */
} CalibPoint;

typedef struct _CalibMeasureSet CalibMeasureSet;

CalibMeasureSet *calib_measure_set_new (void);
void calib_measure_set_free (CalibMeasureSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CalibMeasureSet, calib_measure_set_free)

/* Reads one file, recognizing a trainsim-bench TSV (a header row starting "bench") or nccl-tests
 * output (a "#  Rank" list and size/count data rows). Points with a nonzero #wrong are rejected
 * with an error: a fit must not silently use wrong results. */
gboolean calib_measure_set_load (CalibMeasureSet *set, const char *path, GError **error);
/* As above from memory; `name` stands for the path in messages and provenance. */
gboolean calib_measure_set_load_data (CalibMeasureSet *set, const char *name, const char *data, GError **error);

guint calib_measure_set_n_points (const CalibMeasureSet *set);
const CalibPoint *calib_measure_set_point (const CalibMeasureSet *set, guint i);
guint calib_measure_set_n_sources (const CalibMeasureSet *set);
const char *calib_measure_set_source (const CalibMeasureSet *set, guint i);
/* The GPU name a source reports ("" when it names none). */
const char *calib_measure_set_source_gpu (const CalibMeasureSet *set, guint i);

/* nccl-tests' bus-bandwidth factor for a collective of n ranks (all_reduce 2(n-1)/n; all_gather,
 * reduce_scatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1); 0 for an unknown name. */
double calib_measure_bus_factor (const char *collective, int nranks);
