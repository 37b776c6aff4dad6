/* The training-step simulation (see runner.h for what it models and the symmetry design).
 *
 * Per pipeline stage one program: an array of ops with dependency edges and, per GPU stream, the
 * ops in issue order. Streams: compute, TP, CP, PP-forward-send, PP-backward-send, DP, EP.
 *   compute  kernel time from sim/gpu/gpu.c (roofline with GEMM/attention/memory efficiency).
 *   TP       with sequence parallelism: all-gather before QKV and FC1, reduce-scatter after the
 *            output projection and FC2 (Korthikanti et al. 2022); backward: all-gather of the
 *            gradient before the row-parallel dgrad, all-gather of the input again for the
 *            column-parallel wgrad, reduce-scatter of its input gradient. Without SP: all-reduce.
 *            With tp_comm_overlap the collective runs beside the GEMM it feeds or drains
 *            (userbuffers pipelining), so the GEMM takes max(GEMM, comm) and the compute after it
 *            waits for the collective; otherwise the GEMM waits for it.
 *   CP       ring attention: the attention kernel is split in cp steps; step j needs the KV block
 *            of ring step j − 1 (a send/recv to the next CP rank), so the exchange overlaps the
 *            previous step's attention (Megatron-Core's CP implementation). Backward sends dKV too.
 *   EP       all-to-all dispatch before and combine after the experts, blocking.
 *   PP       after a forward (backward) slot, the activation (gradient) goes to the next
 *            (previous) virtual stage on a send stream (overlap_p2p_comm); the receiving slot's first
 *            op waits for it.
 *   DP       gradients of a chunk are reduce-scattered (all-reduced without the distributed
 *            optimizer) over the DP×CP group in buckets of dp_bucket_mb, launched as the chunk's last
 *            backward produces them (Megatron's overlap_grad_reduce); the distributed optimizer's
 *            parameter all-gather of the previous step is issued at step start and the first
 *            forward of each chunk waits for it (overlap_param_gather). Without dp_overlap, both
 *            run after the backward / optimizer, blocking. ZeRO-2/3 reduce-scatter every
 *            micro-batch's gradients (only the shard is resident); ZeRO-3 (DeepSpeed stage 3,
 *            FSDP full shard) all-gathers each layer's parameters before its forward, recompute
 *            and backward on a gather stream, prefetched one use ahead, reduce-scatters each
 *            layer's gradients after its backward, and has no step-end gather (see
 *            build_program). Tied embeddings: the word-embedding
 *            gradient is all-reduced between the first and last stage before the optimizer.
 *   optimizer Adam on the local (DP-sharded) parameters, memory-bound: 30 bytes per parameter
 *            (fp32 grad, master, m, v read; master, m, v written; bf16 weight written).
 * The ops of a slot and their FLOPs/bytes come from model/layer.h; model FLOPs (MFU) follow
 * model/flops.h (6·N + exact causal attention per token).
 *
 * Breakdown: on each rank, every interval in which the compute stream is idle is attributed to the
 * dependency that ended it: a TP/CP/DP/EP collective (all of it is exposed communication of that
 * dimension, including waiting for the group's slowest member) or a PP receive (the transfer time
 * is exposed PP communication, the rest is the other stage's work: the bubble). */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/step/runner.h"
#include "model/schedule.h"
#include "model/layer.h"
#include "model/flops.h"
#include "model/memory.h"
#include "sim/des/engine.h"
#include "sim/net/flow.h"
#include "sim/net/alphabeta.h"

/* ST_DPAG: ZeRO-3 parameter all-gathers on their own stream, as DeepSpeed (and PyTorch FSDP's
 * unshard stream) issue them apart from the gradient reduce-scatters, so a prefetch is not queued
 * behind a reduction. */
enum { ST_COMPUTE, ST_TP, ST_CP, ST_SEND_F, ST_SEND_B, ST_DP, ST_EP, ST_DPAG, N_STREAMS };
typedef enum { K_COMPUTE, K_COLL, K_RING, K_SEND } OpKind;
/* Communication groups. DPCP: dense gradients (Megatron's data-parallel group with CP); EDP:
 * expert gradients; EMB: first and last pipeline stage (tied word embeddings). */
typedef enum { G_TP, G_CP, G_DPCP, G_EP, G_EDP, G_EMB, G_ETP, G_AMAX, G_COUNT } GroupKind;

/* G_AMAX: TP x CP x DP of a stage, Megatron-Core's FP8 amax reduction group; its all-reduce runs on
 * the TP stream, in order with the compute it blocks (TE issues it on the current stream). */
static const guint8 group_cat[G_COUNT] = { SIM_BD_TP, SIM_BD_CP, SIM_BD_DP, SIM_BD_EP, SIM_BD_DP, SIM_BD_DP, SIM_BD_EP,
                                           SIM_BD_DP };
static const guint8 group_stream[G_COUNT] = { ST_TP, ST_CP, ST_DP, ST_EP, ST_DP, ST_DP, ST_EP, ST_TP };

typedef struct {
  guint8 kind, stream, cat, group, coll;
  guint8 fwd;          /* K_SEND: 1 to the next virtual stage, 0 to the previous */
  guint8 ub_own_sms;   /* K_COMPUTE: a userbuffers GEMM whose TP communication does not share its
                        * SMs (see emit_ops): only other communication stretches it */
  guint16 n_deps;
  guint32 seq;         /* K_COLL/K_RING: ordinal among this program's ops of the same group */
  guint16 mb;          /* K_SEND: micro-batch and virtual stage of the sending slot */
  guint16 vs;
  gint64 dur_ns;       /* K_COMPUTE */
  double bytes;
  double flops;
  guint32 succ_off, n_succ;
  gint32 recv_op;      /* K_SEND: op of the receiving stage's program that waits for it */
  const char *name;    /* for traces: the model op's (interned) name or a static label */
} TOp;

typedef struct {
  TOp *ops;
  int n_ops;
  guint32 *succ;
  guint32 *stream_ops[N_STREAMS];
  int stream_n[N_STREAMS];
  gint32 *entry;       /* [pass][mb][chunk] -> entry op */
  int end_op;
  double flops;        /* executed FLOPs of one rank of this stage */
  gint64 forward_ns;   /* compute of the forward slots of one micro-batch (all chunks) */
} Program;

/* ---------------------------------------------------------------------------------------------- */
/* Program builder */

typedef struct {
  GArray *ops;         /* TOp */
  GArray *edges;       /* guint32 pairs (from, to) */
  GArray *streams[N_STREAMS];
  int last_compute;
  int waits[64], n_waits;       /* the next compute (or send) depends on these */
  int later[64], n_later;       /* ... and the compute after that on these */
  guint32 seq[G_COUNT];
} Builder;

static void
builder_init (Builder *b)
{
  memset (b, 0, sizeof *b);
  b->ops = g_array_new (FALSE, TRUE, sizeof (TOp));
  b->edges = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (int i = 0; i < N_STREAMS; i++)
    b->streams[i] = g_array_new (FALSE, FALSE, sizeof (guint32));
  b->last_compute = -1;
}

static void
edge (Builder *b, int from, int to)
{
  guint32 e[2] = { (guint32) from, (guint32) to };
  g_array_append_vals (b->edges, e, 2);
}

static int
add_op (Builder *b, const TOp *op)
{
  int i = (int) b->ops->len;
  g_array_append_vals (b->ops, op, 1);
  guint32 u = (guint32) i;
  g_array_append_val (b->streams[op->stream], u);
  return i;
}

static void
apply_waits (Builder *b, int op)
{
  for (int i = 0; i < b->n_waits; i++)
    edge (b, b->waits[i], op);
  b->n_waits = 0;
}

static int
compute (Builder *b, const char *name, gint64 dur_ns, double flops, guint8 cat)
{
  TOp op = { .kind = K_COMPUTE, .stream = ST_COMPUTE, .cat = cat, .dur_ns = dur_ns, .flops = flops,
             .name = name };
  int i = add_op (b, &op);
  apply_waits (b, i);
  memcpy (b->waits, b->later, sizeof (int) * b->n_later);
  b->n_waits = b->n_later;
  b->n_later = 0;
  b->last_compute = i;
  return i;
}

static void
push_wait (int *list, int *n, int op)
{
  g_assert (*n < 64);
  list[(*n)++] = op;
}

/* A collective on `group` depending on the last compute op. overlapped: it runs beside the next
 * compute op and the one after that waits for it; otherwise the next compute op waits. */
static int
collective (Builder *b, const char *name, GroupKind g, SimCollectiveOp coll, double bytes, gboolean overlapped)
{
  TOp op = { .kind = K_COLL, .stream = group_stream[g], .cat = group_cat[g], .group = g,
             .coll = coll, .bytes = bytes, .seq = b->seq[g]++, .name = name };
  int i = add_op (b, &op);
  if (b->last_compute >= 0)
    edge (b, b->last_compute, i);
  if (overlapped)
    push_wait (b->later, &b->n_later, i);
  else
    push_wait (b->waits, &b->n_waits, i);
  return i;
}

static void
program_from_builder (Program *p, Builder *b)
{
  p->n_ops = (int) b->ops->len;
  p->ops = (TOp *) g_array_free (b->ops, FALSE);
  guint n_edges = b->edges->len / 2;
  guint32 *e = (guint32 *) b->edges->data;
  for (guint i = 0; i < n_edges; i++)
    {
      p->ops[e[2 * i]].n_succ++;
      g_assert (p->ops[e[2 * i + 1]].n_deps < G_MAXUINT16);
      p->ops[e[2 * i + 1]].n_deps++;
    }
  guint32 off = 0;
  for (int i = 0; i < p->n_ops; i++)
    {
      p->ops[i].succ_off = off;
      off += p->ops[i].n_succ;
      p->ops[i].n_succ = 0;
    }
  p->succ = g_new (guint32, MAX (off, 1));
  for (guint i = 0; i < n_edges; i++)
    {
      TOp *from = &p->ops[e[2 * i]];
      p->succ[from->succ_off + from->n_succ++] = e[2 * i + 1];
    }
  g_array_free (b->edges, TRUE);
  for (int s = 0; s < N_STREAMS; s++)
    {
      p->stream_n[s] = (int) b->streams[s]->len;
      p->stream_ops[s] = (guint32 *) g_array_free (b->streams[s], FALSE);
    }
}

static void
program_clear (Program *p)
{
  g_free (p->ops);
  g_free (p->succ);
  g_free (p->entry);
  for (int s = 0; s < N_STREAMS; s++)
    g_free (p->stream_ops[s]);
}

/* ---------------------------------------------------------------------------------------------- */
/* Layer ops (model/layer.h) into program ops */

typedef struct {
  const ModelShape *shape;
  const ModelPlan *plan;
  const SimGpuSpec *gpu;
  double grad_bytes;   /* bytes per gradient element as reduced */
  double param_bytes;  /* bytes per parameter element as gathered */
  GArray *scratch;     /* ModelOp */
} LayerCtx;

static gint64
kernel_ns (const LayerCtx *c, const ModelOp *op)
{
  return sim_gpu_op_ns (c->gpu, c->plan, op);
}

static gboolean
map_group (const ModelOp *op, GroupKind *g)
{
  switch (op->dim)
    {
    case MODEL_DIM_TP: *g = op->expert_group ? G_ETP : G_TP; return TRUE;
    case MODEL_DIM_CP: *g = G_CP; return TRUE;
    case MODEL_DIM_EP: *g = G_EP; return TRUE;
    case MODEL_DIM_DP: *g = op->expert_group ? G_EDP : G_DPCP; return TRUE;
    default: return FALSE;
    }
}

static gboolean
map_coll (ModelCollective coll, SimCollectiveOp *out)
{
  switch (coll)
    {
    case MODEL_COLL_ALL_GATHER: *out = SIM_COLLECTIVE_ALLGATHER; return TRUE;
    case MODEL_COLL_REDUCE_SCATTER: *out = SIM_COLLECTIVE_REDUCE_SCATTER; return TRUE;
    case MODEL_COLL_ALL_REDUCE: *out = SIM_COLLECTIVE_ALLREDUCE; return TRUE;
    case MODEL_COLL_ALL_TO_ALL: *out = SIM_COLLECTIVE_ALLTOALL; return TRUE;
    case MODEL_COLL_SEND_RECV:
    case MODEL_COLL_CP_KV_EXCHANGE: *out = SIM_COLLECTIVE_SENDRECV; return TRUE;
    default: return FALSE;
    }
}

static gboolean
is_plain_tp (const ModelOp *op)
{
  return op->kind == MODEL_OP_COMM && op->dim == MODEL_DIM_TP && !op->expert_group && !op->overlap_next;
}

static void
emit_comm (Builder *b, const ModelOp *op, gboolean overlapped)
{
  GroupKind g;
  SimCollectiveOp coll;
  if (op->group_size <= 1 || !map_group (op, &g) || !map_coll (op->coll, &coll))
    return;
  if (op->coll == MODEL_COLL_CP_KV_EXCHANGE)
    {
      /* The whole ring pass as one step of concurrent sends to the next CP rank: every edge of
       * the ring carries the (cp − 1) blocks, beside the attention kernel. */
      TOp t = { .kind = K_RING, .stream = ST_CP, .cat = SIM_BD_CP, .group = G_CP,
                .coll = SIM_COLLECTIVE_SENDRECV, .bytes = op->comm_bytes / MAX (op->group_size - 1, 1),
                .seq = b->seq[G_CP]++, .name = op->name };
      t.bytes *= op->group_size - 1;
      int i = add_op (b, &t);
      if (b->last_compute >= 0)
        edge (b, b->last_compute, i);
      push_wait (overlapped ? b->later : b->waits, overlapped ? &b->n_later : &b->n_waits, i);
      return;
    }
  collective (b, op->name, g, coll, op->comm_bytes, overlapped);
}

/* Emits the ops of one slot (model_layer_chunk_ops order). TP collectives next to a GEMM run beside
 * it under tp_comm_overlap: an all-gather before the GEMM it feeds, a reduce-scatter/all-reduce
 * after the GEMM it drains (emitted first, overlapped). Calls layer_done(layer) each time the ops of
 * a transformer layer end (for gradient buckets). Returns the compute time emitted. */
typedef void (*LayerHook) (Builder *, const LayerCtx *, int, gpointer);

/* Whether op i opens a stretch of work that needs a layer's full parameters: the layer's first op,
 * and under full recompute the first backward op after its recompute (ZeRO-3 releases the
 * parameters after each forward, the recompute included, and gathers them again). */
static gboolean
opens_param_use (const LayerCtx *c, const ModelOp *o, int i)
{
  if (o[i].layer < 0)
    return FALSE;
  if (i == 0 || o[i].layer != o[i - 1].layer)
    return TRUE;
  return c->plan->recompute == MODEL_RECOMPUTE_FULL && o[i - 1].phase == MODEL_PHASE_RECOMPUTE
         && o[i].phase == MODEL_PHASE_BWD;
}

/* The first micro-batch of a step runs without the ops flagged MODEL_OP_LATER_MICROBATCHES. */
static void
drop_later_microbatch_ops (GArray *ops)
{
  guint kept = 0;
  for (guint i = 0; i < ops->len; i++)
    if (!(g_array_index (ops, ModelOp, i).flags & MODEL_OP_LATER_MICROBATCHES))
      g_array_index (ops, ModelOp, kept++) = g_array_index (ops, ModelOp, i);
  g_array_set_size (ops, kept);
}

static gint64
emit_ops (Builder *b, const LayerCtx *c, const GArray *ops, double *flops,
          LayerHook layer_done, LayerHook param_use, gpointer data)
{
  const ModelOp *o = (const ModelOp *) ops->data;
  int n = (int) ops->len;
  gboolean tpo = c->plan->tp_comm_overlap;
  gint64 total = 0;
  for (int i = 0; i < n; i++)
    {
      if (layer_done && i > 0 && o[i].layer != o[i - 1].layer && o[i - 1].layer >= 0)
        layer_done (b, c, o[i - 1].layer, data);
      if (param_use && opens_param_use (c, o, i))
        param_use (b, c, o[i].layer, data);
      if (o[i].kind == MODEL_OP_COMM)
        {
          gboolean ovl = o[i].overlap_next
                         || (tpo && is_plain_tp (&o[i]) && i + 1 < n && o[i + 1].kind == MODEL_OP_GEMM);
          emit_comm (b, &o[i], ovl);
          continue;
        }
      if (tpo && o[i].kind == MODEL_OP_GEMM && i + 1 < n && is_plain_tp (&o[i + 1])
          && (o[i + 1].coll == MODEL_COLL_REDUCE_SCATTER || o[i + 1].coll == MODEL_COLL_ALL_REDUCE))
        {
          emit_comm (b, &o[i + 1], TRUE);
          gint64 ns = kernel_ns (c, &o[i]);
          int k = compute (b, o[i].name, ns, o[i].flops, SIM_BD_COMPUTE);
          g_array_index (b->ops, TOp, k).ub_own_sms = sim_gpu_op_ub_own_sms (c->plan, &o[i]);
          *flops += o[i].flops;
          total += ns;
          i++;
          continue;
        }
      gint64 ns = kernel_ns (c, &o[i]);
      int k = compute (b, o[i].name, ns, o[i].kind == MODEL_OP_MEMBOUND ? 0 : o[i].flops,
                       o[i].phase == MODEL_PHASE_OPTIMIZER ? SIM_BD_OPTIMIZER : SIM_BD_COMPUTE);
      g_array_index (b->ops, TOp, k).ub_own_sms = sim_gpu_op_ub_own_sms (c->plan, &o[i]);
      if (o[i].kind != MODEL_OP_MEMBOUND)
        *flops += o[i].flops;
      total += ns;
    }
  if (layer_done && n > 0 && o[n - 1].layer >= 0)
    layer_done (b, c, o[n - 1].layer, data);
  return total;
}

/* ---------------------------------------------------------------------------------------------- */
/* Programs */

static int
entry_index (const ModelPlan *plan, int m, ModelPass pass, int mb, int chunk)
{
  return ((int) pass * m + mb) * plan->vpp + chunk;
}

typedef struct {
  double pending, per_layer, cap;
  int dpcp;
  gboolean active;
  int *ops, n_ops, max_ops;
  /* ZeRO-3: per-layer parameter all-gathers (bytes of one layer's parameters as gathered). The
   * gather for a use is issued when the previous use starts (prefetch depth one, as DeepSpeed's
   * prefetch of the next module in its trace and FSDP's backward/forward prefetch of the next
   * unit; two layers resident, as model/memory.c budgets), so it overlaps that use's compute. */
  double gather_per_layer;
  int prev_use_start;  /* last compute op before the previous use began (-1: none) */
  gboolean zero3;
  /* ZeRO-3 blocking fetch (ModelPlan.zero3_blocking): the gather of a use is cut into `pieces`
   * (weight matrices), each issued after all queued compute and before the compute that follows. */
  gboolean blocking;
  int pieces;
  /* Distributed optimizer with overlap_param_gather: parameter all-gather buckets of the previous
   * step's update, their chunk and the chunk-local layer whose forward first uses them (-1: the
   * slot's first op); `wait_chunk` >= 0 while the first forward of that chunk is emitted, and
   * `chunk_first_layer` is its first global layer. */
  const int *ag_ops, *ag_chunk, *ag_need;
  int n_ag, wait_chunk, chunk_first_layer;
} Buckets;

/* ZeRO-3: all-gather `bytes` of parameters before the next compute op; issued once the previous
 * use of parameters has started. */
static void
zero3_gather (Builder *b, Buckets *k, double bytes)
{
  if (bytes <= 0 || k->dpcp <= 1)
    return;
  /* Blocking (DeepSpeed <= 0.3.16, partition_parameters.py _allgather_param): a
   * torch.cuda.synchronize() before each parameter's all_gather, so each of the pieces starts after
   * every queued kernel and the next kernel waits for it; the stream keeps them in order. */
  int pieces = k->blocking ? k->pieces : 1;
  for (int j = 0; j < pieces; j++)
    {
      TOp t = { .kind = K_COLL, .stream = ST_DPAG, .cat = SIM_BD_DP, .group = G_DPCP,
                .coll = SIM_COLLECTIVE_ALLGATHER, .bytes = bytes / pieces, .seq = b->seq[G_DPCP]++,
                .name = "zero3_param_ag" };
      int i = add_op (b, &t);
      int after = k->blocking ? b->last_compute : k->prev_use_start;
      if (after >= 0)
        edge (b, after, i);
      push_wait (b->waits, &b->n_waits, i);
    }
  k->prev_use_start = b->last_compute;
}

static void
param_use (Builder *b, const LayerCtx *c, int layer, gpointer data)
{
  Buckets *k = data;
  if (k->zero3)
    zero3_gather (b, k, k->gather_per_layer);
  if (k->wait_chunk >= 0)
    for (int j = 0; j < k->n_ag; j++)
      if (k->ag_chunk[j] == k->wait_chunk && k->ag_need[j] == layer - k->chunk_first_layer)
        push_wait (b->waits, &b->n_waits, k->ag_ops[j]);
}

/* DP gradient bucket: launched when `pending` bytes reach the bucket size (or flushed). */
static void
bucket_flush (Builder *b, const LayerCtx *c, Buckets *k, gboolean flush)
{
  if (k->pending <= 0 || k->dpcp <= 1 || (!flush && k->pending < k->cap))
    return;
  g_assert (k->n_ops < k->max_ops);
  SimCollectiveOp op = c->plan->zero >= 1 ? SIM_COLLECTIVE_REDUCE_SCATTER : SIM_COLLECTIVE_ALLREDUCE;
  TOp t = { .kind = K_COLL, .stream = ST_DP, .cat = SIM_BD_DP, .group = G_DPCP, .coll = op,
            .bytes = k->pending, .seq = b->seq[G_DPCP]++,
            .name = op == SIM_COLLECTIVE_ALLREDUCE ? "dp_grad_ar" : "dp_grad_rs" };
  int i = add_op (b, &t);
  if (b->last_compute >= 0)
    edge (b, b->last_compute, i);
  if (k->blocking)
    push_wait (b->waits, &b->n_waits, i); /* reduced on the compute stream (overlap_comm off) */
  k->ops[k->n_ops++] = i;
  k->pending = 0;
}

static void
bucket_layer_done (Builder *b, const LayerCtx *c, int layer, gpointer data)
{
  Buckets *k = data;
  if (!k->active)
    return;
  k->pending += k->per_layer;
  bucket_flush (b, c, k, FALSE);
}

static void
build_program (Program *p, LayerCtx *c, int stage, int dpcp)
{
  const ModelPlan *plan = c->plan;
  const ModelShape *s = c->shape;
  int pp = plan->pp, v = plan->vpp, m = model_plan_microbatches (plan);
  int V = pp * v, n_slots = model_schedule_n_slots (v, m);
  g_autofree ModelScheduleSlot *slots = g_new (ModelScheduleSlot, n_slots);
  model_schedule_fill (plan->schedule, pp, v, m, stage, slots);
  Builder bb, *b = &bb;
  builder_init (b);
  p->entry = g_new (gint32, 2 * m * v);
  gint64 h = s->hidden;
  /* Gradient bytes: the stage's parameters (model/layer.h) less the embedding / LM head shards,
   * spread evenly over its layers; the shards join the bucket of their chunk. */
  ModelRankParams rp;
  model_layer_rank_params (s, plan, stage, &rp);
  double emb = (double) (model_shape_padded_vocab (s, plan->tp) / plan->tp) * h;
  double first_extra = stage == 0 ? emb + (s->position == MODEL_POS_LEARNED ? (double) s->max_positions * h : 0) : 0;
  double last_extra = stage == pp - 1 && (!s->tied_embeddings || pp > 1) ? emb : 0;
  double all = (double) rp.dense + (double) rp.expert;
  int rank_layers = MAX (model_plan_rank_layers (plan, s, stage), 1);
  double per_layer = MAX (all - first_extra - last_extra, 0) / rank_layers;
  /* Bucket size: Megatron-Core scales it with the data-parallel size so that ring chunks stay
   * bandwidth-bound, max(40M, 1M × dp·cp) parameters (megatron/training/training.py, get_model;
   * --ddp-bucket-size unset); the plan's dp_bucket_mb is the floor in bytes. Gradient buckets hold
   * that many gradient elements, parameter all-gather buckets that many parameters. */
  double bucket_params = MAX (40e6, 1e6 * dpcp);
  double cap = MAX ((double) plan->dp_bucket_mb * 1048576.0, bucket_params * c->grad_bytes);
  double ag_cap = MAX ((double) plan->dp_bucket_mb * 1048576.0, bucket_params * c->param_bytes);
  /* ZeRO-2/3 keep only the gradient shard (model/memory.c), so every micro-batch's backward
   * reduce-scatters its gradients (DeepSpeed's partitioned gradients, FSDP's post-backward
   * reduce-scatter), not only the last one's. ZeRO-3 reduces per layer as its backward ends (FSDP:
   * one unit per transformer layer) and gathers parameters per layer (zero3_gather); its
   * optimizer updates the shard that is the only copy, so there is no step-end gather.
   * Per micro-batch and layer, with full recompute, DP traffic is 3 gathers (forward, recompute,
   * backward) + 1 reduce-scatter of the layer's parameters. */
  gboolean zero3 = plan->zero >= 3 && dpcp > 1;
  gboolean per_mb = plan->zero >= 2;
  if (zero3)
    cap = per_layer * c->grad_bytes;
  Buckets k = { 0, per_layer * c->grad_bytes, cap, dpcp, FALSE, NULL, 0, 0,
                per_layer * c->param_bytes, -1 };
  k.max_ops = ((int) ceil (all * c->grad_bytes / MAX (cap, 1.0)) + 2 * v + 4) * (per_mb ? m : 1)
              + (zero3 ? (rank_layers + 2 * v) * m : 0);
  k.ops = g_new (int, k.max_ops);
  int max_ag = (int) ceil (all * c->param_bytes / MAX (ag_cap, 1.0)) + 2 * v + 4;
  g_autofree int *ag_ops = g_new (int, max_ag);
  g_autofree int *ag_chunk = g_new (int, max_ag);
  g_autofree int *ag_need = g_new (int, max_ag);
  int n_ag = 0;
  gboolean distopt = plan->zero >= 1 && plan->zero <= 2 && dpcp > 1;
  /* One micro-batch's activation [s/cp, b, h] between stages; sent 1/tp at a time under SP or
   * Megatron's scatter/gather. */
  double act_bytes = (double) plan->micro_batch * s->seq_len / plan->cp * h * model_dtype_bytes (plan->param_dtype);
  gboolean pp_split = (plan->sp || plan->pp_scatter_gather) && plan->tp > 1;
  gboolean amax = plan->matmul_dtype == MODEL_DTYPE_FP8 && plan->fp8_scaling == MODEL_FP8_DELAYED
                  && plan->fp8_reduce_amax && plan->tp * plan->cp * plan->dp > 1;
  gint64 fwd_ns = 0;
  double flops = 0;

  /* The distributed optimizer's parameter all-gather of the previous step's update
   * (Megatron's --overlap-param-gather), in buckets per chunk laid out in forward order
   * (embedding, layers, head), issued at step start in that order on the DP stream. In steady
   * state a bucket must only have arrived before the first forward use of its parameters
   * (Megatron-Core's forward pre-hook waits for the bucket of the module about to run), so the
   * first forward of a chunk waits for each bucket at the layer holding its first byte: the
   * remaining gathers overlap the forward of the layers before. */
  if (distopt && plan->dp_overlap)
    for (int ch = 0; ch < v; ch++)
      {
        int ch_layers = model_plan_chunk_layers (plan, s, stage, ch, NULL);
        double lead = model_plan_chunk_has_embedding (plan, stage, ch) ? first_extra * c->param_bytes : 0;
        /* fp8_param_gather: the FP8 layers' GEMM weights travel at 1 byte, the rest at param_dtype. */
        double saved = model_layer_fp8_param_saving (s, plan, stage, ch);
        double layer_bytes = per_layer * c->param_bytes - (ch_layers > 0 ? saved / ch_layers : 0);
        double bytes = lead + layer_bytes * ch_layers;
        if (model_plan_chunk_has_loss (plan, stage, ch))
          bytes += last_extra * c->param_bytes;
        double offset = 0;
        while (bytes > 0 && n_ag < max_ag)
          {
            double chunk_bytes = MIN (bytes, ag_cap);
            TOp t = { .kind = K_COLL, .stream = ST_DP, .cat = SIM_BD_DP, .group = G_DPCP,
                      .coll = SIM_COLLECTIVE_ALLGATHER, .bytes = chunk_bytes, .seq = b->seq[G_DPCP]++,
                      .name = "dp_param_ag" };
            ag_chunk[n_ag] = ch;
            /* -1: the slot's first op (embedding) needs it; else the chunk-local layer holding
             * the bucket's first byte (the head's bytes count with the last layer). */
            ag_need[n_ag] = offset < lead || layer_bytes <= 0 || ch_layers == 0
                              ? -1
                              : MIN ((int) ((offset - lead) / layer_bytes), ch_layers - 1);
            ag_ops[n_ag++] = add_op (b, &t);
            bytes -= chunk_bytes;
            offset += chunk_bytes;
          }
      }
  k.zero3 = zero3;
  /* DeepSpeed 0.3 gathers per parameter; its stage3 persistence threshold (1e5 elements) keeps
   * biases and norms resident, leaving the weight matrices: 4 in a GPT layer (qkv, dense,
   * dense_h_to_4h, dense_4h_to_h), 7 in a Llama-style one (q, k, v, o, gate, up, down). */
  k.blocking = zero3 && plan->zero3_blocking;
  k.pieces = s->activation == MODEL_ACT_SWIGLU ? 7 : 4;
  k.ag_ops = ag_ops;
  k.ag_chunk = ag_chunk;
  k.ag_need = ag_need;
  k.n_ag = n_ag;
  k.wait_chunk = -1;

  for (int i = 0; i < n_slots; i++)
    {
      ModelScheduleSlot sl = slots[i];
      int vs = sl.chunk * pp + stage;
      gboolean fwd = sl.pass == MODEL_PASS_FORWARD;
      int entry = compute (b, "slot_entry", 0, 0, SIM_BD_COMPUTE);
      p->entry[entry_index (plan, m, sl.pass, sl.microbatch, sl.chunk)] = entry;
      if (fwd && sl.microbatch == 0)
        for (int j = 0; j < n_ag; j++)
          if (ag_chunk[j] == sl.chunk && ag_need[j] < 0)
            edge (b, ag_ops[j], entry);
      if (pp_split && !plan->sp && (fwd ? vs > 0 : vs < V - 1))
        /* The received 1/tp of the activation (gradient) is all-gathered over TP before use
         * (Megatron's gather_split_1d_tensor after the receive). */
        collective (b, fwd ? "pp_recv_ag" : "pp_recv_grad_ag", G_TP, SIM_COLLECTIVE_ALLGATHER, act_bytes, FALSE);
      k.wait_chunk = fwd && sl.microbatch == 0 && n_ag > 0 ? sl.chunk : -1;
      model_plan_chunk_layers (plan, s, stage, sl.chunk, &k.chunk_first_layer);
      g_array_set_size (c->scratch, 0);
      model_layer_chunk_ops (s, plan, stage, sl.chunk, sl.pass, c->scratch);
      if (sl.microbatch == 0)
        drop_later_microbatch_ops (c->scratch);
      /* The chunk's last backward produces its gradients: bucket them as layers finish (ZeRO-2/3:
       * every backward, see above). */
      k.active = !fwd && (per_mb || sl.microbatch == m - 1);
      if (zero3)
        {
          /* The embedding / LM head shards this chunk uses, gathered before the slot. */
          double extra = (model_plan_chunk_has_embedding (plan, stage, sl.chunk) ? first_extra : 0)
                         + (model_plan_chunk_has_loss (plan, stage, sl.chunk) ? last_extra : 0);
          zero3_gather (b, &k, extra * c->param_bytes);
        }
      gint64 ns = emit_ops (b, c, c->scratch, &flops, bucket_layer_done,
                            zero3 || k.wait_chunk >= 0 ? param_use : NULL, &k);
      k.wait_chunk = -1;
      if (amax)
        {
          /* FP8 delayed scaling (TE DelayedScaling, reduce_amax): leaving the chunk's fp8_autocast
           * (Megatron-Core's TransformerBlock.forward) all-reduces the forward amaxes, 3 per FP8 GEMM
           * (input, weight, output); the chunk's backward reduces 2 per GEMM (gradients), both
           * blocking the compute stream (NVTE_ASYNC_AMAX_REDUCTION off by default). */
          int gemms = 0;
          for (guint j = 0; j < c->scratch->len; j++)
            {
              const ModelOp *o = &g_array_index (c->scratch, ModelOp, j);
              gemms += o->kind == MODEL_OP_GEMM && o->dtype == MODEL_DTYPE_FP8
                       && (fwd ? o->phase == MODEL_PHASE_FWD : o->grad == MODEL_GRAD_INPUT);
            }
          if (gemms > 0)
            {
              collective (b, "fp8_amax_ar", G_AMAX, SIM_COLLECTIVE_ALLREDUCE, (fwd ? 3.0 : 2.0) * 4.0 * gemms, FALSE);
              compute (b, "fp8_amax_wait", 0, 0, SIM_BD_COMPUTE);
            }
        }
      if (fwd && sl.microbatch == 0)
        fwd_ns += ns;
      if (k.active)
        {
          if (model_plan_chunk_has_embedding (plan, stage, sl.chunk))
            k.pending += first_extra * c->grad_bytes;
          if (model_plan_chunk_has_loss (plan, stage, sl.chunk))
            k.pending += last_extra * c->grad_bytes;
          bucket_flush (b, c, &k, TRUE);
        }
      if (fwd ? vs < V - 1 : vs > 0)
        {
          /* Activations (gradients) of [s/cp, b, h] to the next (previous) stage, 1/tp of them under
           * SP or scatter/gather. */
          TOp t = { .kind = K_SEND, .stream = fwd ? ST_SEND_F : ST_SEND_B, .cat = SIM_BD_PP,
                    .fwd = fwd, .mb = (guint16) sl.microbatch, .vs = (guint16) vs,
                    .bytes = act_bytes / (pp_split ? plan->tp : 1), .recv_op = -1,
                    .name = fwd ? "pp_send_act" : "pp_send_grad" };
          int j = add_op (b, &t);
          edge (b, b->last_compute, j);
          apply_waits (b, j);
          if (plan->pp_blocking)
            push_wait (b->waits, &b->n_waits, j); /* the next kernel starts once it is delivered */
        }
    }
  p->forward_ns = fwd_ns;

  /* Gradient sync done (without dp_overlap: only issued now), then the optimizer. */
  int last_bwd = b->last_compute;
  int synced = compute (b, "grads_synced", 0, 0, SIM_BD_OPTIMIZER);
  for (int i = 0; i < k.n_ops; i++)
    {
      if (!plan->dp_overlap)
        edge (b, last_bwd, k.ops[i]);
      edge (b, k.ops[i], synced);
    }
  if (s->tied_embeddings && pp > 1 && (stage == 0 || stage == pp - 1))
    /* The word-embedding gradient of the first and last stage (the tied copy) is all-reduced
     * before the optimizer (Megatron's _allreduce_word_embedding_grads). */
    collective (b, "embedding_grad_ar", G_EMB, SIM_COLLECTIVE_ALLREDUCE, emb * c->grad_bytes, FALSE);
  g_array_set_size (c->scratch, 0);
  model_layer_optimizer_ops (s, plan, stage, c->scratch);
  emit_ops (b, c, c->scratch, &flops, NULL, NULL, NULL);
  int n_final = 0;
  if (distopt && !plan->dp_overlap)
    {
      /* Blocking parameter all-gather after the optimizer; the step ends when it is done. */
      double bytes = all * c->param_bytes - model_layer_fp8_param_saving (s, plan, stage, -1);
      int after = b->last_compute;
      while (bytes > 0 && n_final < max_ag)
        {
          TOp t = { .kind = K_COLL, .stream = ST_DP, .cat = SIM_BD_DP, .group = G_DPCP,
                    .coll = SIM_COLLECTIVE_ALLGATHER, .bytes = MIN (bytes, ag_cap), .seq = b->seq[G_DPCP]++,
                    .name = "dp_param_ag" };
          ag_ops[n_final] = add_op (b, &t);
          edge (b, after, ag_ops[n_final++]);
          bytes -= MIN (bytes, ag_cap);
        }
    }
  p->end_op = compute (b, "step_end", 0, 0, SIM_BD_OPTIMIZER);
  for (int i = 0; i < n_final; i++)
    edge (b, ag_ops[i], p->end_op);
  program_from_builder (p, b);
  p->flops = flops;
  g_free (k.ops);
}

/* ---------------------------------------------------------------------------------------------- */
/* Execution */

typedef struct {
  int rank, stage;
  SimGpu *gpu;
  guint16 *deps;
  gint64 last_compute_end, end_ns;
  guint8 cause_cat;
  gint64 cause_dur;
  gint64 bd[SIM_BD_COUNT];
  gboolean ended;
} RankState;

typedef struct {
  int size, n_groups;
  int *group_of;       /* [gpus], -1: not in any group of this kind */
  int *members;        /* [n_groups * size] */
  int *sib_off, *sib;  /* per stage: groups whose first member is in that stage */
  int *sib_n;          /* per stage: how many of them a representative launches */
} GroupTable;

typedef struct Pending Pending;
struct Pending {
  guint64 key;
  Pending *next_free;
  int kind, group, op, stream;
  int arrived, expected, outstanding;
  gint64 launch_ns;
  RankState *sender;   /* K_SEND */
  int recv_stage;
  gint32 recv_op;
  gint64 latency_ns;
};

typedef struct {
  const ModelPlan *plan;
  const SimTopology *topo;
  SimEngine *engine;
  SimCollective *coll;
  Program *progs;
  RankState *states;
  int n_states;
  RankState **state_of;
  GroupTable groups[G_COUNT];
  int per_stage;       /* ranks per pipeline stage */
  int *stage_ranks;    /* [pp * per_stage] */
  gboolean full;
  double slowdown;
  double (*compute_scale) (gpointer user, int gpu);
  gpointer compute_scale_user;
  GHashTable *pending;
  Pending *free_list;
  GPtrArray *allocated;
  gint64 completing_dur;
  GError *error;
  guint64 ops_executed;
  SimFlowNet *net;
  const SimCollectiveProfile *profile;
  /* PP transfers per (sending stage, direction): the routes of the pairs a send launches,
   * concatenated (representatives: every sibling pair as one flow), and its latency. */
  guint32 **pp_links;
  int *pp_n_links;
  gint64 *pp_latency;
  double *pp_weight;         /* the representative send's share weight (sim_collective_p2p_weight) */
  gint64 pair_latency[2];    /* PP send latency across / inside a domain; -1 unknown */
  guint32 **pp_pair_links;   /* per (stage, direction): every pair's route, at pp_pair_off */
  int **pp_pair_off;
  guint32 *route_load;       /* routes chosen per link so far (balanced ECMP choice) */
  int *stage_index;          /* rank -> its index among the ranks of its stage */
  SimRunnerTraceFn trace;    /* --trace hook (planning module) */
  gpointer trace_user;
} Runner;

static Pending *
pending_new (Runner *r)
{
  Pending *p = r->free_list;
  if (p != NULL)
    r->free_list = p->next_free;
  else
    {
      p = g_new (Pending, 1);
      g_ptr_array_add (r->allocated, p);
    }
  memset (p, 0, sizeof *p);
  return p;
}

static void
pending_release (Runner *r, Pending *p)
{
  p->next_free = r->free_list;
  r->free_list = p;
}

static void
fail (Runner *r, GError *error)
{
  if (r->error == NULL)
    r->error = error;
  else
    g_error_free (error);
  sim_engine_stop (r->engine);
}

static void complete (Runner *r, Pending *p);

static void
flow_done (gpointer user, guint64 arg)
{
  Pending *p = user;
  Runner *r = (Runner *) (gsize) arg;
  if (--p->outstanding == 0)
    complete (r, p);
}

static void
zero_done (SimEngine *engine, gpointer data, guint64 arg)
{
  complete ((Runner *) data, (Pending *) (gsize) arg);
}

static void
start_coll (Runner *r, Pending *p, SimCollectiveOp op, const int *gpus, int n, double bytes)
{
  GError *error = NULL;
  p->outstanding++;
  if (!sim_collective_start (r->coll, op, SIM_COLLECTIVE_ALGO_AUTO, gpus, n, bytes, flow_done, p,
                             (guint64) (gsize) r, NULL, &error))
    {
      p->outstanding--;
      fail (r, error);
    }
}

/* Launches the collective (or CP ring step) `op` for group g, and in representative mode for every
 * sibling group of the same stage. */
static void
launch_group_op (Runner *r, Pending *p, const TOp *op)
{
  GroupTable *gt = &r->groups[p->kind];
  int first = gt->members[(gsize) p->group * gt->size];
  int n_launch = 1;
  const int *launch = &p->group;
  if (!r->full)
    {
      /* siblings: the groups whose first member sits in the same stage as this one's */
      int coords[MODEL_DIM_COUNT];
      model_plan_rank_coords (r->plan, first, coords);
      int st = coords[MODEL_DIM_PP];
      launch = gt->sib + gt->sib_off[st];
      n_launch = gt->sib_n[st];
    }
  p->launch_ns = sim_engine_now (r->engine);
  for (int i = 0; i < n_launch; i++)
    {
      const int *m = gt->members + (gsize) launch[i] * gt->size;
      if (op->kind == K_RING)
        for (int j = 0; j < gt->size; j++)
          {
            int pair[2] = { m[j], m[(j + 1) % gt->size] };
            start_coll (r, p, SIM_COLLECTIVE_SENDRECV, pair, 2, op->bytes);
          }
      else
        start_coll (r, p, (SimCollectiveOp) op->coll, m, gt->size, op->bytes);
    }
  if (p->outstanding == 0)
    sim_engine_after (r->engine, 0, zero_done, r, (guint64) (gsize) p);
}

static int
pp_peer (Runner *r, int rank, int stage)
{
  int coords[MODEL_DIM_COUNT];
  model_plan_rank_coords (r->plan, rank, coords);
  coords[MODEL_DIM_PP] = stage;
  return model_plan_rank_of (r->plan, coords);
}

/* Latency of a PP send/recv between two GPUs: the collective profile's direct send/recv term on
 * the pair's shape (as sim/net/collective.c charges it). */
static gint64
pair_latency (Runner *r, int src, int dst)
{
  /* The cluster is homogeneous: one figure for pairs inside a domain, one for pairs across. */
  int same = sim_topology_domain_of (r->topo, src) == sim_topology_domain_of (r->topo, dst);
  if (r->pair_latency[same] < 0)
    {
      int pair[2] = { src, dst };
      SimCollectiveShape sh;
      r->pair_latency[same] = sim_collective_shape (r->topo, pair, 2, &sh, NULL)
                                  ? sim_alphabeta_latency_ns (SIM_COLLECTIVE_SENDRECV,
                                                              SIM_COLLECTIVE_ALGO_DIRECT, &sh, r->profile)
                                  : 0;
    }
  return r->pair_latency[same];
}

static guint32
pair_hash (int src, int dst)
{
  return (guint32) src * 2654435761u ^ (guint32) dst * 40503u;
}

/* Routes of the PP sends from `stage` in one direction, for every pair (stage rank i -> rank i of
 * to_stage), chosen like sim/net/collective.c chooses ring routes: among a few ECMP hashes the one whose
 * busiest link carries the fewest routes so far (a balanced, subnet-manager-like assignment rather
 * than hash collisions). Representatives send over all sibling pairs as one flow over their
 * concatenated routes (a link shared by k pairs appears k times, so max-min charges it k times and
 * every pair moves at the rate of the most contended one); pairs inside one NVLink domain only
 * from the representative's domain when the representative's pair is inside one. --full sends each
 * pair's own route. */
#define PP_ROUTE_TRIES 8

static void
pp_route_build (Runner *r, int stage, gboolean fwd, int to_stage)
{
  int k = 2 * stage + (fwd ? 1 : 0);
  if (r->route_load == NULL)
    r->route_load = g_new0 (guint32, sim_topology_n_links (r->topo));
  GArray *all = g_array_new (FALSE, FALSE, sizeof (guint32));
  int *off = g_new (int, r->per_stage + 1);
  for (int i = 0; i < r->per_stage; i++)
    {
      int src = r->stage_ranks[(gsize) stage * r->per_stage + i];
      int dst = r->stage_ranks[(gsize) to_stage * r->per_stage + i];
      guint32 links[SIM_TOPOLOGY_MAX_HOPS], best[SIM_TOPOLOGY_MAX_HOPS];
      guint32 h = pair_hash (src, dst);
      int n = sim_topology_route (r->topo, src, dst, h, best), best_n = n;
      if (n > 2 && sim_topology_fabric (r->topo)->routing == SIM_ROUTING_STATIC)
        {
          guint32 best_load = G_MAXUINT32;
          for (int t = 0; t < PP_ROUTE_TRIES; t++)
            {
              int nt = sim_topology_route (r->topo, src, dst, h + (guint32) t * 0x9E3779B9u, links);
              guint32 load = 0;
              for (int j = 0; j < nt; j++)
                load = MAX (load, r->route_load[links[j]]);
              if (load < best_load)
                {
                  best_load = load;
                  best_n = nt;
                  memcpy (best, links, sizeof (guint32) * nt);
                }
            }
        }
      for (int j = 0; j < best_n; j++)
        r->route_load[best[j]]++;
      off[i] = (int) all->len;
      g_array_append_vals (all, best, best_n);
    }
  off[r->per_stage] = (int) all->len;
  r->pp_pair_off[k] = off;
  r->pp_pair_links[k] = (guint32 *) g_array_free (all, FALSE);
  /* The representative's flow. */
  int rep_src = r->stage_ranks[(gsize) stage * r->per_stage];
  int rep_dst = r->stage_ranks[(gsize) to_stage * r->per_stage];
  int dom = sim_topology_domain_of (r->topo, rep_src);
  gboolean local = dom == sim_topology_domain_of (r->topo, rep_dst);
  GArray *links = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (int i = 0; i < r->per_stage; i++)
    {
      int src = r->stage_ranks[(gsize) stage * r->per_stage + i];
      if (local && sim_topology_domain_of (r->topo, src) != dom)
        continue;
      g_array_append_vals (links, r->pp_pair_links[k] + off[i], off[i + 1] - off[i]);
    }
  r->pp_n_links[k] = (int) links->len;
  r->pp_links[k] = (guint32 *) g_array_free (links, FALSE);
  r->pp_latency[k] = pair_latency (r, rep_src, rep_dst);
  r->pp_weight[k] = sim_collective_p2p_weight (r->profile, r->topo, rep_src, rep_dst, 1);
}

static void send_landed (SimEngine *engine, gpointer data, guint64 arg);

static void
send_flow_done (gpointer user, guint64 arg)
{
  Pending *p = user;
  Runner *r = (Runner *) (gsize) arg;
  sim_engine_after (r->engine, p->latency_ns, send_landed, r, (guint64) (gsize) p);
}

static void
send_landed (SimEngine *engine, gpointer data, guint64 arg)
{
  complete ((Runner *) data, (Pending *) (gsize) arg);
}

static void
launch_send (Runner *r, RankState *st, const TOp *op)
{
  const ModelPlan *plan = r->plan;
  int to_vs = op->fwd ? op->vs + 1 : op->vs - 1;
  Pending *p = pending_new (r);
  p->kind = -1;
  p->stream = op->stream;
  p->sender = st;
  p->recv_stage = to_vs % plan->pp;
  p->recv_op = op->recv_op;
  p->launch_ns = sim_engine_now (r->engine);
  int k = 2 * st->stage + (op->fwd ? 1 : 0);
  g_assert (r->pp_links[k] != NULL);
  if (r->full)
    {
      int dst = pp_peer (r, st->rank, p->recv_stage);
      int i = r->stage_index[st->rank];
      const int *off = r->pp_pair_off[k];
      p->latency_ns = pair_latency (r, st->rank, dst);
      sim_flow_net_start_weighted (r->net, r->pp_pair_links[k] + off[i], off[i + 1] - off[i], op->bytes,
                                   sim_collective_p2p_weight (r->profile, r->topo, st->rank, dst, 1), send_flow_done, p,
                                   (guint64) (gsize) r);
    }
  else
    {
      p->latency_ns = r->pp_latency[k];
      sim_flow_net_start_weighted (r->net, r->pp_links[k], r->pp_n_links[k], op->bytes, r->pp_weight[k],
                                   send_flow_done, p, (guint64) (gsize) r);
    }
}

static void
rendezvous (Runner *r, RankState *st, guint32 op_index, const TOp *op)
{
  GroupTable *gt = &r->groups[op->group];
  int g = gt->group_of[st->rank];
  g_assert (g >= 0);
  g_assert (op->seq < (1u << 24));
  guint64 key = ((guint64) op->group << 56) | ((guint64) g << 24) | op->seq;
  Pending *p = g_hash_table_lookup (r->pending, &key);
  if (p == NULL)
    {
      p = pending_new (r);
      p->key = key;
      p->kind = op->group;
      p->group = g;
      p->op = (int) op_index;
      p->stream = op->stream;
      const int *m = gt->members + (gsize) g * gt->size;
      for (int i = 0; i < gt->size; i++)
        p->expected += r->state_of[m[i]] != NULL;
      g_hash_table_insert (r->pending, &p->key, p);
    }
  if (++p->arrived == p->expected)
    {
      g_hash_table_remove (r->pending, &p->key);
      launch_group_op (r, p, op);
    }
}

static void
complete (Runner *r, Pending *p)
{
  gint64 now = sim_engine_now (r->engine);
  r->completing_dur = now - p->launch_ns;
  if (p->kind < 0)
    {
      /* A PP send: the sender's stream moves on; the receiver's slot may start. */
      RankState *rs = NULL;
      if (r->full)
        rs = r->state_of[pp_peer (r, p->sender->rank, p->recv_stage)];
      else
        rs = r->state_of[r->stage_ranks[(gsize) p->recv_stage * r->per_stage]];
      RankState *sender = p->sender;
      int stream = p->stream;
      gint32 recv_op = p->recv_op;
      gint64 dur = r->completing_dur;
      pending_release (r, p);
      if (rs != NULL && recv_op >= 0)
        {
          const Program *prog = &r->progs[rs->stage];
          if (--rs->deps[recv_op] == 0)
            {
              rs->cause_cat = SIM_BD_PP;
              rs->cause_dur = dur;
              sim_gpu_poke (rs->gpu, prog->ops[recv_op].stream);
            }
        }
      r->completing_dur = dur;
      sim_gpu_finish (sender->gpu, stream);
      return;
    }
  GroupTable *gt = &r->groups[p->kind];
  const int *m = gt->members + (gsize) p->group * gt->size;
  int stream = p->stream;
  gint64 dur = r->completing_dur;
  int size = gt->size;
  pending_release (r, p);
  for (int i = 0; i < size; i++)
    if (r->state_of[m[i]] != NULL)
      {
        r->completing_dur = dur;
        sim_gpu_finish (r->state_of[m[i]]->gpu, stream);
      }
}

static gboolean
hook_ready (gpointer user, int gpu, guint32 op)
{
  Runner *r = user;
  return r->state_of[gpu]->deps[op] == 0;
}

static gint64
hook_start (gpointer user, int gpu, guint32 op_index, gboolean overlapped)
{
  Runner *r = user;
  RankState *st = r->state_of[gpu];
  const TOp *op = &r->progs[st->stage].ops[op_index];
  gint64 now = sim_engine_now (r->engine);
  switch ((OpKind) op->kind)
    {
    case K_COMPUTE:
      {
        gint64 gap = now - st->last_compute_end;
        if (gap > 0)
          {
            gint64 exposed = 0;
            /* Waiting on a local collective is exposed communication; waiting on a PP receive is
             * the transfer time, the rest is the other stage's work (bubble). */
            if (st->cause_cat == SIM_BD_PP)
              exposed = MIN (gap, st->cause_dur);
            else if (st->cause_cat != SIM_BD_COMPUTE)
              exposed = gap;
            st->bd[st->cause_cat] += exposed;
            st->bd[SIM_BD_BUBBLE] += gap - exposed;
          }
        st->cause_cat = SIM_BD_COMPUTE;
        st->cause_dur = 0;
        gint64 dur = op->dur_ns;
        if (r->compute_scale && dur > 0)
          dur = (gint64) llround (dur * r->compute_scale (r->compute_scale_user, gpu));
        if (overlapped && op->ub_own_sms)
          {
            overlapped = FALSE;
            for (int k = ST_COMPUTE + 1; k < N_STREAMS && !overlapped; k++)
              overlapped = k != ST_TP && sim_gpu_stream_busy (st->gpu, k);
          }
        gint64 extra = overlapped && dur > 0 ? (gint64) llround (dur * r->slowdown) : 0;
        st->bd[op->cat] += dur;
        st->bd[SIM_BD_SLOWDOWN] += extra;
        st->last_compute_end = now + dur + extra; /* provisional: the op's end */
        return dur + extra;
      }
    case K_COLL:
    case K_RING:
      rendezvous (r, st, op_index, op);
      return -1;
    case K_SEND:
      launch_send (r, st, op);
      return -1;
    }
  return 0;
}

static void
hook_done (gpointer user, int gpu, guint32 op_index, gint64 start_ns)
{
  Runner *r = user;
  RankState *st = r->state_of[gpu];
  const Program *prog = &r->progs[st->stage];
  const TOp *op = &prog->ops[op_index];
  gboolean async = op->kind != K_COMPUTE;
  r->ops_executed++;
  if (r->trace)
    {
      static const char *const stream_names[N_STREAMS] = { "compute", "tp", "cp", "pp-send-fwd", "pp-send-bwd",
                                                           "dp", "ep", "dp-gather" };
      SimRunnerTraceEvent ev = { st->rank, st->stage, op->stream, stream_names[op->stream],
                                 sim_breakdown_name ((SimBreakdown) op->cat), start_ns,
                                 sim_engine_now (r->engine), op->kind == K_COMPUTE ? 0.0 : op->bytes, op->name };
      r->trace (r->trace_user, &ev);
    }
  for (guint32 i = 0; i < op->n_succ; i++)
    {
      guint32 s = prog->succ[op->succ_off + i];
      if (--st->deps[s] == 0)
        {
          if (async)
            {
              st->cause_cat = op->cat;
              st->cause_dur = r->completing_dur;
            }
          sim_gpu_poke (st->gpu, prog->ops[s].stream);
        }
    }
  if ((int) op_index == prog->end_op)
    {
      st->end_ns = sim_engine_now (r->engine);
      st->ended = TRUE;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Groups and symmetry */

static void
group_table_build (GroupTable *gt, const ModelPlan *plan, GroupKind kind)
{
  int n = plan->gpus;
  guint mask = 0;
  gboolean expert = FALSE;
  switch (kind)
    {
    case G_TP: mask = 1u << MODEL_DIM_TP; break;
    case G_CP: mask = 1u << MODEL_DIM_CP; break;
    case G_DPCP: mask = (1u << MODEL_DIM_DP) | (1u << MODEL_DIM_CP); break;
    case G_EP: mask = 1u << MODEL_DIM_EP; expert = TRUE; break;
    case G_EDP: mask = 1u << MODEL_DIM_DP; expert = TRUE; break;
    case G_EMB: mask = 1u << MODEL_DIM_PP; break;
    case G_ETP: mask = 1u << MODEL_DIM_TP; expert = TRUE; break;
    case G_AMAX: mask = (1u << MODEL_DIM_TP) | (1u << MODEL_DIM_CP) | (1u << MODEL_DIM_DP); break;
    case G_COUNT: break;
    }
  g_autofree int *buf = g_new (int, n);
  int size = model_plan_group_ranks (plan, 0, mask, expert, buf);
  if (kind == G_EMB)
    size = plan->pp > 1 ? 2 : 1;
  gt->size = size;
  gt->group_of = g_new (int, n);
  for (int i = 0; i < n; i++)
    gt->group_of[i] = -1;
  GArray *members = g_array_new (FALSE, FALSE, sizeof (int));
  int n_groups = 0;
  for (int rank = 0; rank < n; rank++)
    {
      if (gt->group_of[rank] >= 0)
        continue;
      int k = model_plan_group_ranks (plan, rank, mask, expert, buf);
      if (kind == G_EMB)
        {
          /* Only the first and last stage: buf is ordered by the PP coordinate (one stage: itself;
           * buf may hold a single rank). */
          if (size > 1)
            buf[1] = buf[k - 1];
          k = size;
          int coords[MODEL_DIM_COUNT];
          model_plan_rank_coords (plan, rank, coords);
          if (coords[MODEL_DIM_PP] != 0)
            continue;
        }
      g_assert (k == size);
      for (int i = 0; i < k; i++)
        gt->group_of[buf[i]] = n_groups;
      g_array_append_vals (members, buf, k);
      n_groups++;
    }
  gt->n_groups = n_groups;
  gt->members = (int *) g_array_free (members, FALSE);
  gt->sib_off = g_new0 (int, plan->pp + 1);
  gt->sib = g_new (int, MAX (n_groups, 1));
  int *stage_of_group = g_new (int, MAX (n_groups, 1));
  for (int g = 0; g < n_groups; g++)
    {
      int coords[MODEL_DIM_COUNT];
      model_plan_rank_coords (plan, gt->members[(gsize) g * size], coords);
      stage_of_group[g] = coords[MODEL_DIM_PP];
      gt->sib_off[coords[MODEL_DIM_PP] + 1]++;
    }
  for (int s = 0; s < plan->pp; s++)
    gt->sib_off[s + 1] += gt->sib_off[s];
  g_autofree int *fill = g_new0 (int, plan->pp);
  for (int g = 0; g < n_groups; g++)
    gt->sib[gt->sib_off[stage_of_group[g]] + fill[stage_of_group[g]]++] = g;
  g_free (stage_of_group);
  gt->sib_n = g_new (int, plan->pp);
  for (int s = 0; s < plan->pp; s++)
    gt->sib_n[s] = gt->sib_off[s + 1] - gt->sib_off[s];
}

static void
group_table_clear (GroupTable *gt)
{
  g_free (gt->group_of);
  g_free (gt->members);
  g_free (gt->sib_off);
  g_free (gt->sib);
  g_free (gt->sib_n);
}

/* How a group sits on the NVLink domains: how many it spans and the most members in one. */
static void
group_layout (const SimTopology *topo, const int *members, int n, GHashTable *scratch, int *domains,
              int *per_domain)
{
  g_hash_table_remove_all (scratch);
  *per_domain = 0;
  for (int i = 0; i < n; i++)
    {
      gpointer key = GINT_TO_POINTER (sim_topology_domain_of (topo, members[i]) + 1);
      int c = GPOINTER_TO_INT (g_hash_table_lookup (scratch, key)) + 1;
      g_hash_table_insert (scratch, key, GINT_TO_POINTER (c));
      *per_domain = MAX (*per_domain, c);
    }
  *domains = (int) g_hash_table_size (scratch);
}

/* Representatives launch a collective for the sibling groups of their stage. A group that stays
 * inside one NVLink domain shares no link with the groups of other domains, so only the siblings in
 * the representative's domain are launched: that domain carries its full load, as in --full, and
 * flows leaving it (DP rings, PP sends) meet the same contention there. Groups spanning domains
 * launch every sibling of the stage. */
static void
restrict_siblings (Runner *r)
{
  g_autoptr (GHashTable) scratch = g_hash_table_new (NULL, NULL);
  for (int k = 0; k < G_COUNT; k++)
    {
      GroupTable *gt = &r->groups[k];
      if (k == G_EMB || gt->size <= 1)
        continue;
      for (int s = 0; s < r->plan->pp; s++)
        {
          int rep = r->stage_ranks[(gsize) s * r->per_stage];
          int g = gt->group_of[rep];
          if (g < 0)
            continue;
          int domains, per_domain;
          group_layout (r->topo, gt->members + (gsize) g * gt->size, gt->size, scratch, &domains,
                        &per_domain);
          if (domains != 1)
            continue;
          int dom = sim_topology_domain_of (r->topo, gt->members[(gsize) g * gt->size]);
          int *sib = gt->sib + gt->sib_off[s], n = 0;
          for (int i = 0; i < gt->sib_n[s]; i++)
            if (sim_topology_domain_of (r->topo, gt->members[(gsize) sib[i] * gt->size]) == dom)
              sib[n++] = sib[i];
          gt->sib_n[s] = n;
        }
    }
}

/* All groups of a kind have the same shape on the topology (members, per domain, domains), and PP
 * neighbours are in the same domain for all ranks of a stage or for none. */
static gboolean
placement_symmetric (Runner *r)
{
  g_autoptr (GHashTable) scratch = g_hash_table_new (NULL, NULL);
  for (int k = 0; k < G_COUNT; k++)
    {
      GroupTable *gt = &r->groups[k];
      if (gt->size <= 1)
        continue;
      int d0 = 0, p0 = 0;
      for (int g = 0; g < gt->n_groups; g++)
        {
          int d, pd;
          group_layout (r->topo, gt->members + (gsize) g * gt->size, gt->size, scratch, &d, &pd);
          if (g == 0)
            {
              d0 = d;
              p0 = pd;
            }
          else if (d != d0 || pd != p0)
            return FALSE;
        }
    }
  for (int s = 0; s + 1 < r->plan->pp; s++)
    {
      int same0 = -1;
      for (int i = 0; i < r->per_stage; i++)
        {
          int a = r->stage_ranks[(gsize) s * r->per_stage + i];
          int b = r->stage_ranks[(gsize) (s + 1) * r->per_stage + i];
          int same = sim_topology_domain_of (r->topo, a) == sim_topology_domain_of (r->topo, b);
          if (same0 < 0)
            same0 = same;
          else if (same != same0)
            return FALSE;
        }
    }
  return TRUE;
}

/* ---------------------------------------------------------------------------------------------- */

const char *
sim_breakdown_name (SimBreakdown b)
{
  static const char *names[SIM_BD_COUNT] = { "compute", "tp", "cp", "pp", "dp", "ep", "bubble",
                                             "optimizer", "overlap_slowdown" };
  return b < SIM_BD_COUNT ? names[b] : "?";
}

void
sim_runner_options_init (SimRunnerOptions *options)
{
  memset (options, 0, sizeof *options);
  options->memory_overhead_bytes = -1;
}

gboolean
sim_runner_run (const ModelShape *shape, const ModelPlan *plan, const SimGpuSpec *gpu,
                const SimClusterSpec *cluster, const SimFabricSpec *fabric,
                const SimCollectiveProfile *coll_profile, const SimRunnerOptions *options,
                SimRunnerResult *out, GError **error)
{
  g_return_val_if_fail (shape && plan && gpu && cluster && fabric && coll_profile && out, FALSE);
  SimRunnerOptions opts;
  sim_runner_options_init (&opts);
  if (options)
    opts = *options;
  memset (out, 0, sizeof *out);
  if (!model_plan_validate (plan, shape, error))
    return FALSE;
  int m = model_plan_microbatches (plan);
  if (!model_schedule_check (plan->schedule, plan->pp, plan->vpp, m, error))
    return FALSE;
  if (cluster->gpus != plan->gpus)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "the plan uses %d GPUs but the cluster has %d; set [cluster] gpus or the "
                   "parallel degrees so that they agree", plan->gpus, cluster->gpus);
      return FALSE;
    }
  ModelMemory mem;
  if (!model_memory_check (shape, plan, gpu->hbm_bytes, opts.memory_overhead_bytes, &mem, error))
    return FALSE;
  out->memory_bytes = mem.total_bytes;
  out->memory_stage = mem.pp_rank;
  g_autoptr (SimTopology) topo = sim_topology_new (cluster, fabric, error);
  if (topo == NULL)
    return FALSE;

  LayerCtx c = { shape, plan, gpu };
  c.grad_bytes = model_dtype_bytes (plan->grad_dtype);
  c.param_bytes = model_dtype_bytes (plan->param_dtype);
  c.scratch = model_op_array_new ();
  int dpcp = plan->dp * plan->cp;

  Runner r = { 0 };
  r.plan = plan;
  r.trace = opts.trace;
  r.trace_user = opts.trace_user;
  r.topo = topo;
  r.slowdown = gpu->overlap_slowdown;
  r.progs = g_new0 (Program, plan->pp);
  for (int s = 0; s < plan->pp; s++)
    build_program (&r.progs[s], &c, s, dpcp);
  g_array_free (c.scratch, TRUE);
  /* Resolve PP sends to the entry op of the receiving slot, which gains one dependency. */
  for (int s = 0; s < plan->pp; s++)
    for (int i = 0; i < r.progs[s].n_ops; i++)
      {
        TOp *op = &r.progs[s].ops[i];
        if (op->kind != K_SEND)
          continue;
        int to = op->fwd ? op->vs + 1 : op->vs - 1;
        Program *rp = &r.progs[to % plan->pp];
        op->recv_op = rp->entry[entry_index (plan, m, op->fwd ? MODEL_PASS_FORWARD : MODEL_PASS_BACKWARD,
                                             op->mb, to / plan->pp)];
        rp->ops[op->recv_op].n_deps++;
      }

  r.per_stage = plan->gpus / plan->pp;
  r.stage_ranks = g_new (int, plan->gpus);
  r.stage_index = g_new (int, plan->gpus);
  {
    g_autofree int *fill = g_new0 (int, plan->pp);
    for (int rank = 0; rank < plan->gpus; rank++)
      {
        int coords[MODEL_DIM_COUNT];
        model_plan_rank_coords (plan, rank, coords);
        int s = coords[MODEL_DIM_PP];
        r.stage_index[rank] = fill[s];
        r.stage_ranks[(gsize) s * r.per_stage + fill[s]++] = rank;
      }
  }
  for (int k = 0; k < G_COUNT; k++)
    group_table_build (&r.groups[k], plan, (GroupKind) k);
  r.full = opts.full || opts.compute_scale != NULL || opts.link_scale != NULL;
  r.compute_scale = opts.compute_scale;
  r.compute_scale_user = opts.compute_scale_user;
  if (!r.full && !opts.force_symmetric && !placement_symmetric (&r))
    r.full = TRUE;
  out->symmetric = !r.full;
  if (!r.full)
    restrict_siblings (&r);

  r.engine = sim_engine_new ();
  g_autofree double *caps = g_new (double, sim_topology_n_links (topo));
  sim_collective_link_capacities (topo, coll_profile, caps);
  if (opts.link_scale)
    for (int i = 0; i < sim_topology_n_links (topo); i++)
      caps[i] *= opts.link_scale (opts.link_scale_user, i);
  SimFlowNet *net = sim_flow_net_new (r.engine, caps, sim_topology_n_links (topo));
  r.coll = sim_collective_new (r.engine, net, topo, coll_profile);
  r.net = net;
  r.profile = coll_profile;
  r.pp_links = g_new0 (guint32 *, 2 * plan->pp);
  r.pp_n_links = g_new0 (int, 2 * plan->pp);
  r.pp_latency = g_new0 (gint64, 2 * plan->pp);
  r.pp_weight = g_new0 (double, 2 * plan->pp);
  r.pair_latency[0] = r.pair_latency[1] = -1;
  r.pp_pair_links = g_new0 (guint32 *, 2 * plan->pp);
  r.pp_pair_off = g_new0 (int *, 2 * plan->pp);
  /* Routes chosen up front in a fixed order, so representatives and --full see the same ones. */
  for (int s = 0; plan->pp > 1 && s < plan->pp; s++)
    {
      pp_route_build (&r, s, TRUE, (s + 1) % plan->pp);
      pp_route_build (&r, s, FALSE, (s + plan->pp - 1) % plan->pp);
    }
  r.pending = g_hash_table_new (g_int64_hash, g_int64_equal);
  r.allocated = g_ptr_array_new_with_free_func (g_free);
  r.state_of = g_new0 (RankState *, plan->gpus);
  r.n_states = r.full ? plan->gpus : plan->pp;
  r.states = g_new0 (RankState, r.n_states);
  static const SimGpuHooks hooks = { hook_ready, hook_start, hook_done };
  for (int i = 0; i < r.n_states; i++)
    {
      RankState *st = &r.states[i];
      st->rank = r.full ? i : r.stage_ranks[(gsize) i * r.per_stage];
      int coords[MODEL_DIM_COUNT];
      model_plan_rank_coords (plan, st->rank, coords);
      st->stage = coords[MODEL_DIM_PP];
      const Program *prog = &r.progs[st->stage];
      st->deps = g_new (guint16, prog->n_ops);
      for (int k = 0; k < prog->n_ops; k++)
        st->deps[k] = prog->ops[k].n_deps;
      st->gpu = sim_gpu_new (r.engine, st->rank, N_STREAMS, &hooks, &r);
      for (int s = 0; s < N_STREAMS; s++)
        sim_gpu_set_stream (st->gpu, s, prog->stream_ops[s], prog->stream_n[s]);
      r.state_of[st->rank] = st;
    }
  for (int i = 0; i < r.n_states; i++)
    for (int s = 0; s < N_STREAMS; s++)
      sim_gpu_poke (r.states[i].gpu, s);
  out->events = sim_engine_run (r.engine, -1);

  gboolean ok = r.error == NULL;
  if (!ok)
    g_propagate_prefixed_error (error, r.error, "simulating the step: ");
  RankState *crit = NULL;
  for (int i = 0; ok && i < r.n_states; i++)
    {
      RankState *st = &r.states[i];
      if (!st->ended)
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "simulating the step: rank %d (stage %d) stalled with ops pending; "
                       "this is a bug in the task graph, please report the scenario", st->rank, st->stage);
          ok = FALSE;
          break;
        }
      if (crit == NULL || st->end_ns > crit->end_ns)
        crit = st;
    }
  if (ok)
    {
      out->step_ns = crit->end_ns;
      out->critical_rank = crit->rank;
      out->critical_stage = crit->stage;
      for (int b = 0; b < SIM_BD_COUNT; b++)
        out->breakdown_s[b] = crit->bd[b] / 1e9;
      static const int stream_cat[N_STREAMS] = { -1, SIM_BD_TP, SIM_BD_CP, SIM_BD_PP, SIM_BD_PP,
                                                 SIM_BD_DP, SIM_BD_EP, SIM_BD_DP };
      for (int s = 1; s < N_STREAMS; s++)
        out->comm_busy_s[stream_cat[s]] += sim_gpu_busy_ns (crit->gpu, s) / 1e9;
      out->ranks_simulated = r.n_states;
      out->ops_executed = r.ops_executed;
      gint64 fwd = 0;
      double hw = 0;
      for (int s = 0; s < plan->pp; s++)
        {
          fwd = MAX (fwd, r.progs[s].forward_ns);
          hw += r.progs[s].flops * r.per_stage;
        }
      out->stage_forward_s = fwd / 1e9;
      double step_s = out->step_ns / 1e9;
      out->tokens_per_step = (double) plan->global_batch * shape->seq_len;
      out->tokens_per_s = out->tokens_per_step / step_s;
      out->model_flops_per_step = model_flops_model_per_step (shape, plan);
      out->hardware_flops_per_step = hw;
      out->model_tflops_per_gpu = out->model_flops_per_step / step_s / plan->gpus / 1e12;
      double peak = gpu->peak_flops[plan->matmul_dtype] > 0 ? gpu->peak_flops[plan->matmul_dtype]
                                                           : gpu->peak_flops[MODEL_DTYPE_BF16];
      out->mfu = out->model_flops_per_step / step_s / plan->gpus / peak;
      out->hfu = hw / step_s / plan->gpus / peak;
    }

  for (int i = 0; i < r.n_states; i++)
    {
      sim_gpu_free (r.states[i].gpu);
      g_free (r.states[i].deps);
    }
  g_free (r.states);
  g_free (r.state_of);
  g_hash_table_destroy (r.pending);
  g_ptr_array_free (r.allocated, TRUE);
  sim_collective_free (r.coll);
  for (int i = 0; i < 2 * plan->pp; i++)
    {
      g_free (r.pp_links[i]);
      g_free (r.pp_pair_links[i]);
      g_free (r.pp_pair_off[i]);
    }
  g_free (r.pp_pair_links);
  g_free (r.pp_pair_off);
  g_free (r.route_load);
  g_free (r.stage_index);
  g_free (r.pp_links);
  g_free (r.pp_n_links);
  g_free (r.pp_latency);
  g_free (r.pp_weight);
  if (opts.link_stats && ok)
    {
      int nl = sim_topology_n_links (topo);
      g_autofree double *bytes = g_new (double, nl);
      for (int i = 0; i < nl; i++)
        bytes[i] = sim_flow_net_link_bytes (net, i);
      opts.link_stats (opts.trace_user, topo, bytes, out->step_ns);
    }
  sim_flow_net_free (net);
  sim_engine_free (r.engine);
  for (int k = 0; k < G_COUNT; k++)
    group_table_clear (&r.groups[k]);
  g_free (r.stage_ranks);
  for (int s = 0; s < plan->pp; s++)
    program_clear (&r.progs[s]);
  g_free (r.progs);
  return ok;
}

gboolean
sim_runner_predict (const SimScenario *sc, const SimPredictOptions *options, SimRunnerPrediction *out,
                    GError **error)
{
  g_return_val_if_fail (sc != NULL && options != NULL && out != NULL, FALSE);
  memset (out, 0, sizeof *out);
  const SimScenarioRun *run = sim_scenario_run (sc);
  const ModelShape *shape = sim_scenario_shape (sc);
  const ModelPlan *plan = sim_scenario_plan (sc);
  SimCollectiveProfile prof;
  if (!sim_scenario_check_compute (sc, error) || !sim_scenario_collective_profile (sc, &prof, error))
    return FALSE;
  SimRunnerOptions ro = options->run;
  ro.memory_overhead_bytes = run->memory_overhead_bytes;
  if (!sim_runner_run (shape, plan, sim_scenario_gpu (sc), sim_scenario_cluster (sc),
                       sim_scenario_fabric (sc), &prof, &ro, &out->step, error))
    return FALSE;
  double vm = 1.0 + run->virtualization_overhead;
  out->step_s = out->step.step_ns / 1e9 * vm;
  double tokens_per_step = (double) plan->global_batch * shape->seq_len;
  if (run->steps > 0)
    out->steps = (double) run->steps;
  else if (run->tokens > 0)
    out->steps = ceil (run->tokens / tokens_per_step);
  if (run->eval_interval_seqs > 0 && run->eval_seqs > 0)
    {
      /* MLPerf evaluates every eval_interval_seqs sequences rounded up to whole steps (as the
       * workload report counts them). */
      double interval = ceil ((double) run->eval_interval_seqs / plan->global_batch);
      out->evals = MAX (0.0, floor (out->steps / interval) - run->eval_skip);
      /* Validation runs in global batches (Megatron's evaluate(), NeMo's validation loop with the
       * last batch padded), each a forward-only pipeline pass with its own fill. */
      double passes = ceil ((double) run->eval_seqs / plan->global_batch);
      double m = model_plan_microbatches (plan);
      out->eval_s = passes * (m + (plan->pp - 1.0) / plan->vpp) * out->step.stage_forward_s * vm;
    }
  if (out->steps > 0)
    out->time_to_train_s = run->init_s + out->steps * out->step_s + out->evals * out->eval_s;
  int base_gpus = options->base_gpus > 0 ? options->base_gpus : run->base_gpus;
  gboolean weak = options->base_gpus > 0 ? options->weak : run->weak_scaling;
  if (base_gpus > 0)
    {
      int per_replica = plan->tp * plan->pp * plan->cp;
      if (base_gpus % per_replica != 0)
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "scaling base of %d GPUs is not a multiple of tp·pp·cp = %d; set [scenario] "
                       "base_gpus (or --base-gpus) to whole model replicas", base_gpus, per_replica);
          return FALSE;
        }
      ModelPlan bp = *plan;
      SimClusterSpec bc = *sim_scenario_cluster (sc);
      bp.dp = base_gpus / per_replica;
      bp.gpus = bc.gpus = base_gpus;
      if (weak)
        bp.global_batch = plan->global_batch / plan->dp * bp.dp;
      SimRunnerResult base;
      if (!sim_runner_run (shape, &bp, sim_scenario_gpu (sc), &bc, sim_scenario_fabric (sc), &prof,
                           &ro, &base, error))
        {
          g_prefix_error (error, "simulating the scaling base (%d GPUs): ", base_gpus);
          return FALSE;
        }
      out->base_gpus = base_gpus;
      out->weak = weak;
      out->base_step_s = base.step_ns / 1e9 * vm;
      out->scaling_efficiency = weak
                                    ? out->base_step_s / out->step_s
                                    : out->base_step_s * base_gpus / (out->step_s * plan->gpus);
    }
  return TRUE;
}
