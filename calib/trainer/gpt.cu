/* The trainer's transformer on one GPU (see gpt.h; equations in ref.c). */
#include "calib/trainer/gpt.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __nv_bfloat16 bf16;

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf (stderr, "trainsim-trainer: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString (e_)); abort (); } } while (0)
#define CHECK_LT(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
  fprintf (stderr, "trainsim-trainer: %s:%d: %s: cuBLASLt status %d\n", __FILE__, __LINE__, #x, (int) s_); abort (); } } while (0)

static const float NORM_EPS = 1e-5f;

/* ---------------------------------------------------------------- cuBLASLt GEMM, row-major view */

/* C[M,N] = alpha · op(A) · op(B) + beta · Cin (+ bias[N]), all row-major. A is stored [M,K]
 * (ta 0) or [K,M] (ta 1); B is stored [K,N] (tb 0) or [N,K] (tb 1). cuBLASLt is column-major, so
 * this computes C^T = op(B)^T · op(A)^T: first operand B, second A, m = N, n = M. */
typedef struct {
  int ta, tb, M, N, K, batch, c_fp32, bias, align;
  long long sa, sb, sc;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
} Gemm;

#define GEMM_CACHE 256
typedef struct {
  cublasLtHandle_t lt;
  void *workspace;
  size_t workspace_bytes;
  Gemm cache[GEMM_CACHE];
  int n;
} GemmCtx;

static int
align_of (const void *p)
{
  uintptr_t a = (uintptr_t) p;
  int al = 256;
  while (al > 2 && (a % (uintptr_t) al))
    al /= 2;
  return al;
}

static cublasLtMatrixLayout_t
layout (cudaDataType t, uint64_t rows, uint64_t cols, int64_t ld, int batch, long long stride)
{
  cublasLtMatrixLayout_t l;
  CHECK_LT (cublasLtMatrixLayoutCreate (&l, t, rows, cols, ld));
  if (batch > 1)
    {
      int32_t b = batch;
      int64_t s = stride;
      CHECK_LT (cublasLtMatrixLayoutSetAttribute (l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
      CHECK_LT (cublasLtMatrixLayoutSetAttribute (l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s));
    }
  return l;
}

static void
gemm (GemmCtx *g, cudaStream_t stream, int ta, int tb, int M, int N, int K, const bf16 *A, const bf16 *B,
      void *C, const void *Cin, int c_fp32, float beta, const bf16 *bias, int batch, long long sa, long long sb,
      long long sc)
{
  int align = align_of (A);
  int ab = align_of (B), ac = align_of (C), ai = align_of (Cin ? Cin : C);
  if (ab < align) align = ab;
  if (ac < align) align = ac;
  if (ai < align) align = ai;
  int has_bias = bias != NULL;
  Gemm *e = NULL;
  for (int i = 0; i < g->n; i++)
    {
      Gemm *c = &g->cache[i];
      if (c->ta == ta && c->tb == tb && c->M == M && c->N == N && c->K == K && c->batch == batch && c->sa == sa
          && c->sb == sb && c->sc == sc && c->c_fp32 == c_fp32 && c->bias == has_bias && c->align == align)
        {
          e = c;
          break;
        }
    }
  if (!e)
    {
      if (g->n == GEMM_CACHE)
        {
          fprintf (stderr, "trainsim-trainer: more than %d GEMM shapes\n", GEMM_CACHE);
          abort ();
        }
      e = &g->cache[g->n++];
      memset (e, 0, sizeof *e);
      e->ta = ta; e->tb = tb; e->M = M; e->N = N; e->K = K; e->batch = batch;
      e->sa = sa; e->sb = sb; e->sc = sc; e->c_fp32 = c_fp32; e->bias = has_bias; e->align = align;
      CHECK_LT (cublasLtMatmulDescCreate (&e->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
      /* first operand (cuBLAS "A") is our B, the second (cuBLAS "B") is our A */
      CHECK_LT (cublasLtMatmulDescSetAttribute (e->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb));
      CHECK_LT (cublasLtMatmulDescSetAttribute (e->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa));
      if (has_bias)
        {
          cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
          cudaDataType bt = CUDA_R_16BF;
          CHECK_LT (cublasLtMatmulDescSetAttribute (e->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
          CHECK_LT (cublasLtMatmulDescSetAttribute (e->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
        }
      e->la = tb ? layout (CUDA_R_16BF, K, N, K, batch, sb) : layout (CUDA_R_16BF, N, K, N, batch, sb);
      e->lb = ta ? layout (CUDA_R_16BF, M, K, M, batch, sa) : layout (CUDA_R_16BF, K, M, K, batch, sa);
      e->lc = layout (c_fp32 ? CUDA_R_32F : CUDA_R_16BF, N, M, N, batch, sc);
      cublasLtMatmulPreference_t pref;
      CHECK_LT (cublasLtMatmulPreferenceCreate (&pref));
      uint64_t ws = g->workspace_bytes;
      uint32_t al = (uint32_t) align;
      CHECK_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
      CHECK_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof al));
      CHECK_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof al));
      CHECK_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof al));
      CHECK_LT (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof al));
      cublasLtMatmulHeuristicResult_t res;
      int found = 0;
      CHECK_LT (cublasLtMatmulAlgoGetHeuristic (g->lt, e->desc, e->la, e->lb, e->lc, e->lc, pref, 1, &res, &found));
      cublasLtMatmulPreferenceDestroy (pref);
      if (!found)
        {
          fprintf (stderr, "trainsim-trainer: no cuBLASLt algorithm for %dx%dx%d (ta %d tb %d batch %d)\n", M, N, K, ta,
                   tb, batch);
          abort ();
        }
      e->algo = res.algo;
    }
  if (has_bias)
    CHECK_LT (cublasLtMatmulDescSetAttribute (e->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  float alpha = 1.0f;
  CHECK_LT (cublasLtMatmul (g->lt, e->desc, &alpha, B, e->la, A, e->lb, &beta, Cin ? Cin : C, e->lc, C, e->lc,
                            &e->algo, g->workspace, g->workspace_bytes, stream));
}

/* ---------------------------------------------------------------- kernels */

static __device__ __forceinline__ float
warp_sum (float x)
{
  for (int o = 16; o > 0; o >>= 1)
    x += __shfl_xor_sync (0xffffffffu, x, o);
  return x;
}

static __device__ __forceinline__ float
warp_max (float x)
{
  for (int o = 16; o > 0; o >>= 1)
    x = fmaxf (x, __shfl_xor_sync (0xffffffffu, x, o));
  return x;
}

static unsigned
blocks_for (size_t n, int threads)
{
  size_t b = (n + (size_t) threads - 1) / (size_t) threads;
  return (unsigned) (b < 65535u * 64u ? b : 65535u * 64u);
}

__global__ static void
f32_to_bf16_kernel (const float *in, bf16 *out, size_t n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    out[i] = __float2bfloat16 (in[i]);
}

__global__ static void
embed_kernel (const int *tok, const bf16 *wte, const bf16 *wpe, bf16 *x, int N, int T, int C)
{
  size_t total = (size_t) N * C;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total; i += (size_t) gridDim.x * blockDim.x)
    {
      int n = (int) (i / C), c = (int) (i % C);
      float v = __bfloat162float (wte[(size_t) tok[n] * C + c]);
      if (wpe)
        v += __bfloat162float (wpe[(size_t) (n % T) * C + c]);
      x[i] = __float2bfloat16 (v);
    }
}

__global__ static void
embed_backward_kernel (const int *tok, const bf16 *dx, float *dwte, float *dwpe, int N, int T, int C)
{
  size_t total = (size_t) N * C;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total; i += (size_t) gridDim.x * blockDim.x)
    {
      int n = (int) (i / C), c = (int) (i % C);
      float g = __bfloat162float (dx[i]);
      atomicAdd (&dwte[(size_t) tok[n] * C + c], g);
      if (dwpe)
        atomicAdd (&dwpe[(size_t) (n % T) * C + c], g);
    }
}

/* One warp per row: y = (x − mean)·rstd·w + b (LayerNorm) or x·rstd·w (RMSNorm). */
__global__ static void
norm_forward_kernel (const bf16 *x, const bf16 *w, const bf16 *b, bf16 *y, float *mean, float *rstd, int N, int C,
                     int rms)
{
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= N)
    return;
  const bf16 *xr = x + (size_t) row * C;
  float mu = 0.0f;
  if (!rms)
    {
      for (int c = lane; c < C; c += 32)
        mu += __bfloat162float (xr[c]);
      mu = warp_sum (mu) / C;
    }
  float var = 0.0f;
  for (int c = lane; c < C; c += 32)
    {
      float d = __bfloat162float (xr[c]) - mu;
      var += d * d;
    }
  float rs = rsqrtf (warp_sum (var) / C + NORM_EPS);
  for (int c = lane; c < C; c += 32)
    {
      float v = (__bfloat162float (xr[c]) - mu) * rs * __bfloat162float (w[c]);
      if (b)
        v += __bfloat162float (b[c]);
      y[(size_t) row * C + c] = __float2bfloat16 (v);
    }
  if (lane == 0)
    {
      mean[row] = mu;
      rstd[row] = rs;
    }
}

/* dx += norm backward (in place, dx may hold the residual gradient); dw, db accumulate through a
 * per-block shared-memory sum, then one atomic per element per block. */
__global__ static void
norm_backward_kernel (const bf16 *dy, const bf16 *x, const bf16 *w, const float *mean, const float *rstd, bf16 *dx,
                      float *dw, float *db, int N, int C, int rms)
{
  extern __shared__ float sh[]; /* dw [C], db [C] */
  float *sdw = sh, *sdb = sh + C;
  for (int c = threadIdx.x; c < 2 * C; c += blockDim.x)
    sh[c] = 0.0f;
  __syncthreads ();
  int warps = blockDim.x / 32, lane = threadIdx.x % 32;
  for (int row = blockIdx.x * warps + threadIdx.x / 32; row < N; row += gridDim.x * warps)
    {
      const bf16 *xr = x + (size_t) row * C, *dyr = dy + (size_t) row * C;
      float mu = mean[row], rs = rstd[row], mdx = 0.0f, mdxx = 0.0f;
      for (int c = lane; c < C; c += 32)
        {
          float xhat = (__bfloat162float (xr[c]) - mu) * rs;
          float g = __bfloat162float (dyr[c]);
          float dxhat = g * __bfloat162float (w[c]);
          mdx += dxhat;
          mdxx += dxhat * xhat;
          atomicAdd (&sdw[c], g * xhat);
          if (db)
            atomicAdd (&sdb[c], g);
        }
      mdx = rms ? 0.0f : warp_sum (mdx) / C;
      mdxx = warp_sum (mdxx) / C;
      for (int c = lane; c < C; c += 32)
        {
          float xhat = (__bfloat162float (xr[c]) - mu) * rs;
          float dxhat = __bfloat162float (dyr[c]) * __bfloat162float (w[c]);
          size_t i = (size_t) row * C + c;
          dx[i] = __float2bfloat16 (__bfloat162float (dx[i]) + rs * (dxhat - mdx - xhat * mdxx));
        }
    }
  __syncthreads ();
  for (int c = threadIdx.x; c < C; c += blockDim.x)
    {
      atomicAdd (&dw[c], sdw[c]);
      if (db)
        atomicAdd (&db[c], sdb[c]);
    }
}

/* db[j] += Σ_rows dy[row, j]: 32 columns per block, 8 row lanes, reduced in shared memory. */
__global__ static void
bias_grad_kernel (const bf16 *dy, float *db, int N, int O)
{
  __shared__ float part[8][33];
  int col = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.0f;
  if (col < O)
    for (int r = blockIdx.y * 8 + threadIdx.y; r < N; r += gridDim.y * 8)
      acc += __bfloat162float (dy[(size_t) r * O + col]);
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads ();
  if (threadIdx.y == 0 && col < O)
    {
      float s = 0.0f;
      for (int i = 0; i < 8; i++)
        s += part[i][threadIdx.x];
      atomicAdd (&db[col], s);
    }
}

/* Interleaved-pair rotation of the q and k heads of qkv [N, (H + 2KV)·hd]; sign −1: inverse. */
__global__ static void
rope_kernel (bf16 *qkv, int N, int T, int heads_rotated, int hd, int stride, float theta, float sign)
{
  size_t pairs = (size_t) N * heads_rotated * (hd / 2);
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < pairs; i += (size_t) gridDim.x * blockDim.x)
    {
      int p = (int) (i % (hd / 2));
      size_t rest = i / (hd / 2);
      int h = (int) (rest % heads_rotated), n = (int) (rest / heads_rotated);
      float ang = (float) (n % T) * powf (theta, -2.0f * p / hd), s, c;
      sincosf (ang, &s, &c);
      s *= sign;
      bf16 *v = qkv + (size_t) n * stride + (size_t) h * hd + 2 * p;
      float x0 = __bfloat162float (v[0]), x1 = __bfloat162float (v[1]);
      v[0] = __float2bfloat16 (x0 * c - x1 * s);
      v[1] = __float2bfloat16 (x0 * s + x1 * c);
    }
}

/* qkv [B·T, (H + 2KV)·hd] ↔ q [B, H, T, hd], k and v [B, KV, T, hd]. Forward gathers, backward
 * (to_rows 1) scatters the three back into a [B·T, …] gradient. */
__global__ static void
permute_kernel (bf16 *qkv, bf16 *q, bf16 *k, bf16 *v, int B, int T, int H, int KV, int hd, int to_rows)
{
  int width = (H + 2 * KV) * hd;
  size_t total = (size_t) B * T * width;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total; i += (size_t) gridDim.x * blockDim.x)
    {
      int col = (int) (i % width);
      size_t n = i / width;
      int b = (int) (n / T), t = (int) (n % T), head = col / hd, d = col % hd;
      bf16 *dst;
      if (head < H)
        dst = q + (((size_t) b * H + head) * T + t) * hd + d;
      else if (head < H + KV)
        dst = k + (((size_t) b * KV + head - H) * T + t) * hd + d;
      else
        dst = v + (((size_t) b * KV + head - H - KV) * T + t) * hd + d;
      if (to_rows)
        qkv[i] = *dst;
      else
        *dst = qkv[i];
    }
}

/* o [B, H, T, hd] ↔ att [B·T, H·hd] */
__global__ static void
heads_kernel (bf16 *rows, bf16 *heads, int B, int T, int H, int hd, int to_rows)
{
  size_t total = (size_t) B * T * H * hd;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total; i += (size_t) gridDim.x * blockDim.x)
    {
      int col = (int) (i % ((size_t) H * hd));
      size_t n = i / ((size_t) H * hd);
      int b = (int) (n / T), t = (int) (n % T), h = col / hd, d = col % hd;
      size_t j = (((size_t) b * H + h) * T + t) * hd + d;
      if (to_rows)
        rows[i] = heads[j];
      else
        heads[j] = rows[i];
    }
}

/* One warp per score row; row r of the [rows, T] matrix is query t = r mod T: P = softmax(scale·S)
 * over keys j ≤ t, zero above the diagonal. */
__global__ static void
causal_softmax_kernel (const float *S, bf16 *P, size_t rows, int T, float scale)
{
  size_t row = blockIdx.x * (size_t) (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows)
    return;
  int t = (int) (row % T);
  const float *s = S + row * T;
  float mx = -INFINITY;
  for (int j = lane; j <= t; j += 32)
    mx = fmaxf (mx, s[j] * scale);
  mx = warp_max (mx);
  float sum = 0.0f;
  for (int j = lane; j <= t; j += 32)
    sum += expf (s[j] * scale - mx);
  float inv = 1.0f / warp_sum (sum);
  for (int j = lane; j < T; j += 32)
    P[row * T + j] = __float2bfloat16 (j <= t ? expf (s[j] * scale - mx) * inv : 0.0f);
}

/* dS = scale · P ∘ (dP − Σ_j P·dP), written over P (bf16); dP comes from the fp32 scratch. */
__global__ static void
causal_softmax_backward_kernel (bf16 *P, const float *dP, size_t rows, int T, float scale)
{
  size_t row = blockIdx.x * (size_t) (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows)
    return;
  int t = (int) (row % T);
  bf16 *p = P + row * T;
  const float *dp = dP + row * T;
  float dot = 0.0f;
  for (int j = lane; j <= t; j += 32)
    dot += __bfloat162float (p[j]) * dp[j];
  dot = warp_sum (dot);
  for (int j = lane; j < T; j += 32)
    p[j] = __float2bfloat16 (j <= t ? scale * __bfloat162float (p[j]) * (dp[j] - dot) : 0.0f);
}

/* Flash-style causal attention (--attention flash): exact softmax attention in one pass over key
 * tiles with an online softmax, reading q, k, v straight from the qkv rows [B·T, (H + 2KV)·hd] and
 * keeping only the log-sum-exp per query row for backward (Dao et al., FlashAttention, 2022). One
 * warp per query row, FA_KEYS keys per tile staged in shared memory, fp32 arithmetic on CUDA cores
 * (no tensor cores: simpler and slower than the GEMM path, O(T) memory instead of O(T²)).
 * Backward: D = rowsum(dO ∘ O); dQ by query rows; dK, dV by key rows summing over the query
 * heads of the kv group. Lane k of a warp owns dimensions k, k + 32, … of a row. */
#define FA_ROWS 8
#define FA_KEYS 32
#define FA_MAXD 8 /* head_dim ≤ 256 */

static int
flash_smem (int hd)
{
  return (2 * FA_KEYS + 2 * FA_ROWS) * (hd + 1) * (int) sizeof (float) + 2 * FA_KEYS * (int) sizeof (float);
}

/* grid (ceil(T / FA_ROWS), H, B), FA_ROWS warps */
__global__ static void
flash_forward_kernel (const bf16 *qkv, bf16 *att, float *lse, int T, int H, int KV, int hd, float scale)
{
  extern __shared__ float sm[];
  const int hp = hd + 1, W = (H + 2 * KV) * hd;
  float *Ks = sm, *Vs = Ks + FA_KEYS * hp, *Qs = Vs + FA_KEYS * hp;
  int b = blockIdx.z, h = blockIdx.y, kv = h / (H / KV);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int t0 = blockIdx.x * FA_ROWS, t = t0 + warp;
  for (int i = threadIdx.x; i < FA_ROWS * hd; i += blockDim.x)
    {
      int r = i / hd, d = i % hd;
      Qs[r * hp + d] = t0 + r < T ? __bfloat162float (qkv[(size_t) (b * T + t0 + r) * W + h * hd + d]) : 0.0f;
    }
  float o[FA_MAXD], mx = -INFINITY, l = 0.0f;
  for (int k = 0; k < FA_MAXD; k++)
    o[k] = 0.0f;
  int tmax = min (t0 + FA_ROWS - 1, T - 1);
  for (int j0 = 0; j0 <= tmax; j0 += FA_KEYS)
    {
      __syncthreads ();
      for (int i = threadIdx.x; i < FA_KEYS * hd; i += blockDim.x)
        {
          int r = i / hd, d = i % hd, j = j0 + r;
          size_t row = (size_t) (b * T + j) * W;
          Ks[r * hp + d] = j < T ? __bfloat162float (qkv[row + (size_t) (H + kv) * hd + d]) : 0.0f;
          Vs[r * hp + d] = j < T ? __bfloat162float (qkv[row + (size_t) (H + KV + kv) * hd + d]) : 0.0f;
        }
      __syncthreads ();
      if (t >= T)
        continue;
      int j = j0 + lane;
      float s = -INFINITY;
      if (j <= t)
        {
          float acc = 0.0f;
          for (int d = 0; d < hd; d++)
            acc += Qs[warp * hp + d] * Ks[lane * hp + d];
          s = acc * scale;
        }
      float mnew = fmaxf (mx, warp_max (s)); /* finite: key 0 is in the first tile */
      float p = j <= t ? expf (s - mnew) : 0.0f, corr = expf (mx - mnew);
      l = l * corr + warp_sum (p);
      for (int k = 0; k < FA_MAXD; k++)
        o[k] *= corr;
      for (int jj = 0; jj < FA_KEYS; jj++)
        {
          float pj = __shfl_sync (0xffffffffu, p, jj);
          for (int k = 0; k < FA_MAXD; k++)
            if (lane + 32 * k < hd)
              o[k] += pj * Vs[jj * hp + lane + 32 * k];
        }
      mx = mnew;
    }
  if (t < T)
    {
      for (int k = 0; k < FA_MAXD; k++)
        if (lane + 32 * k < hd)
          att[(size_t) (b * T + t) * H * hd + h * hd + lane + 32 * k] = __float2bfloat16 (o[k] / l);
      if (lane == 0)
        lse[((size_t) b * H + h) * T + t] = mx + logf (l);
    }
}

/* D[b, h, t] = Σ_d dO·O, one warp per row */
__global__ static void
flash_rowdot_kernel (const bf16 *dout, const bf16 *out, float *D, int B, int T, int H, int hd)
{
  size_t row = blockIdx.x * (size_t) (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= (size_t) B * H * T)
    return;
  int t = (int) (row % T), h = (int) ((row / T) % H), b = (int) (row / ((size_t) T * H));
  size_t base = (size_t) (b * T + t) * H * hd + h * hd;
  float acc = 0.0f;
  for (int d = lane; d < hd; d += 32)
    acc += __bfloat162float (dout[base + d]) * __bfloat162float (out[base + d]);
  acc = warp_sum (acc);
  if (lane == 0)
    D[row] = acc;
}

/* dQ rows into the q columns of dqkv; grid (ceil(T / FA_ROWS), H, B) */
__global__ static void
flash_dq_kernel (const bf16 *qkv, const bf16 *dout, const float *lse, const float *D, bf16 *dqkv, int T, int H, int KV,
                 int hd, float scale)
{
  extern __shared__ float sm[];
  const int hp = hd + 1, W = (H + 2 * KV) * hd;
  float *Ks = sm, *Vs = Ks + FA_KEYS * hp, *Qs = Vs + FA_KEYS * hp, *dOs = Qs + FA_ROWS * hp;
  int b = blockIdx.z, h = blockIdx.y, kv = h / (H / KV);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int t0 = blockIdx.x * FA_ROWS, t = t0 + warp;
  for (int i = threadIdx.x; i < FA_ROWS * hd; i += blockDim.x)
    {
      int r = i / hd, d = i % hd, tr = t0 + r;
      Qs[r * hp + d] = tr < T ? __bfloat162float (qkv[(size_t) (b * T + tr) * W + h * hd + d]) : 0.0f;
      dOs[r * hp + d] = tr < T ? __bfloat162float (dout[(size_t) (b * T + tr) * H * hd + h * hd + d]) : 0.0f;
    }
  float L = 0.0f, Dt = 0.0f, dq[FA_MAXD];
  for (int k = 0; k < FA_MAXD; k++)
    dq[k] = 0.0f;
  if (t < T)
    {
      L = lse[((size_t) b * H + h) * T + t];
      Dt = D[((size_t) b * H + h) * T + t];
    }
  int tmax = min (t0 + FA_ROWS - 1, T - 1);
  for (int j0 = 0; j0 <= tmax; j0 += FA_KEYS)
    {
      __syncthreads ();
      for (int i = threadIdx.x; i < FA_KEYS * hd; i += blockDim.x)
        {
          int r = i / hd, d = i % hd, j = j0 + r;
          size_t row = (size_t) (b * T + j) * W;
          Ks[r * hp + d] = j < T ? __bfloat162float (qkv[row + (size_t) (H + kv) * hd + d]) : 0.0f;
          Vs[r * hp + d] = j < T ? __bfloat162float (qkv[row + (size_t) (H + KV + kv) * hd + d]) : 0.0f;
        }
      __syncthreads ();
      if (t >= T)
        continue;
      int j = j0 + lane;
      float ds = 0.0f;
      if (j <= t)
        {
          float s = 0.0f, dp = 0.0f;
          for (int d = 0; d < hd; d++)
            {
              s += Qs[warp * hp + d] * Ks[lane * hp + d];
              dp += dOs[warp * hp + d] * Vs[lane * hp + d];
            }
          float p = expf (s * scale - L);
          ds = p * (dp - Dt) * scale;
        }
      for (int jj = 0; jj < FA_KEYS; jj++)
        {
          float dsj = __shfl_sync (0xffffffffu, ds, jj);
          for (int k = 0; k < FA_MAXD; k++)
            if (lane + 32 * k < hd)
              dq[k] += dsj * Ks[jj * hp + lane + 32 * k];
        }
    }
  if (t < T)
    for (int k = 0; k < FA_MAXD; k++)
      if (lane + 32 * k < hd)
        dqkv[(size_t) (b * T + t) * W + h * hd + lane + 32 * k] = __float2bfloat16 (dq[k]);
}

/* dK, dV rows into the k and v columns of dqkv; grid (ceil(T / FA_ROWS), KV, B); warp = key row j,
 * summing over query rows i ≥ j of every query head of the group. */
__global__ static void
flash_dkv_kernel (const bf16 *qkv, const bf16 *dout, const float *lse, const float *D, bf16 *dqkv, int T, int H,
                  int KV, int hd, float scale)
{
  extern __shared__ float sm[];
  const int hp = hd + 1, W = (H + 2 * KV) * hd, grp = H / KV;
  float *Qs = sm, *dOs = Qs + FA_KEYS * hp, *Kr = dOs + FA_KEYS * hp, *Vr = Kr + FA_ROWS * hp;
  float *Ls = Vr + FA_ROWS * hp, *Ds = Ls + FA_KEYS;
  int b = blockIdx.z, kv = blockIdx.y;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int j0 = blockIdx.x * FA_ROWS, j = j0 + warp;
  for (int i = threadIdx.x; i < FA_ROWS * hd; i += blockDim.x)
    {
      int r = i / hd, d = i % hd, jr = j0 + r;
      size_t row = (size_t) (b * T + jr) * W;
      Kr[r * hp + d] = jr < T ? __bfloat162float (qkv[row + (size_t) (H + kv) * hd + d]) : 0.0f;
      Vr[r * hp + d] = jr < T ? __bfloat162float (qkv[row + (size_t) (H + KV + kv) * hd + d]) : 0.0f;
    }
  float dk[FA_MAXD], dv[FA_MAXD];
  for (int k = 0; k < FA_MAXD; k++)
    dk[k] = dv[k] = 0.0f;
  for (int g = 0; g < grp; g++)
    {
      int h = kv * grp + g;
      for (int i0 = j0 / FA_KEYS * FA_KEYS; i0 < T; i0 += FA_KEYS)
        {
          __syncthreads ();
          for (int x = threadIdx.x; x < FA_KEYS * hd; x += blockDim.x)
            {
              int r = x / hd, d = x % hd, i = i0 + r;
              Qs[r * hp + d] = i < T ? __bfloat162float (qkv[(size_t) (b * T + i) * W + h * hd + d]) : 0.0f;
              dOs[r * hp + d] = i < T ? __bfloat162float (dout[(size_t) (b * T + i) * H * hd + h * hd + d]) : 0.0f;
            }
          for (int x = threadIdx.x; x < FA_KEYS; x += blockDim.x)
            {
              int i = i0 + x;
              Ls[x] = i < T ? lse[((size_t) b * H + h) * T + i] : 0.0f;
              Ds[x] = i < T ? D[((size_t) b * H + h) * T + i] : 0.0f;
            }
          __syncthreads ();
          if (j >= T)
            continue;
          int i = i0 + lane;
          float p = 0.0f, ds = 0.0f;
          if (i >= j && i < T)
            {
              float s = 0.0f, dp = 0.0f;
              for (int d = 0; d < hd; d++)
                {
                  s += Qs[lane * hp + d] * Kr[warp * hp + d];
                  dp += dOs[lane * hp + d] * Vr[warp * hp + d];
                }
              p = expf (s * scale - Ls[lane]);
              ds = p * (dp - Ds[lane]) * scale;
            }
          for (int ii = 0; ii < FA_KEYS; ii++)
            {
              float pi = __shfl_sync (0xffffffffu, p, ii), dsi = __shfl_sync (0xffffffffu, ds, ii);
              for (int k = 0; k < FA_MAXD; k++)
                if (lane + 32 * k < hd)
                  {
                    dv[k] += pi * dOs[ii * hp + lane + 32 * k];
                    dk[k] += dsi * Qs[ii * hp + lane + 32 * k];
                  }
            }
        }
    }
  if (j < T)
    for (int k = 0; k < FA_MAXD; k++)
      if (lane + 32 * k < hd)
        {
          size_t row = (size_t) (b * T + j) * W;
          dqkv[row + (size_t) (H + kv) * hd + lane + 32 * k] = __float2bfloat16 (dk[k]);
          dqkv[row + (size_t) (H + KV + kv) * hd + lane + 32 * k] = __float2bfloat16 (dv[k]);
        }
}

#define GELU_K 0.7978845608028654f

__global__ static void
act_forward_kernel (const bf16 *f, bf16 *h, int N, int F, int swiglu)
{
  size_t total = (size_t) N * F;
  int W = swiglu ? 2 * F : F;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total; i += (size_t) gridDim.x * blockDim.x)
    {
      size_t n = i / F, c = i % F;
      float x = __bfloat162float (f[n * W + c]), y;
      if (swiglu)
        y = x / (1.0f + expf (-x)) * __bfloat162float (f[n * W + F + c]);
      else
        y = 0.5f * x * (1.0f + tanhf (GELU_K * (x + 0.044715f * x * x * x)));
      h[i] = __float2bfloat16 (y);
    }
}

__global__ static void
act_backward_kernel (const bf16 *dh, const bf16 *f, bf16 *df, int N, int F, int swiglu)
{
  size_t total = (size_t) N * F;
  int W = swiglu ? 2 * F : F;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total; i += (size_t) gridDim.x * blockDim.x)
    {
      size_t n = i / F, c = i % F;
      float x = __bfloat162float (f[n * W + c]), g = __bfloat162float (dh[i]);
      if (swiglu)
        {
          float sg = 1.0f / (1.0f + expf (-x)), up = __bfloat162float (f[n * W + F + c]);
          df[n * W + c] = __float2bfloat16 (g * up * sg * (1.0f + x * (1.0f - sg)));
          df[n * W + F + c] = __float2bfloat16 (g * x * sg);
        }
      else
        {
          float th = tanhf (GELU_K * (x + 0.044715f * x * x * x));
          float du = GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
          df[i] = __float2bfloat16 (g * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du));
        }
    }
}

/* One block per row: loss = logsumexp(logits[:V]) − logits[target], summed into *loss_sum; the
 * logits are overwritten by grad_scale·(softmax − onehot), zero on padded columns. */
__global__ static void
cross_entropy_kernel (bf16 *logits, const int *targets, float *loss_sum, int V, int Vp, float grad_scale)
{
  __shared__ float red[32];
  bf16 *lg = logits + (size_t) blockIdx.x * Vp;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  float mx = -INFINITY;
  for (int v = threadIdx.x; v < V; v += blockDim.x)
    mx = fmaxf (mx, __bfloat162float (lg[v]));
  mx = warp_max (mx);
  if (lane == 0)
    red[warp] = mx;
  __syncthreads ();
  mx = -INFINITY;
  for (int i = 0; i < warps; i++)
    mx = fmaxf (mx, red[i]);
  __syncthreads ();
  float sum = 0.0f;
  for (int v = threadIdx.x; v < V; v += blockDim.x)
    sum += expf (__bfloat162float (lg[v]) - mx);
  sum = warp_sum (sum);
  if (lane == 0)
    red[warp] = sum;
  __syncthreads ();
  sum = 0.0f;
  for (int i = 0; i < warps; i++)
    sum += red[i];
  int target = targets[blockIdx.x];
  float lse = mx + logf (sum);
  if (threadIdx.x == 0)
    atomicAdd (loss_sum, lse - __bfloat162float (lg[target]));
  __syncthreads (); /* every thread has read lg[target] before it is overwritten */
  for (int v = threadIdx.x; v < Vp; v += blockDim.x)
    {
      float p = v < V ? expf (__bfloat162float (lg[v]) - lse) : 0.0f;
      lg[v] = __float2bfloat16 (grad_scale * (p - (v == target ? 1.0f : 0.0f)));
    }
}

__global__ static void
sumsq_kernel (const float *g, size_t n, float *out)
{
  float acc = 0.0f;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    acc += g[i] * g[i];
  acc = warp_sum (acc);
  __shared__ float red[32];
  if (threadIdx.x % 32 == 0)
    red[threadIdx.x / 32] = acc;
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      float s = 0.0f;
      for (int i = 0; i < (int) blockDim.x / 32; i++)
        s += red[i];
      atomicAdd (out, s);
    }
}

__global__ static void
adamw_kernel (float *p, bf16 *p16, const float *g, float *m, float *v, const unsigned char *decay, size_t n,
              const float *norm_sq, float clip, float lr, float b1, float b2, float eps, float wd, float c1, float c2)
{
  float scale = 1.0f;
  if (clip > 0.0f)
    {
      float norm = sqrtf (*norm_sq);
      scale = norm > clip ? clip / (norm + 1e-6f) : 1.0f;
    }
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      float gi = g[i] * scale;
      float mi = b1 * m[i] + (1.0f - b1) * gi, vi = b2 * v[i] + (1.0f - b2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      float pi = p[i];
      pi -= lr * ((mi / c1) / (sqrtf (vi / c2) + eps) + (decay[i] ? wd * pi : 0.0f));
      p[i] = pi;
      p16[i] = __float2bfloat16 (pi);
    }
}

/* ---------------------------------------------------------------- the model */

typedef struct {
  bf16 *a, *q, *k, *v, *P, *att, *x_mid, *m, *f, *h;
  bf16 *qkvs;          /* flash: q, k, v rows after RoPE */
  float *a_mean, *a_rstd, *m_mean, *m_rstd, *lse;
} Acts;

struct TrainerGpt {
  TrainerShape s;
  TrainerLayout L;
  int B, T, N, recompute, flash;
  cudaStream_t stream;
  GemmCtx gc;
  float *master, *grads;
  bf16 *p16;
  bf16 **res;          /* L + 1 residual streams [N, C] */
  Acts *acts;          /* L sets, or 1 with recompute */
  bf16 *xf, *logits, *qkv, *o, *dres, *d1, *d2, *dq, *dk, *dv;
  float *xf_mean, *xf_rstd, *S, *D;
  int *tokens;
  size_t act_bytes;
  int norm_smem;
};

static void *
dalloc (TrainerGpt *g, size_t bytes)
{
  void *p = NULL;
  cudaError_t e = cudaMalloc (&p, bytes ? bytes : 16);
  if (e != cudaSuccess)
    {
      fprintf (stderr, "trainsim-trainer: allocating %.2f GiB of activations (%.2f GiB so far) failed: %s; "
               "lower --micro-batch or use --recompute full\n", bytes / 1073741824.0, g->act_bytes / 1073741824.0,
               cudaGetErrorString (e));
      exit (1);
    }
  g->act_bytes += bytes;
  return p;
}


TrainerGpt *
trainer_gpt_new (const TrainerShape *s, int batch, int recompute, int flash, cudaStream_t stream, char *err,
                 size_t err_len)
{
  TrainerGpt *g = (TrainerGpt *) calloc (1, sizeof *g);
  g->s = *s;
  trainer_layout_init (&g->L, s);
  g->B = batch;
  g->T = s->seq_len;
  g->N = batch * s->seq_len;
  g->recompute = recompute;
  g->flash = flash;
  g->stream = stream;
  if (flash && (s->head_dim > 32 * FA_MAXD || flash_smem (s->head_dim) > 227 * 1024))
    {
      trainer_fail (err, err_len, "head_dim = %d is too large for the flash attention kernels (at most %d): use the GEMM "
            "attention", s->head_dim, 32 * FA_MAXD);
      free (g);
      return NULL;
    }
  if (s->hidden * 2 * (int) sizeof (float) > 200 * 1024)
    {
      trainer_fail (err, err_len, "hidden = %d is too wide for the norm backward kernel's shared memory", s->hidden);
      free (g);
      return NULL;
    }
  CHECK_LT (cublasLtCreate (&g->gc.lt));
  g->gc.workspace_bytes = 32u << 20;
  CHECK_CUDA (cudaMalloc (&g->gc.workspace, g->gc.workspace_bytes));
  size_t P = g->L.total, N = (size_t) g->N, C = (size_t) s->hidden, T = (size_t) g->T;
  size_t qkvw = (size_t) s->q_dim + 2 * (size_t) s->kv_dim;
  CHECK_CUDA (cudaMalloc (&g->master, P * sizeof (float)));
  CHECK_CUDA (cudaMalloc (&g->grads, P * sizeof (float)));
  CHECK_CUDA (cudaMalloc (&g->p16, P * sizeof (bf16)));
  g->res = (bf16 **) calloc ((size_t) s->layers + 1, sizeof (bf16 *));
  for (int l = 0; l <= s->layers; l++)
    g->res[l] = (bf16 *) dalloc (g, N * C * sizeof (bf16));
  int nacts = recompute ? 1 : s->layers;
  g->acts = (Acts *) calloc ((size_t) nacts, sizeof (Acts));
  for (int l = 0; l < nacts; l++)
    {
      Acts *a = &g->acts[l];
      a->a = (bf16 *) dalloc (g, N * C * sizeof (bf16));
      if (flash)
        {
          a->qkvs = (bf16 *) dalloc (g, N * qkvw * sizeof (bf16));
          a->lse = (float *) dalloc (g, N * s->heads * sizeof (float));
        }
      else
        {
          a->q = (bf16 *) dalloc (g, N * s->q_dim * sizeof (bf16));
          a->k = (bf16 *) dalloc (g, N * s->kv_dim * sizeof (bf16));
          a->v = (bf16 *) dalloc (g, N * s->kv_dim * sizeof (bf16));
          a->P = (bf16 *) dalloc (g, (size_t) batch * s->heads * T * T * sizeof (bf16));
        }
      a->att = (bf16 *) dalloc (g, N * s->q_dim * sizeof (bf16));
      a->x_mid = (bf16 *) dalloc (g, N * C * sizeof (bf16));
      a->m = (bf16 *) dalloc (g, N * C * sizeof (bf16));
      a->f = (bf16 *) dalloc (g, N * g->L.fc_out * sizeof (bf16));
      a->h = (bf16 *) dalloc (g, N * s->ffn_hidden * sizeof (bf16));
      a->a_mean = (float *) dalloc (g, N * sizeof (float));
      a->a_rstd = (float *) dalloc (g, N * sizeof (float));
      a->m_mean = (float *) dalloc (g, N * sizeof (float));
      a->m_rstd = (float *) dalloc (g, N * sizeof (float));
    }
  size_t widest = C;
  if (qkvw > widest) widest = qkvw;
  if ((size_t) g->L.fc_out > widest) widest = (size_t) g->L.fc_out;
  g->xf = (bf16 *) dalloc (g, N * C * sizeof (bf16));
  g->xf_mean = (float *) dalloc (g, N * sizeof (float));
  g->xf_rstd = (float *) dalloc (g, N * sizeof (float));
  g->logits = (bf16 *) dalloc (g, N * s->vocab_padded * sizeof (bf16));
  if (!flash)
    {
      g->qkv = (bf16 *) dalloc (g, N * qkvw * sizeof (bf16));
      g->o = (bf16 *) dalloc (g, N * s->q_dim * sizeof (bf16));
      g->dq = (bf16 *) dalloc (g, N * s->q_dim * sizeof (bf16));
      g->dk = (bf16 *) dalloc (g, N * s->kv_dim * sizeof (bf16));
      g->dv = (bf16 *) dalloc (g, N * s->kv_dim * sizeof (bf16));
      g->S = (float *) dalloc (g, (size_t) batch * s->heads * T * T * sizeof (float));
    }
  else
    {
      g->D = (float *) dalloc (g, N * s->heads * sizeof (float));
      int smem = flash_smem (s->head_dim);
      CHECK_CUDA (cudaFuncSetAttribute (flash_forward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      CHECK_CUDA (cudaFuncSetAttribute (flash_dq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      CHECK_CUDA (cudaFuncSetAttribute (flash_dkv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    }
  g->dres = (bf16 *) dalloc (g, N * C * sizeof (bf16));
  g->d1 = (bf16 *) dalloc (g, N * widest * sizeof (bf16));
  g->d2 = (bf16 *) dalloc (g, N * widest * sizeof (bf16));
  g->tokens = (int *) dalloc (g, N * sizeof (int));
  g->norm_smem = (int) (2 * C * sizeof (float));
  CHECK_CUDA (cudaFuncSetAttribute (norm_backward_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, g->norm_smem));
  return g;
}

void
trainer_gpt_free (TrainerGpt *g)
{
  if (!g)
    return;
  /* Process teardown releases device memory; the trainer builds one model per run. */
  cudaFree (g->gc.workspace);
  for (int i = 0; i < g->gc.n; i++)
    {
      Gemm *e = &g->gc.cache[i];
      cublasLtMatmulDescDestroy (e->desc);
      cublasLtMatrixLayoutDestroy (e->la);
      cublasLtMatrixLayoutDestroy (e->lb);
      cublasLtMatrixLayoutDestroy (e->lc);
    }
  cublasLtDestroy (g->gc.lt);
  free (g->res);
  free (g->acts);
  free (g);
}

const TrainerLayout *trainer_gpt_layout (const TrainerGpt *g) { return &g->L; }
float *trainer_gpt_master (TrainerGpt *g) { return g->master; }
float *trainer_gpt_grads (TrainerGpt *g) { return g->grads; }
void *trainer_gpt_params_bf16 (TrainerGpt *g) { return g->p16; }
size_t trainer_gpt_activation_bytes (const TrainerGpt *g) { return g->act_bytes; }

void
trainer_gpt_sync_bf16 (TrainerGpt *g)
{
  f32_to_bf16_kernel<<<blocks_for (g->L.total, 256), 256, 0, g->stream>>> (g->master, g->p16, g->L.total);
}

static const bf16 *
W (const TrainerGpt *g, TrainerTensor t, int l)
{
  return g->L.size[t] || t == TRAINER_HEAD ? g->p16 + trainer_layout_offset (&g->L, t, l) : NULL;
}

static float *
GR (const TrainerGpt *g, TrainerTensor t, int l)
{
  return g->L.size[t] || t == TRAINER_HEAD ? g->grads + trainer_layout_offset (&g->L, t, l) : NULL;
}

static void
norm_forward (TrainerGpt *g, const bf16 *x, const bf16 *w, const bf16 *b, bf16 *y, float *mean, float *rstd)
{
  norm_forward_kernel<<<(g->N + 7) / 8, 256, 0, g->stream>>> (x, w, b, y, mean, rstd, g->N, g->s.hidden, g->s.rmsnorm);
}

static void
norm_backward (TrainerGpt *g, const bf16 *dy, const bf16 *x, const bf16 *w, const float *mean, const float *rstd,
               bf16 *dx, float *dw, float *db)
{
  int blocks = (g->N + 7) / 8 < 1024 ? (g->N + 7) / 8 : 1024;
  norm_backward_kernel<<<blocks, 256, g->norm_smem, g->stream>>> (dy, x, w, mean, rstd, dx, dw, db, g->N, g->s.hidden,
                                                                 g->s.rmsnorm);
}

static void
bias_grad (TrainerGpt *g, const bf16 *dy, float *db, int O)
{
  if (!db)
    return;
  dim3 grid ((unsigned) ((O + 31) / 32), 32), block (32, 8);
  bias_grad_kernel<<<grid, block, 0, g->stream>>> (dy, db, g->N, O);
}

/* y = x·W^T (+ b) (+ residual): x [N, in], W [out, in] */
static void
linear (TrainerGpt *g, const bf16 *x, const bf16 *w, const bf16 *b, bf16 *y, const bf16 *residual, int in, int out)
{
  gemm (&g->gc, g->stream, 0, 1, g->N, out, in, x, w, y, residual, 0, residual ? 1.0f : 0.0f, b, 1, 0, 0, 0);
}

/* dx = dy·W; dW += dy^T·x; db += Σ dy */
static void
linear_backward (TrainerGpt *g, const bf16 *dy, const bf16 *x, const bf16 *w, bf16 *dx, float *dw, float *db, int in,
                 int out)
{
  gemm (&g->gc, g->stream, 0, 0, g->N, in, out, dy, w, dx, NULL, 0, 0.0f, NULL, 1, 0, 0, 0);
  gemm (&g->gc, g->stream, 1, 0, out, in, g->N, dy, x, dw, NULL, 1, 1.0f, NULL, 1, 0, 0, 0);
  bias_grad (g, dy, db, out);
}

static Acts *
acts_for (TrainerGpt *g, int l)
{
  return &g->acts[g->recompute ? 0 : l];
}

/* Attention by cuBLASLt: per (sequence, kv head), S [grp·T, T] = Q_grp · K^T, P = causal softmax,
 * O_grp = P · V, with q, k, v permuted out of the qkv rows. */
static void
attention_gemm_forward (TrainerGpt *g, Acts *a, const bf16 *qkv)
{
  const TrainerShape *s = &g->s;
  int H = s->heads, KV = s->kv_heads, hd = s->head_dim, T = g->T, grp = H / KV;
  int qkvw = s->q_dim + 2 * s->kv_dim;
  permute_kernel<<<blocks_for ((size_t) g->N * qkvw, 256), 256, 0, g->stream>>> ((bf16 *) qkv, a->q, a->k, a->v, g->B,
                                                                                 T, H, KV, hd, 0);
  int batch = g->B * KV;
  long long sq = (long long) grp * T * hd, skv = (long long) T * hd, ss = (long long) grp * T * T;
  gemm (&g->gc, g->stream, 0, 1, grp * T, T, hd, a->q, a->k, g->S, NULL, 1, 0.0f, NULL, batch, sq, skv, ss);
  size_t rows = (size_t) g->B * H * T;
  causal_softmax_kernel<<<(unsigned) ((rows + 7) / 8), 256, 0, g->stream>>> (g->S, a->P, rows, T, 1.0f / sqrtf ((float) hd));
  gemm (&g->gc, g->stream, 0, 0, grp * T, hd, T, a->P, a->v, g->o, NULL, 0, 0.0f, NULL, batch, ss, skv, sq);
  heads_kernel<<<blocks_for ((size_t) g->N * s->q_dim, 256), 256, 0, g->stream>>> (a->att, g->o, g->B, T, H, hd, 1);
}

/* Its backward: g->d1 holds dO rows [N, H·hd]; writes the dqkv rows into g->d2.
 * dV = P^T·dO; dP = dO·V^T; dS = softmax'(dP) (over P); dQ = dS·K; dK = dS^T·Q (scale folded into dS). */
static void
attention_gemm_backward (TrainerGpt *g, Acts *a)
{
  const TrainerShape *s = &g->s;
  int H = s->heads, KV = s->kv_heads, hd = s->head_dim, T = g->T, grp = H / KV;
  int qkvw = s->q_dim + 2 * s->kv_dim;
  heads_kernel<<<blocks_for ((size_t) g->N * s->q_dim, 256), 256, 0, g->stream>>> (g->d1, g->o, g->B, T, H, hd, 0);
  int batch = g->B * KV;
  long long sq = (long long) grp * T * hd, skv = (long long) T * hd, ss = (long long) grp * T * T;
  gemm (&g->gc, g->stream, 1, 0, T, hd, grp * T, a->P, g->o, g->dv, NULL, 0, 0.0f, NULL, batch, ss, sq, skv);
  gemm (&g->gc, g->stream, 0, 1, grp * T, T, hd, g->o, a->v, g->S, NULL, 1, 0.0f, NULL, batch, sq, skv, ss);
  size_t rows = (size_t) g->B * H * T;
  causal_softmax_backward_kernel<<<(unsigned) ((rows + 7) / 8), 256, 0, g->stream>>> (a->P, g->S, rows, T,
                                                                                     1.0f / sqrtf ((float) hd));
  gemm (&g->gc, g->stream, 0, 0, grp * T, hd, T, a->P, a->k, g->dq, NULL, 0, 0.0f, NULL, batch, ss, skv, sq);
  gemm (&g->gc, g->stream, 1, 0, T, hd, grp * T, a->P, a->q, g->dk, NULL, 0, 0.0f, NULL, batch, ss, sq, skv);
  permute_kernel<<<blocks_for ((size_t) g->N * qkvw, 256), 256, 0, g->stream>>> (g->d2, g->dq, g->dk, g->dv, g->B, T, H,
                                                                                 KV, hd, 1);
}

static void
attention_flash_forward (TrainerGpt *g, Acts *a)
{
  const TrainerShape *s = &g->s;
  int H = s->heads, hd = s->head_dim, T = g->T;
  dim3 grid ((unsigned) ((T + FA_ROWS - 1) / FA_ROWS), (unsigned) H, (unsigned) g->B);
  flash_forward_kernel<<<grid, 32 * FA_ROWS, flash_smem (hd), g->stream>>> (a->qkvs, a->att, a->lse, T, H, s->kv_heads,
                                                                           hd, 1.0f / sqrtf ((float) hd));
}

static void
attention_flash_backward (TrainerGpt *g, Acts *a)
{
  const TrainerShape *s = &g->s;
  int H = s->heads, KV = s->kv_heads, hd = s->head_dim, T = g->T;
  float scale = 1.0f / sqrtf ((float) hd);
  size_t rows = (size_t) g->B * H * T;
  flash_rowdot_kernel<<<(unsigned) ((rows + 7) / 8), 256, 0, g->stream>>> (g->d1, a->att, g->D, g->B, T, H, hd);
  dim3 gq ((unsigned) ((T + FA_ROWS - 1) / FA_ROWS), (unsigned) H, (unsigned) g->B);
  flash_dq_kernel<<<gq, 32 * FA_ROWS, flash_smem (hd), g->stream>>> (a->qkvs, g->d1, a->lse, g->D, g->d2, T, H, KV, hd,
                                                                     scale);
  dim3 gk ((unsigned) ((T + FA_ROWS - 1) / FA_ROWS), (unsigned) KV, (unsigned) g->B);
  flash_dkv_kernel<<<gk, 32 * FA_ROWS, flash_smem (hd), g->stream>>> (a->qkvs, g->d1, a->lse, g->D, g->d2, T, H, KV, hd,
                                                                      scale);
}

/* Layer L forward from res[l]; writes res[l + 1] unless RECOMPUTING (then the MLP output GEMM, which
 * backward does not need, is skipped). */
static void
layer_forward (TrainerGpt *g, int l, int recomputing)
{
  const TrainerShape *s = &g->s;
  Acts *a = acts_for (g, l);
  int C = s->hidden, H = s->heads, KV = s->kv_heads, hd = s->head_dim, T = g->T;
  int qkvw = s->q_dim + 2 * s->kv_dim;
  bf16 *qkv = g->flash ? a->qkvs : g->qkv;
  norm_forward (g, g->res[l], W (g, TRAINER_LN1_W, l), W (g, TRAINER_LN1_B, l), a->a, a->a_mean, a->a_rstd);
  linear (g, a->a, W (g, TRAINER_QKV_W, l), W (g, TRAINER_QKV_B, l), qkv, NULL, C, qkvw);
  if (s->rope)
    rope_kernel<<<blocks_for ((size_t) g->N * (H + KV) * hd / 2, 256), 256, 0, g->stream>>> (
      qkv, g->N, T, H + KV, hd, qkvw, (float) s->rope_theta, 1.0f);
  if (g->flash)
    attention_flash_forward (g, a);
  else
    attention_gemm_forward (g, a, qkv);
  linear (g, a->att, W (g, TRAINER_O_W, l), W (g, TRAINER_O_B, l), a->x_mid, g->res[l], s->q_dim, C);
  norm_forward (g, a->x_mid, W (g, TRAINER_LN2_W, l), W (g, TRAINER_LN2_B, l), a->m, a->m_mean, a->m_rstd);
  linear (g, a->m, W (g, TRAINER_FC_W, l), W (g, TRAINER_FC_B, l), a->f, NULL, C, g->L.fc_out);
  act_forward_kernel<<<blocks_for ((size_t) g->N * s->ffn_hidden, 256), 256, 0, g->stream>>> (a->f, a->h, g->N,
                                                                                             s->ffn_hidden, s->swiglu);
  if (!recomputing)
    linear (g, a->h, W (g, TRAINER_PROJ_W, l), W (g, TRAINER_PROJ_B, l), g->res[l + 1], a->x_mid, s->ffn_hidden, C);
}

/* g->dres holds d/d(res[l+1]) on entry and d/d(res[l]) on exit. */
static void
layer_backward (TrainerGpt *g, int l)
{
  const TrainerShape *s = &g->s;
  Acts *a = acts_for (g, l);
  int C = s->hidden, H = s->heads, KV = s->kv_heads, hd = s->head_dim, T = g->T, F = s->ffn_hidden;
  int qkvw = s->q_dim + 2 * s->kv_dim;
  /* MLP: dh = dres·Wproj; df = act'(f)·dh; dm = df·Wfc; dres += norm2'(dm) */
  linear_backward (g, g->dres, a->h, W (g, TRAINER_PROJ_W, l), g->d1, GR (g, TRAINER_PROJ_W, l),
                   GR (g, TRAINER_PROJ_B, l), F, C);
  act_backward_kernel<<<blocks_for ((size_t) g->N * F, 256), 256, 0, g->stream>>> (g->d1, a->f, g->d2, g->N, F, s->swiglu);
  linear_backward (g, g->d2, a->m, W (g, TRAINER_FC_W, l), g->d1, GR (g, TRAINER_FC_W, l), GR (g, TRAINER_FC_B, l), C,
                   g->L.fc_out);
  norm_backward (g, g->d1, a->x_mid, W (g, TRAINER_LN2_W, l), a->m_mean, a->m_rstd, g->dres, GR (g, TRAINER_LN2_W, l),
                 GR (g, TRAINER_LN2_B, l));
  /* attention: output projection, then attention itself (dqkv into d2), RoPE, QKV projection, norm1 */
  linear_backward (g, g->dres, a->att, W (g, TRAINER_O_W, l), g->d1, GR (g, TRAINER_O_W, l), GR (g, TRAINER_O_B, l),
                   s->q_dim, C);
  if (g->flash)
    attention_flash_backward (g, a);
  else
    attention_gemm_backward (g, a);
  if (s->rope)
    rope_kernel<<<blocks_for ((size_t) g->N * (H + KV) * hd / 2, 256), 256, 0, g->stream>>> (
      g->d2, g->N, T, H + KV, hd, qkvw, (float) s->rope_theta, -1.0f);
  linear_backward (g, g->d2, a->a, W (g, TRAINER_QKV_W, l), g->d1, GR (g, TRAINER_QKV_W, l), GR (g, TRAINER_QKV_B, l),
                   C, qkvw);
  norm_backward (g, g->d1, g->res[l], W (g, TRAINER_LN1_W, l), a->a_mean, a->a_rstd, g->dres,
                 GR (g, TRAINER_LN1_W, l), GR (g, TRAINER_LN1_B, l));
}
void
trainer_gpt_forward (TrainerGpt *g, const int *tokens, const int *targets, float *loss_sum, float grad_scale)
{
  const TrainerShape *s = &g->s;
  CHECK_CUDA (cudaMemcpyAsync (g->tokens, tokens, (size_t) g->N * sizeof (int), cudaMemcpyDeviceToDevice, g->stream));
  embed_kernel<<<blocks_for ((size_t) g->N * s->hidden, 256), 256, 0, g->stream>>> (
    tokens, W (g, TRAINER_WTE, 0), W (g, TRAINER_WPE, 0), g->res[0], g->N, g->T, s->hidden);
  for (int l = 0; l < s->layers; l++)
    layer_forward (g, l, 0);
  norm_forward (g, g->res[s->layers], W (g, TRAINER_LNF_W, 0), W (g, TRAINER_LNF_B, 0), g->xf, g->xf_mean, g->xf_rstd);
  linear (g, g->xf, W (g, TRAINER_HEAD, 0), NULL, g->logits, NULL, s->hidden, s->vocab_padded);
  cross_entropy_kernel<<<g->N, 256, 0, g->stream>>> (g->logits, targets, loss_sum, s->vocab, s->vocab_padded, grad_scale);
}

void
trainer_gpt_logits (TrainerGpt *g, float *host)
{
  /* the cross-entropy kernel overwrote the logits with their gradient: recompute them */
  const TrainerShape *s = &g->s;
  size_t n = (size_t) g->N * s->vocab_padded;
  linear (g, g->xf, W (g, TRAINER_HEAD, 0), NULL, g->logits, NULL, s->hidden, s->vocab_padded);
  bf16 *tmp = (bf16 *) malloc (n * sizeof (bf16));
  CHECK_CUDA (cudaMemcpyAsync (tmp, g->logits, n * sizeof (bf16), cudaMemcpyDeviceToHost, g->stream));
  CHECK_CUDA (cudaStreamSynchronize (g->stream));
  for (size_t i = 0; i < n; i++)
    host[i] = __bfloat162float (tmp[i]);
  free (tmp);
}

void
trainer_gpt_backward (TrainerGpt *g, TrainerGradsReady ready, void *user)
{
  const TrainerShape *s = &g->s;
  const TrainerLayout *L = &g->L;
  int C = s->hidden;
  /* LM head and final norm: dxf = dlogits·head; dhead += dlogits^T·xf; dres = lnf'(dxf) */
  linear_backward (g, g->logits, g->xf, W (g, TRAINER_HEAD, 0), g->d1, GR (g, TRAINER_HEAD, 0), NULL, C,
                   s->vocab_padded);
  CHECK_CUDA (cudaMemsetAsync (g->dres, 0, (size_t) g->N * C * sizeof (bf16), g->stream));
  norm_backward (g, g->d1, g->res[s->layers], W (g, TRAINER_LNF_W, 0), g->xf_mean, g->xf_rstd, g->dres,
                 GR (g, TRAINER_LNF_W, 0), GR (g, TRAINER_LNF_B, 0));
  if (ready)
    ready (user, L->off[TRAINER_LNF_W], g->stream);
  for (int l = s->layers - 1; l >= 0; l--)
    {
      if (g->recompute)
        layer_forward (g, l, 1);
      layer_backward (g, l);
      if (ready)
        ready (user, trainer_layout_offset (L, TRAINER_FIRST_LAYER_TENSOR, l), g->stream);
    }
  embed_backward_kernel<<<blocks_for ((size_t) g->N * C, 256), 256, 0, g->stream>>> (
    g->tokens, g->dres, GR (g, TRAINER_WTE, 0), GR (g, TRAINER_WPE, 0), g->N, g->T, C);
  if (ready)
    ready (user, 0, g->stream);
}

void
trainer_grad_sumsq (const float *grads, size_t n, float *sum, cudaStream_t stream)
{
  if (n)
    sumsq_kernel<<<blocks_for (n, 256) < 1024 ? blocks_for (n, 256) : 1024, 256, 0, stream>>> (grads, n, sum);
}

void
trainer_adamw (float *master, void *p16, const float *grads, float *m, float *v, const unsigned char *decay, size_t n,
               const float *norm_sq, float clip, float lr, float beta1, float beta2, float eps, float weight_decay,
               int step, cudaStream_t stream)
{
  if (!n)
    return;
  float c1 = 1.0f - powf (beta1, (float) step), c2 = 1.0f - powf (beta2, (float) step);
  adamw_kernel<<<blocks_for (n, 256), 256, 0, stream>>> (master, (bf16 *) p16, grads, m, v, decay, n, norm_sq, clip, lr,
                                                         beta1, beta2, eps, weight_decay, c1, c2);
}
