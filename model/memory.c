/* Per-GPU memory.
 *
 * Model states (Rajbhandari et al. 2020, "ZeRO", §3 and Fig. 1: (2 + 2 + K)Ψ with K = 12 for
 * mixed-precision Adam; ZeRO-1 shards K over Nd, ZeRO-2 also the gradients, ZeRO-3 also the
 * weights). trainsim uses the plan's dtypes: weights size(param_dtype), gradients size(grad_dtype)
 * (default fp32: Megatron's main_grad buffers, so bf16 + fp32 grads + distributed optimizer is
 * 6 + 12/d bytes per parameter as in Megatron-LM docs/distrib_optimizer.md), K = 8 + 4 (master;
 * 2 for Apex's bf16 remainders, 0 without a master: master_weights).
 * Dense parameters shard over dp*cp (Megatron's data-parallel group with context parallelism),
 * expert parameters over the expert data-parallel group. Megatron's distributed optimizer keeps the
 * full gradient buffer at zero 2 (without fsdp) as at zero 1 (model_framework_shards_grads).
 *
 * Activations per layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation Recomputation
 * in Large Transformer Models", §4, Table 2), generalised to GQA, gated MLPs, no dropout and fused
 * attention. With e = bytes per activation element, tokens T = b*s/cp, Ts = T/t with SP else T:
 *   kept whole under TP (sharded by SP): 4h*e per token (inputs of both norms, of QKV, of FC1)
 *                                        + 2h bytes of dropout masks when dropout is on
 *   split by TP: per token e*(q + kv) (Q, K) + e*kv (V) + e*q (projection input)
 *                + e*f_up (activation input: f, or 2f for SwiGLU) + e*f (FC2 input), widths / t
 *   attention scores: unfused 2*a*s_q*s*b/t bytes of softmax output (+3*a*s_q*s*b/t with dropout
 *                     mask and output), s_q = s/cp; fused (FlashAttention): 4*a*s_q*b/t (fp32 LSE)
 *   GPT-3 shape, unfused, dropout: sbh(34 + 5as/h) at t = 1; sbh(10 + 24/t + 5as/(ht)) with TP;
 *   sbh/t (34 + 5as/h) with TP+SP -- Table 2 exactly. DTensor TP (framework fsdp2) keeps the
 *   QKV and FC1 inputs all-gathered (autograd saves the matmul's input; Megatron saves the shard and
 *   re-gathers it in backward), so those two are whole under SP too.
 *   Low-precision GEMM layers (model_layer_matmul_dtype fp8/fp4) keep the inputs of their GEMMs in
 *   that dtype, not in e: Transformer Engine quantizes a GEMM input once and saves the quantized
 *   (transposed) copy for the weight-gradient GEMM (TE 1.x pytorch/module/linear.py
 *   save_for_backward(inputmat_t) when fp8_wgrad; TE 2.x keeps the columnwise quantized tensor).
 *   These are the QKV and FC1 inputs (norm outputs), the projection input and the FC2 input
 *   (expert FC1/FC2 inputs in MoE layers); Q, K, V (saved by the attention kernel), the norm inputs
 *   and the activation input stay in e. Stored bytes per element: FP8 1, NVFP4 0.5 + one E4M3 scale
 *   per 16 elements (TE 2.x NVFP4 block scaling).
 *   selective recompute drops the score term (34 sbh/t with SP); full recompute keeps the layer
 *   input, 2sbh (/t with SP: Megatron checkpoints the SP-sharded hidden state), plus one layer's
 *   full activations as the working set of the recomputed layer. torchtitan's per-op selective
 *   recompute (selective_op) keeps the layer input and the outputs its policy saves
 *   (model_layer_selective_op_saved_bytes), plus the same working set.
 *   MoE layers replace the MLP terms with: routed copies d = Ts*top_k (*capacity factor): permuted
 *   input e*h*d (etp*e*h*d after the expert-TP gather), expert activation input e*f_up*d and FC2
 *   input e*f*d (expert widths / etp, times etp gathered tokens), fp32 router probabilities
 *   4*E*Ts; shared experts as a dense MLP.
 * ZeRO-3 working set: gathered parameters (param dtype): FSDP gathers per transformer block, the
 *   current and the prefetched one (2 layers); DeepSpeed gathers per module and keeps at most
 *   max(1e9, the largest module) resident plus a 5e7 prefetch bucket (its defaults, see
 *   DS_MAX_LIVE_PARAMS); DeepSpeed 0.3's blocking path adds two full-size gradients of the largest
 *   module (its unsharded gradient and the flat copy its list reduction makes).
 * In flight (Megatron-LM schedules.py): GPipe holds all m micro-batches; 1F1B min(pp - rank, m);
 *   interleaved min((pp - rank - 1)*2 + (vpp - 1)*pp + 1, m*vpp) model chunks, all m*vpp when
 *   m == pp. For rank 0 with m > pp this is L*(1 + (p-1)/(p*v)) layers' activations, Korthikanti's
 *   interleaving factor (§4.2.3).
 * Embedding/head: first stage keeps the embedding dropout mask (with dropout) per micro-batch in
 *   flight; last stage keeps the LM-head input (e*h*Ts) and fp32 logits 4*T*V/t of one micro-batch
 *   (Korthikanti §4.3). FP8 weight caches and DP communication buckets are not counted. */
#include "model/memory.h"
#include "model/schedule.h"
#include "model/layer.h"
#include "model/framework.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

void
model_memory_states (const ModelPlan *plan, double params, double shard, double *weights,
                     double *grads, double *optimizer)
{
  g_return_if_fail (plan != NULL && shard >= 1.0);
  /* AdamW's two moments (fp32, or bf16 as DeepSeek-V3 §3.3.3 keeps them) and the master copy
   * beside low-precision weights (model_plan_master_bytes). */
  double k = 2.0 * model_dtype_bytes (plan->moment_dtype) + model_plan_master_bytes (plan);
  double w = params * model_dtype_bytes (plan->param_dtype);
  double g = params * model_dtype_bytes (plan->grad_dtype);
  double o = params * k;
  if (weights)
    *weights = plan->zero >= 3 ? w / shard : w;
  if (grads)
    *grads = model_framework_shards_grads (plan) ? g / shard : g;
  if (optimizer)
    *optimizer = plan->zero >= 1 ? o / shard : o;
}

double
model_memory_default_overhead (const ModelPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0.0);
  int comms = 1 + (plan->tp > 1) + (plan->cp > 1) + (plan->dp * plan->cp > 1) + (plan->pp > 1) + (plan->ep > 1);
  return (0.5 + 0.6 * comms) * GIB;
}

double
model_memory_activation_layer (const ModelShape *shape, const ModelPlan *plan, int layer)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, 0.0);
  const ModelShape *s = shape;
  double e = model_dtype_bytes (plan->param_dtype);
  double t = plan->tp;
  double T = (double) plan->micro_batch * s->seq_len / plan->cp;
  double Ts = plan->sp ? T / t : T;
  double h = s->hidden;
  /* Saved for attention: Q, K, V (widths qw, kw, vw per token) and the output projection's input
   * (ow); MLA also keeps its two latents, the up projections' inputs, replicated over TP. */
  double qw = (double) s->heads * s->head_dim, kw = (double) s->kv_heads * s->head_dim, vw = kw, ow = qw;
  double latents = 0;
  if (s->kv_lora_rank > 0)
    {
      qw = kw = (double) s->heads * (s->qk_nope_head_dim + s->qk_rope_head_dim);
      vw = ow = (double) s->heads * s->v_head_dim;
      latents = (double) s->q_lora_rank + s->kv_lora_rank + s->qk_rope_head_dim;
    }
  gboolean glu = model_shape_glu (s);

  if (plan->recompute == MODEL_RECOMPUTE_FULL)
    return e * h * Ts; /* the checkpointed layer input */
  if (plan->recompute == MODEL_RECOMPUTE_SELECTIVE_OP)
    return e * h * Ts + model_layer_selective_op_saved_bytes (s, plan, layer);

  /* g: bytes per element of a saved GEMM input (e, or the layer's low-precision dtype). */
  ModelDtype mdt = model_layer_matmul_dtype (s, plan, layer);
  double g = mdt == MODEL_DTYPE_FP8 ? 1.0 : mdt == MODEL_DTYPE_FP4 ? 0.5 + 1.0 / 16.0 : e;
  /* Selective recompute of modules (model_plan_recomputes) drops what they produce: the two norms'
   * outputs (layernorm), MLA's Q, K and V rebuilt from the latents (mla_up_proj), the routed
   * experts' activation output (moe_act); their inputs stay. */
  gboolean rc_norm = model_plan_recomputes (plan, MODEL_RC_LAYERNORM);
  gboolean rc_up = s->kv_lora_rank > 0 && model_plan_recomputes (plan, MODEL_RC_MLA_UP_PROJ);
  gboolean rc_act = model_plan_recomputes (plan, MODEL_RC_MOE_ACT);
  /* The norms' outputs are the QKV and FC1 inputs. Megatron keeps them SP-sharded and re-gathers
   * them for wgrad; DTensor TP (framework fsdp2) keeps the all-gathered input autograd saved for the
   * matmul (model/layer.c backward_of), t times the shard. */
  double Tn = plan->framework == MODEL_FW_FSDP2 ? T : Ts;
  double kept = Ts * (2.0 * h * e + (plan->dropout ? 2.0 * h : 0.0)) + (rc_norm ? 0.0 : Tn * 2.0 * h * g);
  double split = T * ((rc_up ? 0.0 : e * (qw + kw + vw)) + g * ow) / t + T * g * latents;
  if (model_shape_layer_is_moe (s, layer))
    {
      int etp = model_plan_expert_tp (plan);
      double d = Ts * s->moe_top_k * (s->moe_capacity_factor > 0 ? s->moe_capacity_factor : model_shape_moe_load (s));
      double fe = s->moe_ffn_hidden;
      split += g * h * d * etp + e * (glu ? 2.0 : 1.0) * fe * d + (rc_act ? 0.0 : g * fe * d) + 4.0 * s->moe_experts * Ts;
      if (s->moe_shared_experts > 0)
        {
          double fs = (double) s->moe_shared_experts * fe;
          split += T * (e * (glu ? 2.0 : 1.0) * fs + g * fs) / t;
        }
    }
  else
    {
      double f = s->ffn_hidden;
      split += T * (e * (glu ? 2.0 : 1.0) * f + g * f) / t;
    }
  double a = s->heads / t;
  double sq = (double) s->seq_len / plan->cp;
  double scores;
  if (model_plan_recomputes (plan, MODEL_RC_CORE_ATTN))
    scores = 0.0;
  else if (plan->unfused_attention)
    scores = (2.0 + (plan->dropout ? 3.0 : 0.0)) * a * sq * s->seq_len * plan->micro_batch;
  else
    scores = 4.0 * a * sq * plan->micro_batch;
  return kept + split + scores;
}

double
model_memory_layers_in_flight (const ModelShape *shape, const ModelPlan *plan, int pp_rank)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, 0.0);
  int m = model_plan_microbatches (plan);
  double layers = model_plan_rank_layers (plan, shape, pp_rank);
  int pp = plan->pp, vpp = plan->vpp;
  switch (plan->schedule)
    {
    case MODEL_SCHED_GPIPE:
      return layers * m;
    case MODEL_SCHED_INTERLEAVED:
      {
        int total = m * vpp;
        /* The rank's warm-up forwards and the one the steady phase opens with. */
        int w = model_schedule_warmup_grouped (plan->schedule, pp, vpp, m, plan->mb_group, pp_rank);
        int chunks = m == pp ? total : MIN (w + 1, total);
        return layers / vpp * chunks;
      }
    case MODEL_SCHED_DUALPIPE:
      {
        /* The peak, over the rank's slot order, of the layers whose forward has run and whose
         * backward has not (the paper's PP + 1 chunks, arXiv 2412.19437 Table 2). */
        g_autofree ModelScheduleSlot *sl = g_new (ModelScheduleSlot, model_schedule_n_slots (plan->schedule, pp, vpp, m));
        int n = model_schedule_fill (plan->schedule, pp, vpp, m, pp_rank, sl);
        double held = 0, peak = 0;
        for (int i = 0; i < n; i++)
          {
            /* A zero-bubble backward keeps what its W slot needs: counted as held until the W. */
            double l = model_plan_chunk_layers (plan, shape, pp_rank, sl[i].chunk, NULL);
            if (sl[i].pass == MODEL_PASS_FORWARD)
              held += l;
            else if (!sl[i].zb)
              held -= l;
            peak = MAX (peak, held);
          }
        return peak;
      }
    case MODEL_SCHED_1F1B:
    default:
      return layers * MIN (pp - pp_rank, m);
    }
}

/* DeepSpeed ZeRO-3 defaults (deepspeed/runtime/zero/config.py): stage3_max_live_parameters 1e9
 * ("the maximum number of parameters resident per GPU before releasing") and
 * stage3_prefetch_bucket_size 5e7 fetched ahead of use. */
#define DS_MAX_LIVE_PARAMS 1e9
#define DS_PREFETCH_PARAMS 5e7

/* Parameters of the largest single module DeepSpeed gathers at once: a projection of a layer or
 * the (vocab-parallel) embedding / LM head. */
static double
largest_module (const ModelShape *s, const ModelPlan *plan)
{
  double h = s->hidden, t = plan->tp;
  double qkv = (double) (s->heads + 2 * s->kv_heads) * s->head_dim * h / t;
  double proj = (double) s->heads * s->head_dim * h / t;
  double up = (model_shape_glu (s) ? 2.0 : 1.0) * s->ffn_hidden * h / t;
  double down = (double) s->ffn_hidden * h / t;
  double emb = (double) model_shape_padded_vocab (s, plan->tp) / t * h;
  return MAX (MAX (MAX (qkv, proj), MAX (up, down)), emb);
}

void
model_memory_rank (const ModelShape *shape, const ModelPlan *plan, int pp_rank, double overhead_bytes,
                   ModelMemory *out)
{
  g_return_if_fail (shape != NULL && plan != NULL && out != NULL);
  g_return_if_fail (pp_rank >= 0 && pp_rank < plan->pp);
  const ModelShape *s = shape;
  ModelMemory mem = { 0 };
  mem.pp_rank = pp_rank;
  ModelRankParams rp;
  model_layer_rank_params (s, plan, pp_rank, &rp);
  mem.params = (double) rp.dense + (double) rp.expert;
  double w, g, o;
  model_memory_states (plan, (double) rp.dense, (double) plan->dp * plan->cp, &w, &g, &o);
  mem.weights_bytes = w, mem.grads_bytes = g, mem.optimizer_bytes = o;
  if (rp.expert > 0)
    {
      model_memory_states (plan, (double) rp.expert, model_plan_expert_dp (plan), &w, &g, &o);
      mem.weights_bytes += w, mem.grads_bytes += g, mem.optimizer_bytes += o;
    }
  /* fp8_param_gather holds the FP8 layers' GEMM weights in FP8 (1 byte; the cached transpose, like
   * every FP8 weight cache, is not counted). */
  mem.weights_bytes -= model_layer_fp8_param_saving (s, plan, pp_rank, -1);
  int layers = model_plan_rank_layers (plan, s, pp_rank);
  if (plan->zero >= 3 && layers > 0)
    {
      double gathered = 2.0 * mem.params / layers;  /* FSDP: the current and the prefetched block */
      if (!plan->fsdp)
        gathered = MIN (mem.params, MAX (DS_MAX_LIVE_PARAMS, largest_module (s, plan)) + DS_PREFETCH_PARAMS);
      mem.zero3_gather_bytes = gathered * model_dtype_bytes (plan->param_dtype);
      /* DeepSpeed <= 0.3.16 on PyTorch <= 1.8 (zero3_blocking): a module's backward leaves its whole
       * unsharded gradient (param.grad, grad dtype) until that gradient is reduced, and the reduction
       * is a list collective that PyTorch first copies into one flat buffer of the same size
       * (ProcessGroupNCCL flatten_for_scatter_gather; DeepSpeed's default all-reduce fallback,
       * stage3.py buffered_reduce_fallback, flattens the bucket likewise): two full-size copies of the
       * largest module's gradient at once. The optional contiguous-gradient buckets
       * (reduce_bucket_size, off by default for stage 3) are not counted. */
      if (!plan->fsdp && plan->zero3_blocking)
        mem.zero3_gather_bytes += 2.0 * MIN (mem.params, largest_module (s, plan)) * model_dtype_bytes (plan->grad_dtype);
    }

  /* Per-layer activations: the largest layer of the stage (dense and MoE may differ). */
  int first = 0;
  model_plan_chunk_layers (plan, s, pp_rank, 0, &first);
  double per_layer = 0.0;
  for (int c = 0; c < plan->vpp; c++)
    {
      int n = model_plan_chunk_layers (plan, s, pp_rank, c, &first);
      for (int l = first; l < first + n; l++)
        per_layer = MAX (per_layer, model_memory_activation_layer (s, plan, l));
    }
  mem.activation_layer_bytes = per_layer;
  mem.layers_in_flight = model_memory_layers_in_flight (s, plan, pp_rank);
  mem.activations_bytes = per_layer * mem.layers_in_flight;
  if ((plan->recompute == MODEL_RECOMPUTE_FULL || plan->recompute == MODEL_RECOMPUTE_SELECTIVE_OP) && layers > 0)
    {
      ModelPlan keep = *plan;
      keep.recompute = MODEL_RECOMPUTE_NONE;
      mem.activations_bytes += model_memory_activation_layer (s, &keep, first);
    }

  double e = model_dtype_bytes (plan->param_dtype);
  double T = (double) plan->micro_batch * s->seq_len / plan->cp;
  double Ts = plan->sp ? T / plan->tp : T;
  if (pp_rank == 0 && plan->dropout)
    {
      double inflight_mb = layers > 0 ? mem.layers_in_flight / layers * plan->vpp : 1.0;
      mem.embedding_head_bytes += Ts * s->hidden * MAX (inflight_mb, 1.0);
    }
  if (pp_rank == plan->pp - 1)
    mem.embedding_head_bytes += e * s->hidden * Ts
                                + 4.0 * T * (double) model_shape_padded_vocab (s, plan->tp) / plan->tp;
  mem.overhead_bytes = overhead_bytes >= 0 ? overhead_bytes : model_memory_default_overhead (plan);
  mem.total_bytes = mem.weights_bytes + mem.grads_bytes + mem.optimizer_bytes + mem.zero3_gather_bytes
                    + mem.activations_bytes + mem.embedding_head_bytes + mem.overhead_bytes;
  *out = mem;
}

char *
model_memory_describe (const ModelMemory *m)
{
  g_return_val_if_fail (m != NULL, NULL);
  return g_strdup_printf ("weights %.2f GiB, gradients %.2f GiB, optimizer %.2f GiB, ZeRO-3 working set "
                          "%.2f GiB, activations %.2f GiB (%.3g GiB per layer x %.4g layer-micro-batches "
                          "in flight), embedding/head %.2f GiB, overhead %.2f GiB, total %.2f GiB",
                          m->weights_bytes / GIB, m->grads_bytes / GIB, m->optimizer_bytes / GIB,
                          m->zero3_gather_bytes / GIB, m->activations_bytes / GIB,
                          m->activation_layer_bytes / GIB, m->layers_in_flight,
                          m->embedding_head_bytes / GIB, m->overhead_bytes / GIB, m->total_bytes / GIB);
}

gboolean
model_memory_check (const ModelShape *shape, const ModelPlan *plan, double capacity_bytes,
                    double overhead_bytes, ModelMemory *out, GError **error)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, FALSE);
  ModelMemory worst = { 0 };
  for (int r = 0; r < plan->pp; r++)
    {
      ModelMemory m;
      model_memory_rank (shape, plan, r, overhead_bytes, &m);
      if (r == 0 || m.total_bytes > worst.total_bytes)
        worst = m;
    }
  if (out)
    *out = worst;
  if (worst.total_bytes <= capacity_bytes)
    return TRUE;
  g_autofree char *desc = model_memory_describe (&worst);
  g_set_error (error, MODEL_ERROR, MODEL_ERROR_OUT_OF_MEMORY,
               "out of memory: pipeline stage %d needs %.2f GiB per GPU but the GPU holds %.2f GiB "
               "(%s); shard more (raise tp or pp, zero >= 1 for the optimizer, zero >= 2 for "
               "gradients), recompute activations (selective or full), or lower micro_batch",
               worst.pp_rank, worst.total_bytes / GIB, capacity_bytes / GIB, desc);
  return FALSE;
}

char *
model_memory_fix (const ModelShape *shape, const ModelPlan *plan, double capacity_bytes, double overhead_bytes)
{
  g_return_val_if_fail (shape != NULL && plan != NULL, NULL);
  ModelMemory m;
  if (model_memory_check (shape, plan, capacity_bytes, overhead_bytes, &m, NULL))
    return NULL;
  const struct { const char *name; double bytes; } items[] = {
    { "weights", m.weights_bytes }, { "gradients", m.grads_bytes }, { "optimizer", m.optimizer_bytes },
    { "ZeRO-3 working set", m.zero3_gather_bytes }, { "activations", m.activations_bytes },
    { "embedding/head", m.embedding_head_bytes }, { "overhead", m.overhead_bytes },
  };
  gsize big = 0;
  for (gsize i = 1; i < G_N_ELEMENTS (items); i++)
    if (items[i].bytes > items[big].bytes)
      big = i;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "largest: %s %.2f GiB; ", items[big].name, items[big].bytes / GIB);
  /* Single changes, cheapest in step time first; the data-parallel degree follows tp and pp. */
  for (int k = 0; k < 7; k++)
    {
      ModelPlan p = *plan;
      char what[64];
      switch (k)
        {
        case 0: if (p.recompute != MODEL_RECOMPUTE_NONE) continue;
          p.recompute = MODEL_RECOMPUTE_SELECTIVE; g_strlcpy (what, "recompute = selective", sizeof what); break;
        case 1: if (p.zero >= 2) continue;
          p.zero = 2; g_strlcpy (what, "zero = 2", sizeof what); break;
        case 2: if (p.zero >= 3) continue;
          p.zero = 3; g_strlcpy (what, "zero = 3", sizeof what); break;
        case 3: if (p.recompute == MODEL_RECOMPUTE_FULL) continue;
          p.recompute = MODEL_RECOMPUTE_FULL; g_strlcpy (what, "recompute = full", sizeof what); break;
        case 4: if (p.micro_batch < 2 || p.micro_batch % 2) continue;
          p.micro_batch /= 2; g_snprintf (what, sizeof what, "micro_batch = %d", p.micro_batch); break;
        case 5: p.pp *= 2; g_snprintf (what, sizeof what, "pp = %d", p.pp); break;
        default: p.tp *= 2; g_snprintf (what, sizeof what, "tp = %d", p.tp); break;
        }
      int rest = p.tp * p.pp * p.cp;
      if (p.gpus % rest != 0)
        continue;
      p.dp = p.gpus / rest;
      ModelMemory fixed;
      if (model_plan_validate (&p, shape, NULL)
          && model_memory_check (shape, &p, capacity_bytes, overhead_bytes, &fixed, NULL))
        {
          g_string_append_printf (s, "fits with %s (%.2f GiB)", what, fixed.total_bytes / GIB);
          return g_string_free (s, FALSE);
        }
    }
  g_string_append (s, "no single change of recompute, zero, micro_batch, pp or tp fits");
  return g_string_free (s, FALSE);
}
