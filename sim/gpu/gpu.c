/* One GPU: kernel durations from the hardware profile and streams that run ops in order.
 *
 * Kernel time (DESIGN.md §4, compute): t = max(F / (P[dtype] · e), B / (W · e_mem)) + t_launch,
 * with F the FLOPs, B the HBM bytes, P the dense tensor-core peak, W the HBM bandwidth, e_mem the
 * microbenchmark's mem_eff, times mem_insitu for memory-bound kernels only (the in-situ factor the
 * calibration fits on them; a GEMM's operand and accumulator traffic streams inside a compute
 * kernel, whose in-situ factor is gemm_insitu). A streaming kernel (one long pass over a buffer set:
 * the fused multi-tensor Adam, grad-norm, grad zeroing; and eager PyTorch's element-wise kernels,
 * MODEL_OP_ELEMENTWISE, at 0.94-1.06 of a copy on an H200, calib/results/h200-sxm-2026-11-27/
 * torch-kernels-elementwise.tsv) runs at W · e_mem itself: measured on an
 * H100 SXM5 80GB, trainsim-bench-memory's fused Adam moves 2.66-2.72 TB/s at 256 MiB-2 GiB per
 * buffer against 2.84 for a copy (0.95), while its row-wise RMSNorm/LayerNorm reach 1.47-1.53
 * (0.53); on an H200 3.42 against 3.99 (0.86) (calib/results/h100-sxm-2026-11-26/memory.tsv and
 * h200-sxm-2026-11-26/memory.tsv). e is
 *   GEMM       e_max[d] · G / (G + G_half[d]) · wave(M, N, K), d the GEMM's input dtype: a saturating
 *              curve in the GEMM's size G (GFLOP)
 *              for the fixed costs small GEMMs cannot amortise (prologue/epilogue, tail), times the
 *              SMs a GEMM of fewer 128×128 output tiles than SMs can keep busy, with K split s ways
 *              where that fills them better (cuBLAS's split-K: each of tiles·s work units a K range
 *              of at least SIM_GPU_SPLITK_MIN_K; s ≤ 4·SMs), the best s taken. Measured: on 509
 *              H100 GEMMs (calib/results/h100-sxm-2026-11-26/gemm*.tsv, `trainsim fit`) splitting
 *              fits with chi2/dof 127 and 168 (BF16, FP8) against 423 and 526 without (512×512×16384
 *              BF16 runs at 0.31 of peak where 16 tiles unsplit would cap it at 0.12). Later waves
 *              are quantized only where the profile says the GEMM library leaves them
 *              (gemm_wave_quantization; sim_gpu_wave_efficiency in gpu.h);
 *              e_max is measured per dtype (FP8 and BF16 GEMMs of the same GPU reach different
 *              fractions of their peaks, e.g. H100 0.71 vs 0.80 in the profiles' sources); G_half is
 *              the dtype's own curve when measured, else the profile's one measured curve;
 *   attention  attn_eff (fused flash attention, fraction of peak); its backward attn_bwd_eff (the run's
 *              attention_kernel fa2: FlashAttention-2's attn_fa2_* instead; triton: those divided by
 *              ATTN_TRITON_*_SLOWDOWN, below); each
 *              times G/(G + G_half) in the kernel's own FLOPs where the profile gives G_half (a
 *              small kernel, one sequence of few heads, fills the SMs poorly: cuDNN's causal BF16
 *              attention on an H100 reaches 0.27 of peak for 24 heads × 2048 × 128 and 0.61 for
 *              32 × 8192 × 128, calib/results/h100-sxm-2026-11-26/torch-kernels.tsv); both
 *              times attn_insitu where a layer sets it, else the 16-bit GEMM in-situ scale
 *              gemm_insitu[bf16] (fp16 for FP16 attention; FP8 attention takes the BF16 one): the
 *              same tensor cores under the same sustained clocks and shared L2/HBM, which
 *              microbenchmarks of a few iterations do not see (the low-precision GEMM scales also
 *              carry their recipes' own costs, so they are not used). FP8 attention runs at the FP8
 *              peak with that fraction times the profile's attn_fp8_ratio (forward) and
 *              attn_fp8_bwd_ratio (backward), measured FP8-over-BF16 fractions of peak (Blackwell,
 *              H100/H200: cuDNN's own training benchmark), else r8 = (1200/1979)/(740/989) = 0.81:
 *              FlashAttention-3 on H100 reaches 740 TFLOP/s in FP16 and close to 1.2 PFLOP/s in FP8
 *              (Shah et al., arXiv 2407.08608, abstract), the softmax not speeding up with the
 *              matmuls. The paper measures the forward only; ASSUMPTION: the backward keeps it;
 *   memory     no FLOP term.
 * Every constant (P, W, e_max, G_half, attn_eff, mem_eff, launch_ns, overlap_slowdown) comes from the
 * [hardware] profile, where each carries its source. The 128×128 tile is the common CTA tile of
 * cuBLAS/CUTLASS tensor-core GEMMs on Ampere/Hopper (CUTLASS profiler defaults).
 *
 * Streams: as CUDA streams, each runs its ops one at a time in issue order; an op also waits for
 * its dependencies (the caller's ready()). Compute starting while a communication op runs on the
 * same GPU is flagged `overlapped` so the caller can apply the profile's slowdown. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/gpu/gpu.h"

/* FP8 over FP16 fraction of peak of a fused attention kernel (the header comment). */
#define ATTN_FP8_RATIO ((1200.0 / 1979.0) / (740.0 / 989.0))
/* FlashAttention in Triton (flash_attn_triton.py, 2022) against FlashAttention-2 on the same GPU: "around
 * 1.3-1.5x faster than FlashAttention in Triton in the forward pass and around 2x faster in the backward
 * pass" (Dao, FlashAttention-2, arXiv 2307.08691, §4.1, A100 80GB, head dims 64 and 128, causal and not,
 * 512-16k tokens). The forward takes the middle of its range. ASSUMPTION: the ratios carry to Hopper,
 * where both run Ampere's mma.sync instructions (neither uses wgmma). */
#define ATTN_TRITON_FWD_SLOWDOWN 1.4
#define ATTN_TRITON_BWD_SLOWDOWN 2.0

double
sim_gpu_wave_efficiency_on (const SimGpuSpec *spec, gint64 m, gint64 n, int sms)
{
  if (spec->sm_count <= 0 || m <= 0 || n <= 0)
    return 1.0;
  gint64 p = sms > 0 && sms < spec->sm_count ? sms : spec->sm_count;
  const gint64 tile = 128;
  gint64 tiles = ((m + tile - 1) / tile) * ((n + tile - 1) / tile);
  if (tiles < p)
    return (double) tiles / (double) p;
  if (!spec->wave_quantization)
    return 1.0;
  gint64 waves = (tiles + p - 1) / p;
  return (double) tiles / ((double) waves * p);
}

double
sim_gpu_achieved_hbm (const SimGpuSpec *spec)
{
  return spec->hbm_bw_bytes_per_s * spec->mem_eff * (spec->mem_insitu > 0 ? spec->mem_insitu : 1.0);
}

double
sim_gpu_wave_efficiency (const SimGpuSpec *spec, gint64 m, gint64 n)
{
  return sim_gpu_wave_efficiency_on (spec, m, n, 0);
}

double
sim_gpu_wave_efficiency_k (const SimGpuSpec *spec, gint64 m, gint64 n, gint64 k, int sms)
{
  double best = sim_gpu_wave_efficiency_on (spec, m, n, sms);
  if (spec->sm_count <= 0 || m <= 0 || n <= 0)
    return best;
  gint64 p = sms > 0 && sms < spec->sm_count ? sms : spec->sm_count;
  gint64 tiles = ((m + 127) / 128) * ((n + 127) / 128);
  if (tiles >= p)
    return best;
  gint64 smax = MIN (MAX (k / SIM_GPU_SPLITK_MIN_K, 1), 4 * p);
  for (gint64 s = 2; s <= smax; s++)
    {
      gint64 units = tiles * s, waves = (units + p - 1) / p;
      best = MAX (best, (double) units / ((double) waves * p));
    }
  return best;
}

static double
gemm_efficiency_on (const SimGpuSpec *spec, ModelDtype dtype, gint64 m, gint64 n, gint64 k, int sms)
{
  double g = 2.0 * (double) m * (double) n * (double) k / 1e9;
  double half = spec->gemm_eff_half_gflop[dtype] > 0 ? spec->gemm_eff_half_gflop[dtype]
                                                      : spec->gemm_eff_half_gflop_any;
  double size = half > 0 ? g / (g + half) : 1.0;
  double insitu = spec->gemm_insitu[dtype] > 0 ? spec->gemm_insitu[dtype] : 1.0;
  return spec->gemm_eff_max[dtype] * insitu * size * sim_gpu_wave_efficiency_k (spec, m, n, k, sms);
}

double
sim_gpu_gemm_efficiency (const SimGpuSpec *spec, ModelDtype dtype, gint64 m, gint64 n, gint64 k)
{
  g_return_val_if_fail (spec != NULL && dtype >= 0 && dtype < MODEL_DTYPE_COUNT, 0.0);
  return gemm_efficiency_on (spec, dtype, m, n, k, 0);
}

/* sim_gpu_kernel_ns; with sens != NULL, adds the kernel's sensitivities (sim_gpu_op_ns_sens). */
static gint64
kernel_ns (const SimGpuSpec *spec, const SimGpuKernel *kernel, double *sens)
{
  double t = 0;
  int dt = -1; /* the GEMM dtype whose in-situ scale sets t, if the F-term binds */
  if (kernel->kind != SIM_KERNEL_MEMORY && kernel->kind != SIM_KERNEL_STREAM && kernel->flops > 0)
    {
      ModelDtype d = kernel->dtype;
      if (spec->peak_flops[d] <= 0)
        d = MODEL_DTYPE_BF16;
      double peak = spec->peak_flops[d];
      double eff;
      if (kernel->kind == SIM_KERNEL_GEMM)
        {
          /* Peak scales with the SMs the GEMM is given; waves are counted over them. */
          if (kernel->sms > 0 && kernel->sms < spec->sm_count)
            peak *= (double) kernel->sms / spec->sm_count;
          eff = gemm_efficiency_on (spec, d, kernel->m, kernel->n, kernel->k, kernel->sms);
        }
      else
        {
          gboolean bwd = kernel->kind == SIM_KERNEL_ATTENTION_BWD;
          double half;
          if (kernel->attn == MODEL_ATTN_DEFAULT)
            {
              eff = bwd && spec->attn_bwd_eff > 0 ? spec->attn_bwd_eff : spec->attn_eff;
              half = bwd ? spec->attn_bwd_half_gflop : spec->attn_half_gflop;
            }
          else
            {
              eff = bwd && spec->attn_fa2_bwd_eff > 0 ? spec->attn_fa2_bwd_eff : spec->attn_fa2_eff;
              half = bwd ? spec->attn_fa2_bwd_half_gflop : spec->attn_fa2_half_gflop;
              if (kernel->attn == MODEL_ATTN_TRITON)
                eff /= bwd ? ATTN_TRITON_BWD_SLOWDOWN : ATTN_TRITON_FWD_SLOWDOWN;
            }
          if (half > 0)
            {
              double g = kernel->flops / 1e9;
              eff *= g / (g + half);
            }
          /* In situ, attention runs on the same tensor cores under the same sustained clocks and
           * shared L2/HBM as the 16-bit GEMMs: absent its own scale it takes theirs (FP8 attention
           * too; the low-precision GEMM scales also carry their recipes' own costs). */
          ModelDtype h = d == MODEL_DTYPE_FP16 ? MODEL_DTYPE_FP16 : MODEL_DTYPE_BF16;
          if (spec->attn_insitu > 0)
            eff *= spec->attn_insitu;
          else if (spec->gemm_insitu[h] > 0)
            {
              eff *= spec->gemm_insitu[h];
              dt = h;
            }
          if (d == MODEL_DTYPE_FP8)
            {
              double r = spec->attn_fp8_ratio > 0 ? spec->attn_fp8_ratio : ATTN_FP8_RATIO;
              eff *= bwd && spec->attn_fp8_bwd_ratio > 0 ? spec->attn_fp8_bwd_ratio : r;
            }
        }
      if (peak > 0 && eff > 0)
        t = kernel->flops / (peak * eff);
      if (kernel->kind == SIM_KERNEL_GEMM)
        dt = d;
    }
  gboolean mem_binds = FALSE;
  if (kernel->bytes > 0 && spec->hbm_bw_bytes_per_s > 0 && spec->mem_eff > 0)
    {
      /* A GEMM streams its operands and accumulator at the microbenchmark's bandwidth; mem_insitu
       * is the in-situ factor of the memory-bound kernels. */
      double bw = kernel->kind == SIM_KERNEL_GEMM || kernel->kind == SIM_KERNEL_STREAM
                    ? spec->hbm_bw_bytes_per_s * spec->mem_eff
                    : sim_gpu_achieved_hbm (spec);
      if (kernel->bytes / bw > t)
        {
          t = kernel->bytes / bw;
          dt = -1;
          mem_binds = kernel->kind == SIM_KERNEL_MEMORY || kernel->kind == SIM_KERNEL_ATTENTION
                      || kernel->kind == SIM_KERNEL_ATTENTION_BWD;
        }
    }
  if (sens)
    {
      /* t ∝ 1/insitu = φ on its binding branch, so ∂t/∂φ = t · insitu. */
      if (dt >= 0)
        sens[dt] += t * 1e9 * (spec->gemm_insitu[dt] > 0 ? spec->gemm_insitu[dt] : 1.0);
      if (mem_binds)
        sens[SIM_GPU_SENS_MEM] += t * 1e9 * (spec->mem_insitu > 0 ? spec->mem_insitu : 1.0);
      sens[SIM_GPU_SENS_LAUNCH] += 1000.0;
    }
  return (gint64) ceil (t * 1e9) + spec->launch_ns;
}

gint64
sim_gpu_kernel_ns (const SimGpuSpec *spec, const SimGpuKernel *kernel)
{
  g_return_val_if_fail (spec != NULL && kernel != NULL, 0);
  return kernel_ns (spec, kernel, NULL);
}

/* The userbuffers GEMM `op` is under `plan`, or -1. */
static int
ub_gemm (const ModelPlan *plan, const ModelOp *op)
{
  if (op->kind != MODEL_OP_GEMM || !plan->tp_comm_overlap || !plan->sp || plan->tp <= 1 || op->expert_group)
    return -1;
  return model_ub_gemm_of_op (op->name);
}

gboolean
sim_gpu_op_ub_own_sms (const ModelPlan *plan, const ModelOp *op)
{
  g_return_val_if_fail (plan != NULL && op != NULL, FALSE);
  int g = ub_gemm (plan, op);
  return g >= 0 && !model_ub_shares_sms (&plan->ub[g], g, plan->ub_defaults);
}

/* Unfused attention (MODEL_OP_UNFUSED_BMM): Megatron's baddbmm/bmm run over the whole s_q × s_kv
 * square, batch = sequences × heads, each timed as a GEMM (stacked rows for efficiency and waves).
 * Forward Q·Kᵀ [s_q, s_kv, d] and P·V [s_q, d, s_kv]; backward dP = dO·Vᵀ of the first shape and
 * dV, dQ, dK of the second (their N is the head dimension; dV and dK have s_kv rows, equal to s_q
 * without CP). The scores' HBM traffic is an op of its own (model/layer.c); the op's Q/K/V/O bytes
 * are shared by its kernels. */
static gint64
unfused_bmm_ns (const SimGpuSpec *spec, const ModelOp *op, double *sens)
{
  gint64 batch = op->seqs * op->heads;
  int n_ctx = op->phase == MODEL_PHASE_BWD ? 3 : 1;
  double one = 2.0 * (double) batch * op->seq_q * op->seq_kv * op->head_dim;
  double bytes = (op->bytes_read + op->bytes_written) / (1 + n_ctx);
  SimGpuKernel score = { SIM_KERNEL_GEMM, op->dtype, one, bytes, batch * op->seq_q, op->seq_kv, op->head_dim, 0 };
  SimGpuKernel ctx = { SIM_KERNEL_GEMM, op->dtype, one, bytes, batch * op->seq_q, op->head_dim, op->seq_kv, 0 };
  gint64 ns = kernel_ns (spec, &score, sens);
  for (int i = 0; i < n_ctx; i++)
    ns += kernel_ns (spec, &ctx, sens);
  return ns;
}

/* The op's time with one launch gap per kernel; *kernels is how many kernels it runs. */
static gint64
op_ns (const SimGpuSpec *spec, const ModelPlan *plan, const ModelOp *op, gint64 *kernels, double *sens)
{
  *kernels = 1;
  if (op->kind == MODEL_OP_ATTENTION && (op->flags & MODEL_OP_UNFUSED_BMM))
    {
      *kernels = op->phase == MODEL_PHASE_BWD ? 4 : 2; /* see unfused_bmm_ns */
      return unfused_bmm_ns (spec, op, sens);
    }
  SimGpuKernel k = { SIM_KERNEL_MEMORY, op->dtype, op->flops, op->bytes_read + op->bytes_written, 0, 0, 0, 0 };
  if (op->kind == MODEL_OP_ATTENTION)
    {
      k.kind = op->flags & MODEL_OP_FLASH_BWD ? SIM_KERNEL_ATTENTION_BWD : SIM_KERNEL_ATTENTION;
      k.attn = plan->attention_kernel;
    }
  else if (op->kind != MODEL_OP_GEMM)
    {
      k.flops = 0; /* memory-bound: its FLOPs are elementwise, timed by its bytes */
      if (op->flags & (MODEL_OP_STREAMING | MODEL_OP_ELEMENTWISE))
        k.kind = SIM_KERNEL_STREAM;
    }
  if (op->kind != MODEL_OP_GEMM)
    return kernel_ns (spec, &k, sens);
  k.kind = SIM_KERNEL_GEMM;
  k.m = op->m * MAX (op->batch, 1);
  k.n = op->n;
  k.k = op->k;
  int g = ub_gemm (plan, op);
  if (g < 0)
    return kernel_ns (spec, &k, sens);
  int pieces, withheld;
  model_ub_execution (&plan->ub[g], g, plan->ub_defaults, plan->tp, &pieces, &withheld);
  pieces = (int) MIN ((gint64) pieces, MAX (k.m, 1));
  if (withheld > 0 && spec->sm_count > withheld)
    k.sms = spec->sm_count - withheld;
  /* TE cuts evenly (the rows are tokens, a multiple of tp): time one piece and multiply. */
  k.m = (k.m + pieces - 1) / pieces;
  k.flops /= pieces;
  k.bytes /= pieces;
  *kernels = pieces;
  double one[SIM_GPU_N_SENS] = { 0 };
  gint64 ns = kernel_ns (spec, &k, sens ? one : NULL);
  for (int i = 0; sens && i < SIM_GPU_N_SENS; i++)
    sens[i] += pieces * one[i];
  return pieces * ns;
}

static gint64
op_ns_sens (const SimGpuSpec *spec, const ModelPlan *plan, const ModelOp *op, double *sens)
{
  if (sens)
    for (int i = 0; i < SIM_GPU_N_SENS; i++)
      sens[i] = 0;
  if (op->kind == MODEL_OP_COMM)
    return 0;
  gint64 kernels;
  gint64 ns = op_ns (spec, plan, op, &kernels, sens);
  /* A layer replayed from a CUDA graph launches its kernels from the device, back to back: the
   * host's per-kernel launch and gap (launch_ns) is gone (CUDA C++ Programming Guide, "CUDA
   * Graphs": work submitted once, launched as one unit). Embedding, head, loss and optimizer
   * kernels stay eager. */
  if (plan->cuda_graphs && op->layer >= 0)
    {
      ns -= kernels * spec->launch_ns;
      if (sens)
        sens[SIM_GPU_SENS_LAUNCH] = 0;
    }
  return ns;
}

gint64
sim_gpu_op_ns (const SimGpuSpec *spec, const ModelPlan *plan, const ModelOp *op)
{
  g_return_val_if_fail (spec != NULL && plan != NULL && op != NULL, 0);
  return op_ns_sens (spec, plan, op, NULL);
}

gint64
sim_gpu_op_ns_sens (const SimGpuSpec *spec, const ModelPlan *plan, const ModelOp *op, double *sens)
{
  g_return_val_if_fail (spec != NULL && plan != NULL && op != NULL && sens != NULL, 0);
  return op_ns_sens (spec, plan, op, sens);
}

typedef struct {
  const guint32 *ops;
  int n_ops, next;      /* next: index of the head (not yet started) */
  guint32 running;
  gint64 started_ns, busy_ns, last_end_ns;
} Stream;

struct SimGpu {
  SimEngine *engine;
  int index, n_streams;
  guint busy_mask;      /* bit s: stream s runs an op (its `running`) */
  SimGpuHooks hooks;
  gpointer user;
  Stream streams[SIM_GPU_MAX_STREAMS];
};

SimGpu *
sim_gpu_new (SimEngine *engine, int index, int n_streams, const SimGpuHooks *hooks, gpointer user)
{
  g_return_val_if_fail (engine != NULL && hooks != NULL, NULL);
  g_return_val_if_fail (n_streams >= 1 && n_streams <= SIM_GPU_MAX_STREAMS, NULL);
  SimGpu *gpu = g_new0 (SimGpu, 1);
  gpu->engine = engine;
  gpu->index = index;
  gpu->n_streams = n_streams;
  gpu->hooks = *hooks;
  gpu->user = user;
  return gpu;
}

void
sim_gpu_free (SimGpu *gpu)
{
  g_free (gpu);
}

void
sim_gpu_set_stream (SimGpu *gpu, int stream, const guint32 *ops, int n_ops)
{
  g_return_if_fail (gpu != NULL && stream >= 0 && stream < gpu->n_streams);
  Stream *s = &gpu->streams[stream];
  g_return_if_fail (!(gpu->busy_mask & (1u << stream)));
  s->ops = ops;
  s->n_ops = n_ops;
  s->next = 0;
}

static void stream_end (SimEngine *engine, gpointer data, guint64 arg);

static inline void
poke (SimGpu *gpu, int stream, gboolean known, guint32 ready_op)
{
  Stream *s = &gpu->streams[stream];
  if ((gpu->busy_mask & (1u << stream)) || s->next >= s->n_ops)
    return;
  guint32 op = s->ops[s->next];
  if (!(known && op == ready_op) && !gpu->hooks.ready (gpu->user, gpu->index, op))
    return;
  s->next++;
  gpu->busy_mask |= 1u << stream;
  s->running = op;
  s->started_ns = sim_engine_now (gpu->engine);
  gint64 d = gpu->hooks.start (gpu->user, gpu->index, op, stream == 0 && (gpu->busy_mask & ~1u) != 0);
  if (d >= 0)
    sim_engine_after (gpu->engine, d, stream_end, gpu, (guint64) stream);
}

void
sim_gpu_poke (SimGpu *gpu, int stream)
{
  g_return_if_fail (gpu != NULL && stream >= 0 && stream < gpu->n_streams);
  poke (gpu, stream, FALSE, 0);
}

void
sim_gpu_poke_ready (SimGpu *gpu, int stream, guint32 op)
{
  g_return_if_fail (gpu != NULL && stream >= 0 && stream < gpu->n_streams);
  poke (gpu, stream, TRUE, op);
}

void
sim_gpu_finish (SimGpu *gpu, int stream)
{
  g_return_if_fail (gpu != NULL && stream >= 0 && stream < gpu->n_streams);
  Stream *s = &gpu->streams[stream];
  g_return_if_fail (gpu->busy_mask & (1u << stream));
  gint64 now = sim_engine_now (gpu->engine);
  gpu->busy_mask &= ~(1u << stream);
  s->busy_ns += now - s->started_ns;
  s->last_end_ns = now;
  /* done() may make other ops ready (and poke them); then this stream's next head. */
  gpu->hooks.done (gpu->user, gpu->index, s->running, s->started_ns);
  poke (gpu, stream, FALSE, 0);
}

static void
stream_end (SimEngine *engine, gpointer data, guint64 arg)
{
  sim_gpu_finish (data, (int) arg);
}

void
sim_gpu_prefetch (const SimGpu *gpu, int stream)
{
  __builtin_prefetch (gpu);
  __builtin_prefetch (&gpu->streams[stream]);
}

int
sim_gpu_pending (const SimGpu *gpu, int stream)
{
  const Stream *s = &gpu->streams[stream];
  return s->n_ops - s->next + (int) ((gpu->busy_mask >> stream) & 1u);
}

gboolean
sim_gpu_stream_busy (const SimGpu *gpu, int stream)
{
  return (gpu->busy_mask >> stream) & 1u;
}

guint
sim_gpu_busy_streams (const SimGpu *gpu)
{
  return gpu->busy_mask;
}

gint64
sim_gpu_busy_ns (const SimGpu *gpu, int stream)
{
  return gpu->streams[stream].busy_ns;
}

gint64
sim_gpu_last_end_ns (const SimGpu *gpu, int stream)
{
  return gpu->streams[stream].last_end_ns;
}

int
sim_gpu_sens_of_key (const char *key)
{
  static const char prefix[] = "gemm_insitu_";
  ModelDtype d;
  if (g_str_has_prefix (key, prefix) && model_dtype_parse (key + strlen (prefix), &d))
    return (int) d;
  if (strcmp (key, "mem_insitu") == 0)
    return SIM_GPU_SENS_MEM;
  if (strcmp (key, "launch_us") == 0)
    return SIM_GPU_SENS_LAUNCH;
  return -1;
}
