/* trainsim-bench-gemm: cuBLASLt matmul throughput over a grid of (M, N, K) or an explicit list of
 * shapes (`--shapes`, the format `trainsim calib-plan` prints), in bf16, fp16, tf32 and fp8 (E4M3
 * inputs, bf16 output, Hopper and later).
 *
 * D[M×N] = op(A)·B (BATCH times, strided, for grouped expert GEMMs) with the "TN" layout that cuBLASLt requires for fp8 (A stored K×M and
 * transposed, B stored K×N, column major), used for every dtype so results compare. FLOPs = 2·M·N·K.
 * Correctness is checked apart from timing: 256 sampled output elements against an fp32 dot
 * product of the same (rounded) inputs, within u_out·|ref| + u_acc·Σ|a·b|. */
#include "calib/bench.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "trainsim-bench-gemm"
#define CHECK_SAMPLES 256

static void
check_lt (cublasStatus_t st, const char *what, int line)
{
  if (st == CUBLAS_STATUS_SUCCESS)
    return;
  fprintf (stderr, "%s:%d: %s failed: cuBLAS status %d\n", __FILE__, line, what, (int) st);
  exit (1);
}
#define LT(call) check_lt ((call), #call, __LINE__)

typedef enum { DT_BF16, DT_FP16, DT_TF32, DT_FP8 } Dtype;

typedef struct {
  const char *name;
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  size_t ab_bytes, cd_bytes;
  double u_out, u_acc; /* tolerance terms, see the header comment */
} DtypeInfo;

static const DtypeInfo dtypes[] = {
  /* u_out: unit roundoff of the output type (bf16 2^-8, fp16 2^-11, fp32 2^-24); u_acc covers
   * tf32 input rounding (2^-11 per factor) and fp8's reduced-precision fast accumulation. */
  [DT_BF16] = { "bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 1.0 / 256, 1.0 / 1024 },
  [DT_FP16] = { "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 1.0 / 2048, 1.0 / 1024 },
  [DT_TF32] = { "tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 1.0 / 16777216, 1.0 / 512 },
  [DT_FP8] = { "fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 1.0 / 256, 1.0 / 256 },
};

__global__ static void
convert_kernel (const float *src, void *dst, size_t n, int dt)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      float x = src[i];
      if (dt == DT_BF16)
        ((__nv_bfloat16 *) dst)[i] = __float2bfloat16 (x);
      else if (dt == DT_FP16)
        ((__half *) dst)[i] = __float2half (x);
      else if (dt == DT_TF32)
        ((float *) dst)[i] = x;
      else
        ((__nv_fp8_e4m3 *) dst)[i] = __nv_fp8_e4m3 (x);
    }
}

__device__ static float
load_ab (const void *p, size_t i, int dt)
{
  if (dt == DT_BF16)
    return __bfloat162float (((const __nv_bfloat16 *) p)[i]);
  if (dt == DT_FP16)
    return __half2float (((const __half *) p)[i]);
  if (dt == DT_TF32)
    return ((const float *) p)[i];
  return float (((const __nv_fp8_e4m3 *) p)[i]);
}

__device__ static float
load_cd (const void *p, size_t i, int dt)
{
  if (dt == DT_FP16)
    return __half2float (((const __half *) p)[i]);
  if (dt == DT_TF32)
    return ((const float *) p)[i];
  return __bfloat162float (((const __nv_bfloat16 *) p)[i]); /* bf16, and fp8's bf16 output */
}

/* One block per sampled element (i, j): fp32 dot product of column i of A (K×M) and column j of
 * B (K×N); counts elements outside the tolerance. */
__global__ static void
check_kernel (const void *A, const void *B, const void *D, long long M, long long N, long long K, int dt,
              unsigned seed, double u_out, double u_acc, int *wrong)
{
  __shared__ double s_ref[256], s_abs[256];
  unsigned h = seed * 2654435761u + blockIdx.x * 40503u;
  long long i = (long long) ((h >> 8) % (unsigned long long) M);
  long long j = (long long) ((h * 7919u + 13u) % (unsigned long long) N);
  if (blockIdx.x == 0)
    i = M - 1, j = N - 1; /* always check the far corner */
  double ref = 0, abs_sum = 0;
  for (long long k = threadIdx.x; k < K; k += blockDim.x)
    {
      double p = (double) load_ab (A, (size_t) (k + i * K), dt) * load_ab (B, (size_t) (k + j * K), dt);
      ref += p;
      abs_sum += fabs (p);
    }
  s_ref[threadIdx.x] = ref;
  s_abs[threadIdx.x] = abs_sum;
  __syncthreads ();
  for (int s = blockDim.x / 2; s > 0; s /= 2)
    {
      if ((int) threadIdx.x < s)
        {
          s_ref[threadIdx.x] += s_ref[threadIdx.x + s];
          s_abs[threadIdx.x] += s_abs[threadIdx.x + s];
        }
      __syncthreads ();
    }
  if (threadIdx.x == 0)
    {
      double d = load_cd (D, (size_t) (i + j * M), dt);
      double tol = u_out * fabs (s_ref[0]) + u_acc * s_abs[0] + 1e-6;
      if (!(fabs (d - s_ref[0]) <= tol))
        atomicAdd (wrong, 1);
    }
}

typedef struct {
  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
  void *A, *B, *D, *ws;
  size_t ws_bytes;
  float alpha, beta;
} Gemm;

static void
gemm_launch (void *ctx, cudaStream_t stream)
{
  Gemm *g = (Gemm *) ctx;
  LT (cublasLtMatmul (g->lt, g->op, &g->alpha, g->A, g->la, g->B, g->lb, &g->beta, g->D, g->lc, g->D, g->lc,
                      &g->algo, g->ws, g->ws_bytes, stream));
}

/* Runs one shape; returns 0 when measured, 1 when cuBLASLt has no algorithm for it (e.g. fp8
 * before sm_89), with `wrong` set to the check's count. */
static int
run_shape (FILE *out, const CalibBenchOpts *opts, cublasLtHandle_t lt, Dtype dt, const char *name, long long M,
           long long N, long long K, long long batch, cudaStream_t stream, int *wrong_total)
{
  const DtypeInfo *di = &dtypes[dt];
  Gemm g;
  memset (&g, 0, sizeof g);
  g.lt = lt;
  g.alpha = 1.0f;
  g.beta = 0.0f;
  g.ws_bytes = 64u << 20;
  LT (cublasLtMatmulDescCreate (&g.op, di->compute, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT (cublasLtMatmulDescSetAttribute (g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT (cublasLtMatmulDescSetAttribute (g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  LT (cublasLtMatrixLayoutCreate (&g.la, di->ab, (uint64_t) K, (uint64_t) M, K));
  LT (cublasLtMatrixLayoutCreate (&g.lb, di->ab, (uint64_t) K, (uint64_t) N, K));
  LT (cublasLtMatrixLayoutCreate (&g.lc, di->cd, (uint64_t) M, (uint64_t) N, M));
  if (batch > 1)
    {
      /* BATCH independent products, packed one after another (a grouped expert GEMM of equal
       * shapes, as calib-plan lists MoE layers). */
      int32_t bc = (int32_t) batch;
      int64_t sa = M * K, sb = K * N, sd = M * N;
      cublasLtMatrixLayout_t ls[3] = { g.la, g.lb, g.lc };
      int64_t strides[3] = { sa, sb, sd };
      for (int i = 0; i < 3; i++)
        {
          LT (cublasLtMatrixLayoutSetAttribute (ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
          LT (cublasLtMatrixLayoutSetAttribute (ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                                sizeof strides[i]));
        }
    }
  /* Element counts over the whole batch; the check samples the first product. */
  size_t na = (size_t) (M * K * batch), nb = (size_t) (K * N * batch), nd = (size_t) (M * N * batch);
  size_t need = na * di->ab_bytes + nb * di->ab_bytes + nd * di->cd_bytes + g.ws_bytes
                + 4 * (na > nb ? na : nb);
  size_t free_b = 0, total_b = 0;
  CALIB_CUDA (cudaMemGetInfo (&free_b, &total_b));
  int status = 0;
  cublasLtMatmulPreference_t pref = NULL;
  if (need > free_b)
    {
      fprintf (out, "# skipped\t%s %s %lld %lld %lld: needs %.1f GiB, %.1f GiB free\n", di->name, name, M, N, K,
               need / 1073741824.0, free_b / 1073741824.0);
      status = 1;
      goto done;
    }
  LT (cublasLtMatmulPreferenceCreate (&pref));
  LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &g.ws_bytes,
                                            sizeof g.ws_bytes));
  {
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic (lt, g.op, g.la, g.lb, g.lc, g.lc, pref, 1, &heur, &found);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0)
      {
        fprintf (out, "# unsupported\t%s %s %lld %lld %lld: cuBLASLt found no algorithm (status %d)\n", di->name,
                 name, M, N, K, (int) st);
        status = 1;
        goto done;
      }
    g.algo = heur.algo;
  }
  {
    float *tmp;
    size_t nmax = na > nb ? na : nb;
    CALIB_CUDA (cudaMalloc (&tmp, nmax * sizeof (float)));
    CALIB_CUDA (cudaMalloc (&g.A, na * di->ab_bytes));
    CALIB_CUDA (cudaMalloc (&g.B, nb * di->ab_bytes));
    CALIB_CUDA (cudaMalloc (&g.D, nd * di->cd_bytes));
    CALIB_CUDA (cudaMalloc (&g.ws, g.ws_bytes));
    calib_bench_fill_uniform_f32 (tmp, na, 1u, 1.0f, stream);
    convert_kernel<<<1024, 256, 0, stream>>> (tmp, g.A, na, dt);
    calib_bench_fill_uniform_f32 (tmp, nb, 2u, 1.0f, stream);
    convert_kernel<<<1024, 256, 0, stream>>> (tmp, g.B, nb, dt);
    CALIB_CUDA (cudaGetLastError ());
    CALIB_CUDA (cudaStreamSynchronize (stream));
    CALIB_CUDA (cudaFree (tmp));
  }
  {
    int wrong = 0;
    if (opts->check)
      {
        int *d_wrong;
        CALIB_CUDA (cudaMalloc (&d_wrong, sizeof (int)));
        CALIB_CUDA (cudaMemsetAsync (d_wrong, 0, sizeof (int), stream));
        CALIB_CUDA (cudaMemsetAsync (g.D, 0xff, nd * di->cd_bytes, stream)); /* NaN: a skipped write fails */
        gemm_launch (&g, stream);
        check_kernel<<<CHECK_SAMPLES, 256, 0, stream>>> (g.A, g.B, g.D, M, N, K, dt, 12345u, di->u_out, di->u_acc,
                                                         d_wrong);
        CALIB_CUDA (cudaGetLastError ());
        CALIB_CUDA (cudaMemcpyAsync (&wrong, d_wrong, sizeof (int), cudaMemcpyDeviceToHost, stream));
        CALIB_CUDA (cudaStreamSynchronize (stream));
        CALIB_CUDA (cudaFree (d_wrong));
      }
    CalibBenchStats s = calib_bench_time (opts, gemm_launch, &g, stream);
    double flop = 2.0 * (double) M * (double) N * (double) K * (double) batch;
    char wbuf[16];
    snprintf (wbuf, sizeof wbuf, "%d", wrong);
    fprintf (out, "gemm\t%s\t%s\t%lld\t%lld\t%lld\t%lld\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%s\n", name, di->name, M,
             N, K, batch, s.median_us, s.p10_us, s.p90_us, flop / s.median_us / 1e6, flop / s.p90_us / 1e6,
             flop / s.p10_us / 1e6, opts->check ? wbuf : "N/A");
    *wrong_total += wrong;
  }
  fflush (out);
done:
  if (pref)
    cublasLtMatmulPreferenceDestroy (pref);
  cudaFree (g.A);
  cudaFree (g.B);
  cudaFree (g.D);
  cudaFree (g.ws);
  cublasLtMatrixLayoutDestroy (g.la);
  cublasLtMatrixLayoutDestroy (g.lb);
  cublasLtMatrixLayoutDestroy (g.lc);
  cublasLtMatmulDescDestroy (g.op);
  return status;
}

static void
usage (FILE *out)
{
  fprintf (out, "Usage: " TOOL " [OPTION…]\n"
                "cuBLASLt GEMM throughput (TN layout), one TSV row per (dtype, M, N, K).\n"
                "  -t LIST     dtypes among bf16,fp16,tf32,fp8 (default bf16,fp8)\n"
                "  -m SWEEP    M values: a:b:factor or a,b,c (default 512:16384:2)\n"
                "  -n SWEEP    N values (default as -m)\n"
                "  -k SWEEP    K values (default as -m); the grid is their product\n"
                "  --shapes F  instead of the grid, the `gemm NAME M N K [BATCH DTYPE]` lines of F, each in\n"
                "              its own DTYPE unless -t is given\n");
  calib_bench_usage_common (out);
}

static int
parse_dtypes (const char *s, Dtype *out, int *n)
{
  char buf[256];
  snprintf (buf, sizeof buf, "%s", s);
  *n = 0;
  char *save = NULL;
  for (char *t = strtok_r (buf, ",", &save); t; t = strtok_r (NULL, ",", &save))
    {
      int found = -1;
      for (int i = 0; i < 4; i++)
        if (strcmp (t, dtypes[i].name) == 0)
          found = i;
      if (found < 0 || *n >= 4)
        {
          fprintf (stderr, TOOL ": unknown dtype '%s' (bf16, fp16, tf32, fp8)\n", t);
          return -1;
        }
      out[(*n)++] = (Dtype) found;
    }
  return *n > 0 ? 0 : -1;
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
  const char *ms = "512:16384:2", *ns = NULL, *ks = NULL, *ts = "bf16,fp8";
  int t_given = 0;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
        {
          usage (stdout);
          return 0;
        }
      if (i + 1 < argc && strcmp (argv[i], "-t") == 0) ts = argv[++i], t_given = 1;
      else if (i + 1 < argc && strcmp (argv[i], "-m") == 0) ms = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-n") == 0) ns = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-k") == 0) ks = argv[++i];
      else
        {
          fprintf (stderr, TOOL ": unknown option '%s'\n", argv[i]);
          usage (stderr);
          return 2;
        }
    }
  Dtype dts[4];
  int ndt = 0;
  long long mv[64], nv[64], kv[64];
  int nm = calib_bench_parse_sweep (ms, mv, 64);
  int nn = calib_bench_parse_sweep (ns ? ns : ms, nv, 64);
  int nk = calib_bench_parse_sweep (ks ? ks : ms, kv, 64);
  if (parse_dtypes (ts, dts, &ndt) != 0)
    return 2;
  if (nm <= 0 || nn <= 0 || nk <= 0)
    {
      fprintf (stderr, TOOL ": bad sweep in -m/-n/-k; use a:b:factor or a,b,c with positive integers\n");
      return 2;
    }
  FILE *shapes = NULL;
  if (opts.shapes_path && (shapes = fopen (opts.shapes_path, "r")) == NULL)
    {
      fprintf (stderr, TOOL ": cannot open shapes file %s\n", opts.shapes_path);
      return 2;
    }
  FILE *out = calib_bench_open_output (TOOL, &opts, argc0, argv0);
  if (out == NULL)
    return 2;
  size_t v = cublasLtGetVersion ();
  fprintf (out, "# cublasLt\t%zu.%zu.%zu\n", v / 10000, (v / 100) % 100, v % 100);
  fprintf (out, "# layout\tTN column-major (A K×M transposed, B K×N), alpha 1 beta 0, workspace 64 MiB, "
                "heuristic top-1\n");
  fprintf (out, "# timing\twarmup %d, %d samples of %d launches, L2 flush %s\n", opts.warmup, opts.reps, opts.batch,
           opts.flush_l2 ? "on" : "off");
  fprintf (out, "bench\tname\tdtype\tM\tN\tK\tbatch\ttime_us_median\ttime_us_p10\ttime_us_p90\tTFLOPS_median\t"
                "TFLOPS_p10\tTFLOPS_p90\twrong\n");
  cublasLtHandle_t lt;
  LT (cublasLtCreate (&lt));
  cudaStream_t stream;
  CALIB_CUDA (cudaStreamCreate (&stream));
  int wrong = 0, measured = 0;
  /* With --shapes and no -t, each line's own dtype (7th field, as calib-plan prints) is used. */
  for (int d = 0; d < (shapes && !t_given ? 1 : ndt); d++)
    {
      if (shapes)
        {
          char line[1024];
          char *f[8];
          rewind (shapes);
          int nf;
          while ((nf = calib_bench_plan_next (shapes, "gemm", line, sizeof line, f, 8)) >= 0)
            {
              long long M, N, K;
              if (nf < 5 || (M = atoll (f[2])) <= 0 || (N = atoll (f[3])) <= 0 || (K = atoll (f[4])) <= 0)
                {
                  fprintf (stderr, TOOL ": bad gemm line in %s (want: gemm NAME M N K [BATCH DTYPE])\n",
                           opts.shapes_path);
                  return 2;
                }
              Dtype dt = dts[d];
              if (!t_given && nf >= 7)
                {
                  int found = -1;
                  for (int i = 0; i < 4; i++)
                    if (strcmp (f[6], dtypes[i].name) == 0)
                      found = i;
                  if (found < 0)
                    {
                      /* e.g. fp4 (block-scaled NVFP4 needs scale tensors this bench does not build) */
                      fprintf (out, "# unsupported\t%s %s %s %s: dtype %s is not benchmarked\n", f[1], f[2], f[3], f[4],
                               f[6]);
                      continue;
                    }
                  dt = (Dtype) found;
                }
              long long batch = nf >= 6 ? atoll (f[5]) : 1;
              if (batch < 1)
                {
                  fprintf (stderr, TOOL ": bad batch '%s' in %s\n", f[5], opts.shapes_path);
                  return 2;
                }
              measured += run_shape (out, &opts, lt, dt, f[1], M, N, K, batch, stream, &wrong) == 0;
            }
        }
      else
        for (int a = 0; a < nm; a++)
          for (int b = 0; b < nn; b++)
            for (int c = 0; c < nk; c++)
              measured += run_shape (out, &opts, lt, dts[d], "-", mv[a], nv[b], kv[c], 1, stream, &wrong) == 0;
    }
  fprintf (out, "# shapes_measured\t%d\n# wrong_total\t%d\n# result\t%s\n", measured, wrong,
           wrong ? "FAIL" : "PASS");
  cublasLtDestroy (lt);
  if (out != stdout)
    fclose (out);
  free (argv0);
  return wrong ? 1 : 0;
}
