/* Stays ~1000 lines: the execution half (pending collectives, PP sends and routes, the engine hooks,
 * groups and symmetry, the run loop) shares the Runner state throughout; program.c builds programs. */
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
 *            sim_runner_build_program in program.c). Tied embeddings: the word-embedding
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
#include <gsl/gsl_cdf.h>
#include "sim/step/runner-private.h"
#include "model/schedule.h"
#include "model/layer.h"
#include "model/flops.h"
#include "model/memory.h"
#include "sim/des/engine.h"
#include "sim/net/flow.h"
#include "sim/net/alphabeta.h"

/* ---------------------------------------------------------------------------------------------- */
/* Execution */

typedef struct Runner Runner;

typedef struct {
  Runner *runner;      /* the GPU's hook user: a hook finds its rank without a lookup */
  const Program *prog;
  int rank, stage;
  int peer[2];         /* the PP peers at stage - 1 and stage + 1 (mod pp), -1 until first asked */
  SimGpu *gpu;
  /* Readiness: with few ranks, a counter per op of the dependencies still to end (deps); past a
   * cache's worth of those, the ops ended per stream and the PP receives awaited (Program.need). */
  guint16 *deps;
  guint32 done_n[N_STREAMS];
  guint16 *ext;
  gint64 last_compute_end, end_ns;
  guint8 cause_cat;
  gint64 cause_dur;
  gint64 bd[SIM_BD_COUNT];
  gboolean ended;
  double end_sens[SIM_GPU_N_SENS]; /* derivatives of end_ns (sensitivities on) */
} RankState;

typedef struct {
  int size, n_groups;
  int *group_of;       /* [gpus], -1: not in any group of this kind */
  int *members;        /* [n_groups * size] */
  int *sib_off, *sib;  /* per stage: groups whose first member is in that stage */
  int *sib_n;          /* per stage: how many of them a representative launches */
  int *stage_of;       /* [n_groups]: the stage of the group's first member */
  const SimCollectiveGroup **handle;  /* [n_groups], made at the group's first collective */
  const SimCollectiveGroup **pair;    /* [n_groups * size]: member j -> j + 1, for ring steps */
  int *sim_off, *sim;  /* per group (CSR): its members that are simulated, in member order */
  int *img_key;        /* TP mirror: per group, its first member's TP-position-0 rank */
  int *img_off, *img;  /* TP mirror: per key rank (CSR), the groups of that key, one group's images */
  struct Pending **open; /* per group: its rendezvous still waiting for members (a short list) */
} GroupTable;

typedef struct Pending Pending;
/* One cache line (they come in 64-byte aligned blocks, PENDING_BLOCK): a collective's completion
 * reads it cold at scale, as a rendezvous does. */
struct Pending {
  gint64 launch_ns;
  int kind, stream, outstanding;
  union {
    struct {            /* a group's rendezvous (kind >= 0) */
      guint64 key;
      Pending *next_open; /* the group's next open rendezvous */
      int group, op, arrived, expected;
    };
    struct {            /* a PP send (kind < 0) */
      RankState *sender;
      gint64 latency_ns;
      int recv_stage;
      gint32 recv_op;
    };
  };
};
G_STATIC_ASSERT (sizeof (Pending) <= 64);
#define PENDING_BLOCK 256

struct Runner {
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
  gboolean tp_mirror;  /* one rank per TP group simulated, its TP positions mirrored */
  double slowdown;
  double stream_slowdown[N_STREAMS]; /* compute slowdown beside each communication stream */
  double (*compute_scale) (gpointer user, int gpu);
  gpointer compute_scale_user;
  Pending **free_stack;
  gsize n_free, cap_free;
  GPtrArray *allocated;
  gint64 completing_dur;
  GError *error;
  guint64 ops_executed;
  SimFlowNet *net;
  const SimCollectiveProfile *profile;
  /* PP transfers per (sending stage, direction): the routes of the pairs a send launches,
   * concatenated (representatives: every sibling pair as one flow), and its latency. */
  guint32 **pp_links;
  SimFlowPath **pp_path;      /* pp_links registered with the net at the first send */
  SimFlowPath ***pp_pair_path; /* --full: each pair's route, registered at its first send */
  SimFlowPath ***pp_tp_path;   /* TP mirror: a TP group's pairs as one path, at its simulated sender */
  int *pp_n_links;
  gint64 *pp_latency;
  double *pp_weight;         /* the representative send's share weight (sim_collective_p2p_weight) */
  gint64 pair_latency[2];    /* PP send latency across / inside a domain; -1 unknown */
  const SimCollectiveGroup **launch_groups;  /* launch_group_op scratch: every group it launches */
  gsize launch_cap;
  guint32 **pp_pair_links;   /* per (stage, direction): every pair's route, at pp_pair_off */
  int **pp_pair_off;
  guint32 *route_load;       /* routes chosen per link so far (balanced ECMP choice) */
  int *stage_index;          /* rank -> its index among the ranks of its stage */
  SimRunnerTraceFn trace;    /* --trace hook (planning module) */
  gpointer trace_user;
  /* Sensitivities: the constants some op's duration depends on, sens_dir[0..n_sens) (an index of
   * sim_gpu_op_ns_sens), which are all the events carry. */
  int n_sens;
  int sens_dir[SIM_GPU_N_SENS];
};

/* Keeps, in every program's per-op sensitivities, only the constants some op depends on (a BF16 run
 * carries 3 of the 8, not every dtype's), so events copy fewer of them; returns how many. */
static int
compact_sens (Runner *r)
{
  gboolean used[SIM_GPU_N_SENS] = { FALSE };
  for (int s = 0; s < r->plan->pp; s++)
    for (gsize i = 0; i < (gsize) r->progs[s].n_ops * SIM_GPU_N_SENS; i++)
      used[i % SIM_GPU_N_SENS] |= r->progs[s].sens[i] != 0;
  r->n_sens = 0;
  for (int d = 0; d < SIM_GPU_N_SENS; d++)
    if (used[d])
      r->sens_dir[r->n_sens++] = d;
  if (r->n_sens == 0)
    r->sens_dir[r->n_sens++] = SIM_GPU_SENS_LAUNCH; /* an engine needs one; all zeros */
  for (int s = 0; s < r->plan->pp; s++)
    {
      double *v = r->progs[s].sens;
      for (int i = 0; i < r->progs[s].n_ops; i++)
        for (int k = 0; k < r->n_sens; k++)
          v[(gsize) i * r->n_sens + k] = v[(gsize) i * SIM_GPU_N_SENS + r->sens_dir[k]];
    }
  return r->n_sens;
}

/* Released Pendings wait on a stack of pointers: a pop reads the stack's top, not the cold
 * Pending it names (a list threaded through them cost a cache miss before every rendezvous at
 * 131,072 GPUs --full). */
static void
pending_release (Runner *r, Pending *p)
{
  if (r->n_free == r->cap_free)
    {
      r->cap_free = MAX (64, 2 * r->cap_free);
      r->free_stack = g_renew (Pending *, r->free_stack, r->cap_free);
    }
  r->free_stack[r->n_free++] = p;
}

static Pending *
pending_new (Runner *r)
{
  if (r->n_free == 0)
    {
      Pending *block = g_aligned_alloc (PENDING_BLOCK, 64, 64);
      g_ptr_array_add (r->allocated, block);
      for (int i = PENDING_BLOCK - 1; i >= 0; i--)
        pending_release (r, (Pending *) (void *) ((char *) block + 64 * i));
    }
  Pending *p = r->free_stack[--r->n_free];
  memset (p, 0, sizeof *p);
  return p;
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

/* Launches the collective (or CP ring step) `op` for group g, and in representative mode for every
 * sibling group of the same stage. */
static void
launch_group_op (Runner *r, Pending *p, const TOp *op)
{
  GroupTable *gt = &r->groups[p->kind];
  int n_launch = 1;
  const int *launch = &p->group;
  if (r->tp_mirror)
    {
      /* the group's mirror images over the TP positions of its members */
      int key = gt->img_key[p->group];
      launch = gt->img + gt->img_off[key];
      n_launch = gt->img_off[key + 1] - gt->img_off[key];
    }
  else if (!r->full)
    {
      /* siblings: the groups whose first member sits in the same stage as this one's */
      int st = gt->stage_of[p->group];
      launch = gt->sib + gt->sib_off[st];
      n_launch = gt->sib_n[st];
    }
  p->launch_ns = sim_engine_now (r->engine);
  /* Every group (a ring step: every pair) at once: one call, one completion. */
  int n = op->kind == K_RING ? n_launch * gt->size : n_launch;
  if ((gsize) n > r->launch_cap)
    {
      r->launch_cap = (gsize) n;
      r->launch_groups = g_renew (const SimCollectiveGroup *, r->launch_groups, r->launch_cap);
    }
  GError *error = NULL;
  const SimCollectiveGroup **out = r->launch_groups;
  for (int i = 0; i < n_launch && error == NULL; i++)
    {
      int g = launch[i];
      const int *m = gt->members + (gsize) g * gt->size;
      if (op->kind == K_RING)
        for (int j = 0; j < gt->size && error == NULL; j++)
          {
            if (gt->pair == NULL)
              gt->pair = g_new0 (const SimCollectiveGroup *, (gsize) gt->n_groups * gt->size);
            const SimCollectiveGroup **h = &gt->pair[(gsize) g * gt->size + j];
            if (*h == NULL)
              {
                int pair[2] = { m[j], m[(j + 1) % gt->size] };
                *h = sim_collective_group (r->coll, pair, 2, &error);
              }
            *out++ = *h;
          }
      else
        {
          if (gt->handle == NULL)
            gt->handle = g_new0 (const SimCollectiveGroup *, gt->n_groups);
          if (gt->handle[g] == NULL)
            gt->handle[g] = sim_collective_group (r->coll, m, gt->size, &error);
          *out++ = gt->handle[g];
        }
    }
  if (error == NULL && n > 0)
    {
      SimCollectiveOp cop = op->kind == K_RING ? SIM_COLLECTIVE_SENDRECV : (SimCollectiveOp) op->coll;
      p->outstanding++;
      if (!sim_collective_start_many (r->coll, cop, r->launch_groups, n, op->bytes, flow_done, p,
                                      (guint64) (gsize) r, &error))
        p->outstanding--;
    }
  if (error != NULL)
    fail (r, error);
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

/* The rank at `stage` with the others of `st`'s coordinates; the two neighbours remembered. */
static int
rank_peer (Runner *r, RankState *st, int stage)
{
  int pp = r->plan->pp, k = stage == (st->stage + 1) % pp;
  if (!k && stage != (st->stage + pp - 1) % pp)
    return pp_peer (r, st->rank, stage);
  if (st->peer[k] < 0)
    st->peer[k] = pp_peer (r, st->rank, stage);
  return st->peer[k];
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

/* The stage and chunk a PP send of `op` (from virtual stage op->vs = chunk·pp + stage) lands on. */
static void
send_target (const ModelPlan *plan, const TOp *op, int *to_stage, int *to_chunk)
{
  gboolean ok = model_schedule_next (plan->schedule, plan->pp, plan->vpp, op->vs % plan->pp, op->vs / plan->pp,
                                     op->fwd ? MODEL_PASS_FORWARD : MODEL_PASS_BACKWARD, to_stage, to_chunk);
  g_assert (ok);
}

static void
launch_send (Runner *r, RankState *st, const TOp *op)
{
  const ModelPlan *plan = r->plan;
  int to_stage, to_chunk;
  send_target (plan, op, &to_stage, &to_chunk);
  Pending *p = pending_new (r);
  p->kind = -1;
  p->stream = op->stream;
  p->sender = st;
  p->recv_stage = to_stage;
  p->recv_op = op->recv_op;
  p->launch_ns = sim_engine_now (r->engine);
  /* The route of the direction it goes (DualPipe's second copy sends forward to stage − 1). */
  int k = 2 * st->stage + (to_stage == (st->stage + 1) % plan->pp ? 1 : 0);
  g_assert (r->pp_links[k] != NULL);
  if (r->tp_mirror)
    {
      /* The sender's pair and its images at the other TP positions, as one flow over their
       * concatenated routes (as representatives send a stage's pairs). */
      int dst = rank_peer (r, st, p->recv_stage);
      int i = r->stage_index[st->rank];
      p->latency_ns = pair_latency (r, st->rank, dst);
      if (r->pp_tp_path[k] == NULL)
        r->pp_tp_path[k] = g_new0 (SimFlowPath *, r->per_stage);
      if (r->pp_tp_path[k][i] == NULL)
        {
          const int *off = r->pp_pair_off[k];
          GArray *links = g_array_new (FALSE, FALSE, sizeof (guint32));
          int coords[MODEL_DIM_COUNT];
          model_plan_rank_coords (plan, st->rank, coords);
          for (int t = 0; t < plan->tp; t++)
            {
              coords[MODEL_DIM_TP] = t;
              int j = r->stage_index[model_plan_rank_of (plan, coords)];
              g_array_append_vals (links, r->pp_pair_links[k] + off[j], off[j + 1] - off[j]);
            }
          r->pp_tp_path[k][i] = sim_flow_net_path (r->net, (guint32 *) (void *) links->data, (int) links->len);
          g_array_free (links, TRUE);
        }
      sim_flow_net_start_batched (r->net, r->pp_tp_path[k][i], op->bytes,
                                  sim_collective_p2p_weight (r->profile, r->topo, st->rank, dst, 1), send_flow_done, p,
                                  (guint64) (gsize) r);
    }
  else if (r->full)
    {
      int dst = rank_peer (r, st, p->recv_stage);
      int i = r->stage_index[st->rank];
      const int *off = r->pp_pair_off[k];
      p->latency_ns = pair_latency (r, st->rank, dst);
      if (r->pp_pair_path[k] == NULL)
        r->pp_pair_path[k] = g_new0 (SimFlowPath *, r->per_stage);
      if (r->pp_pair_path[k][i] == NULL)
        r->pp_pair_path[k][i] = sim_flow_net_path (r->net, r->pp_pair_links[k] + off[i], off[i + 1] - off[i]);
      /* batched: the stage's ranks send in lockstep, one bundle while they move alike */
      sim_flow_net_start_batched (r->net, r->pp_pair_path[k][i], op->bytes,
                                  sim_collective_p2p_weight (r->profile, r->topo, st->rank, dst, 1), send_flow_done, p,
                                  (guint64) (gsize) r);
    }
  else
    {
      p->latency_ns = r->pp_latency[k];
      if (r->pp_path[k] == NULL)
        r->pp_path[k] = sim_flow_net_path (r->net, r->pp_links[k], r->pp_n_links[k]);
      sim_flow_net_start_path (r->net, r->pp_path[k], op->bytes, r->pp_weight[k], send_flow_done, p,
                               (guint64) (gsize) r);
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
  /* A group has few rendezvous open at once (its members are at most a few collectives apart). */
  Pending **link = &gt->open[g], *p;
  for (p = *link; p != NULL && p->key != key; p = *link)
    link = &p->next_open;
  if (p == NULL)
    {
      p = pending_new (r);
      p->key = key;
      p->kind = op->group;
      p->group = g;
      p->op = (int) op_index;
      p->stream = op->stream;
      p->expected = gt->sim_off[g + 1] - gt->sim_off[g];
      p->next_open = gt->open[g];
      gt->open[g] = p;
      link = &gt->open[g];
    }
  if (++p->arrived == p->expected)
    {
      *link = p->next_open;
      launch_group_op (r, p, op);
    }
}

/* Whether op s of the rank's program may start: its predecessors have ended (Program.need) and,
 * for a PP receive, its sends have arrived. */
static inline gboolean
op_ready (const RankState *st, const Program *prog, guint32 s)
{
  if (st->deps)
    return st->deps[s] == 0;
  for (guint32 i = prog->need_off[s]; i < prog->need_off[s + 1]; i++)
    {
      guint32 k = prog->need[i] >> NEED_SHIFT, n = prog->need[i] & NEED_COUNT;
      if (k == NEED_EXT ? st->ext[n] > 0 : st->done_n[k] < n)
        return FALSE;
    }
  return TRUE;
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
      if (r->full || r->tp_mirror)
        rs = r->state_of[rank_peer (r, p->sender, p->recv_stage)];
      else
        rs = r->state_of[r->stage_ranks[(gsize) p->recv_stage * r->per_stage]];
      RankState *sender = p->sender;
      int stream = p->stream;
      gint32 recv_op = p->recv_op;
      gint64 dur = r->completing_dur;
      pending_release (r, p);
      if (rs != NULL && recv_op >= 0)
        {
          const Program *prog = rs->prog;
          if (rs->deps ? --rs->deps[recv_op] == 0
                       : --rs->ext[prog->ops[recv_op].ext] == 0 && op_ready (rs, prog, (guint32) recv_op))
            {
              rs->cause_cat = SIM_BD_PP;
              rs->cause_dur = dur;
              sim_gpu_poke_ready (rs->gpu, prog->ops[recv_op].stream, (guint32) recv_op);
            }
        }
      r->completing_dur = dur;
      sim_gpu_finish (sender->gpu, stream);
      return;
    }
  GroupTable *gt = &r->groups[p->kind];
  const int *m = gt->sim + gt->sim_off[p->group];
  int n = gt->sim_off[p->group + 1] - gt->sim_off[p->group];
  int stream = p->stream;
  gint64 dur = r->completing_dur;
  pending_release (r, p);
  /* Each member's finish chases rank state, GPU and stream, cold at scale: fetched ahead. */
  for (int i = 0; i < MIN (n, 4); i++)
    __builtin_prefetch (r->state_of[m[i]]);
  for (int i = 0; i < n; i++)
    {
      if (i + 4 < n)
        __builtin_prefetch (r->state_of[m[i + 4]]);
      if (i + 2 < n)
        sim_gpu_prefetch (r->state_of[m[i + 2]]->gpu, stream);
      r->completing_dur = dur;
      sim_gpu_finish (r->state_of[m[i]]->gpu, stream);
    }
}

static gboolean
hook_ready (gpointer user, int gpu, guint32 op)
{
  RankState *st = user;
  return op_ready (st, st->prog, op);
}

static gint64
hook_start (gpointer user, int gpu, guint32 op_index, gboolean overlapped)
{
  RankState *st = user;
  Runner *r = st->runner;
  const TOp *op = &st->prog->ops[op_index];
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
        /* The stream's next op starts when this one ends at the earliest: fetch its entry (and its
         * sensitivities) now, while this one runs. */
        const Program *prog = st->prog;
        if (op->pos + 1 < (guint32) prog->stream_n[ST_COMPUTE])
          {
            guint32 next = prog->stream_ops[ST_COMPUTE][op->pos + 1];
            __builtin_prefetch (&prog->ops[next]);
            if (prog->sens)
              __builtin_prefetch (prog->sens + (gsize) next * r->n_sens);
          }
        gint64 dur = op->dur_ns;
        if (r->compute_scale && dur > 0)
          dur = (gint64) llround (dur * r->compute_scale (r->compute_scale_user, gpu));
        /* The most SM-hungry collective running beside it sets the slowdown: NCCL's own choice of
         * CTAs costs the profile's overlap_slowdown, a communicator capped to c CTAs at most c/SMs
         * of the compute (a userbuffers GEMM that owns its SMs ignores the TP stream). */
        double slowdown = 0;
        if (overlapped && dur > 0)
          {
            guint busy = sim_gpu_busy_streams (st->gpu) & ~(1u << ST_COMPUTE);
            if (op->ub_own_sms)
              busy &= ~(1u << ST_TP);
            for (; busy != 0; busy &= busy - 1)
              slowdown = MAX (slowdown, r->stream_slowdown[__builtin_ctz (busy)]);
          }
        gint64 extra = slowdown > 0 ? (gint64) llround (dur * slowdown) : 0;
        st->bd[op->cat] += dur;
        st->bd[SIM_BD_SLOWDOWN] += extra;
        st->last_compute_end = now + dur + extra; /* provisional: the op's end */
        const double *sens = prog->sens;
        if (sens && op->dur_ns > 0)
          {
            const double *own = sens + (gsize) op_index * r->n_sens;
            if (dur + extra == op->dur_ns)
              sim_engine_delay_sens (r->engine, own);
            else
              {
                /* stretched (straggler, slowdown) as the duration is */
                double f = (double) (dur + extra) / op->dur_ns, dd[SIM_GPU_N_SENS];
                for (int k = 0; k < r->n_sens; k++)
                  dd[k] = f * own[k];
                sim_engine_delay_sens (r->engine, dd);
              }
          }
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
  RankState *st = user;
  Runner *r = st->runner;
  const Program *prog = st->prog;
  const TOp *op = &prog->ops[op_index];
  gboolean async = op->kind != K_COMPUTE;
  r->ops_executed++;
  if (r->trace)
    {
      static const char *const stream_names[N_STREAMS] = { "compute", "tp", "cp", "pp-send-fwd", "pp-send-bwd",
                                                           "dp", "ep", "dp-gather" };
      SimRunnerTraceEvent ev = { st->rank, st->stage, op->stream, stream_names[op->stream],
                                 sim_breakdown_name ((SimBreakdown) op->cat), start_ns,
                                 sim_engine_now (r->engine), op->kind == K_COMPUTE ? 0.0 : op->bytes,
                                 prog->names[op_index] };
      r->trace (r->trace_user, &ev);
    }
  st->done_n[op->stream]++;
  for (guint32 i = 0; i < op->n_succ; i++)
    {
      guint32 s = prog->succ[op->succ_off + i];
      gboolean ready = st->deps ? --st->deps[s & ~SUCC_QUIET] == 0 : !(s & SUCC_QUIET) && op_ready (st, prog, s);
      s &= ~SUCC_QUIET;
      if (ready)
        {
          if (async)
            {
              st->cause_cat = op->cat;
              st->cause_dur = r->completing_dur;
            }
          sim_gpu_poke_ready (st->gpu, prog->ops[s].stream, s);
        }
    }
  if ((int) op_index == prog->end_op)
    {
      st->end_ns = sim_engine_now (r->engine);
      st->ended = TRUE;
      if (prog->sens)
        memcpy (st->end_sens, sim_engine_sens (r->engine), sizeof (double) * r->n_sens);
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
    case G_AMAX:
      mask = (1u << MODEL_DIM_TP) | (1u << MODEL_DIM_CP) | (plan->fp8_amax_tp_only ? 0u : 1u << MODEL_DIM_DP);
      break;
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
  if (kind != G_EMB)
    {
      g_array_set_size (members, (guint) n);
      n_groups = model_plan_group_partition (plan, mask, expert, gt->group_of, (int *) (void *) members->data);
      g_assert (n_groups >= 1 && n_groups * size == n);
    }
  else
    /* The embedding groups: each first-stage rank with its last-stage peer (buf is ordered by the
     * PP coordinate; one stage: the rank alone). */
    for (int rank = 0; rank < n; rank++)
      {
        int coords[MODEL_DIM_COUNT];
        model_plan_rank_coords (plan, rank, coords);
        if (coords[MODEL_DIM_PP] != 0)
          continue;
        int k = model_plan_group_ranks (plan, rank, mask, expert, buf);
        if (size > 1)
          buf[1] = buf[k - 1];
        for (int i = 0; i < size; i++)
          gt->group_of[buf[i]] = n_groups;
        g_array_append_vals (members, buf, size);
        n_groups++;
      }
  gt->n_groups = n_groups;
  gt->members = (int *) g_array_free (members, FALSE);
  gt->open = g_new0 (Pending *, MAX (n_groups, 1));
  gt->sib_off = g_new0 (int, (gsize) MAX (plan->pp, 1) + 1);
  gt->sib = g_new (int, MAX (n_groups, 1));
  int *stage_of_group = gt->stage_of = g_new (int, MAX (n_groups, 1));
  for (int g = 0; g < n_groups; g++)
    {
      int coords[MODEL_DIM_COUNT];
      model_plan_rank_coords (plan, gt->members[(gsize) g * size], coords);
      stage_of_group[g] = coords[MODEL_DIM_PP];
      gt->sib_off[coords[MODEL_DIM_PP] + 1]++;
    }
  for (int s = 0; s < plan->pp; s++)
    gt->sib_off[s + 1] += gt->sib_off[s];
  g_autofree int *fill = g_new0 (int, MAX (plan->pp, 1));
  for (int g = 0; g < n_groups; g++)
    gt->sib[gt->sib_off[stage_of_group[g]] + fill[stage_of_group[g]]++] = g;
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
  g_free (gt->stage_of);
  g_free (gt->handle);
  g_free (gt->pair);
  g_free (gt->sim_off);
  g_free (gt->sim);
  g_free (gt->open);
  g_free (gt->img_key);
  g_free (gt->img_off);
  g_free (gt->img);
}

/* Each group's simulated members, so a collective's rendezvous and completion cost those, not the
 * group's size (a representative's DP group of 32,768 has one). */
static void
group_table_index_simulated (GroupTable *gt, RankState *const *state_of)
{
  gt->sim_off = g_new (int, gt->n_groups + 1);
  GArray *sim = g_array_new (FALSE, FALSE, sizeof (int));
  for (int g = 0; g < gt->n_groups; g++)
    {
      gt->sim_off[g] = (int) sim->len;
      const int *m = gt->members + (gsize) g * gt->size;
      for (int i = 0; i < gt->size; i++)
        if (state_of[m[i]] != NULL)
          g_array_append_val (sim, m[i]);
    }
  gt->sim_off[gt->n_groups] = (int) sim->len;
  gt->sim = (int *) g_array_free (sim, FALSE);
}

/* Scratch for group_layout: a zeroed count per NVLink domain. */
static int *
domain_tally_new (const SimTopology *topo)
{
  SimTopologySummary sum;
  sim_topology_summarize (topo, &sum);
  return g_new0 (int, MAX (sum.domains, 1));
}

/* How a group sits on the NVLink domains: how many it spans and the most members in one (tally:
 * domain_tally_new's, left zeroed). */
static void
group_layout (const SimTopology *topo, const int *members, int n, int *tally, int *domains, int *per_domain)
{
  *per_domain = 0;
  *domains = 0;
  for (int i = 0; i < n; i++)
    {
      int c = ++tally[sim_topology_domain_of (topo, members[i])];
      *domains += c == 1;
      *per_domain = MAX (*per_domain, c);
    }
  for (int i = 0; i < n; i++)
    tally[sim_topology_domain_of (topo, members[i])] = 0;
}

/* Representatives launch a collective for the sibling groups of their stage. A group that stays
 * inside one NVLink domain shares no link with the groups of other domains, so only the siblings in
 * the representative's domain are launched: that domain carries its full load, as in --full, and
 * flows leaving it (DP rings, PP sends) meet the same contention there. Groups spanning domains
 * launch every sibling of the stage. */
static void
restrict_siblings (Runner *r)
{
  g_autofree int *tally = domain_tally_new (r->topo);
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
          group_layout (r->topo, gt->members + (gsize) g * gt->size, gt->size, tally, &domains,
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
  g_autofree int *tally = domain_tally_new (r->topo);
  for (int k = 0; k < G_COUNT; k++)
    {
      GroupTable *gt = &r->groups[k];
      if (gt->size <= 1)
        continue;
      int d0 = 0, p0 = 0;
      for (int g = 0; g < gt->n_groups; g++)
        {
          int d, pd;
          group_layout (r->topo, gt->members + (gsize) g * gt->size, gt->size, tally, &d, &pd);
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

/* TP mirror (a placement whose groups differ in shape from stage to stage, with TP > 1): the TP
 * positions of a rank, which sit in one node, see the same fabric from each GPU of the node (the
 * topologies give every GPU of a node its own NIC on its own rail, and every rail the same
 * switches), so one of them (TP = 0) is simulated per TP group and launches its groups' images at
 * the other TP positions; every DP, CP and PP coordinate runs. Exact where every TP group lies in one
 * node and every group the step uses that holds several TP positions (TP groups; the FP8 amax
 * group, which may add CP and DP) lies in one NVLink domain (placement_tp_mirror): a group whose
 * members span domains gives its TP positions different roles on the NICs (which member's ring
 * edge leaves the domain), so they would not be images of each other. Checked against --full by
 * tests/test-runner.c and on the 2,496-GPU GB200 deck row (its stages cut racks unevenly: 624 ranks
 * instead of 2,496, the same step to the ns). Mirroring that row's CP positions too was not exact
 * (5.90924 s against 5.90882 s), most likely because its DP × CP groups span racks, where the two CP
 * positions play different roles in their rings. */
static int
tp_key (const ModelPlan *plan, int rank)
{
  int coords[MODEL_DIM_COUNT];
  model_plan_rank_coords (plan, rank, coords);
  coords[MODEL_DIM_TP] = 0;
  return model_plan_rank_of (plan, coords);
}

/* Each group's key (its first member's TP-0 rank) and, per key, the groups that share it. */
static void
group_table_index_images (GroupTable *gt, const ModelPlan *plan)
{
  int n = plan->gpus;
  gt->img_key = g_new (int, MAX (gt->n_groups, 1));
  gt->img_off = g_new0 (int, (gsize) n + 1);
  gt->img = g_new (int, MAX (gt->n_groups, 1));
  for (int g = 0; g < gt->n_groups; g++)
    {
      gt->img_key[g] = tp_key (plan, gt->members[(gsize) g * gt->size]);
      gt->img_off[gt->img_key[g] + 1]++;
    }
  for (int i = 0; i < n; i++)
    gt->img_off[i + 1] += gt->img_off[i];
  g_autofree int *fill = g_new0 (int, MAX (n, 1));
  for (int g = 0; g < gt->n_groups; g++)
    gt->img[gt->img_off[gt->img_key[g]] + fill[gt->img_key[g]]++] = g;
}

static gboolean
placement_tp_mirror (Runner *r)
{
  const ModelPlan *plan = r->plan;
  if (plan->tp <= 1 || plan->ep != 1)
    return FALSE;
  for (int rank = 0; rank < plan->gpus; rank++)
    if (sim_topology_node_of (r->topo, rank) != sim_topology_node_of (r->topo, tp_key (plan, rank)))
      return FALSE;
  gboolean used[G_COUNT] = { FALSE };
  for (int st = 0; st < plan->pp; st++)
    for (int i = 0; i < r->progs[st].n_ops; i++)
      {
        const TOp *op = &r->progs[st].ops[i];
        if (op->kind == K_COLL || op->kind == K_RING)
          used[op->group] = TRUE;
      }
  for (int k = 0; k < G_COUNT; k++)
    {
      GroupTable *gt = &r->groups[k];
      for (int g = 0; used[k] && g < gt->n_groups && gt->size > 1; g++)
        {
          const int *m = gt->members + (gsize) g * gt->size;
          int dom = sim_topology_domain_of (r->topo, m[0]), key = tp_key (plan, m[0]);
          gboolean several_tp = FALSE, one_domain = TRUE;
          for (int i = 1; i < gt->size; i++)
            {
              several_tp = several_tp || (tp_key (plan, m[i]) == key && m[i] != m[0]);
              one_domain = one_domain && sim_topology_domain_of (r->topo, m[i]) == dom;
            }
          if (several_tp && !one_domain)
            return FALSE;
        }
    }
  for (int k = 0; k < G_COUNT; k++)
    group_table_index_images (&r->groups[k], plan);
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
  if (!model_schedule_check_grouped (plan->schedule, plan->pp, plan->vpp, m, plan->mb_group, error))
    return FALSE;
  if (cluster->gpus != plan->gpus)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "the plan uses %d GPUs but the cluster has %d; set [cluster] gpus or the "
                   "parallel degrees so that they agree", plan->gpus, cluster->gpus);
      return FALSE;
    }
  ModelMemory mem;
  if (!model_memory_check (shape, plan, gpu->hbm_bytes, opts.memory_overhead_bytes, &mem,
                           opts.memory_advisory ? NULL : error))
    {
      if (!opts.memory_advisory)
        return FALSE;
      out->memory_over = TRUE;
    }
  out->memory_bytes = mem.total_bytes;
  out->memory_stage = mem.pp_rank;
  g_autoptr (SimTopology) topo = sim_topology_new (cluster, fabric, error);
  if (topo == NULL)
    return FALSE;

  LayerCtx c = { shape, plan, gpu };
  c.grad_bytes = model_dtype_bytes (plan->grad_dtype);
  c.param_bytes = model_dtype_bytes (plan->param_dtype);
  c.ep_a2a_scale = 1.0;
  if (plan->ep > 1 && shape->moe_top_k > 0)
    {
      /* The NVLink domains the EP group of rank 0 spans (every EP group's, on the placements
       * representatives run; --full prices every group at this count too). */
      g_autofree int *ranks = g_new (int, plan->gpus);
      int n = model_plan_group_ranks (plan, 0, 1u << MODEL_DIM_EP, TRUE, ranks);
      g_autofree int *tally = domain_tally_new (topo);
      int domains, per_domain;
      group_layout (topo, ranks, n, tally, &domains, &per_domain);
      c.ep_a2a_scale = model_moe_dispatch_copies (shape, plan, domains) / shape->moe_top_k;
    }
  c.scratch = model_op_array_new ();
  c.sens = opts.sensitivities;
  int dpcp = plan->dp * plan->cp;

  Runner r = { 0 };
  r.plan = plan;
  r.trace = opts.trace;
  r.trace_user = opts.trace_user;
  r.topo = topo;
  r.slowdown = gpu->overlap_slowdown;
  {
    static const int dim_of[N_STREAMS] = { [ST_TP] = MODEL_DIM_TP, [ST_CP] = MODEL_DIM_CP, [ST_SEND_F] = MODEL_DIM_PP,
                                           [ST_SEND_B] = MODEL_DIM_PP, [ST_DP] = MODEL_DIM_DP, [ST_EP] = MODEL_DIM_EP,
                                           [ST_DPAG] = MODEL_DIM_DP };
    for (int k = ST_COMPUTE + 1; k < N_STREAMS; k++)
      {
        int ctas = plan->nccl_ctas[dim_of[k]];
        r.stream_slowdown[k] = ctas > 0 && gpu->sm_count > 0 ? MIN (r.slowdown, (double) ctas / gpu->sm_count)
                                                              : r.slowdown;
      }
  }
  r.progs = g_new0 (Program, plan->pp);
  for (int s = 0; s < plan->pp; s++)
    sim_runner_build_program (&r.progs[s], &c, s, dpcp);
  g_array_free (c.scratch, TRUE);
  /* Resolve PP sends to the entry op of the receiving slot, which gains one dependency. */
  for (int s = 0; s < plan->pp; s++)
    for (int i = 0; i < r.progs[s].n_ops; i++)
      {
        TOp *op = &r.progs[s].ops[i];
        if (op->kind != K_SEND)
          continue;
        int to_stage, to_chunk;
        send_target (plan, op, &to_stage, &to_chunk);
        Program *rp = &r.progs[to_stage];
        op->recv_op = rp->entry[entry_index (plan, m, op->fwd ? MODEL_PASS_FORWARD : MODEL_PASS_BACKWARD,
                                             op->mb, to_chunk)];
        TOp *recv = &rp->ops[op->recv_op];
        recv->n_deps++;
        if (recv->ext < 0)
          {
            recv->ext = rp->n_ext++;
            rp->ext_init = g_renew (guint16, rp->ext_init, rp->n_ext);
            rp->ext_init[recv->ext] = 0;
          }
        g_assert (rp->ext_init[recv->ext] < G_MAXUINT16);
        rp->ext_init[recv->ext]++;
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
    {
      if (placement_tp_mirror (&r))
        r.tp_mirror = TRUE;
      else
        r.full = TRUE;
    }
  out->symmetric = !r.full && !r.tp_mirror;
  out->tp_mirror = r.tp_mirror;
  if (!r.full && !r.tp_mirror)
    restrict_siblings (&r);

  r.engine = sim_engine_new ();
  if (opts.sensitivities)
    sim_engine_enable_sens (r.engine, compact_sens (&r));
  g_autofree double *caps = g_new (double, sim_topology_n_links (topo));
  sim_collective_link_capacities (topo, coll_profile, caps);
  if (opts.link_scale)
    for (int i = 0; i < sim_topology_n_links (topo); i++)
      caps[i] *= opts.link_scale (opts.link_scale_user, i);
  SimFlowNet *net = sim_flow_net_new (r.engine, caps, sim_topology_n_links (topo));
  r.coll = sim_collective_new (r.engine, net, topo, coll_profile);
  /* every rank (or TP group) runs: the groups of a stage start their collectives one by one, in
   * lockstep */
  sim_collective_set_batched (r.coll, r.full || r.tp_mirror);
  r.net = net;
  r.profile = coll_profile;
  r.pp_links = g_new0 (guint32 *, 2 * plan->pp);
  r.pp_path = g_new0 (SimFlowPath *, 2 * plan->pp);
  r.pp_pair_path = g_new0 (SimFlowPath **, 2 * plan->pp);
  r.pp_tp_path = g_new0 (SimFlowPath **, 2 * plan->pp);
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
  r.allocated = g_ptr_array_new_with_free_func (g_aligned_free);
  r.state_of = g_new0 (RankState *, plan->gpus);
  r.n_states = r.full ? plan->gpus : r.tp_mirror ? plan->gpus / plan->tp : plan->pp;
  r.states = g_new0 (RankState, r.n_states);
  /* Counters cost 2 bytes per op and rank, one load a check; the stream places cost a few loads a
   * check and nothing per op. Past a few MiB of counters (the size of a core's share of a server's
   * last-level cache) the counters' cache misses cost more: 10,752 GPUs --full, 14.9 s with
   * counters, 11.8 s without (2026-11-27). */
  double counter_bytes = 0;
  for (int s = 0; s < plan->pp; s++)
    counter_bytes += sizeof (guint16) * (double) r.progs[s].n_ops * r.n_states / plan->pp;
  gboolean stream_readiness = opts.stream_readiness || counter_bytes > 8.0 * 1024 * 1024;
  for (int s = 0; stream_readiness && s < plan->pp; s++)
    sim_runner_program_seal (&r.progs[s]);
  static const SimGpuHooks hooks = { hook_ready, hook_start, hook_done };
  for (int i = 0, next = 0; i < r.n_states; i++)
    {
      RankState *st = &r.states[i];
      if (r.tp_mirror)
        while (tp_key (plan, next) != next)
          next++;
      st->rank = r.full ? i : r.tp_mirror ? next++ : r.stage_ranks[(gsize) i * r.per_stage];
      int coords[MODEL_DIM_COUNT];
      model_plan_rank_coords (plan, st->rank, coords);
      st->stage = coords[MODEL_DIM_PP];
      const Program *prog = &r.progs[st->stage];
      st->runner = &r;
      st->prog = prog;
      st->peer[0] = st->peer[1] = -1;
      if (stream_readiness)
        st->ext = g_memdup2 (prog->ext_init, sizeof (guint16) * prog->n_ext);
      else
        {
          st->deps = g_new (guint16, prog->n_ops);
          for (int k = 0; k < prog->n_ops; k++)
            st->deps[k] = prog->ops[k].n_deps;
        }
      st->gpu = sim_gpu_new (r.engine, st->rank, N_STREAMS, &hooks, st);
      for (int s = 0; s < N_STREAMS; s++)
        sim_gpu_set_stream (st->gpu, s, prog->stream_ops[s], prog->stream_n[s]);
      r.state_of[st->rank] = st;
    }
  for (int k = 0; k < G_COUNT; k++)
    group_table_index_simulated (&r.groups[k], r.state_of);
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
      for (int k = 0; k < r.n_sens; k++)
        out->step_sens[r.sens_dir[k]] = crit->end_sens[k];
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
      g_free (r.states[i].ext);
      g_free (r.states[i].deps);
    }
  g_free (r.states);
  g_free (r.state_of);
  g_ptr_array_free (r.allocated, TRUE);
  g_free (r.free_stack);
  sim_collective_free (r.coll);
  for (int i = 0; i < 2 * plan->pp; i++)
    {
      g_free (r.pp_links[i]);
      g_free (r.pp_pair_path[i]);
      g_free (r.pp_tp_path[i]);
      g_free (r.pp_pair_links[i]);
      g_free (r.pp_pair_off[i]);
    }
  g_free (r.pp_pair_links);
  g_free (r.pp_pair_off);
  g_free (r.route_load);
  g_free (r.stage_index);
  g_free (r.pp_links);
  g_free (r.pp_path);
  g_free (r.launch_groups);
  g_free (r.pp_pair_path);
  g_free (r.pp_tp_path);
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
    sim_runner_program_clear (&r.progs[s]);
  g_free (r.progs);
  return ok;
}

gboolean
sim_runner_band (const SimScenarioRun *run, double level, double step_s, double param_sigma, double *lo,
                 double *hi)
{
  *lo = *hi = 0;
  if (run->band_log_sigma <= 0 || step_s <= 0)
    return FALSE;
  if (level <= 0)
    level = 0.9;
  double z = gsl_cdf_ugaussian_Pinv (0.5 + 0.5 * CLAMP (level, 0.01, 0.999));
  double sigma = sqrt (run->band_log_sigma * run->band_log_sigma + param_sigma * param_sigma);
  *lo = step_s * exp (-z * sigma);
  *hi = step_s * exp (z * sigma);
  return TRUE;
}

gboolean
sim_runner_param_sigma_needed (const SimScenarioRun *run, const SimGpuSpec *gpu)
{
  return run->n_cov > 0 || (gpu != NULL && gpu->peak_log_sigma > 0);
}

double
sim_runner_param_sigma (const SimScenarioRun *run, const SimGpuSpec *gpu, const SimRunnerResult *r)
{
  if (!sim_runner_param_sigma_needed (run, gpu) || r->step_ns <= 0)
    return 0;
  gboolean peak = gpu != NULL && gpu->peak_log_sigma > 0;
  /* A step simulated with sensitivities has some (every kernel is a GEMM, memory-bound or
   * launched); without them the additive term alone would understate the band. */
  double any = 0, g[SIM_SCENARIO_MAX_COV];
  for (int d = 0; d < SIM_GPU_N_SENS; d++)
    any += fabs (r->step_sens[d]);
  if (any == 0)
    return 0;
  for (int k = 0; k < run->n_cov; k++)
    g[k] = run->cov_dir[k] < 0 ? 1e6 : r->step_sens[run->cov_dir[k]]; /* ns of step per φ unit (1 ms = 1e6 ns) */
  double var = 0;
  for (int a = 0; a < run->n_cov; a++)
    for (int b = 0; b < run->n_cov; b++)
      var += g[a] * g[b] * run->cov[a * run->n_cov + b];
  var = MAX (var, 0.0);
  if (peak)
    {
      double compute_ns = 0;
      for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
        compute_ns += r->step_sens[d] * (gpu->gemm_insitu[d] > 0 ? 1.0 / gpu->gemm_insitu[d] : 1.0);
      var += gpu->peak_log_sigma * gpu->peak_log_sigma * compute_ns * compute_ns;
    }
  return sqrt (var) / (double) r->step_ns;
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
  /* The band's parameter term needs the step's sensitivities to the fitted constants: carried by
   * this simulation, or for --full (where they cost 20-30% of the wall time) by a second one of
   * the representatives alone, whose sensitivities relative to its step stand for the full one's. */
  gboolean param_band = sim_runner_param_sigma_needed (run, sim_scenario_gpu (sc)) && run->band_log_sigma > 0;
  if (param_band && !ro.full)
    ro.sensitivities = TRUE;
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
  if (param_band && ro.sensitivities)
    out->param_sigma = sim_runner_param_sigma (run, sim_scenario_gpu (sc), &out->step);
  else if (param_band)
    {
      SimRunnerOptions so = ro;
      so.full = FALSE;
      so.force_symmetric = TRUE;
      so.sensitivities = TRUE;
      so.trace = NULL;
      so.link_stats = NULL;
      SimRunnerResult rep;
      if (sim_runner_run (shape, plan, sim_scenario_gpu (sc), sim_scenario_cluster (sc), sim_scenario_fabric (sc),
                          &prof, &so, &rep, NULL))
        out->param_sigma = sim_runner_param_sigma (run, sim_scenario_gpu (sc), &rep);
    }
  sim_runner_band (run, options->band_level, out->step_s, out->param_sigma, &out->step_lo_s, &out->step_hi_s);
  out->band_level = out->step_hi_s > 0 ? (options->band_level > 0 ? options->band_level : 0.9) : 0;
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
