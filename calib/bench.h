/* Shared driver for the trainsim-bench-* CUDA programs (nccl-tests' discipline): common options,
 * skip-with-77 when there is no GPU, provenance lines, per-repetition timing with CUDA events,
 * an L2 flush between repetitions, and order statistics (median, p10, p90).
 * Depends only on the CUDA runtime (DESIGN.md §3: no GLib in GPU programs). */
#pragma once
#include <stddef.h>
#include <stdio.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

/* Exit status automake reads as "skipped". */
#define CALIB_BENCH_EXIT_SKIP 77

typedef struct {
  int warmup;          /* untimed launches per shape before sampling */
  int reps;            /* timed samples per shape (median/p10/p90 over these) */
  int batch;           /* launches per sample; the sample is elapsed/batch */
  int flush_l2;        /* 1: overwrite L2 before every sample */
  int check;           /* 1: run the correctness check (apart from timing) */
  int device;          /* CUDA device for single-GPU benches */
  const char *shapes_path; /* --shapes FILE (calib-plan format), or NULL */
  const char *out_path;    /* -o FILE, or NULL for stdout */
} CalibBenchOpts;

typedef struct {
  double median_us, p10_us, p90_us;
} CalibBenchStats;

/* Aborts the program with a message naming the failing call (CUDA errors are programming or
 * environment errors the benches cannot recover from). */
#define CALIB_CUDA(call) calib_bench_check_cuda ((call), #call, __FILE__, __LINE__)
void calib_bench_check_cuda (cudaError_t err, const char *what, const char *file, int line);

/* Exits 77 with a clear message when no CUDA device or driver is usable. */
void calib_bench_require_gpu (const char *prog);

/* Parses the common options out of argv (removing them, leaving program-specific ones).
 * Returns 0, or 2 after printing a message for a bad value. */
int calib_bench_parse_common (int *argc, char **argv, CalibBenchOpts *opts);
void calib_bench_usage_common (FILE *out);

/* The single-GPU benches' output: exits 77 without a GPU, opens -o (stdout without it), selects
 * opts->device and writes the provenance lines. NULL (after a message) when -o cannot be written. */
FILE *calib_bench_open_output (const char *tool, const CalibBenchOpts *opts, int argc, char **argv);

/* Writes "# key<TAB>value" provenance lines: tool, GPU, SMs, clocks, memory, L2, driver and
 * runtime versions, date (UTC), command line. Program-specific library versions follow. */
void calib_bench_provenance (FILE *out, const char *tool, int device, int argc, char **argv);

/* Timing: the caller's launch function runs `batch` times per sample on `stream`. */
typedef void (*CalibBenchLaunch) (void *ctx, cudaStream_t stream);
CalibBenchStats calib_bench_time (const CalibBenchOpts *opts, CalibBenchLaunch launch, void *ctx,
                                  cudaStream_t stream);

/* Order statistics of n samples (sorted in place); q in [0, 1], linear interpolation. */
double calib_bench_quantile (double *v, int n, double q);
CalibBenchStats calib_bench_stats (double *samples_us, int n);

/* Flushes L2 on the current device by writing a buffer twice its size. */
void calib_bench_flush_l2 (cudaStream_t stream);

/* Deterministic pseudo-random fill in [-1, 1) as float, for inputs. */
void calib_bench_fill_uniform_f32 (float *dst, size_t n, unsigned seed, float scale, cudaStream_t stream);
float calib_bench_uniform_host (size_t i, unsigned seed);
/* Converts n floats to bf16 on `stream` (grid blocks of 256 threads, grid-stride). */
void calib_bench_f32_to_bf16 (const float *src, __nv_bfloat16 *dst, size_t n, int grid, cudaStream_t stream);

/* Reads the next line of a calib-plan file whose first field is `kind` (e.g. "gemm"); fields are
 * tab separated; returns the number of fields (at most max_fields) or -1 at end of file. */
int calib_bench_plan_next (FILE *f, const char *kind, char *line, size_t line_size, char **fields,
                           int max_fields);

/* Parses "a:b:f" (geometric sweep from a to b by factor f) or "a,b,c"; returns count or -1. */
int calib_bench_parse_sweep (const char *s, long long *out, int max);
