/* The scenario key table: every key of a scenario file declared once (type, unit, scale to SI,
 * default or required, sane range, destination field, meaning). scenario.c loads, checks and
 * resolves files against it; the accessors at the end serve `trainsim run --keys` and the table
 * of scenarios/README.md. */
#include "config.h"
#include <stddef.h>
#include <string.h>
#include "sim/scenario/scenario-private.h"

#define SH(f) TGT_SHAPE, offsetof (ModelShape, f), "ModelShape." #f
#define PL(f) TGT_PLAN, offsetof (ModelPlan, f), "ModelPlan." #f
#define GP(f) TGT_GPU, offsetof (SimGpuSpec, f), "SimGpuSpec." #f
#define CL(f) TGT_CLUSTER, offsetof (SimClusterSpec, f), "SimClusterSpec." #f
#define FA(f) TGT_FABRIC, offsetof (SimFabricSpec, f), "SimFabricSpec." #f
#define RU(f) TGT_RUN, offsetof (SimScenarioRun, f), "SimScenarioRun." #f
#define NO(what) TGT_NONE, 0, what
#define CO(f) TGT_COLL, offsetof (SimCollectiveProfile, f), "SimCollectiveProfile." #f

const Key sim_scenario_keys[] = {
  /* [scenario] */
  { "scenario", "name", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_STR, RU (name),
    "short name of the case, printed in reports" },
  { "scenario", "description", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_STR, RU (description),
    "one paragraph: what is modelled and why" },
  { "scenario", "include", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(loaded before this file)"),
    "files loaded before this one, separated by ';', relative to this file" },
  { "scenario", "measured_step_time_s", T_DOUBLE, "s", 1, OPT, 1e-6, 1e7, NULL, FALSE, S_DOUBLE,
    RU (measured_step_time_s), "published measured step time of this exact case, printed beside the prediction" },
  { "scenario", "measured_time_to_train_s", T_DOUBLE, "s", 1, OPT, 1e-3, 1e9, NULL, FALSE, S_DOUBLE,
    RU (measured_time_to_train_s), "published measured time to train (e.g. the MLPerf score)" },
  { "scenario", "measured_gpus", T_INT, "", 1, OPT, 1, 4194304, NULL, FALSE, S_INT, RU (measured_gpus),
    "GPU count the measurements belong to; required with them (not shown when cluster.gpus differs)" },
  { "scenario", "measured_source", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_STR, RU (measured_source),
    "where the measurements come from; required with either measured key" },
  { "scenario", "base_gpus", T_INT, "", 1, "0", 0, 4194304, NULL, FALSE, S_INT, RU (base_gpus),
    "scaling efficiency against this many GPUs (DP shrunk to fit); 0: none" },
  { "scenario", "weak_scaling", T_BOOL, "", 1, "true", 0, 0, NULL, FALSE, S_BOOL, RU (weak_scaling),
    "the base keeps the global batch per DP replica (weak) or the global batch (strong)" },

  /* [model] */
  { "model", "name", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_NAME64, SH (name), "model name (at most 63 characters)" },
  { "model", "layers", T_INT, "", 1, REQ, 1, 10000, NULL, FALSE, S_INT, SH (layers), "transformer layers" },
  { "model", "hidden", T_INT, "", 1, REQ, 1, 1048576, NULL, FALSE, S_INT, SH (hidden), "model width d_model" },
  { "model", "heads", T_INT, "", 1, REQ, 1, 65536, NULL, FALSE, S_INT, SH (heads), "attention query heads" },
  { "model", "kv_heads", T_INT, "", 1, REQ, 1, 65536, NULL, FALSE, S_INT, SH (kv_heads),
    "key/value heads: heads for MHA, fewer for GQA" },
  { "model", "head_dim", T_INT, "", 1, "0", 0, 65536, NULL, FALSE, S_INT, SH (head_dim), "per-head width; 0: hidden / heads" },
  { "model", "ffn_hidden", T_INT, "", 1, REQ, 1, 16777216, NULL, FALSE, S_INT, SH (ffn_hidden),
    "dense MLP width (each of gate and up for swiglu)" },
  { "model", "vocab", T_INT, "", 1, REQ, 1, 16777216, NULL, FALSE, S_INT, SH (vocab), "tokenizer vocabulary, unpadded" },
  { "model", "vocab_multiple", T_INT, "", 1, "128", 1, 65536, NULL, FALSE, S_INT, SH (vocab_multiple),
    "vocab padded to a multiple of vocab_multiple × tp (Megatron)" },
  { "model", "max_positions", T_INT, "", 1, "0", 0, 16777216, NULL, FALSE, S_INT, SH (max_positions),
    "learned position table rows; 0: seq_len" },
  { "model", "activation", T_ENUM, "", 1, REQ, 0, 0, "gelu, swiglu, geglu, squared_relu", FALSE, S_ENUM, SH (activation),
    "MLP: gelu and squared_relu = two matrices, swiglu and geglu = gated three matrices" },
  { "model", "norm", T_ENUM, "", 1, REQ, 0, 0, "layernorm, rmsnorm", FALSE, S_ENUM, SH (norm), "normalization layers" },
  { "model", "position", T_ENUM, "", 1, REQ, 0, 0, "learned, rope, alibi", FALSE, S_ENUM, SH (position),
    "position encoding (alibi: a score bias inside the attention kernel, no parameters)" },
  { "model", "tied_embeddings", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, SH (tied_embeddings),
    "LM head shares the input embedding" },
  { "model", "bias", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, SH (bias), "linear and norm biases (GPT-2/3 style)" },
  { "model", "moe_experts", T_INT, "", 1, "0", 0, 65536, NULL, FALSE, S_INT, SH (moe_experts), "routed experts; 0: dense model" },
  { "model", "moe_top_k", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, SH (moe_top_k), "experts per token" },
  { "model", "moe_ffn_hidden", T_INT, "", 1, "0", 0, 16777216, NULL, FALSE, S_INT, SH (moe_ffn_hidden), "width of one expert MLP" },
  { "model", "moe_node_limit", T_INT, "", 1, "0", 0, 1 << 20, NULL, FALSE, S_INT, SH (moe_node_limit),
    "nodes a token's experts may span (DeepSeek-V3 node-limited routing); 0: any" },
  { "model", "moe_shared_experts", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, SH (moe_shared_experts),
    "always-active experts of width moe_ffn_hidden" },
  { "model", "moe_capacity_factor", T_DOUBLE, "", 1, "0", 0, 1024, NULL, FALSE, S_DOUBLE, SH (moe_capacity_factor),
    "expert capacity factor; 0: dropless" },
  { "model", "moe_imbalance", T_DOUBLE, "", 1, "1", 1, 1024, NULL, FALSE, S_DOUBLE, SH (moe_imbalance),
    "dropless routing: the busiest expert-parallel rank's tokens over the mean (1: even); the step follows that rank" },
  { "model", "moe_layer_freq", T_INT, "", 1, "1", 1, 10000, NULL, FALSE, S_INT, SH (moe_layer_freq), "every n-th layer is MoE" },
  { "model", "moe_layer_offset", T_INT, "", 1, "0", 0, 9999, NULL, FALSE, S_INT, SH (moe_layer_offset),
    "the first MoE layer of that pattern (0-based, below moe_layer_freq; Llama 4: step - 1)" },
  { "model", "moe_dense_layers", T_INT, "", 1, "0", 0, 10000, NULL, FALSE, S_INT, SH (moe_dense_layers),
    "the first n layers are dense (DeepSeek-V3: 3)" },
  { "model", "encoder", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, SH (encoder),
    "bidirectional encoder (BERT): attention over every key, masked-LM head" },
  { "model", "mlm_fraction", T_DOUBLE, "", 1, "0", 0, 1, NULL, FALSE, S_DOUBLE, SH (mlm_fraction),
    "encoder: share of tokens the masked-LM head scores; 0: all" },
  { "model", "attention_window", T_INT, "", 1, "0", 0, 16777216, NULL, FALSE, S_INT, SH (attention_window),
    "sliding-window attention: keys a query sees; 0: all" },
  { "model", "window_layer_freq", T_INT, "", 1, "1", 1, 10000, NULL, FALSE, S_INT, SH (window_layer_freq),
    "every n-th layer from layer 0 uses the window (gpt-oss: 2)" },
  { "model", "mtp_depth", T_INT, "", 1, "0", 0, 64, NULL, FALSE, S_INT, SH (mtp_depth),
    "multi-token prediction modules on the last stage (DeepSeek-V3: 1)" },
  { "model", "q_lora_rank", T_INT, "", 1, "0", 0, 1048576, NULL, FALSE, S_INT, SH (q_lora_rank),
    "MLA query latent rank; 0: no query latent" },
  { "model", "kv_lora_rank", T_INT, "", 1, "0", 0, 1048576, NULL, FALSE, S_INT, SH (kv_lora_rank),
    "MLA key/value latent rank; > 0 makes the attention multi-head latent (DeepSeek-V2/V3)" },
  { "model", "qk_nope_head_dim", T_INT, "", 1, "0", 0, 65536, NULL, FALSE, S_INT, SH (qk_nope_head_dim),
    "MLA per-head query/key width without rotary" },
  { "model", "qk_rope_head_dim", T_INT, "", 1, "0", 0, 65536, NULL, FALSE, S_INT, SH (qk_rope_head_dim),
    "MLA per-head rotary query/key width (the rotary key is shared by the heads)" },
  { "model", "v_head_dim", T_INT, "", 1, "0", 0, 65536, NULL, FALSE, S_INT, SH (v_head_dim),
    "MLA per-head value width" },

  /* [parallel] */
  { "parallel", "tp", T_INT, "", 1, "1", 1, 4096, NULL, FALSE, S_INT, PL (tp), "tensor-parallel degree" },
  { "parallel", "pp", T_INT, "", 1, "1", 1, 4096, NULL, FALSE, S_INT, PL (pp), "pipeline-parallel degree" },
  { "parallel", "vpp", T_INT, "", 1, "1", 1, 1024, NULL, FALSE, S_INT, PL (vpp), "virtual pipeline stages (model chunks) per pipeline rank" },
  { "parallel", "cp", T_INT, "", 1, "1", 1, 4096, NULL, FALSE, S_INT, PL (cp), "context-parallel degree" },
  { "parallel", "ep", T_INT, "", 1, "1", 1, 65536, NULL, FALSE, S_INT, PL (ep), "expert-parallel degree" },
  { "parallel", "sp", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (sp), "Megatron sequence parallelism over the TP group" },
  { "parallel", "zero", T_INT, "", 1, "0", 0, 3, NULL, FALSE, S_INT, PL (zero),
    "what is sharded over DP: 0 nothing, 1 optimizer (distributed optimizer), 2 + grads, 3 + params" },
  { "parallel", "fsdp", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (fsdp), "FSDP-style per-layer collectives (zero >= 2)" },
  { "parallel", "framework", T_ENUM, "", 1, "megatron", 0, 0, "megatron, nemo, deepspeed, fsdp2, composer", FALSE, S_ENUM,
    PL (framework),
    "DP schedule at the framework's defaults (model/framework.c names each choice's source): megatron, nemo = "
    "Megatron-Core DDP, grads reduced once per step in the last micro-batch's backward (overlapped with dp_overlap, "
    "dp_bucket_MiB the floor), zero 2 as zero 1, zero 3 per layer every micro-batch; deepspeed = zero 0/1 reduced after "
    "the backward, zero 2 every micro-batch on the compute stream, 5e8-element buckets, zero 3 per-layer gathers and "
    "reduce-scatters every micro-batch; fsdp2 = torchtitan FSDP2, per-layer reduce-scatter every micro-batch (under pp: "
    "once, after the last backward), zero 3 gathers before forward and backward, zero 2 keeps them after forward; "
    "composer = FSDP1 FULL_SHARD (zero 3) or SHARD_GRAD_OP (zero 2) every micro-batch, zero 0 DDP. dp_overlap and "
    "dp_bucket_MiB apply to megatron and nemo only; fsdp2 and composer have no zero 1" },
  { "parallel", "micro_batch", T_INT, "", 1, REQ, 1, 65536, NULL, FALSE, S_INT, PL (micro_batch), "sequences per micro-batch per replica" },
  { "parallel", "global_batch", T_INT, "", 1, OPT, 1, 1e9, NULL, FALSE, S_NONE, PL (global_batch),
    "sequences per optimizer step; give this or global_batch_per_dp" },
  { "parallel", "global_batch_per_dp", T_INT, "", 1, OPT, 1, 1e8, NULL, FALSE, S_NONE, NO ("ModelPlan.global_batch = this × dp"),
    "sequences per data-parallel replica per step (weak scaling: the batch follows dp)" },
  { "parallel", "schedule", T_ENUM, "", 1, "auto", 0, 0, "auto, gpipe, 1f1b, interleaved, dualpipe", FALSE, S_NONE, PL (schedule),
    "pipeline schedule; auto: interleaved when vpp > 1, else 1f1b; dualpipe: DeepSeek-V3's bidirectional schedule (two pipeline copies, vpp = 2, forward and backward chunks overlapped in pairs, weight gradients split off as zero-bubble W passes)" },
  { "parallel", "compile", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (compile),
    "framework fsdp2: torch.compile of the model (fuses the element-wise chains eager PyTorch runs as separate kernels)" },
  { "parallel", "recompute", T_ENUM, "", 1, "none", 0, 0, "none, selective, full, selective_op", FALSE, S_ENUM, PL (recompute),
    "activation recomputation: selective is Megatron's (attention core), selective_op torchtitan's per-op policy" },
  { "parallel", "recompute_modules", T_STRING, "", 1, "core_attn", 0, 0, NULL, FALSE, S_NONE, PL (recompute_modules),
    "recompute = selective: what it recomputes (Megatron-Core --recompute-modules): core_attn, layernorm, mla_up_proj (MLA models), moe_act (MoE models), comma-separated" },
  { "parallel", "matmul_dtype", T_ENUM, "", 1, "bf16", 0, 0, NULL, FALSE, S_ENUM, PL (matmul_dtype), "GEMM precision" },
  { "parallel", "param_dtype", T_ENUM, "", 1, "bf16", 0, 0, NULL, FALSE, S_ENUM, PL (param_dtype),
    "weights and activations in memory" },
  { "parallel", "tp_comm_overlap", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (tp_comm_overlap),
    "TP all-gather/reduce-scatter overlapped with GEMMs" },
  { "parallel", "dp_overlap", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (dp_overlap),
    "DP reduce-scatter/all-gather overlapped with backward/forward" },
  { "parallel", "dp_bucket_MiB", T_INT, "MiB", 1, "40", 1, 1048576, NULL, FALSE, S_INT, PL (dp_bucket_mb),
    "DP gradient bucket size (Megatron default 40)" },
  { "parallel", "etp", T_INT, "", 1, "0", 0, 4096, NULL, FALSE, S_INT, PL (etp),
    "expert tensor-parallel degree; 0: tp (Megatron-Core default)" },
  { "parallel", "pp_embed_loss_layers", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (pp_embed_loss_layers),
    "embedding and loss count as pipeline layers (MLPerf Llama 3.1 405B: 126 + 2 over pp·vpp)" },
  { "parallel", "microbatch_group_size", T_INT, "", 1, "0", 0, 1 << 20, NULL, FALSE, S_INT, PL (mb_group),
    "interleaved schedule: micro-batches per group of its table (Megatron-Core "
    "--microbatch-group-size-per-virtual-pipeline-stage); 0: pp" },
  { "parallel", "pp_first_stage_layers", T_INT, "", 1, "0", 0, 1 << 20, NULL, FALSE, S_INT, PL (pp_first_layers),
    "transformer layers of the first pipeline rank over its chunks (Megatron-Core "
    "--decoder-first-pipeline-num-layers); 0: even split" },
  { "parallel", "pp_last_stage_layers", T_INT, "", 1, "0", 0, 1 << 20, NULL, FALSE, S_INT, PL (pp_last_layers),
    "transformer layers of the last pipeline rank over its chunks (Megatron-Core "
    "--decoder-last-pipeline-num-layers); 0: even split" },
  { "parallel", "pp_layout", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("ModelPlan.pp_layout"),
    "Megatron-Core's pipeline layout (--pipeline-model-parallel-layout): stages split by a vertical bar in "
    "virtual-stage order, E embedding, t transformer layer, m MTP layer, L loss, x*n and (...)*n repeats "
    "(README.md has examples); its stages over pp set vpp; E opens the first stage, L closes the last, the MTP "
    "layers go in the last one, and a stage may hold no transformer layer" },
  { "parallel", "grad_dtype", T_ENUM, "", 1, "fp32", 0, 0, NULL, FALSE, S_ENUM, PL (grad_dtype),
    "gradient accumulation buffer (Megatron main grads: fp32)" },
  { "parallel", "moment_dtype", T_ENUM, "", 1, "fp32", 0, 0, NULL, FALSE, S_ENUM, PL (moment_dtype),
    "AdamW's first and second moments (fp32; bf16 as DeepSeek-V3 keeps them): optimizer memory and traffic" },
  { "parallel", "master_weights", T_ENUM, "", 1, "fp32", 0, 0, "fp32, remainder, none", FALSE, S_ENUM, PL (master_weights),
    "the optimizer's copy beside bf16/fp16 weights: fp32 (4 bytes a parameter), remainder (the 16 bits fp32 has beyond bf16: Apex DistributedFusedAdam store_param_remainders, NeMo's default with it), none (NeMo with optimizer dtype = model dtype): optimizer memory and traffic" },
  { "parallel", "unfused_attention", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (unfused_attention),
    "materialize the s×s attention scores instead of a fused flash kernel" },
  { "parallel", "attention_kernel", T_ENUM, "", 1, "default", 0, 0, "default, fa2, triton", FALSE, S_ENUM,
    PL (attention_kernel),
    "fused attention kernel: default = the profile's attn_eff (cuDNN on Hopper, FlashAttention-2 on the A100), "
    "fa2 = FlashAttention-2 (hardware attn_fa2_*), triton = the 2022 FlashAttention in Triton (llm-foundry "
    "attn_impl: triton), timed from FlashAttention-2's rate (sim/gpu/gpu.c)" },
  { "parallel", "dropout", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (dropout),
    "attention and hidden dropout (stores masks)" },
  { "parallel", "loss_fusion", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (loss_fusion),
    "one fused cross-entropy kernel; false: Megatron-Core's unfused fp32 cross entropy (its default)" },
  { "parallel", "fp8_scaling", T_ENUM, "", 1, "delayed", 0, 0, "delayed, current", FALSE, S_ENUM, PL (fp8_scaling),
    "FP8 scaling (matmul_dtype fp8): delayed = amax history inside the casts (TE DelayedScaling), current = an amax pass per cast" },
  { "parallel", "pp_blocking", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (pp_blocking),
    "pipeline sends block compute until delivered (2021 Megatron: p2p then torch.cuda.synchronize); false: overlapped" },
  { "parallel", "pp_scatter_gather", T_BOOL, "", 1, "true", 0, 0, NULL, FALSE, S_BOOL, PL (pp_scatter_gather),
    "without sp: a pipeline send carries 1/tp of the activation, the receiver all-gathers it over TP (Megatron's default)" },
  { "parallel", "zero3_blocking", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (zero3_blocking),
    "zero 3: DeepSpeed <= 0.3.16's fetch, a blocking all-gather per weight matrix and blocking gradient reduce-scatters" },
  { "parallel", "fp8_reduce_amax", T_BOOL, "", 1, "true", 0, 0, NULL, FALSE, S_BOOL, PL (fp8_reduce_amax),
    "fp8 delayed scaling: all-reduce (max) of the amaxes over TP x CP x DP of the stage after every chunk's forward and backward (TE reduce_amax)" },
  { "parallel", "fp8_amax_tp_only", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (fp8_amax_tp_only),
    "fp8_reduce_amax over the TP x CP ranks only (Megatron-Core tp_only_amax_red, TE NVTE_DP_AMAX_REDUCE_INTERVAL=0)" },
  { "parallel", "fp8_amax_async", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (fp8_amax_async),
    "fp8_reduce_amax without blocking the compute stream (TE NVTE_ASYNC_AMAX_REDUCTION=1)" },
  { "parallel", "grad_accum", T_ENUM, "", 1, "fused", 0, 0, "fused, add, autograd", FALSE, S_ENUM, PL (grad_accum),
    "weight-gradient accumulation: fused = in the wgrad GEMM's epilogue (Megatron-Core default), add = a main_grad.add_ per micro-batch (2021 Megatron local DDP), autograd = torch DDP's in-place add from the second micro-batch" },
  { "parallel", "fp8_param_gather", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (fp8_param_gather),
    "fp8 with the distributed optimizer, dense models: layer GEMM weights kept and all-gathered in FP8 (Megatron-Core --fp8-param-gather, NeMo fp8_params)" },
  { "parallel", "nccl_ctas_tp", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, PL (nccl_ctas[MODEL_DIM_TP]),
    "NCCL CTAs (SMs) the TP collectives may take beside compute (Megatron-Core nccl_communicator_config_path max_ctas); 0: NCCL's own, the profile's overlap_slowdown" },
  { "parallel", "nccl_ctas_cp", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, PL (nccl_ctas[MODEL_DIM_CP]),
    "NCCL CTAs (SMs) the CP ring exchanges may take beside compute (Megatron-Core nccl_communicator_config_path max_ctas); 0: NCCL's own, the profile's overlap_slowdown" },
  { "parallel", "nccl_ctas_pp", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, PL (nccl_ctas[MODEL_DIM_PP]),
    "NCCL CTAs (SMs) the pipeline sends may take beside compute (Megatron-Core nccl_communicator_config_path max_ctas); 0: NCCL's own, the profile's overlap_slowdown" },
  { "parallel", "nccl_ctas_dp", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, PL (nccl_ctas[MODEL_DIM_DP]),
    "NCCL CTAs (SMs) the DP gradient reduce-scatter and parameter all-gather may take beside compute (Megatron-Core nccl_communicator_config_path max_ctas); 0: NCCL's own, the profile's overlap_slowdown" },
  { "parallel", "nccl_ctas_ep", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, PL (nccl_ctas[MODEL_DIM_EP]),
    "NCCL CTAs (SMs) the expert all-to-all may take beside compute (Megatron-Core nccl_communicator_config_path max_ctas); 0: NCCL's own, the profile's overlap_slowdown" },
  { "parallel", "moe_dispatcher", T_ENUM, "", 1, "alltoall", 0, 0, "alltoall, deepep", FALSE, S_ENUM, PL (moe_dispatcher),
    "expert all-to-all: alltoall = one copy per selected expert (Megatron's all-to-all dispatcher), deepep = one copy per target node over the network, forwarded over NVLink (DeepSeek-V3, DeepEP)" },
  { "parallel", "fp8_attention", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (fp8_attention),
    "fp8/fp4 recipes: fused attention in FP8 with its Q, K, V and output gradient quantized (TE fp8_dpa, NeMo fp8_dot_product_attention)" },
  { "parallel", "gemm_gelu_fusion", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (gemm_gelu_fusion),
    "fp8, dense GELU MLP: FC1's GEMM applies bias and GELU in its epilogue and writes FC2's FP8 input, and backward fuses dGELU into the gradient's cast-transpose (TE fp8_gemm gelu=True and fp8_cast_transpose_bgrad_dgelu_fused, as NVIDIA's MLPerf BERT te_layers.py)" },
  { "parallel", "cuda_graphs", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, PL (cuda_graphs),
    "transformer layers replayed from CUDA graphs (NeMo/Megatron-Core layer CUDA graphs): their kernels carry no per-kernel launch gap (launch_us)" },
  { "parallel", "bf16_layers_first", T_INT, "", 1, "0", 0, 100000, NULL, FALSE, S_INT, PL (bf16_layers_first),
    "fp8/fp4 recipes: first transformer layers kept in param_dtype (Megatron num_layers_at_start_in_bf16)" },
  { "parallel", "bf16_layers_last", T_INT, "", 1, "0", 0, 100000, NULL, FALSE, S_INT, PL (bf16_layers_last),
    "fp8/fp4 recipes: last transformer layers kept in param_dtype (Megatron num_layers_at_end_in_bf16)" },
  { "parallel", "order", T_STRING, "", 1, "tp,cp,ep,dp,pp", 0, 0, NULL, FALSE, S_NONE, PL (order),
    "rank placement, innermost dimension first" },

  /* [tp_overlap]: Transformer Engine userbuffers settings per GEMM (model/tpoverlap.h) */
#define UB_KEY(g)                                                                                          \
  { "tp_overlap", g, T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, PL (ub),                           \
    "with tp_comm_overlap and sp: METHOD [splits=N] [sm=N] [margin] [aggregate] for TE's " g "; absent: TE's default" }
  { "tp_overlap", "defaults", T_ENUM, "", 1, "te2", 0, 0, "te2, te1", FALSE, S_ENUM, PL (ub_defaults),
    "defaults of the GEMMs not given: te2 (TE >= 2.0: pipeline and bulk keep num_sm SMs from the GEMM), te1 (no margin)" },
  UB_KEY ("qkv_fprop"), UB_KEY ("proj_fprop"), UB_KEY ("fc1_fprop"), UB_KEY ("fc2_fprop"), UB_KEY ("qkv_dgrad"),
  UB_KEY ("qkv_wgrad"), UB_KEY ("proj_dgrad"), UB_KEY ("fc1_dgrad"), UB_KEY ("fc1_wgrad"), UB_KEY ("fc2_dgrad"),
#undef UB_KEY

  /* [hardware]: every figure needs KEY.source */
  { "hardware", "name", T_STRING, "", 1, REQ, 0, 0, NULL, FALSE, S_NAME64, GP (name), "GPU name (at most 63 characters)" },
  { "hardware", "peak_fp32_TFLOPS", T_DOUBLE, "TFLOP/s", 1e12, OPT, 0, 1e6, NULL, TRUE, S_DOUBLE,
    GP (peak_flops[MODEL_DTYPE_FP32]), "dense FP32 peak (non-tensor); absent: unsupported" },
  { "hardware", "peak_tf32_TFLOPS", T_DOUBLE, "TFLOP/s", 1e12, OPT, 0, 1e6, NULL, TRUE, S_DOUBLE,
    GP (peak_flops[MODEL_DTYPE_TF32]), "dense TF32 tensor-core peak" },
  { "hardware", "peak_fp16_TFLOPS", T_DOUBLE, "TFLOP/s", 1e12, OPT, 0, 1e6, NULL, TRUE, S_DOUBLE,
    GP (peak_flops[MODEL_DTYPE_FP16]), "dense FP16 tensor-core peak" },
  { "hardware", "peak_bf16_TFLOPS", T_DOUBLE, "TFLOP/s", 1e12, REQ, 0, 1e6, NULL, TRUE, S_DOUBLE,
    GP (peak_flops[MODEL_DTYPE_BF16]), "dense BF16 tensor-core peak (datasheet sparse figure / 2)" },
  { "hardware", "peak_fp8_TFLOPS", T_DOUBLE, "TFLOP/s", 1e12, OPT, 0, 1e6, NULL, TRUE, S_DOUBLE,
    GP (peak_flops[MODEL_DTYPE_FP8]), "dense FP8 tensor-core peak; absent: unsupported" },
  { "hardware", "peak_fp4_TFLOPS", T_DOUBLE, "TFLOP/s", 1e12, OPT, 0, 1e6, NULL, TRUE, S_DOUBLE,
    GP (peak_flops[MODEL_DTYPE_FP4]), "dense FP4 tensor-core peak; absent: unsupported" },
  { "hardware", "hbm_GB", T_DOUBLE, "GB", 1e9, OPT, 1, 1e5, NULL, TRUE, S_NONE, GP (hbm_bytes),
    "HBM capacity, decimal GB as datasheets give it; give this or hbm_GiB" },
  { "hardware", "hbm_GiB", T_DOUBLE, "GiB", 1073741824.0, OPT, 1, 1e5, NULL, TRUE, S_NONE, GP (hbm_bytes),
    "HBM capacity in GiB (e.g. from MiB in MLPerf system files); give this or hbm_GB" },
  { "hardware", "hbm_TBps", T_DOUBLE, "TB/s", 1e12, REQ, 0.01, 1e3, NULL, TRUE, S_DOUBLE, GP (hbm_bw_bytes_per_s),
    "datasheet HBM bandwidth" },
  { "hardware", "sm_count", T_INT, "", 1, OPT, 1, 100000, NULL, TRUE, S_INT, GP (sm_count), "streaming multiprocessors" },
  { "hardware", "gemm_wave_quantization", T_BOOL, "", 1, "true", 0, 0, NULL, TRUE, S_BOOL, GP (wave_quantization),
    "a GEMM of more than one wave of 128x128 output tiles runs ceil(tiles / sm_count) waves and loses its last "
    "wave's idle SMs (efficiency tiles / (waves * sm_count)); false where the GEMM library's tile shapes and "
    "stream-K kernels hide it (measured: H100, calib/results/h100-sxm-2026-11-27)" },
  { "hardware", "fp8_any_layout", T_BOOL, "", 1, "false", 0, 0, NULL, TRUE, S_BOOL, GP (fp8_any_layout),
    "FP8 GEMMs take their operands in any layout (cuBLASLt on compute capability 10.x: Transformer Engine 2.x's "
    "is_non_tn_fp8_gemm_supported), so FP8 tensors get no transposed copy for the weight and input gradients; "
    "false: only TN (Hopper), a cast_transpose or transpose per FP8 operand" },
  { "hardware", "nvlink_unidir_GBps", T_DOUBLE, "GB/s", 1e9, REQ, 0, 1e6, NULL, TRUE, S_DOUBLE, GP (nvlink_bw_bytes_per_s),
    "NVLink bandwidth per GPU per direction (half the datasheet bidirectional figure)" },
  { "hardware", "nvls", T_BOOL, "", 1, "false", 0, 0, NULL, TRUE, S_BOOL, GP (nvls), "NVLink SHARP in-switch reduction" },
  { "hardware", "scaleup_mesh", T_BOOL, "", 1, "false", 0, 0, NULL, TRUE, S_BOOL, GP (mesh),
    "the scale-up domain is a full mesh of direct GPU-GPU links (AMD Infinity Fabric), not a switch: "
    "nvlink_unidir_GBps is split evenly over the nvlink_domain - 1 peers, so k GPUs of a domain reach "
    "each other over k - 1 links" },
  { "hardware", "announced", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, GP (announced),
    "figures from an announcement of a part not yet shipped: every report names the GPU as announced, not validated" },
  { "hardware", "tdp_W", T_DOUBLE, "W", 1, OPT, 1, 1e5, NULL, TRUE, S_DOUBLE, GP (tdp_w), "board power limit" },
  /* GEMM efficiency per input dtype: no dtype borrows another's maximum (sim_scenario_check_compute
   * names the missing key); the size curve falls back to gemm_eff_half_GFLOP, whose source names the
   * dtype it was measured on. */
#define GEMM_EFF(dt, DT)                                                                                  \
  { "hardware", "gemm_eff_max_" dt, T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE,                     \
    GP (gemm_eff_max[MODEL_DTYPE_##DT]),                                                                  \
    "achieved large-GEMM FLOP/s / peak_" dt "_TFLOPS for " dt " inputs; needed when a GEMM runs in " dt }, \
  { "hardware", "gemm_eff_half_GFLOP_" dt, T_DOUBLE, "GFLOP", 1, OPT, 0, 1e9, NULL, TRUE, S_DOUBLE,       \
    GP (gemm_eff_half_gflop[MODEL_DTYPE_##DT]),                                                           \
    "size of a " dt " GEMM at half of gemm_eff_max_" dt "; absent: gemm_eff_half_GFLOP" },     \
  { "hardware", "gemm_insitu_" dt, T_DOUBLE, "", 1, OPT, 0, 2, NULL, TRUE, S_DOUBLE,                      \
    GP (gemm_insitu[MODEL_DTYPE_##DT]),                                                                   \
    "in-situ scale on gemm_eff_max_" dt " fitted on published step times (scenarios/calibration/); absent: 1" }
  GEMM_EFF ("fp32", FP32),
  GEMM_EFF ("tf32", TF32),
  GEMM_EFF ("fp16", FP16),
  GEMM_EFF ("bf16", BF16),
  GEMM_EFF ("fp8", FP8),
  GEMM_EFF ("fp4", FP4),
#undef GEMM_EFF
  { "hardware", "gemm_eff_half_GFLOP", T_DOUBLE, "GFLOP", 1, OPT, 0, 1e9, NULL, TRUE, S_DOUBLE, GP (gemm_eff_half_gflop_any),
    "GEMM size at half efficiency for dtypes without their own gemm_eff_half_GFLOP_<dtype> (the source names the dtype measured)" },
  { "hardware", "attn_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (attn_eff),
    "fused causal attention FLOP/s / peak; absent: not known" },
  { "hardware", "attn_bwd_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (attn_bwd_eff),
    "its flash backward, counted as 2.5x the forward FLOPs (benchmark_flash_attention.py); absent: attn_eff" },
  { "hardware", "attn_fp8_ratio", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (attn_fp8_ratio),
    "FP8 fused attention's fraction of the FP8 peak over BF16 attention's fraction of the BF16 peak, forward; absent: FlashAttention-3's 0.81 on H100" },
  { "hardware", "attn_fp8_bwd_ratio", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (attn_fp8_bwd_ratio),
    "the same for the backward; absent: attn_fp8_ratio" },
  { "hardware", "attn_half_GFLOP", T_DOUBLE, "GFLOP", 1, OPT, 0, 1e9, NULL, TRUE, S_DOUBLE, GP (attn_half_gflop),
    "attention kernel size (its causal FLOPs) at half of attn_eff: efficiency attn_eff·G/(G+G_half); absent: flat" },
  { "hardware", "attn_bwd_half_GFLOP", T_DOUBLE, "GFLOP", 1, OPT, 0, 1e9, NULL, TRUE, S_DOUBLE, GP (attn_bwd_half_gflop),
    "the same for the backward kernel (its FLOPs, 2.5x the forward's); absent: flat" },
  { "hardware", "attn_fa2_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (attn_fa2_eff),
    "FlashAttention-2's causal forward FLOP/s / peak (parallel.attention_kernel fa2 or triton); absent: not known" },
  { "hardware", "attn_fa2_bwd_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (attn_fa2_bwd_eff),
    "its backward, counted as 2.5x the forward FLOPs; absent: attn_fa2_eff" },
  { "hardware", "attn_fa2_half_GFLOP", T_DOUBLE, "GFLOP", 1, OPT, 0, 1e9, NULL, TRUE, S_DOUBLE,
    GP (attn_fa2_half_gflop), "FlashAttention-2 forward kernel size at half of attn_fa2_eff; absent: flat" },
  { "hardware", "attn_fa2_bwd_half_GFLOP", T_DOUBLE, "GFLOP", 1, OPT, 0, 1e9, NULL, TRUE, S_DOUBLE,
    GP (attn_fa2_bwd_half_gflop), "the same for its backward; absent: flat" },
  { "hardware", "mem_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (mem_eff),
    "achieved HBM bandwidth / hbm_TBps (stream-like kernels); absent: not known" },
  { "hardware", "nvlink_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (nvlink_eff),
    "achieved NVLink bus bandwidth / nvlink_unidir_GBps (NCCL protocol overhead); needed by collectives" },
  { "hardware", "nvls_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, CO (nvls_eff),
    "NVLS in-switch reduction rate as a fraction of the achieved NVLink rate; needed with nvls" },
  { "hardware", "coll_base_latency_us", T_DOUBLE, "us", 1e3, "8.4", 0, 1e6, NULL, TRUE, S_NS,
    CO (base_latency_ns[SIM_COLLECTIVE_ALGO_RING]),
    "per-call collective latency, ring/tree/hier/direct (NCCL tuning.cc baseLat, Simple protocol)" },
  { "hardware", "nvls_latency_us", T_DOUBLE, "us", 1e3, "25", 0, 1e6, NULL, TRUE, S_NS,
    CO (base_latency_ns[SIM_COLLECTIVE_ALGO_NVLS]), "per-call NVLS latency (NCCL tuning.cc hwLat NVLink NVLS, Simple)" },
  { "hardware", "collnet_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, CO (collnet_eff),
    "CollNet (InfiniBand SHARP) all-reduce bandwidth factor of NCCL's tuner for this GPU; needed when the fabric has sharp" },
  { "hardware", "collnet_nvlink_latency_us", T_DOUBLE, "us", 1e3, "3.7", 0, 1e6, NULL, TRUE, S_NS,
    CO (collnet_nvlink_latency_ns), "CollNet Direct exchange inside the domain (NCCL tuning.cc hwLat NVLink CollNetDirect, Simple)" },
  { "hardware", "collnet_arity_us", T_DOUBLE, "us", 1e3, "0.4", 0, 1e6, NULL, TRUE, S_NS, CO (collnet_arity_ns),
    "CollNet Direct serialization per local rank beyond the first (NCCL tuning.cc, 0.4 us arity latency)" },
  { "hardware", "nvlink_step_latency_us", T_DOUBLE, "us", 1e3, "3.4", 0, 1e6, NULL, TRUE, S_NS,
    CO (nvlink_step_latency_ns), "per collective step over NVLink (NCCL tuning.cc hwLat NVLink ring, Simple)" },
  { "hardware", "net_overhead_us", T_DOUBLE, "us", 1e3, "1.0", 0, 1e3, NULL, TRUE, S_NS, CO (net_overhead_ns),
    "the host's network post overhead: each NVLink step of a ring that crosses the network takes at least "
    "this, three times it under Simple (NCCL tuning.cc getNetOverhead: 1 us, 2 us on AMD x86 hosts)" },
  { "hardware", "nccl_nvlink_channels", T_DOUBLE, "", 1, "32", 1, 1024, NULL, TRUE, S_DOUBLE, CO (nvlink_channels),
    "NCCL channels of a collective inside one NVLink domain, its weight when links are shared (DGX B200 log: 32 coll channels, NVIDIA/nccl#1646)" },
  { "hardware", "ll_base_latency_us", T_DOUBLE, "us", 1e3, "6.6", 0, 1e6, NULL, TRUE, S_NS, CO (ll_base_latency_ns),
    "per-call latency of NCCL's LL protocol (tuning.cc baseLat Ring LL; Tree LL 6.8)" },
  { "hardware", "ll_nvlink_step_latency_us", T_DOUBLE, "us", 1e3, "0.6", 0, 1e6, NULL, TRUE, S_NS,
    CO (ll_nvlink_step_latency_ns), "per LL step over NVLink (NCCL tuning.cc hwLat NVLink ring and tree, LL)" },
  { "hardware", "ll_bw_fraction", T_DOUBLE, "", 1, "0.25", 0, 1, NULL, TRUE, S_DOUBLE, CO (ll_bw_fraction),
    "LL bus bandwidth / Simple's (NCCL tuning.cc: ring LL x1/4 across nodes and for all-reduce, tree LL x1/3.8); 0: Simple only" },
  { "hardware", "coll_chunk_KiB", T_DOUBLE, "KiB", 1024, "512", 0, 1e6, NULL, TRUE, S_DOUBLE, CO (chunk_bytes),
    "pipelining chunk of chains and trees (NCCL_BUFFSIZE 4 MiB / 8 steps)" },
  { "hardware", "mem_insitu", T_DOUBLE, "", 1, OPT, 0, 2, NULL, TRUE, S_DOUBLE, GP (mem_insitu),
    "in-situ scale on mem_eff fitted on published step times (scenarios/calibration/); absent: 1" },
  { "hardware", "attn_insitu", T_DOUBLE, "", 1, OPT, 0, 2, NULL, TRUE, S_DOUBLE, GP (attn_insitu),
    "in-situ scale on attn_eff and attn_bwd_eff (a calibration layer's; the shipped deck does not pin it); "
    "absent or 0: the 16-bit GEMM's, gemm_insitu_bf16 (gemm_insitu_fp16 for FP16 attention)" },
  { "hardware", "launch_us", T_DOUBLE, "us", 1e3, OPT, 0, 1e5, NULL, TRUE, S_NS, GP (launch_ns),
    "per-kernel launch and tail overhead; absent: not known" },
  { "hardware", "step_overhead_ms", T_DOUBLE, "ms", 1e6, OPT, 0, 1e4, NULL, TRUE, S_NS, GP (step_overhead_ns),
    "fixed time per training step after the optimizer on every rank (host work between steps: data, "
    "loss and grad-norm reductions, logging, timers); absent: 0" },
  { "hardware", "eager_op_us", T_DOUBLE, "us", 1e3, "7.04", 0, 1e5, NULL, TRUE, S_NS, GP (eager_op_ns),
    "host time of one eager PyTorch op from Python (call, dispatch, launch), paid per tensor of a list "
    "collective (zero3_blocking); default: this project's H100 host, calib/results/h100-sxm-2026-11-26/"
    "torch-kernels.tsv (launch eager, 2000 x add_)" },
  { "hardware", "peak_log_sigma", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (peak_log_sigma),
    "σ of ln(the part's dense peak / peak_*_TFLOPS) where the peaks are an assumption (e.g. the midpoint of "
    "two datasheet bounds): the band adds it times the share of the step its GEMM and attention kernels' "
    "compute-bound time makes, in quadrature; absent: the peaks are datasheet figures" },
  { "hardware", "overlap_slowdown", T_DOUBLE, "", 1, OPT, 0, 1, NULL, TRUE, S_DOUBLE, GP (overlap_slowdown),
    "compute slowdown while communication kernels share SMs; absent: not known" },
  /* Written by `trainsim fit` (calib/profile.c): fitted constants and measured tables, one list entry
   * per series; their 1σ, χ²/dof and files are in the profile's comments, calib_source names the
   * files. Parallel lists: entry i of every list of a family belongs together. */
  { "hardware", "calib_source", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(provenance)"),
    "trainsim fit: the measurement files the fitted keys come from" },
  { "hardware", "nccl_collectives", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: collective of each alpha-beta line (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv)" },
  { "hardware", "nccl_nranks", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: ranks of each alpha-beta line" },
  { "hardware", "nccl_alpha_us", T_LIST, "us", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: latency alpha of t = alpha + size * busbw factor / busbw" },
  { "hardware", "nccl_busbw_GBps", T_LIST, "GB/s", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: asymptotic bus bandwidth of each alpha-beta line (nccl-tests convention)" },
  { "hardware", "gemm_dtypes", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: dtype of each GEMM curve rate = peak / (1 + (x_half/x)^hill), x = 2MNK" },
  { "hardware", "gemm_peak_TFLOPS", T_LIST, "TFLOP/s", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: fitted GEMM peak per dtype" },
  { "hardware", "gemm_half_GFLOP", T_LIST, "GFLOP", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: GEMM work at half the fitted peak per dtype" },
  { "hardware", "gemm_hill", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: sharpness of each GEMM curve" },
  { "hardware", "gemm_table", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: measured GEMMs as dtype:MxNxK:TFLOPS (MxNxKxBATCH when grouped), for interpolation" },
  { "hardware", "attention_passes", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: pass (fwd, bwd) of each attention curve, x = causal FLOPs" },
  { "hardware", "attention_peak_TFLOPS", T_LIST, "TFLOP/s", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: fitted attention peak per pass (the bench's unfused kernel)" },
  { "hardware", "attention_half_GFLOP", T_LIST, "GFLOP", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: attention work at half the fitted peak per pass" },
  { "hardware", "attention_hill", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: sharpness of each attention curve" },
  { "hardware", "attention_table", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: measured attention as pass:BxHxHkvxSxD:TFLOPS, for interpolation" },
  { "hardware", "memory_ops", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: op of each memory curve (read, write, copy, rmsnorm_fwd, layernorm_fwd, swiglu_fwd, gelu_fwd, adam), x = bytes moved" },
  { "hardware", "memory_peak_GBps", T_LIST, "GB/s", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: fitted bandwidth peak per memory op" },
  { "hardware", "memory_half_MB", T_LIST, "MB", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: bytes moved at half the fitted peak per memory op" },
  { "hardware", "memory_hill", T_LIST, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(calibration)"),
    "trainsim fit: sharpness of each memory curve" },

  /* [calibration]: what `trainsim fit --runs` learned from published step times (scenarios/calibration/) */
  { "calibration", "generation", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_STR, RU (calibration),
    "GPU generation the [hardware] in-situ scales and launch_us of this file were fitted for" },
  { "calibration", "band_log_sigma", T_DOUBLE, "", 1, OPT, 0, 5, NULL, TRUE, S_DOUBLE, RU (band_log_sigma),
    "σ of ln(measured / predicted step) over the deck's rows of the generation, each predicted by a fit "
    "that left its source out: the width of every prediction's band; absent: no band" },
  { "calibration", "covariance", T_STRING, "", 1, OPT, 0, 0, NULL, TRUE, S_NONE, NO ("(the band)"),
    "the fitted constants' covariance, `KEY KEY …: C11 C12 …` (row-major, in the fit's coordinates: 1/scale "
    "for gemm_insitu_* and mem_insitu, µs for launch_us, ms for step_overhead_ms): widens each "
    "prediction's band by the constants' own uncertainty through the step's sensitivity to them" },

  /* [cluster] */
  { "cluster", "gpus", T_INT, "", 1, REQ, 1, 4194304, NULL, FALSE, S_INT, CL (gpus),
    "GPUs in the job; nodes, domains and dp derive from it" },
  { "cluster", "gpus_per_node", T_INT, "", 1, REQ, 1, 1024, NULL, FALSE, S_INT, CL (gpus_per_node),
    "GPUs per host or tray (8 HGX/DGX, 4 GB200 tray)" },
  { "cluster", "nvlink_domain", T_INT, "", 1, REQ, 1, 4096, NULL, FALSE, S_INT, CL (nvlink_domain),
    "GPUs one NVSwitch fabric connects (8, or 72 for NVL72)" },
  { "cluster", "gpus_per_domain_used", T_INT, "", 1, "0", 0, 4096, NULL, FALSE, S_INT, CL (gpus_per_domain_used),
    "GPUs the job uses per domain (MLPerf GB200: 64 of 72); 0: nvlink_domain" },
  { "cluster", "nvlink_latency_us", T_DOUBLE, "us", 1e3, OPT, 0, 1e6, NULL, FALSE, S_NS, CL (nvlink_latency_ns),
    "NVLink one-way latency; absent: not known" },
  { "cluster", "nics_per_gpu", T_INT, "", 1, "1", 1, 64, NULL, FALSE, S_INT, CL (nics_per_gpu), "scale-out NICs per GPU" },
  { "cluster", "nic_Gbps", T_DOUBLE, "Gb/s", 1e9 / 8, REQ, 1, 1e5, NULL, FALSE, S_DOUBLE, CL (nic_bw_bytes_per_s),
    "NIC line rate per direction" },
  { "cluster", "nic_latency_us", T_DOUBLE, "us", 1e3, OPT, 0, 1e6, NULL, FALSE, S_NS, CL (nic_latency_ns),
    "NIC-to-NIC one-way latency excluding switch hops; absent: not known" },
  { "cluster", "virtualization_overhead", T_DOUBLE, "", 1, "0", 0, 0.9, NULL, FALSE, S_DOUBLE,
    RU (virtualization_overhead), "fractional slowdown of a VM against bare metal (0: bare metal)" },

  /* [fabric] */
  { "fabric", "name", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(printed only)"), "fabric name" },
  { "fabric", "description", T_STRING, "", 1, OPT, 0, 0, NULL, FALSE, S_NONE, NO ("(printed only)"),
    "technology and where the design comes from" },
  { "fabric", "kind", T_ENUM, "", 1, REQ, 0, 0, "rail_optimized, fat_tree", FALSE, S_ENUM, FA (kind),
    "rail_optimized: NIC i of every node on leaf group i; fat_tree: nodes on leaves" },
  { "fabric", "routing", T_ENUM, "", 1, "static", 0, 0, "static, adaptive", FALSE, S_ENUM, FA (routing),
    "static: one ECMP path per flow; adaptive: switches spread each flow over all up-ports (IB AR, Spectrum-X)" },
  { "fabric", "tiers", T_INT, "", 1, REQ, 2, 3, NULL, FALSE, S_INT, FA (tiers), "switch tiers: 2 leaf-spine, 3 leaf-spine-core" },
  { "fabric", "radix", T_INT, "", 1, REQ, 2, 4096, NULL, FALSE, S_INT, FA (radix), "ports per switch" },
  { "fabric", "planes", T_INT, "", 1, "1", 1, 64, NULL, FALSE, S_INT, FA (planes),
    "independent switch planes each NIC port is split over (multi-plane: an 800G NIC as 4 x 200G on 4 "
    "planes); each plane is the fabric described, its ports at 1/planes of the rates; adaptive routing only" },
  { "fabric", "oversubscription_leaf", T_DOUBLE, "", 1, "1", 1, 64, NULL, FALSE, S_DOUBLE, FA (oversubscription[0]),
    "leaf down/up capacity; 1: non-blocking" },
  { "fabric", "oversubscription_spine", T_DOUBLE, "", 1, "1", 1, 64, NULL, FALSE, S_DOUBLE, FA (oversubscription[1]),
    "spine down/up capacity (3 tiers)" },
  { "fabric", "oversubscription_core", T_DOUBLE, "", 1, "1", 1, 64, NULL, FALSE, S_DOUBLE, FA (oversubscription[2]),
    "core tier ratio (unused below 4 tiers)" },
  { "fabric", "link_Gbps", T_DOUBLE, "Gb/s", 1e9 / 8, "0", 0, 1e5, NULL, FALSE, S_DOUBLE, FA (link_bw_bytes_per_s),
    "switch-to-switch link rate; 0: the NIC rate" },
  { "fabric", "hop_latency_us", T_DOUBLE, "us", 1e3, OPT, 0, 1e6, NULL, FALSE, S_NS, FA (hop_latency_ns),
    "latency per switch hop; absent: not known" },
  { "fabric", "sharp", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_BOOL, FA (sharp),
    "the switches reduce (InfiniBand SHARP): all-reduces across NVLink domains may run NCCL's CollNet Direct "
    "(NCCL_COLLNET_ENABLE=1, SLURM --network=sharp); false on fabrics without in-network reduction" },
  { "fabric", "collnet_latency_us", T_DOUBLE, "us", 1e3, "31", 0, 1e6, NULL, FALSE, S_NS, CO (collnet_net_latency_ns),
    "a CollNet reduction's round trip through the switches (NCCL tuning.cc hwLat NET CollNetDirect, Simple)" },
  { "fabric", "nic_eff", T_DOUBLE, "", 1, OPT, 0, 1, NULL, FALSE, S_DOUBLE, CO (nic_eff),
    "payload / wire bytes on the scale-out network (packet headers); needed by collectives" },
  { "fabric", "net_step_latency_us", T_DOUBLE, "us", 1e3, "14", 0, 1e6, NULL, FALSE, S_NS, CO (net_step_latency_ns),
    "per collective step across the network (NCCL tuning.cc hwLat NET ring, Simple)" },
  { "fabric", "ll_net_step_latency_us", T_DOUBLE, "us", 1e3, "2.7", 0, 1e6, NULL, FALSE, S_NS,
    CO (ll_net_step_latency_ns), "per LL ring step across the network (NCCL tuning.cc hwLat NET ring, LL)" },
  { "fabric", "ll_tree_net_step_latency_us", T_DOUBLE, "us", 1e3, "5.0", 0, 1e6, NULL, FALSE, S_NS,
    CO (ll_tree_net_step_latency_ns), "per LL tree step across the network (NCCL tuning.cc hwLat NET tree, LL)" },
  { "fabric", "nccl_channels_per_nic", T_DOUBLE, "", 1, "2", 1, 64, NULL, FALSE, S_DOUBLE, CO (net_channels_per_nic),
    "NCCL channels per NIC of a collective across domains and per network peer of a send (share weight): 16 channels on 8-NIC H100 nodes (NVIDIA/nccl#1453 log), NCHANNELS_PER_NET_PEER 2 (src/graph/topo.cc)" },
  { "fabric", "coll_channels", T_INT, "", 1, "0", 0, 1024, NULL, FALSE, S_INT, CO (channels),
    "parallel rings per collective; 0: one per rail the group spans (NCCL uses one channel per NIC)" },

  /* [training] */
  { "training", "seq_len", T_INT, "", 1, REQ, 1, 16777216, NULL, FALSE, S_INT, SH (seq_len), "tokens per sequence" },
  { "training", "document_tokens", T_INT, "", 1, "0", 0, 16777216, NULL, FALSE, S_INT, SH (doc_tokens),
    "document masking: attention stays within packed documents of this length-weighted mean length (sum of "
    "squared lengths / sum of lengths); 0: one document per sequence" },
  { "training", "steps", T_INT, "", 1, OPT, 1, 1e12, NULL, FALSE, S_NONE, RU (steps),
    "optimizer steps to train; give this or tokens" },
  { "training", "tokens", T_DOUBLE, "", 1, OPT, 1, 1e16, NULL, FALSE, S_NONE, RU (tokens),
    "tokens to train; steps = ceil(tokens / (global_batch × seq_len))" },
  { "training", "init_s", T_DOUBLE, "s", 1, "0", 0, 1e7, NULL, FALSE, S_DOUBLE, RU (init_s),
    "start-up before the first step that counts toward time to train" },
  { "training", "eval_interval_seqs", T_INT, "", 1, OPT, 1, 1e12, NULL, FALSE, S_I64, RU (eval_interval_seqs),
    "evaluate after every so many training sequences (rounded up to whole steps)" },
  { "training", "eval_seqs", T_INT, "", 1, OPT, 1, 1e12, NULL, FALSE, S_I64, RU (eval_seqs),
    "sequences in one evaluation pass" },
  { "training", "memory_overhead_GiB", T_DOUBLE, "GiB", 1073741824.0, OPT, 0, 1e4, NULL, FALSE, S_NONE,
    RU (memory_overhead_bytes), "CUDA context and NCCL buffers per GPU; absent: 0.5 GiB + 0.6 GiB per communicator (model/memory.h)" },
  { "training", "eval_skip", T_INT, "", 1, "0", 0, 1e6, NULL, FALSE, S_INT, RU (eval_skip),
    "evaluations skipped at the start" },

  /* [reliability]: read by sim/plan/goodput.c through sim_scenario_get_number (SI: rates per second) */
  { "reliability", "gpu_failures_per_day", T_DOUBLE, "1/day", 1.0 / 86400, "0", 0, 1, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "job interruptions caused by one GPU per day (GPU, HBM, SRAM, GSP, SDC, thermal)" },
  { "reliability", "node_failures_per_day", T_DOUBLE, "1/day", 1.0 / 86400, "0", 0, 1, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "interruptions per node (host, tray) per day: host maintenance, CPU, DRAM, PSU, SSD, board" },
  { "reliability", "nic_failures_per_day", T_DOUBLE, "1/day", 1.0 / 86400, "0", 0, 1, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "interruptions per scale-out NIC per day" },
  { "reliability", "switch_failures_per_day", T_DOUBLE, "1/day", 1.0 / 86400, "0", 0, 1, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "interruptions per fabric switch per day (switches counted by the topology)" },
  { "reliability", "link_failures_per_day", T_DOUBLE, "1/day", 1.0 / 86400, "0", 0, 1, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "interruptions per scale-out cable per day (NIC-leaf, leaf-spine, spine-core cables)" },
  { "reliability", "software_failures_per_day", T_DOUBLE, "1/day", 1.0 / 86400, "0", 0, 10, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "interruptions per node per day from software (bugs, NCCL timeouts, dependencies)" },
  { "reliability", "distribution", T_ENUM, "", 1, "exponential", 0, 0, "exponential, weibull", FALSE, S_NONE,
    NO ("SimGoodputParams.distribution"), "job inter-failure times: exponential (Poisson) or weibull" },
  { "reliability", "weibull_shape", T_DOUBLE, "", 1, "1", 0.1, 10, NULL, FALSE, S_NONE,
    NO ("SimGoodputParams.weibull_shape"), "Weibull shape k (< 1: failures cluster; 1: exponential)" },
  { "reliability", "checkpoint_GB", T_DOUBLE, "GB", 1e9, OPT, 0.001, 1e9, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "checkpoint size; absent: weights + optimizer state of the model and plan" },
  { "reliability", "write_GBps_per_gpu", T_DOUBLE, "GB/s", 1e9, "0", 0, 1e4, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "checkpoint write rate one GPU's writer reaches (local NVMe, client link); 0: no limit" },
  { "reliability", "write_GBps_aggregate", T_DOUBLE, "GB/s", 1e9, "0", 0, 1e7, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "storage write rate of the whole job (parallel file system, blob); 0: no limit" },
  { "reliability", "read_GBps_per_gpu", T_DOUBLE, "GB/s", 1e9, "0", 0, 1e4, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "checkpoint read rate per GPU on restart; 0: as write_GBps_per_gpu" },
  { "reliability", "read_GBps_aggregate", T_DOUBLE, "GB/s", 1e9, "0", 0, 1e7, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "storage read rate of the whole job on restart; 0: as write_GBps_aggregate" },
  { "reliability", "async_checkpoint", T_BOOL, "", 1, "false", 0, 0, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "training blocks only for a device-to-host snapshot; the write runs behind it" },
  { "reliability", "snapshot_GBps_per_gpu", T_DOUBLE, "GB/s", 1e9, "0", 0, 1e4, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "device-to-host copy rate of an asynchronous snapshot; required with async_checkpoint" },
  { "reliability", "reinit_s", T_DOUBLE, "s", 1, "0", 0, 1e6, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "after an interruption: detection, rescheduling, process and NCCL start-up" },
  { "reliability", "warmup_s", T_DOUBLE, "s", 1, "0", 0, 1e6, NULL, FALSE, S_NONE,
    NO ("sim/goodput.c"), "after reloading: until steps run at full speed (compilation, data loader, caches)" },
  { "reliability", "repair_h", T_DOUBLE, "h", 3600, "0", 0, 1e5, NULL, FALSE, S_NONE,
    NO ("SimGoodputParams.repair_s"), "a node taken out by a hardware failure is back after this; 0: at once" },
  { "reliability", "spare_nodes", T_INT, "", 1, "0", 0, 1e6, NULL, FALSE, S_NONE,
    NO ("SimGoodputParams.spare_nodes"), "hot spare nodes that replace a failed one at once (with repair_h > 0)" },
  { "reliability", "checkpoint_interval_min", T_DOUBLE, "min", 60, "0", 0, 1e8, NULL, FALSE, S_NONE,
    NO ("SimGoodputParams.interval_s"), "training time between checkpoints; 0: Daly's optimum" },

  /* [cost]: read by sim/report/cost.c */
  { "cost", "usd_per_gpu_hour", T_DOUBLE, "USD/h", 1, "0", 0, 1e4, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "all-in price of one GPU-hour (cloud); 0: capex + energy below" },
  { "cost", "capex_usd_per_gpu", T_DOUBLE, "USD", 1, "0", 0, 1e8, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "purchase price per GPU with its share of servers, network and facility" },
  { "cost", "amortization_years", T_DOUBLE, "years", 1, "0", 0, 50, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "years over which capex is spread (every hour of them billed); required with capex_usd_per_gpu" },
  { "cost", "usd_per_kWh", T_DOUBLE, "USD/kWh", 1, "0", 0, 100, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "electricity price (added to capex; included in usd_per_gpu_hour)" },
  { "cost", "gpu_busy_W", T_DOUBLE, "W", 1, "0", 0, 1e5, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "GPU power while computing; 0: hardware tdp_W" },
  { "cost", "gpu_idle_W", T_DOUBLE, "W", 1, "0", 0, 1e5, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "GPU power while idle (waiting, restarting)" },
  { "cost", "gpu_utilization", T_DOUBLE, "", 1, "1", 0, 1, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "share of a training step the GPU draws busy power: P = idle + (busy - idle) x utilization" },
  { "cost", "node_W", T_DOUBLE, "W", 1, "0", 0, 1e6, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "power per node besides its GPUs and scale-out NICs (CPUs, memory, NVSwitch, fans)" },
  { "cost", "nic_W", T_DOUBLE, "W", 1, "0", 0, 1e4, NULL, FALSE, S_NONE, NO ("sim/cost.c"), "power per scale-out NIC" },
  { "cost", "switch_W", T_DOUBLE, "W", 1, "0", 0, 1e6, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "power per fabric switch (switches counted by the topology)" },
  { "cost", "pue", T_DOUBLE, "", 1, "1", 1, 5, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "power usage effectiveness: facility energy / IT energy" },
  { "cost", "grid_kgCO2e_per_kWh", T_DOUBLE, "kgCO2e/kWh", 1, "0", 0, 5, NULL, FALSE, S_NONE, NO ("sim/cost.c"),
    "carbon intensity of the electricity" },
};

const gsize sim_scenario_key_table_len = G_N_ELEMENTS (sim_scenario_keys);

static const char *const type_names[] = { "int", "double", "bool", "string", "enum", "list" };

static SimScenarioKeyInfo
key_info (const Key *k)
{
  static char ranges[G_N_ELEMENTS (sim_scenario_keys)][64];
  gsize i = (gsize) (k - sim_scenario_keys);
  if (k->type == T_INT || k->type == T_DOUBLE)
    g_snprintf (ranges[i], sizeof ranges[i], "%.15g..%.15g", k->min, k->max);
  else
    g_snprintf (ranges[i], sizeof ranges[i], "%s", key_enums (k));
  SimScenarioKeyInfo info = {
    k->group, k->key, type_names[k->type], k->unit,
    k->def == REQ ? "required" : (*k->def ? k->def : "optional"),
    ranges[i], k->meaning, k->lands,
  };
  return info;
}

guint
sim_scenario_n_keys (void)
{
  return G_N_ELEMENTS (sim_scenario_keys);
}

const SimScenarioKeyInfo *
sim_scenario_key (guint i)
{
  static SimScenarioKeyInfo infos[G_N_ELEMENTS (sim_scenario_keys)];
  g_return_val_if_fail (i < G_N_ELEMENTS (sim_scenario_keys), NULL);
  infos[i] = key_info (&sim_scenario_keys[i]);
  return &infos[i];
}

void
sim_scenario_write_key_table (FILE *out)
{
  const char *group = "";
  for (guint i = 0; i < G_N_ELEMENTS (sim_scenario_keys); i++)
    {
      const SimScenarioKeyInfo *k = sim_scenario_key (i);
      if (strcmp (k->group, group) != 0)
        {
          group = k->group;
          fprintf (out, "%s### [%s]\n\n| key | type | unit | default | sane range | meaning |\n"
                        "|---|---|---|---|---|---|\n", i ? "\n" : "", group);
        }
      fprintf (out, "| `%s` | %s | %s | %s | %s | %s |\n", k->key, k->type, k->unit, k->default_text,
               k->range, k->meaning);
    }
}
