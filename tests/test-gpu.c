/* sim/gpu: kernel time from the roofline with efficiencies, and in-order streams with
 * dependencies and the overlap flag. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "sim/gpu/gpu.h"

/* H100-like figures, chosen for the arithmetic below (not a profile). */
static void
spec_of (SimGpuSpec *g)
{
  memset (g, 0, sizeof *g);
  g->peak_flops[MODEL_DTYPE_BF16] = 989e12;
  g->hbm_bw_bytes_per_s = 3.35e12;
  g->sm_count = 132;
  g->gemm_eff_max[MODEL_DTYPE_BF16] = 0.7;
  g->gemm_eff_half_gflop_any = 1.0;
  g->attn_eff = 0.5;
  g->mem_eff = 0.887;
  g->launch_ns = 3000;
}

/* 8192³ bf16 GEMM: G = 2·8192³/1e9 = 1099.51 GFLOP; size factor G/(G+1) = 0.999091; 64·64 = 4096
 * tiles of 128×128 fill the 132 SMs (more than one wave: no quantization); efficiency 0.7 × 0.999091
 * = 0.699364; time 1.0995e12 / (989e12 · 0.699364) = 1,589,645.57 ns → 1,589,646 + 3,000 launch.
 * Its bytes (3 · 8192² · 2 B = 403 MB at 2.97 TB/s = 135 µs) do not bind. */
static void
test_gemm (void)
{
  SimGpuSpec g;
  spec_of (&g);
  SimGpuKernel k = { SIM_KERNEL_GEMM, MODEL_DTYPE_BF16, 2.0 * 8192 * 8192 * 8192, 3.0 * 8192 * 8192 * 2,
                     8192, 8192, 8192, 0 };
  g_assert_cmpfloat (sim_gpu_wave_efficiency (&g, 8192, 8192), ==, 1.0);
  g_assert_cmpfloat (fabs (sim_gpu_gemm_efficiency (&g, MODEL_DTYPE_BF16, 8192, 8192, 8192) - 0.6993639322090447), <, 1e-9);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &k), ==, 1592646);
  /* FP4 has no peak in this spec: the kernel runs at the bf16 rate, as frameworks fall back. */
  k.dtype = MODEL_DTYPE_FP4;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &k), ==, 1592646);
}

/* Efficiencies are per dtype. FP8 with its own figures (peak 1979e12, e_max 0.6, G_half 9): the
 * 8192³ GEMM has size factor 1099.51/(1099.51 + 9) = 0.991881, so e = 0.6 × 0.991881 = 0.595129;
 * t = 1.0995e12 / (1979e12 · 0.595129) = 933,562.09 ns → 933,563 + 3,000.
 * BF16 keeps its own 0.699364 (G_half from the profile-wide curve), and FP16, which has a peak but no
 * efficiency of its own, gets 0: no other dtype's figure is borrowed. */
static void
test_dtypes (void)
{
  SimGpuSpec g;
  spec_of (&g);
  g.peak_flops[MODEL_DTYPE_FP8] = 1979e12;
  g.peak_flops[MODEL_DTYPE_FP16] = 989e12;
  g.gemm_eff_max[MODEL_DTYPE_FP8] = 0.6;
  g.gemm_eff_half_gflop[MODEL_DTYPE_FP8] = 9.0;
  g_assert_cmpfloat (fabs (sim_gpu_gemm_efficiency (&g, MODEL_DTYPE_FP8, 8192, 8192, 8192) - 0.5951286031966719),
                     <, 1e-9);
  g_assert_cmpfloat (fabs (sim_gpu_gemm_efficiency (&g, MODEL_DTYPE_BF16, 8192, 8192, 8192) - 0.6993639322090447),
                     <, 1e-9);
  g_assert_cmpfloat (sim_gpu_gemm_efficiency (&g, MODEL_DTYPE_FP16, 8192, 8192, 8192), ==, 0.0);
  SimGpuKernel k = { SIM_KERNEL_GEMM, MODEL_DTYPE_FP8, 2.0 * 8192 * 8192 * 8192, 3.0 * 8192 * 8192,
                     8192, 8192, 8192, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &k), ==, 936563);
}

/* Fewer tiles than SMs keep that share busy. From one wave up: without wave quantization (the
 * Hopper profiles, calib/results/h100-sxm-2026-11-27) fully efficient; with it (the profiles'
 * default) one tile more than a wave needs a second, nearly empty wave. */
static void
test_waves (void)
{
  SimGpuSpec g;
  spec_of (&g);
  g_assert_cmpfloat (sim_gpu_wave_efficiency (&g, 128 * 12, 128 * 11), ==, 1.0);
  g_assert_cmpfloat (sim_gpu_wave_efficiency (&g, 128 * 133, 128), ==, 1.0);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency (&g, 128 * 11, 128 * 11) - 121.0 / 132.0), <, 1e-12);
  g.wave_quantization = TRUE;
  g_assert_cmpfloat (sim_gpu_wave_efficiency (&g, 128 * 12, 128 * 11), ==, 1.0);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency (&g, 128 * 133, 128) - 133.0 / 264.0), <, 1e-12);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency (&g, 8192, 8192) - 4096.0 / 4224.0), <, 1e-12);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency_k (&g, 128 * 133, 128, 65536, 0) - 133.0 / 264.0), <, 1e-12);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency (&g, 128 * 11, 128 * 11) - 121.0 / 132.0), <, 1e-12);
  g.sm_count = 0; /* unknown SM count: no quantization */
  g_assert_cmpfloat (sim_gpu_wave_efficiency (&g, 128 * 133, 128), ==, 1.0);
}

/* Split K below one wave of tiles: 512×512 is 16 tiles; K = 16384 lets 33 splits fill 4 whole
 * waves of 132 SMs (1), K = 512 only 4 splits (64 of 132 SMs), K < 2·128 none (16/132); a split
 * never does worse than none; from one wave of tiles up nothing is split (133 tiles: 1). */
static void
test_split_k (void)
{
  SimGpuSpec g;
  spec_of (&g);
  g_assert_cmpfloat (sim_gpu_wave_efficiency_k (&g, 512, 512, 16384, 0), ==, 1.0);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency_k (&g, 512, 512, 512, 0) - 64.0 / 132.0), <, 1e-12);
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency_k (&g, 512, 512, 255, 0) - 16.0 / 132.0), <, 1e-12);
  g_assert_cmpfloat (sim_gpu_wave_efficiency_k (&g, 128 * 133, 128, 65536, 0), ==, 1.0);
  /* On fewer SMs (userbuffers withholding some), the same over those. */
  g_assert_cmpfloat (fabs (sim_gpu_wave_efficiency_k (&g, 512, 512, 1024, 100) - 96.0 / 100.0), <, 1e-12);
  for (int k = 64; k <= 65536; k *= 2)
    for (int m = 128; m <= 8192; m *= 4)
      {
        double w = sim_gpu_wave_efficiency_k (&g, m, 384, k, 0);
        g_assert_cmpfloat (w, >=, sim_gpu_wave_efficiency (&g, m, 384));
        g_assert_cmpfloat (w, <=, 1.0);
      }
  /* The GEMM efficiency carries it: 512×512×16384 at e_max · size only. */
  double G = 2.0 * 512 * 512 * 16384 / 1e9;
  g_assert_cmpfloat (fabs (sim_gpu_gemm_efficiency (&g, MODEL_DTYPE_BF16, 512, 512, 16384) - 0.7 * G / (G + 1.0)), <, 1e-12);
}

/* Memory-bound: 1 GB at 3.35 TB/s × 0.887 = 336,536.03 ns → 336,537 + 3,000. Attention: 1e12
 * FLOPs at 989e12 × 0.5 = 2,022,244.69 ns → 2,022,245 + 3,000. FP8 attention at the FP8 peak
 * 1,979e12 × 0.5 × r8, r8 = (1200/1979)/(740/989) = 0.810401: 1,247,050.89 ns → 1,247,051 + 3,000;
 * without an FP8 peak (Ampere) it keeps the BF16 time. */
static void
test_memory_attention (void)
{
  SimGpuSpec g;
  spec_of (&g);
  SimGpuKernel m = { SIM_KERNEL_MEMORY, MODEL_DTYPE_BF16, 5e9, 1e9, 0, 0, 0, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &m), ==, 339537);
  SimGpuKernel a = { SIM_KERNEL_ATTENTION, MODEL_DTYPE_BF16, 1e12, 1e6, 0, 0, 0, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a), ==, 2025245);
  SimGpuKernel a8 = { SIM_KERNEL_ATTENTION, MODEL_DTYPE_FP8, 1e12, 1e6, 0, 0, 0, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8), ==, 2025245);
  g.peak_flops[MODEL_DTYPE_FP8] = 1979e12;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8), ==, 1250051);
  /* A profile's measured ratios replace r8, the backward's its own (GB200's cuDNN figures 0.650 and
   * 0.546): 1e12 / (1,979e12 x 0.5 x 0.650) = 1,554,786.8 ns -> 1,554,787 + 3,000 forward;
   * 1e12 / (1,979e12 x 0.5 x 0.546) = 1,850,936.7 ns -> 1,850,937 + 3,000 backward; without a
   * backward ratio the backward takes the forward's. */
  SimGpuKernel a8b = { SIM_KERNEL_ATTENTION_BWD, MODEL_DTYPE_FP8, 1e12, 1e6, 0, 0, 0, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8b), ==, 1250051);
  g.attn_fp8_ratio = 0.650;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8), ==, 1557787);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8b), ==, 1557787);
  g.attn_fp8_bwd_ratio = 0.546;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8b), ==, 1853937);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8), ==, 1557787);
  g.attn_fp8_ratio = g.attn_fp8_bwd_ratio = 0;
  /* The size curve: G = 1,000 GFLOP at G_half 1,000 runs at half of attn_eff (4,044,489.4 ns →
   * 4,044,490 + 3,000); the backward has its own G_half (0 here: flat). */
  g.attn_half_gflop = 1000;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a), ==, 4047490);
  SimGpuKernel ab = { SIM_KERNEL_ATTENTION_BWD, MODEL_DTYPE_BF16, 1e12, 1e6, 0, 0, 0, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &ab), ==, 2025245);
  g.attn_bwd_half_gflop = 3000;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &ab), ==, (gint64) ceil (1e12 / (989e12 * 0.5 * 0.25) * 1e9) + 3000);
  g.attn_half_gflop = g.attn_bwd_half_gflop = 0;
  /* In situ, attention takes the 16-bit GEMM scale: gemm_insitu_bf16 0.8 gives 1e12 / (989e12 x
   * 0.5 x 0.8) = 2,527,805.9 ns -> 2,527,806 + 3,000, FP8 attention too (1e12 / (1,979e12 x 0.5 x
   * r8 x 0.8) = 1,558,813.6 -> 1,558,814 + 3,000), not the FP8 GEMM's scale; attn_insitu, where set,
   * replaces it (0.5: 4,044,490 + 3,000). */
  g.gemm_insitu[MODEL_DTYPE_BF16] = 0.8;
  g.gemm_insitu[MODEL_DTYPE_FP8] = 0.5;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a), ==, 2530806);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a8), ==, 1561814);
  g.attn_insitu = 0.5;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &a), ==, 4047490);
  g.attn_insitu = 0;
  g.gemm_insitu[MODEL_DTYPE_BF16] = g.gemm_insitu[MODEL_DTYPE_FP8] = 0;
  /* mem_insitu 0.5 halves the memory-bound kernel's bandwidth (673,072.06 ns → 673,073 + 3,000),
   * not that of a GEMM whose 1 GB of traffic binds (1e6 FLOPs): 336,537 + 3,000 as before. */
  g.mem_insitu = 0.5;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &m), ==, 676073);
  SimGpuKernel gm = { SIM_KERNEL_GEMM, MODEL_DTYPE_BF16, 1e6, 1e9, 1024, 1024, 1, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &gm), ==, 339537);
  /* A streaming kernel (the fused optimizer) keeps the microbenchmark bandwidth, FLOPs ignored. */
  SimGpuKernel st = { SIM_KERNEL_STREAM, MODEL_DTYPE_FP32, 5e9, 1e9, 0, 0, 0, 0 };
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &st), ==, 339537);
  /* and an op flagged MODEL_OP_STREAMING becomes one */
  ModelPlan plan;
  model_plan_init (&plan);
  ModelOp adam = model_op_membound ("adam", MODEL_PHASE_OPTIMIZER, 6e8, 4e8, 1e8, MODEL_DTYPE_FP32);
  gint64 in_situ = sim_gpu_op_ns (&g, &plan, &adam);
  adam.flags |= MODEL_OP_STREAMING;
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &adam), ==, 339537);
  g_assert_cmpint (in_situ, ==, 676073);
  /* so does an eager ATen element-wise kernel (MODEL_OP_ELEMENTWISE) */
  ModelOp mul = model_op_membound ("attn_norm_mul", MODEL_PHASE_FWD, 6e8, 4e8, 1e8, MODEL_DTYPE_BF16);
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &mul), ==, 676073);
  mul.flags |= MODEL_OP_ELEMENTWISE;
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &mul), ==, 339537);
}

/* The run's attention kernel: FlashAttention-2 on its own curve (attn_fa2_*), the Triton kernel on it
 * 1.4x slower forward and 2x backward (FlashAttention-2 paper §4.1), the profile's attn_eff by default.
 * spec_of's peak 989e12 and launch 3,000 ns; FA2 0.3 flat forward, 0.25 backward at G_half 1,000. */
static void
test_attention_kernels (void)
{
  SimGpuSpec g;
  spec_of (&g);
  g.attn_fa2_eff = 0.3;
  g.attn_fa2_bwd_eff = 0.25;
  g.attn_fa2_bwd_half_gflop = 1000;
  SimGpuKernel f = { SIM_KERNEL_ATTENTION, MODEL_DTYPE_BF16, 1e12, 1e6, 0, 0, 0, 0, MODEL_ATTN_DEFAULT };
  SimGpuKernel b = { SIM_KERNEL_ATTENTION_BWD, MODEL_DTYPE_BF16, 1e12, 1e6, 0, 0, 0, 0, MODEL_ATTN_DEFAULT };
  gint64 def_f = sim_gpu_kernel_ns (&g, &f), def_b = sim_gpu_kernel_ns (&g, &b);
  g_assert_cmpint (def_f, ==, 2025245); /* attn_eff 0.5, as test_memory_attention */
  f.attn = b.attn = MODEL_ATTN_FA2;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &f), ==, (gint64) ceil (1e12 / (989e12 * 0.3) * 1e9) + 3000);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &b), ==, (gint64) ceil (1e12 / (989e12 * 0.25 * 0.5) * 1e9) + 3000);
  f.attn = b.attn = MODEL_ATTN_TRITON;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &f), ==, (gint64) ceil (1e12 / (989e12 * 0.3 / 1.4) * 1e9) + 3000);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &b), ==, (gint64) ceil (1e12 / (989e12 * 0.25 * 0.5 / 2) * 1e9) + 3000);
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &b), >, def_b);
  /* No backward figure of its own: the forward's, as attn_eff's. */
  g.attn_fa2_bwd_eff = 0;
  b.attn = MODEL_ATTN_FA2;
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &b), ==, (gint64) ceil (1e12 / (989e12 * 0.3 * 0.5) * 1e9) + 3000);
  /* The op takes the plan's kernel. */
  ModelPlan plan;
  model_plan_init (&plan);
  ModelOp op = model_op_attention ("attn", MODEL_PHASE_FWD, 1, 32, 32, 2048, 2048, 128, 2048 * 2049 / 2,
                                   MODEL_DTYPE_BF16);
  gint64 at_default = sim_gpu_op_ns (&g, &plan, &op);
  plan.attention_kernel = MODEL_ATTN_TRITON;
  gint64 at_triton = sim_gpu_op_ns (&g, &plan, &op);
  g_assert_cmpfloat (fabs ((double) (at_triton - 3000) / (at_default - 3000) - 0.5 / (0.3 / 1.4)), <, 1e-3);
}

/* Unfused attention (Megatron's baddbmm/bmm), spec_of's figures: 1 sequence, 4 heads of 128, s 2048.
 * Each bmm is G = 2·4·2048·2048·128 = 4.294967 GFLOP over the full square (size factor
 * 4.294967/5.294967 = 0.811141). Q·Kᵀ stacks M 8192, N 2048: 64·16 = 1024 tiles, more than one
 * wave: 4.294967e9 / (989e12 · 0.7 · 0.811141) = 7,648.4 ns → 7,649 + 3,000 = 10,649.
 * P·V (M 8192, N 128, K 2048): 64 tiles, under one wave, so K splits in 2: 128 units of 132 SMs
 * (0.969697): 7,887.4 ns → 10,888. Forward 10,649 + 10,888 = 21,537 ns; backward one score-shaped
 * (dP) and three head-shaped (dV, dQ, dK): 10,649 + 3 · 10,888 = 43,313 ns. The op's FLOPs stay the causal count;
 * the same op as a flash kernel would take its causal FLOPs at attn_eff:
 * 4·4·128·2,098,176 / (989e12 · 0.5) + 3,000 ns. */
static void
test_unfused_attention (void)
{
  SimGpuSpec g;
  spec_of (&g);
  ModelPlan plan;
  model_plan_init (&plan);
  gint64 pairs = model_op_causal_pairs (2048, 1);
  ModelOp f = model_op_attention ("attn", MODEL_PHASE_FWD, 1, 4, 4, 2048, 2048, 128, pairs, MODEL_DTYPE_BF16);
  ModelOp b = model_op_attention ("attn_bwd", MODEL_PHASE_BWD, 1, 4, 4, 2048, 2048, 128, pairs, MODEL_DTYPE_BF16);
  gint64 flash = sim_gpu_op_ns (&g, &plan, &f);
  g_assert_cmpint (flash, ==, (gint64) ceil (4.0 * 4 * 128 * 2098176 / (989e12 * 0.5) * 1e9) + 3000);
  f.flags |= MODEL_OP_UNFUSED_BMM;
  b.flags |= MODEL_OP_UNFUSED_BMM;
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &f), ==, 21537);
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &b), ==, 43313);
  g_assert_cmpfloat (f.flops, ==, 4.0 * 4 * 128 * pairs);
}

/* Userbuffers pieces (model/tpoverlap.h), spec_of's figures, bf16, tp 4 with SP and TP overlap.
 * proj (M 2048, N 12288, K 3072) as "pipeline splits=4 sm=24 margin": four GEMMs of M 512 on
 * 108 SMs. Each: G = 38.6547 GFLOP, size 38.6547/39.6547 = 0.974782; 4·96 = 384 tiles fill the
 * 108 SMs; peak 989e12·108/132 = 809.18e12; t = 38.6547e9 / (809.18e12 · 0.7 · 0.974782) =
 * 70,008.5 ns → 70,009 + 3,000 = 73,009; the whole GEMM 4 × 73,009. Unsplit (no SP): size
 * 0.993574, 224,785.2 ns → 227,786. qkv (M 2048, N 9216, K 12288) by TE's default ring exchange:
 * 4 GEMMs of M 512 (size 0.991450): 4 × 171,951; with aggregate 2 GEMMs of M 1024 (0.995707):
 * 2 × 339,456. fc1_wgrad: TE 2 defaults withhold 16 SMs
 * (bulk), TE 1 defaults none (the plain kernel). */
static void
test_userbuffers (void)
{
  SimGpuSpec g;
  spec_of (&g);
  ModelPlan plan;
  model_plan_init (&plan);
  plan.tp = 4;
  plan.sp = TRUE;
  plan.tp_comm_overlap = TRUE;
  GError *error = NULL;
  g_assert_true (model_ub_parse ("pipeline splits=4 sm=24 margin", &plan.ub[MODEL_UB_PROJ_FPROP], &error));
  ModelOp proj = model_op_gemm ("proj", MODEL_PHASE_FWD, MODEL_GRAD_NONE, 2048, 12288, 3072, 1, MODEL_DTYPE_BF16,
                                MODEL_DTYPE_BF16);
  gint64 t = sim_gpu_op_ns (&g, &plan, &proj);
  g_assert_cmpint (t, >=, 4 * 73008);
  g_assert_cmpint (t, <=, 4 * 73010);
  plan.sp = FALSE;
  t = sim_gpu_op_ns (&g, &plan, &proj);
  g_assert_cmpint (t, >=, 227785);
  g_assert_cmpint (t, <=, 227787);
  plan.sp = TRUE;
  ModelOp qkv = model_op_gemm ("qkv", MODEL_PHASE_FWD, MODEL_GRAD_NONE, 2048, 9216, 12288, 1, MODEL_DTYPE_BF16,
                               MODEL_DTYPE_BF16);
  t = sim_gpu_op_ns (&g, &plan, &qkv);
  g_assert_cmpint (t, >=, 4 * 171950);
  g_assert_cmpint (t, <=, 4 * 171952);
  g_assert_true (model_ub_parse ("ring_exchange aggregate", &plan.ub[MODEL_UB_QKV_FPROP], &error));
  t = sim_gpu_op_ns (&g, &plan, &qkv);
  g_assert_cmpint (t, >=, 2 * 339455);
  g_assert_cmpint (t, <=, 2 * 339457);
  /* A GEMM the overlap does not cut times as its kernel. */
  ModelOp head = model_op_gemm ("lm_head", MODEL_PHASE_FWD, MODEL_GRAD_NONE, 2048, 9216, 12288, 1,
                                MODEL_DTYPE_BF16, MODEL_DTYPE_BF16);
  SimGpuKernel k = { SIM_KERNEL_GEMM, MODEL_DTYPE_BF16, head.flops, head.bytes_read + head.bytes_written,
                     2048, 9216, 12288, 0 };
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &head), ==, sim_gpu_kernel_ns (&g, &k));
  ModelOp wgrad = model_op_gemm ("fc1_wgrad", MODEL_PHASE_BWD, MODEL_GRAD_WEIGHT, 12288, 2048, 8192, 1,
                                 MODEL_DTYPE_BF16, MODEL_DTYPE_BF16);
  SimGpuKernel wk = { SIM_KERNEL_GEMM, MODEL_DTYPE_BF16, wgrad.flops, wgrad.bytes_read + wgrad.bytes_written,
                      12288, 2048, 8192, 0 };
  gint64 plain = sim_gpu_kernel_ns (&g, &wk);
  wk.sms = 116;
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &wgrad), ==, sim_gpu_kernel_ns (&g, &wk));
  g_assert_cmpint (sim_gpu_kernel_ns (&g, &wk), >, plain);
  plan.ub_defaults = MODEL_UB_DEFAULTS_TE1;
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &wgrad), ==, plain);
}

/* Layer CUDA graphs: a layer's kernels lose their launch gap (3,000 ns in spec_of), one per kernel
 * (a userbuffers GEMM cut in 4 runs 4); embedding, head and loss kernels keep theirs. */
static void
test_cuda_graphs (void)
{
  SimGpuSpec g;
  spec_of (&g);
  g_assert_cmpint (g.launch_ns, ==, 3000);
  ModelPlan plan;
  model_plan_init (&plan);
  ModelOp norm = model_op_membound ("ln1", MODEL_PHASE_FWD, 64e6, 32e6, 0, MODEL_DTYPE_BF16);
  norm.layer = 3;
  ModelOp head = model_op_gemm ("lm_head", MODEL_PHASE_FWD, MODEL_GRAD_NONE, 2048, 9216, 12288, 1,
                                MODEL_DTYPE_BF16, MODEL_DTYPE_BF16);
  head.layer = -1;
  plan.tp = 4;
  plan.sp = TRUE;
  plan.tp_comm_overlap = TRUE;
  ModelOp qkv = model_op_gemm ("qkv", MODEL_PHASE_FWD, MODEL_GRAD_NONE, 2048, 9216, 12288, 1, MODEL_DTYPE_BF16,
                               MODEL_DTYPE_BF16);
  qkv.layer = 0;
  gint64 eager_norm = sim_gpu_op_ns (&g, &plan, &norm), eager_head = sim_gpu_op_ns (&g, &plan, &head);
  gint64 eager_qkv = sim_gpu_op_ns (&g, &plan, &qkv);
  plan.cuda_graphs = TRUE;
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &norm), ==, eager_norm - 3000);
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &head), ==, eager_head);
  g_assert_cmpint (sim_gpu_op_ns (&g, &plan, &qkv), ==, eager_qkv - 4 * 3000);
}

/* The scenario syntax: what parses and what is refused with a reason. */
static void
test_userbuffers_parse (void)
{
  ModelUbConfig c;
  GError *error = NULL;
  g_assert_true (model_ub_parse ("  bulk  sm=8 ", &c, &error));
  g_assert_cmpint (c.method, ==, MODEL_UB_BULK);
  g_assert_cmpint (c.num_sm, ==, 8);
  g_assert_false (c.sm_margin);
  g_assert_true (model_ub_parse ("pipeline margin", &c, &error));
  g_assert_cmpint (c.splits, ==, 4);
  g_assert_cmpint (c.num_sm, ==, 16);
  const char *bad[] = { "", "ring", "pipeline splits=0", "pipeline splits=x", "bulk aggregate",
                        "ring_exchange splits=2", "bulk sm=-1", "pipeline sm=4 fast" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (model_ub_parse (bad[i], &c, &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
    }
  ModelUbConfig none = { 0 };
  g_assert_cmpint (model_ub_resolve (none, MODEL_UB_FC2_DGRAD, MODEL_UB_DEFAULTS_TE2).method, ==,
                   MODEL_UB_RING_EXCHANGE);
  g_assert_true (model_ub_resolve (none, MODEL_UB_FC2_FPROP, MODEL_UB_DEFAULTS_TE2).sm_margin);
  g_assert_false (model_ub_resolve (none, MODEL_UB_FC2_FPROP, MODEL_UB_DEFAULTS_TE1).sm_margin);
  g_assert_cmpint (model_ub_gemm_of_op ("fc2_dgrad"), ==, MODEL_UB_FC2_DGRAD);
  g_assert_cmpint (model_ub_gemm_of_op ("lm_head"), ==, -1);
}

/* Streams. Ops: 0 A compute 100 ns; 1 B compute 50 ns, needs C; 2 C asynchronous, finishes 150 ns
 * after it starts; 3 D compute 10 ns, no dependency but queued behind B on the compute stream.
 * Stream 0: A, B, D; stream 1: C. Expected: A and C start at 0 (A overlapped with C); B waits for
 * C (150) although the stream is free at 100; D, in order behind B, starts at 200, not at 100. */
typedef struct {
  SimEngine *engine;
  SimGpu *gpu;
  gboolean done[4];
  gint64 start[4];
  gboolean overlapped[4];
} Ctx;

static gboolean
ready (gpointer user, int gpu, guint32 op)
{
  Ctx *c = user;
  return op != 1 || c->done[2];
}

static void
finish_c (SimEngine *engine, gpointer data, guint64 arg)
{
  Ctx *c = data;
  sim_gpu_finish (c->gpu, 1);
}

static gint64
start (gpointer user, int gpu, guint32 op, gboolean overlapped)
{
  Ctx *c = user;
  static const gint64 dur[4] = { 100, 50, -1, 10 };
  c->start[op] = sim_engine_now (c->engine);
  c->overlapped[op] = overlapped;
  if (op == 2)
    sim_engine_after (c->engine, 150, finish_c, c, 0);
  return dur[op];
}

static void
done (gpointer user, int gpu, guint32 op, gint64 start_ns)
{
  Ctx *c = user;
  c->done[op] = TRUE;
  if (op == 2)
    sim_gpu_poke (c->gpu, 0);
}

static void
test_streams (void)
{
  static const guint32 s0[] = { 0, 1, 3 }, s1[] = { 2 };
  static const SimGpuHooks hooks = { ready, start, done };
  Ctx c = { 0 };
  c.engine = sim_engine_new ();
  c.gpu = sim_gpu_new (c.engine, 0, 2, &hooks, &c);
  sim_gpu_set_stream (c.gpu, 0, s0, 3);
  sim_gpu_set_stream (c.gpu, 1, s1, 1);
  sim_gpu_poke (c.gpu, 1);
  sim_gpu_poke (c.gpu, 0);
  sim_engine_run (c.engine, -1);
  g_assert_cmpint (c.start[0], ==, 0);
  g_assert_cmpint (c.start[2], ==, 0);
  g_assert_true (c.overlapped[0]);
  g_assert_cmpint (c.start[1], ==, 150);
  g_assert_false (c.overlapped[1]);
  g_assert_cmpint (c.start[3], ==, 200);
  g_assert_cmpint (sim_gpu_pending (c.gpu, 0), ==, 0);
  g_assert_cmpint (sim_gpu_busy_ns (c.gpu, 0), ==, 160);
  g_assert_cmpint (sim_gpu_busy_ns (c.gpu, 1), ==, 150);
  g_assert_cmpint (sim_gpu_last_end_ns (c.gpu, 0), ==, 210);
  sim_gpu_free (c.gpu);
  sim_engine_free (c.engine);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/gpu/gemm", test_gemm);
  g_test_add_func ("/sim/gpu/gemm-efficiency-per-dtype", test_dtypes);
  g_test_add_func ("/sim/gpu/waves", test_waves);
  g_test_add_func ("/sim/gpu/split-k", test_split_k);
  g_test_add_func ("/sim/gpu/memory-attention", test_memory_attention);
  g_test_add_func ("/sim/gpu/attention-kernels", test_attention_kernels);
  g_test_add_func ("/sim/gpu/unfused-attention", test_unfused_attention);
  g_test_add_func ("/sim/gpu/userbuffers", test_userbuffers);
  g_test_add_func ("/sim/gpu/userbuffers-parse", test_userbuffers_parse);
  g_test_add_func ("/sim/gpu/cuda-graphs", test_cuda_graphs);
  g_test_add_func ("/sim/gpu/streams", test_streams);
  return g_test_run ();
}
