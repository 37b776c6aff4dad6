/* One GPU type's hardware profile: datasheet peaks plus achieved-efficiency constants.
 *
 * Filled by the scenario loader from the [hardware] group; every figure there carries a
 * `source`. Rates in SI units (FLOP/s, bytes/s), sizes in bytes, times in ns. */
#pragma once
#include <glib.h>
#include "model/dtype.h"
#include "model/op.h"
#include "model/plan.h"
#include "sim/des/engine.h"

typedef struct {
  char name[64];
  double peak_flops[MODEL_DTYPE_COUNT]; /* dense tensor-core FLOP/s per precision; 0 = unsupported */
  double hbm_bytes;                     /* usable HBM capacity */
  double hbm_bw_bytes_per_s;            /* datasheet HBM bandwidth */
  int sm_count;
  gboolean wave_quantization;           /* GEMMs above one wave of tiles lose their last wave's idle SMs */
  double nvlink_bw_bytes_per_s;         /* per GPU, per direction */
  gboolean nvls;                        /* NVLink SHARP in-switch reduction */
  gboolean mesh;                        /* scale-up domain is a full mesh (sim/net/topology.h) */
  gboolean fp8_any_layout;              /* FP8 GEMMs in any operand layout: no transposed FP8 copies */
  gboolean announced;                   /* figures from an announcement, no shipped part: the name says so */
  double tdp_w;
  /* Achieved efficiencies (fractions of the peaks above), from public microbenchmarks or calib/. */
  /* Large-GEMM efficiency per input dtype (0 = not known: a GEMM of that dtype cannot be timed;
   * the scenario loader rejects a run that needs one, see sim_scenario_check_compute). */
  double gemm_eff_max[MODEL_DTYPE_COUNT];
  /* GEMM size (GFLOP) at which efficiency is half of max, per dtype; 0 = that dtype has no measured
   * curve of its own and uses gemm_eff_half_gflop_any. */
  double gemm_eff_half_gflop[MODEL_DTYPE_COUNT];
  double gemm_eff_half_gflop_any;       /* the profile's measured size curve (its source names the dtype) */
  double attn_eff;                      /* fused causal attention, fraction of peak */
  double attn_bwd_eff;                  /* its flash backward (2.5x the forward FLOPs); 0: attn_eff */
  double attn_half_gflop;               /* kernel size (GFLOP) at half of attn_eff; 0: flat */
  double attn_bwd_half_gflop;           /* the same for the backward (its own FLOPs); 0: flat */
  /* FP8 attention's fraction of the FP8 peak over BF16 attention's of the BF16 peak, forward and
   * backward; 0: FlashAttention-3's 0.81 on H100 (forward; sim/gpu/gpu.c), the forward's (backward). */
  double attn_fp8_ratio;
  double attn_fp8_bwd_ratio;
  /* FlashAttention-2's own curve (parallel.attention_kernel fa2 and triton), each as the four above;
   * attn_fa2_eff 0: not known. */
  double attn_fa2_eff;
  double attn_fa2_bwd_eff;
  double attn_fa2_half_gflop;
  double attn_fa2_bwd_half_gflop;
  double mem_eff;                       /* memory-bound kernels, fraction of HBM bandwidth */
  /* In-situ scales fitted on published step times (scenarios/calibration/): what a training step's
   * kernels reach relative to the microbenchmark figures above (clocks under sustained power, L2 and
   * HBM shared with neighbours, real data). 0 = 1 (not calibrated). */
  double gemm_insitu[MODEL_DTYPE_COUNT];
  double mem_insitu;
  double attn_insitu;                   /* on attn_eff and attn_bwd_eff; 0: the 16-bit gemm_insitu */
  double nvlink_eff;                    /* achieved NVLink bus bandwidth / line rate */
  gint64 launch_ns;                     /* per-kernel launch/tail overhead */
  gint64 step_overhead_ns;              /* fixed per-step host time after the optimizer (0: none) */
  gint64 eager_op_ns;                   /* host time of one eager PyTorch op (Python call, dispatch,
                                         * launch): the per-tensor cost of list collectives */
  double overlap_slowdown;              /* compute slowdown while communication kernels share SMs */
  double peak_log_sigma;                /* σ of ln(true peak / peak_*) where the peak is assumed; 0: sourced */
} SimGpuSpec;

/* ---- Kernel time (sim/gpu/gpu.c) -------------------------------------------------------------------
 * t = max(FLOPs / (peak[dtype] · eff), bytes / (hbm_bw · mem_eff)) + launch_ns, where eff is
 *   GEMM:      gemm_eff_max[dtype] · s[dtype] · G / (G + G_half[dtype]) · wave(M, N)   (G = 2MNK / 1e9,
 *              s = gemm_insitu, 1 when not calibrated),
 *              G_half[dtype] = gemm_eff_half_gflop[dtype], or gemm_eff_half_gflop_any when 0
 *   attention: attn_eff · a · G/(G + G_half_attn) (the size term where the profile measured one); a
 *              flash backward (SIM_KERNEL_ATTENTION_BWD) attn_bwd_eff · a · G/(G + G_half_bwd) when the
 *              profile gives it (a = attn_insitu, else the 16-bit GEMM's s, 1 when not calibrated); FP8 attention also times
 *              attn_fp8_ratio (backward attn_fp8_bwd_ratio), the profile's measured FP8 over BF16
 *              fraction of peak, else 0.81, FlashAttention-3's on H100 (sim/gpu/gpu.c); the
 *              FlashAttention-2 kernel (attn MODEL_ATTN_FA2) on the attn_fa2_* curve instead, the
 *              Triton one (MODEL_ATTN_TRITON) on it divided by 1.4 forward and 2 backward
 *   memory:    no FLOP term (bytes only); the bandwidth is hbm_bw · mem_eff · mem_insitu (a GEMM's
 *              bytes and a streaming kernel's: hbm_bw · mem_eff). */
typedef enum {
  SIM_KERNEL_GEMM,
  SIM_KERNEL_ATTENTION,
  SIM_KERNEL_MEMORY,
  SIM_KERNEL_ATTENTION_BWD,
  SIM_KERNEL_STREAM /* memory-bound, one long pass (MODEL_OP_STREAMING): hbm_bw · mem_eff */
} SimKernelKind;

typedef struct {
  SimKernelKind kind;
  ModelDtype dtype;     /* math precision (peak_flops index) */
  double flops;
  double bytes;         /* HBM traffic */
  gint64 m, n, k;       /* GEMM shape (0 if not a GEMM) */
  int sms;              /* GEMM: SMs it may use (an SM-count target, as cuBLASLt's); 0: all */
  ModelAttnKernel attn; /* attention: which fused kernel (0: the profile's attn_eff) */
} SimGpuKernel;

/* Achieved HBM bandwidth of memory-bound kernels: hbm_bw · mem_eff · mem_insitu (bytes/s). */
double sim_gpu_achieved_hbm (const SimGpuSpec *spec);
/* SM occupancy of a GEMM whose M×N output is tiled 128×128 per SM (the CTA tile of cuBLAS/CUTLASS
 * GEMMs): fewer tiles than SMs keep tiles / sm_count of them busy. From one wave of tiles up, with
 * spec->wave_quantization, ceil(tiles / sm_count) waves run and the efficiency is tiles / (waves ·
 * sm_count) (NVIDIA's Matrix Multiplication Background guide, DU-09799-001, §3.2, for the A100 and
 * cuBLAS 11); without it, 1: on this project's H100 (calib/results/h100-sxm-2026-11-27, 513 shapes
 * per dtype, M 512-8192, N 1024-16384 not only powers of two, K 4096-12288, cuBLASLt 13.1) the
 * wave term doubled the scatter of log(measured / curve) (0.078 → 0.163 BF16 back to back, 0.098 →
 * 0.169 L2 flushed): the library's tile shapes and stream-K kernels hide the tail, e.g.
 * 512×4608×12288 (144 tiles, 1.09 waves) ran at 720 TFLOP/s where the term allowed 0.55 of the
 * curve. 1 if the SM count is unknown. */
double sim_gpu_wave_efficiency (const SimGpuSpec *spec, gint64 m, gint64 n);
/* The same over `sms` SMs (<= 0 or above sm_count: all of them). */
double sim_gpu_wave_efficiency_on (const SimGpuSpec *spec, gint64 m, gint64 n, int sms);
/* ... with K split where the tiles are fewer than the SMs (split-K; see gpu.c): the best over
 * s = 1 .. min(K / SIM_GPU_SPLITK_MIN_K, 4·SMs) of tiles·s over waves of SMs. The minimum K of a
 * split: two 64-deep K tiles of the Hopper/Ampere CUTLASS mainloop (128×128×64). On the H100 GEMMs
 * of calib/results/h100-sxm-2026-11-26, 64 and 128 fit alike (chi2/dof 124-127 BF16, 165-168 FP8,
 * with the later-wave term then in use), 256 and up worse (147/189 at 256, 188/237 at 512). */
#define SIM_GPU_SPLITK_MIN_K 128
double sim_gpu_wave_efficiency_k (const SimGpuSpec *spec, gint64 m, gint64 n, gint64 k, int sms);
/* Fraction of the `dtype` peak a GEMM of that dtype achieves (0 when the profile has no
 * gemm_eff_max for the dtype). */
double sim_gpu_gemm_efficiency (const SimGpuSpec *spec, ModelDtype dtype, gint64 m, gint64 n, gint64 k);
/* Kernel duration in ns (>= launch_ns). A GEMM on fewer SMs (kernel->sms) has that share of the
 * peak and its waves counted over those SMs. Unsupported dtype (peak 0): falls back to bf16 (peak and
 * efficiency), which is what frameworks do for a format the GPU lacks. A GEMM whose dtype has no
 * efficiency is timed by its bytes only: callers check the profile first
 * (sim_scenario_check_compute). */
gint64 sim_gpu_kernel_ns (const SimGpuSpec *spec, const SimGpuKernel *kernel);
/* Duration of one layer op (model/op.h) under `plan`: its kernel as above (a grouped GEMM fills the
 * GPU like its stacked rows; communication ops take 0). Under tp_comm_overlap with sequence
 * parallelism a TP-adjacent dense GEMM runs as Transformer Engine's userbuffers cut it
 * (model/tpoverlap.h): equal row pieces back to back, on the SMs its communication leaves it.
 * Unfused attention (MODEL_OP_UNFUSED_BMM) takes the time of the batched GEMMs it runs over the
 * full score square (its causal FLOPs count for MFU only). */
gint64 sim_gpu_op_ns (const SimGpuSpec *spec, const ModelPlan *plan, const ModelOp *op);
/* Sensitivities of an op's duration (forward-mode derivatives, ns per unit) to the constants the
 * deck calibration fits (sim/calibrate/calibration.h): per dtype d, φ = 1/gemm_insitu[d] (the
 * compute-bound part of d's GEMM kernels scales as φ); SIM_GPU_SENS_MEM, φ = 1/mem_insitu (the
 * bandwidth-bound part of memory kernels); SIM_GPU_SENS_LAUNCH, launch_us (one per kernel launched
 * from the host). A kernel's time is max(F-term, B-term): the derivative goes to the branch that
 * binds (at a tie, the F-term). */
enum { SIM_GPU_SENS_MEM = MODEL_DTYPE_COUNT, SIM_GPU_SENS_LAUNCH, SIM_GPU_N_SENS };
/* The sensitivity direction of a calibration key: gemm_insitu_<dtype> → the dtype, mem_insitu →
 * SIM_GPU_SENS_MEM, launch_us → SIM_GPU_SENS_LAUNCH; -1 for any other key. */
int sim_gpu_sens_of_key (const char *key);
/* sim_gpu_op_ns, with ∂ns/∂(each constant above) in sens[SIM_GPU_N_SENS]. */
gint64 sim_gpu_op_ns_sens (const SimGpuSpec *spec, const ModelPlan *plan, const ModelOp *op, double *sens);
/* Whether `op` is such a userbuffers GEMM whose TP communication takes none of its SMs (a margin,
 * or copy-engine ring exchange): the SM-sharing overlap_slowdown does not apply to it for that
 * communication (model_ub_shares_sms). */
gboolean sim_gpu_op_ub_own_sms (const ModelPlan *plan, const ModelOp *op);

/* ---- Streams (sim/gpu/gpu.c) -----------------------------------------------------------------------
 * One GPU's streams, each an ordered list of op ids (owned by the caller, shared between GPUs
 * running the same program). A stream starts its head op once the previous one finished and the
 * caller's ready() says its dependencies are met. Stream 0 is the compute stream; the others carry
 * communication. A compute op that starts while a communication op of the same GPU is running is
 * `overlapped`: the caller stretches it by overlap_slowdown (SMs lent to NCCL kernels). */
typedef struct {
  gboolean (*ready) (gpointer user, int gpu, guint32 op);
  /* Returns the op's duration (>= 0), or -1 for an asynchronous op that the caller finishes later
   * with sim_gpu_finish(). */
  gint64 (*start) (gpointer user, int gpu, guint32 op, gboolean overlapped);
  void (*done) (gpointer user, int gpu, guint32 op, gint64 start_ns);
} SimGpuHooks;

#define SIM_GPU_MAX_STREAMS 8

typedef struct SimGpu SimGpu;

SimGpu *sim_gpu_new (SimEngine *engine, int index, int n_streams, const SimGpuHooks *hooks,
                     gpointer user);
void sim_gpu_free (SimGpu *gpu);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimGpu, sim_gpu_free)
/* Sets (and rewinds) a stream's program; ops must outlive the SimGpu's use of it. */
void sim_gpu_set_stream (SimGpu *gpu, int stream, const guint32 *ops, int n_ops);
/* Something the stream's head may wait on changed: start it if idle and ready. */
void sim_gpu_poke (SimGpu *gpu, int stream);
/* sim_gpu_poke where the caller has just found op ready: if op is the stream's head it starts
 * without the ready hook being asked again. */
void sim_gpu_poke_ready (SimGpu *gpu, int stream, guint32 op);
/* The running asynchronous op of `stream` completed now. */
void sim_gpu_finish (SimGpu *gpu, int stream);
/* A hint: the state that finishing or poking `stream` reads is fetched ahead (a caller about to
 * finish many GPUs' streams, one after another). */
void sim_gpu_prefetch (const SimGpu *gpu, int stream);
/* Ops left on a stream (0 when it is drained). */
int sim_gpu_pending (const SimGpu *gpu, int stream);
gboolean sim_gpu_stream_busy (const SimGpu *gpu, int stream);
/* The streams running an op now, bit s for stream s. */
guint sim_gpu_busy_streams (const SimGpu *gpu);
/* Total time the stream ran an op so far. */
gint64 sim_gpu_busy_ns (const SimGpu *gpu, int stream);
/* Time the last op of the stream ended (0 if none). */
gint64 sim_gpu_last_end_ns (const SimGpu *gpu, int stream);
