/* trainsim-bench-memory: HBM bandwidth (read, write, copy with 16-byte accesses) and the
 * memory-bound operators of a transformer step: RMSNorm and LayerNorm forward (bf16), SwiGLU and
 * GeLU forward (bf16) and the Adam update (fp32 params, grads, m, v).
 *
 * Bytes moved (the numerator of GB/s, 1 GB = 1e9 B as in nccl-tests) are the compulsory traffic:
 * read N, write N, copy 2N; norm 2·T·h·2 (x in, y out; the h-wide weight stays in cache); SwiGLU
 * 3·T·f·2 (gate and up in, out); GeLU 2·n·2; Adam 28 B per parameter (p, g, m, v read; p, m, v
 * written, fp32). The model's memory-bound efficiency is achieved / peak HBM bandwidth.
 * Correctness is checked apart from timing on sampled rows and elements against host arithmetic. */
#include "calib/bench.h"

#include <cuda_bf16.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "trainsim-bench-memory"

typedef enum { OP_READ, OP_WRITE, OP_COPY, OP_RMSNORM, OP_LAYERNORM, OP_SWIGLU, OP_GELU, OP_ADAM, OP_N } Op;
static const char *op_names[OP_N] = { "read", "write", "copy", "rmsnorm_fwd", "layernorm_fwd", "swiglu_fwd",
                                      "gelu_fwd", "adam" };
static const char *op_dtypes[OP_N] = { "fp32", "fp32", "fp32", "bf16", "bf16", "bf16", "bf16", "fp32" };

/* Adam hyper-parameters of the check (any fixed values do). */
#define ADAM_LR 1e-3f
#define ADAM_B1 0.9f
#define ADAM_B2 0.95f
#define ADAM_EPS 1e-8f

__global__ static void
read_kernel (const float4 *__restrict__ x, size_t n4, double *sink)
{
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += (size_t) gridDim.x * blockDim.x)
    {
      float4 v = x[i];
      acc += (v.x + v.y) + (v.z + v.w);
    }
  /* The sum keeps the loads alive; the check run reads it (all-ones input: exact count). One
   * atomic per block keeps contention on the sink out of the timing. */
  __shared__ float s_acc[32];
  for (int o = 16; o > 0; o /= 2)
    acc += __shfl_xor_sync (0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0)
    s_acc[threadIdx.x / 32] = acc;
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      float t = 0.f;
      for (unsigned w = 0; w < blockDim.x / 32; w++)
        t += s_acc[w];
      atomicAdd (sink, (double) t);
    }
}

__global__ static void
write_kernel (float4 *__restrict__ y, size_t n4, float v)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += (size_t) gridDim.x * blockDim.x)
    y[i] = make_float4 (v, v, v, v);
}

__global__ static void
copy_kernel (const float4 *__restrict__ x, float4 *__restrict__ y, size_t n4)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n4; i += (size_t) gridDim.x * blockDim.x)
    y[i] = x[i];
}

/* One block per row; two passes over the row in registers/L1 (row ≤ 64 Ki elements). */
__global__ static void
norm_kernel (const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w, __nv_bfloat16 *__restrict__ y,
             int h, int layernorm)
{
  __shared__ float s_sum[32], s_sq[32];
  const __nv_bfloat16 *xr = x + (size_t) blockIdx.x * h;
  __nv_bfloat16 *yr = y + (size_t) blockIdx.x * h;
  float sum = 0.f, sq = 0.f;
  for (int i = threadIdx.x; i < h; i += blockDim.x)
    {
      float v = __bfloat162float (xr[i]);
      sum += v;
      sq += v * v;
    }
  for (int o = 16; o > 0; o /= 2)
    {
      sum += __shfl_xor_sync (0xffffffffu, sum, o);
      sq += __shfl_xor_sync (0xffffffffu, sq, o);
    }
  if ((threadIdx.x & 31) == 0)
    s_sum[threadIdx.x / 32] = sum, s_sq[threadIdx.x / 32] = sq;
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      float a = 0.f, b = 0.f;
      for (unsigned i = 0; i < blockDim.x / 32; i++)
        a += s_sum[i], b += s_sq[i];
      s_sum[0] = a, s_sq[0] = b;
    }
  __syncthreads ();
  float mean = layernorm ? s_sum[0] / h : 0.f;
  float var = s_sq[0] / h - mean * mean;
  float rstd = rsqrtf (var + 1e-5f);
  for (int i = threadIdx.x; i < h; i += blockDim.x)
    yr[i] = __float2bfloat16 ((__bfloat162float (xr[i]) - mean) * rstd * __bfloat162float (w[i]));
}

__device__ static float
gelu_tanh (float x)
{
  return 0.5f * x * (1.f + tanhf (0.7978845608f * (x + 0.044715f * x * x * x)));
}

/* gate and up are the two halves of a [T × 2f] row, out is [T × f]. */
__global__ static void
swiglu_kernel (const __nv_bfloat16 *__restrict__ gu, __nv_bfloat16 *__restrict__ out, size_t rows, int f)
{
  size_t n = rows * (size_t) f;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      size_t r = i / f, c = i % f;
      float g = __bfloat162float (gu[r * 2 * f + c]), u = __bfloat162float (gu[r * 2 * f + f + c]);
      out[i] = __float2bfloat16 (g / (1.f + __expf (-g)) * u);
    }
}

__global__ static void
gelu_kernel (const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, size_t n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    y[i] = __float2bfloat16 (gelu_tanh (__bfloat162float (x[i])));
}

__global__ static void
adam_kernel (float *__restrict__ p, const float *__restrict__ g, float *__restrict__ m, float *__restrict__ v,
             size_t n, float bc1, float bc2)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      float gi = g[i];
      float mi = ADAM_B1 * m[i] + (1.f - ADAM_B1) * gi;
      float vi = ADAM_B2 * v[i] + (1.f - ADAM_B2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      p[i] -= ADAM_LR * (mi / bc1) / (sqrtf (vi / bc2) + ADAM_EPS);
    }
}

typedef struct {
  Op op;
  size_t bytes;   /* per main buffer */
  int h;          /* hidden size for norms, f for SwiGLU */
  int grid;
  void *a, *b, *c, *d;
  double *sink;
} Mem;

static void
mem_launch (void *ctx, cudaStream_t s)
{
  Mem *m = (Mem *) ctx;
  size_t n4 = m->bytes / 16;
  switch (m->op)
    {
    case OP_READ: read_kernel<<<m->grid, 256, 0, s>>> ((const float4 *) m->a, n4, m->sink); break;
    case OP_WRITE: write_kernel<<<m->grid, 256, 0, s>>> ((float4 *) m->b, n4, 1.5f); break;
    case OP_COPY: copy_kernel<<<m->grid, 256, 0, s>>> ((const float4 *) m->a, (float4 *) m->b, n4); break;
    case OP_RMSNORM:
    case OP_LAYERNORM:
      norm_kernel<<<(unsigned) (m->bytes / 2 / m->h), 512, 0, s>>> ((const __nv_bfloat16 *) m->a,
                                                                     (const __nv_bfloat16 *) m->c,
                                                                     (__nv_bfloat16 *) m->b, m->h,
                                                                     m->op == OP_LAYERNORM);
      break;
    case OP_SWIGLU:
      swiglu_kernel<<<m->grid, 256, 0, s>>> ((const __nv_bfloat16 *) m->a, (__nv_bfloat16 *) m->b,
                                             m->bytes / 2 / (2 * (size_t) m->h), m->h);
      break;
    case OP_GELU:
      gelu_kernel<<<m->grid, 256, 0, s>>> ((const __nv_bfloat16 *) m->a, (__nv_bfloat16 *) m->b, m->bytes / 2);
      break;
    case OP_ADAM:
      adam_kernel<<<m->grid, 256, 0, s>>> ((float *) m->a, (const float *) m->b, (float *) m->c, (float *) m->d,
                                           m->bytes / 4, 1.f - ADAM_B1, 1.f - ADAM_B2);
      break;
    default: break;
    }
}

static double
bytes_moved (Op op, size_t bytes)
{
  switch (op)
    {
    case OP_READ:
    case OP_WRITE: return (double) bytes;
    case OP_COPY:
    case OP_RMSNORM:
    case OP_LAYERNORM:
    case OP_GELU: return 2.0 * bytes;
    case OP_SWIGLU: return 1.5 * bytes; /* gate+up (bytes) in, half of it out */
    case OP_ADAM: return 7.0 * bytes;   /* 4 reads + 3 writes of n fp32 */
    default: return 0;
    }
}

static float
bf16_round (float x)
{
  /* Round to nearest even at 8 significant bits, as __float2bfloat16 does. */
  unsigned u;
  memcpy (&u, &x, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy (&x, &u, 4);
  return x;
}

static float
bf16_get (const void *dev, size_t i)
{
  unsigned short h;
  CALIB_CUDA (cudaMemcpy (&h, (const char *) dev + 2 * i, 2, cudaMemcpyDeviceToHost));
  unsigned u = (unsigned) h << 16;
  float f;
  memcpy (&f, &u, 4);
  return f;
}

static float
f32_get (const void *dev, size_t i)
{
  float f;
  CALIB_CUDA (cudaMemcpy (&f, (const char *) dev + 4 * i, 4, cudaMemcpyDeviceToHost));
  return f;
}

static int
close_to (double got, double want, double rel, double abs_tol)
{
  return fabs (got - want) <= rel * fabs (want) + abs_tol;
}

/* Fills the inputs (pseudo-random, reproducible on the host), runs the op once and compares
 * sampled outputs with host arithmetic. Returns the number of wrong samples. */
static int
check_op (Mem *m, cudaStream_t s)
{
  size_t n_f32 = m->bytes / 4, n_bf = m->bytes / 2;
  int wrong = 0;
  float *tmp;
  switch (m->op)
    {
    case OP_READ:
      {
        /* Ones: every partial sum is a small integer, so the total is exactly the count. */
        write_kernel<<<m->grid, 256, 0, s>>> ((float4 *) m->a, m->bytes / 16, 1.0f);
        CALIB_CUDA (cudaMemsetAsync (m->sink, 0, sizeof (double), s));
        mem_launch (m, s);
        double got;
        CALIB_CUDA (cudaMemcpyAsync (&got, m->sink, sizeof got, cudaMemcpyDeviceToHost, s));
        CALIB_CUDA (cudaStreamSynchronize (s));
        wrong += got != (double) n_f32;
        return wrong;
      }
    case OP_WRITE:
      CALIB_CUDA (cudaMemsetAsync (m->b, 0, m->bytes, s));
      mem_launch (m, s);
      CALIB_CUDA (cudaStreamSynchronize (s));
      for (int k = 0; k <= 64; k++)
        wrong += f32_get (m->b, k == 64 ? n_f32 - 1 : (size_t) k * (n_f32 / 64)) != 1.5f;
      return wrong;
    case OP_COPY:
      calib_bench_fill_uniform_f32 ((float *) m->a, n_f32, 3u, 1.f, s);
      mem_launch (m, s);
      CALIB_CUDA (cudaStreamSynchronize (s));
      for (int k = 0; k <= 64; k++)
        {
          size_t i = k == 64 ? n_f32 - 1 : (size_t) k * (n_f32 / 64);
          wrong += f32_get (m->b, i) != calib_bench_uniform_host (i, 3u);
        }
      return wrong;
    case OP_ADAM:
      calib_bench_fill_uniform_f32 ((float *) m->a, n_f32, 4u, 1.f, s);
      calib_bench_fill_uniform_f32 ((float *) m->b, n_f32, 5u, 1e-2f, s);
      calib_bench_fill_uniform_f32 ((float *) m->c, n_f32, 6u, 1e-3f, s);
      write_kernel<<<m->grid, 256, 0, s>>> ((float4 *) m->d, m->bytes / 16, 1e-4f);
      mem_launch (m, s);
      CALIB_CUDA (cudaStreamSynchronize (s));
      for (int k = 0; k <= 64; k++)
        {
          size_t i = k == 64 ? n_f32 - 1 : (size_t) k * (n_f32 / 64);
          float p = calib_bench_uniform_host (i, 4u), g = 1e-2f * calib_bench_uniform_host (i, 5u);
          float mm = ADAM_B1 * 1e-3f * calib_bench_uniform_host (i, 6u) + (1.f - ADAM_B1) * g;
          float vv = ADAM_B2 * 1e-4f + (1.f - ADAM_B2) * g * g;
          float want = p - ADAM_LR * (mm / (1.f - ADAM_B1)) / (sqrtf (vv / (1.f - ADAM_B2)) + ADAM_EPS);
          wrong += !close_to (f32_get (m->a, i), want, 1e-5, 1e-7);
        }
      return wrong;
    default: break;
    }
  /* bf16 ops: inputs from a float staging buffer (m->d is large enough: it is bytes long). */
  tmp = (float *) m->d;
  size_t n_in = n_bf;
  calib_bench_fill_uniform_f32 (tmp, n_in / 2, 7u, 2.f, s);
  calib_bench_f32_to_bf16 (tmp, (__nv_bfloat16 *) m->a, n_in / 2, m->grid, s);
  calib_bench_fill_uniform_f32 (tmp, n_in / 2, 8u, 2.f, s);
  calib_bench_f32_to_bf16 (tmp, (__nv_bfloat16 *) m->a + n_in / 2, n_in - n_in / 2, m->grid, s);
  if (m->op == OP_RMSNORM || m->op == OP_LAYERNORM)
    {
      calib_bench_fill_uniform_f32 (tmp, (size_t) m->h, 9u, 1.f, s);
      calib_bench_f32_to_bf16 (tmp, (__nv_bfloat16 *) m->c, (size_t) m->h, m->grid, s);
    }
  mem_launch (m, s);
  CALIB_CUDA (cudaStreamSynchronize (s));
  CALIB_CUDA (cudaGetLastError ());
  if (m->op == OP_RMSNORM || m->op == OP_LAYERNORM)
    {
      size_t rows = n_bf / m->h;
      int h = m->h;
      float *x = (float *) malloc (sizeof (float) * (size_t) h), *w = (float *) malloc (sizeof (float) * (size_t) h);
      unsigned short *raw = (unsigned short *) malloc (2 * (size_t) h);
      CALIB_CUDA (cudaMemcpy (raw, m->c, 2 * (size_t) h, cudaMemcpyDeviceToHost));
      for (int i = 0; i < h; i++)
        {
          unsigned u = (unsigned) raw[i] << 16;
          memcpy (&w[i], &u, 4);
        }
      for (int k = 0; k < 8; k++)
        {
          size_t r = k == 7 ? rows - 1 : (size_t) k * (rows / 8);
          CALIB_CUDA (cudaMemcpy (raw, (const char *) m->a + 2 * r * h, 2 * (size_t) h, cudaMemcpyDeviceToHost));
          double sum = 0, sq = 0;
          for (int i = 0; i < h; i++)
            {
              unsigned u = (unsigned) raw[i] << 16;
              memcpy (&x[i], &u, 4);
              sum += x[i];
              sq += (double) x[i] * x[i];
            }
          double mean = m->op == OP_LAYERNORM ? sum / h : 0.0;
          double rstd = 1.0 / sqrt (sq / h - mean * mean + 1e-5);
          for (int i = 0; i < h; i += h / 16)
            wrong += !close_to (bf16_get (m->b, r * h + i), (x[i] - mean) * rstd * w[i], 1.0 / 64, 1e-2);
        }
      free (x);
      free (w);
      free (raw);
      return wrong;
    }
  if (m->op == OP_SWIGLU)
    {
      size_t f = (size_t) m->h, rows = n_bf / (2 * f), n_out = rows * f;
      for (int k = 0; k <= 64; k++)
        {
          size_t i = k == 64 ? n_out - 1 : (size_t) k * (n_out / 64);
          size_t r = i / f, c = i % f;
          float g = bf16_get (m->a, r * 2 * f + c), u = bf16_get (m->a, r * 2 * f + f + c);
          wrong += !close_to (bf16_get (m->b, i), bf16_round (g / (1.f + expf (-g)) * u), 1.0 / 64, 1e-3);
        }
      return wrong;
    }
  for (int k = 0; k <= 64; k++) /* GeLU */
    {
      size_t i = k == 64 ? n_bf - 1 : (size_t) k * (n_bf / 64);
      float x = bf16_get (m->a, i);
      float want = 0.5f * x * (1.f + tanhf (0.7978845608f * (x + 0.044715f * x * x * x)));
      wrong += !close_to (bf16_get (m->b, i), want, 1.0 / 64, 1e-3);
    }
  return wrong;
}

static void
usage (FILE *out)
{
  fprintf (out, "Usage: " TOOL " [OPTION…]\n"
                "HBM bandwidth and memory-bound operators; one TSV row per (op, size).\n"
                "  -s SWEEP    bytes per buffer, a:b:factor or a,b,c (default 1048576:2147483648:2)\n"
                "  -H N        hidden size of the norms (default 8192)\n"
                "  -f N        FFN width of SwiGLU (default 28672)\n"
                "  -O LIST     ops among read,write,copy,rmsnorm_fwd,layernorm_fwd,swiglu_fwd,gelu_fwd,adam (default all)\n");
  calib_bench_usage_common (out);
}

int
main (int argc, char **argv)
{
  int argc0 = argc;
  char **argv0 = (char **) malloc (sizeof (char *) * (size_t) (argc + 1));
  memcpy (argv0, argv, sizeof (char *) * (size_t) (argc + 1));
  CalibBenchOpts opts;
  if (calib_bench_parse_common (&argc, argv, &opts) != 0)
    return 2;
  const char *ss = "1048576:2147483648:2", *ops_s = NULL;
  int h = 8192, f = 28672;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
        {
          usage (stdout);
          return 0;
        }
      if (i + 1 < argc && strcmp (argv[i], "-s") == 0) ss = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-O") == 0) ops_s = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-H") == 0) h = atoi (argv[++i]);
      else if (i + 1 < argc && strcmp (argv[i], "-f") == 0) f = atoi (argv[++i]);
      else
        {
          fprintf (stderr, TOOL ": unknown option '%s'\n", argv[i]);
          usage (stderr);
          return 2;
        }
    }
  long long sizes[64];
  int nsizes = calib_bench_parse_sweep (ss, sizes, 64);
  if (nsizes <= 0 || h < 64 || h > 65536 || f < 64)
    {
      fprintf (stderr, TOOL ": bad -s/-H/-f (sizes a:b:factor; 64 <= H <= 65536; f >= 64)\n");
      return 2;
    }
  int want[OP_N];
  for (int o = 0; o < OP_N; o++)
    want[o] = ops_s == NULL || strstr (ops_s, op_names[o]) != NULL;
  FILE *out = calib_bench_open_output (TOOL, &opts, argc0, argv0);
  if (out == NULL)
    return 2;
  fprintf (out, "# bytes\tcompulsory traffic per op (see source header); GB = 1e9 B\n");
  fprintf (out, "# shapes\tnorm hidden %d, SwiGLU width %d\n", h, f);
  fprintf (out, "# timing\twarmup %d, %d samples of %d launches, L2 flush %s\n", opts.warmup, opts.reps, opts.batch,
           opts.flush_l2 ? "on" : "off");
  fprintf (out, "bench\top\tdtype\tbuffer_bytes\tbytes_moved\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                "GBps_median\tGBps_p10\tGBps_p90\twrong\n");
  cudaDeviceProp prop;
  CALIB_CUDA (cudaGetDeviceProperties (&prop, opts.device));
  cudaStream_t s;
  CALIB_CUDA (cudaStreamCreate (&s));
  double *sink;
  CALIB_CUDA (cudaMalloc (&sink, sizeof (double)));
  int wrong_total = 0, measured = 0;
  for (int si = 0; si < nsizes; si++)
    {
      size_t bytes = (size_t) sizes[si] & ~(size_t) 15;
      size_t free_b, total_b;
      CALIB_CUDA (cudaMemGetInfo (&free_b, &total_b));
      if (4 * bytes + (256u << 20) > free_b)
        {
          fprintf (out, "# skipped\tbuffer %zu B: 4 buffers need more than the %zu B free\n", bytes, free_b);
          continue;
        }
      Mem m;
      memset (&m, 0, sizeof m);
      m.bytes = bytes;
      m.grid = prop.multiProcessorCount * 8;
      m.sink = sink;
      CALIB_CUDA (cudaMalloc (&m.a, bytes));
      CALIB_CUDA (cudaMalloc (&m.b, bytes));
      CALIB_CUDA (cudaMalloc (&m.c, bytes));
      CALIB_CUDA (cudaMalloc (&m.d, bytes));
      CALIB_CUDA (cudaMemset (m.c, 0, bytes));
      CALIB_CUDA (cudaMemset (m.d, 0, bytes));
      for (int o = 0; o < OP_N; o++)
        {
          if (!want[o])
            continue;
          m.op = (Op) o;
          m.h = (o == OP_SWIGLU) ? f : h;
          size_t row_bytes = (o == OP_SWIGLU ? 4 : 2) * (size_t) m.h;
          if ((o == OP_RMSNORM || o == OP_LAYERNORM || o == OP_SWIGLU) && bytes < row_bytes)
            continue; /* fewer than one row */
          if ((o == OP_RMSNORM || o == OP_LAYERNORM || o == OP_SWIGLU))
            m.bytes = bytes / row_bytes * row_bytes;
          else
            m.bytes = bytes;
          int wrong = opts.check ? check_op (&m, s) : 0;
          CalibBenchStats st = calib_bench_time (&opts, mem_launch, &m, s);
          double mv = bytes_moved (m.op, m.bytes);
          char wbuf[16];
          snprintf (wbuf, sizeof wbuf, "%d", wrong);
          fprintf (out, "memory\t%s\t%s\t%zu\t%.0f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%s\n", op_names[o], op_dtypes[o],
                   m.bytes, mv, st.median_us, st.p10_us, st.p90_us, mv / st.median_us / 1e3, mv / st.p90_us / 1e3,
                   mv / st.p10_us / 1e3, opts.check ? wbuf : "N/A");
          fflush (out);
          wrong_total += wrong;
          measured++;
        }
      cudaFree (m.a);
      cudaFree (m.b);
      cudaFree (m.c);
      cudaFree (m.d);
    }
  fprintf (out, "# rows_measured\t%d\n# wrong_total\t%d\n# result\t%s\n", measured, wrong_total,
           wrong_total ? "FAIL" : "PASS");
  if (out != stdout)
    fclose (out);
  free (argv0);
  return wrong_total ? 1 : 0;
}
