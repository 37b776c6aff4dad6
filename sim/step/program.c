/* The step runner's program builder: per pipeline stage, the ops of every slot of the schedule
 * (model/layer.h's layer ops mapped to compute, collective, ring and send ops), their dependency
 * edges and per-stream issue order, ZeRO-3 gathers and DP gradient buckets. What the streams and
 * ops model is described at the top of runner.c; runner.c executes the programs. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/step/runner-private.h"
#include "model/schedule.h"
#include "model/layer.h"
#include "model/flops.h"
#include "model/memory.h"
#include "model/framework.h"
#include "sim/des/engine.h"
#include "sim/net/flow.h"
#include "sim/net/alphabeta.h"

/* G_AMAX: TP x CP x DP of a stage, Megatron-Core's FP8 amax reduction group; its all-reduce runs on
 * the TP stream, in order with the compute it blocks (TE issues it on the current stream). */
static const guint8 group_cat[G_COUNT] = { SIM_BD_TP, SIM_BD_CP, SIM_BD_DP, SIM_BD_EP, SIM_BD_DP, SIM_BD_DP, SIM_BD_EP,
                                           SIM_BD_DP };
static const guint8 group_stream[G_COUNT] = { ST_TP, ST_CP, ST_DP, ST_EP, ST_DP, ST_DP, ST_EP, ST_TP };

/* ---------------------------------------------------------------------------------------------- */
/* Program builder */

#define MAX_WAITS 64

/* An array the builder appends to, whose storage the program then owns (g_free): a push is a store
 * and a compare, where a GArray append was a call and a memcpy (each op took four). */
typedef struct {
  gpointer v;
  guint len, cap;
} Vec;

static void
vec_init (Vec *a, guint cap, gsize size)
{
  a->cap = MAX (cap, 16);
  a->len = 0;
  a->v = g_malloc (a->cap * size);
}

static G_GNUC_NO_INLINE void
vec_grow (Vec *a, gsize size)
{
  a->cap *= 2;
  a->v = g_realloc (a->v, a->cap * size);
}

#define VEC_AT(a, T, i) (((T *) (a).v)[i])
#define VEC_PUSH(a, T, x) \
  do \
    { \
      if (G_UNLIKELY ((a).len == (a).cap)) \
        vec_grow (&(a), sizeof (T)); \
      VEC_AT (a, T, (a).len++) = (x); \
    } \
  while (0)

typedef struct {
  guint32 from, to;
} Edge;

typedef struct {
  double d[SIM_GPU_N_SENS];
} SensRow;

typedef struct {
  Vec ops;             /* TOp */
  Vec names;           /* const char *, per op */
  Vec edges;           /* Edge */
  Vec streams[N_STREAMS]; /* guint32 */
  int last_compute;
  int waits[MAX_WAITS], n_waits; /* the next compute (or send) depends on these */
  int later[MAX_WAITS], n_later; /* ... and the compute after that on these */
  guint32 seq[G_COUNT];
  gboolean sens;       /* sensitivities: a SensRow per op in sens_rows */
  Vec sens_rows;
  double next_sens[SIM_GPU_N_SENS]; /* of the next op added */
} Builder;

static void
builder_init (Builder *b, const LayerCtx *c)
{
  memset (b, 0, sizeof *b);
  vec_init (&b->ops, c->last_ops, sizeof (TOp));
  vec_init (&b->names, c->last_ops, sizeof (const char *));
  vec_init (&b->edges, c->last_edges, sizeof (Edge));
  for (int i = 0; i < N_STREAMS; i++)
    vec_init (&b->streams[i], c->last_stream[i], sizeof (guint32));
  b->last_compute = -1;
}

static void
edge (Builder *b, int from, int to)
{
  Edge e = { (guint32) from, (guint32) to };
  VEC_PUSH (b->edges, Edge, e);
}

static int
add_op (Builder *b, const TOp *op, const char *name)
{
  int i = (int) b->ops.len;
  VEC_PUSH (b->ops, TOp, *op);
  VEC_PUSH (b->names, const char *, name);
  VEC_AT (b->ops, TOp, i).pos = b->streams[op->stream].len;
  if (b->sens)
    {
      SensRow row;
      memcpy (row.d, b->next_sens, sizeof row.d);
      VEC_PUSH (b->sens_rows, SensRow, row);
      memset (b->next_sens, 0, sizeof b->next_sens);
    }
  VEC_PUSH (b->streams[op->stream], guint32, (guint32) i);
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
compute (Builder *b, const char *name, gint64 dur_ns, guint8 cat)
{
  TOp op = { .kind = K_COMPUTE, .stream = ST_COMPUTE, .cat = cat, .dur_ns = dur_ns };
  int i = add_op (b, &op, name);
  apply_waits (b, i);
  memcpy (b->waits, b->later, sizeof (int) * b->n_later);
  b->n_waits = b->n_later;
  b->n_later = 0;
  b->last_compute = i;
  return i;
}

/* Host time the compute stream waits through (a compute op of no FLOPs that the pending waits
 * hold back): unlike compute(), it leaves the waits meant for the compute op after the next one
 * where they are, so it delays the kernels that follow without changing what they overlap. */
static void
host_gap (Builder *b, const char *name, gint64 dur_ns, guint8 cat)
{
  TOp op = { .kind = K_COMPUTE, .stream = ST_COMPUTE, .cat = cat, .dur_ns = dur_ns };
  int i = add_op (b, &op, name);
  apply_waits (b, i);
  b->last_compute = i;
}

static void
push_wait (int *list, int *n, int op)
{
  g_assert (*n < MAX_WAITS);
  list[(*n)++] = op;
}

/* A collective on `group` depending on the last compute op, which nothing waits for. */
static int
collective_issue (Builder *b, const char *name, GroupKind g, SimCollectiveOp coll, double bytes)
{
  TOp op = { .kind = K_COLL, .stream = group_stream[g], .cat = group_cat[g], .group = g,
             .coll = coll, .bytes = bytes, .seq = b->seq[g]++ };
  int i = add_op (b, &op, name);
  if (b->last_compute >= 0)
    edge (b, b->last_compute, i);
  return i;
}

/* ... and overlapped: it runs beside the next compute op and the one after that waits for it;
 * otherwise the next compute op waits. */
static int
collective (Builder *b, const char *name, GroupKind g, SimCollectiveOp coll, double bytes, gboolean overlapped)
{
  int i = collective_issue (b, name, g, coll, bytes);
  if (overlapped)
    push_wait (b->later, &b->n_later, i);
  else
    push_wait (b->waits, &b->n_waits, i);
  return i;
}

static void
program_from_builder (Program *p, Builder *b, LayerCtx *c)
{
  c->last_ops = b->ops.len;
  c->last_edges = b->edges.len;
  for (int s = 0; s < N_STREAMS; s++)
    c->last_stream[s] = b->streams[s].len;
  p->n_ops = (int) b->ops.len;
  p->ops = b->ops.v;
  p->names = b->names.v;
  p->sens = b->sens ? (double *) b->sens_rows.v : NULL;
  guint n_edges = b->edges.len;
  const Edge *e = b->edges.v;
  for (guint i = 0; i < n_edges; i++)
    {
      p->ops[e[i].from].n_succ++;
      g_assert (p->ops[e[i].to].n_deps < G_MAXUINT16);
      p->ops[e[i].to].n_deps++;
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
      TOp *from = &p->ops[e[i].from];
      p->succ[from->succ_off + from->n_succ++] = e[i].to;
    }
  for (int s = 0; s < N_STREAMS; s++)
    {
      p->stream_n[s] = (int) b->streams[s].len;
      p->stream_ops[s] = b->streams[s].v;
    }
  g_free (b->edges.v);
  for (int i = 0; i < p->n_ops; i++)
    p->ops[i].ext = -1;
}

void
sim_runner_program_seal (Program *p)
{
  /* Repeated edges: only the last tells, as a counter would reach zero there. */
  g_autofree guint32 *mark = g_new (guint32, MAX (p->n_ops, 1));
  for (int i = 0; i < p->n_ops; i++)
    {
      const TOp *o = &p->ops[i];
      guint32 *succ = p->succ + o->succ_off;
      for (guint32 j = 0; j < o->n_succ; j++)
        mark[succ[j]] = j;
      for (guint32 j = 0; j < o->n_succ; j++)
        if (mark[succ[j]] != j)
          succ[j] |= SUCC_QUIET;
    }
  /* The edges into each op (CSR) as (stream, its predecessor's place there + 1). */
  guint32 *in_off = mark;
  in_off[0] = 0;
  for (int i = 0; i + 1 < p->n_ops; i++)
    in_off[i + 1] = in_off[i] + p->ops[i].n_deps;
  guint32 n_in = p->n_ops > 0 ? in_off[p->n_ops - 1] + p->ops[p->n_ops - 1].n_deps : 0;
  g_autofree guint32 *in = g_new (guint32, MAX (n_in, 1));
  for (int i = 0; i < p->n_ops; i++)
    {
      const TOp *o = &p->ops[i];
      g_assert (o->pos < NEED_COUNT);
      guint32 v = ((guint32) o->stream << NEED_SHIFT) | (o->pos + 1);
      for (guint32 j = 0; j < o->n_succ; j++)
        in[in_off[p->succ[o->succ_off + j] & ~SUCC_QUIET]++] = v;
    }
  /* in_off[i] now ends op i's edges from the program (PP receives add n_deps without one). */
  p->need_off = g_new (guint32, (gsize) p->n_ops + 1);
  p->need = g_new (guint32, (gsize) n_in + p->n_ext + 1);
  guint32 n = 0, from = 0;
  for (int i = 0; i < p->n_ops; i++)
    {
      const TOp *o = &p->ops[i];
      guint32 most[N_STREAMS] = { 0 };
      for (guint32 j = from; j < in_off[i]; j++)
        most[in[j] >> NEED_SHIFT] = MAX (most[in[j] >> NEED_SHIFT], in[j] & NEED_COUNT);
      from = in_off[i] + (o->ext >= 0 ? p->ext_init[o->ext] : 0);
      p->need_off[i] = n;
      if (o->ext >= 0)
        p->need[n++] = (NEED_EXT << NEED_SHIFT) | (guint32) o->ext;
      for (int k = 0; k < N_STREAMS; k++)
        if (most[k] > 0)
          p->need[n++] = ((guint32) k << NEED_SHIFT) | most[k];
    }
  p->need_off[p->n_ops] = n;
}

void
sim_runner_program_clear (Program *p)
{
  g_free (p->ops);
  g_free (p->names);
  g_free (p->succ);
  g_free (p->need_off);
  g_free (p->need);
  g_free (p->ext_init);
  g_free (p->entry);
  g_free (p->sens);
  for (int s = 0; s < N_STREAMS; s++)
    g_free (p->stream_ops[s]);
}

/* ---------------------------------------------------------------------------------------------- */
/* Layer ops (model/layer.h) into program ops */

/* The op's duration; with sensitivities on, they go to the next op the builder adds. */
static gint64
kernel_ns (Builder *b, const LayerCtx *c, const ModelOp *op)
{
  if (b->sens)
    return sim_gpu_op_ns_sens (c->gpu, c->plan, op, b->next_sens);
  return sim_gpu_op_ns (c->gpu, c->plan, op);
}

/* A listed op's duration (and sensitivities), worked out at its first emission: a chunk's ops
 * are the same in every micro-batch, and the GPU model is a pure function of op, plan and GPU. */
typedef struct {
  gboolean known;
  gboolean ub_own_sms;         /* sim_gpu_op_ub_own_sms, a string match on the op's name */
  gint64 ns;
  double sens[SIM_GPU_N_SENS];
} OpCost;

static gint64
op_cost_ns (Builder *b, const LayerCtx *c, const ModelOp *op, OpCost *cost)
{
  if (cost == NULL)
    return kernel_ns (b, c, op);
  if (!cost->known)
    {
      cost->ns = kernel_ns (b, c, op);
      cost->ub_own_sms = sim_gpu_op_ub_own_sms (c->plan, op);
      if (b->sens)
        memcpy (cost->sens, b->next_sens, sizeof cost->sens);
      cost->known = TRUE;
    }
  else if (b->sens)
    memcpy (b->next_sens, cost->sens, sizeof cost->sens);
  return cost->ns;
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
emit_comm (Builder *b, const LayerCtx *c, const ModelOp *op, gboolean overlapped)
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
                .seq = b->seq[G_CP]++ };
      t.bytes *= op->group_size - 1;
      int i = add_op (b, &t, op->name);
      if (b->last_compute >= 0)
        edge (b, b->last_compute, i);
      push_wait (overlapped ? b->later : b->waits, overlapped ? &b->n_later : &b->n_waits, i);
      return;
    }
  double bytes = op->comm_bytes;
  if (op->coll == MODEL_COLL_ALL_TO_ALL && op->dim == MODEL_DIM_EP)
    bytes *= c->ep_a2a_scale;
  collective (b, op->name, g, coll, bytes, overlapped);
}

/* Emits the ops of one slot (model_layer_chunk_ops order). TP collectives next to a GEMM run beside
 * it under tp_comm_overlap: an all-gather before the GEMM it feeds, a reduce-scatter/all-reduce
 * after the GEMM it drains (emitted first, overlapped). Calls layer_done(layer) each time the ops of
 * a transformer layer end (for gradient buckets). Returns the compute time emitted. */
typedef void (*LayerHook) (Builder *, const LayerCtx *, int, gpointer);
/* Called with the op list and the index of an op of a transformer layer that opens a use of its
 * parameters (opens_param_use) or is a GEMM. */
typedef void (*UseHook) (Builder *, const LayerCtx *, const ModelOp *, int, gpointer);

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
  return (c->plan->recompute == MODEL_RECOMPUTE_FULL || c->plan->recompute == MODEL_RECOMPUTE_SELECTIVE_OP)
         && o[i - 1].phase == MODEL_PHASE_RECOMPUTE
         && o[i].phase == MODEL_PHASE_BWD;
}

/* Whether slot `sl` runs every op of its chunk's list: the first micro-batch of a step runs without
 * the ops flagged MODEL_OP_LATER_MICROBATCHES, and a zero-bubble split (DualPipe's enable_zb) keeps
 * the weight-gradient GEMMs only (its W slot) or every op but them. */
static gboolean
slot_runs_all (const ModelScheduleSlot *sl)
{
  return !(sl->zb || sl->weight || sl->microbatch == 0);
}

/* Otherwise the ops it runs, copied from the list, and each one's index there. */
static void
slot_ops (const ModelScheduleSlot *sl, const GArray *listed, GArray *ops, GArray *idx)
{
  g_array_set_size (ops, 0);
  g_array_set_size (idx, 0);
  for (guint i = 0; i < listed->len; i++)
    {
      const ModelOp *o = &g_array_index (listed, ModelOp, i);
      if (sl->microbatch == 0 && (o->flags & MODEL_OP_LATER_MICROBATCHES))
        continue;
      if ((sl->zb || sl->weight) && (o->kind == MODEL_OP_GEMM && o->grad == MODEL_GRAD_WEIGHT) != sl->weight)
        continue;
      g_array_append_vals (ops, o, 1);
      g_array_append_val (idx, i);
    }
}

/* A listed chunk's ops, or NULL for a (chunk, pass) no slot ran (GPtrArray frees every entry). */
static void
op_list_free (gpointer ops)
{
  if (ops != NULL)
    g_array_unref (ops);
}

/* Ops [from, to) of the n in `o`; layer ends are seen across range boundaries (the last layer's
 * end only when the range reaches n), so a slot may be emitted in pieces (emit_pair). With `cost`,
 * op i's duration is cost[idx[i]] (idx NULL: cost[i]), worked out on first use. */
static gint64
emit_range (Builder *b, const LayerCtx *c, const ModelOp *o, int n, int from, int to, double *flops,
            LayerHook layer_done, UseHook param_use, gpointer data, const guint32 *idx, OpCost *cost)
{
  gboolean tpo = c->plan->tp_comm_overlap;
  gint64 total = 0;
  for (int i = from; i < to; i++)
    {
      if (layer_done && i > 0 && o[i].layer != o[i - 1].layer && o[i - 1].layer >= 0)
        layer_done (b, c, o[i - 1].layer, data);
      if (param_use && o[i].layer >= 0 && (o[i].kind == MODEL_OP_GEMM || opens_param_use (c, o, i)))
        param_use (b, c, o, i, data);
      if (o[i].kind == MODEL_OP_COMM)
        {
          gboolean ovl = o[i].overlap_next
                         || (tpo && is_plain_tp (&o[i]) && i + 1 < n && o[i + 1].kind == MODEL_OP_GEMM);
          emit_comm (b, c, &o[i], ovl);
          continue;
        }
      if (tpo && o[i].kind == MODEL_OP_GEMM && i + 1 < n && is_plain_tp (&o[i + 1])
          && (o[i + 1].coll == MODEL_COLL_REDUCE_SCATTER || o[i + 1].coll == MODEL_COLL_ALL_REDUCE))
        {
          emit_comm (b, c, &o[i + 1], TRUE);
          OpCost *oc = cost ? &cost[idx ? idx[i] : (guint32) i] : NULL;
          gint64 ns = op_cost_ns (b, c, &o[i], oc);
          int k = compute (b, o[i].name, ns, SIM_BD_COMPUTE);
          VEC_AT (b->ops, TOp, k).ub_own_sms = oc ? oc->ub_own_sms : sim_gpu_op_ub_own_sms (c->plan, &o[i]);
          *flops += o[i].flops;
          total += ns;
          i++;
          continue;
        }
      OpCost *oc = cost ? &cost[idx ? idx[i] : (guint32) i] : NULL;
      gint64 ns = op_cost_ns (b, c, &o[i], oc);
      int k = compute (b, o[i].name, ns, o[i].phase == MODEL_PHASE_OPTIMIZER ? SIM_BD_OPTIMIZER : SIM_BD_COMPUTE);
      VEC_AT (b->ops, TOp, k).ub_own_sms = oc ? oc->ub_own_sms : sim_gpu_op_ub_own_sms (c->plan, &o[i]);
      if (o[i].kind != MODEL_OP_MEMBOUND)
        *flops += o[i].flops;
      total += ns;
    }
  if (layer_done && to == n && n > 0 && o[n - 1].layer >= 0)
    layer_done (b, c, o[n - 1].layer, data);
  return total;
}

static gint64
emit_ops (Builder *b, const LayerCtx *c, const GArray *ops, double *flops,
          LayerHook layer_done, UseHook param_use, gpointer data, const guint32 *idx, OpCost *cost)
{
  int n = (int) ops->len;
  return emit_range (b, c, (const ModelOp *) ops->data, n, 0, n, flops, layer_done, param_use, data, idx, cost);
}

/* ---------------------------------------------------------------------------------------------- */
/* Programs
 *
 * The DP collectives follow the plan's framework (model/framework.c: each framework's choices and
 * their sources): when gradient buckets are reduced (the last micro-batch's backward, every
 * micro-batch's, or after the chunk's last backward), their size, whether they block the compute
 * stream or are waited for at the backward's end, which parameter gathers a use needs, and the
 * parameter all-gather after the optimizer. */

/* An FSDP unit's (ZeRO-3 layer's) parameters between uses. */
typedef struct {
  gboolean seen, unsharded, fwd;
  int slot;          /* the slot of its last use */
} Unit;

typedef struct {
  double pending, per_layer, cap;
  int dpcp;
  gboolean active;
  int *ops, n_ops, max_ops;
  /* ZeRO-3 / FSDP: per-layer parameter all-gathers (bytes of one layer's parameters as gathered).
   * The gather for a use is issued when the use `prefetch` uses earlier starts (depth one: the
   * previous use, as FSDP's backward/forward prefetch of the next unit; DeepSpeed prefetches up to
   * its prefetch bucket; two layers resident at depth one, as model/memory.c budgets), so it
   * overlaps that use's compute. */
  double gather_per_layer;
  int use_start[16];   /* last compute op before each recent use began, by use number mod 16 */
  int n_uses, prefetch;
  gboolean zero3;      /* per-layer gathers (ZeRO-3, FSDP) */
  /* ZeRO-3 blocking fetch (ModelPlan.zero3_blocking): the gather of a use is cut into `pieces`
   * (weight matrices), each issued after all queued compute and before the compute that follows.
   * Each piece's all-gather, and each reduce-scatter of a piece's gradient, is a list collective
   * whose host loop costs `list_ns` per member of the group (list_host). */
  gboolean blocking;
  int pieces;
  int layer_tensors, persistent;  /* all parameter tensors of a layer; those kept gathered */
  double kept_bytes;   /* the layer's last weight matrix, kept from its recompute to its backward */
  double rs_moved;     /* HBM bytes per gradient byte around each reduce-scatter (zero3_reduce_moved) */
  int last_use_layer, last_use_slot;
  gint64 list_ns;
  double stream_bps;   /* HBM rate of the list collectives' buffer copies: hbm_bw · mem_eff */
  /* The blocking fetch per module (zero3_weight_use): a use gathers the matrices of each weight
   * GEMM just before it, and prefetches the next GEMM's beside it while few enough elements are
   * gathered (MODEL_DS_MAX_LIVE_ELEMS). mat: the layer's weight matrices in forward order (elements). */
  gint64 mat[16];
  int n_mat, mat_pos, mat_dir, chunk_layers;
  gboolean use_gathers, use_kept, use_recompute, use_first;
  int use_layer;
  gboolean per_gemm;
  int pending_ag;      /* a prefetched gather not yet waited for (-1: none), of pending_elems */
  gint64 pending_elems;
  /* Distributed optimizer with overlap_param_gather: parameter all-gather buckets of the previous
   * step's update, their chunk and the chunk-local layer whose forward first uses them (-1: the
   * slot's first op); `wait_chunk` >= 0 while the first forward of that chunk is emitted, and
   * `chunk_first_layer` is its first global layer. */
  const int *ag_ops, *ag_chunk, *ag_need;
  int n_ag, wait_chunk, chunk_first_layer;
  /* The framework's schedule: a unit is gathered only when sharded (always_gather: every use, as
   * Megatron-FSDP and DeepSpeed release parameters after each use). */
  const ModelDpSchedule *fw;
  gboolean always_gather, allreduce, fwd, defer;
  int slot, deferred, last_reduce, waited_reduce;
  GArray *units;       /* Unit per global layer */
  Unit unit_emb, unit_head;
} Buckets;

/* Whether a use of unit `u` in the current slot needs its parameters gathered: it is sharded at
 * step start, after a forward with reshard-after-forward `raf`, and after a backward with the
 * framework's reshard-after-backward; a second use in the same slot (the backward after a full
 * recompute) finds it gathered. */
static gboolean
unit_use (Buckets *k, Unit *u, gboolean raf)
{
  if (k->always_gather)
    return TRUE;
  if (u->seen && u->slot != k->slot && u->unsharded)
    u->unsharded = !(u->fwd ? raf : k->fw->reshard_after_backward);
  gboolean need = !u->unsharded;
  u->seen = u->unsharded = TRUE;
  u->slot = k->slot;
  u->fwd = k->fwd;
  return need;
}

static Unit *
layer_unit (Buckets *k, int layer)
{
  if ((guint) layer >= k->units->len)
    g_array_set_size (k->units, (guint) layer + 1);
  return &g_array_index (k->units, Unit, layer);
}

/* The host loops of a list collective of DeepSpeed <= 0.3.16 over `tensors` parameters, which
 * the GPU waits for (the blocking fetch synchronizes the device first). Per parameter, DeepSpeed
 * builds a list of one view per rank in Python (partition_parameters.py _allgather_param,
 * _reduce_scatter_gradient: a narrow() per rank) and PyTorch's list API copies each member
 * separately (ProcessGroupNCCL allgather / reduce_scatter of PyTorch <= 1.8: a flat buffer, then
 * one copy_ per rank out of it or into it; _all_gather_base, PyTorch PR #56315 of April 2021,
 * came to avoid those "auxiliary DtoD mem copies", NVIDIA/apex#1360). A view and a copy per rank
 * are priced as one eager op (eager_op_us, measured as Python in-place ops each launching a
 * kernel): dpcp × eager_op_ns per parameter, a host time that grows with the group. The buffers
 * cost HBM traffic too, `moved` bytes at hbm_bw · mem_eff, serial with the rest (the next
 * parameter's fetch synchronizes the device): a gather zero-fills its flat tensor (_allgather_param's
 * torch.zeros) and PyTorch copies the gathered bytes out of its own flat buffer (3× the bytes); a
 * reduce-scatter copies its inputs into PyTorch's flat buffer (2×). */
static void
list_host (Builder *b, Buckets *k, double tensors, double moved)
{
  if (!k->blocking || k->list_ns <= 0 || tensors <= 0)
    return;
  double ns = tensors * k->dpcp * (double) k->list_ns + (k->stream_bps > 0 ? moved / k->stream_bps * 1e9 : 0);
  host_gap (b, "zero3_list_host", (gint64) llround (ns), SIM_BD_DP);
}

/* The parameter tensors of one transformer layer as DeepSpeed's ZeRO-3 hooks them, in forward
 * order (Megatron's GPT layer: input norm, qkv, attention output, post-attention norm, the two MLP
 * matrices, a bias after each matrix where the model has biases; a Llama-style layer: q, k, v, o,
 * gate, up, down); `matrix` marks the weight matrices. Returns how many. */
typedef struct {
  gint64 numel;
  gboolean matrix;
} Z3Tensor;

static int
zero3_layer_list (const ModelShape *s, const ModelPlan *plan, int pieces, Z3Tensor *t)
{
  gint64 h = s->hidden, hd = s->head_dim > 0 ? s->head_dim : h / MAX (s->heads, 1);
  gint64 q = (gint64) s->heads * hd / plan->tp, kv = (gint64) s->kv_heads * hd / plan->tp;
  gint64 f = (gint64) s->ffn_hidden / plan->tp;
  int norm_tensors = s->norm == MODEL_NORM_LAYERNORM && s->bias ? 2 : 1;
  /* each matrix rows × cols, its bias cols */
  const gint64 r4[4] = { h, q, h, f }, c4[4] = { q + 2 * kv, h, (model_shape_glu (s) ? 2 : 1) * f, h };
  const gint64 r7[7] = { h, h, h, q, h, h, f }, c7[7] = { q, kv, kv, h, f, f, h };
  const gint64 *rows = pieces == 4 ? r4 : r7, *cols = pieces == 4 ? c4 : c7;
  int n = 0, nm = pieces == 4 ? 4 : 7, mlp_first = pieces == 4 ? 2 : 4;
  for (int i = 0; i < nm; i++)
    {
      if (i == 0 || i == mlp_first)
        for (int j = 0; j < norm_tensors; j++)
          t[n++] = (Z3Tensor) { h, FALSE };
      t[n++] = (Z3Tensor) { rows[i] * cols[i], TRUE };
      if (s->bias)
        t[n++] = (Z3Tensor) { cols[i], FALSE };
    }
  return n;
}

/* All the parameter tensors of a layer, and how many stay gathered: stage 3 keeps a parameter of
 * fewer than param_persistence_threshold = 1e5 elements (zero/config.py default; stage3.py
 * persistent_parameters) resident instead of releasing it after each use, and re-gathers all of
 * them once after every optimizer step (stage3.py _post_step -> all_gather of the list, whose
 * _allgather_params copies each parameter out of every rank's partition in a Python loop). */
static void
zero3_layer_tensors (const ModelShape *s, const ModelPlan *plan, int pieces, int *tensors, int *persistent)
{
  Z3Tensor t[32];
  int n = zero3_layer_list (s, plan, pieces, t);
  *tensors = n;
  *persistent = 0;
  for (int i = 0; i < n; i++)
    *persistent += (int) (!t[i].matrix && t[i].numel < 100000);
}

/* Elements of the layer's last weight matrix (its forward's last use of parameters). After the
 * recompute of a layer the next module to need parameters is that matrix's own backward:
 * DeepSpeed's release_sub_module keeps a parameter whose reuse distance (the elements of the
 * modules used in between, PrefetchCoordinator.get_reuse_distance_in_numel) is below
 * stage3_max_reuse_distance (1e9 by default, stage3.py _keep_for_later), and that distance is 0
 * here, so the backward gathers every matrix but this one. The forward's last use is followed by
 * the rest of the model, beyond any reuse distance (the last layer of a model whose head has
 * fewer than 1e9 elements excepted; not modelled). */
static gint64
zero3_last_matrix (const ModelShape *s, const ModelPlan *plan, int pieces)
{
  Z3Tensor t[32];
  int n = zero3_layer_list (s, plan, pieces, t);
  for (int i = n - 1; i >= 0; i--)
    if (t[i].matrix)
      return t[i].numel;
  return 0;
}

/* HBM bytes moved per gradient byte when DeepSpeed <= 0.3.16's stage 3 reduces the gradients of
 * a backward, beyond the list reduce-scatter's own flat-buffer copy (list_host). Its gradient
 * hooks (stage3.py reduce_independent_p_g_buckets_and_remove_grads with contiguous_gradients, which
 * DeepSpeed's ZeRO-3 example config sets (v0.3.13 docs/_tutorials/zero.md); the stage-3 default in v0.3.12-v0.4.0 constants.py is
 * off, whose buffered_reduce_fallback all-reduces flattened buckets with no per-rank list loop and
 * would scale with the GPU count unlike SC21's rows) take the parameters in backward order into a
 * bucket of `bucket` elements
 * (reduce_bucket_size): a parameter larger than the bucket is reduced on its own gradient, any
 * other is copied into the bucket buffer (read and write); a parameter that would overflow the
 * bucket first reduces what is pending (reduce_ipg_grads), and the backward's end reduces the rest
 * (independent_gradient_partition_epilogue). Each reduction divides every tensor of its list by the
 * group size in place (average_tensor: tensor.div_), and that list always holds the whole bucket
 * buffer, however little of it is filled, plus the large gradient if any. Walked over the
 * `layers` transformer layers of a backward (the embedding and head not counted). */
static double
zero3_reduce_moved (const ModelShape *s, const ModelPlan *plan, int pieces, double bucket, int layers)
{
  Z3Tensor t[32];
  int n = zero3_layer_list (s, plan, pieces, t);
  double elems = 0, moved = 0, total = 0;
  gboolean large = FALSE;
  for (int l = 0; l < layers; l++)
    for (int i = n - 1; i >= 0; i--)
      {
        double e = (double) t[i].numel;
        if (elems + e > bucket)
          {
            moved += 2.0 * bucket + (large ? 2.0 * elems : 0);
            elems = 0;
            large = FALSE;
          }
        if (e > bucket)
          large = TRUE;
        else
          moved += 2.0 * e;
        elems += e;
        total += e;
      }
  moved += 2.0 * bucket + (large ? 2.0 * elems : 0); /* the epilogue's reduction of what is pending */
  return total > 0 ? moved / total : 0;
}

/* One parameter all-gather of `bytes` on the gather stream, after its list loops (list_host): behind
 * every compute op queued so far when `synced` (DeepSpeed 0.3 synchronizes the device first), else
 * behind op `ahead` (-1: nothing). Nothing waits for it yet. */
static int
zero3_issue (Builder *b, Buckets *k, double bytes, gboolean synced, int ahead)
{
  list_host (b, k, 1, 3.0 * bytes);
  TOp t = { .kind = K_COLL, .stream = ST_DPAG, .cat = SIM_BD_DP, .group = G_DPCP,
            .coll = SIM_COLLECTIVE_ALLGATHER, .bytes = bytes, .seq = b->seq[G_DPCP]++ };
  int i = add_op (b, &t, "zero3_param_ag");
  int after = synced ? b->last_compute : ahead;
  if (after >= 0)
    edge (b, after, i);
  return i;
}

/* ZeRO-3: all-gather `bytes` of parameters before the next compute op; issued once the previous
 * use of parameters has started. */
static void
zero3_gather (Builder *b, Buckets *k, double bytes, int pieces)
{
  if (bytes <= 0 || k->dpcp <= 1)
    return;
  /* Blocking (DeepSpeed <= 0.3.16, partition_parameters.py _allgather_param): a
   * torch.cuda.synchronize() before each parameter's all_gather, so each of the pieces starts after
   * every queued kernel and the next kernel waits for it; the stream keeps them in order. */
  pieces = k->blocking ? MAX (pieces, 1) : 1;
  int ahead = k->n_uses >= k->prefetch ? k->use_start[(k->n_uses - k->prefetch) % 16] : -1;
  for (int j = 0; j < pieces; j++)
    {
      int i = zero3_issue (b, k, bytes / pieces, k->blocking, ahead);
      push_wait (b->waits, &b->n_waits, i);
    }
  k->use_start[k->n_uses++ % 16] = b->last_compute;
}

/* The matrices of the next weight GEMM of the current use from position `pos` (its group: the
 * matrices whose elements make up the GEMM's weight, e.g. q, k and v for a fused qkv GEMM):
 * returns their elements and how many they are in *count, and moves *pos past them. */
static gint64
zero3_group (const Buckets *k, gint64 weight, int *pos, int *count)
{
  gint64 elems = 0;
  *count = 0;
  while (elems < weight && *pos >= 0 && *pos < k->n_mat)
    {
      elems += k->mat[*pos];
      *pos += k->mat_dir;
      (*count)++;
    }
  return elems;
}

/* The first matrix the next use gathers, when that is a use of a transformer layer of this chunk:
 * after a forward, the next layer's forward; after a recompute, the same layer's backward, whose
 * first matrix the recompute left gathered (zero3_last_matrix), so its second; after a backward,
 * the previous layer's recompute under full recompute, else its backward. 0: none known (the
 * chunk's end: the head, the embedding). */
static gint64
zero3_next_use_matrix (const Buckets *k)
{
  int local = k->use_layer - k->chunk_first_layer;
  if (k->use_recompute)
    return k->n_mat > 1 ? k->mat[k->n_mat - 2] : 0;
  if (k->fwd)
    return local + 1 < k->chunk_layers ? k->mat[0] : 0;
  if (local == 0)
    return 0;
  return k->kept_bytes > 0 ? k->mat[0] : k->mat[k->n_mat - 1];
}

/* DeepSpeed <= 0.3.16's stage 3 fetches per module (stage3.py pre_sub_module_forward_function and
 * its backward twin): fetch_sub_module gathers the module's partitioned parameters and waits
 * (_synchronize_communication: torch.cuda.synchronize), then prefetch_next_sub_modules gathers the
 * next module's on the side stream while this module computes, if nothing is in flight and the
 * gathered elements (total_available_parameter_numel) are under stage3_max_live_parameters (1e9
 * by default, v0.3.13 stage3.py): the next parameter in the module trace that is not gathered,
 * one matrix where matrices exceed the 5e7-element prefetch bucket (several smaller ones would
 * go together; here one). So a model whose matrices stay under 1e9 elements hides each gather
 * behind the previous GEMM, and one whose matrices exceed it (529.6B: 1.26e9 in qkv, 1.68e9 in
 * each MLP matrix) gathers most of them with the GPU idle. Called before the GEMM that first uses
 * a matrix group in a use (the forward GEMM, the backward's input-gradient GEMM); a group is the
 * matrices that make up the GEMM's weight (q, k and v of a fused qkv GEMM). */
static void
zero3_weight_use (Builder *b, Buckets *k, const ModelOp *op, double param_bytes)
{
  if (op->grad == MODEL_GRAD_WEIGHT || op->batch != 1 || !k->use_gathers)
    return;
  int count;
  gint64 elems = zero3_group (k, op->n * op->k, &k->mat_pos, &count);
  if (count == 0)
    return;
  gboolean kept = k->use_first && k->use_kept;
  k->use_first = FALSE;
  if (kept)
    {
      /* Gathered already: nothing fetched, so a prefetch in flight stays in flight. */
      if (k->pending_ag >= 0)
        return;
    }
  else
    {
      gint64 covered = 0;
      if (k->pending_ag >= 0)
        {
          push_wait (b->waits, &b->n_waits, k->pending_ag);
          covered = k->pending_elems <= elems ? k->pending_elems : 0;
          k->pending_ag = -1;
        }
      if (elems > covered)
        zero3_gather (b, k, (double) (elems - covered) * param_bytes, MAX (count - (covered > 0), 1));
    }
  if ((double) elems >= MODEL_DS_MAX_LIVE_ELEMS)
    return;
  gint64 next = k->mat_pos >= 0 && k->mat_pos < k->n_mat ? k->mat[k->mat_pos] : zero3_next_use_matrix (k);
  if (next <= 0)
    return;
  /* The host builds the next gather's lists (after the fetch's synchronize), then this GEMM runs
   * beside that gather; the GEMM that needs it waits for it. */
  k->pending_ag = zero3_issue (b, k, (double) next * param_bytes, TRUE, -1);
  k->pending_elems = next;
}

static void
param_use (Builder *b, const LayerCtx *c, const ModelOp *o, int oi, gpointer data)
{
  Buckets *k = data;
  int layer = o[oi].layer;
  if (!opens_param_use (c, o, oi))
    {
      if (k->zero3 && k->per_gemm && o[oi].kind == MODEL_OP_GEMM)
        zero3_weight_use (b, k, &o[oi], c->param_bytes);
      return;
    }
  if (k->zero3)
    {
      /* The backward use right after the same layer's recompute finds its last matrix kept
       * (zero3_last_matrix). */
      gboolean after_recompute = !k->fwd && k->last_use_slot == k->slot && k->last_use_layer == layer;
      k->last_use_slot = k->slot;
      k->last_use_layer = layer;
      gboolean need = unit_use (k, layer_unit (k, layer), k->fw->reshard_after_forward);
      if (k->per_gemm)
        {
          k->use_gathers = need;
          k->use_kept = after_recompute && k->kept_bytes > 0;
          k->use_recompute = o[oi].phase == MODEL_PHASE_RECOMPUTE;
          k->use_first = TRUE;
          k->use_layer = layer;
          gboolean forward = o[oi].phase != MODEL_PHASE_BWD;
          k->mat_dir = forward ? 1 : -1;
          k->mat_pos = forward ? 0 : k->n_mat - 1;
          if (o[oi].kind == MODEL_OP_GEMM)
            zero3_weight_use (b, k, &o[oi], c->param_bytes);
        }
      else if (need)
        {
          double kept = after_recompute ? k->kept_bytes : 0;
          zero3_gather (b, k, k->gather_per_layer - kept, k->pieces - (kept > 0));
        }
      else
        k->use_start[k->n_uses++ % 16] = b->last_compute; /* a use all the same, for the prefetch */
    }
  if (k->wait_chunk >= 0)
    for (int j = 0; j < k->n_ag; j++)
      if (k->ag_chunk[j] == k->wait_chunk && k->ag_need[j] == layer - k->chunk_first_layer)
        push_wait (b->waits, &b->n_waits, k->ag_ops[j]);
}

static void bucket_layer_done (Builder *b, const LayerCtx *c, int layer, gpointer data);

/* One slot of the schedule being emitted: its ops and the bucket state it runs under. */
typedef struct {
  ModelScheduleSlot sl;
  int slot, vs, wait_chunk, slot_reduces;
  gboolean fwd, active;
  GArray *ops;         /* ModelOp */
  GArray *idx;         /* guint32: each op's index in its chunk's listed ops, unless `whole` */
  gboolean whole;      /* ops is the listed array itself (nothing filtered out) */
  OpCost *cost;        /* the listed ops' costs */
  gint64 ns;           /* compute emitted */
} SlotRun;

/* Each of its ops' index in the chunk's list (NULL: the list itself). */
static const guint32 *
slot_idx (const SlotRun *r)
{
  return r->whole ? NULL : (const guint32 *) (void *) r->idx->data;
}

static void
slot_enter (Buckets *k, const SlotRun *r, const ModelPlan *plan, const ModelShape *s, int stage)
{
  k->active = r->active;
  k->defer = k->fw->reduce == MODEL_DP_REDUCE_AFTER_BWD;
  k->slot = r->slot;
  k->fwd = r->fwd;
  k->wait_chunk = r->wait_chunk;
  k->chunk_layers = model_plan_chunk_layers (plan, s, stage, r->sl.chunk, &k->chunk_first_layer);
}

/* What the compute stream of one slot of a pair waits for (Builder.waits / later). */
typedef struct {
  int waits[MAX_WAITS], n_waits, later[MAX_WAITS], n_later;
} WaitCtx;

static void
wait_swap (Builder *b, WaitCtx *save, const WaitCtx *load)
{
  memcpy (save->waits, b->waits, sizeof (int) * b->n_waits);
  save->n_waits = b->n_waits;
  memcpy (save->later, b->later, sizeof (int) * b->n_later);
  save->n_later = b->n_later;
  memcpy (b->waits, load->waits, sizeof (int) * load->n_waits);
  b->n_waits = load->n_waits;
  memcpy (b->later, load->later, sizeof (int) * load->n_later);
  b->n_later = load->n_later;
}

/* Segment starts of a slot's ops: a segment ends after each expert-parallel all-to-all. */
static int
a2a_segments (const GArray *ops, int *starts)
{
  int n = 0;
  const ModelOp *o = (const ModelOp *) ops->data;
  if (starts)
    starts[n] = 0;
  n++;
  for (guint i = 0; i + 1 < ops->len; i++)
    if (o[i].kind == MODEL_OP_COMM && o[i].dim == MODEL_DIM_EP)
      {
        if (starts)
          starts[n] = (int) i + 1;
        n++;
      }
  if (starts)
    starts[n] = (int) ops->len;
  return n;
}

/* DualPipe's overlapped forward-backward pair (DeepSeek-V3 §3.2.1, Figure 4): the two slots'
 * kernels share the compute stream, taken in turns of one segment each (the work between two
 * all-to-alls), so that each all-to-all runs while the other slot computes; each slot's compute
 * still waits for its own all-to-all before going on. The kernels run one at a time (no SMs are
 * set aside for communication beyond the profile's overlap slowdown, as everywhere). */
static void
emit_pair (Builder *b, const LayerCtx *c, SlotRun *run, Buckets *k, const ModelPlan *plan, const ModelShape *s,
           int stage, double *flops, gboolean zero3)
{
  int nseg[2];
  int *starts[2];
  WaitCtx ctx[2] = { 0 }, held;
  for (int j = 0; j < 2; j++)
    {
      nseg[j] = a2a_segments (run[j].ops, NULL);
      starts[j] = g_new (int, nseg[j] + 1);
      a2a_segments (run[j].ops, starts[j]);
    }
  /* The first slot goes on from what the stream waits for now; the second starts clean. */
  wait_swap (b, &ctx[0], &ctx[1]);
  for (int seg = 0; seg < MAX (nseg[0], nseg[1]); seg++)
    for (int j = 0; j < 2; j++)
      {
        if (seg >= nseg[j])
          continue;
        wait_swap (b, &held, &ctx[j]);
        slot_enter (k, &run[j], plan, s, stage);
        const GArray *ops = run[j].ops;
        run[j].ns += emit_range (b, c, (const ModelOp *) ops->data, (int) ops->len, starts[j][seg],
                                 starts[j][seg + 1], flops, bucket_layer_done,
                                 zero3 || run[j].wait_chunk >= 0 ? param_use : NULL, k,
                                 slot_idx (&run[j]), run[j].cost);
        wait_swap (b, &ctx[j], &held);
      }
  /* What follows the pair waits for whatever either slot left outstanding. */
  b->n_waits = b->n_later = 0;
  for (int j = 0; j < 2; j++)
    {
      for (int i = 0; i < ctx[j].n_waits; i++)
        push_wait (b->waits, &b->n_waits, ctx[j].waits[i]);
      for (int i = 0; i < ctx[j].n_later; i++)
        push_wait (b->waits, &b->n_waits, ctx[j].later[i]);
    }
  g_free (starts[0]);
  g_free (starts[1]);
}

/* DP gradient bucket: launched when `pending` bytes reach the bucket size (or flushed). */
static void
bucket_flush (Builder *b, const LayerCtx *c, Buckets *k, gboolean flush)
{
  if (k->pending <= 0 || k->dpcp <= 1 || (!flush && k->pending < k->cap))
    return;
  g_assert (k->n_ops < k->max_ops);
  SimCollectiveOp op = k->allreduce ? SIM_COLLECTIVE_ALLREDUCE : SIM_COLLECTIVE_REDUCE_SCATTER;
  /* One reduce-scatter per parameter of the bucket (partition_parameters.py
   * _reduce_scatter_gradients): every parameter tensor of a layer, the persistent ones included
   * (stage3.py hooks every parameter that requires a gradient). */
  list_host (b, k, k->per_layer > 0 ? k->layer_tensors * k->pending / k->per_layer : 0,
             (2.0 + k->rs_moved) * k->pending);
  TOp t = { .kind = K_COLL, .stream = ST_DP, .cat = SIM_BD_DP, .group = G_DPCP, .coll = op,
            .bytes = k->pending, .seq = b->seq[G_DPCP]++ };
  int i = add_op (b, &t, op == SIM_COLLECTIVE_ALLREDUCE ? "dp_grad_ar" : "dp_grad_rs");
  if (b->last_compute >= 0)
    edge (b, b->last_compute, i);
  if (k->blocking || (k->fw->reduce_blocking && k->fw->reduce_overlap))
    push_wait (b->waits, &b->n_waits, i); /* reduced on the compute stream (overlap_comm off) */
  if (k->fw->reduce_one_in_flight && k->last_reduce >= 0)
    {
      /* FSDP2: the compute stream waits for the previous reduction before issuing this one; a
       * wait not yet taken by a kernel is superseded (the DP stream runs them in order). */
      if (b->n_waits > 0 && b->waits[b->n_waits - 1] == k->waited_reduce)
        b->waits[b->n_waits - 1] = k->last_reduce;
      else
        push_wait (b->waits, &b->n_waits, k->last_reduce);
      k->waited_reduce = k->last_reduce;
    }
  k->last_reduce = i;
  k->ops[k->n_ops++] = i;
  k->pending = 0;
}

static void
bucket_layer_done (Builder *b, const LayerCtx *c, int layer, gpointer data)
{
  Buckets *k = data;
  if (!k->active)
    return;
  if (k->defer)
    {
      k->deferred++; /* reduced after the chunk's last backward (the slot loop) */
      return;
    }
  k->pending += k->per_layer;
  bucket_flush (b, c, k, FALSE);
}

/* The embedding / LM head gradients of the chunk join the last bucket, which is flushed. */
static void
bucket_extras (Builder *b, const LayerCtx *c, Buckets *k, int stage, int chunk, double first_extra,
               double last_extra)
{
  if (model_plan_chunk_has_embedding (c->plan, stage, chunk))
    k->pending += first_extra * c->grad_bytes;
  if (model_plan_chunk_has_loss (c->plan, stage, chunk))
    k->pending += last_extra * c->grad_bytes;
  bucket_flush (b, c, k, TRUE);
}

void
sim_runner_build_program (Program *p, LayerCtx *c, int stage, int dpcp)
{
  const ModelPlan *plan = c->plan;
  const ModelShape *s = c->shape;
  int pp = plan->pp, v = plan->vpp, m = model_plan_microbatches (plan);
  g_autofree ModelScheduleSlot *slots = g_new (ModelScheduleSlot, model_schedule_n_slots (plan->schedule, pp, v, m));
  int n_slots = model_schedule_fill_grouped (plan->schedule, pp, v, m, plan->mb_group, stage, slots);
  Builder bb, *b = &bb;
  builder_init (b, c);
  if (c->sens)
    {
      b->sens = TRUE;
      vec_init (&b->sens_rows, c->last_ops, sizeof (SensRow));
    }
  p->entry = g_new (gint32, 2 * m * v);
  gint64 h = s->hidden;
  /* Gradient bytes: the stage's parameters (model/layer.h) less the embedding / LM head shards,
   * spread evenly over its layers; the shards join the bucket of their chunk. */
  ModelRankParams rp;
  model_layer_rank_params (s, plan, stage, &rp);
  double emb = (double) (model_shape_padded_vocab (s, plan->tp) / plan->tp) * h;
  /* The stage's chunks holding the embedding / the LM head (DualPipe's ends hold one of each). */
  gboolean has_emb = FALSE, has_head = FALSE;
  for (int ch = 0; ch < v; ch++)
    {
      has_emb |= model_plan_chunk_has_embedding (plan, stage, ch);
      has_head |= model_plan_chunk_has_loss (plan, stage, ch);
    }
  double first_extra = has_emb ? emb + (s->position == MODEL_POS_LEARNED ? (double) s->max_positions * h : 0) : 0;
  double last_extra = has_head && (!s->tied_embeddings || pp > 1) ? emb : 0;
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
  /* The framework's DP schedule (model/framework.c). Megatron (the default): gradients reduced in
   * the last micro-batch's backward only. Sharded gradients (ZeRO-2 outside Megatron's distributed
   * optimizer, ZeRO-3, FSDP) make every micro-batch's backward reduce-scatter its gradients
   * (DeepSpeed's partitioned gradients, FSDP's post-backward reduce-scatter), not only the last
   * one's. Per-layer schedules (ZeRO-3, FSDP) reduce each layer as its backward ends (one FSDP unit
   * per transformer layer) and gather parameters per layer (zero3_gather); the optimizer updates
   * the shard that is the only copy, so there is no step-end gather. Per micro-batch and layer,
   * with full recompute, Megatron's and DeepSpeed's ZeRO-3 move 3 gathers (forward, recompute,
   * backward) + 1 reduce-scatter of the layer's parameters; FSDP's recompute reuses the backward's
   * gather. */
  ModelDpSchedule fw;
  model_framework_dp_schedule (plan, &fw);
  gboolean zero3 = fw.gathers && dpcp > 1;
  gboolean per_mb = fw.reduce == MODEL_DP_REDUCE_EVERY_MB;
  if (fw.bucket == MODEL_DP_BUCKET_LAYER && dpcp > 1)
    cap = per_layer * c->grad_bytes;
  else if (fw.bucket == MODEL_DP_BUCKET_ELEMS)
    cap = fw.bucket_elems * c->grad_bytes;
  else if (fw.bucket == MODEL_DP_BUCKET_BYTES)
    cap = fw.bucket_bytes;
  if (fw.param_ag_elems > 0)
    ag_cap = fw.param_ag_elems * c->param_bytes;
  Buckets k = { 0, per_layer * c->grad_bytes, cap, dpcp, FALSE, NULL, 0, 0, per_layer * c->param_bytes };
  k.max_ops = ((int) ceil (all * c->grad_bytes / MAX (cap, 1.0)) + 2 * v + 4) * (per_mb ? m : 1)
              + (zero3 ? (rank_layers + 2 * v) * m : 0);
  k.ops = g_new (int, k.max_ops);
  k.fw = &fw;
  k.allreduce = fw.reduce_allreduce;
  k.last_reduce = k.waited_reduce = -1;
  /* Prefetch depth: DeepSpeed fetches up to its prefetch bucket ahead, at least the next layer. */
  k.prefetch = fw.prefetch_elems > 0 && per_layer > 0 ? (int) CLAMP (floor (fw.prefetch_elems / per_layer), 1, 16) : 1;
  k.always_gather = fw.reshard_after_forward && fw.reshard_after_backward && fw.recompute_gathers
                    && fw.head_reshard_after_forward && fw.embedding_reshard_after_forward;
  k.units = g_array_new (FALSE, TRUE, sizeof (Unit));
  gboolean emb_raf = s->tied_embeddings ? fw.head_reshard_after_forward : fw.embedding_reshard_after_forward;
  int max_ag = (int) ceil (all * c->param_bytes / MAX (ag_cap, 1.0)) + 2 * v + 4;
  g_autofree int *ag_ops = g_new (int, max_ag);
  g_autofree int *ag_chunk = g_new (int, max_ag);
  g_autofree int *ag_need = g_new (int, max_ag);
  int n_ag = 0;
  gboolean distopt = fw.param_ag != MODEL_DP_PARAM_AG_NONE && dpcp > 1;
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
  if (distopt && fw.param_ag == MODEL_DP_PARAM_AG_OVERLAP)
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
                      .coll = SIM_COLLECTIVE_ALLGATHER, .bytes = chunk_bytes, .seq = b->seq[G_DPCP]++ };
            ag_chunk[n_ag] = ch;
            /* -1: the slot's first op (embedding) needs it; else the chunk-local layer holding
             * the bucket's first byte (the head's bytes count with the last layer). */
            ag_need[n_ag] = offset < lead || layer_bytes <= 0 || ch_layers == 0
                              ? -1
                              : MIN ((int) ((offset - lead) / layer_bytes), ch_layers - 1);
            ag_ops[n_ag++] = add_op (b, &t, "dp_param_ag");
            bytes -= chunk_bytes;
            offset += chunk_bytes;
          }
      }
  k.zero3 = zero3;
  /* DeepSpeed 0.3 gathers per parameter; its stage3 persistence threshold (1e5 elements) keeps
   * biases and norms resident, leaving the weight matrices: 4 in a GPT layer (qkv, dense,
   * dense_h_to_4h, dense_4h_to_h), 7 in a Llama-style one (q, k, v, o, gate, up, down). */
  k.blocking = zero3 && plan->zero >= 3 && plan->zero3_blocking;
  k.pieces = model_shape_glu (s) ? 7 : 4;
  zero3_layer_tensors (s, plan, k.pieces, &k.layer_tensors, &k.persistent);
  k.last_use_layer = k.last_use_slot = -1;
  /* DeepSpeed's reuse-distance release, for its stage 3 (the blocking fetch of <= 0.3.16 and the
   * framework's own); full recompute only: without it a layer's backward follows the rest of the
   * model. */
  if (zero3 && (k.blocking || (plan->framework == MODEL_FW_DEEPSPEED && plan->zero >= 3))
      && plan->recompute == MODEL_RECOMPUTE_FULL)
    k.kept_bytes = (double) zero3_last_matrix (s, plan, k.pieces) * c->param_bytes;
  if (k.blocking)
    k.rs_moved = zero3_reduce_moved (s, plan, k.pieces, MODEL_DS_BUCKET_ELEMS, rank_layers);
  /* DeepSpeed 0.3's fetch per module: the weight matrices of a layer in forward order. */
  k.pending_ag = -1;
  k.per_gemm = k.blocking && s->moe_experts == 0; /* MoE (which DeepSpeed 0.3 did not run): per layer */
  if (k.blocking)
    {
      Z3Tensor t[32];
      int n = zero3_layer_list (s, plan, k.pieces, t);
      for (int i = 0; i < n && k.n_mat < (int) G_N_ELEMENTS (k.mat); i++)
        if (t[i].matrix)
          k.mat[k.n_mat++] = t[i].numel;
    }
  k.list_ns = c->gpu->eager_op_ns;
  k.stream_bps = c->gpu->hbm_bw_bytes_per_s * c->gpu->mem_eff;
  k.ag_ops = ag_ops;
  k.ag_chunk = ag_chunk;
  k.ag_need = ag_need;
  k.n_ag = n_ag;
  k.wait_chunk = -1;

  /* Micro-batches per chunk (DualPipe: m/2 down each copy of the pipeline). */
  int mc = plan->schedule == MODEL_SCHED_DUALPIPE ? m / 2 : m;
  g_autoptr (GArray) pair_ops = g_array_new (FALSE, FALSE, sizeof (ModelOp));
  g_autoptr (GArray) idx0 = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) idx1 = g_array_new (FALSE, FALSE, sizeof (guint32));
  /* A chunk's ops per pass are the same in every micro-batch: listed once (model_layer_chunk_ops),
   * their costs worked out once; a slot that drops some of them (the first micro-batch's, a
   * zero-bubble split) emits a filtered copy, every other slot the list itself. */
  g_autoptr (GPtrArray) chunk_ops = g_ptr_array_new_with_free_func (op_list_free);
  g_ptr_array_set_size (chunk_ops, 2 * v);
  g_autoptr (GPtrArray) chunk_cost = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_set_size (chunk_cost, 2 * v);
  for (int i = 0; i < n_slots; i++)
    {
      /* One slot, or DualPipe's overlapped forward-backward pair (emit_pair). */
      int np = slots[i].overlap_next && i + 1 < n_slots ? 2 : 1;
      SlotRun run[2];
      for (int j = 0; j < np; j++)
        {
          SlotRun *r = &run[j];
          ModelScheduleSlot sl = slots[i + j];
          int to_stage, to_chunk;
          r->sl = sl;
          r->slot = i + j;
          r->fwd = sl.pass == MODEL_PASS_FORWARD;
          r->vs = sl.chunk * pp + stage;
          r->ops = j == 0 ? c->scratch : pair_ops;
          r->idx = j == 0 ? idx0 : idx1;
          r->ns = 0;
          if (!sl.weight)
            {
              int entry = compute (b, "slot_entry", 0, SIM_BD_COMPUTE);
              p->entry[entry_index (plan, m, sl.pass, sl.microbatch, sl.chunk)] = entry;
              if (r->fwd && sl.microbatch == 0)
                for (int a = 0; a < n_ag; a++)
                  if (ag_chunk[a] == sl.chunk && ag_need[a] < 0)
                    edge (b, ag_ops[a], entry);
            }
          /* Whether it receives from a stage before it: where its backward (forward) would send. A W
           * slot receives nothing. */
          gboolean received = !sl.weight
                              && model_schedule_next (plan->schedule, pp, v, stage, sl.chunk,
                                                      r->fwd ? MODEL_PASS_BACKWARD : MODEL_PASS_FORWARD,
                                                      &to_stage, &to_chunk);
          if (pp_split && !plan->sp && received)
            /* The received 1/tp of the activation (gradient) is all-gathered over TP before use
             * (Megatron's gather_split_1d_tensor after the receive). */
            collective (b, r->fwd ? "pp_recv_ag" : "pp_recv_grad_ag", G_TP, SIM_COLLECTIVE_ALLGATHER, act_bytes, FALSE);
          r->wait_chunk = r->fwd && sl.microbatch == 0 && n_ag > 0 ? sl.chunk : -1;
          GArray **listed = (GArray **) &chunk_ops->pdata[2 * sl.chunk + (r->fwd ? 0 : 1)];
          OpCost **cost = (OpCost **) &chunk_cost->pdata[2 * sl.chunk + (r->fwd ? 0 : 1)];
          if (*listed == NULL)
            {
              *listed = g_array_new (FALSE, FALSE, sizeof (ModelOp));
              model_layer_chunk_ops (s, plan, stage, sl.chunk, sl.pass, *listed);
              *cost = g_new0 (OpCost, MAX ((*listed)->len, 1));
            }
          r->cost = *cost;
          r->whole = slot_runs_all (&sl);
          if (r->whole)
            r->ops = *listed; /* read, never changed, while the slot is emitted */
          else
            slot_ops (&sl, *listed, r->ops, r->idx);
          /* The chunk's last backward produces its gradients: bucket them as layers finish (sharded
           * gradients: every backward; see above), or after it (FSDP2 under pipelining); under the
           * zero-bubble split, as its W slot's layers finish. */
          r->active = !r->fwd && !sl.zb && (per_mb || sl.microbatch == mc - 1);
          r->slot_reduces = k.n_ops;
          slot_enter (&k, r, plan, s, stage);
          if (zero3)
            {
              /* The embedding / LM head shards this chunk uses, gathered before the slot (when sharded). */
              double extra = (model_plan_chunk_has_embedding (plan, stage, sl.chunk) && first_extra > 0
                                      && unit_use (&k, &k.unit_emb, emb_raf)
                                  ? first_extra
                                  : 0)
                             + (model_plan_chunk_has_loss (plan, stage, sl.chunk) && last_extra > 0
                                        && unit_use (&k, &k.unit_head, fw.head_reshard_after_forward)
                                    ? last_extra
                                    : 0);
              zero3_gather (b, &k, extra * c->param_bytes, k.pieces);
            }
        }
      if (np == 1)
        run[0].ns = emit_ops (b, c, run[0].ops, &flops, bucket_layer_done,
                              zero3 || run[0].wait_chunk >= 0 ? param_use : NULL, &k,
                              slot_idx (&run[0]), run[0].cost);
      else
        emit_pair (b, c, run, &k, plan, s, stage, &flops, zero3);
      k.wait_chunk = -1;
      for (int j = 0; j < np; j++)
        {
          SlotRun *r = &run[j];
          ModelScheduleSlot sl = r->sl;
          gboolean fwd = r->fwd;
          slot_enter (&k, r, plan, s, stage);
          k.wait_chunk = -1;
          if (amax && !sl.weight)
            {
              /* FP8 delayed scaling (TE DelayedScaling, reduce_amax): leaving the chunk's fp8_autocast
               * (Megatron-Core's TransformerBlock.forward) all-reduces the forward amaxes, 3 per FP8 GEMM
               * (input, weight, output); the chunk's backward reduces 2 per GEMM (gradients), both
               * blocking the compute stream (NVTE_ASYNC_AMAX_REDUCTION off by default). Async, TE waits
               * for the handle only at the next scale update, by which time a latency-bound all-reduce
               * has long finished: nothing waits for it here. */
              int gemms = 0;
              for (guint o = 0; o < r->ops->len; o++)
                {
                  const ModelOp *op = &g_array_index (r->ops, ModelOp, o);
                  gemms += op->kind == MODEL_OP_GEMM && op->dtype == MODEL_DTYPE_FP8
                           && (fwd ? op->phase == MODEL_PHASE_FWD : op->grad == MODEL_GRAD_INPUT);
                }
              if (gemms > 0)
                {
                  double amax_bytes = (fwd ? 3.0 : 2.0) * 4.0 * gemms;
                  if (plan->fp8_amax_async)
                    collective_issue (b, "fp8_amax_ar", G_AMAX, SIM_COLLECTIVE_ALLREDUCE, amax_bytes);
                  else
                    {
                      collective (b, "fp8_amax_ar", G_AMAX, SIM_COLLECTIVE_ALLREDUCE, amax_bytes, FALSE);
                      compute (b, "fp8_amax_wait", 0, SIM_BD_COMPUTE);
                    }
                }
            }
          if (fwd && sl.microbatch == 0)
            fwd_ns += r->ns;
          if (k.active && !k.defer)
            bucket_extras (b, c, &k, stage, sl.chunk, first_extra, last_extra);
          int to_stage, to_chunk;
          if (!sl.weight && model_schedule_next (plan->schedule, pp, v, stage, sl.chunk, sl.pass, &to_stage, &to_chunk))
            {
              /* Activations (gradients) of [s/cp, b, h] to the next (previous) stage, 1/tp of them under
               * SP or scatter/gather. */
              TOp t = { .kind = K_SEND, .stream = fwd ? ST_SEND_F : ST_SEND_B, .cat = SIM_BD_PP,
                        .fwd = fwd, .mb = (guint16) sl.microbatch, .vs = (guint16) r->vs,
                        .bytes = act_bytes / (pp_split ? plan->tp : 1), .recv_op = -1 };
              int o = add_op (b, &t, fwd ? "pp_send_act" : "pp_send_grad");
              edge (b, b->last_compute, o);
              apply_waits (b, o);
              if (plan->pp_blocking)
                push_wait (b->waits, &b->n_waits, o); /* the next kernel starts once it is delivered */
            }
          if (k.active && k.defer)
            {
              /* Pipelined FSDP2: each layer of the chunk reduce-scattered now, after its last backward
               * (and after the gradient send, which the schedule issues first). */
              for (; k.deferred > 0; k.deferred--)
                {
                  k.pending += k.per_layer;
                  bucket_flush (b, c, &k, FALSE);
                }
              bucket_extras (b, c, &k, stage, sl.chunk, first_extra, last_extra);
            }
          if (k.active && fw.reduce_wait && k.n_ops > r->slot_reduces)
            /* The backward ends waiting for its reductions (one DP stream: the last one done is all). */
            push_wait (b->waits, &b->n_waits, k.ops[k.n_ops - 1]);
        }
      i += np - 1;
    }
  p->forward_ns = fwd_ns;

  /* Gradient sync done (without overlap, e.g. Megatron without dp_overlap: only issued now), then
   * the optimizer. */
  int last_bwd = b->last_compute;
  int synced = compute (b, "grads_synced", 0, SIM_BD_OPTIMIZER);
  for (int i = 0; i < k.n_ops; i++)
    {
      /* Not under the blocking fetch: its reductions ran on the compute stream, which waited for
       * each (Megatron's dp_overlap has no say in DeepSpeed); deferring them would be a cycle. */
      if (!fw.reduce_overlap && !k.blocking)
        edge (b, last_bwd, k.ops[i]);
      edge (b, k.ops[i], synced);
    }
  if (s->tied_embeddings && pp > 1 && (stage == 0 || stage == pp - 1))
    /* The word-embedding gradient of the first and last stage (the tied copy) is all-reduced
     * before the optimizer (Megatron's _allreduce_word_embedding_grads). */
    collective (b, "embedding_grad_ar", G_EMB, SIM_COLLECTIVE_ALLREDUCE, emb * c->grad_bytes, FALSE);
  g_array_set_size (c->scratch, 0);
  model_layer_optimizer_ops (s, plan, stage, c->scratch);
  emit_ops (b, c, c->scratch, &flops, NULL, NULL, NULL, NULL, NULL);
  /* DeepSpeed <= 0.3.16's ZeRO-3 re-gathers its persistent parameters after the step (see
   * zero3_layer_tensors): the stage's layers' and the final norm's, a copy per parameter and rank,
   * plus the list's own loops (a view and a copy per rank). */
  if (k.blocking)
    list_host (b, &k, (double) k.persistent * rank_layers
                        + (model_plan_chunk_has_loss (plan, stage, v - 1) ? (s->norm == MODEL_NORM_LAYERNORM && s->bias ? 2 : 1) : 0)
                        + 2, 0);
  int n_final = 0;
  if (distopt && fw.param_ag == MODEL_DP_PARAM_AG_BLOCKING)
    {
      /* Blocking parameter all-gather after the optimizer; the step ends when it is done. */
      double bytes = all * c->param_bytes - model_layer_fp8_param_saving (s, plan, stage, -1);
      int after = b->last_compute;
      while (bytes > 0 && n_final < max_ag)
        {
          TOp t = { .kind = K_COLL, .stream = ST_DP, .cat = SIM_BD_DP, .group = G_DPCP,
                    .coll = SIM_COLLECTIVE_ALLGATHER, .bytes = MIN (bytes, ag_cap), .seq = b->seq[G_DPCP]++ };
          ag_ops[n_final] = add_op (b, &t, "dp_param_ag");
          edge (b, after, ag_ops[n_final++]);
          bytes -= MIN (bytes, ag_cap);
        }
    }
  /* The fixed per-step host time (hardware step_overhead_ms; fitted per generation where calibrated)
   * closes the step on every rank. */
  p->end_op = compute (b, "step_end", c->gpu->step_overhead_ns, SIM_BD_OPTIMIZER);
  for (int i = 0; i < n_final; i++)
    edge (b, ag_ops[i], p->end_op);
  program_from_builder (p, b, c);
  p->flops = flops;
  g_free (k.ops);
  g_array_free (k.units, TRUE);
}
