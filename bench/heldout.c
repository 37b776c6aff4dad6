/* bench/heldout: the error a user meets outside the calibration deck. Every embedded run scenario
 * that carries a published step time (`measured_step_time_s`), plus the published variants that the
 * scenarios' comments cite at another size or setting, torchtitan's and llm-foundry's benchmark
 * tables (below), simulated with the shipped layers:
 * predicted step, 90% band, measured, error, inside the band; then the count, median |error|, MAPE,
 * max |error| and band coverage, overall and per source family (with its mean signed error: a family
 * the model is fast or slow on shows as a bias, not only as scatter). None of these runs is a row of
 * ../shared/validation/deck.csv, so none was used in a fit (`trainsim fit --runs`).
 *
 * Usage: bench/heldout [--tsv FILE]
 *   --tsv: the table as TSV (run, gpus, predicted_s, lo_s, hi_s, measured_s, error_pct, in_band) */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gio/gio.h>
#include <glib.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include "sim/calibrate/validate.h"
#include "sim/scenario/scenario.h"
#include "sim/step/runner.h"
#include "sim/des/heap.h"

#define RUNS "/trainsim/scenarios/runs/"

/* Run scenarios that are deck rows too (so fitted), left out: the v3.1 GPT-3 seed
 * (mlperf_v3p1_gpt3_nvidia_eos-dfw_n1344_ngc23p09_nemo), its Azure twin
 * (mlperf_v3p1_gpt3_azure_nvidia_ND_H100_v5_n1344_pytorch), v4.0 GPT-3
 * (mlperf_v4p0_gpt3_nvidia_eos-dfw_n1344_ngc24p04_nemo) and Azure's v6.0 405B
 * (mlperf_v6p0_llama31_405b_azure_gb200_8192). */
static const char *const in_deck[] = { "runs/gpt3-175b-mlperf-v3.1.ini", "runs/gpt3-175b-mlperf-v3.1-azure.ini",
                                       "runs/gpt3-175b-mlperf-v4.0.ini", "runs/llama31-405b-gb200-mlperf-v6.0.ini",
                                       NULL };

/* Published step times at a size or setting other than the scenario's own, each as the scenario's
 * comment (or the README section named) derives it. */
typedef struct {
  const char *label;
  const char *files[4];  /* the run scenario, then profiles that replace its hardware or fabric */
  const char *sets[10];
  double measured_s;
} Variant;

#define NV72 "runs/llama31-8b-gb200-mlperf-v5.1-nvidia-72.ini"

static const Variant variants[] = {
  /* runs/gpt-177b-h100-megatron-strong-96.ini: the README's 42% MFU at 4,608 GPUs. */
  { "gpt-177b-h100-megatron-strong-96 @4608", { "runs/gpt-177b-h100-megatron-strong-96.ini", NULL },
    { "cluster.gpus=4608", NULL }, 2.7396 },
  /* runs/llama31-405b-h100-meta-16k.ini: Meta's 400 TFLOPS per GPU. */
  { "llama31-405b-h100-meta-16k (400 TFLOPS)", { "runs/llama31-405b-h100-meta-16k.ini", NULL }, { NULL }, 6.46 },
  /* runs/llama31-405b-h200-mlperf-v5.1-nebius.ini: Nebius's 64-node run. */
  { "llama31-405b-h200-mlperf-v5.1-nebius @512", { "runs/llama31-405b-h200-mlperf-v5.1-nebius.ini", NULL },
    { "cluster.gpus=512", NULL }, 50.014 },
  /* runs/llama31-8b-b200-mlperf-v5.1-nebius.ini: Nebius's 4-node and 2-node runs. */
  { "llama31-8b-b200-mlperf-v5.1-nebius @32", { "runs/llama31-8b-b200-mlperf-v5.1-nebius.ini", NULL },
    { "cluster.gpus=32", "parallel.micro_batch=1", "parallel.global_batch=32", NULL }, 0.2681 },
  { "llama31-8b-b200-mlperf-v5.1-nebius @16", { "runs/llama31-8b-b200-mlperf-v5.1-nebius.ini", NULL },
    { "cluster.gpus=16", "parallel.micro_batch=1", "parallel.global_batch=32", NULL }, 0.4959 },
  /* The same NVIDIA config (config_GB300_18x4x1xtp1pp1cp2_8b.sh) on GB300: NVIDIA's theia_ngpu72 and
   * Lambda's gb300_n18_ngc25.04_nemo (train_step_time medians, mlcommons/training_results_v5.1). */
  { "llama31-8b-gb300-mlperf-v5.1-nvidia-72", { NV72, "hardware/gb300.ini", NULL }, { NULL }, 0.1480 },
  { "llama31-8b-gb300-mlperf-v5.1-lambda-72", { NV72, "hardware/gb300.ini", NULL }, { NULL }, 0.1611 },
  /* Its B200 twin on 8 HGX nodes (config_DGXB200_8x8x1xtp1pp1cp2_8b.sh, global batch 32): Oracle's
   * 8xBM.GPU.B200.8 (0.1900 s; University of Florida's n8 0.1892 s and Verda's 8x8 0.1907 s ran the
   * same file). */
  { "llama31-8b-b200-mlperf-v5.1-oracle-64", { NV72, "hardware/b200.ini", "fabrics/ndr400-rail-optimized.ini", NULL },
    { "cluster.gpus=64", "cluster.gpus_per_node=8", "cluster.nvlink_domain=8", "cluster.gpus_per_domain_used=8",
      "parallel.global_batch=32", NULL },
    0.1900 },
  /* Other one-node B300 runs of the same benchmark, their settings as their logs print them:
   * Nebius's nebius_b300_n1 in NVFP4 with FP8 attention and no FP8 parameter gather (0.3941 s), and
   * Supermicro's AS-8126GS-NB3RT as Dell's but without CUDA graphs (enable_cuda_graph: 0; 0.5501 s). */
  { "llama31-8b-b300-mlperf-v5.1-nebius", { "runs/llama31-8b-b300-mlperf-v5.1-dell.ini", NULL },
    { "parallel.matmul_dtype=fp4", "parallel.fp8_attention=true", "parallel.fp8_param_gather=false", NULL }, 0.3941 },
  { "llama31-8b-b300-mlperf-v5.1-supermicro", { "runs/llama31-8b-b300-mlperf-v5.1-dell.ini", NULL },
    { "parallel.cuda_graphs=false", NULL }, 0.5501 },
  /* Cisco's H100 runs of NVIDIA's Llama 3.1 8B code (Cisco/benchmarks/llama31_8b/implementations/nemo:
   * config_DGXH100_8x8x1xtp1pp1cp1.sh and config_DGXH100_16x8x1xtp2pp1cp1.sh with config_common.sh:
   * FP8 with FP8 parameters, TP comm overlap, no CUDA graphs, global batch 64, conf/custom.yaml's fused
   * cross entropy as the HPE file has it; the FP8 recipe is not
   * set there, so the v5.1 code's tensor-wise current scaling is assumed) on 8 and 16 HGX H100 nodes
   * (hpf_n8 0.7205 s, hpf_n16 0.4851 s: calib/results/mlperf-v5.1/llama31_8b-steps.tsv). */
  { "llama31-8b-h100-mlperf-v5.1-cisco-64", { "runs/llama31-8b-h200-mlperf-v5.1-hpe.ini", "hardware/h100-sxm.ini", NULL },
    { "parallel.cp=1", "parallel.global_batch=64", "parallel.fp8_attention=false", "parallel.cuda_graphs=false",
      NULL },
    0.7205 },
  { "llama31-8b-h100-mlperf-v5.1-cisco-128", { "runs/llama31-8b-h200-mlperf-v5.1-hpe.ini", "hardware/h100-sxm.ini", NULL },
    { "cluster.gpus=128", "parallel.tp=2", "parallel.sp=true", "parallel.tp_comm_overlap=true", "parallel.cp=1",
      "parallel.global_batch=64", "parallel.fp8_attention=false", "parallel.cuda_graphs=false", NULL },
    0.4851 },
};

/* torchtitan's benchmark tables (pytorch/torchtitan benchmarks/): every row the simulator can take,
 * each with its published tokens per second per GPU (TPS). torchtitan logs
 * tps = local_batch x seq / (step x cp x tp x pp) (@9dec370 train.py: tokens of the rank's batch over
 * time x parallel_dims.non_data_parallel_size), so step = local_batch x seq / (TPS x cp x tp x pp).
 * FSDP2 throughout (zero 3; zero 2 under pipeline parallelism, torchtitan's default
 * reshard_after_forward policy, model/framework.c), micro-batch = local batch without PP; with PP
 * the local batch splits into pp micro-batches (@9dec370 pipelining_utils.py: n_microbatches
 * defaults to pipeline_parallel_degree) and the layers as generate_split_points splits them (first
 * and last stage num_layers // stages, the middle ones one more while the remainder lasts: 126
 * layers over 8 stages 15/16.../15, over 16 stages 7/8.../7), given as a pipeline layout. Sequence parallelism with TP (norms
 * SequenceParallel); AsyncTP as TP comm overlap; Float8 as torchao's tensorwise dynamic scaling
 * (current scaling), BF16 all-gathers (enable_fsdp_float8_all_gather off by default; the H200 rows
 * turn it on, which the simulator does not model for FSDP2: ASSUMPTION, BF16). Rows with
 * float8 rowwise scaling are left out (not modelled).
 * Attention: FlashAttention-2 (parallel.attention_kernel = fa2). torchtitan calls
 * F.scaled_dot_product_attention with PyTorch's default backend (@9dec370 torchtitan/models/llama/
 * model.py; only context parallelism narrows it), and PyTorch preferred FlashAttention-2 over cuDNN on
 * sm90 from pytorch/pytorch#138522 (cuDNN made opt-in after 2.5; #141274, 2024-11-21: "Since we
 * deprioritized cuDNN SDPA") until #162073 (2025-09, for 2.9); the H100 runs used torch 1963fc8 of
 * 2024-12-23, where #142132 reports the default SDPA at 329 TFLOP/s against cuDNN's 631 on an H100.
 * The four Table 1 and 3 runs without Float8 were in this bench before the others were added
 * (2026-11-28); nothing was fitted on any of them. */
typedef struct {
  const char *label, *hardware, *model;
  int gpus, tp, pp, vpp, cp, local_batch, seq;
  const char *layout; /* [parallel] pp_layout where the layers do not split evenly (its stages set vpp) */
  const char *recompute;
  gboolean compile, fp8, async_tp;
  double tps;
} Titan;

#define H100_96 "hardware/h100-sxm-hbm2e-96g.ini"
#define PP8_LAYOUT "Et*15|(t*16|)*6t*15L"
#define PP16_LAYOUT "Et*7|(t*8|)*14t*7L"
static const Titan titan[] = {
  /* benchmarks/llama3_h100_202412_torchtitan.md, Tables 1 and 3 (8B, FSDP, local batch 2, per-op SAC) */
  { "torchtitan 8B eager @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", FALSE, FALSE, FALSE, 5762 },
  { "torchtitan 8B eager @128", H100_96, "models/llama3.1-8b.ini", 128, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", FALSE, FALSE, FALSE, 5605 },
  { "torchtitan 8B compile @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", TRUE, FALSE, FALSE, 6667 },
  { "torchtitan 8B compile @128", H100_96, "models/llama3.1-8b.ini", 128, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", TRUE, FALSE, FALSE, 6514 },
  { "torchtitan 8B compile FP8 @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", TRUE, TRUE, FALSE, 8532 },
  { "torchtitan 8B compile FP8 @128", H100_96, "models/llama3.1-8b.ini", 128, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", TRUE, TRUE, FALSE, 8380 },
  /* Table 2: FSDP + CP, compile, Float8, full AC, local batch 1, 8 GPUs */
  { "torchtitan 8B CP1 32K @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 1, 1, 32768, NULL, "full", TRUE, TRUE, FALSE, 3890 },
  { "torchtitan 8B CP2 64K @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 2, 1, 65536, NULL, "full", TRUE, TRUE, FALSE, 2540 },
  { "torchtitan 8B CP4 128K @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 4, 1, 131072, NULL, "full", TRUE, TRUE, FALSE, 1071 },
  { "torchtitan 8B CP8 256K @8", H100_96, "models/llama3.1-8b.ini", 8, 1, 1, 1, 8, 1, 262144, NULL, "full", TRUE, TRUE, FALSE, 548 },
  /* Table 4: 70B, FSDP 32 x TP 8, compile, Float8, full AC, local batch 16 */
  { "torchtitan 70B TP8 FP8 @256", H100_96, "models/llama3.1-70b.ini", 256, 8, 1, 1, 1, 16, 8192, NULL, "full", TRUE, TRUE, FALSE, 829 },
  { "torchtitan 70B AsyncTP8 FP8 @256", H100_96, "models/llama3.1-70b.ini", 256, 8, 1, 1, 1, 16, 8192, NULL, "full", TRUE, TRUE, TRUE, 876 },
  /* Table 5: 405B, FSDP 8 x TP 8 x PP 8, compile, Float8, AsyncTP, full AC, local batch 32 */
  { "torchtitan 405B PP8 1F1B @512", H100_96, "models/llama3.1-405b.ini", 512, 8, 8, 1, 1, 32, 8192, PP8_LAYOUT, "full", TRUE, TRUE, TRUE, 100 },
  { "torchtitan 405B PP8 interleaved @512", H100_96, "models/llama3.1-405b.ini", 512, 8, 8, 2, 1, 32, 8192, PP16_LAYOUT, "full", TRUE, TRUE, TRUE, 128 },
  /* Table 6: 405B, TP 8 x PP 8 (1F1B) x CP, FSDP the rest, compile, Float8, AsyncTP, full AC, local batch 8 */
  { "torchtitan 405B PP8 CP1 32K @512", H100_96, "models/llama3.1-405b.ini", 512, 8, 8, 1, 1, 8, 32768, PP8_LAYOUT, "full", TRUE, TRUE, TRUE, 76 },
  { "torchtitan 405B PP8 CP2 64K @512", H100_96, "models/llama3.1-405b.ini", 512, 8, 8, 1, 2, 8, 65536, PP8_LAYOUT, "full", TRUE, TRUE, TRUE, 47 },
  { "torchtitan 405B PP8 CP4 128K @512", H100_96, "models/llama3.1-405b.ini", 512, 8, 8, 1, 4, 8, 131072, PP8_LAYOUT, "full", TRUE, TRUE, TRUE, 31 },
  { "torchtitan 405B PP8 CP8 256K @512", H100_96, "models/llama3.1-405b.ini", 512, 8, 8, 1, 8, 8, 262144, PP8_LAYOUT, "full", TRUE, TRUE, TRUE, 16 },
  /* benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md: 70B FSDP 32 x TP 8 full AC local batch 16;
   * 8B FSDP 8 x TP 8 per-op SAC local batch 12; compile; BF16 and Float8 tensorwise, vanilla and async TP */
  { "torchtitan 70B TP8 @256 (2025)", H100_96, "models/llama3.1-70b.ini", 256, 8, 1, 1, 1, 16, 8192, NULL, "full", TRUE, FALSE, FALSE, 597.3 },
  { "torchtitan 70B AsyncTP8 @256 (2025)", H100_96, "models/llama3.1-70b.ini", 256, 8, 1, 1, 1, 16, 8192, NULL, "full", TRUE, FALSE, TRUE, 652.4 },
  { "torchtitan 70B TP8 FP8 @256 (2025)", H100_96, "models/llama3.1-70b.ini", 256, 8, 1, 1, 1, 16, 8192, NULL, "full", TRUE, TRUE, FALSE, 809.8 },
  { "torchtitan 70B AsyncTP8 FP8 @256 (2025)", H100_96, "models/llama3.1-70b.ini", 256, 8, 1, 1, 1, 16, 8192, NULL, "full", TRUE, TRUE, TRUE, 942.4 },
  { "torchtitan 8B TP8 @64 (2025)", H100_96, "models/llama3.1-8b.ini", 64, 8, 1, 1, 1, 12, 8192, NULL, "selective_op", TRUE, FALSE, FALSE, 4378 },
  { "torchtitan 8B AsyncTP8 @64 (2025)", H100_96, "models/llama3.1-8b.ini", 64, 8, 1, 1, 1, 12, 8192, NULL, "selective_op", TRUE, FALSE, TRUE, 4809.4 },
  { "torchtitan 8B TP8 FP8 @64 (2025)", H100_96, "models/llama3.1-8b.ini", 64, 8, 1, 1, 1, 12, 8192, NULL, "selective_op", TRUE, TRUE, FALSE, 5078.1 },
  { "torchtitan 8B AsyncTP8 FP8 @64 (2025)", H100_96, "models/llama3.1-8b.ini", 64, 8, 1, 1, 1, 12, 8192, NULL, "selective_op", TRUE, TRUE, TRUE, 5570.1 },
  /* benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md: 8B FSDP, local batch 2, compile, Float8
   * (with FSDP float8 all-gather, see above), the llama3_8b.toml's selective per-op AC */
  { "torchtitan 8B compile FP8 H200 @32", "hardware/h200-sxm.ini", "models/llama3.1-8b.ini", 32, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", TRUE, TRUE, FALSE, 10938 },
  { "torchtitan 8B compile FP8 H200 @64", "hardware/h200-sxm.ini", "models/llama3.1-8b.ini", 64, 1, 1, 1, 1, 2, 8192, NULL, "selective_op", TRUE, TRUE, FALSE, 10753 },
};

/* llm-foundry's MPT training benchmarks (mosaicml/llm-foundry scripts/train/benchmarking/README.md,
 * tables "H100 80GB BF16" and "A100 80GB with 1600 Gbps node-node interconnect (RoCE)"): Composer
 * with FSDP FULL_SHARD, BF16, one node of 8 GPUs or more; the H100 runs used the image
 * mosaicml/pytorch:2.0.1_cu118 (its sweep.sh). Per table and model size from 760M to 70B, its
 * 2,048-token runs on the most and on the fewest GPUs the table gives (a rule fixed before any of
 * them was simulated; the A100 table has one such run below 70B). The shapes are the MPT yamls' (scripts/train/yamls/pretrain/
 * mpt-*.yaml: d_model, n_heads, n_layers, 4x MLP, vocab 50,368, tied, no biases); the table's
 * NumParams grow by d_model per token of max_seq_len, so its runs carry learned position embeddings,
 * not ALiBi. step = GlobalBatchSize x 2,048 / (Throughput (T/s/GPU) x GPUs). Attention: the 2022
 * FlashAttention in Triton (parallel.attention_kernel = triton): submit_benchmarks.py's --attn_impl
 * defaulted to 'triton' from 300cc5c (2023-05-03) to 7f0fdae (2024-03-26), b2a43a1 (2023-10-19) put
 * the H100 table in the README, and sweep.sh names no attn_impl; llm-foundry's attn_impl triton ran
 * llmfoundry/models/layers/flash_attn_triton.py, HazyResearch's flash_attn_triton.py on
 * triton-pre-mlir (setup.py). */
typedef struct {
  const char *label;
  gboolean a100;
  int layers, hidden, heads, gpus, micro_batch, global_batch;
  gboolean recompute;
  double tokens_per_s_per_gpu;
} Mpt;

static const Mpt mpt[] = {
  { "MPT-70B llm-foundry @64", FALSE, 80, 8192, 64, 64, 8, 2048, TRUE, 1039 },
  { "MPT-70B llm-foundry @32", FALSE, 80, 8192, 64, 32, 2, 1024, TRUE, 882 },
  { "MPT-30B llm-foundry @32", FALSE, 48, 7168, 56, 32, 14, 1344, TRUE, 2308 },
  { "MPT-30B llm-foundry @8", FALSE, 48, 7168, 56, 8, 3, 504, TRUE, 2002 },
  { "MPT-13B llm-foundry @64", FALSE, 40, 5120, 40, 64, 2, 128, FALSE, 4800 },
  { "MPT-13B llm-foundry @8", FALSE, 40, 5120, 40, 8, 2, 16, FALSE, 4792 },
  { "MPT-7B llm-foundry @8", FALSE, 32, 4096, 32, 8, 6, 48, FALSE, 10643 },
  { "MPT-3B llm-foundry @64", FALSE, 32, 2560, 20, 64, 6, 1152, FALSE, 22525 },
  { "MPT-3B llm-foundry @16", FALSE, 32, 2560, 20, 16, 10, 480, FALSE, 24142 },
  { "MPT-1B llm-foundry @64", FALSE, 24, 2048, 16, 64, 20, 1280, FALSE, 44402 },
  { "MPT-1B llm-foundry @8", FALSE, 24, 2048, 16, 8, 14, 112, FALSE, 45455 },
  { "MPT-760M llm-foundry @32", FALSE, 24, 1536, 12, 32, 24, 768, FALSE, 67971 },
  { "MPT-760M llm-foundry @8", FALSE, 24, 1536, 12, 8, 24, 384, FALSE, 63147 },
  { "MPT-70B llm-foundry A100 @64", TRUE, 80, 8192, 64, 64, 8, 2048, TRUE, 410 },
  { "MPT-70B llm-foundry A100 @32", TRUE, 80, 8192, 64, 32, 2, 1024, TRUE, 373 },
  { "MPT-30B llm-foundry A100 @8", TRUE, 48, 7168, 56, 8, 3, 504, TRUE, 916 },
  { "MPT-13B llm-foundry A100 @8", TRUE, 40, 5120, 40, 8, 2, 48, FALSE, 2262 },
  { "MPT-7B llm-foundry A100 @8", TRUE, 32, 4096, 32, 8, 6, 96, FALSE, 4641 },
  { "MPT-3B llm-foundry A100 @8", TRUE, 32, 2560, 20, 8, 10, 160, FALSE, 10811 },
  { "MPT-1B llm-foundry A100 @8", TRUE, 24, 2048, 16, 8, 14, 448, FALSE, 20513 },
  { "MPT-760M llm-foundry A100 @8", TRUE, 24, 1536, 12, 8, 24, 384, FALSE, 32434 },
};

/* NVIDIA NeMo's long-sequence table for Llama 2 7B on DGX-H100, FP8, NeMo 24.03.01 container
 * (NVIDIA/NeMo docs/source/performance/performance_long_sequence.md, "LLAMA2-7B (FP8) - H100",
 * a2c4cc8ee6): its runs with context parallelism, 4K to 1M tokens per sequence at 4M tokens per step.
 * The table gives model TFLOP/s per GPU; step = F / (TFLOP/s x GPUs) with NeMo's Llama 2 count
 * (nemo/utils/flops_formulas.py llama2: F = B s L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h)),
 * attention counted non-causal; the launcher's GPT-3 formula of the period, 24 for the first three
 * terms, differs by 0.5%), L 32, h 4096, a = g = 32, f 11008, V 32000. Not in the table, taken as
 * NeMo 24.03's defaults (ASSUMPTION): micro-batch 1, no activation recompute, sequence parallelism
 * with TP, no TP comm overlap (ub_tp_comm_overlap False), the distributed optimizer overlapped, FP8
 * delayed scaling; Transformer Engine 1.4 runs cuDNN's fused attention on sm90 with context
 * parallelism too (transformer_engine/pytorch/attention.py, v1.4). This family was looked at before
 * attention took the 16-bit GEMM in-situ scale (sim/calibrate/calibration.h), so it is not blind
 * to that choice; no constant is fitted on it. */
typedef struct {
  int seq_k, gpus, batch;
  double tflops;
  int tp, pp, cp;
} LongSeq;

static const LongSeq longseq[] = {
  { 4, 4, 1024, 768, 1, 1, 1 },    { 8, 8, 512, 730, 1, 2, 1 },       { 16, 16, 256, 660, 2, 1, 1 },
  { 32, 32, 128, 610, 2, 1, 2 },   { 64, 64, 64, 574, 4, 1, 2 },      { 128, 128, 32, 555, 4, 1, 4 },
  { 256, 256, 16, 549, 4, 1, 8 },  { 512, 512, 8, 549, 4, 1, 16 },    { 1024, 1024, 4, 536, 8, 1, 32 },
};

/* NVIDIA NeMo's 24.07 performance table (NVIDIA/NeMo docs/source/performance/performance_summary.md,
 * its first version, 4c73f77670, as the deck's rows): its five rows the deck leaves out, as deck rows
 * (../shared/validation/DECK.md) that `trainsim validate` models with the deck's NeMo-table rules
 * (sim/calibrate/validate.c: the launcher's yamls and examples of tag 24.07). Shapes: conf/training
 * gpt3/20b.yaml, llama/llama2_7b.yaml and llama2_13b.yaml (Llama 2's published shapes), nemotron/
 * nemotron_8b.yaml and nemotron_22b.yaml (squared-ReLU, LayerNorm1p, rope, untied, vocabulary 256,000);
 * each agrees with the table's TFLOP/s over tokens/s to 0.1% (Megatron's count). Step = GBS x seq /
 * (tokens/s/GPU x GPUs); no activation recompute, the distributed optimizer and sequence parallelism
 * with TP, as for the deck's rows of the table (ASSUMPTION there too). */
#define NEMO_SOURCE "\"NVIDIA NeMo performance summary, NeMo 24.07 container\""
static const struct {
  const char *row, *rest; /* the deck's columns before and after step_time_s */
  double tokens_per_s_per_gpu;
  int gbs, seq, gpus;
} nemo_rows[] = {
  { "nemo2407_gpt3-20b_64," NEMO_SOURCE ",GPT3-20B,gpt,44,6144,48,48,24576,50257,2048,gelu,0,0,0,256,2,64,"
    "h100-sxm,8,8,400,2,1,1,1,32,1,1,1,0,none,fp8,", ",tokens_per_s,medium,n,nemo,", 5851, 256, 2048, 64 },
  { "nemo2407_llama2-7b_8," NEMO_SOURCE ",LLAMA2-7B,llama,32,4096,32,32,11008,32000,4096,swiglu,0,0,0,128,1,8,"
    "h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,fp8,", ",tokens_per_s,medium,n,nemo,", 16847, 128, 4096, 8 },
  { "nemo2407_llama2-13b_16," NEMO_SOURCE ",LLAMA2-13B,llama,40,5120,40,40,13824,32000,4096,swiglu,0,0,0,128,1,16,"
    "h100-sxm,8,8,400,1,4,10,1,4,1,0,1,0,none,fp8,", ",tokens_per_s,medium,n,nemo,", 8646, 128, 4096, 16 },
  { "nemo2407_nemotron-8b_64," NEMO_SOURCE ",Nemotron-8B,other,32,4096,32,32,16384,256000,4096,gelu,0,0,0,256,4,64,"
    "h100-sxm,8,8,400,2,1,1,1,32,1,1,1,0,none,fp8,", ",tokens_per_s,medium,n,nemo,"
    "mlp_act=squared_relu;norm=layernorm;position=rope", 12701, 256, 4096, 64 },
  { "nemo2407_nemotron-22b_64," NEMO_SOURCE ",Nemotron-22B,other,40,6144,48,48,24576,256000,4096,gelu,0,0,0,256,2,64,"
    "h100-sxm,8,8,400,2,4,10,1,8,1,1,1,0,none,fp8,", ",tokens_per_s,medium,n,nemo,"
    "mlp_act=squared_relu;norm=layernorm;position=rope", 4256, 256, 4096, 64 },
};

typedef struct {
  char *label;
  const char *family;  /* the source family the summary groups by */
  int gpus;
  double pred, lo, hi, measured, err;
} Row;

static const char *const families[] = { "run scenarios and their variants", "torchtitan", "llm-foundry MPT, H100",
                                        "llm-foundry MPT, A100", "NeMo long sequence, H100 (seen)",
                                        "NeMo 24.07 table rows not in the deck" };

static gboolean
predict (const char *const *files, const char *const *sets, Row *row, GError **error)
{
  g_autoptr (SimScenario) sc = sim_scenario_load (files, sets, error);
  if (sc == NULL)
    return FALSE;
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  o.run.memory_advisory = TRUE; /* a plan that ran is timed whatever the memory model says */
  SimRunnerPrediction p;
  if (!sim_runner_predict (sc, &o, &p, error))
    return FALSE;
  row->gpus = sim_scenario_cluster (sc)->gpus;
  row->pred = p.step_s;
  row->lo = p.step_lo_s;
  row->hi = p.step_hi_s;
  if (row->measured <= 0)
    row->measured = sim_scenario_run (sc)->measured_step_time_s;
  row->err = 100.0 * (row->pred - row->measured) / row->measured;
  return TRUE;
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  const char *tsv_path = NULL;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--tsv") == 0 && i + 1 < argc)
      tsv_path = argv[++i];
    else
      {
        fprintf (stderr, "usage: bench/heldout [--tsv FILE]\n");
        return 2;
      }
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (Row));
  GError *error = NULL;
  /* Loading a scenario registers the embedded ones (sim/scenario/scenario.c registers on first use). */
  g_autoptr (SimScenario) first = sim_scenario_load (NULL, NULL, &error);
  if (first == NULL)
    {
      fprintf (stderr, "bench/heldout: %s\n", error->message);
      return 1;
    }
  g_auto (GStrv) names = g_resources_enumerate_children (RUNS, G_RESOURCE_LOOKUP_FLAGS_NONE, &error);
  if (names == NULL)
    {
      fprintf (stderr, "bench/heldout: %s\n", error->message);
      return 1;
    }
  for (int i = 0; names[i]; i++)
    {
      g_autofree char *file = g_strconcat ("runs/", names[i], NULL);
      if (g_strv_contains (in_deck, file))
        continue;
      const char *files[] = { file, NULL };
      g_autoptr (SimScenario) sc = sim_scenario_load (files, NULL, &error);
      if (sc == NULL)
        break;
      if (sim_scenario_run (sc)->measured_step_time_s <= 0
          || sim_scenario_run (sc)->measured_gpus != sim_scenario_cluster (sc)->gpus)
        continue;
      Row r = { g_strndup (names[i], strlen (names[i]) - strlen (".ini")), families[0] };
      if (!predict (files, NULL, &r, &error))
        break;
      g_array_append_val (rows, r);
    }
  for (guint i = 0; error == NULL && i < G_N_ELEMENTS (variants); i++)
    {
      Row r = { g_strdup (variants[i].label), families[0], .measured = variants[i].measured_s };
      if (predict (variants[i].files, variants[i].sets, &r, &error))
        g_array_append_val (rows, r);
    }
  for (guint i = 0; error == NULL && i < G_N_ELEMENTS (titan); i++)
    {
      const Titan *t = &titan[i];
      const char *files[] = { t->hardware, "fabrics/ndr400-rail-optimized.ini", t->model, NULL };
      int dp = t->gpus / (t->tp * t->pp * t->cp);
      g_autofree char *gpus = g_strdup_printf ("cluster.gpus=%d", t->gpus);
      g_autofree char *tp = g_strdup_printf ("parallel.tp=%d", t->tp);
      g_autofree char *pp = g_strdup_printf ("parallel.pp=%d", t->pp);
      g_autofree char *vpp = g_strdup_printf ("parallel.vpp=%d", t->vpp); /* a layout's stages must agree */
      g_autofree char *cp = g_strdup_printf ("parallel.cp=%d", t->cp);
      g_autofree char *batch = g_strdup_printf ("parallel.global_batch=%d", t->local_batch * dp);
      g_autofree char *mb = g_strdup_printf ("parallel.micro_batch=%d", t->pp > 1 ? t->local_batch / t->pp : t->local_batch);
      g_autofree char *seq = g_strdup_printf ("training.seq_len=%d", t->seq);
      g_autofree char *rc = g_strdup_printf ("parallel.recompute=%s", t->recompute);
      g_autofree char *layout = t->layout ? g_strdup_printf ("parallel.pp_layout=%s", t->layout) : NULL;
      const char *sets[24] = { gpus, tp, pp, vpp, cp, batch, mb, seq, rc, "parallel.framework=fsdp2",
                               t->pp > 1 ? "parallel.zero=2" : "parallel.zero=3", "parallel.fsdp=true",
                               t->compile ? "parallel.compile=true" : "parallel.compile=false",
                               t->fp8 ? "parallel.matmul_dtype=fp8" : "parallel.matmul_dtype=bf16",
                               "parallel.attention_kernel=fa2", NULL };
      int n = 15;
      if (t->fp8)
        sets[n++] = "parallel.fp8_scaling=current";
      if (t->tp > 1)
        {
          sets[n++] = "parallel.sp=true";
          sets[n++] = t->async_tp ? "parallel.tp_comm_overlap=true" : "parallel.tp_comm_overlap=false";
        }
      if (layout)
        sets[n++] = layout;
      sets[n] = NULL;
      Row r = { g_strdup (t->label), families[1],
                .measured = (double) t->local_batch * t->seq / (t->tps * t->cp * t->tp * t->pp) };
      if (predict (files, sets, &r, &error))
        g_array_append_val (rows, r);
    }
  for (guint i = 0; error == NULL && i < G_N_ELEMENTS (mpt); i++)
    {
      const Mpt *m = &mpt[i];
      const char *files[] = { m->a100 ? "hardware/a100-sxm-80g.ini" : "hardware/h100-sxm.ini",
                              m->a100 ? "fabrics/hdr200-rail-optimized.ini" : "fabrics/ndr400-rail-optimized.ini",
                              "models/mpt-70b.ini", NULL };
      g_autofree char *layers = g_strdup_printf ("model.layers=%d", m->layers);
      g_autofree char *hidden = g_strdup_printf ("model.hidden=%d", m->hidden);
      g_autofree char *heads = g_strdup_printf ("model.heads=%d", m->heads);
      g_autofree char *kv = g_strdup_printf ("model.kv_heads=%d", m->heads);
      g_autofree char *ffn = g_strdup_printf ("model.ffn_hidden=%d", 4 * m->hidden);
      g_autofree char *gpus = g_strdup_printf ("cluster.gpus=%d", m->gpus);
      g_autofree char *mb = g_strdup_printf ("parallel.micro_batch=%d", m->micro_batch);
      g_autofree char *gb = g_strdup_printf ("parallel.global_batch=%d", m->global_batch);
      const char *sets[] = { layers, hidden, heads, kv, ffn, "model.position=learned", gpus, mb, gb,
                             "parallel.framework=composer", "parallel.zero=3", "parallel.fsdp=true",
                             "parallel.grad_accum=autograd", /* model/framework.c: Composer accumulates in autograd */
                             "parallel.matmul_dtype=bf16", "parallel.param_dtype=bf16", "parallel.dp_overlap=true",
                             m->recompute ? "parallel.recompute=full" : "parallel.recompute=none",
                             "training.seq_len=2048", "parallel.attention_kernel=triton", NULL };
      Row r = { g_strdup (m->label), families[m->a100 ? 3 : 2],
                .measured = (double) m->global_batch * 2048 / (m->tokens_per_s_per_gpu * m->gpus) };
      if (predict (files, sets, &r, &error))
        g_array_append_val (rows, r);
    }
  for (guint i = 0; error == NULL && i < G_N_ELEMENTS (longseq); i++)
    {
      const LongSeq *q = &longseq[i];
      const double L = 32, h = 4096, f = 11008, V = 32000, seq = q->seq_k * 1024.0;
      double flops = q->batch * seq * L * h * h * (12 + 12 + 18 * f / h + 12 * seq / h + 6 * V / (L * h));
      const char *files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "models/llama3.1-8b.ini",
                              NULL };
      int per_node = MIN (q->gpus, 8);
      g_autofree char *gpus = g_strdup_printf ("cluster.gpus=%d", q->gpus);
      g_autofree char *node = g_strdup_printf ("cluster.gpus_per_node=%d", per_node);
      g_autofree char *domain = g_strdup_printf ("cluster.nvlink_domain=%d", per_node);
      g_autofree char *tp = g_strdup_printf ("parallel.tp=%d", q->tp);
      g_autofree char *pp = g_strdup_printf ("parallel.pp=%d", q->pp);
      g_autofree char *cp = g_strdup_printf ("parallel.cp=%d", q->cp);
      g_autofree char *gb = g_strdup_printf ("parallel.global_batch=%d", q->batch);
      g_autofree char *sl = g_strdup_printf ("training.seq_len=%.0f", seq);
      const char *sets[] = { "model.name=Llama 2 7B", "model.kv_heads=32", "model.ffn_hidden=11008", "model.vocab=32000",
                             gpus, node, domain, tp, pp, cp, q->tp > 1 ? "parallel.sp=true" : "parallel.sp=false",
                             "parallel.micro_batch=1", gb, "parallel.zero=1", "parallel.dp_overlap=true",
                             "parallel.matmul_dtype=fp8", "parallel.framework=nemo", sl, NULL };
      Row r = { g_strdup_printf ("NeMo Llama 2 7B %dK tokens cp%d @%d", q->seq_k, q->cp, q->gpus), families[4],
                .measured = flops / (q->tflops * 1e12 * q->gpus) };
      if (predict (files, sets, &r, &error))
        g_array_append_val (rows, r);
    }
  for (guint i = 0; error == NULL && i < G_N_ELEMENTS (nemo_rows); i++)
    {
      const char *header = "id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,"
                           "moe_experts,moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,"
                           "nvlink_domain,nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,"
                           "precision,step_time_s,step_time_basis,confidence,notes,framework,arch\n";
      double step = (double) nemo_rows[i].gbs * nemo_rows[i].seq
                    / (nemo_rows[i].tokens_per_s_per_gpu * nemo_rows[i].gpus);
      g_autofree char *text = g_strdup_printf ("%s%s%.6f%s\n", header, nemo_rows[i].row, step, nemo_rows[i].rest);
      g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "bench/heldout.c", &error);
      if (deck == NULL)
        break;
      SimValidateOptions o = { NULL, NULL, 1, FALSE, FALSE, FALSE, 0, FALSE };
      SimValidateResult res;
      const SimValidateRow *vr = sim_validate_deck_row (deck, 0);
      sim_validate_run_row (vr, &o, &res);
      if (res.status != SIM_VALIDATE_OK)
        {
          g_set_error (&error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", vr->id, res.reason);
          sim_validate_result_clear (&res);
          break;
        }
      Row r = { g_strdup (vr->id), families[5], nemo_rows[i].gpus, res.predicted_s, res.band_lo_s, res.band_hi_s,
                step, res.error_pct };
      sim_validate_result_clear (&res);
      g_array_append_val (rows, r);
    }
  if (error != NULL)
    {
      fprintf (stderr, "bench/heldout: %s\n", error->message);
      return 1;
    }
  FILE *tsv = tsv_path ? fopen (tsv_path, "w") : NULL;
  if (tsv_path && !tsv)
    {
      fprintf (stderr, "bench/heldout: cannot write %s\n", tsv_path);
      return 1;
    }
  if (tsv)
    fprintf (tsv, "run\tgpus\tpredicted_s\tlo_s\thi_s\tmeasured_s\terror_pct\tin_band\n");
  printf ("%-44s %7s %10s %21s %10s %8s %5s\n", "run", "GPUs", "predicted", "90% band", "measured", "error",
          "band");
  guint n = rows->len, inside = 0, banded = 0;
  g_autofree double *abs_err = g_new (double, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const Row *r = &g_array_index (rows, Row, i);
      gboolean has_band = r->hi > 0, in = has_band && r->lo <= r->measured && r->measured <= r->hi;
      banded += has_band;
      inside += in;
      abs_err[i] = fabs (r->err);
      printf ("%-44s %7d %10.4f %10.4f-%-10.4f %10.4f %+7.1f%% %5s\n", r->label, r->gpus, r->pred, r->lo, r->hi,
              r->measured, r->err, has_band ? (in ? "in" : "OUT") : "-");
      if (tsv)
        fprintf (tsv, "%s\t%d\t%.6g\t%.6g\t%.6g\t%.6g\t%.3f\t%d\n", r->label, r->gpus, r->pred, r->lo, r->hi,
                 r->measured, r->err, in);
    }
  if (tsv)
    fclose (tsv);
  if (n > 0)
    {
      double mape = 0;
      for (guint i = 0; i < n; i++)
        mape += abs_err[i] / n;
      gsl_sort (abs_err, 1, n);
      printf ("%u runs never fitted: median |error| %.1f%%, MAPE %.1f%%, max %.1f%%; measured inside the 90%% band "
              "in %u of %u\n",
              n, gsl_stats_median_from_sorted_data (abs_err, 1, n), mape, abs_err[n - 1], inside, banded);
    }
  /* Per family: where the error sits by source and framework. */
  g_autofree double *fam_err = g_new (double, MAX (n, 1));
  for (gsize f = 0; f < G_N_ELEMENTS (families); f++)
    {
      guint m = 0, in_f = 0;
      double mape = 0, bias = 0;
      for (guint i = 0; i < n; i++)
        {
          const Row *r = &g_array_index (rows, Row, i);
          if (r->family != families[f])
            continue;
          fam_err[m++] = fabs (r->err);
          mape += fabs (r->err);
          bias += r->err;
          in_f += r->hi > 0 && r->lo <= r->measured && r->measured <= r->hi;
        }
      if (m == 0)
        continue;
      gsl_sort (fam_err, 1, m);
      printf ("  %-36s %2u runs: median |error| %.1f%%, MAPE %.1f%%, mean error %+.1f%%, %u in band\n", families[f], m,
              gsl_stats_median_from_sorted_data (fam_err, 1, m), mape / m, bias / m, in_f);
    }
  for (guint i = 0; i < n; i++)
    g_free (g_array_index (rows, Row, i).label);
  return 0;
}
