/* Op lists of one layer: order and placement of TP/CP/EP collectives, GEMM shapes, backward
 * dgrad/wgrad split, recompute, rank parameters and the optimizer op. */
#include <math.h>
#include <string.h>
#include "model/layer.h"
#include "model/flops.h"
#include "tests/model-presets.h"

static ModelShape
finished (ModelShape s)
{
  g_assert_true (model_shape_finish (&s, NULL));
  return s;
}

static GArray *
ops_of (const ModelShape *s, const ModelPlan *p, int layer, ModelPass pass)
{
  GArray *ops = model_op_array_new ();
  model_layer_ops (s, p, layer, pass, ops);
  return ops;
}

static const ModelOp *
find (const GArray *ops, const char *name)
{
  for (guint i = 0; i < ops->len; i++)
    if (strcmp (g_array_index (ops, ModelOp, i).name, name) == 0)
      return &g_array_index (ops, ModelOp, i);
  return NULL;
}

/* Names of the ops, space-separated, for order checks. */
static char *
names (const GArray *ops)
{
  GString *str = g_string_new (NULL);
  for (guint i = 0; i < ops->len; i++)
    g_string_append_printf (str, "%s%s", i ? " " : "", g_array_index (ops, ModelOp, i).name);
  return g_string_free (str, FALSE);
}

static int
count_coll (const GArray *ops, ModelCollective coll, ModelPhase phase)
{
  int n = 0;
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *op = &g_array_index (ops, ModelOp, i);
      n += op->kind == MODEL_OP_COMM && op->coll == coll && op->phase == phase;
    }
  return n;
}

static void
gpt3_tp4 (ModelShape *s, ModelPlan *p, gboolean sp)
{
  *s = finished (preset_gpt3_175b ());
  model_plan_init (p);
  p->tp = 4, p->gpus = 4, p->sp = sp;
}

/* Megatron SP (Korthikanti et al. 2022, Fig. 5): g = all-gather before QKV and FC1, g-bar =
 * reduce-scatter after the output projection and FC2; norms and residuals on s/t tokens. */
static void
test_sp_forward (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  g_autoptr (GArray) ops = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *n = names (ops);
  g_assert_cmpstr (n, ==, "attn_norm qkv_ag qkv attn proj proj_rs attn_residual mlp_norm fc1_ag fc1 "
                          "act fc2 fc2_rs mlp_residual");
  const ModelOp *qkv = find (ops, "qkv");
  g_assert_cmpint (qkv->m, ==, 2048);         /* b*s tokens (gathered) */
  g_assert_cmpint (qkv->n, ==, 3 * 12288 / 4); /* q, k, v heads of this rank */
  g_assert_cmpint (qkv->k, ==, 12288);
  g_assert_true (qkv->flags & MODEL_OP_COLUMN_PARALLEL);
  const ModelOp *fc2 = find (ops, "fc2");
  g_assert_cmpint (fc2->k, ==, 4 * 12288 / 4);
  g_assert_cmpint (fc2->n, ==, 12288);
  /* All-gather of the full [s, b, h] bf16 activation: 2048*12288*2 bytes. */
  g_assert_cmpfloat (find (ops, "qkv_ag")->comm_bytes, ==, 2048.0 * 12288 * 2);
  g_assert_cmpint (find (ops, "proj_rs")->group_size, ==, 4);
  /* Norm on the SP shard: reads 512 tokens x h. */
  g_assert_cmpfloat (find (ops, "attn_norm")->bytes_read, ==, 512.0 * 12288 * 2);
  const ModelOp *attn = find (ops, "attn");
  g_assert_cmpint (attn->heads, ==, 24);
  g_assert_cmpint (attn->pairs, ==, (gint64) 2048 * 2049 / 2);
  g_assert_cmpfloat (attn->flops, ==, 4.0 * 24 * 128 * 2048 * 2049 / 2);
}

/* Backward with SP: all-gather before the row-parallel dgrads (proj, fc2); for QKV and FC1 an input
 * re-gather overlapped with dgrad and a reduce-scatter of dgrad overlapped with wgrad. */
static void
test_sp_backward (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  g_autoptr (GArray) ops = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *n = names (ops);
  g_assert_cmpstr (n, ==, "mlp_residual_bwd fc2_rs_bwd fc2_dgrad fc2_wgrad act_bwd fc1_input_ag "
                          "fc1_dgrad fc1_dgrad_rs fc1_wgrad mlp_norm_bwd attn_residual_bwd "
                          "proj_rs_bwd proj_dgrad proj_wgrad attn_bwd qkv_input_ag qkv_dgrad "
                          "qkv_dgrad_rs qkv_wgrad attn_norm_bwd");
  g_assert_cmpint (count_coll (ops, MODEL_COLL_ALL_GATHER, MODEL_PHASE_BWD), ==, 4);
  g_assert_cmpint (count_coll (ops, MODEL_COLL_REDUCE_SCATTER, MODEL_PHASE_BWD), ==, 2);
  g_assert_true (find (ops, "qkv_input_ag")->overlap_next);
  g_assert_true (find (ops, "qkv_dgrad_rs")->overlap_next);
  /* dgrad [T, h] = [T, 3h/t] x [3h/t, h]; wgrad [h, 3h/t] = [h, T] x [T, 3h/t]. */
  const ModelOp *d = find (ops, "qkv_dgrad"), *w = find (ops, "qkv_wgrad");
  g_assert_cmpint (d->m, ==, 2048); g_assert_cmpint (d->n, ==, 12288); g_assert_cmpint (d->k, ==, 9216);
  g_assert_cmpint (w->m, ==, 12288); g_assert_cmpint (w->n, ==, 9216); g_assert_cmpint (w->k, ==, 2048);
  g_assert_cmpint (d->grad, ==, MODEL_GRAD_INPUT);
  g_assert_cmpint (w->grad, ==, MODEL_GRAD_WEIGHT);
  g_autoptr (GArray) fwd = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_assert_cmpfloat (d->flops, ==, find (fwd, "qkv")->flops);
  /* The flash backward recomputes the scores: 2.5x the forward (benchmark_flash_attention.py). */
  g_assert_cmpfloat (find (ops, "attn_bwd")->flops, ==, 2.5 * find (fwd, "attn")->flops);
  g_assert_true (find (ops, "attn_bwd")->flags & MODEL_OP_FLASH_BWD);
}

/* torchtitan's DTensor TP (framework fsdp2): no input re-gather for wgrad (autograd keeps the
 * forward's gathered input); the dgrad reduce-scatter follows wgrad and nothing runs beside it. With
 * async TP it runs beside wgrad. */
static void
test_sp_backward_dtensor (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  p.framework = MODEL_FW_FSDP2;
  g_autoptr (GArray) ops = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *n = names (ops);
  g_assert_cmpstr (n, ==, "mlp_residual_bwd fc2_rs_bwd fc2_dgrad fc2_wgrad act_bwd fc1_dgrad fc1_wgrad "
                          "fc1_dgrad_rs mlp_norm_bwd attn_residual_bwd proj_rs_bwd proj_dgrad proj_wgrad "
                          "attn_out_contiguous_bwd attn_bwd qkv_dgrad qkv_wgrad qkv_dgrad_rs attn_norm_bwd");
  g_assert_false (find (ops, "qkv_dgrad_rs")->overlap_next);
  g_assert_cmpfloat (find (ops, "qkv_dgrad_rs")->comm_bytes, ==, 2048.0 * 12288 * 2);
  p.tp_comm_overlap = TRUE;
  g_autoptr (GArray) async = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *na = names (async);
  g_assert_nonnull (strstr (na, "attn_bwd qkv_dgrad qkv_dgrad_rs qkv_wgrad attn_norm_bwd"));
  g_assert_true (find (async, "qkv_dgrad_rs")->overlap_next);
  g_assert_null (strstr (na, "input_ag"));
}

/* Without SP: all-reduce after proj and FC2 forward, after QKV and FC1 dgrad backward. */
static void
test_no_sp (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, FALSE);
  g_autoptr (GArray) fwd = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autoptr (GArray) bwd = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *nf = names (fwd);
  g_assert_cmpstr (nf, ==, "attn_norm qkv attn proj proj_ar attn_residual mlp_norm fc1 act fc2 "
                           "fc2_ar mlp_residual");
  g_assert_cmpint (count_coll (bwd, MODEL_COLL_ALL_REDUCE, MODEL_PHASE_BWD), ==, 2);
  g_assert_nonnull (find (bwd, "qkv_dgrad_ar"));
  g_assert_nonnull (find (bwd, "fc1_dgrad_ar"));
  g_assert_null (find (bwd, "proj_ar_bwd"));
  /* Norms run on all 2048 tokens (replicated over TP). */
  g_assert_cmpfloat (find (fwd, "attn_norm")->bytes_read, ==, 2048.0 * 12288 * 2);
  /* TP 1: no collectives at all. */
  p.tp = 1;
  g_autoptr (GArray) one = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  for (guint i = 0; i < one->len; i++)
    g_assert_cmpint (g_array_index (one, ModelOp, i).kind, !=, MODEL_OP_COMM);
}

/* Llama 3.1 405B, TP4 CP2 SP: KV exchange over the CP ring, attention on s/cp queries. */
static void
test_cp_rope_gqa (void)
{
  ModelShape s = finished (preset_llama_405b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 4, p.cp = 2, p.gpus = 8, p.sp = TRUE;
  g_autoptr (GArray) fwd = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *n = names (fwd);
  g_assert_nonnull (strstr (n, "qkv rope cp_kv attn proj"));
  const ModelOp *qkv = find (fwd, "qkv");
  g_assert_cmpint (qkv->m, ==, 4096);                  /* 8192 / cp */
  g_assert_cmpint (qkv->n, ==, (128 + 2 * 8) * 128 / 4); /* GQA: 32 q heads + 2 kv heads */
  const ModelOp *kv = find (fwd, "cp_kv");
  /* (cp-1) blocks of K and V: 4096 tokens x 2 kv heads x 128 x 2 (K,V) x 2 bytes. */
  g_assert_cmpfloat (kv->comm_bytes, ==, 1.0 * 4096 * 2 * 128 * 2 * 2);
  g_assert_true (kv->overlap_next);
  const ModelOp *attn = find (fwd, "attn");
  g_assert_cmpint (attn->seq_q, ==, 4096);
  g_assert_cmpint (attn->seq_kv, ==, 8192);
  g_assert_cmpint (attn->pairs, ==, (gint64) 8192 * 8193 / 4);
  g_assert_cmpint (find (fwd, "fc1")->n, ==, 2 * 53248 / 4); /* gate + up */
  g_autoptr (GArray) bwd = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_cmpfloat (find (bwd, "cp_kv_bwd")->comm_bytes, ==, 2 * kv->comm_bytes);
}

static int
count_phase (const GArray *ops, ModelPhase phase)
{
  int n = 0;
  for (guint i = 0; i < ops->len; i++)
    n += g_array_index (ops, ModelOp, i).phase == phase;
  return n;
}

/* torchtitan's per-op selective recompute on a Llama 3 8B layer, TP 2 with SP: linear layers in
 * forward order wq wk wv wo w1 w3 w2, every second recomputed (wk, wo, w3), so the replay has the qkv
 * GEMM narrowed to K's 1024/2 columns, the projection whole and FC1 narrowed to W3's 14336/2; the
 * attention kernel and the reduce-scatters are kept (not replayed), the all-gathers and the
 * memory-bound ops replay. The recompute's GEMM FLOPs are those three products exactly. */
static void
test_recompute_selective_op (void)
{
  ModelShape s = finished (preset_llama_8b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.dp = 1, p.gpus = 2, p.sp = TRUE, p.recompute = MODEL_RECOMPUTE_SELECTIVE_OP;
  g_autoptr (GArray) bwd = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autoptr (GArray) replay = model_op_array_new ();
  for (guint i = 0; i < bwd->len; i++)
    if (g_array_index (bwd, ModelOp, i).phase == MODEL_PHASE_RECOMPUTE)
      g_array_append_val (replay, g_array_index (bwd, ModelOp, i));
  g_autofree char *r = names (replay);
  g_assert_cmpstr (r, ==, "attn_norm qkv_ag qkv rope proj attn_residual mlp_norm fc1_ag fc1 act mlp_residual");
  const ModelOp *q = find (replay, "qkv"), *f1 = find (replay, "fc1");
  g_assert_nonnull (q);
  g_assert_nonnull (f1);
  g_assert_cmpint (q->n, ==, 1024 / 2);
  g_assert_cmpint (f1->n, ==, 14336 / 2);
  double tokens = 8192;  /* the gathered sequence, micro-batch 1 */
  double want = 2 * tokens * 4096 * (1024 / 2) + 2 * tokens * 4096 * (4096 / 2) + 2 * tokens * 4096 * (14336 / 2);
  /* No attention replays, so the replay's matmul FLOPs are its GEMMs'. */
  g_assert_cmpfloat (model_op_array_matmul_flops (replay, 1u << MODEL_PHASE_RECOMPUTE), ==, want);
}

/* Eager PyTorch under framework fsdp2 (torchtitan without torch.compile): the RMSNorm is its 8
 * tensor ops (36 bytes per bf16 element read and written, against 4 fused), RoPE 3 ops each for Q
 * and K, GQA's K and V copied to every head, the attention output made contiguous, SwiGLU as silu
 * then the product. parallel.compile, or another framework, gives the fused list. */
static void
test_eager_fsdp2 (void)
{
  ModelShape s = finished (preset_llama_8b ());
  ModelPlan p;
  model_plan_init (&p);
  p.gpus = 8, p.dp = 8, p.zero = 3, p.fsdp = TRUE, p.framework = MODEL_FW_FSDP2;
  g_autoptr (GArray) fwd = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *n = names (fwd);
  g_assert_cmpstr (n, ==, "attn_norm_float attn_norm_pow attn_norm_mean attn_norm_eps attn_norm_rsqrt "
                          "attn_norm_mul attn_norm_type_as attn_norm qkv rope_q_float rope_q_mul rope "
                          "rope_k_float rope_k_mul rope_k repeat_k repeat_v attn attn_out_contiguous proj "
                          "attn_residual mlp_norm_float mlp_norm_pow mlp_norm_mean mlp_norm_eps "
                          "mlp_norm_rsqrt mlp_norm_mul mlp_norm_type_as mlp_norm fc1 act_silu act fc2 "
                          "mlp_residual");
  double e = 8192.0 * 4096, norm_bytes = 0;
  for (guint i = 0; i < fwd->len; i++)
    {
      const ModelOp *op = &g_array_index (fwd, ModelOp, i);
      if (g_str_has_prefix (op->name, "attn_norm"))
        norm_bytes += op->bytes_read + op->bytes_written;
    }
  /* 36 bytes per element, plus the fp32 row statistics (written by the mean, read and written by the
   * eps add and the rsqrt, read by the scaling: 24 bytes per row) and the weight (2 per column). */
  g_assert_cmpfloat (norm_bytes, ==, 36 * e + 24 * 8192.0 + 2 * 4096.0);
  /* ATen's element-wise kernels run at the copy's rate (MODEL_OP_ELEMENTWISE); the upcasts and the
   * row means do not, nor any op of a fused (compiled or Megatron) list; a backward inherits it. */
  const char *const ew[] = { "attn_norm_pow", "attn_norm_mul", "attn_norm_type_as", "attn_norm", "rope_q_mul",
                             "rope", "repeat_k", "attn_out_contiguous", "attn_residual", "act_silu", "act",
                             "mlp_residual", NULL };
  const char *const not_ew[] = { "attn_norm_float", "attn_norm_mean", "rope_q_float", "qkv", "attn", NULL };
  for (int i = 0; ew[i]; i++)
    g_assert_true (find (fwd, ew[i])->flags & MODEL_OP_ELEMENTWISE);
  for (int i = 0; not_ew[i]; i++)
    g_assert_false (find (fwd, not_ew[i])->flags & MODEL_OP_ELEMENTWISE);
  g_autoptr (GArray) bwd = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_true (find (bwd, "act_silu_bwd")->flags & MODEL_OP_ELEMENTWISE);
  g_assert_false (find (bwd, "attn_norm_mean_bwd")->flags & MODEL_OP_ELEMENTWISE);
  p.compile = TRUE;
  g_autoptr (GArray) compiled = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *nc = names (compiled);
  g_assert_cmpstr (nc, ==, "attn_norm qkv rope attn proj attn_residual mlp_norm fc1 act fc2 mlp_residual");
  p.compile = FALSE;
  p.framework = MODEL_FW_MEGATRON;
  p.zero = 1, p.fsdp = FALSE;
  g_autoptr (GArray) megatron = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *nm = names (megatron);
  g_assert_cmpstr (nm, ==, nc);
  for (guint i = 0; i < megatron->len; i++)
    g_assert_false (g_array_index (megatron, ModelOp, i).flags & MODEL_OP_ELEMENTWISE);
  for (guint i = 0; i < compiled->len; i++)
    g_assert_false (g_array_index (compiled, ModelOp, i).flags & MODEL_OP_ELEMENTWISE);
  /* Composer's eager model: its residual adds and activation are ATen kernels, its norm is fused. */
  p.framework = MODEL_FW_COMPOSER;
  g_autoptr (GArray) composer = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_assert_true (find (composer, "attn_residual")->flags & MODEL_OP_ELEMENTWISE);
  g_assert_true (find (composer, "act")->flags & MODEL_OP_ELEMENTWISE);
  g_assert_false (find (composer, "attn_norm")->flags & MODEL_OP_ELEMENTWISE);
}

/* Uneven routing (moe_imbalance 1.5, dropless): the simulated rank stands for the busiest one, so its
 * all-to-all and expert GEMMs carry 1.5 times the even share; the step's model FLOPs stay the even
 * count. Together with a capacity factor, or below 1, it is refused naming the key. */
static void
test_moe_imbalance (void)
{
  ModelShape s = finished (preset_mixtral_8x7b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.dp = 8, p.ep = 8, p.gpus = 16, p.sp = TRUE, p.global_batch = 8;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  g_autoptr (GArray) even = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  double flops_even = model_flops_model_per_step (&s, &p);
  ModelShape u = s;
  u.moe_imbalance = 1.5;
  g_assert_true (model_shape_finish (&u, NULL));
  g_autoptr (GArray) hot = ops_of (&u, &p, 0, MODEL_PASS_FORWARD);
  g_assert_cmpfloat (find (hot, "moe_dispatch")->comm_bytes, ==, 1.5 * find (even, "moe_dispatch")->comm_bytes);
  g_assert_cmpint (find (hot, "expert_fc1")->m, ==, 3 * find (even, "expert_fc1")->m / 2);
  g_assert_cmpfloat (model_flops_model_per_step (&u, &p), ==, flops_even);
  ModelShape bad = s;
  bad.moe_imbalance = 1.2, bad.moe_capacity_factor = 1.25;
  g_autoptr (GError) e1 = NULL;
  g_assert_false (model_shape_finish (&bad, &e1));
  g_assert_nonnull (strstr (e1->message, "moe_imbalance"));
  bad = s;
  bad.moe_imbalance = 0.5;
  g_autoptr (GError) e2 = NULL;
  g_assert_false (model_shape_finish (&bad, &e2));
  g_assert_nonnull (strstr (e2->message, "moe_imbalance"));
}

static void
test_recompute (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  g_autoptr (GArray) fwd = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autoptr (GArray) none = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_cmpint (count_phase (none, MODEL_PHASE_RECOMPUTE), ==, 0);
  p.recompute = MODEL_RECOMPUTE_FULL;
  g_autoptr (GArray) full = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_cmpint (count_phase (full, MODEL_PHASE_RECOMPUTE), ==, fwd->len);
  g_assert_cmpint (g_array_index (full, ModelOp, 0).phase, ==, MODEL_PHASE_RECOMPUTE);
  g_assert_cmpint (full->len, ==, none->len + fwd->len);
  p.recompute = MODEL_RECOMPUTE_SELECTIVE;
  g_autoptr (GArray) sel = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_cmpint (count_phase (sel, MODEL_PHASE_RECOMPUTE), ==, 1);
  g_autofree char *n = names (sel);
  g_assert_nonnull (strstr (n, "proj_wgrad attn attn_bwd"));
}

/* Mixtral 8x7B, TP2 EP8 SP (etp = tp = 2): router on the 2048 SP-local tokens, all-to-all of the
 * 2 routed copies, expert-TP all-gather, 1 local expert with 2*2*2048 tokens. */
static void
test_moe (void)
{
  ModelShape s = finished (preset_mixtral_8x7b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.dp = 8, p.ep = 8, p.gpus = 16, p.sp = TRUE;
  g_autoptr (GArray) fwd = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *n = names (fwd);
  g_assert_cmpstr (n, ==, "attn_norm qkv_ag qkv rope attn proj proj_rs attn_residual mlp_norm router "
                          "router_topk permute moe_dispatch moe_etp_ag expert_fc1 expert_act "
                          "expert_fc2 moe_etp_rs moe_combine unpermute mlp_residual");
  const ModelOp *r = find (fwd, "router");
  g_assert_cmpint (r->m, ==, 2048); g_assert_cmpint (r->n, ==, 8);
  const ModelOp *a2a = find (fwd, "moe_dispatch");
  g_assert_true (a2a->expert_group);
  g_assert_cmpint (a2a->dim, ==, MODEL_DIM_EP);
  /* nccl-tests size: the whole send buffer, 2048 tokens x top-2 x h x 2 bytes (7/8 leave the GPU). */
  g_assert_cmpfloat (a2a->comm_bytes, ==, 2048.0 * 2 * 4096 * 2);
  const ModelOp *e = find (fwd, "expert_fc1");
  g_assert_cmpint (e->batch, ==, 1);
  g_assert_cmpint (e->m, ==, 2 * 2048 * 2);
  g_assert_cmpint (e->n, ==, 2 * 14336 / 2);
  g_autoptr (GArray) bwd = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_cmpint (count_coll (bwd, MODEL_COLL_ALL_TO_ALL, MODEL_PHASE_BWD), ==, 2);
  g_assert_cmpint (find (bwd, "moe_etp_ag_bwd")->coll, ==, MODEL_COLL_REDUCE_SCATTER);
  /* Shared experts add a TP-sharded dense MLP after the routed experts. */
  s.moe_shared_experts = 2;
  g_autoptr (GArray) sh = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_assert_cmpint (find (sh, "shared_fc1")->n, ==, 2 * 2 * 14336 / 2);
}

/* Embedding and head: vocab-parallel with the padded vocab. */
static void
test_embedding_head (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  g_autoptr (GArray) ops = model_op_array_new ();
  model_layer_embedding_ops (&s, &p, MODEL_PASS_FORWARD, ops);
  model_layer_head_ops (&s, &p, MODEL_PASS_FORWARD, ops);
  g_autofree char *n = names (ops);
  g_assert_cmpstr (n, ==, "embedding position_add embedding_rs final_norm lm_head_ag lm_head loss_unfused loss_ar");
  const ModelOp *h = find (ops, "lm_head");
  g_assert_cmpint (h->n, ==, 50688 / 4);
  g_assert_cmpint (h->m, ==, 2048);
  /* Megatron-Core's unfused cross entropy over E = 2048 x 12672 local logits, bf16 in (p = 2):
   * forward reads (2 + 20)E and writes 16E (model/layer.c), 38 bytes per logit. */
  const double E = 2048.0 * 12672.0;
  const ModelOp *l = find (ops, "loss_unfused");
  g_assert_cmpfloat_with_epsilon (l->bytes_read, 22.0 * E, 1.0);
  g_assert_cmpfloat_with_epsilon (l->bytes_written, 16.0 * E, 1.0);
  g_autoptr (GArray) bwd = model_op_array_new ();
  model_layer_head_ops (&s, &p, MODEL_PASS_BACKWARD, bwd);
  g_autofree char *nb = names (bwd);
  /* Cross-entropy backward needs no collective (the softmax statistics are kept). */
  g_assert_cmpstr (nb, ==, "loss_unfused_bwd lm_head_input_ag lm_head_dgrad lm_head_dgrad_rs "
                           "lm_head_wgrad final_norm_bwd");
  /* Backward: in-place multiply (read 4, write 4) and the cast to bf16 (read 4, write 2). */
  l = find (bwd, "loss_unfused_bwd");
  g_assert_cmpfloat_with_epsilon (l->bytes_read, 8.0 * E, 1.0);
  g_assert_cmpfloat_with_epsilon (l->bytes_written, 6.0 * E, 1.0);

  /* Fused: one pass over the bf16 logits, a 4-byte loss per token. */
  p.loss_fusion = TRUE;
  g_autoptr (GArray) fused = model_op_array_new ();
  model_layer_head_ops (&s, &p, MODEL_PASS_FORWARD, fused);
  l = find (fused, "loss");
  g_assert_nonnull (l);
  g_assert_null (find (fused, "loss_unfused"));
  g_assert_cmpfloat_with_epsilon (l->bytes_read, 2.0 * E, 1.0);
  g_assert_cmpfloat_with_epsilon (l->bytes_written, 4.0 * 2048, 1e-6);
}

/* Rank parameters: with tp 1 the stages of Llama 3.1 8B (pp 4) hold exactly its 8,030,261,248
 * parameters (128256 needs no padding); with tp the matrices split and norms/row biases replicate. */
static void
test_rank_params (void)
{
  ModelShape s = finished (preset_llama_8b ());
  ModelPlan p;
  model_plan_init (&p);
  p.pp = 4, p.gpus = 4;
  gint64 sum = 0;
  ModelRankParams r;
  for (int i = 0; i < 4; i++)
    {
      model_layer_rank_params (&s, &p, i, &r);
      g_assert_cmpint (r.expert, ==, 0);
      sum += r.dense;
    }
  g_assert_cmpint (sum, ==, G_GINT64_CONSTANT (8030261248));
  /* tp 2: every weight matrix halves, the 2*32+1 RMSNorm vectors stay whole. */
  p.pp = 1, p.tp = 2, p.gpus = 2;
  model_layer_rank_params (&s, &p, 0, &r);
  g_assert_cmpint (r.dense, ==, (G_GINT64_CONSTANT (8030261248) - 65 * 4096) / 2 + 65 * 4096);
  /* Mixtral ep 8: one expert per rank, all else dense. */
  ModelShape m = finished (preset_mixtral_8x7b ());
  model_plan_init (&p);
  p.ep = 8, p.dp = 8, p.gpus = 8;
  model_layer_rank_params (&m, &p, 0, &r);
  g_assert_cmpint (r.expert, ==, 32 * (gint64) 3 * 4096 * 14336);
  g_assert_cmpint (r.dense + 8 * r.expert, ==, G_GINT64_CONSTANT (46702792704));
}

/* Adam on the ZeRO-1 shard: 8B params / dp 8 elements, reading fp32 grad + master + m + v (16 B)
 * and writing master + m + v + bf16 param (14 B); the grad-norm reads the shard's fp32 gradients;
 * Megatron zeroes its whole fp32 gradient buffer (all 8B elements), FSDP2 frees its gradients
 * instead, and Megatron-FSDP (zero 3) zeroes only its shard. All three stream. */
static void
test_optimizer (void)
{
  ModelShape s = finished (preset_llama_8b ());
  ModelPlan p;
  model_plan_init (&p);
  p.dp = 8, p.gpus = 8, p.global_batch = 8, p.zero = 1;
  const double n = 8030261248.0;
  g_autoptr (GArray) ops = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, ops);
  g_assert_cmpint (ops->len, ==, 3);
  const ModelOp *op = find (ops, "adam");
  g_assert_cmpint (op->phase, ==, MODEL_PHASE_OPTIMIZER);
  g_assert_cmpfloat (op->bytes_read, ==, n / 8 * 16);
  g_assert_cmpfloat (op->bytes_written, ==, n / 8 * 14);
  g_assert_cmpfloat (find (ops, "grad_norm")->bytes_read, ==, n / 8 * 4);
  g_assert_cmpfloat (find (ops, "grad_norm")->bytes_written, ==, 0);
  g_assert_cmpfloat (find (ops, "grad_zero")->bytes_written, ==, n * 4);
  for (guint i = 0; i < ops->len; i++)
    g_assert_true (g_array_index (ops, ModelOp, i).flags & MODEL_OP_STREAMING);

  /* Apex's remainders: the fp32 weight is rebuilt from the bf16 weight and its 16-bit remainder
   * (read 4 + 2 + 2 + 8 = 16 B, write 2 + 2 + 8 = 12 B); without a master the bf16 weight alone
   * (read 4 + 2 + 8, write 2 + 8). */
  p.master_weights = MODEL_MASTER_REMAINDER;
  g_autoptr (GArray) rem = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, rem);
  g_assert_cmpfloat (find (rem, "adam")->bytes_read, ==, n / 8 * 16);
  g_assert_cmpfloat (find (rem, "adam")->bytes_written, ==, n / 8 * 12);
  p.master_weights = MODEL_MASTER_NONE;
  g_autoptr (GArray) none = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, none);
  g_assert_cmpfloat (find (none, "adam")->bytes_read, ==, n / 8 * 14);
  g_assert_cmpfloat (find (none, "adam")->bytes_written, ==, n / 8 * 10);
  p.master_weights = MODEL_MASTER_FP32;

  p.framework = MODEL_FW_FSDP2, p.zero = 3;
  g_autoptr (GArray) fsdp = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, fsdp);
  g_assert_null (find (fsdp, "grad_zero"));
  g_assert_nonnull (find (fsdp, "grad_norm"));
  p.framework = MODEL_FW_MEGATRON, p.fsdp = TRUE;
  g_autoptr (GArray) mfsdp = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, mfsdp);
  g_assert_cmpfloat (find (mfsdp, "grad_zero")->bytes_written, ==, n / 8 * 4);
}

/* Pipeline send: with SP the TP rank sends its 512-token shard of the [2048, 12288] bf16 activation. */
static void
test_pp_op (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  ModelOp op = model_layer_pp_op (&s, &p, MODEL_PASS_FORWARD);
  g_assert_cmpint (op.coll, ==, MODEL_COLL_SEND_RECV);
  g_assert_cmpint (op.dim, ==, MODEL_DIM_PP);
  g_assert_cmpfloat (op.comm_bytes, ==, 512.0 * 12288 * 2);
  p.sp = FALSE;
  g_assert_cmpfloat (model_layer_pp_op (&s, &p, MODEL_PASS_BACKWARD).comm_bytes, ==, 2048.0 * 12288 * 2);
}

/* DP buckets of Llama 3.1 8B (N = 8,030,261,248) on dp 8 with 40 MiB buckets: ZeRO-1 reduce-scatters
 * 4N bytes of fp32 gradients in ceil(4N / 40 MiB) = 766 buckets and all-gathers 2N bytes of bf16
 * parameters in 383; DDP all-reduces; ZeRO-3 gathers twice; one DP rank needs nothing. */
static void
test_dp_ops (void)
{
  ModelShape s = finished (preset_llama_8b ());
  ModelPlan p;
  model_plan_init (&p);
  p.dp = 8, p.gpus = 8, p.global_batch = 8, p.zero = 1;
  g_autoptr (GArray) ops = model_op_array_new ();
  model_layer_dp_ops (&s, &p, 0, 0, ops);
  double N = 8030261248.0, rs = 0, ag = 0;
  int nrs = 0, nag = 0;
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *op = &g_array_index (ops, ModelOp, i);
      g_assert_cmpint (op->group_size, ==, 8);
      g_assert_cmpfloat (op->comm_bytes, <=, 40.0 * 1024 * 1024);
      if (op->coll == MODEL_COLL_REDUCE_SCATTER)
        rs += op->comm_bytes, nrs++;
      else if (op->coll == MODEL_COLL_ALL_GATHER)
        {
          ag += op->comm_bytes, nag++;
          g_assert_cmpint (op->phase, ==, MODEL_PHASE_OPTIMIZER);
        }
      else
        g_assert_not_reached ();
    }
  g_assert_cmpfloat (rs, ==, 4 * N);
  g_assert_cmpfloat (ag, ==, 2 * N);
  g_assert_cmpint (nrs, ==, 766);
  g_assert_cmpint (nag, ==, 383);
  p.zero = 0;
  g_array_set_size (ops, 0);
  model_layer_dp_ops (&s, &p, 0, 0, ops);
  g_assert_cmpint (ops->len, ==, 766);
  g_assert_cmpint (g_array_index (ops, ModelOp, 0).coll, ==, MODEL_COLL_ALL_REDUCE);
  p.zero = 3;
  g_array_set_size (ops, 0);
  model_layer_dp_ops (&s, &p, 0, 0, ops);
  g_assert_cmpint (ops->len, ==, 766 + 2 * 383);
  p.dp = 1, p.gpus = 1, p.global_batch = 1;
  g_array_set_size (ops, 0);
  model_layer_dp_ops (&s, &p, 0, 0, ops);
  g_assert_cmpint (ops->len, ==, 0);
}

/* Distinct GEMM shapes of a GPT-3 TP4 SP rank with 1 layer + head, [m, n, k], T = 2048, h = 12288:
 *   qkv   [T, 9216, h]   dgrad [T, h, 9216]    wgrad [h, 9216, T]
 *   proj  [T, h, 3072]   dgrad [T, 3072, h]    wgrad [3072, h, T]
 *   fc1   [T, h, h]      dgrad [T, h, h]       wgrad [h, h, T]      (4h/t = h)
 *   fc2   [T, h, h]      dgrad [T, h, h]       wgrad [h, h, T]
 *   lm_head [T, 12672, h] dgrad [T, h, 12672]  wgrad [h, 12672, T]  (50688 / 4)
 * fc1 and fc2 forward and dgrad are all [T, h, h] and their wgrads [h, h, T]: 15 GEMMs, 11 shapes. */
static void
test_unique_gemms (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  s.layers = 1;
  g_autoptr (GArray) ops = model_op_array_new ();
  model_layer_rank_ops (&s, &p, 0, ops);
  g_autoptr (GArray) u = model_op_array_new ();
  model_op_array_unique_gemms (ops, u);
  int gemms = 0;
  for (guint i = 0; i < ops->len; i++)
    gemms += g_array_index (ops, ModelOp, i).kind == MODEL_OP_GEMM;
  g_assert_cmpint (gemms, ==, 15);
  g_assert_cmpint (u->len, ==, 11);
  for (guint i = 0; i < u->len; i++)
    for (guint j = i + 1; j < u->len; j++)
      {
        const ModelOp *x = &g_array_index (u, ModelOp, i), *y = &g_array_index (u, ModelOp, j);
        g_assert_false (x->m == y->m && x->n == y->n && x->k == y->k);
      }
}

/* Tied GPT-3 embeddings over pp 8: stage 0 and stage 7 all-reduce the 50304 x 12288 fp32 word
 * embedding gradient as a pair; middle stages do not. */
static void
test_tied_embedding_grad (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.pp = 8, p.gpus = 8, p.global_batch = 8;
  for (int r = 0; r < 8; r++)
    {
      g_autoptr (GArray) ops = model_op_array_new ();
      model_layer_dp_ops (&s, &p, r, 0, ops);
      const ModelOp *op = find (ops, "embedding_grad_ar");
      if (r == 0 || r == 7)
        {
          g_assert_nonnull (op);
          g_assert_cmpint (op->dim, ==, MODEL_DIM_PP);
          g_assert_cmpint (op->group_size, ==, 2);
          g_assert_cmpfloat (op->comm_bytes, ==, 50304.0 * 12288 * 4);
        }
      else
        g_assert_null (op);
    }
}

static double
traffic (const ModelOp *op)
{
  g_assert_nonnull (op);
  return op->bytes_read + op->bytes_written;
}

/* Unfused attention and dropout (GPT-3 175B, tp 4 with SP, micro-batch 1, s = 2048, bf16 p = 2):
 * a/t = 24 heads, so the score tensor has E = 24·2048·2048 = 100,663,296 elements. Forward extra
 * HBM traffic: scores written by Q·Kᵀ and read by P·V (2E·p), softmax read+write (2E·p), attention
 * dropout read+write+1-byte mask (2E·p + E): 13E bytes. Backward: P read, dS read twice, dP
 * written (4E·p); softmax y, dy read, dx written (3E·p); dropout dy and mask read, dx written
 * (2E·p + E): 19E bytes. Hidden dropout adds a 1-byte mask per residual element (Ts·h =
 * 512·12288) written in forward and read in backward. With both flags off none of this exists. */
static void
test_unfused_dropout (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  g_autoptr (GArray) f0 = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_assert_null (find (f0, "attn_softmax"));
  double res0 = find (f0, "mlp_residual")->bytes_written;
  p.unfused_attention = TRUE;
  p.dropout = TRUE;
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  double E = 24.0 * 2048 * 2048, e = 512.0 * 12288;
  g_assert_cmpfloat (traffic (find (f, "attn_scores_io")) + traffic (find (f, "attn_softmax"))
                     + traffic (find (f, "attn_dropout")), ==, 13 * E);
  g_assert_cmpfloat (traffic (find (b, "attn_scores_io_bwd")) + traffic (find (b, "attn_softmax_bwd"))
                     + traffic (find (b, "attn_dropout_bwd")), ==, 19 * E);
  /* the attention kernels are the bmms over the full square, in both passes (and only here) */
  g_assert_true (find (f, "attn")->flags & MODEL_OP_UNFUSED_BMM);
  g_assert_true (find (b, "attn_bwd")->flags & MODEL_OP_UNFUSED_BMM);
  g_assert_false (find (f0, "attn")->flags & MODEL_OP_UNFUSED_BMM);
  g_assert_cmpfloat (find (f, "mlp_residual")->bytes_written - res0, ==, e);
  g_assert_cmpfloat (find (f, "attn_residual")->bytes_written - res0, ==, e);
  /* backward reads twice the forward inputs (2·2e·p) plus the mask */
  g_assert_cmpfloat (find (b, "mlp_residual_bwd")->bytes_read, ==, 2 * 2 * e * 2 + e);
  /* the scores ops sit between the attention kernel and the output projection */
  g_autofree char *n = names (f);
  g_assert_nonnull (strstr (n, "attn attn_scores_io attn_softmax attn_dropout proj"));
}

/* Weight-gradient accumulation, GPT-3 175B tp 4 with SP (bf16 p = 2, fp32 main grads g = 4). FC1's
 * wgrad [h, 4h/t] has W = 12288·12288 elements; its operands are the gathered input and output
 * gradient, (2048·12288 + 2048·12288)·p bytes. Fused: the GEMM reads and writes W·g besides them.
 * add: it writes W·p, then fc1_grad_accum reads W·(p + g) and writes W·g right after it; autograd:
 * the same op, flagged to run from the second micro-batch. */
static void
test_grad_accum (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_tp4 (&s, &p, TRUE);
  double W = 12288.0 * 12288, operands = 2.0 * 2048 * 12288 * 2;
  g_autoptr (GArray) fused = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  const ModelOp *w = find (fused, "fc1_wgrad");
  g_assert_cmpfloat (w->bytes_read, ==, operands + 4 * W);
  g_assert_cmpfloat (w->bytes_written, ==, 4 * W);
  g_assert_null (find (fused, "fc1_grad_accum"));
  p.grad_accum = MODEL_GRAD_ACCUM_ADD;
  g_autoptr (GArray) add = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_cmpfloat (find (add, "fc1_wgrad")->bytes_written, ==, 2 * W);
  const ModelOp *a = find (add, "fc1_grad_accum");
  g_assert_cmpint (a->kind, ==, MODEL_OP_MEMBOUND);
  g_assert_cmpfloat (a->bytes_read, ==, 6 * W);
  g_assert_cmpfloat (a->bytes_written, ==, 4 * W);
  g_assert_cmpuint (a->flags & MODEL_OP_LATER_MICROBATCHES, ==, 0);
  g_assert_true (a == find (add, "fc1_wgrad") + 1);
  int accums = 0;
  for (guint i = 0; i < add->len; i++)
    accums += g_str_has_suffix (g_array_index (add, ModelOp, i).name, "_grad_accum");
  g_assert_cmpint (accums, ==, 4); /* qkv, proj, fc1, fc2 */
  p.grad_accum = MODEL_GRAD_ACCUM_AUTOGRAD;
  g_autoptr (GArray) autograd = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_true (find (autograd, "fc1_grad_accum")->flags & MODEL_OP_LATER_MICROBATCHES);
}

/* A small GPT (h = 64, 4 heads of 16, f = 4h = 256, s = 32, micro-batch 1) on tp 2 with SP: T = 32
 * tokens per GEMM, Ts = 16 per norm; QKV [32, 96, 64], proj [32, 64, 32], FC1 [32, 128, 64], FC2
 * [32, 64, 128]; bf16 params, p = 2 bytes. */
static void
small_tp2 (ModelShape *s, ModelPlan *p, ModelDtype mdt)
{
  *s = finished (preset_gpt (2, 64, 4, 32));
  model_plan_init (p);
  p->tp = 2, p->gpus = 2, p->sp = TRUE;
  p->matmul_dtype = mdt;
}

static int
count_recipe (const GArray *ops)
{
  int n = 0;
  for (guint i = 0; i < ops->len; i++)
    n += (g_array_index (ops, ModelOp, i).flags & MODEL_OP_RECIPE) != 0
         && g_array_index (ops, ModelOp, i).kind == MODEL_OP_MEMBOUND;
  return n;
}

static void
assert_bytes (const GArray *ops, const char *name, double rd, double wr)
{
  const ModelOp *op = find (ops, name);
  g_assert_nonnull (op);
  g_assert_cmpint (op->kind, ==, MODEL_OP_MEMBOUND);
  g_assert_cmpfloat (op->bytes_read, ==, rd);
  g_assert_cmpfloat (op->bytes_written, ==, wr);
}

/* FP8, delayed scaling (TE on Hopper), the small GPT above:
 * forward: QKV and FC1 are LayerNormLinears: the norms write FP8, Ts·h = 16·64 = 1,024 bytes (read
 *   1,024·2 = 2,048), and no cast runs; the SP all-gathers carry FP8: T·h·1 = 2,048 bytes (4,096 in
 *   bf16). proj_in_cast is the cast_transpose of the attention output E = T·(a·d/t) = 32·32 = 1,024
 *   elements: read 2,048, write 2·1,024 = 2,048; fc2_in_cast of the activation E = 32·128 = 4,096:
 *   read 8,192, write 8,192.
 * backward: fc2 and proj (row-parallel, SP) cast their output gradient row-wise on the local shard
 *   E_out/t = 32·64/2 = 1,024 (read 2,048, write 1,024), all-gather it in FP8 (2,048 bytes) and
 *   transpose the gathered E_out = 2,048 (read 2,048, write 2,048); fc1 cast_transposes E_out =
 *   32·128 = 4,096 (read 8,192, write 8,192), qkv E_out = 32·96 = 3,072 (read 6,144, write 6,144);
 *   the norm-fed inputs are re-gathered in FP8 (2,048 bytes) and transposed for wgrad: fc1_in_transpose
 *   and qkv_in_transpose E_in = 32·64 = 2,048 (read 2,048, write 2,048); the dgrad reduce-scatter
 *   stays bf16 (32·64·2 = 4,096). The forward casts have no backward kernel of their own.
 * The same layer in bf16 has no recipe op at all. */
static void
test_fp8_recipe (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP8);
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *fn = names (f);
  g_assert_cmpstr (fn, ==, "attn_norm qkv_ag qkv attn proj_in_cast proj proj_rs attn_residual mlp_norm fc1_ag fc1 "
                           "act fc2_in_cast fc2 fc2_rs mlp_residual");
  assert_bytes (f, "attn_norm", 2048, 1024);
  assert_bytes (f, "mlp_norm", 2048, 1024);
  assert_bytes (f, "proj_in_cast", 2048, 2048);
  assert_bytes (f, "fc2_in_cast", 8192, 8192);
  g_assert_cmpint (count_recipe (f), ==, 2);
  g_assert_true (find (f, "qkv")->flags & MODEL_OP_FP8_INPUT_TRANSPOSE);
  g_assert_false (find (f, "proj")->flags & MODEL_OP_FP8_INPUT_TRANSPOSE);
  g_assert_cmpfloat (find (f, "qkv_ag")->comm_bytes, ==, 2048);
  g_assert_cmpfloat (find (f, "fc1_ag")->comm_bytes, ==, 2048);
  g_assert_cmpfloat (find (f, "proj_rs")->comm_bytes, ==, 4096);

  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *bn = names (b);
  g_assert_cmpstr (bn, ==, "mlp_residual_bwd fc2_grad_cast fc2_grad_transpose fc2_rs_bwd fc2_dgrad fc2_wgrad "
                           "act_bwd fc1_grad_cast fc1_in_transpose fc1_input_ag fc1_dgrad fc1_dgrad_rs fc1_wgrad "
                           "mlp_norm_bwd attn_residual_bwd proj_grad_cast proj_grad_transpose proj_rs_bwd "
                           "proj_dgrad proj_wgrad attn_bwd "
                           "qkv_grad_cast qkv_in_transpose qkv_input_ag qkv_dgrad qkv_dgrad_rs qkv_wgrad "
                           "attn_norm_bwd");
  assert_bytes (b, "fc2_grad_cast", 2048, 1024);
  assert_bytes (b, "fc2_grad_transpose", 2048, 2048);
  g_assert_cmpfloat (find (b, "fc2_rs_bwd")->comm_bytes, ==, 2048);
  assert_bytes (b, "fc1_grad_cast", 8192, 8192);
  assert_bytes (b, "proj_grad_cast", 2048, 1024);
  assert_bytes (b, "proj_grad_transpose", 2048, 2048);
  g_assert_cmpfloat (find (b, "qkv_input_ag")->comm_bytes, ==, 2048);
  g_assert_cmpfloat (find (b, "qkv_dgrad_rs")->comm_bytes, ==, 4096);
  assert_bytes (b, "qkv_grad_cast", 6144, 6144);
  assert_bytes (b, "fc1_in_transpose", 2048, 2048);
  assert_bytes (b, "qkv_in_transpose", 2048, 2048);
  /* the overlap of the SP re-gather with dgrad is kept */
  g_assert_true (find (b, "qkv_input_ag")->overlap_next);
  /* the norm backward still reads its bf16 input and output gradient: 2·2,048 */
  assert_bytes (b, "mlp_norm_bwd", 4096, 2048);

  /* The whole rank (2 layers, embedding, head, optimizer): 2 forward + 8 backward recipe kernels per
   * layer (above) and the once-per-step weight cast: 21; embedding, LM head and loss have none. */
  g_autoptr (GArray) all8 = model_op_array_new ();
  model_layer_rank_ops (&s, &p, 0, all8);
  model_layer_optimizer_ops (&s, &p, 0, all8);
  g_assert_cmpint (count_recipe (all8), ==, 21);
  g_assert_null (find (all8, "lm_head_in_cast"));

  /* bf16: not one recipe kernel, and the norms write bf16 */
  small_tp2 (&s, &p, MODEL_DTYPE_BF16);
  g_autoptr (GArray) all = model_op_array_new ();
  model_layer_rank_ops (&s, &p, 0, all);
  model_layer_optimizer_ops (&s, &p, 0, all);
  g_assert_cmpint (count_recipe (all), ==, 0);
  for (guint i = 0; i < all->len; i++)
    {
      const char *name = g_array_index (all, ModelOp, i).name;
      g_assert_null (strstr (name, "_cast"));
      g_assert_null (strstr (name, "_quant"));
      g_assert_null (strstr (name, "_amax"));
      g_assert_null (strstr (name, "_transpose"));
    }
  g_autoptr (GArray) f16 = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  assert_bytes (f16, "attn_norm", 2048, 2048);
}

/* FP8 where the GEMM takes any operand layout (Blackwell; plan fp8_any_layout): the same layer as
 * test_fp8_recipe, each cast writing one FP8 copy and no transposes. Forward: proj_in_cast writes
 * 1,024 (not 2,048), fc2_in_cast 4,096 (not 8,192); the norms still write FP8 and the gathered
 * inputs keep their FP8 all-gathers, but no GEMM asks for its input transposed. Backward:
 * fc1_grad_cast and qkv_grad_cast write E_out (4,096 and 3,072), the shard casts of fc2 and proj stay
 * 1,024, and there is no fc2_grad_transpose, proj_grad_transpose, fc1_in_transpose or
 * qkv_in_transpose. The step's weight cast writes W (one copy), with no transpose under FP8 parameter
 * gather either. */
static void
test_fp8_any_layout (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP8);
  p.fp8_any_layout = TRUE;
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  assert_bytes (f, "attn_norm", 2048, 1024);
  assert_bytes (f, "proj_in_cast", 2048, 1024);
  assert_bytes (f, "fc2_in_cast", 8192, 4096);
  g_assert_cmpfloat (find (f, "qkv_ag")->comm_bytes, ==, 2048);
  for (guint i = 0; i < f->len; i++)
    g_assert_false (g_array_index (f, ModelOp, i).flags & MODEL_OP_FP8_INPUT_TRANSPOSE);
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *bn = names (b);
  g_assert_null (strstr (bn, "_transpose"));
  assert_bytes (b, "fc2_grad_cast", 2048, 1024);
  assert_bytes (b, "proj_grad_cast", 2048, 1024);
  assert_bytes (b, "fc1_grad_cast", 8192, 4096);
  assert_bytes (b, "qkv_grad_cast", 6144, 3072);
  g_autoptr (GArray) opt = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, opt);
  const ModelOp *cast = find (opt, "fp8_weight_cast");
  g_assert_nonnull (cast);
  g_assert_cmpfloat (cast->bytes_written * 2, ==, cast->bytes_read);
  p.zero = 1, p.fp8_param_gather = TRUE;
  g_autoptr (GArray) opt8 = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, opt8);
  g_assert_nonnull (find (opt8, "fp8_param_shard_cast"));
  g_assert_null (find (opt8, "fp8_weight_transpose"));
  p.fp8_any_layout = FALSE;
  g_autoptr (GArray) opt8t = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, opt8t);
  g_assert_nonnull (find (opt8t, "fp8_weight_transpose"));
}

/* FP8 with current scaling: every cast is preceded by an amax pass over its input (E·p), and the
 * norm is not fused (its output must be reduced first): attn_norm writes 2,048 bytes (bf16), then
 * qkv_in_amax reads the Ts·h = 1,024-element shard (2,048 bytes) and qkv_in_cast reads 2,048 and
 * writes the row-wise 1,024, both before the SP all-gather, and backward transposes the gathered
 * input (qkv_in_transpose 2,048/2,048); proj_in_amax reads 2,048 and proj_in_cast (not gathered)
 * writes both copies, 2,048. In backward each grad_cast has its amax (fc2: local shard 1,024
 * elements, 2,048 read). */
static void
test_fp8_current_scaling (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP8);
  p.fp8_scaling = MODEL_FP8_CURRENT;
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *fn = names (f);
  /* The gathered input's amax is all-reduced over TP before its cast (TE's with_amax_reduction). */
  g_assert_nonnull (strstr (fn, "attn_norm qkv_in_amax qkv_in_amax_ar qkv_in_cast qkv_ag qkv attn proj_in_amax "
                                "proj_in_cast proj"));
  g_assert_cmpint (find (f, "qkv_in_amax_ar")->coll, ==, MODEL_COLL_ALL_REDUCE);
  g_assert_cmpfloat (find (f, "qkv_in_amax_ar")->comm_bytes, ==, 4.0);
  assert_bytes (f, "attn_norm", 2048, 2048);
  assert_bytes (f, "qkv_in_amax", 2048, 0);
  assert_bytes (f, "qkv_in_cast", 2048, 1024);
  assert_bytes (f, "proj_in_amax", 2048, 0);
  assert_bytes (f, "proj_in_cast", 2048, 2048);
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  assert_bytes (b, "fc2_grad_amax", 2048, 0);
  assert_bytes (b, "qkv_in_transpose", 2048, 2048);
  g_assert_null (find (b, "proj_in_transpose"));
}

/* FP8 attention on the small GPT above (T = 32 tokens, a/t = 2 heads of 16 dims, MHA): Q, K and V,
 * T·(qd + 2·kvd) = 32·96 = 3,072 elements, are quantized before the attention (read 6,144, write
 * 3,072), which runs in FP8; backward quantizes dO, T·qd = 1,024 elements (read 2,048, write 1,024),
 * before the FP8 attention backward. With current scaling each gets an amax pass first. A BF16 plan
 * or unfused attention refuses the key. */
static void
test_fp8_attention (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP8);
  p.fp8_attention = TRUE;
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *fn = names (f);
  g_assert_nonnull (strstr (fn, " attn_qkv_quant attn "));
  g_assert_null (find (f, "attn_qkv_amax"));
  assert_bytes (f, "attn_qkv_quant", 6144, 3072);
  g_assert_cmpint (find (f, "attn")->dtype, ==, MODEL_DTYPE_FP8);
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_autofree char *bn = names (b);
  g_assert_nonnull (strstr (bn, " attn_grad_quant attn_bwd "));
  assert_bytes (b, "attn_grad_quant", 2048, 1024);
  g_assert_cmpint (find (b, "attn_bwd")->dtype, ==, MODEL_DTYPE_FP8);
  p.fp8_scaling = MODEL_FP8_CURRENT;
  g_autoptr (GArray) fc = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  assert_bytes (fc, "attn_qkv_amax", 6144, 0);
  g_autoptr (GArray) bc = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  assert_bytes (bc, "attn_grad_amax", 2048, 0);
  g_autoptr (GError) error = NULL;
  g_assert_true (model_plan_validate (&p, &s, &error));
  p.unfused_attention = TRUE;
  g_assert_false (model_plan_validate (&p, &s, &error));
  g_clear_error (&error);
  p.unfused_attention = FALSE;
  p.matmul_dtype = MODEL_DTYPE_BF16;
  g_assert_false (model_plan_validate (&p, &s, &error));
  g_assert_nonnull (strstr (error->message, "fp8_attention"));
}

/* GELU in FC1's epilogue (plan gemm_gelu_fusion, TE fp8_gemm gelu=True as in NVIDIA's MLPerf BERT
 * te_layers.py _LayerNormMLP): on small_tp2 in FP8, no act and no FC2 input cast in forward; FC1
 * writes 4,096 more bytes (the FP8 GELU output beside the kept pre-activation, T·f/t = 32·128
 * elements); backward has no act_bwd and no fc1_grad_cast but one fc1_grad_dgelu_cast reading the
 * gradient and the pre-activation (2·4,096·2 = 16,384) and writing the FP8 copy and its transpose
 * (8,192), and FC2's wgrad input is the FP8 GELU output transposed (read 4,096, write 4,096). The
 * step's memory-bound bytes drop. BF16, SwiGLU and MoE plans refuse the key. */
static double
membound_bytes (const GArray *ops)
{
  double sum = 0;
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *op = &g_array_index (ops, ModelOp, i);
      if (op->kind == MODEL_OP_MEMBOUND)
        sum += op->bytes_read + op->bytes_written;
    }
  return sum;
}

static void
test_gemm_gelu_fusion (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP8);
  g_autoptr (GArray) f0 = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autoptr (GArray) b0 = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  p.gemm_gelu_fusion = TRUE;
  g_autoptr (GError) error = NULL;
  g_assert_true (model_plan_validate (&p, &s, &error));
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_assert_null (find (f, "act"));
  g_assert_null (find (f, "fc2_in_cast"));
  g_assert_nonnull (find (f0, "act"));
  g_assert_nonnull (find (f0, "fc2_in_cast"));
  g_assert_cmpfloat (find (f, "fc1")->bytes_written, ==, find (f0, "fc1")->bytes_written + 4096);
  g_assert_cmpfloat (find (f, "fc2")->flops, ==, find (f0, "fc2")->flops);
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  g_assert_null (find (b, "act_bwd"));
  g_assert_null (find (b, "fc1_grad_cast"));
  assert_bytes (b, "fc1_grad_dgelu_cast", 16384, 8192);
  assert_bytes (b, "fc2_in_transpose", 4096, 4096);
  g_assert_nonnull (find (b0, "act_bwd"));
  g_assert_cmpfloat (membound_bytes (f) + membound_bytes (b), <, membound_bytes (f0) + membound_bytes (b0));
  p.matmul_dtype = MODEL_DTYPE_BF16;
  g_assert_false (model_plan_validate (&p, &s, &error));
  g_assert_nonnull (strstr (error->message, "gemm_gelu_fusion"));
  g_clear_error (&error);
  p.matmul_dtype = MODEL_DTYPE_FP8;
  s.activation = MODEL_ACT_SWIGLU;
  g_assert_false (model_plan_validate (&p, &s, &error));
}

/* Network copies of a routed token (model_moe_dispatch_copies), DeepSeek-V3's top-8: the all-to-all
 * dispatcher sends all 8; DeepEP one per target node: over 8 nodes limited to 4, 4·(1 − 0.75^8) =
 * 3.5995; unlimited over 8, 8·(1 − 0.875^8) = 5.2514; a limit above the domains is no limit; one
 * domain, 8. */
static void
test_moe_dispatch_copies (void)
{
  ModelShape s = finished (preset_gpt (2, 64, 4, 32));
  s.moe_experts = 256, s.moe_top_k = 8, s.moe_ffn_hidden = 32;
  ModelPlan p;
  model_plan_init (&p);
  g_assert_cmpfloat (model_moe_dispatch_copies (&s, &p, 8), ==, 8.0);
  p.moe_dispatcher = MODEL_MOE_DISPATCH_DEEPEP;
  g_assert_cmpfloat (fabs (model_moe_dispatch_copies (&s, &p, 8) - 8.0 * (1 - pow (0.875, 8))), <, 1e-12);
  s.moe_node_limit = 4;
  g_assert_cmpfloat (fabs (model_moe_dispatch_copies (&s, &p, 8) - 3.5995), <, 1e-4);
  s.moe_node_limit = 16;
  g_assert_cmpfloat (model_moe_dispatch_copies (&s, &p, 8), ==, 8.0 * (1 - pow (0.875, 8)));
  g_assert_cmpfloat (model_moe_dispatch_copies (&s, &p, 1), ==, 8.0);
}

/* NVFP4 (Blackwell): q = 1/2 + 1/16 = 0.5625 bytes per element per copy, a row-wise and an RHT
 * column-wise copy per tensor. QKV input: the Ts·h = 1,024-element shard before the all-gather,
 * qkv_in_amax reads 2,048, qkv_in_quant reads 2,048 and writes 2·0.5625·1,024 = 1,152; the norm
 * writes bf16 (2,048). FC2 input E = 4,096: amax 8,192 read; quant 8,192 read, 4,608 written.
 * The SP all-gathers carry NVFP4: qkv_ag the row-wise T·h·q = 2,048·0.5625 = 1,152 bytes, its
 * backward re-gather the column-wise 1,152; fc2's output gradient both copies, 2,048·2q = 2,304
 * (bf16: 4,096); the dgrad reduce-scatter stays bf16 (4,096).
 * Backward fc2 output gradient, local shard before the all-gather E_out = 2,048/2 = 1,024: amax
 * 2,048 read, quant 2,048 read, 1,152 written; no
 * transposes (the column-wise copies are made in forward). Once per step the weights: per layer
 * (3h² + h² + 2·4h²)/t = 12·64²/2 = 24,576 elements, 2 layers = 49,152 on pp 1: nvfp4_weight_amax
 * reads 98,304 and nvfp4_weight_quant reads 98,304 and writes 2·0.5625·49,152 = 55,296. */
static void
test_fp4_recipe (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP4);
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *fn = names (f);
  g_assert_cmpstr (fn, ==, "attn_norm qkv_in_amax qkv_in_amax_ar qkv_in_quant qkv_ag qkv attn proj_in_amax "
                           "proj_in_quant proj proj_rs attn_residual mlp_norm fc1_in_amax fc1_in_amax_ar "
                           "fc1_in_quant fc1_ag fc1 act fc2_in_amax fc2_in_quant fc2 fc2_rs mlp_residual");
  assert_bytes (f, "attn_norm", 2048, 2048);
  assert_bytes (f, "qkv_in_amax", 2048, 0);
  assert_bytes (f, "qkv_in_quant", 2048, 1152);
  assert_bytes (f, "fc2_in_amax", 8192, 0);
  assert_bytes (f, "fc2_in_quant", 8192, 4608);
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  assert_bytes (b, "fc2_grad_amax", 2048, 0);
  assert_bytes (b, "fc2_grad_quant", 2048, 1152);
  /* fc2's output gradient is quantized on its shard before the all-gather: its amax is reduced. */
  g_autofree char *bq = names (b);
  g_assert_nonnull (strstr (bq, "fc2_grad_amax fc2_grad_amax_ar fc2_grad_quant"));
  g_assert_cmpfloat (find (f, "qkv_ag")->comm_bytes, ==, 1152);
  g_assert_cmpfloat (find (b, "qkv_input_ag")->comm_bytes, ==, 1152);
  g_assert_cmpfloat (find (b, "fc2_rs_bwd")->comm_bytes, ==, 2304);
  g_assert_cmpfloat (find (b, "qkv_dgrad_rs")->comm_bytes, ==, 4096);
  g_assert_null (find (b, "qkv_in_transpose"));
  g_autofree char *bn = names (b);
  g_assert_nonnull (strstr (bn, "qkv_grad_amax qkv_grad_quant qkv_input_ag qkv_dgrad"));
  g_autoptr (GArray) o = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, o);
  g_assert_cmpint (o->len, ==, 5); /* grad_norm, adam, grad_zero and the two below */
  assert_bytes (o, "nvfp4_weight_amax", 98304, 0);
  assert_bytes (o, "nvfp4_weight_quant", 98304, 55296);
  /* FP8: fp8_weight_cast reads 98,304 and writes 2·49,152 = 98,304 (FP8 copy and transpose). */
  p.matmul_dtype = MODEL_DTYPE_FP8;
  g_autoptr (GArray) o8 = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, o8);
  g_assert_cmpint (o8->len, ==, 4);
  assert_bytes (o8, "fp8_weight_cast", 98304, 98304);
  /* fp8_param_gather with the distributed optimizer over dp 4: the optimizer casts its FP32 shard of
   * W/4 = 12,288 weights to FP8 (read 49,152, write 12,288) and the gathered FP8 weights are
   * transposed (read and write 49,152); adam no longer writes their bf16 copy (12,288·2 less). */
  p.dp = 4, p.gpus = 8, p.zero = 1;
  g_autoptr (GArray) o8z = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, o8z);
  p.fp8_param_gather = TRUE;
  g_autoptr (GArray) og = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, og);
  g_assert_null (find (og, "fp8_weight_cast"));
  assert_bytes (og, "fp8_param_shard_cast", 49152, 12288);
  assert_bytes (og, "fp8_weight_transpose", 49152, 49152);
  g_assert_cmpfloat (find (o8z, "adam")->bytes_written - find (og, "adam")->bytes_written, ==, 24576);
}

/* FP8 (delayed) in a MoE layer (Mixtral 8x7B, tp 2 with SP, ep 8, as in test_moe: expert GEMMs
 * m_e = 8,192 tokens, h = 4,096, f_e = 14,336/2 = 7,168 per rank, one local expert): the grouped
 * expert GEMMs are plain TE linears, so expert_fc1_in_cast casts E = 8,192·4,096 = 33,554,432
 * elements (read 2E = 67,108,864, write 2E) and expert_fc2_in_cast E = 8,192·7,168 = 58,720,256
 * (read and write 117,440,512); backward expert_fc2_grad_cast E_out = 8,192·4,096 (read and write
 * 67,108,864: the expert-TP reduce-scatter is not an SP one, the gradient is cast whole). The
 * router stays in BF16 (no cast), and the MLP norm of a MoE layer writes BF16 (2,048·4,096·2 =
 * 16,777,216 bytes): it feeds the router too. Shared experts (plain linears behind an SP
 * all-gather) are cast row-wise on the local 2,048·4,096 = 8,388,608 elements before it (read
 * 16,777,216, write 8,388,608). */
static void
test_moe_fp8 (void)
{
  ModelShape s = finished (preset_mixtral_8x7b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.dp = 8, p.ep = 8, p.gpus = 16, p.sp = TRUE;
  p.matmul_dtype = MODEL_DTYPE_FP8;
  g_autoptr (GArray) f = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *n = names (f);
  g_assert_nonnull (strstr (n, "mlp_norm router router_topk permute moe_dispatch moe_etp_ag expert_fc1_in_cast "
                               "expert_fc1 expert_act expert_fc2_in_cast expert_fc2 moe_etp_rs"));
  assert_bytes (f, "expert_fc1_in_cast", 67108864.0, 67108864.0);
  assert_bytes (f, "expert_fc2_in_cast", 117440512.0, 117440512.0);
  assert_bytes (f, "mlp_norm", 16777216.0, 16777216.0);
  g_assert_null (find (f, "router_in_cast"));
  g_autoptr (GArray) b = ops_of (&s, &p, 0, MODEL_PASS_BACKWARD);
  assert_bytes (b, "expert_fc2_grad_cast", 67108864.0, 67108864.0);
  s.moe_shared_experts = 2;
  g_autoptr (GArray) sh = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autofree char *shn = names (sh);
  g_assert_nonnull (strstr (shn, "shared_fc1_in_cast shared_ag shared_fc1"));
  assert_bytes (sh, "shared_fc1_in_cast", 16777216.0, 8388608.0);
}

/* The recipe's BF16 layers (bf16_layers_first/last, global layer indices): on the 2-layer fp4 model
 * of test_fp4_recipe with bf16_layers_last = 1, layer 0 keeps its NVFP4 GEMMs and recipe kernels,
 * layer 1 runs its GEMMs in bf16 with no recipe kernel, and the once-per-step weight quantization
 * covers layer 0 only: 24,576 weight elements (half of 49,152), so nvfp4_weight_quant reads
 * 24,576·2 = 49,152 and writes 2·0.5625·24,576 = 27,648 bytes. Too many BF16 layers is refused. */
static void
test_bf16_layers (void)
{
  ModelShape s;
  ModelPlan p;
  small_tp2 (&s, &p, MODEL_DTYPE_FP4);
  p.bf16_layers_last = 1;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  g_assert_cmpint (model_layer_matmul_dtype (&s, &p, 0), ==, MODEL_DTYPE_FP4);
  g_assert_cmpint (model_layer_matmul_dtype (&s, &p, 1), ==, MODEL_DTYPE_BF16);
  g_assert_cmpint (model_layer_matmul_dtype (&s, &p, -1), ==, MODEL_DTYPE_FP4);
  g_autoptr (GArray) f0 = ops_of (&s, &p, 0, MODEL_PASS_FORWARD);
  g_autoptr (GArray) f1 = ops_of (&s, &p, 1, MODEL_PASS_FORWARD);
  g_autoptr (GArray) b1 = ops_of (&s, &p, 1, MODEL_PASS_BACKWARD);
  g_assert_cmpint (find (f0, "fc1")->dtype, ==, MODEL_DTYPE_FP4);
  g_assert_cmpint (find (f1, "fc1")->dtype, ==, MODEL_DTYPE_BF16);
  g_assert_cmpint (find (b1, "fc1_wgrad")->dtype, ==, MODEL_DTYPE_BF16);
  g_assert_cmpint (count_recipe (f0), >, 0);
  g_assert_cmpint (count_recipe (f1), ==, 0);
  g_assert_cmpint (count_recipe (b1), ==, 0);
  g_autoptr (GArray) o = model_op_array_new ();
  model_layer_optimizer_ops (&s, &p, 0, o);
  assert_bytes (o, "nvfp4_weight_quant", 49152, 27648);
  p.bf16_layers_first = 2;
  g_autoptr (GError) error = NULL;
  g_assert_false (model_plan_validate (&p, &s, &error));
  g_assert_nonnull (strstr (error->message, "bf16_layers_first (2) + bf16_layers_last (1)"));
}

/* Attention pairs per family (hand counts): an encoder scores every pair, s² = 262,144 at s 512;
 * gpt-oss's windowed layers W(W+1)/2 + (s - W)·W = 8,256 + 245,760 at W 128, s 2,048, and its
 * other layers the causal s(s+1)/2 = 2,098,176; forward FLOPs 4·a·d·pairs. */
static void
test_attention_pairs (void)
{
  ModelPlan p;
  model_plan_init (&p);
  p.gpus = 1;
  ModelShape bert = preset_gpt (2, 1024, 16, 512);
  bert.encoder = TRUE;
  bert = finished (bert);
  g_autoptr (GArray) e = ops_of (&bert, &p, 0, MODEL_PASS_FORWARD);
  g_assert_cmpint (find (e, "attn")->pairs, ==, 512 * 512);
  g_assert_cmpfloat (find (e, "attn")->flops, ==, 4.0 * 16 * 64 * 512 * 512);
  ModelShape oss = preset_llama (2, 2880, 2880, 64);
  oss.head_dim = 64;
  oss.seq_len = 2048;
  oss.attention_window = 128;
  oss.window_layer_freq = 2;
  oss = finished (oss);
  g_autoptr (GArray) w0 = ops_of (&oss, &p, 0, MODEL_PASS_FORWARD);
  g_autoptr (GArray) w1 = ops_of (&oss, &p, 1, MODEL_PASS_FORWARD);
  g_assert_cmpint (find (w0, "attn")->pairs, ==, 8256 + 245760);
  g_assert_cmpint (find (w1, "attn")->pairs, ==, 2098176);
  /* Document masking: within documents of 768 tokens, two whole ones and a 512-token remainder,
   * 2·768·769/2 + 512·513/2 causal pairs; the encoder's 512 tokens as two of 256, 2·256². The
   * closed-form FLOPs count the same pairs. */
  ModelShape llama = preset_llama (2, 2880, 2880, 64);
  llama.seq_len = 2048;
  llama.doc_tokens = 768;
  llama = finished (llama);
  g_autoptr (GArray) d = ops_of (&llama, &p, 0, MODEL_PASS_FORWARD);
  g_assert_cmpint (find (d, "attn")->pairs, ==, 768 * 769 + 512 * 513 / 2);
  bert.doc_tokens = 256;
  g_autoptr (GArray) e2 = ops_of (&bert, &p, 0, MODEL_PASS_FORWARD);
  g_assert_cmpint (find (e2, "attn")->pairs, ==, 2 * 256 * 256);
  double whole = model_flops_closed_form (&bert, bert.vocab, 1.0);
  bert.doc_tokens = 0;
  g_assert_cmpfloat (model_flops_closed_form (&bert, bert.vocab, 1.0) - whole, ==,
                     12.0 * 16 * 64 * (512.0 * 512 - 2 * 256 * 256) / 512 * 2);
}

/* DeepSeek-V3's MLA at tp 1, one 4,096-token sequence: the five projections multiply 187,105,280
 * weights per token (q_down 11,010,048, q_up 37,748,736, kv_down 4,128,768, kv_up 16,777,216,
 * output 117,440,512; the two latent norms are not GEMMs), and attention takes 2·(192 + 128) FLOPs
 * per head and causal pair. Under TP 8 with SP the latents are all-gathered (T·1,536 and
 * T·576 elements) and the down projections run on the rank's 512 tokens. */
static void
test_mla (void)
{
  ModelShape s = preset_llama (4, 7168, 18432, 128);
  s.kv_heads = 128;
  s.seq_len = 4096;
  s.q_lora_rank = 1536, s.kv_lora_rank = 512, s.qk_nope_head_dim = 128, s.qk_rope_head_dim = 64;
  s.v_head_dim = 128;
  s = finished (s);
  ModelPlan p;
  model_plan_init (&p);
  p.gpus = 1;
  g_autoptr (GArray) ops = model_op_array_new ();
  model_layer_ops (&s, &p, 0, MODEL_PASS_FORWARD, ops);
  double gemm = 0;
  for (const char *const *n = (const char *const[]) { "q_down", "q_up", "kv_down", "kv_up", "proj", NULL }; *n; n++)
    gemm += find (ops, *n)->flops;
  g_assert_cmpfloat (gemm, ==, 2.0 * 4096 * 187105280.0);
  g_assert_cmpfloat (find (ops, "attn")->flops, ==, 2.0 * 128 * (192 + 128) * (4096.0 * 4097 / 2));
  p.tp = 8, p.gpus = 8, p.sp = TRUE;
  g_autoptr (GArray) tp = model_op_array_new ();
  model_layer_ops (&s, &p, 0, MODEL_PASS_FORWARD, tp);
  g_assert_cmpfloat (find (tp, "q_latent_ag")->comm_bytes, ==, 4096.0 * 1536 * 2);
  g_assert_cmpfloat (find (tp, "kv_latent_ag")->comm_bytes, ==, 4096.0 * 576 * 2);
  g_assert_cmpint (find (tp, "q_down")->m, ==, 512);
  g_assert_cmpint (find (tp, "q_up")->n, ==, 128 / 8 * 192);
  ModelParams mp;
  model_shape_params (&s, s.vocab, &mp);
  g_assert_cmpint (mp.attention, ==, 187107328);
  g_assert_cmpint (model_shape_attention_rank_params (&s, 8, FALSE), ==, 15140864 + 171966464 / 8);
}

/* Leading dense layers and the MTP module: DeepSeek-style first 3 dense; the last chunk runs one
 * MTP projection [2h -> h] per depth and a second head. */
static void
test_dense_layers_mtp (void)
{
  ModelShape s = preset_mixtral_8x7b ();
  s.moe_dense_layers = 3;
  s.mtp_depth = 1;
  s = finished (s);
  g_assert_false (model_shape_layer_is_moe (&s, 2));
  g_assert_true (model_shape_layer_is_moe (&s, 3));
  g_assert_cmpint (model_shape_moe_layers (&s), ==, 29);
  ModelPlan p;
  model_plan_init (&p);
  p.gpus = 1;
  g_autoptr (GArray) ops = model_op_array_new ();
  model_layer_chunk_ops (&s, &p, 0, 0, MODEL_PASS_FORWARD, ops);
  const ModelOp *eh = find (ops, "mtp_eh_proj");
  g_assert_nonnull (eh);
  g_assert_cmpfloat (eh->flops, ==, 2.0 * 4096 * (2 * 4096) * 4096);
  int heads = 0;
  for (guint i = 0; i < ops->len; i++)
    heads += strcmp (g_array_index (ops, ModelOp, i).name, "lm_head") == 0;
  g_assert_cmpint (heads, ==, 2);
  ModelRankParams rp;
  model_layer_rank_params (&s, &p, 0, &rp);
  ModelParams mp;
  model_shape_params (&s, model_shape_padded_vocab (&s, 1), &mp);
  g_assert_cmpint (rp.dense + rp.expert, ==, mp.total + mp.mtp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/layer/sp-forward", test_sp_forward);
  g_test_add_func ("/model/layer/sp-backward", test_sp_backward);
  g_test_add_func ("/model/layer/sp-backward-dtensor", test_sp_backward_dtensor);
  g_test_add_func ("/model/layer/no-sp", test_no_sp);
  g_test_add_func ("/model/layer/cp-rope-gqa", test_cp_rope_gqa);
  g_test_add_func ("/model/layer/recompute", test_recompute);
  g_test_add_func ("/model/layer/eager-fsdp2", test_eager_fsdp2);
  g_test_add_func ("/model/layer/recompute-selective-op", test_recompute_selective_op);
  g_test_add_func ("/model/layer/moe", test_moe);
  g_test_add_func ("/model/layer/moe-imbalance", test_moe_imbalance);
  g_test_add_func ("/model/layer/embedding-head", test_embedding_head);
  g_test_add_func ("/model/layer/rank-params", test_rank_params);
  g_test_add_func ("/model/layer/optimizer", test_optimizer);
  g_test_add_func ("/model/layer/pp-op", test_pp_op);
  g_test_add_func ("/model/layer/dp-ops", test_dp_ops);
  g_test_add_func ("/model/layer/unique-gemms", test_unique_gemms);
  g_test_add_func ("/model/layer/tied-embedding-grad", test_tied_embedding_grad);
  g_test_add_func ("/model/layer/unfused-dropout", test_unfused_dropout);
  g_test_add_func ("/model/layer/fp8-recipe", test_fp8_recipe);
  g_test_add_func ("/model/layer/fp8-any-layout", test_fp8_any_layout);
  g_test_add_func ("/model/layer/fp8-current-scaling", test_fp8_current_scaling);
  g_test_add_func ("/model/layer/fp4-recipe", test_fp4_recipe);
  g_test_add_func ("/model/layer/bf16-layers", test_bf16_layers);
  g_test_add_func ("/model/layer/moe-fp8", test_moe_fp8);
  g_test_add_func ("/model/layer/grad-accum", test_grad_accum);
  g_test_add_func ("/model/layer/attention-pairs", test_attention_pairs);
  g_test_add_func ("/model/layer/mla", test_mla);
  g_test_add_func ("/model/layer/fp8-attention", test_fp8_attention);
  g_test_add_func ("/model/layer/gemm-gelu-fusion", test_gemm_gelu_fusion);
  g_test_add_func ("/model/layer/moe-dispatch-copies", test_moe_dispatch_copies);
  g_test_add_func ("/model/layer/dense-layers-mtp", test_dense_layers_mtp);
  return g_test_run ();
}
