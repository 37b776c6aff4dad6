/* Shared driver for the trainsim-bench-* programs; see bench.h. Timing follows nccl-tests'
 * discipline: warmup launches, then `reps` samples each bracketed by CUDA events, with L2 flushed
 * before each sample where the caller asks; the spread (p10/p90) is reported beside the median. */
#include "calib/bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void
calib_bench_check_cuda (cudaError_t err, const char *what, const char *file, int line)
{
  if (err == cudaSuccess)
    return;
  fprintf (stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what, cudaGetErrorString (err),
           cudaGetErrorName (err));
  exit (1);
}

void
calib_bench_require_gpu (const char *prog)
{
  int n = 0;
  cudaError_t err = cudaGetDeviceCount (&n);
  if (err != cudaSuccess || n == 0)
    {
      fprintf (stderr, "%s: skipped: no usable CUDA device (%s); run it on a GPU node with the NVIDIA "
                       "driver loaded\n",
               prog, err != cudaSuccess ? cudaGetErrorString (err) : "device count is 0");
      exit (CALIB_BENCH_EXIT_SKIP);
    }
}

void
calib_bench_usage_common (FILE *out)
{
  fprintf (out, "Common options:\n"
                "  -w N        warmup launches per shape (default 5)\n"
                "  -r N        timed samples per shape; median, p10, p90 over them (default 20)\n"
                "  -b N        launches per sample (default 1)\n"
                "  -F 0|1      flush L2 before every sample (default 1)\n"
                "  -c 0|1      check results apart from timing (default 1)\n"
                "  -g N        CUDA device (default 0)\n"
                "  --shapes F  read shapes from F (the format `trainsim calib-plan` prints)\n"
                "  -o FILE     write the TSV to FILE instead of stdout\n"
                "Exit status: 0 ok, 1 wrong results or CUDA error, 2 bad usage, 77 no GPU (skip).\n");
}

static int
parse_int (const char *s, int lo, int *out)
{
  char *end;
  long v = strtol (s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < lo || v > 1000000000L)
    return -1;
  *out = (int) v;
  return 0;
}

int
calib_bench_parse_common (int *argc, char **argv, CalibBenchOpts *opts)
{
  opts->warmup = 5;
  opts->reps = 20;
  opts->batch = 1;
  opts->flush_l2 = 1;
  opts->check = 1;
  opts->device = 0;
  opts->shapes_path = NULL;
  opts->out_path = NULL;
  int w = 1;
  for (int i = 1; i < *argc; i++)
    {
      const char *a = argv[i];
      int *target = NULL, lo = 0;
      if (strcmp (a, "-w") == 0) target = &opts->warmup;
      else if (strcmp (a, "-r") == 0) { target = &opts->reps; lo = 1; }
      else if (strcmp (a, "-b") == 0) { target = &opts->batch; lo = 1; }
      else if (strcmp (a, "-F") == 0) target = &opts->flush_l2;
      else if (strcmp (a, "-c") == 0) target = &opts->check;
      else if (strcmp (a, "-g") == 0) target = &opts->device;
      if (target != NULL || strcmp (a, "--shapes") == 0 || strcmp (a, "-o") == 0)
        {
          if (i + 1 >= *argc)
            {
              fprintf (stderr, "option %s needs a value\n", a);
              return 2;
            }
          const char *v = argv[++i];
          if (strcmp (a, "--shapes") == 0)
            opts->shapes_path = v;
          else if (strcmp (a, "-o") == 0)
            opts->out_path = v;
          else if (parse_int (v, lo, target) != 0)
            {
              fprintf (stderr, "option %s: '%s' is not an integer >= %d\n", a, v, lo);
              return 2;
            }
          continue;
        }
      argv[w++] = argv[i];
    }
  *argc = w;
  argv[w] = NULL;
  return 0;
}

void
calib_bench_provenance (FILE *out, const char *tool, int device, int argc, char **argv)
{
  cudaDeviceProp p;
  CALIB_CUDA (cudaGetDeviceProperties (&p, device));
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0, drv = 0, rt = 0;
  cudaDeviceGetAttribute (&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute (&mem_clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute (&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  cudaDriverGetVersion (&drv);
  cudaRuntimeGetVersion (&rt);
  char date[64];
  time_t now = time (NULL);
  struct tm tm;
  gmtime_r (&now, &tm);
  strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
#ifndef TRAINSIM_VERSION
#define TRAINSIM_VERSION "unknown"
#endif
  fprintf (out, "# tool\t%s %s\n", tool, TRAINSIM_VERSION);
  fprintf (out, "# gpu\t%s\n", p.name);
  fprintf (out, "# compute_capability\t%d.%d\n", p.major, p.minor);
  fprintf (out, "# sm_count\t%d\n", p.multiProcessorCount);
  fprintf (out, "# sm_clock_MHz\t%d\n", clock_khz / 1000);
  fprintf (out, "# mem_clock_MHz\t%d\n", mem_clock_khz / 1000);
  fprintf (out, "# mem_bus_bits\t%d\n", bus_bits);
  fprintf (out, "# mem_GiB\t%.1f\n", p.totalGlobalMem / 1073741824.0);
  fprintf (out, "# l2_MiB\t%.1f\n", p.l2CacheSize / 1048576.0);
  fprintf (out, "# driver_cuda\t%d.%d\n", drv / 1000, (drv % 1000) / 10);
  fprintf (out, "# runtime_cuda\t%d.%d\n", rt / 1000, (rt % 1000) / 10);
  fprintf (out, "# date\t%s\n", date);
  fprintf (out, "# command\t");
  for (int i = 0; i < argc; i++)
    fprintf (out, "%s%s", i ? " " : "", argv[i]);
  fprintf (out, "\n");
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
calib_bench_quantile (double *v, int n, double q)
{
  if (n <= 0)
    return 0.0;
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  double pos = q * (n - 1);
  int i = (int) pos;
  if (i >= n - 1)
    return v[n - 1];
  double f = pos - i;
  return v[i] * (1.0 - f) + v[i + 1] * f;
}

CalibBenchStats
calib_bench_stats (double *samples_us, int n)
{
  CalibBenchStats s;
  s.median_us = calib_bench_quantile (samples_us, n, 0.5);
  s.p10_us = calib_bench_quantile (samples_us, n, 0.1);
  s.p90_us = calib_bench_quantile (samples_us, n, 0.9);
  return s;
}

/* One flush buffer per process, sized from the current device's L2. */
static void *flush_buf;
static size_t flush_bytes;

void
calib_bench_flush_l2 (cudaStream_t stream)
{
  if (flush_buf == NULL)
    {
      int dev = 0, l2 = 0;
      CALIB_CUDA (cudaGetDevice (&dev));
      cudaDeviceGetAttribute (&l2, cudaDevAttrL2CacheSize, dev);
      flush_bytes = 2 * (size_t) (l2 > 0 ? l2 : (64 << 20));
      CALIB_CUDA (cudaMalloc (&flush_buf, flush_bytes));
    }
  CALIB_CUDA (cudaMemsetAsync (flush_buf, 0x5a, flush_bytes, stream));
}

CalibBenchStats
calib_bench_time (const CalibBenchOpts *opts, CalibBenchLaunch launch, void *ctx, cudaStream_t stream)
{
  for (int i = 0; i < opts->warmup; i++)
    launch (ctx, stream);
  CALIB_CUDA (cudaStreamSynchronize (stream));
  CALIB_CUDA (cudaGetLastError ());
  cudaEvent_t start, stop;
  CALIB_CUDA (cudaEventCreate (&start));
  CALIB_CUDA (cudaEventCreate (&stop));
  double *us = (double *) malloc (sizeof (double) * (size_t) opts->reps);
  for (int r = 0; r < opts->reps; r++)
    {
      if (opts->flush_l2)
        calib_bench_flush_l2 (stream);
      CALIB_CUDA (cudaEventRecord (start, stream));
      for (int b = 0; b < opts->batch; b++)
        launch (ctx, stream);
      CALIB_CUDA (cudaEventRecord (stop, stream));
      CALIB_CUDA (cudaEventSynchronize (stop));
      float ms = 0;
      CALIB_CUDA (cudaEventElapsedTime (&ms, start, stop));
      us[r] = 1000.0 * ms / opts->batch;
    }
  CALIB_CUDA (cudaGetLastError ());
  CalibBenchStats s = calib_bench_stats (us, opts->reps);
  free (us);
  cudaEventDestroy (start);
  cudaEventDestroy (stop);
  return s;
}

/* A 32-bit integer hash (lowbias32, public domain, Chris Wellons) gives reproducible inputs
 * that the host can recompute for checks without copying whole arrays back. */
__host__ __device__ static inline unsigned
hash32 (unsigned x)
{
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__host__ __device__ static inline float
uniform_at (size_t i, unsigned seed)
{
  unsigned h = hash32 ((unsigned) i ^ hash32 (seed + (unsigned) (i >> 32)));
  return (float) ((double) h / 2147483648.0 - 1.0);
}

float
calib_bench_uniform_host (size_t i, unsigned seed)
{
  return uniform_at (i, seed);
}

__global__ static void
fill_uniform_kernel (float *dst, size_t n, unsigned seed, float scale)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    dst[i] = scale * uniform_at (i, seed);
}

void
calib_bench_fill_uniform_f32 (float *dst, size_t n, unsigned seed, float scale, cudaStream_t stream)
{
  fill_uniform_kernel<<<1024, 256, 0, stream>>> (dst, n, seed, scale);
  CALIB_CUDA (cudaGetLastError ());
}

__global__ static void
f32_to_bf16_kernel (const float *src, __nv_bfloat16 *dst, size_t n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    dst[i] = __float2bfloat16 (src[i]);
}

void
calib_bench_f32_to_bf16 (const float *src, __nv_bfloat16 *dst, size_t n, int grid, cudaStream_t stream)
{
  f32_to_bf16_kernel<<<grid, 256, 0, stream>>> (src, dst, n);
  CALIB_CUDA (cudaGetLastError ());
}

FILE *
calib_bench_open_output (const char *tool, const CalibBenchOpts *opts, int argc, char **argv)
{
  calib_bench_require_gpu (tool);
  FILE *out = stdout;
  if (opts->out_path && (out = fopen (opts->out_path, "w")) == NULL)
    {
      fprintf (stderr, "%s: cannot write %s\n", tool, opts->out_path);
      return NULL;
    }
  CALIB_CUDA (cudaSetDevice (opts->device));
  calib_bench_provenance (out, tool, opts->device, argc, argv);
  return out;
}

int
calib_bench_plan_next (FILE *f, const char *kind, char *line, size_t line_size, char **fields, int max_fields)
{
  while (fgets (line, (int) line_size, f) != NULL)
    {
      if (line[0] == '#' || line[0] == '\n')
        continue;
      line[strcspn (line, "\r\n")] = '\0';
      int n = 0;
      char *save = NULL;
      for (char *t = strtok_r (line, "\t ", &save); t != NULL && n < max_fields; t = strtok_r (NULL, "\t ", &save))
        fields[n++] = t;
      if (n > 0 && strcmp (fields[0], kind) == 0)
        return n;
    }
  return -1;
}

int
calib_bench_parse_sweep (const char *s, long long *out, int max)
{
  long long a, b;
  double f;
  char tail;
  if (sscanf (s, "%lld:%lld:%lf%c", &a, &b, &f, &tail) == 3)
    {
      if (a <= 0 || b < a || f <= 1.0)
        return -1;
      int n = 0;
      for (double x = (double) a; x <= (double) b * (1 + 1e-9) && n < max; x *= f)
        out[n++] = (long long) (x + 0.5);
      return n;
    }
  int n = 0;
  const char *p = s;
  while (*p && n < max)
    {
      char *end;
      long long v = strtoll (p, &end, 10);
      if (end == p || v <= 0)
        return -1;
      out[n++] = v;
      if (*end == ',')
        p = end + 1;
      else if (*end == '\0')
        break;
      else
        return -1;
    }
  return n;
}
