/* Per-GPU memory of a training step: model states under ZeRO, activations of the micro-batches the
 * pipeline schedule keeps in flight, embedding/LM-head buffers and a framework overhead; and the
 * check against the GPU's capacity. All sizes in bytes. See model/memory.c for the equations. */
#pragma once
#include <glib.h>
#include "model/plan.h"
#include "model/shape.h"

/* Per-GPU memory outside the caching allocator's peak (scenario key [training] memory_overhead_GiB
 * overrides): the CUDA context and NCCL's buffers, which live outside PyTorch's allocator.
 *   CUDA context: 0.5 GiB. With lazy module loading (PyTorch's default since pytorch/pytorch#86509;
 *     CUDA's since 12.2) a PyTorch process takes 274 MiB (636 MiB eager) after its first tensor
 *     (pytorch/pytorch#85692) and "around 400MB" by a maintainer's account (#109888); kernels loaded
 *     later (Transformer Engine, flash attention) bring it to about 0.5 GiB.
 *   NCCL: 0.6 GiB per communicator the plan uses. A channel's connection holds LL 512 KiB + LL128
 *     4.6875 MiB + Simple 4 MiB (NVIDIA/nccl src/init.cc, NCCL_BUFFSIZE 4 MiB), 10 MiB after cuMem
 *     rounding, over tens of channels; measured per communicator: 544 MB (2 ranks) and 688 MB (3+)
 *     on 4 A100s (NVIDIA/nccl#964), 576 MiB on GB200 (sgl-project/sglang#30908); NVIDIA's own
 *     nccl-tests reserve 5 GiB "for the library" on 80 GB parts (src/common.cu). Communicators: the
 *     world (barriers), and TP, CP, data-parallel, PP and EP where they span more than one rank.
 *     An all-to-all communicator connects to every peer and can take more (NVIDIA/nccl#1685: +3.3 GB
 *     for 8 ranks); not modelled.
 * cuBLAS and Transformer Engine workspaces (32 MiB each on Hopper) come from the caching allocator
 * and are inside the peaks the rest of this model estimates. Caching-allocator fragmentation (reserved
 * beyond allocated: 15% on average, up to 33%, in GMLake's study, ASPLOS 2024; a few percent with
 * expandable_segments) is not counted: a run is judged on what it allocates. */
double model_memory_default_overhead (const ModelPlan *plan);

typedef struct {
  int pp_rank;                 /* the pipeline stage this is for */
  double params;               /* parameters held by the rank before ZeRO sharding */
  double weights_bytes;        /* param_dtype copy (1/shard under ZeRO-3) */
  double grads_bytes;          /* grad_dtype buffer (1/shard under ZeRO-2/3) */
  double optimizer_bytes;      /* fp32 master + Adam m, v (1/shard under ZeRO >= 1) */
  double zero3_gather_bytes;   /* ZeRO-3 working set: gathered parameters (FSDP: current + prefetched
                                * block) and, DeepSpeed 0.3, the largest module's gradient twice */
  double activation_layer_bytes; /* one layer, one micro-batch, as stored for backward */
  double layers_in_flight;     /* layer x micro-batch activation sets held at the peak */
  double activations_bytes;    /* layers_in_flight * per-layer (+ recompute working set) */
  double embedding_head_bytes; /* embedding dropout masks, LM-head input and fp32 logits */
  double overhead_bytes;
  double total_bytes;
} ModelMemory;

/* Model-state bytes per parameter element: ZeRO (Rajbhandari et al. 2020) with the plan's dtypes:
 * weights size(param_dtype), gradients size(grad_dtype), optimizer K = 8 (fp32 Adam m, v) + 4 (fp32
 * master, unless params are fp32); divided by `shard` for what zero shards. */
void model_memory_states (const ModelPlan *plan, double params, double shard, double *weights,
                          double *grads, double *optimizer);
/* Activation bytes one rank stores for one transformer layer and one micro-batch. */
double model_memory_activation_layer (const ModelShape *shape, const ModelPlan *plan, int layer);
/* Layer x micro-batch activation sets pipeline rank pp_rank holds at its peak under the schedule. */
double model_memory_layers_in_flight (const ModelShape *shape, const ModelPlan *plan, int pp_rank);
/* Breakdown for one pipeline stage; overhead_bytes < 0 selects the default above. */
void model_memory_rank (const ModelShape *shape, const ModelPlan *plan, int pp_rank,
                        double overhead_bytes, ModelMemory *out);
/* The stage with the largest total (ties: the lowest rank) into *out; FALSE with
 * MODEL_ERROR_OUT_OF_MEMORY and the breakdown when it exceeds capacity_bytes. */
gboolean model_memory_check (const ModelShape *shape, const ModelPlan *plan, double capacity_bytes,
                             double overhead_bytes, ModelMemory *out, GError **error);
/* "weights 10.9 GiB, grads ..., total ..." (caller frees). */
char *model_memory_describe (const ModelMemory *mem);
/* For a plan over capacity: its largest item and the cheapest single change that fits, tried in
 * order of what it costs in step time (selective recompute, ZeRO 2, ZeRO 3, full recompute, half
 * the micro-batch, twice the pp, twice the tp), e.g. "largest: activations 60.2 GiB; fits with
 * recompute = selective (71.3 GiB)"; NULL when the plan fits (caller frees). */
char *model_memory_fix (const ModelShape *shape, const ModelPlan *plan, double capacity_bytes,
                        double overhead_bytes);
