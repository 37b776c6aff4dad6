/* trainsim-bench-attention: causal self-attention forward and backward, bf16, with GQA.
 *
 * Kernel (stated, as the DESIGN asks): an UNFUSED implementation — cuBLAS strided-batched GEMMs
 * (bf16 in, fp32 accumulate) around our own row-softmax kernels, with the full S×S score matrix
 * materialized in HBM. cuDNN's fused SDPA is not used: it is reachable from C only through the
 * cuDNN backend descriptor API (the cudnn-frontend C++ headers are not part of the toolkit), and
 * this program had to be written without a GPU to validate such a graph. The unfused kernel
 * computes the masked upper triangle too, so its achieved TFLOP/s by the causal convention below
 * is a lower bound on what a fused flash kernel reaches; the profile records which kernel it was.
 *
 * Per unit (batch b, KV head g) with G = H/Hkv query heads sharing K, V (rows r of the G·S × S
 * score matrix are query position r mod S):
 *   forward   P = softmax_causal(scale·Q·Kᵀ);  O = P·V                          (2 GEMMs)
 *   backward  dV = Pᵀ·dO;  dP = dO·Vᵀ;  dS = P∘(dP − rowsum(P∘dP));
 *             dQ = scale·dS·K;  dK = scale·dSᵀ·Q                                (4 GEMMs)
 * Useful FLOPs (causal convention of FlashAttention's benchmarks): forward 4·B·H·S²·D/2,
 * backward 2× forward (no recompute counted). When the two score buffers for all units do not fit
 * in memory, units are processed in chunks and the backward recomputes P (column `recompute`).
 * Correctness is checked apart from timing: sampled rows of O and dQ against double-precision
 * host arithmetic on the same bf16 inputs. */
#include "calib/bench.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "trainsim-bench-attention"

static void
check_blas (cublasStatus_t st, const char *what, int line)
{
  if (st == CUBLAS_STATUS_SUCCESS)
    return;
  fprintf (stderr, "%s:%d: %s failed: cuBLAS status %d\n", __FILE__, line, what, (int) st);
  exit (1);
}
#define BLAS(call) check_blas ((call), #call, __LINE__)

typedef __nv_bfloat16 bf16;

/* Row-major C[M×N] = alpha·op(A)·op(B) + beta·C, batched with strides, as the column-major
 * product Cᵀ = op(B)ᵀ·op(A)ᵀ. lda/ldb/ldc are row-major leading dimensions (stored columns). */
static void
rm_gemm (cublasHandle_t h, int ta, int tb, int M, int N, int K, float alpha, const bf16 *A, int lda, long long sa,
         const bf16 *B, int ldb, long long sb, float beta, bf16 *C, int ldc, long long sc, int batch)
{
  BLAS (cublasGemmStridedBatchedEx (h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                                    &alpha, B, CUDA_R_16BF, ldb, sb, A, CUDA_R_16BF, lda, sa, &beta, C,
                                    CUDA_R_16BF, ldc, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* Block reduction helpers (blockDim.x = 256). */
__device__ static float
block_max (float v, float *sh)
{
  for (int o = 16; o > 0; o /= 2)
    v = fmaxf (v, __shfl_xor_sync (0xffffffffu, v, o));
  __syncthreads ();
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x / 32] = v;
  __syncthreads ();
  float r = sh[0];
  for (unsigned w = 1; w < blockDim.x / 32; w++)
    r = fmaxf (r, sh[w]);
  return r;
}

__device__ static float
block_sum (float v, float *sh)
{
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync (0xffffffffu, v, o);
  __syncthreads ();
  if ((threadIdx.x & 31) == 0)
    sh[threadIdx.x / 32] = v;
  __syncthreads ();
  float r = 0.f;
  for (unsigned w = 0; w < blockDim.x / 32; w++)
    r += sh[w];
  return r;
}

/* One block per score row; row r is query position r % S; columns > position are masked. */
__global__ static void
softmax_fwd_kernel (bf16 *P, int S)
{
  __shared__ float sh[32];
  bf16 *row = P + (size_t) blockIdx.x * S;
  int pos = (int) (blockIdx.x % (unsigned) S);
  float m = -INFINITY;
  for (int j = threadIdx.x; j <= pos; j += blockDim.x)
    m = fmaxf (m, __bfloat162float (row[j]));
  m = block_max (m, sh);
  float s = 0.f;
  for (int j = threadIdx.x; j <= pos; j += blockDim.x)
    s += __expf (__bfloat162float (row[j]) - m);
  s = block_sum (s, sh);
  float inv = 1.f / s;
  for (int j = threadIdx.x; j < S; j += blockDim.x)
    row[j] = __float2bfloat16 (j <= pos ? __expf (__bfloat162float (row[j]) - m) * inv : 0.f);
}

/* dS = P∘(dP − δ), δ = Σ_j P_j dP_j, written over dP. */
__global__ static void
softmax_bwd_kernel (const bf16 *P, bf16 *dP, int S)
{
  __shared__ float sh[32];
  const bf16 *p = P + (size_t) blockIdx.x * S;
  bf16 *d = dP + (size_t) blockIdx.x * S;
  int pos = (int) (blockIdx.x % (unsigned) S);
  float delta = 0.f;
  for (int j = threadIdx.x; j <= pos; j += blockDim.x)
    delta += __bfloat162float (p[j]) * __bfloat162float (d[j]);
  delta = block_sum (delta, sh);
  for (int j = threadIdx.x; j < S; j += blockDim.x)
    d[j] = __float2bfloat16 (j <= pos ? __bfloat162float (p[j]) * (__bfloat162float (d[j]) - delta) : 0.f);
}

typedef struct {
  cublasHandle_t blas;
  int B, H, Hkv, S, D, G;
  int units, chunk; /* units = B·Hkv; chunk = units per pass */
  float scale;
  bf16 *Q, *K, *V, *O, *dO, *dQ, *dK, *dV, *P, *dP;
} Attn;

static void
fwd_chunk (Attn *a, int u0, int n, bf16 *P)
{
  long long qs = (long long) a->G * a->S * a->D, ks = (long long) a->S * a->D, ps = (long long) a->G * a->S * a->S;
  int GS = a->G * a->S;
  rm_gemm (a->blas, 0, 1, GS, a->S, a->D, a->scale, a->Q + u0 * qs, a->D, qs, a->K + u0 * ks, a->D, ks, 0.f, P,
           a->S, ps, n);
  softmax_fwd_kernel<<<(unsigned) ((long long) n * GS), 256>>> (P, a->S);
  rm_gemm (a->blas, 0, 0, GS, a->D, a->S, 1.f, P, a->S, ps, a->V + u0 * ks, a->D, ks, 0.f, a->O + u0 * qs, a->D, qs,
           n);
}

static void
bwd_chunk (Attn *a, int u0, int n, const bf16 *P)
{
  long long qs = (long long) a->G * a->S * a->D, ks = (long long) a->S * a->D, ps = (long long) a->G * a->S * a->S;
  int GS = a->G * a->S;
  rm_gemm (a->blas, 1, 0, a->S, a->D, GS, 1.f, P, a->S, ps, a->dO + u0 * qs, a->D, qs, 0.f, a->dV + u0 * ks, a->D, ks,
           n);
  rm_gemm (a->blas, 0, 1, GS, a->S, a->D, 1.f, a->dO + u0 * qs, a->D, qs, a->V + u0 * ks, a->D, ks, 0.f, a->dP, a->S,
           ps, n);
  softmax_bwd_kernel<<<(unsigned) ((long long) n * GS), 256>>> (P, a->dP, a->S);
  rm_gemm (a->blas, 0, 0, GS, a->D, a->S, a->scale, a->dP, a->S, ps, a->K + u0 * ks, a->D, ks, 0.f, a->dQ + u0 * qs,
           a->D, qs, n);
  rm_gemm (a->blas, 1, 0, a->S, a->D, GS, a->scale, a->dP, a->S, ps, a->Q + u0 * qs, a->D, qs, 0.f, a->dK + u0 * ks,
           a->D, ks, n);
}

static void
fwd_launch (void *ctx, cudaStream_t s)
{
  Attn *a = (Attn *) ctx;
  BLAS (cublasSetStream (a->blas, s));
  for (int u = 0; u < a->units; u += a->chunk)
    fwd_chunk (a, u, a->units - u < a->chunk ? a->units - u : a->chunk, a->P);
}

static void
bwd_launch (void *ctx, cudaStream_t s)
{
  Attn *a = (Attn *) ctx;
  BLAS (cublasSetStream (a->blas, s));
  for (int u = 0; u < a->units; u += a->chunk)
    {
      int n = a->units - u < a->chunk ? a->units - u : a->chunk;
      if (a->chunk < a->units)
        fwd_chunk (a, u, n, a->P); /* recompute P for this chunk */
      bwd_chunk (a, u, n, a->P);
    }
}

static float
bf (const bf16 *host, size_t i)
{
  unsigned short raw;
  memcpy (&raw, &host[i], 2);
  unsigned u = (unsigned) raw << 16;
  float f;
  memcpy (&f, &u, 4);
  return f;
}

static bf16 *
fetch (const bf16 *dev, size_t n)
{
  bf16 *h = (bf16 *) malloc (n * sizeof (bf16));
  CALIB_CUDA (cudaMemcpy (h, dev, n * sizeof (bf16), cudaMemcpyDeviceToHost));
  return h;
}

/* Checks rows (unit u, head-in-group j, position i) of O and dQ on the host in double. */
static int
check_rows (Attn *a)
{
  int wrong = 0, S = a->S, D = a->D;
  int units[2] = { 0, a->units - 1 }, heads[2] = { 0, a->G - 1 };
  int poss[3] = { 0, S / 2, S - 1 };
  double *p = (double *) malloc (sizeof (double) * (size_t) S), *dp = (double *) malloc (sizeof (double) * (size_t) S);
  for (int t = 0; t < 2; t++)
    {
      size_t ks = (size_t) S * D, qs = (size_t) a->G * S * D;
      bf16 *K = fetch (a->K + units[t] * ks, ks), *V = fetch (a->V + units[t] * ks, ks);
      bf16 *Q = fetch (a->Q + units[t] * qs, qs), *O = fetch (a->O + units[t] * qs, qs);
      bf16 *dO = fetch (a->dO + units[t] * qs, qs), *dQ = fetch (a->dQ + units[t] * qs, qs);
      for (int pi = 0; pi < 3; pi++)
        {
          int i = poss[pi];
          size_t row = ((size_t) heads[t] * S + i) * D;
          double m = -INFINITY, sum = 0, delta = 0;
          for (int j = 0; j <= i; j++)
            {
              double s = 0;
              for (int d = 0; d < D; d++)
                s += (double) bf (Q, row + d) * bf (K, (size_t) j * D + d);
              p[j] = s * a->scale;
              m = fmax (m, p[j]);
            }
          for (int j = 0; j <= i; j++)
            sum += (p[j] = exp (p[j] - m));
          for (int j = 0; j <= i; j++)
            {
              p[j] /= sum;
              double s = 0;
              for (int d = 0; d < D; d++)
                s += (double) bf (dO, row + d) * bf (V, (size_t) j * D + d);
              dp[j] = s;
              delta += p[j] * s;
            }
          for (int d = 0; d < D; d++)
            {
              double o = 0, oabs = 0, dq = 0, dqabs = 0;
              for (int j = 0; j <= i; j++)
                {
                  o += p[j] * bf (V, (size_t) j * D + d);
                  oabs += p[j] * fabs (bf (V, (size_t) j * D + d));
                  double ds = p[j] * (dp[j] - delta) * a->scale;
                  dq += ds * bf (K, (size_t) j * D + d);
                  dqabs += fabs (ds * bf (K, (size_t) j * D + d)) + p[j] * fabs (dp[j]) * a->scale;
                }
              /* bf16 scores, probabilities and outputs: a few units of 2^-8 relative to the
               * magnitudes summed. */
              wrong += fabs (bf (O, row + d) - o) > 0.03 * oabs + 1e-3;
              wrong += fabs (bf (dQ, row + d) - dq) > 0.05 * dqabs + 1e-3;
            }
        }
      free (K), free (V), free (Q), free (O), free (dO), free (dQ);
    }
  free (p);
  free (dp);
  return wrong;
}

static void
usage (FILE *out)
{
  fprintf (out, "Usage: " TOOL " [OPTION…]\n"
                "Causal attention forward and backward (bf16, GQA), unfused cuBLAS + softmax kernels.\n"
                "  -B N        micro-batch (default 1)\n"
                "  -H N        query heads (default 32)\n"
                "  -K N        key/value heads (default 8)\n"
                "  -D N        head dimension (default 128)\n"
                "  -S SWEEP    sequence lengths, a:b:factor or a,b,c (default 512:16384:2)\n"
                "  --shapes F  instead, the `attention NAME B H Hkv S D` lines of F\n");
  calib_bench_usage_common (out);
}

static int
run_shape (FILE *out, const CalibBenchOpts *opts, cublasHandle_t blas, const char *name, int B, int H, int Hkv,
           int S, int D, int *wrong_total)
{
  Attn a;
  memset (&a, 0, sizeof a);
  a.blas = blas;
  a.B = B, a.H = H, a.Hkv = Hkv, a.S = S, a.D = D, a.G = H / Hkv;
  a.units = B * Hkv;
  a.scale = (float) (1.0 / sqrt ((double) D));
  size_t qn = (size_t) B * H * S * D, kn = (size_t) B * Hkv * S * D;
  size_t unit_scores = (size_t) a.G * S * S * sizeof (bf16);
  size_t fixed = (4 * qn + 4 * kn) * sizeof (bf16) + (256u << 20);
  size_t free_b, total_b;
  CALIB_CUDA (cudaMemGetInfo (&free_b, &total_b));
  if (fixed + 2 * unit_scores > free_b * 9 / 10)
    {
      fprintf (out, "# skipped\t%s B%d H%d Hkv%d S%d D%d: one unit's scores need %.1f GiB\n", name, B, H, Hkv, S, D,
               2.0 * unit_scores / 1073741824.0);
      return 1;
    }
  size_t room = free_b * 9 / 10 - fixed;
  a.chunk = (int) (room / (2 * unit_scores));
  if (a.chunk > a.units)
    a.chunk = a.units;
  CALIB_CUDA (cudaMalloc (&a.Q, qn * 2));
  CALIB_CUDA (cudaMalloc (&a.O, qn * 2));
  CALIB_CUDA (cudaMalloc (&a.dO, qn * 2));
  CALIB_CUDA (cudaMalloc (&a.dQ, qn * 2));
  CALIB_CUDA (cudaMalloc (&a.K, kn * 2));
  CALIB_CUDA (cudaMalloc (&a.V, kn * 2));
  CALIB_CUDA (cudaMalloc (&a.dK, kn * 2));
  CALIB_CUDA (cudaMalloc (&a.dV, kn * 2));
  CALIB_CUDA (cudaMalloc (&a.P, (size_t) a.chunk * unit_scores));
  CALIB_CUDA (cudaMalloc (&a.dP, (size_t) a.chunk * unit_scores));
  float *tmp;
  CALIB_CUDA (cudaMalloc (&tmp, qn * sizeof (float)));
  bf16 *dst[4] = { a.Q, a.dO, a.K, a.V };
  size_t n[4] = { qn, qn, kn, kn };
  for (int i = 0; i < 4; i++)
    {
      calib_bench_fill_uniform_f32 (tmp, n[i], 20u + (unsigned) i, 1.f, 0);
      calib_bench_f32_to_bf16 (tmp, dst[i], n[i], 1024, 0);
    }
  CALIB_CUDA (cudaDeviceSynchronize ());
  CALIB_CUDA (cudaFree (tmp));
  int wrong = 0;
  if (opts->check)
    {
      fwd_launch (&a, 0);
      bwd_launch (&a, 0);
      CALIB_CUDA (cudaDeviceSynchronize ());
      CALIB_CUDA (cudaGetLastError ());
      wrong = check_rows (&a);
    }
  /* Legacy default stream: cuBLAS and the softmax kernels share it. */
  CalibBenchStats f = calib_bench_time (opts, fwd_launch, &a, 0);
  fwd_launch (&a, 0); /* P current for the backward when it is not recomputed */
  CalibBenchStats b = calib_bench_time (opts, bwd_launch, &a, 0);
  double fwd_flop = 4.0 * B * H * (double) S * S * D / 2.0, bwd_flop = 2.0 * fwd_flop;
  char wbuf[16];
  snprintf (wbuf, sizeof wbuf, "%d", wrong);
  const char *rc = a.chunk < a.units ? "yes" : "no";
  fprintf (out, "attention\t%s\tfwd\tbf16\t%d\t%d\t%d\t%d\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%s\n", name, B,
           H, Hkv, S, D, "no", f.median_us, f.p10_us, f.p90_us, fwd_flop / f.median_us / 1e6,
           fwd_flop / f.p90_us / 1e6, fwd_flop / f.p10_us / 1e6, opts->check ? wbuf : "N/A");
  fprintf (out, "attention\t%s\tbwd\tbf16\t%d\t%d\t%d\t%d\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%s\n", name, B,
           H, Hkv, S, D, rc, b.median_us, b.p10_us, b.p90_us, bwd_flop / b.median_us / 1e6,
           bwd_flop / b.p90_us / 1e6, bwd_flop / b.p10_us / 1e6, opts->check ? wbuf : "N/A");
  fflush (out);
  *wrong_total += wrong;
  bf16 *bufs[10] = { a.Q, a.O, a.dO, a.dQ, a.K, a.V, a.dK, a.dV, a.P, a.dP };
  for (int i = 0; i < 10; i++)
    cudaFree (bufs[i]);
  return 0;
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
  int B = 1, H = 32, Hkv = 8, D = 128;
  const char *ss = "512:16384:2";
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
        {
          usage (stdout);
          return 0;
        }
      if (i + 1 < argc && strcmp (argv[i], "-B") == 0) B = atoi (argv[++i]);
      else if (i + 1 < argc && strcmp (argv[i], "-H") == 0) H = atoi (argv[++i]);
      else if (i + 1 < argc && strcmp (argv[i], "-K") == 0) Hkv = atoi (argv[++i]);
      else if (i + 1 < argc && strcmp (argv[i], "-D") == 0) D = atoi (argv[++i]);
      else if (i + 1 < argc && strcmp (argv[i], "-S") == 0) ss = argv[++i];
      else
        {
          fprintf (stderr, TOOL ": unknown option '%s'\n", argv[i]);
          usage (stderr);
          return 2;
        }
    }
  long long seqs[64];
  int nseq = calib_bench_parse_sweep (ss, seqs, 64);
  if (nseq <= 0 || B <= 0 || H <= 0 || Hkv <= 0 || H % Hkv != 0 || D <= 0 || D > 512)
    {
      fprintf (stderr, TOOL ": bad shape: need B, H, Hkv > 0, H divisible by Hkv, 0 < D <= 512, -S a:b:factor\n");
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
  cublasHandle_t blas;
  BLAS (cublasCreate (&blas));
  int ver = 0;
  cublasGetVersion (blas, &ver);
  fprintf (out, "# cublas\t%d\n", ver);
  fprintf (out, "# kernel\tunfused: cuBLAS strided-batched GEMMs + trainsim softmax kernels, scores materialized "
                "(not cuDNN fused SDPA)\n");
  fprintf (out, "# flops\tcausal: fwd 4*B*H*S^2*D/2, bwd 2x fwd\n");
  fprintf (out, "# timing\twarmup %d, %d samples of %d launches, L2 flush %s\n", opts.warmup, opts.reps, opts.batch,
           opts.flush_l2 ? "on" : "off");
  fprintf (out, "bench\tname\tpass\tdtype\tB\tH\tHkv\tS\tD\trecompute\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                "TFLOPS_median\tTFLOPS_p10\tTFLOPS_p90\twrong\n");
  int wrong = 0, measured = 0;
  if (shapes)
    {
      char line[1024];
      char *f[8];
      int nf;
      while ((nf = calib_bench_plan_next (shapes, "attention", line, sizeof line, f, 8)) >= 0)
        {
          int b, h, hk, s, d;
          if (nf < 7 || (b = atoi (f[2])) <= 0 || (h = atoi (f[3])) <= 0 || (hk = atoi (f[4])) <= 0
              || (s = atoi (f[5])) <= 0 || (d = atoi (f[6])) <= 0 || h % hk != 0)
            {
              fprintf (stderr, TOOL ": bad attention line in %s (want: attention NAME B H Hkv S D)\n",
                       opts.shapes_path);
              return 2;
            }
          measured += run_shape (out, &opts, blas, f[1], b, h, hk, s, d, &wrong) == 0;
        }
    }
  else
    for (int i = 0; i < nseq; i++)
      measured += run_shape (out, &opts, blas, "-", B, H, Hkv, (int) seqs[i], D, &wrong) == 0;
  fprintf (out, "# shapes_measured\t%d\n# wrong_total\t%d\n# result\t%s\n", measured, wrong, wrong ? "FAIL" : "PASS");
  cublasDestroy (blas);
  if (out != stdout)
    fclose (out);
  free (argv0);
  return wrong ? 1 : 0;
}
