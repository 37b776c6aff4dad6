/* Per-GPU memory against published formulas and figures. */
#include <math.h>
#include "model/memory.h"
#include "tests/model-presets.h"

#define GB 1e9
#define GIB (1024.0 * 1024.0 * 1024.0)

static void
assert_rel (double got, double want, double tol)
{
  if (!(fabs (got - want) <= tol * fabs (want)))
    g_error ("got %.17g want %.17g (rel %.3g > %.3g)", got, want, fabs (got - want) / fabs (want), tol);
}

static ModelShape
finished (ModelShape s)
{
  g_assert_true (model_shape_finish (&s, NULL));
  return s;
}

/* ZeRO (Rajbhandari et al. 2020) Fig. 1: Ψ = 7.5B, K = 12, Nd = 64, fp16 params and grads:
 * baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB (the paper rounds to 0.1 GB). */
static void
test_zero_paper (void)
{
  ModelPlan p;
  model_plan_init (&p);
  p.param_dtype = MODEL_DTYPE_FP16, p.grad_dtype = MODEL_DTYPE_FP16;
  p.framework = MODEL_FW_DEEPSPEED; /* the paper's ZeRO-2 shards gradients; Megatron's does not */
  const double want[4] = { 120.0, 31.4, 16.6, 1.9 };
  for (int z = 0; z <= 3; z++)
    {
      p.zero = z;
      double w, g, o;
      model_memory_states (&p, 7.5e9, 64, &w, &g, &o);
      g_assert_cmpfloat (fabs ((w + g + o) / GB - want[z]), <, 0.05);
    }
  /* The closed forms: 16Ψ, (4 + 12/Nd)Ψ, (2 + 14/Nd)Ψ, 16Ψ/Nd exactly. */
  double w, g, o;
  p.zero = 2;
  model_memory_states (&p, 7.5e9, 64, &w, &g, &o);
  assert_rel (w + g + o, (2 + 14.0 / 64) * 7.5e9, 1e-15);
}

/* Megatron-LM docs/distrib_optimizer.md: bf16 params with fp32 grads take 18 bytes per parameter
 * without and 6 + 12/d with the distributed optimizer; bf16 moments take 4 bytes of the 12. */
static void
test_megatron_distributed_optimizer (void)
{
  ModelPlan p;
  model_plan_init (&p); /* bf16 params, fp32 grads */
  double w, g, o;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (w + g + o, ==, 18.0);
  p.zero = 1;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (w + g + o, ==, 6.0 + 12.0 / 8);
  /* Megatron has no ZeRO-2 of its own: zero 2 keeps the full gradient buffer as zero 1 does; with
   * fsdp (Megatron-FSDP's optim_grads) the gradients are sharded. */
  p.zero = 2;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (w + g + o, ==, 6.0 + 12.0 / 8);
  p.fsdp = TRUE;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (w + g + o, ==, 2.0 + 16.0 / 8);
  /* AdamW's moments in bf16 (DeepSeek-V3 §3.3.3): 4 + 2 + 2 = 8 optimizer bytes instead of 12. */
  p.fsdp = FALSE;
  p.zero = 0;
  p.moment_dtype = MODEL_DTYPE_BF16;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (o, ==, 8.0);
  g_assert_cmpfloat (w + g + o, ==, 14.0);
  /* NeMo's Apex optimizer: with fp32 state, 16-bit remainders instead of the fp32 master (2 + 8);
   * with bf16 state, no master (2 + 2). An fp32 model has no master to shrink. */
  p.moment_dtype = MODEL_DTYPE_FP32;
  p.master_weights = MODEL_MASTER_REMAINDER;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (o, ==, 10.0);
  p.moment_dtype = MODEL_DTYPE_BF16;
  p.master_weights = MODEL_MASTER_NONE;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (o, ==, 4.0);
  p.param_dtype = MODEL_DTYPE_FP32;
  p.master_weights = MODEL_MASTER_FP32;
  model_memory_states (&p, 1.0, 8, &w, &g, &o);
  g_assert_cmpfloat (o, ==, 4.0);
}

/* Korthikanti et al. 2022 Table 2 for GPT-3 175B (a 96, h 12288, s 2048, b 1, t 8), with the
 * paper's unfused attention and dropout:
 *   no parallelism  sbh(34 + 5as/h)          = 25,165,824 * 114 = 2,868,903,936
 *   TP              sbh(10 + 24/t + 5as/(ht)) = 25,165,824 * 23  =   578,813,952
 *   TP + SP         sbh/t (34 + 5as/h)        = 25,165,824 * 14.25 = 358,612,992
 *   TP + SP + selective  34 sbh/t            = 106,954,752
 *   TP + selective  sbh(10 + 24/t)           = 327,155,712
 *   full recompute  2sbh                      = 50,331,648 (/t with SP) */
static void
test_korthikanti_table2 (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.unfused_attention = TRUE, p.dropout = TRUE;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 2868903936.0);
  p.tp = 8;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 578813952.0);
  p.sp = TRUE;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 358612992.0);
  p.recompute = MODEL_RECOMPUTE_SELECTIVE;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 106954752.0);
  p.sp = FALSE;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 327155712.0);
  p.recompute = MODEL_RECOMPUTE_FULL;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 50331648.0);
  p.sp = TRUE;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 50331648.0 / 8);
  /* Modern recipe (fused attention, no dropout): the score term becomes the fp32 LSE
   * (4 * 12 heads * 2048 bytes) and the masks vanish: sbh/t * 32 + 98,304. */
  p.recompute = MODEL_RECOMPUTE_NONE;
  p.unfused_attention = FALSE, p.dropout = FALSE;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, 25165824.0 / 8 * 32 + 98304);
  /* DTensor TP (torchtitan) keeps the all-gathered QKV and FC1 inputs, not their SP shards: 2h*e
   * more per token for the other 7/8 of the tokens. */
  p.framework = MODEL_FW_FSDP2;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==,
                     25165824.0 / 8 * 32 + 98304 + 2.0 * 12288 * 2 * (2048 - 256));
}

/* In-flight micro-batches: 1F1B stage r holds min(pp - r, m); interleaved rank 0 with m > pp holds
 * L (1 + (p-1)/(pv)) layers (Korthikanti §4.2.3); with m == pp Megatron warms up all m*v chunks. */
static void
test_in_flight (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.pp = 8, p.dp = 1, p.gpus = 8, p.global_batch = 64; /* m = 64 */
  g_assert_cmpfloat (model_memory_layers_in_flight (&s, &p, 0), ==, 12 * 8);
  g_assert_cmpfloat (model_memory_layers_in_flight (&s, &p, 7), ==, 12 * 1);
  p.vpp = 12, p.schedule = MODEL_SCHED_INTERLEAVED;
  assert_rel (model_memory_layers_in_flight (&s, &p, 0), 96 * (1 + 7.0 / (8 * 12)), 1e-12);
  p.global_batch = 8; /* m == pp */
  g_assert_cmpfloat (model_memory_layers_in_flight (&s, &p, 0), ==, 12 * 8);
  p.vpp = 1, p.schedule = MODEL_SCHED_GPIPE, p.global_batch = 32;
  g_assert_cmpfloat (model_memory_layers_in_flight (&s, &p, 3), ==, 12 * 32);
  /* Few micro-batches cap 1F1B too. */
  p.schedule = MODEL_SCHED_1F1B, p.global_batch = 3;
  g_assert_cmpfloat (model_memory_layers_in_flight (&s, &p, 0), ==, 12 * 3);
}

/* The MLPerf reference cases ran, so they must fit: GPT-3 175B on H100 80 GB (TP4 PP8 VPP12,
 * distributed optimizer) and Llama 3.1 405B on GB200 (186 GB HBM3e per GPU, NVIDIA GB200 NVL72
 * datasheet; TP4 PP8 VPP8 CP2). */
static void
test_reference_cases_fit (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 4, p.pp = 8, p.vpp = 12, p.dp = 336, p.gpus = 10752;
  p.sp = TRUE, p.schedule = MODEL_SCHED_INTERLEAVED, p.global_batch = 2688, p.zero = 1;
  p.matmul_dtype = MODEL_DTYPE_FP8;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  ModelMemory m;
  g_autoptr (GError) error = NULL;
  g_assert_true (model_memory_check (&s, &p, 80e9, -1, &m, &error));
  g_assert_no_error (error);
  g_autofree char *d = model_memory_describe (&m);
  g_test_message ("gpt3 stage %d: %s", m.pp_rank, d);
  /* Weights: about 175e9/32 params per rank in bf16. */
  assert_rel (m.weights_bytes, 2 * 174.6e9 / 32, 0.03);
  g_assert_cmpfloat (m.total_bytes, ==, m.weights_bytes + m.grads_bytes + m.optimizer_bytes
                                        + m.activations_bytes + m.embedding_head_bytes
                                        + model_memory_default_overhead (&p));
  /* Context 0.5 GiB and 0.6 GiB for each of the world, TP, DP and PP communicators. */
  g_assert_cmpfloat (m.overhead_bytes, ==, (0.5 + 4 * 0.6) * GIB);

  ModelShape l = preset_llama_405b ();
  l.vocab = 32000;
  l = finished (l);
  model_plan_init (&p);
  p.tp = 4, p.pp = 8, p.vpp = 8, p.cp = 2, p.dp = 128, p.gpus = 8192;
  p.sp = TRUE, p.schedule = MODEL_SCHED_INTERLEAVED, p.global_batch = 1024, p.zero = 1;
  p.pp_embed_loss_layers = TRUE, p.matmul_dtype = MODEL_DTYPE_FP4;
  g_assert_true (model_plan_validate (&p, &l, NULL));
  g_assert_true (model_memory_check (&l, &p, 186e9, -1, &m, &error));
  g_autofree char *d2 = model_memory_describe (&m);
  g_test_message ("llama405b stage %d: %s", m.pp_rank, d2);
}

/* GPT-3 175B on one 8-GPU node (TP8, plain DDP): 2+4+12 = 18 bytes x 21.8e9 params per GPU is
 * far beyond 80 GB; the error names the stage and the breakdown and suggests a remedy. */
static void
test_out_of_memory (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 8, p.gpus = 8, p.sp = TRUE;
  ModelMemory m;
  g_autoptr (GError) error = NULL;
  g_assert_false (model_memory_check (&s, &p, 80e9, -1, &m, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (error->message, "out of memory: pipeline stage 0 needs"));
  g_assert_nonnull (strstr (error->message, "optimizer"));
  g_assert_nonnull (strstr (error->message, "recompute"));
  assert_rel (m.weights_bytes + m.grads_bytes + m.optimizer_bytes, 18 * 174.6e9 / 8, 0.01);
  /* ZeRO-3 over 64 DP ranks shards everything and adds the gathered parameters. FSDP gathers per
   * block: the current and the prefetched layer, 2 x 2 bytes x 174.6e9 / 8 / 96. */
  p.dp = 64, p.gpus = 512, p.global_batch = 64, p.zero = 3, p.fsdp = TRUE;
  model_memory_rank (&s, &p, 0, 0, &m);
  assert_rel (m.weights_bytes + m.grads_bytes + m.optimizer_bytes, 18 * 174.6e9 / 8 / 64, 0.01);
  assert_rel (m.zero3_gather_bytes, 2 * 2 * 174.6e9 / 8 / 96, 0.02);
  /* DeepSpeed gathers per module and keeps at most its max_live_parameters (1e9) resident, plus
   * the 5e7 prefetch bucket: the largest module here (the embedding shard, 50688 / 8 x 12288 =
   * 77.9M) is below the cap, so 1.05e9 x 2 bytes. */
  p.fsdp = FALSE;
  model_memory_rank (&s, &p, 0, 0, &m);
  assert_rel (m.zero3_gather_bytes, 1.05e9 * 2, 1e-12);
  /* Narayanan et al.'s 530B ZeRO-3 run (105 x 20480, 640 A100 80GB, no TP): FC1 is one module of
   * 20480 x 81920 = 1.678e9 parameters, above the cap, so 1.678e9 + 5e7 gathered. */
  ModelShape big = preset_gpt3_175b ();
  big.layers = 105, big.hidden = 20480, big.heads = 128, big.kv_heads = 128, big.head_dim = 0;
  big.ffn_hidden = 4 * 20480;
  big = finished (big);
  model_plan_init (&p);
  p.dp = 640, p.gpus = 640, p.global_batch = 2560, p.micro_batch = 4, p.zero = 3;
  model_memory_rank (&big, &p, 0, 0, &m);
  assert_rel (m.zero3_gather_bytes, (20480.0 * 81920 + 5e7) * 2, 1e-12);
  /* As DeepSpeed 0.3 ran it (zero3_blocking, fp16 gradients): FC1's unsharded gradient and the flat
   * copy of its list reduction come on top, 2 x 1.678e9 x 2 bytes. */
  p.zero3_blocking = TRUE, p.grad_dtype = MODEL_DTYPE_FP16;
  model_memory_rank (&big, &p, 0, 0, &m);
  assert_rel (m.zero3_gather_bytes, (20480.0 * 81920 + 5e7) * 2 + 2 * 20480.0 * 81920 * 2, 1e-12);
  /* The paper's Table 2 caption: this run did not fit on 560 GPUs (micro-batch 4) and ran on 640.
   * Its plan as trainsim validate builds the deck row (fp16, full recompute, unfused attention with
   * dropout) on the A100's 80e9 bytes: 560 is refused, 640 fits. */
  p.param_dtype = p.matmul_dtype = MODEL_DTYPE_FP16, p.recompute = MODEL_RECOMPUTE_FULL;
  p.unfused_attention = TRUE, p.dropout = TRUE;
  g_autoptr (GError) no_fit = NULL;
  p.dp = 560, p.gpus = 560, p.global_batch = 2240;
  g_assert_false (model_memory_check (&big, &p, 80e9, -1, &m, &no_fit));
  g_assert_error (no_fit, MODEL_ERROR, MODEL_ERROR_OUT_OF_MEMORY);
  p.dp = 640, p.gpus = 640, p.global_batch = 2560;
  g_assert_true (model_memory_check (&big, &p, 80e9, -1, &m, NULL));
  /* Without the gradient pair (a later DeepSpeed) 560 would fit: the test hinges on it. */
  p.dp = 560, p.gpus = 560, p.global_batch = 2240, p.zero3_blocking = FALSE;
  g_assert_true (model_memory_check (&big, &p, 80e9, -1, &m, NULL));
}

/* Mixtral experts shard over the expert-DP group: with ep 8 on 8 GPUs (edp 1) the ZeRO-1 optimizer
 * of the experts is not divided while the dense part divides by dp 8. */
static void
test_moe_states (void)
{
  ModelShape s = finished (preset_mixtral_8x7b ());
  ModelPlan p;
  model_plan_init (&p);
  p.dp = 8, p.ep = 8, p.gpus = 8, p.global_batch = 8, p.zero = 1;
  ModelMemory m;
  model_memory_rank (&s, &p, 0, 0, &m);
  double expert = 32.0 * 3 * 4096 * 14336;
  double dense = 46702792704.0 - 8 * expert;
  assert_rel (m.optimizer_bytes, 12 * (dense / 8 + expert), 1e-12);
  assert_rel (m.params, dense + expert, 1e-12);
}

/* fp8_param_gather keeps the FP8 layers' GEMM weights in 1 byte: GPT-3 175B at tp 4, pp 8 (12 layers
 * per stage), bf16 params: 12 · 12h²/4 = 12 · 452,984,832 = 5,435,817,984 weights save one byte each;
 * everything else (gradients, optimizer states, activations) is unchanged. */
static void
test_fp8_param_gather (void)
{
  ModelShape s = finished (preset_gpt (96, 12288, 96, 2048));
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 4, p.pp = 8, p.dp = 4, p.gpus = 128, p.sp = TRUE, p.zero = 1, p.global_batch = 32;
  p.matmul_dtype = MODEL_DTYPE_FP8;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  ModelMemory a, b;
  model_memory_rank (&s, &p, 3, 0, &a);
  p.fp8_param_gather = TRUE;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  model_memory_rank (&s, &p, 3, 0, &b);
  g_assert_cmpfloat (a.weights_bytes - b.weights_bytes, ==, 5435817984.0);
  g_assert_cmpfloat (a.grads_bytes, ==, b.grads_bytes);
  g_assert_cmpfloat (a.optimizer_bytes, ==, b.optimizer_bytes);
  g_assert_cmpfloat (a.total_bytes - b.total_bytes, ==, 5435817984.0);
}

/* Low-precision GEMM layers save their GEMM inputs quantized (Transformer Engine keeps the FP8
 * transposed input for the weight gradient). GPT-3 175B, b 1, t 8 with SP, fused attention, no
 * dropout: per token and TP rank the BF16 layer keeps 32h/t bytes = 4h·2 (norm inputs and outputs)
 * + (3h + h)·2 (Q, K, V, projection input) + (4h + 4h)·2 (FC1 output, FC2 input), all /t. FP8
 * saves one byte on each of the QKV, FC1, projection and FC2 inputs: h + h + h + 4h = 7h per token
 * (/t), the LSE term unchanged; NVFP4 saves 1.4375 bytes on each. A BF16 layer of the recipe saves
 * nothing. */
static void
test_lowp_saved_inputs (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 8, p.sp = TRUE;
  double bf16 = model_memory_activation_layer (&s, &p, 1);
  double tok = 2048.0 * 12288 / 8; /* s·h/t */
  g_assert_cmpfloat (bf16, ==, tok * 32 + 98304);
  p.matmul_dtype = MODEL_DTYPE_FP8;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 1), ==, bf16 - 7 * tok);
  p.matmul_dtype = MODEL_DTYPE_FP4;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 1), ==, bf16 - 7 * 1.4375 * tok);
  p.matmul_dtype = MODEL_DTYPE_FP8;
  p.bf16_layers_first = 1;
  g_assert_cmpfloat (model_memory_activation_layer (&s, &p, 0), ==, bf16);
}

/* torchtitan's per-op selective recompute, Llama 3 8B, TP 1, one 8192-token sequence in bf16: a
 * layer keeps its input, Q (4096), V (1024), the attention output (4096) with its fp32 log-sum-exp
 * per head (32), W1's output (14336) and W2's (4096) per token: 2 * (4 * 4096 + 1024 + 14336) + 4 * 32
 * = 63616 bytes per token. Between full recompute (the input alone) and none. */
static void
test_selective_op (void)
{
  ModelShape s = preset_llama_8b ();
  g_assert_true (model_shape_finish (&s, NULL));
  ModelPlan p;
  model_plan_init (&p);
  p.gpus = 1, p.dp = 1, p.micro_batch = 1, p.global_batch = 1;
  p.recompute = MODEL_RECOMPUTE_SELECTIVE_OP;
  double op = model_memory_activation_layer (&s, &p, 0);
  g_assert_cmpfloat (op, ==, 8192.0 * 63616);
  p.recompute = MODEL_RECOMPUTE_FULL;
  double full = model_memory_activation_layer (&s, &p, 0);
  p.recompute = MODEL_RECOMPUTE_NONE;
  double none = model_memory_activation_layer (&s, &p, 0);
  g_assert_cmpfloat (full, <, op);
  g_assert_cmpfloat (op, <, none);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/memory/zero-paper", test_zero_paper);
  g_test_add_func ("/model/memory/fp8-param-gather", test_fp8_param_gather);
  g_test_add_func ("/model/memory/megatron-distributed-optimizer", test_megatron_distributed_optimizer);
  g_test_add_func ("/model/memory/korthikanti-table2", test_korthikanti_table2);
  g_test_add_func ("/model/memory/in-flight", test_in_flight);
  g_test_add_func ("/model/memory/selective-op", test_selective_op);
  g_test_add_func ("/model/memory/lowp-saved-inputs", test_lowp_saved_inputs);
  g_test_add_func ("/model/memory/reference-cases-fit", test_reference_cases_fit);
  g_test_add_func ("/model/memory/out-of-memory", test_out_of_memory);
  g_test_add_func ("/model/memory/moe-states", test_moe_states);
  return g_test_run ();
}
