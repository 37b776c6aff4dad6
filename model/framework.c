/* Framework semantics (scenario key parallel.framework): what each training framework does with its
 * defaults about the data-parallel collectives of a step. sim/step/program.c turns the
 * ModelDpSchedule into collectives. Sources are the frameworks' code as fetched in 2026 (GitHub
 * NVIDIA/Megatron-LM, NVIDIA/NeMo, deepspeedai/DeepSpeed, pytorch/torchtitan, pytorch/pytorch,
 * mosaicml/composer); file and function named per choice. "Micro-batch" is the simulator's: one
 * pipeline micro-batch, of which every DP replica runs global_batch / (dp · micro_batch) per step.
 *
 * megatron (Megatron-Core DDP, megatron/core/distributed/):
 *  - Gradients are reduced once per step, in the last micro-batch's backward: the schedules run all
 *    the other micro-batches under DistributedDataParallel.no_sync (pipeline_parallel/schedules.py
 *    forward_backward_*: no_sync_func / enable_grad_sync), and register_grad_ready
 *    (param_and_grad_buffer.py) launches a bucket only when is_last_microbatch is set.
 *  - zero 0 all-reduces, zero 1 reduce-scatters (start_grad_sync: reduce-scatter with
 *    use_distributed_optimizer, else all-reduce). zero 2 is treated as zero 1: Megatron's DDP has no
 *    per-micro-batch gradient sharding, the distributed optimizer keeps the full gradient buffer
 *    (so model/memory.c counts unsharded gradients for it).
 *  - Buckets of max(40M, 1M × dp·cp) elements (distributed_data_parallel.py __init__, bucket_size
 *    unset); the plan's dp_bucket_MiB is the floor. dp_overlap is --overlap-grad-reduce (a bucket
 *    launches when its last gradient arrives, _make_backward_post_hook) and --overlap-param-gather
 *    (the updated parameters' all-gather of zero 1/2 at the next step's start, each bucket waited
 *    for by the forward pre-hook of its first module, _make_forward_pre_hook); without it all
 *    buckets reduce after the backward (finalize_model_grads -> finish_grad_sync) and the parameter
 *    all-gather follows the optimizer (distrib_optimizer.py step_with_ready_grads ->
 *    start_param_sync).
 *  - zero 3, and zero 2 with fsdp (Megatron-FSDP's optim_grads_params / optim_grads:
 *    fsdp/src/megatron_fsdp/megatron_fsdp.py _process_post_backward_gradients reduces on every
 *    backward for those strategies): per-layer reduce-scatter every micro-batch; zero 3 gathers
 *    each layer's parameters before each use (forward, recompute, backward), one use ahead.
 * nemo: the same as megatron. NeMo 2 wraps every model chunk in Megatron-Core's
 *  DistributedDataParallel (nemo/lightning/megatron_parallel.py, DDP(McoreDDP)) and hands its
 *  no_sync and start_grad_sync to the Megatron-Core schedule (extract_ddp_funcs); no NeMo choice
 *  differs, so nemo rows predict what megatron rows do.
 * deepspeed (deepspeed/runtime/):
 *  - zero 0 and 1: reduced once per step at the gradient-accumulation boundary, after the backward:
 *    engine.py _backward_epilogue -> allreduce_gradients, which at the boundary calls stage 1's
 *    reduce_gradients (zero/stage_1_and_2.py) or, without ZeRO, buffered_allreduce_fallback in
 *    MEMORY_OPT_ALLREDUCE_SIZE (5e8-element) buffers. Stage 1's gradient hooks reduce nothing
 *    (process_gradients: only with partition_gradients or overlap_comm), and overlap_comm defaults to
 *    true only for stage 3 (zero/config.py overlap_comm_valid), so the reduction runs on the compute
 *    stream (average_tensor: current_stream without overlap_comm). With pipeline parallelism the
 *    same reduction is the schedule's ReduceGrads after the last backward (pipe/schedule.py
 *    TrainSchedule, pipe/engine.py _exec_reduce_grads).
 *  - zero 2: every micro-batch's backward reduces its gradients (partition_gradients set:
 *    reduce_ready_partitions_and_remove_grads reduces on every backward), in reduce_bucket_size
 *    buckets (5e8 elements, zero/config.py) launched as they fill
 *    (reduce_independent_p_g_buckets_and_remove_grads), on the compute stream (overlap_comm off).
 *    DeepSpeed reduces to each partition's owner with reduce calls; the simulator runs the
 *    equivalent reduce-scatter.
 *  - zero 1 and 2: the optimizer step ends with the updated parameters' all-gather in
 *    allgather_bucket_size (5e8-element) buckets (stage_1_and_2.py step -> all_gather_dp_groups),
 *    not overlapped with anything; dp_overlap (Megatron's flags) does not apply.
 *  - zero 3: per-layer parameter gathers before each use, the recompute included: the forward
 *    hooks fetch and release a module's parameters (zero/parameter_offload.py
 *    pre_/post_sub_module_forward_function) also when the recompute runs its forward, and the
 *    backward hooks fetch them again (pre_sub_module_backward_function). Prefetch of the next uses
 *    up to prefetch_bucket_size (5e7 elements; zero/partitioned_param_coordinator.py
 *    fetch_sub_module), at least one layer ahead in the simulator, which gathers whole layers.
 *    A parameter used again within stage3_max_reuse_distance (1e9 elements) is not released
 *    (stage3.py _keep_for_later, PrefetchCoordinator.get_reuse_distance_in_numel): with full
 *    recompute the layer's last matrix serves its backward straight after its recompute, so that
 *    gather is one matrix short (sim/step/program.c zero3_last_matrix).
 *    Gradients reduce-scattered every micro-batch in 5e8-element buckets (zero/stage3.py
 *    reduce_independent_p_g_buckets_and_remove_grads) on their own stream (overlap_comm defaults to
 *    true at stage 3), and each backward ends waiting for them (stage3.py
 *    independent_gradient_partition_epilogue synchronizes the reduce stream). zero3_blocking keeps
 *    modelling DeepSpeed <= 0.3.16 on top of this.
 *  - Pipeline parallelism with zero >= 2 is refused (pipe/engine.py PipelineEngine: "ZeRO-2 and
 *    ZeRO-3 are incompatible with pipeline parallelism").
 * fsdp2 (torchtitan on FSDP2; torch/distributed/fsdp/_fully_shard/):
 *  - One FSDP unit per transformer block, plus the embedding and [final norm, LM head]
 *    (torchtitan/distributed/fsdp.py apply_fsdp_to_decoder, always applied:
 *    models/llama3/parallelize.py). zero 3 is reshard_after_forward=True, zero 2 is
 *    reshard_after_forward=False (torchtitan's "default" policy picks False under pipeline
 *    parallelism: get_fsdp_reshard_after_forward_policy), zero 0 is a data_parallel_replicate-only
 *    mesh (all-reduce per unit, nothing sharded). zero 1 has no FSDP2 equivalent and is refused.
 *  - Without pipeline parallelism every micro-batch's backward reduce-scatters each unit's gradients
 *    as that unit's backward ends: torchtitan's Trainer.train_step (torchtitan/trainer.py) runs
 *    its gradient-accumulation loop without set_requires_gradient_sync(False).
 *    FSDPParamGroup.post_backward (_fsdp_param_group.py) issues the reduce-scatter on its own stream
 *    after the compute stream has waited for the previous one (one in flight), and each backward
 *    ends with the compute stream waiting for all of them (FSDPState._root_post_backward_final_callback
 *    -> finalize_backward).
 *  - With pipeline parallelism torch.distributed.pipelining disables the sync and the reshard after
 *    each backward (pipelining/stage.py backward_maybe_with_nosync) and reduce-scatters every unit
 *    once, after the stage's last backward (perform_reduce_grad -> _post_backward, the REDUCE_GRAD
 *    action of pipelining/schedules.py); parameters stay gathered between micro-batches until then.
 *  - A unit is gathered before use when it is sharded: at step start; after its forward if
 *    reshard_after_forward; after its backward unless pipelining keeps it. [norm, LM head] (and the
 *    tied embedding group) reshard after forward only under the "always" policy, which the
 *    simulator takes to be zero 3 with pp > 1. A full-recompute forward inside the backward gathers
 *    nothing: FSDPState._pre_forward/_post_forward (_fsdp_state.py) skip in PRE_BACKWARD, the
 *    backward's unshard (pre_backward) serving both. Gathers run one unit ahead: the backward
 *    prefetches the next unit explicitly (_backward_prefetch), the forward implicitly (the next
 *    all-gather is issued while the current unit computes; wait_for_unshard defers the free).
 *  - Tensor parallelism is DTensor's (torchtitan's ColwiseParallel/RowParallel with sequence
 *    parallelism): a column-parallel GEMM's backward re-gathers nothing (autograd keeps the forward's
 *    gathered input, or the recompute gathers it) and reduce-scatters its dgrad after wgrad, the
 *    redistribute's backward being a later autograd node (model/layer.c backward_of).
 * composer (Composer's FSDP1 wrapper; torch/distributed/fsdp/_runtime_utils.py):
 *  - FSDPConfig defaults (composer/utils/parallelism.py): sharding_strategy FULL_SHARD (zero 3;
 *    zero 2 is SHARD_GRAD_OP), backward_prefetch BACKWARD_POST with backward_prefetch_limit 1,
 *    forward_prefetch False, limit_all_gathers True, activation_checkpointing False.
 *  - Every micro-batch reduce-scatters: Trainer._train_microbatch (composer/trainer/trainer.py) only
 *    uses no_sync for DistributedDataParallel models; the reduce-scatter of a unit runs on the
 *    post-backward stream as its gradient is ready (_post_backward_hook -> _reduce_grad) and each
 *    backward ends with the compute stream waiting for that stream (_post_backward_final_callback).
 *  - One unit per block (auto-wrap, composer/distributed/dist_strategy.py prepare_fsdp_module); the
 *    root unit (embedding, head) is not freed after forward (_post_forward_reshard frees non-root
 *    FULL_SHARD units only), SHARD_GRAD_OP frees nothing after forward; every unit is freed after
 *    its backward. Activation checkpointing wraps modules inside the units (_check_fn skips FSDP
 *    modules), so a recompute gathers nothing (_pre_forward skips in BACKWARD_PRE).
 *  - Prefetch: without forward_prefetch the next unit's all-gather is issued when the host reaches
 *    that unit, and BACKWARD_POST issues the next backward unit's all-gather once the current
 *    unit's gradient is produced; on the unshard stream neither waits for compute, and
 *    limit_all_gathers keeps at most two gathers in flight. The simulator has no host timeline, so
 *    it cannot tell BACKWARD_POST from BACKWARD_PRE or the host-paced forward gather from an explicit
 *    prefetch: both are modelled as one unit ahead, as for fsdp2.
 *  - zero 0 is DDP with the default SINGLE_AUTO_SYNC (trainer.py _get_ddp_sync_strategy,
 *    dist_strategy.py ddp_sync_context): no_sync until the final micro-batch, whose backward
 *    all-reduces in torch DDP's 25 MiB buckets (bucket_cap_mb) overlapped with it. zero 1 has no
 *    FSDP1 strategy and is refused, and Composer has no pipeline parallelism (ParallelismConfig
 *    holds fsdp and tp only), so pp > 1 is refused.
 * Not expressed (every framework): the frameworks' differing reduction dtypes (the bytes follow
 * grad_dtype: DeepSpeed communicates in the model dtype, torchtitan and Composer reduce in fp32,
 * Megatron in grad_dtype), their fused kernels (grad_accum, loss_fusion and the TE keys stay as set;
 * DeepSpeed, torchtitan and Composer accumulate weight gradients through autograd, so set
 * grad_accum = autograd there), buckets smaller than one layer's gradients (the simulator fills
 * buckets a layer at a time, so torch DDP's 25 MiB buckets and its smaller first bucket flush per
 * layer when a layer is larger), and memory beyond the gradient shard (model/memory.c budgets the
 * gathered layers of zero 3 only; FSDP2/Composer zero 2 keep the gathered parameters between
 * forward and backward, which is not counted). */
#include "model/framework.h"

static const char *const names[MODEL_FW_COUNT] = { "megatron", "nemo", "deepspeed", "fsdp2", "composer" };

const char *
model_framework_name (ModelFramework f)
{
  g_return_val_if_fail ((unsigned) f < MODEL_FW_COUNT, "invalid");
  return names[f];
}

#define DS_PREFETCH_ELEMS 5e7   /* stage3_prefetch_bucket_size */
#define TORCH_DDP_BUCKET_BYTES (25.0 * 1048576.0) /* torch DDP bucket_cap_mb */

static gboolean
megatron_like (const ModelPlan *plan)
{
  return plan->framework == MODEL_FW_MEGATRON || plan->framework == MODEL_FW_NEMO;
}

void
model_framework_dp_schedule (const ModelPlan *plan, ModelDpSchedule *out)
{
  g_return_if_fail (plan != NULL && out != NULL);
  ModelDpSchedule d = { 0 };
  int z = plan->zero;
  gboolean pp = plan->pp > 1;
  d.reduce_allreduce = z == 0;
  d.reshard_after_forward = d.reshard_after_backward = d.recompute_gathers = TRUE;
  d.head_reshard_after_forward = d.embedding_reshard_after_forward = TRUE;
  switch (plan->framework)
    {
    case MODEL_FW_DEEPSPEED:
      d.bucket = MODEL_DP_BUCKET_ELEMS;
      d.bucket_elems = MODEL_DS_BUCKET_ELEMS;
      d.param_ag_elems = MODEL_DS_BUCKET_ELEMS;
      if (z <= 1)
        {
          d.reduce = MODEL_DP_REDUCE_LAST_MB;
          d.reduce_blocking = TRUE;
          d.param_ag = z == 1 ? MODEL_DP_PARAM_AG_BLOCKING : MODEL_DP_PARAM_AG_NONE;
        }
      else if (z == 2)
        {
          d.reduce = MODEL_DP_REDUCE_EVERY_MB;
          d.reduce_overlap = d.reduce_blocking = TRUE;
          d.param_ag = MODEL_DP_PARAM_AG_BLOCKING;
        }
      else
        {
          d.reduce = MODEL_DP_REDUCE_EVERY_MB;
          d.reduce_overlap = d.reduce_wait = TRUE;
          d.gathers = TRUE;
          d.prefetch_elems = DS_PREFETCH_ELEMS;
        }
      break;
    case MODEL_FW_FSDP2:
    case MODEL_FW_COMPOSER:
      if (plan->framework == MODEL_FW_COMPOSER && z == 0)
        {
          /* torch DDP under SINGLE_AUTO_SYNC */
          d.reduce = MODEL_DP_REDUCE_LAST_MB;
          d.reduce_overlap = TRUE;
          d.bucket = MODEL_DP_BUCKET_BYTES;
          d.bucket_bytes = TORCH_DDP_BUCKET_BYTES;
          break;
        }
      d.reduce = plan->framework == MODEL_FW_FSDP2 && pp ? MODEL_DP_REDUCE_AFTER_BWD : MODEL_DP_REDUCE_EVERY_MB;
      d.reduce_overlap = d.reduce_wait = TRUE;
      d.reduce_one_in_flight = plan->framework == MODEL_FW_FSDP2;
      d.bucket = MODEL_DP_BUCKET_LAYER;
      d.gathers = z >= 2;
      d.reshard_after_forward = z >= 3;
      d.reshard_after_backward = !(plan->framework == MODEL_FW_FSDP2 && pp);
      d.recompute_gathers = FALSE;
      /* torchtitan: [norm, LM head] (and tied embeddings) under the "always" policy only, the
       * embedding as the blocks; Composer: the root unit holds both and keeps them. */
      d.head_reshard_after_forward = plan->framework == MODEL_FW_FSDP2 && z >= 3 && pp;
      d.embedding_reshard_after_forward = plan->framework == MODEL_FW_FSDP2 && z >= 3;
      break;
    case MODEL_FW_MEGATRON:
    case MODEL_FW_NEMO:
    default:
      d.bucket = MODEL_DP_BUCKET_MCORE;
      d.reduce_overlap = plan->dp_overlap;
      d.reduce = z >= 3 || (z == 2 && plan->fsdp) ? MODEL_DP_REDUCE_EVERY_MB : MODEL_DP_REDUCE_LAST_MB;
      d.gathers = z >= 3;
      if (z >= 3)
        d.bucket = MODEL_DP_BUCKET_LAYER;
      if (z == 1 || z == 2)
        d.param_ag = plan->dp_overlap ? MODEL_DP_PARAM_AG_OVERLAP : MODEL_DP_PARAM_AG_BLOCKING;
      break;
    }
  *out = d;
}

gboolean
model_framework_shards_grads (const ModelPlan *plan)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  if (megatron_like (plan))
    return plan->zero >= 3 || (plan->zero == 2 && plan->fsdp);
  return plan->zero >= 2;
}

/* Megatron-Core: DistributedDataParallel.zero_grad_buffer() at the start of every iteration
 * (megatron/training/training.py train_step) resets each buffer with grad_data.zero_()
 * (core/distributed/param_and_grad_buffer.py, Megatron-LM d98e8a64). PyTorch's optimizers default
 * to zero_grad(set_to_none=True) since 2.0, which frees the gradients instead: FSDP2 and Composer
 * write no zeros. DeepSpeed: ASSUMPTION none counted (its engine frees or reuses its partitioned
 * gradient buffers; not read here). */
gboolean
model_framework_zeroes_grad_buffer (const ModelPlan *plan)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  return megatron_like (plan);
}

gboolean
model_framework_validate (const ModelPlan *plan, GError **error)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  if ((unsigned) plan->framework >= MODEL_FW_COUNT)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "unknown framework %d", plan->framework);
      return FALSE;
    }
  const char *fw = names[plan->framework];
  if (plan->framework == MODEL_FW_DEEPSPEED && plan->zero >= 2 && plan->pp > 1)
    g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                 "framework deepspeed runs ZeRO-2 and ZeRO-3 without pipeline parallelism only (its "
                 "PipelineEngine refuses them); set zero <= 1 or pp = 1");
  else if ((plan->framework == MODEL_FW_FSDP2 || plan->framework == MODEL_FW_COMPOSER) && plan->zero == 1)
    g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                 "framework %s has no optimizer-only sharding (zero 1); set zero = 0 (replicated), "
                 "2 (parameters kept after forward) or 3 (full sharding)", fw);
  else if (plan->framework == MODEL_FW_COMPOSER && plan->pp > 1)
    g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                 "framework composer has no pipeline parallelism; set pp = 1 or another framework");
  else if (plan->fp8_param_gather && !megatron_like (plan))
    g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                 "fp8_param_gather is Megatron-Core's distributed optimizer option; framework %s "
                 "does not have it", fw);
  else
    return TRUE;
  return FALSE;
}
