/* The argument table of Megatron-LM core_v0.15.0 megatron/training/arguments.py (import-megatron-flags.h),
 * grouped as its _add_*_args functions group them. The arity follows each add_argument call (action
 * store_true/store_false: F; nargs '*' or '+': L; else V; a trailing I or F: type=int or type=float).
 * M: read by import-megatron.c; I: ignored (logging, checkpoints, data paths, learning rate,
 * initialization, inference, ...); U: matters for performance and has no trainsim key. The list was
 * taken from the add_argument calls of that file; the classes are trainsim's. */
#include "config.h"
#include <string.h>
#include "sim/scenario/import-megatron-flags.h"

#define F SIM_MEGATRON_FLAG, SIM_MEGATRON_TEXT
#define V SIM_MEGATRON_VALUE, SIM_MEGATRON_TEXT
#define VI SIM_MEGATRON_VALUE, SIM_MEGATRON_INT
#define VF SIM_MEGATRON_VALUE, SIM_MEGATRON_FLOAT
#define L SIM_MEGATRON_LIST, SIM_MEGATRON_TEXT
#define LI SIM_MEGATRON_LIST, SIM_MEGATRON_INT
#define LF SIM_MEGATRON_LIST, SIM_MEGATRON_FLOAT
#define M(n, a) { n, a, SIM_MEGATRON_MAPPED, NULL }
#define I(n, a) { n, a, SIM_MEGATRON_IGNORED, NULL }
#define U(n, a, why) { n, a, SIM_MEGATRON_UNKNOWN, why }

static const SimMegatronFlag flags[] = {
  /* transformer engine */
  M ("--fp8-format", V), M ("--fp8-recipe", V), I ("--fp8-margin", VI), I ("--fp8-interval", VI),
  I ("--fp8-amax-history-len", VI), I ("--fp8-amax-compute-algo", V),
  U ("--no-fp8-wgrad", F, "weight-gradient GEMMs in higher precision: trainsim runs every layer GEMM in matmul_dtype"),
  M ("--transformer-impl", V), M ("--fp8-param-gather", F), M ("--first-last-layers-bf16", F),
  M ("--num-layers-at-start-in-bf16", VI), M ("--num-layers-at-end-in-bf16", VI), M ("--fp4-format", V),
  M ("--fp4-recipe", V),
  U ("--fp4-param-gather", F, "FP4 parameter all-gather: trainsim has fp8_param_gather only"),
  I ("--te-rng-tracker", F), I ("--inference-rng-tracker", F),
  /* inference */
  I ("--inference-batch-times-seqlen-threshold", VI), I ("--max-tokens-to-oom", VI),
  I ("--output-bert-embeddings", F), I ("--bert-embedder-type", V), I ("--flash-decode", F),
  M ("--enable-cuda-graph", F), I ("--cuda-graph-warmup-steps", VI), M ("--external-cuda-graph", F),
  M ("--cuda-graph-impl", V), I ("--cuda-graph-scope", V), I ("--inference-max-requests", VI),
  I ("--inference-max-seq-length", VI), I ("--inference-max-batch-size", VI),
  I ("--inference-dynamic-batching", F), I ("--inference-dynamic-batching-buffer-size-gb", VF),
  I ("--inference-dynamic-batching-block-size", VI),
  I ("--inference-dynamic-batching-buffer-guaranteed-fraction", VF),
  I ("--inference-dynamic-batching-buffer-overflow-factor", VF),
  I ("--inference-dynamic-batching-max-requests-override", VI),
  I ("--inference-dynamic-batching-max-tokens-override", VI),
  I ("--inference-dynamic-batching-num-cuda-graphs", VI),
  I ("--inference-dynamic-batching-track-paused-request-events", F), I ("--decode-only-cuda-graphs", F),
  I ("--inference-dynamic-batching-unified-memory-level", VI), I ("--symmetric-ar-type", V),
  I ("--nccl-all-reduce-for-prefill", F), I ("--mlp-chunks-for-prefill", VI),
  I ("--disable-chunked-prefill", F),
  /* retro */
  I ("--retro-project-dir", V),
  U ("--retro-add-retriever", F, "Retro's retriever encoder is not modelled"),
  I ("--retro-cyclic-train-iters", VI), I ("--retro-encoder-layers", VI),
  I ("--retro-encoder-hidden-dropout", VF), I ("--retro-encoder-attention-dropout", VF),
  I ("--retro-num-neighbors", VI), I ("--retro-num-retrieved-chunks", VI), I ("--retro-attention-gate", VF),
  I ("--retro-no-verify-neighbor-count", F),
  /* network size */
  M ("--num-layers", VI),
  U ("--encoder-num-layers", VI, "encoder-decoder models are not modelled"),
  U ("--decoder-num-layers", VI, "encoder-decoder models are not modelled"),
  M ("--hidden-size", VI), M ("--ffn-hidden-size", VI), M ("--num-attention-heads", VI),
  M ("--attention-backend", V), M ("--kv-channels", VI), M ("--group-query-attention", F),
  M ("--num-query-groups", VI), I ("--softmax-type", V),
  M ("--window-size", V), M ("--window-attn-skip-freq", V),
  M ("--max-position-embeddings", VI), M ("--position-embedding-type", V),
  I ("--relative-attention-num-buckets", VI), I ("--relative-attention-max-distance", VI),
  M ("--use-rotary-position-embeddings", F), I ("--rotary-base", VI), I ("--rotary-percent", VF),
  I ("--rotary-interleaved", F), I ("--rotary-seq-len-interpolation-factor", VI),
  I ("--use-rope-scaling", F), I ("--rope-scaling-factor", VF), I ("--no-rope-freq", V),
  M ("--no-position-embedding", F), I ("--mrope-section", LI), M ("--make-vocab-size-divisible-by", VI),
  M ("--normalization", V), I ("--norm-epsilon", VF), I ("--apply-layernorm-1p", F),
  I ("--apply-residual-connection-post-layernorm", F), I ("--openai-gelu", F), M ("--squared-relu", F),
  M ("--swiglu", F), M ("--quick-geglu", F), I ("--activation-func-clamp-value", VF),
  I ("--glu-linear-offset", VF), I ("--onnx-safe", V), I ("--bert-no-binary-head", F),
  M ("--untie-embeddings-and-output-weights", F),
  M ("--multi-latent-attention", F), M ("--mtp-num-layers", VI),
  I ("--mtp-loss-scaling-factor", VF),
  /* straggler detector */
  I ("--log-straggler", F), I ("--disable-straggler-on-startup", F), I ("--straggler-ctrlr-port", VI),
  I ("--straggler-minmax-count", VI),
  /* workload inspector server */
  I ("--run-workload-inspector-server", F),
  /* inprocess restart */
  I ("--inprocess-restart", F), I ("--inprocess-max-iterations", VI),
  I ("--inprocess-monitor-thread-interval", VF), I ("--inprocess-monitor-process-interval", VF),
  I ("--inprocess-progress-watchdog-interval", VF), I ("--inprocess-heartbeat-interval", VF),
  I ("--inprocess-soft-timeout", VF), I ("--inprocess-hard-timeout", VF),
  I ("--inprocess-heartbeat-timeout", VF), I ("--inprocess-barrier-timeout", VF),
  I ("--inprocess-completion-timeout", VF), I ("--inprocess-last-call-wait", VF),
  I ("--inprocess-termination-grace-time", VF), I ("--inprocess-granularity", V),
  I ("--inprocess-empty-cuda-cache", F), I ("--inprocess-active-world-size", VI),
  /* one logger */
  I ("--no-one-logger", F), I ("--one-logger-project", V), I ("--one-logger-run-name", V),
  I ("--one-logger-async", F), I ("--app-tag-run-name", V), I ("--app-tag-run-version", V),
  /* ft package */
  I ("--enable-ft-package", F), I ("--calc-ft-timeouts", F),
  /* config logger */
  I ("--config-logger-dir", V),
  /* logging */
  I ("--log-params-norm", F), I ("--log-num-zeros-in-grad", F), I ("--log-throughput", F),
  I ("--log-progress", F), I ("--timing-log-level", VI), I ("--log-energy", F),
  I ("--no-barrier-with-level-1-timing", F), I ("--timing-log-option", V),
  I ("--tensorboard-log-interval", VI), I ("--tensorboard-queue-size", VI),
  I ("--log-timers-to-tensorboard", F), I ("--no-log-loss-scale-to-tensorboard", F),
  I ("--log-validation-ppl-to-tensorboard", F), I ("--log-memory-to-tensorboard", F),
  I ("--log-world-size-to-tensorboard", F), I ("--wandb-project", V), I ("--wandb-entity", V),
  I ("--wandb-exp-name", V), I ("--wandb-save-dir", V), I ("--logging-level", VI),
  /* regularization */
  M ("--attention-dropout", VF), M ("--hidden-dropout", VF), I ("--weight-decay", VF),
  I ("--start-weight-decay", VF), I ("--end-weight-decay", VF), I ("--weight-decay-incr-style", V),
  I ("--clip-grad", VF), I ("--adam-beta1", VF), I ("--adam-beta2", VF), I ("--adam-eps", VF),
  I ("--sgd-momentum", VF),
  /* rl */
  U ("--perform-rl-step", F, "an RL step with rollouts is not a pretraining step"),
  I ("--rl-prompts-per-eval", VI), I ("--grpo-prompts-per-step", VI), I ("--grpo-group-size", VI),
  I ("--grpo-iterations", VI), I ("--grpo-clamp-eps-lower", VF), I ("--grpo-clamp-eps-upper", VF),
  I ("--grpo-kl-beta", VF), I ("--grpo-entropy-term-weight", VF),
  I ("--grpo-filter-groups-with-same-reward", F), I ("--grpo-default-temperature", VF),
  I ("--grpo-default-top-p", VF), I ("--langrl-inference-server-type", V),
  I ("--langrl-inference-server-conversation-template", V), I ("--langrl-external-server", V),
  I ("--langrl-env-config", V), I ("--rl-offload-optimizer-during-inference", F),
  I ("--rl-offload-kv-cache-during-training", V), I ("--rl-remove-kv-cache-during-training", V),
  I ("--rl-reset-cuda-graphs", V), I ("--rl-partial-rollouts", V),
  I ("--rl-inference-logprobs-is-correction", V), I ("--rl-importance-sampling-truncation-coef", VF),
  I ("--rl-calculate-intra-group-similarity", V), I ("--rl-use-sequence-packing", F),
  I ("--rl-sequence-packing-bin-size", VI), I ("--rl-sequence-packing-algo", V),
  /* training */
  M ("--micro-batch-size", VI),
  U ("--batch-size", VI, "Megatron-LM rejects it: use --micro-batch-size"),
  M ("--global-batch-size", VI),
  U ("--rampup-batch-size", L, "a batch-size ramp-up: trainsim simulates one batch size"),
  I ("--decrease-batch-size-if-needed", F), M ("--recompute-activations", F),
  M ("--recompute-granularity", V), I ("--no-check-for-nan-in-loss-and-grad", F),
  I ("--check-for-spiky-loss", F), I ("--check-for-large-grads", F),
  U ("--distribute-saved-activations", F, "recompute inputs split over TP: not in trainsim's memory model"),
  M ("--recompute-method", V), M ("--recompute-num-layers", VI), M ("--recompute-modules", L),
  I ("--no-clone-scatter-output-in-embedding", F), I ("--profile", F), I ("--profile-step-start", VI),
  I ("--profile-step-end", VI), I ("--iterations-to-skip", LI), I ("--result-rejected-tracker-filename", V),
  I ("--disable-gloo-process-groups", F), I ("--use-pytorch-profiler", F), I ("--profile-ranks", LI),
  I ("--record-memory-history", F), I ("--memory-snapshot-path", V), M ("--tp-comm-overlap", F),
  U ("--tp-comm-overlap-cfg", V, "a userbuffers settings file: give its settings as [tp_overlap] keys (scenarios/tp-overlap/)"),
  U ("--disable-tp-comm-overlap-ag", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  U ("--disable-tp-comm-overlap-rs", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  U ("--tp-comm-overlap-rs-dgrad", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  U ("--disable-tp-comm-bulk-dgrad", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  U ("--disable-tp-comm-bulk-wgrad", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  I ("--tp-comm-bootstrap-backend", V), I ("--use-cpu-initialization", F),
  I ("--empty-unused-memory-level", VI),
  U ("--deterministic-mode", F, "deterministic kernels are not modelled"),
  I ("--check-weight-hash-across-dp-replicas-interval", VI), I ("--calculate-per-token-loss", F),
  I ("--train-sync-interval", VI),
  U ("--checkpoint-activations", F, "Megatron-LM rejects it: use --recompute-activations or --recompute-granularity"),
  M ("--train-iters", VI), M ("--train-samples", VI), I ("--log-interval", VI), I ("--exit-interval", VI),
  I ("--exit-duration-in-mins", VI), I ("--exit-signal-handler", F), I ("--tensorboard-dir", V),
  I ("--no-masked-softmax-fusion", F),
  U ("--no-bias-gelu-fusion", F, "an unfused kernel: trainsim's op lists assume the fused one"),
  U ("--no-bias-swiglu-fusion", F, "an unfused kernel: trainsim's op lists assume the fused one"),
  I ("--use-fused-weighted-squared-relu", F),
  U ("--no-bias-dropout-fusion", F, "an unfused kernel: trainsim's op lists assume the fused one"),
  U ("--no-rope-fusion", F, "an unfused kernel: trainsim's op lists assume the fused one"),
  I ("--rope-type", V), M ("--cross-entropy-loss-fusion", F), I ("--cross-entropy-fusion-impl", V),
  M ("--use-flash-attn", F), M ("--disable-bias-linear", F), I ("--add-qkv-bias", F), M ("--optimizer", V),
  U ("--optimizer-cpu-offload", F, "optimizer offload to the CPU is not modelled"),
  U ("--optimizer-offload-fraction", VF, "optimizer offload to the CPU is not modelled"),
  U ("--use-torch-optimizer-for-cpu-offload", F, "optimizer offload to the CPU is not modelled"),
  U ("--overlap-cpu-optimizer-d2h-h2d", F, "optimizer offload to the CPU is not modelled"),
  I ("--no-pin-cpu-grads", F), I ("--no-pin-cpu-params", F), I ("--dataloader-type", V),
  I ("--no-async-tensor-model-parallel-allreduce", F), I ("--no-persist-layer-norm", F),
  M ("--sequence-parallel", F), M ("--no-gradient-accumulation-fusion", F), I ("--use-mcore-models", F),
  U ("--use-legacy-models", F, "legacy (non-Core) models: trainsim models Megatron-Core layers"),
  I ("--manual-gc", F), I ("--manual-gc-interval", VI), I ("--no-manual-gc-eval", F),
  U ("--disable-tp-comm-split-ag", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  U ("--disable-tp-comm-split-rs", F, "a per-GEMM userbuffers method: give it as [tp_overlap] keys"),
  I ("--pipeline-model-parallel-comm-backend", V), I ("--high-priority-stream-groups", L),
  I ("--use-te-activation-func", F),
  /* rerun machine */
  I ("--error-injection-rate", VI), I ("--error-injection-type", V), I ("--rerun-mode", V),
  /* initialization */
  I ("--seed", VI), I ("--data-parallel-random-init", F), I ("--init-method-std", VF),
  I ("--embedding-init-method-std", VF), I ("--init-method-xavier-uniform", F),
  /* learning rate */
  I ("--lr", VF), I ("--lr-decay-style", V), I ("--lr-wsd-decay-style", V), I ("--lr-decay-iters", VI),
  I ("--lr-decay-samples", VI), I ("--lr-wsd-decay-samples", VI), I ("--lr-wsd-decay-iters", VI),
  I ("--lr-warmup-fraction", VF), I ("--lr-warmup-iters", VI), I ("--lr-warmup-samples", VI),
  I ("--lr-warmup-init", VF),
  U ("--warmup", VI, "Megatron-LM rejects it: use --lr-warmup-fraction"),
  I ("--min-lr", VF), I ("--decoupled-lr", VF), I ("--decoupled-min-lr", VF),
  /* checkpointing */
  I ("--save", V), I ("--save-interval", VI), I ("--save-retain-interval", VI), I ("--no-save-optim", F),
  I ("--no-save-rng", F), I ("--load", V), I ("--no-load-optim", F), I ("--load-main-params-from-ckpt", F),
  I ("--no-load-rng", F), I ("--no-strict-fsdp-dtensor-load", F), I ("--non-persistent-save-interval", VI),
  I ("--non-persistent-ckpt-type", V), I ("--non-persistent-global-ckpt-dir", V),
  I ("--non-persistent-local-ckpt-dir", V), I ("--non-persistent-local-ckpt-algo", V), I ("--finetune", F),
  I ("--pretrained-checkpoint", V), I ("--ckpt-step", VI), I ("--no-initialization", F),
  I ("--use-checkpoint-args", F), I ("--use-mp-args-from-checkpoint-args", F),
  I ("--no-use-tokenizer-model-from-checkpoint-args", F), I ("--exit-on-missing-checkpoint", F),
  I ("--use-dist-ckpt", F), I ("--use-persistent-ckpt-worker", F), I ("--auto-detect-ckpt-format", F),
  I ("--dist-ckpt-format", V), I ("--ckpt-format", V), I ("--ckpt-convert-format", V),
  I ("--ckpt-convert-save", V), I ("--ckpt-convert-update-legacy-dist-opt-format", F),
  I ("--ckpt-fully-parallel-save", F), I ("--no-ckpt-fully-parallel-save", F), I ("--async-save", F),
  I ("--ckpt-fully-parallel-load", F), I ("--ckpt-assume-constant-structure", F),
  I ("--dist-ckpt-strictness", V), I ("--dist-ckpt-save-pre-mcore-014", F),
  I ("--dist-ckpt-optim-fully-reshardable", F), I ("--distrib-optim-fully-reshardable-mem-efficient", F),
  /* mixed precision */
  M ("--fp16", F), M ("--bf16", F), M ("--grad-reduce-in-bf16", F), I ("--loss-scale", VF),
  I ("--initial-loss-scale", VF), I ("--min-loss-scale", VF), I ("--loss-scale-window", VF),
  I ("--hysteresis", VI),
  U ("--fp32-residual-connection", F, "an fp32 residual stream is not modelled"),
  I ("--apply-query-key-layer-scaling", F), I ("--attention-softmax-in-fp32", F),
  M ("--accumulate-allreduce-grads-in-fp32", F), I ("--fp16-lm-cross-entropy", F),
  I ("--disable-bf16-reduced-precision-matmul", F), I ("--reuse-grad-buf-for-mxfp8-param-ag", F),
  /* distributed */
  M ("--tensor-model-parallel-size", VI), M ("--pipeline-model-parallel-size", VI),
  M ("--decoder-first-pipeline-num-layers", VI), M ("--pipeline-model-parallel-layout", V),
  M ("--decoder-last-pipeline-num-layers", VI),
  U ("--model-parallel-size", VI, "Megatron-LM rejects it: use --tensor-model-parallel-size"),
  M ("--num-layers-per-virtual-pipeline-stage", VI), M ("--num-virtual-stages-per-pipeline-rank", VI),
  M ("--microbatch-group-size-per-virtual-pipeline-stage", VI), M ("--no-overlap-p2p-communication", F),
  I ("--overlap-p2p-communication-warmup-flush", F), I ("--distributed-backend", V),
  I ("--distributed-timeout-minutes", VI), I ("--distributed-timeout-seconds-after-init", VI),
  M ("--overlap-grad-reduce", F),
  U ("--defer-embedding-wgrad-compute", F, "deferred embedding weight-gradient GEMMs are not modelled"),
  U ("--wgrad-deferral-limit", VI, "deferred embedding weight-gradient GEMMs are not modelled"),
  I ("--no-align-grad-reduce", F),
  U ("--ddp-num-buckets", VI, "a DP bucket size in parameters: trainsim's buckets follow Megatron's default, max(40M, 1M x dp) parameters"),
  U ("--ddp-bucket-size", VI, "a DP bucket size in parameters: trainsim's buckets follow Megatron's default, max(40M, 1M x dp) parameters"),
  I ("--ddp-pad-buckets-for-high-nccl-busbw", F), I ("--ddp-average-in-collective", F),
  M ("--overlap-param-gather", F),
  U ("--overlap-param-gather-with-optimizer-step", F, "the parameter all-gather overlapped with the optimizer step is not modelled"),
  I ("--no-align-param-gather", F), M ("--no-scatter-gather-tensors-in-pipeline", F),
  I ("--use-ring-exchange-p2p", F), I ("--lazy-mpu-init", V),
  M ("--account-for-embedding-in-pipeline-split", F), M ("--account-for-loss-in-pipeline-split", F),
  M ("--use-distributed-optimizer", F), I ("--use-nccl-ub", F), I ("--disable-symmetric-registration", F),
  U ("--use-sharp", F, "SHARP is the fabric's: set [fabric] sharp = true where its switches reduce"),
  I ("--sharp-enabled-group", V), M ("--use-megatron-fsdp", F), I ("--init-model-with-meta-device", F),
  M ("--data-parallel-sharding-strategy", V), I ("--no-gradient-reduce-div-fusion", F),
  I ("--fsdp-double-buffer", F), I ("--suggested-communication-unit-size", VI),
  I ("--keep-fp8-transpose-cache", F),
  U ("--enable-full-sharding-in-hsdp", F, "partial (hybrid) sharding over DP is not modelled"),
  U ("--num-distributed-optimizer-instances", VI, "partial (hybrid) sharding over DP is not modelled"),
  M ("--use-torch-fsdp2", F),
  U ("--torch-fsdp2-no-reshard-after-forward", F, "FSDP2 keeping parameters gathered after forward is not modelled"),
  M ("--context-parallel-size", VI), M ("--cp-comm-type", L),
  U ("--hierarchical-context-parallel-sizes", LI, "hierarchical context parallelism is not modelled"),
  I ("--nccl-communicator-config-path", V), M ("--use-tp-pp-dp-mapping", F), I ("--replication", F),
  I ("--replication-jump", VI), I ("--replication-factor", VI),

  I ("--local-rank", VI),
  /* validation */
  I ("--full-validation", F), I ("--multiple-validation-sets", F), M ("--eval-iters", VI),
  M ("--eval-interval", VI), I ("--test-mode", F), I ("--skip-train", F),
  /* tokenizer */
  M ("--vocab-size", VI), M ("--padded-vocab-size", VI), I ("--vocab-file", V), I ("--merge-file", V),
  I ("--vocab-extra-ids", VI), M ("--tokenizer-type", V), I ("--tokenizer-model", V),
  I ("--tokenizer-metadata", V), I ("--tiktoken-pattern", V), I ("--tiktoken-num-special-tokens", VI),
  I ("--tiktoken-special-tokens", L), I ("--legacy-tokenizer", F), I ("--trust-remote-code", F),
  /* data */
  I ("--data-path", L), I ("--split", V), I ("--train-data-path", L), I ("--valid-data-path", L),
  I ("--test-data-path", L), I ("--data-args-path", V), I ("--per-split-data-args-path", V),
  I ("--data-cache-path", V), I ("--no-mmap-bin-files", F), I ("--mock-data", F), M ("--seq-length", VI),
  M ("--encoder-seq-length", VI), I ("--decoder-seq-length", VI), I ("--retriever-seq-length", VI),
  I ("--sample-rate", VF), I ("--mask-prob", VF), I ("--short-seq-prob", VF), I ("--num-workers", VI),
  I ("--reset-position-ids", F), I ("--reset-attention-mask", F), I ("--eod-mask-loss", F),
  I ("--no-create-attention-mask-in-dataloader", F), I ("--num-dataset-builder-threads", VI),
  I ("--object-storage-cache-path", V), I ("--mid-level-dataset-surplus", VF),
  /* autoresume */
  I ("--adlr-autoresume", F), I ("--adlr-autoresume-interval", VI),
  /* biencoder */
  I ("--ict-head-size", VI), I ("--biencoder-projection-dim", VI),
  I ("--biencoder-shared-query-context-model", F), I ("--ict-load", V), I ("--bert-load", V),
  I ("--titles-data-path", V), I ("--query-in-block-prob", VF), I ("--use-one-sent-docs", F),
  I ("--evidence-data-path", V), I ("--retriever-report-topk-accuracies", LI),
  I ("--retriever-score-scaling", F), I ("--block-data-path", V), I ("--embedding-path", V),
  I ("--indexer-batch-size", VI), I ("--indexer-log-interval", VI),
  /* vision */
  I ("--num-classes", VI), I ("--img-h", VI), I ("--img-w", VI), I ("--num-channels", VI),
  I ("--patch-dim", VI), I ("--classes-fraction", VF), I ("--data-per-class-fraction", VF),
  I ("--no-data-sharding", F), I ("--head-lr-mult", VF), I ("--vision-pretraining", F),
  I ("--vision-pretraining-type", V), I ("--vision-backbone-type", V), I ("--swin-backbone-type", V),
  I ("--mask-type", V), I ("--mask-factor", VF), I ("--iter-per-epoch", VI), I ("--dino-local-img-size", VI),
  I ("--dino-local-crops-number", VI), I ("--dino-head-hidden-size", VI), I ("--dino-bottleneck-size", VI),
  I ("--dino-freeze-last-layer", VF), I ("--dino-norm-last-layer", F), I ("--dino-warmup-teacher-temp", VF),
  I ("--dino-teacher-temp", VF), I ("--dino-warmup-teacher-temp-epochs", VI), I ("--qk-layernorm", F),
  I ("--qk-l2-norm", F),
  /* moe */
  M ("--expert-model-parallel-size", VI), M ("--expert-tensor-parallel-size", VI), M ("--num-experts", VI),
  M ("--moe-layer-freq", V), M ("--moe-ffn-hidden-size", VI),
  M ("--moe-shared-expert-intermediate-size", VI),
  U ("--moe-shared-expert-overlap", F, "shared experts overlapped with the dispatch are not modelled"),
  M ("--moe-grouped-gemm", F), I ("--moe-use-legacy-grouped-gemm", F),
  U ("--moe-layer-recompute", F, "recomputing only the MoE layers is not modelled"),
  U ("--moe-extended-tp", F, "extended tensor parallelism of the experts is not modelled"),
  I ("--moe-use-upcycling", F), I ("--moe-router-load-balancing-type", L), I ("--moe-router-dtype", V),
  I ("--moe-router-fusion", F), I ("--moe-router-score-function", V), M ("--moe-router-topk", VI),
  I ("--moe-router-pre-softmax", F), I ("--moe-router-num-groups", VI), I ("--moe-router-group-topk", VI),
  I ("--moe-router-topk-scaling-factor", VF), I ("--moe-router-enable-expert-bias", F),
  I ("--moe-router-bias-update-rate", VF), I ("--moe-router-force-load-balancing", F),
  I ("--moe-router-padding-for-fp8", F), I ("--moe-aux-loss-coeff", LF), I ("--moe-z-loss-coeff", VF),
  I ("--moe-input-jitter-eps", VF), I ("--moe-per-layer-logging", F), M ("--moe-token-dispatcher-type", V),
  M ("--moe-enable-deepep", F),
  U ("--moe-deepep-num-sms", VI, "DeepEP's SM count: trainsim prices its dispatch by bytes, not SMs"),
  U ("--moe-permute-fusion", F, "the fused token permutation is not modelled"),
  M ("--moe-expert-capacity-factor", VF),
  U ("--moe-pad-expert-input-to-capacity", F, "expert inputs padded to capacity are not modelled"),
  I ("--moe-token-drop-policy", V), I ("--moe-apply-probs-on-input", F),
  U ("--overlap-moe-expert-parallel-comm", F, "EP communication overlapped with other micro-batches' compute is not modelled"),
  U ("--delay-wgrad-compute", F, "EP communication overlapped with other micro-batches' compute is not modelled"),
  I ("--moe-upcycling-granularity", VI), I ("--moe-pad-experts-for-cuda-graph-inference", F),
  /* mla */
  M ("--q-lora-rank", VI), M ("--kv-lora-rank", VI), M ("--qk-head-dim", VI),
  M ("--qk-pos-emb-head-dim", VI), M ("--v-head-dim", VI), I ("--rotary-scaling-factor", VF),
  I ("--mscale", VF), I ("--mscale-all-dim", VF), I ("--cache-mla-latents", F),
  /* heterogeneous */
  U ("--heterogeneous-layers-config-path", V, "heterogeneous layers are not modelled"),
  U ("--heterogeneous-layers-config-encoded-json", V, "heterogeneous layers are not modelled"),
  /* experimental */
  I ("--enable-experimental", F),
  U ("--spec", L, "a custom layer spec is not modelled"),
  U ("--hybrid-attention-ratio", VF, "hybrid Mamba models are not modelled"),
  U ("--hybrid-mlp-ratio", VF, "hybrid Mamba models are not modelled"),
  U ("--hybrid-override-pattern", V, "hybrid Mamba models are not modelled"),
  U ("--mamba-state-dim", VI, "hybrid Mamba models are not modelled"),
  U ("--mamba-head-dim", VI, "hybrid Mamba models are not modelled"),
  U ("--mamba-num-groups", VI, "hybrid Mamba models are not modelled"),
  U ("--mamba-num-heads", VI, "hybrid Mamba models are not modelled"),
  U ("--is-hybrid-model", F, "hybrid Mamba models are not modelled"),
  U ("--disable-mamba-mem-eff-path", F, "hybrid Mamba models are not modelled"),
  U ("--yaml-cfg", V, "arguments in a YAML file are not read: pass them on the command line"),
  M ("--use-precision-aware-optimizer", F), M ("--main-grads-dtype", V), M ("--main-params-dtype", V),
  M ("--exp-avg-dtype", V), M ("--exp-avg-sq-dtype", V),
  /* msc */
  I ("--disable-msc", F),
  /* kitchen quantization */
  U ("--kitchen-config-file", V, "custom quantization recipes are not modelled"),
  U ("--kitchen-recipe-number", VI, "custom quantization recipes are not modelled"),
  /* sft */
  I ("--sft", F), I ("--sft-tokenizer-prompt-format", V),
};

const SimMegatronFlag *
sim_megatron_flag (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (flags); i++)
    if (strcmp (flags[i].name, name) == 0)
      return &flags[i];
  return NULL;
}

const SimMegatronFlag *
sim_megatron_flags (guint *n)
{
  *n = G_N_ELEMENTS (flags);
  return flags;
}
