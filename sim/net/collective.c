/* Stays ~890 lines: every algorithm (ring, tree, NVLS, all-to-all, send/recv) is phases of flows
 * built from the same route and NVLink-domain helpers. */
/* Collectives as phases of flows (design and equations: sim/net/collective.h and sim/net/alphabeta.h).
 *
 * A collective = a cached plan (phases; each phase = flows with a link path and a fraction of the
 * buffer size S) run by a small state machine: wait the phase latency, start its flows, and when the
 * last one ends go to the next phase; after the last, call done. Per algorithm:
 *   ring    C flows (one per channel), path = every edge route of the channel's ring concatenated,
 *           bytes = S * busbw_factor / C (broadcast: a chain from the root, S / C)
 *   tree    per channel two complementary binary trees over domain heads plus chains inside the
 *           domains, one flow per tree and channel over every edge both ways, S/(2C) each
 *   nvls    per GPU one flow on its NVLink up-link and one on its down-link, bytes per the
 *           multimem traffic (all-reduce (1+1/n) S each way), divided by nvls_eff
 *   hier    phase 1: a ring per domain (reduce-scatter); phase 2: a ring per rail over domains
 *           (all-reduce of S/L); phase 3: a ring per domain (all-gather)
 *   direct  one flow per ordered pair, S/n (all-to-all); one flow (send/recv)
 *   collnet one phase: a ring per domain carrying the scatter and the gather (2(L-1)/L S), and per
 *           GPU and NIC one flow over its NIC's up- and down-link, the shard S/L (over its NICs) the
 *           switches reduce; all divided by collnet_eff
 * Each flow weighs, in the sharing of its links (sim/net/flow.h), the NCCL channels it stands for: a
 * collective inside one domain nvlink_channels (split over its flows), one across domains
 * net_channels_per_nic per rail it uses, a send/recv the p2p channels of one peer (an all-to-all
 * spreads them over its n - 1 peers); so concurrent collectives share a link as their CTAs would,
 * not as our drawing of them into flows happens to split them.
 * The flows one event starts (a phase of one run, or of every merged sibling run) go to the net as
 * bundles of one size and weight (sim_flow_net_start_bundle), exact: a bundle splits itself where
 * its members stop moving in lockstep.
 * Latencies are those of sim_alphabeta_latency_ns, so the flow model and the closed form differ only
 * where links are shared; a ring or tree the closed form runs on NCCL's LL protocol (small sizes)
 * takes LL's latency and moves 1/ll_bw_fraction of the bytes over the same flows. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "sim/net/collective.h"
#include "sim/net/alphabeta.h"

G_DEFINE_QUARK (sim-collective-error-quark, sim_collective_error)

static const char *const op_names[SIM_COLLECTIVE_OP_COUNT] = {
  "allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "sendrecv",
};
static const char *const algo_names[SIM_COLLECTIVE_ALGO_COUNT] = {
  "auto", "ring", "tree", "nvls", "hier", "direct", "collnet",
};

const char *
sim_collective_op_name (SimCollectiveOp op)
{
  return op >= 0 && op < SIM_COLLECTIVE_OP_COUNT ? op_names[op] : "?";
}

const char *
sim_collective_algo_name (SimCollectiveAlgo algo)
{
  return algo >= 0 && algo < SIM_COLLECTIVE_ALGO_COUNT ? algo_names[algo] : "?";
}

gboolean
sim_collective_op_parse (const char *s, SimCollectiveOp *op, GError **error)
{
  char buf[32];
  gsize k = 0;
  for (const char *c = s ? s : ""; *c && k + 1 < sizeof buf; c++)
    if (*c != '_' && *c != '-')
      buf[k++] = g_ascii_tolower (*c);
  buf[k] = '\0';
  for (int i = 0; i < SIM_COLLECTIVE_OP_COUNT; i++)
    if (strcmp (buf, op_names[i]) == 0)
      {
        *op = i;
        return TRUE;
      }
  g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
               "unknown collective '%s': use allreduce, reducescatter, allgather, alltoall, broadcast or sendrecv",
               s ? s : "");
  return FALSE;
}

gboolean
sim_collective_algo_parse (const char *s, SimCollectiveAlgo *algo, GError **error)
{
  for (int i = 0; i < SIM_COLLECTIVE_ALGO_COUNT; i++)
    if (s && g_ascii_strcasecmp (s, algo_names[i]) == 0)
      {
        *algo = i;
        return TRUE;
      }
  g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
               "unknown collective algorithm '%s': use auto, ring, tree, nvls, hier, direct or collnet", s ? s : "");
  return FALSE;
}

/* ---- group shape ---------------------------------------------------------------------------- */

static gint64
route_latency (const SimTopology *topo, int src, int dst)
{
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  int k = sim_topology_route (topo, src, dst, 0, links);
  return sim_topology_path_latency_ns (topo, links, k);
}

gboolean
sim_collective_shape (const SimTopology *topo, const int *gpus, int n_gpus, SimCollectiveShape *out,
                      GError **error)
{
  g_return_val_if_fail (topo != NULL && out != NULL, FALSE);
  SimTopologySummary sum;
  sim_topology_summarize (topo, &sum);
  if (n_gpus < 1 || gpus == NULL)
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                   "collective group is empty: give at least one GPU");
      return FALSE;
    }
  memset (out, 0, sizeof *out);
  g_autoptr (GHashTable) per_domain = g_hash_table_new (NULL, NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  for (int i = 0; i < n_gpus; i++)
    {
      if (gpus[i] < 0 || gpus[i] >= sum.gpus)
        {
          g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                       "collective group member %d is GPU %d, outside the cluster's 0..%d", i, gpus[i],
                       sum.gpus - 1);
          return FALSE;
        }
      if (!g_hash_table_add (seen, GINT_TO_POINTER (gpus[i] + 1)))
        {
          g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                       "collective group lists GPU %d twice: give each GPU once", gpus[i]);
          return FALSE;
        }
      gpointer key = GINT_TO_POINTER (sim_topology_domain_of (topo, gpus[i]) + 1);
      int c = GPOINTER_TO_INT (g_hash_table_lookup (per_domain, key)) + 1;
      g_hash_table_insert (per_domain, key, GINT_TO_POINTER (c));
      out->ranks_per_domain = MAX (out->ranks_per_domain, c);
    }
  out->ranks = n_gpus;
  out->domains = g_hash_table_size (per_domain);
  out->uniform = out->domains * out->ranks_per_domain == n_gpus;
  /* Per-GPU rates from the links (the cluster is homogeneous): first NVLink up-link, first NIC up-link
   * times NICs per GPU. Links are numbered kind by kind, so the first of a kind follows the counts of
   * the kinds before it; a scan is the fallback should a topology number them otherwise. */
  int n_links = sim_topology_n_links (topo);
  const SimLinkKind wanted[3] = { SIM_LINK_NVLINK_UP, SIM_LINK_NIC_UP, SIM_LINK_MESH };
  double bw[3] = { 0, 0, 0 };
  for (int w = 0; w < 3; w++)
    {
      int first = 0;
      for (int k = 0; k < (int) wanted[w]; k++)
        first += sum.links_by_kind[k];
      if (sum.links_by_kind[wanted[w]] == 0)
        continue;
      if (first < n_links && sim_topology_link (topo, first)->kind == wanted[w])
        bw[w] = sim_topology_link (topo, first)->bandwidth_bytes_per_s;
      else
        for (int l = 0; l < n_links && bw[w] == 0; l++)
          if (sim_topology_link (topo, l)->kind == wanted[w])
            bw[w] = sim_topology_link (topo, l)->bandwidth_bytes_per_s;
    }
  /* A mesh domain: the group's members of a domain reach each other over L - 1 direct links. */
  gboolean mesh = sim_topology_cluster (topo)->mesh;
  out->nvlink_bw_bytes_per_s = mesh ? bw[2] * MAX (out->ranks_per_domain - 1, 1) : bw[0];
  out->nic_bw_bytes_per_s = bw[1] * sim_topology_cluster (topo)->nics_per_gpu;
  out->nvls = sim_topology_cluster (topo)->nvls && !mesh;
  out->sharp = sim_collective_fabric_reduces (sim_topology_cluster (topo), sim_topology_fabric (topo));
  /* Latencies: a pair of the group in one domain, and one across domains, when there is one. */
  int d0 = sim_topology_domain_of (topo, gpus[0]);
  for (int i = 1; i < n_gpus; i++)
    {
      gboolean same = sim_topology_domain_of (topo, gpus[i]) == d0;
      if (same && out->nvlink_latency_ns == 0)
        out->nvlink_latency_ns = route_latency (topo, gpus[0], gpus[i]);
      if (!same && out->net_latency_ns == 0)
        out->net_latency_ns = route_latency (topo, gpus[0], gpus[i]);
    }
  return TRUE;
}

gboolean
sim_collective_fabric_reduces (const SimClusterSpec *cluster, const SimFabricSpec *fabric)
{
  return fabric->sharp && cluster->nics_per_gpu > 0 && !cluster->mesh;
}

void
sim_collective_link_capacities (const SimTopology *topo, const SimCollectiveProfile *profile, double *out)
{
  int n = sim_topology_n_links (topo);
  for (int l = 0; l < n; l++)
    {
      const SimLink *link = sim_topology_link (topo, l);
      gboolean nv = link->kind == SIM_LINK_NVLINK_UP || link->kind == SIM_LINK_NVLINK_DOWN || link->kind == SIM_LINK_MESH;
      out[l] = link->bandwidth_bytes_per_s * (nv ? profile->nvlink_eff : profile->nic_eff);
    }
}

/* ---- plans ---------------------------------------------------------------------------------- */

typedef struct {
  int links_off, n_links;
  double frac;                 /* bytes = frac * S */
  double weight;               /* its share weight: the NCCL channels it stands for */
  SimFlowPath *path;           /* registered with the net at its first start */
} PlanFlow;

typedef struct {
  int first_flow, n_flows;
  gint64 latency_ns;
} PlanPhase;

/* A group: its members, shape, and members grouped by domain (domain-major, each domain's members in
 * the caller's order), which is the ring order of channel 0. */
typedef struct SimCollectiveGroup Group;
struct SimCollectiveGroup {
  int *gpus;
  int n;
  guint hash;
  /* first, beside n: a start reads these and the shape only on a memo miss */
  struct Start *starts;        /* memo of recent starts, allocated on first start */
  guint8 memo_bits;            /* it holds 1 << memo_bits of them */
  guint32 memo_misses;
  SimCollectiveShape shape;
  int *by_domain;              /* n GPUs */
  int *domain_start;           /* domains + 1 offsets into by_domain */
};

typedef struct {
  const Group *group;
  SimCollectiveOp op;
  SimCollectiveAlgo algo;
  GArray *links;               /* guint32 */
  GArray *flows;               /* PlanFlow */
  GArray *phases;              /* PlanPhase */
  double weight;               /* weight of the flows begun next */
} Plan;

typedef struct Run Run;
static void merged_free (gpointer p);

struct Queued {
  SimFlowPath *path;
  double bytes, weight;
  int order;
};

/* What a start of (op, requested algorithm, bytes) on a group works out before it runs: a pure
 * function of them, the group's shape and the profile. The runner repeats the same few collectives
 * millions of times per step (every sibling group, every layer), so each group keeps the last
 * 2^START_MEMO_BITS of them, direct-mapped, and 2^START_MEMO_BITS_MORE once it has missed
 * START_MEMO_GROW times: a ZeRO-3 group cycles through a gather and a reduce-scatter of each of a
 * layer's tensors (the deck: 6.0 M misses in 58 M starts with 8 entries, 63 k with 32, 6.0 M
 * with 16). */
#define START_MEMO_BITS 3
#define START_MEMO_BITS_MORE 5
#define START_MEMO_GROW 256
struct Start {
  double bytes;                /* the key (with op and algo_req); bytes < 0: empty entry */
  SimCollectiveOp op;
  SimCollectiveAlgo algo_req;
  SimCollectiveAlgo algo;
  Plan *plan;
  double run_bytes;            /* the flows' bytes (LL: inflated by 1 / ll_bw_fraction) */
  gint64 fill_ns;              /* Run.fill_ns */
  gint64 total_ns;             /* >= 0: latency-bound, finishes after this without flows */
  gint64 first_ns;             /* phase 0's latency and the fill (with phases) */
  guint n_phases;              /* the plan's */
  gint64 merge_ns;             /* >= 0: one phase with flows, whose start waits this long (its latency
                                * and the fill), so starts of equal merge_ns may share an event
                                * (sim_collective_start_many); -1: started on its own */
};

/* The bundles of a start event are a pure function of what it starts: each run's (plan, phase,
 * bytes), its signature. The runner repeats the same events tens of thousands of times per step
 * (a DeepSeek-V3 MoE all-to-all: 8,064 flows in two bundles), so the bundles of up to
 * 2^BUNDLE_MEMO_BITS signatures are kept, in two-way sets (two signatures that alternate, as the
 * two directions of DeepSeek-V3's DualPipe do, may share a set; the older one makes room), and a
 * repeat starts them as they are instead of queueing, grouping and hashing its flows again. */
#define BUNDLE_MEMO_BITS 6
typedef struct {
  const Plan *plan;
  int phase;
  double bytes;
} SigItem;

typedef struct {
  SimFlowPath *path;           /* one flow's path, or a bundle's union path */
  double bytes, weight;
  gboolean bundle;
} MemoBundle;

typedef struct {
  guint64 hash;
  gboolean valid;
  SigItem *sig;
  int n_sig, cap_sig;
  MemoBundle *b;
  int n_b, cap_b;
  int n_flows;
  guint64 used;                /* SimCollective.memo_clock when last used */
} BundleMemo;

struct SimCollective {
  SimEngine *engine;
  SimFlowNet *net;
  const SimTopology *topo;
  SimCollectiveProfile profile;
  GHashTable *groups;          /* Group* -> Group* */
  GHashTable *plans;           /* Plan* -> Plan* */
  GPtrArray *free_runs;
  GPtrArray *free_batches;     /* Batch and Merged of sim_collective_start_many, recycled */
  GPtrArray *free_merged;
  guint32 *route_load;         /* per link: routes of cached plans through it */
  int active;
  guint64 flows_started;
  struct Queued *queued;       /* flows of one start event, grouped into bundles before they start */
  int n_queued, cap_queued;
  SimFlowPath **bundle;
  int cap_bundle;
  gboolean batched;            /* sim_collective_set_batched */
  BundleMemo memo[1 << BUNDLE_MEMO_BITS]; /* two-way sets */
  guint64 memo_clock;
  SigItem *sig;                /* the runs of the start event being made */
  int cap_sig;
};

struct Run {
  SimCollective *owner;
  const Plan *plan;
  double bytes;
  gint64 fill_ns;              /* added to the first phase's latency: the pipeline fill for this size
                                * (Simple), or LL's latency less Simple's */
  int phase;
  int pending;
  SimFlowDoneFn done;
  gpointer user;
  guint64 arg;
};

static guint
hash_gpus (const int *gpus, int n)
{
  guint h = 2166136261u;
  for (int i = 0; i < n; i++)
    h = (h ^ (guint) gpus[i]) * 16777619u;
  return h;
}

static guint
group_hash (gconstpointer p)
{
  return ((const Group *) p)->hash;
}

static gboolean
group_equal (gconstpointer a, gconstpointer b)
{
  const Group *x = a, *y = b;
  return x->n == y->n && memcmp (x->gpus, y->gpus, sizeof (int) * x->n) == 0;
}

static void
group_free (gpointer p)
{
  Group *g = p;
  g_free (g->gpus);
  g_free (g->by_domain);
  g_free (g->domain_start);
  g_free (g->starts);
  g_free (g);
}

static guint
plan_hash (gconstpointer p)
{
  const Plan *x = p;
  return g_direct_hash (x->group) ^ ((guint) x->op * 31u + (guint) x->algo * 1009u);
}

static gboolean
plan_equal (gconstpointer a, gconstpointer b)
{
  const Plan *x = a, *y = b;
  return x->group == y->group && x->op == y->op && x->algo == y->algo;
}

static void
plan_free (gpointer p)
{
  Plan *x = p;
  g_array_free (x->links, TRUE);
  g_array_free (x->flows, TRUE);
  g_array_free (x->phases, TRUE);
  g_free (x);
}

typedef struct {
  int gpu, domain, order;
} Member;

static int
member_cmp (gconstpointer a, gconstpointer b)
{
  const Member *x = a, *y = b;
  if (x->domain != y->domain)
    return x->domain < y->domain ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

static const Group *
group_get (SimCollective *c, const int *gpus, int n, GError **error)
{
  Group key = { .gpus = (int *) gpus, .n = n, .hash = hash_gpus (gpus, n) };
  Group *g = g_hash_table_lookup (c->groups, &key);
  if (g)
    return g;
  SimCollectiveShape shape;
  if (!sim_collective_shape (c->topo, gpus, n, &shape, error))
    return NULL;
  g = g_new0 (Group, 1);
  g->gpus = g_memdup2 (gpus, sizeof (int) * n);
  g->n = n;
  g->hash = key.hash;
  g->shape = shape;
  Member *m = g_new (Member, n);
  for (int i = 0; i < n; i++)
    m[i] = (Member) { gpus[i], sim_topology_domain_of (c->topo, gpus[i]), i };
  qsort (m, n, sizeof *m, member_cmp);
  g->by_domain = g_new (int, n);
  g->domain_start = g_new (int, shape.domains + 1);
  int d = -1;
  for (int i = 0; i < n; i++)
    {
      if (i == 0 || m[i].domain != m[i - 1].domain)
        g->domain_start[++d] = i;
      g->by_domain[i] = m[i].gpu;
    }
  g->domain_start[shape.domains] = n;
  g_free (m);
  g_hash_table_add (c->groups, g);
  return g;
}

/* Route choice: among up to ROUTE_TRIES ECMP hashes, the route whose busiest link carries the fewest routes
 * planned so far (ties: the first). This stands for the balanced static routing of an InfiniBand subnet
 * manager (fat-tree routing spreads the routes of each leaf over its up-links) rather than random
 * hashing, which would let two ring edges collide on one up-link and halve a whole ring. Loads count
 * routes of every plan built so far, whether or not those collectives overlap in time. */
#define ROUTE_TRIES 64

static void
plan_add_route (SimCollective *c, Plan *p, int src, int dst, guint32 hash)
{
  guint32 links[SIM_TOPOLOGY_MAX_HOPS], best[SIM_TOPOLOGY_MAX_HOPS];
  int k = sim_topology_route (c->topo, src, dst, hash, links), best_k = k;
  memcpy (best, links, sizeof (guint32) * k);
  /* Through the fabric ECMP choices exist, unless adaptive routing already spreads every flow. */
  if (k > 2 && sim_topology_fabric (c->topo)->routing == SIM_ROUTING_STATIC)
    {
      /* The end links (NICs) are on every candidate: once a route is no busier than they are, stop. */
      guint32 floor = MAX (c->route_load[links[0]], c->route_load[links[k - 1]]);
      guint64 best_load = G_MAXUINT64;
      for (int t = 0; t < ROUTE_TRIES && (best_load >> 32) > floor; t++)
        {
          int kt = sim_topology_route (c->topo, src, dst, hash + (guint32) t * 0x9E3779B9u, links);
          /* Busiest link first, then the total: links every candidate shares (the NICs) must not hide
           * the difference in the switch links. */
          guint32 mx = 0, sum = 0;
          for (int i = 0; i < kt; i++)
            {
              mx = MAX (mx, c->route_load[links[i]]);
              sum += c->route_load[links[i]];
            }
          guint64 load = ((guint64) mx << 32) | sum;
          if (load < best_load)
            {
              best_load = load;
              best_k = kt;
              memcpy (best, links, sizeof (guint32) * kt);
            }
        }
    }
  for (int i = 0; i < best_k; i++)
    c->route_load[best[i]]++;
  g_array_append_vals (p->links, best, best_k);
}

static void
plan_begin_phase (Plan *p, gint64 latency_ns)
{
  PlanPhase ph = { (int) p->flows->len, 0, latency_ns };
  g_array_append_val (p->phases, ph);
}

static void
plan_begin_flow (Plan *p)
{
  PlanFlow f = { (int) p->links->len, 0, 0, p->weight, NULL };
  g_array_append_val (p->flows, f);
  g_array_index (p->phases, PlanPhase, p->phases->len - 1).n_flows++;
}

static void
plan_end_flow (Plan *p, double frac)
{
  PlanFlow *f = &g_array_index (p->flows, PlanFlow, p->flows->len - 1);
  f->n_links = (int) p->links->len - f->links_off;
  f->frac = frac;
}

static int
gcd_int (int a, int b)
{
  while (b)
    {
      int t = a % b;
      a = b;
      b = t;
    }
  return a;
}

static void plan_single_flow (SimCollective *c, Plan *p, int src, int dst, double frac, guint32 hash);

/* The walk of channel k through a domain's l members (local indices, starting at k mod l). Through a
 * switch: k, k+1, ... In a mesh every hop is a direct link, so the channels must walk different
 * links, as RCCL's rings over the fully connected Infinity Fabric do: for even l = 2m, Walecki's
 * zigzags i, i+1, i-1, i+2, i-2, ..., i+m (i < m) are m Hamiltonian paths that together use every
 * pair once, and each run both ways gives l directed paths that use every directed link once;
 * channel k < m takes zigzag k forward, channel k >= m zigzag k - m backward (which also starts at
 * k). For odd l, strides prime to l (each visits every member). */
static void
mesh_walk (const SimCollective *c, int k, int l, int *local)
{
  k = ((k % l) + l) % l;
  if (!sim_topology_cluster (c->topo)->mesh || l < 3)
    {
      for (int i = 0; i < l; i++)
        local[i] = (k + i) % l;
      return;
    }
  if (l % 2 == 0)
    {
      int m = l / 2, i0 = k < m ? k : k - m;
      for (int j = 0; j < l; j++)
        {
          int step = (j + 1) / 2, v = j == 0 ? i0 : j % 2 ? i0 + step : i0 - step;
          local[k < m ? j : l - 1 - j] = ((v % l) + l) % l;
        }
      return;
    }
  int coprime = 0, pick, stride = 1;
  for (int s = 1; s < l; s++)
    coprime += (int) (gcd_int (s, l) == 1);
  pick = k % coprime;
  for (int s = 1; s < l; s++)
    if (gcd_int (s, l) == 1 && pick-- == 0)
      {
        stride = s;
        break;
      }
  for (int i = 0; i < l; i++)
    local[i] = (k + i * stride) % l;
}

/* Ring order of channel ch: domains in order, each entered at local index (ch - d) mod L_d and walked
 * from there (mesh_walk), so through a switch a domain is left at the local index (rail) the next
 * one is entered at. */
static void
ring_order (const SimCollective *c, const Group *g, int ch, int *order, int *local)
{
  int k = 0;
  for (int d = 0; d < g->shape.domains; d++)
    {
      int s = g->domain_start[d], l = g->domain_start[d + 1] - s;
      mesh_walk (c, ch - d, l, local);
      for (int i = 0; i < l; i++)
        order[k++] = g->by_domain[s + local[i]];
    }
}

/* A mesh domain's members exchange directly: one flow per ordered pair, each carrying frac of S, so
 * every member uses its m - 1 links at once (RCCL's rings over the fully connected Infinity Fabric
 * reach 313 of the 448 GB/s a GPU's seven links carry: stas00/ml-engineering network/README.md). */
static void
plan_mesh_flows (SimCollective *c, Plan *p, const int *members, int m, double frac, guint32 salt)
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++)
      if (i != j)
        plan_single_flow (c, p, members[i], members[j], frac, salt + (guint32) (i * m + j));
}

/* One flow over the routes of a ring (closed) or chain (open) through order[0..m). */
static void
plan_ring_flow (SimCollective *c, Plan *p, const int *order, int m, gboolean closed, double frac, guint32 salt)
{
  plan_begin_flow (p);
  int edges = closed ? m : m - 1;
  for (int i = 0; i < edges; i++)
    plan_add_route (c, p, order[i], order[(i + 1) % m], salt + (guint32) i * 2654435761u);
  plan_end_flow (p, frac);
}

static void
plan_single_flow (SimCollective *c, Plan *p, int src, int dst, double frac, guint32 hash)
{
  plan_begin_flow (p);
  plan_add_route (c, p, src, dst, hash);
  plan_end_flow (p, frac);
}

/* The NVLink up-link (GPU -> switch) or down-link of gpu, found on a route to a domain peer. */
static gboolean
nvlink_of (SimCollective *c, const Group *g, int gpu, gboolean up, guint32 *out)
{
  int peer = g->gpus[0] == gpu ? g->gpus[1] : g->gpus[0];
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  int k = up ? sim_topology_route (c->topo, gpu, peer, 0, links) : sim_topology_route (c->topo, peer, gpu, 0, links);
  for (int i = 0; i < k; i++)
    {
      int j = up ? i : k - 1 - i;
      SimLinkKind kind = sim_topology_link (c->topo, links[j])->kind;
      if (kind == (up ? SIM_LINK_NVLINK_UP : SIM_LINK_NVLINK_DOWN))
        {
          *out = links[j];
          return TRUE;
        }
    }
  return FALSE;
}

static Plan *
plan_build (SimCollective *c, const Group *g, SimCollectiveOp op, SimCollectiveAlgo algo)
{
  const SimCollectiveShape *s = &g->shape;
  const SimCollectiveProfile *pr = &c->profile;
  int n = g->n, L = s->ranks_per_domain, D = s->domains;
  Plan *p = g_new0 (Plan, 1);
  p->group = g;
  p->op = op;
  p->algo = algo;
  p->links = g_array_new (FALSE, FALSE, sizeof (guint32));
  p->flows = g_array_new (FALSE, FALSE, sizeof (PlanFlow));
  p->phases = g_array_new (FALSE, FALSE, sizeof (PlanPhase));
  int *order = g_new (int, n), *local = g_new (int, n);
  gint64 nv = pr->nvlink_step_latency_ns + s->nvlink_latency_ns;
  gint64 net = pr->net_step_latency_ns + s->net_latency_ns;
  gint64 base = pr->base_latency_ns[algo];
  /* Flow weights (NCCL channels): inside one domain a collective runs nvlink_channels; across
   * domains net_channels_per_nic on each rail it uses, all of which also cross the NVLink ports. */
  double k_nv = sim_collective_nvlink_channels (pr), k_nic = sim_collective_net_channels (pr);
  p->weight = D > 1 ? k_nic : k_nv;
  if (n <= 1)
    goto out;
  switch (algo)
    {
    case SIM_COLLECTIVE_ALGO_RING:
      {
        int ch = pr->channels > 0 ? pr->channels : (D > 1 ? L : 1);
        p->weight = D > 1 ? k_nic * L / ch : k_nv / ch;
        gboolean bcast = op == SIM_COLLECTIVE_BROADCAST;
        double frac = (bcast ? 1.0 : sim_alphabeta_busbw_factor (op, n)) / ch;
        plan_begin_phase (p, sim_alphabeta_latency_ns (op, algo, s, pr));
        if (D == 1 && !bcast && sim_topology_cluster (c->topo)->mesh)
          {
            p->weight = k_nv / (n - 1);
            plan_mesh_flows (c, p, g->by_domain, n, sim_alphabeta_busbw_factor (op, n) / (n - 1), g->hash);
            break;
          }
        for (int k = 0; k < ch; k++)
          {
            ring_order (c, g, k, order, local);
            if (bcast)
              {
                /* Chain from the root: rotate the ring to start there. */
                int r = 0;
                while (order[r] != g->gpus[0])
                  r++;
                int *chain = g_new (int, n);
                for (int i = 0; i < n; i++)
                  chain[i] = order[(r + i) % n];
                plan_ring_flow (c, p, chain, n, FALSE, frac, g->hash + (guint32) k);
                g_free (chain);
              }
            else
              plan_ring_flow (c, p, order, n, TRUE, frac, g->hash + (guint32) k);
          }
      }
      break;
    case SIM_COLLECTIVE_ALGO_TREE:
      {
        /* NCCL's tree: per channel, a double binary tree over the domains whose head in domain d is
         * its member of local index ch mod L_d, chained to the other members (head, next, ...). Reduce
         * up and broadcast down are pipelined, so in steady state every edge carries S/(2C) each way
         * at the tree's common rate: one flow per tree and channel over all its routes both ways (a
         * link used by several edges is listed, and loaded, that many times), as for the ring. */
        int ch = D > 1 ? (pr->channels > 0 ? pr->channels : L) : 1;
        p->weight = (D > 1 ? k_nic * L / ch : k_nv) / 2;  /* two trees per channel */
        plan_begin_phase (p, sim_alphabeta_latency_ns (op, algo, s, pr));
        for (int k = 0; k < ch; k++)
          for (int t = 0; t < 2; t++)
            {
              plan_begin_flow (p);
              for (int d = 0; d < D; d++)
                {
                  const int *m = g->by_domain + g->domain_start[d];
                  int l = g->domain_start[d + 1] - g->domain_start[d];
                  mesh_walk (c, k, l, local);
                  for (int i = 0; i + 1 < l; i++)
                    {
                      int a = m[local[i]], b = m[local[i + 1]];
                      guint32 h = g->hash + (guint32) (k * 131 + t * 17 + i) * 2654435761u;
                      plan_add_route (c, p, b, a, h);          /* up the chain toward the head */
                      plan_add_route (c, p, a, b, h + 7919u);  /* down */
                    }
                }
              for (int r = 0; r < D; r++)
                {
                  int up = sim_alphabeta_btree_parent (r, D);
                  if (up < 0)
                    continue;
                  int da = sim_alphabeta_dtree_rank (t, r, D), db = sim_alphabeta_dtree_rank (t, up, D);
                  int la = g->domain_start[da + 1] - g->domain_start[da];
                  int lb = g->domain_start[db + 1] - g->domain_start[db];
                  int a = g->by_domain[g->domain_start[da] + k % la], b = g->by_domain[g->domain_start[db] + k % lb];
                  guint32 h = g->hash + (guint32) (k * 131 + t * 17 + r) * 40503u;
                  plan_add_route (c, p, a, b, h);
                  plan_add_route (c, p, b, a, h + 7919u);
                }
              plan_end_flow (p, 0.5 / ch);
            }
      }
      break;
    case SIM_COLLECTIVE_ALGO_NVLS:
      {
        /* multimem ld_reduce + st: each GPU serves S of reads and receives S/n of reduced data, sends its
         * S/n reduced shard and receives S of multicast (all-reduce = both); RS = the first, AG = the second. */
        double up = op == SIM_COLLECTIVE_ALLREDUCE ? 1.0 + 1.0 / n : op == SIM_COLLECTIVE_REDUCE_SCATTER ? 1.0 : 1.0 / n;
        double down = op == SIM_COLLECTIVE_ALLREDUCE ? 1.0 + 1.0 / n : op == SIM_COLLECTIVE_REDUCE_SCATTER ? 1.0 / n : 1.0;
        plan_begin_phase (p, sim_alphabeta_latency_ns (op, algo, s, pr));
        for (int i = 0; i < n; i++)
          {
            guint32 l;
            if (nvlink_of (c, g, g->gpus[i], TRUE, &l))
              {
                plan_begin_flow (p);
                g_array_append_val (p->links, l);
                plan_end_flow (p, up / pr->nvls_eff);
              }
            if (nvlink_of (c, g, g->gpus[i], FALSE, &l))
              {
                plan_begin_flow (p);
                g_array_append_val (p->links, l);
                plan_end_flow (p, down / pr->nvls_eff);
              }
          }
      }
      break;
    case SIM_COLLECTIVE_ALGO_HIER:
      {
        int passes = op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1;
        double intra = (double) (L - 1) / L;
        double inter = (double) passes * (D - 1) / D / L;
        gint64 lat_intra = base + (L - 1) * nv, lat_inter = base + passes * (D - 1) * net;
        for (int ph = 0; ph < 3; ph++)
          {
            gboolean is_intra = ph != 1;
            if ((ph == 0 && op == SIM_COLLECTIVE_ALLGATHER) || (ph == 2 && op == SIM_COLLECTIVE_REDUCE_SCATTER))
              continue;
            /* Each phase pays the base latency (as sim_alphabeta_latency_ns counts it). */
            plan_begin_phase (p, is_intra ? lat_intra : lat_inter);
            p->weight = is_intra ? k_nv : k_nic;
            if (is_intra && sim_topology_cluster (c->topo)->mesh)
              {
                p->weight = k_nv / MAX (L - 1, 1);
                for (int d = 0; d < D; d++)
                  plan_mesh_flows (c, p, g->by_domain + g->domain_start[d], L, intra / MAX (L - 1, 1),
                                   g->hash + (guint32) d);
              }
            else if (is_intra)
              for (int d = 0; d < D; d++)
                plan_ring_flow (c, p, g->by_domain + g->domain_start[d], L, TRUE, intra, g->hash + (guint32) d);
            else
              for (int j = 0; j < L; j++)
                {
                  for (int d = 0; d < D; d++)
                    order[d] = g->by_domain[g->domain_start[d] + j];
                  plan_ring_flow (c, p, order, D, TRUE, inter, g->hash + (guint32) j * 40503u);
                }
          }
      }
      break;
    case SIM_COLLECTIVE_ALGO_COLLNET:
      {
        /* NCCL CollNet Direct: the local scatter, the shard's round trip through the reducing switches
         * and the local gather pipeline chunk by chunk, so one phase whose flows all run at once. */
        double eff = pr->collnet_eff > 0 ? pr->collnet_eff : 1.0;
        int npg = MAX (sim_topology_cluster (c->topo)->nics_per_gpu, 1);
        plan_begin_phase (p, sim_alphabeta_latency_ns (op, algo, s, pr));
        if (L > 1) /* NVSwitch domains only (a mesh has no sharp: sim_collective_shape) */
          {
            p->weight = k_nv;
            for (int d = 0; d < D; d++)
              plan_ring_flow (c, p, g->by_domain + g->domain_start[d], L, TRUE, 2.0 * (L - 1) / L / eff,
                              g->hash + (guint32) d);
          }
        p->weight = k_nic;
        for (int i = 0; i < n; i++)
          for (int k = 0; k < npg; k++)
            {
              int up = sim_topology_nic_link (c->topo, g->gpus[i], k, TRUE);
              int down = sim_topology_nic_link (c->topo, g->gpus[i], k, FALSE);
              if (up < 0 || down < 0)
                continue;
              plan_begin_flow (p);
              guint32 l = (guint32) up;
              g_array_append_val (p->links, l);
              l = (guint32) down;
              g_array_append_val (p->links, l);
              plan_end_flow (p, 1.0 / L / npg / eff);
            }
      }
      break;
    case SIM_COLLECTIVE_ALGO_DIRECT:
      plan_begin_phase (p, sim_alphabeta_latency_ns (op, algo, s, pr));
      if (op == SIM_COLLECTIVE_SENDRECV)
        {
          p->weight = sim_collective_p2p_weight (pr, c->topo, g->gpus[0], g->gpus[1], 1);
          plan_single_flow (c, p, g->gpus[0], g->gpus[1], 1.0, g->hash);
        }
      else
        for (int i = 0; i < n; i++)
          for (int j = 0; j < n; j++)
            if (i != j)
              {
                p->weight = sim_collective_p2p_weight (pr, c->topo, g->gpus[i], g->gpus[j], n - 1);
                plan_single_flow (c, p, g->gpus[i], g->gpus[j], 1.0 / n, g->hash + (guint32) (i * n + j));
              }
      break;
    case SIM_COLLECTIVE_ALGO_AUTO:
    case SIM_COLLECTIVE_ALGO_COUNT:
    default:
      g_assert_not_reached ();
    }
out:
  g_free (order);
  g_free (local);
  return p;
}

double
sim_collective_nvlink_channels (const SimCollectiveProfile *pr)
{
  return pr->nvlink_channels > 0 ? pr->nvlink_channels : 32.0;
}

double
sim_collective_net_channels (const SimCollectiveProfile *pr)
{
  return pr->net_channels_per_nic > 0 ? pr->net_channels_per_nic : 2.0;
}

double
sim_collective_p2p_weight (const SimCollectiveProfile *pr, const SimTopology *topo, int src, int dst, int peers)
{
  gboolean local = sim_topology_domain_of (topo, src) == sim_topology_domain_of (topo, dst);
  return (local ? sim_collective_nvlink_channels (pr) : sim_collective_net_channels (pr)) / MAX (peers, 1);
}

/* ---- running ---------------------------------------------------------------------------------- */

SimCollective *
sim_collective_new (SimEngine *engine, SimFlowNet *net, const SimTopology *topo, const SimCollectiveProfile *profile)
{
  g_return_val_if_fail (engine != NULL && net != NULL && topo != NULL && profile != NULL, NULL);
  SimTopologySummary sum;
  sim_topology_summarize (topo, &sum);
  /* The flow net needs positive capacities (sim_collective_link_capacities): efficiencies are set. */
  g_return_val_if_fail (profile->nvlink_eff > 0 && (sum.nics == 0 || profile->nic_eff > 0), NULL);
  SimCollective *c = g_new0 (SimCollective, 1);
  c->engine = engine;
  c->net = net;
  c->topo = topo;
  c->profile = *profile;
  c->groups = g_hash_table_new_full (group_hash, group_equal, group_free, NULL);
  c->plans = g_hash_table_new_full (plan_hash, plan_equal, plan_free, NULL);
  c->free_runs = g_ptr_array_new_with_free_func (g_free);
  c->free_batches = g_ptr_array_new_with_free_func (g_free);
  c->free_merged = g_ptr_array_new_with_free_func (merged_free);
  c->route_load = g_new0 (guint32, sim_topology_n_links (topo));
  return c;
}

void
sim_collective_free (SimCollective *c)
{
  if (!c)
    return;
  g_hash_table_destroy (c->plans);
  g_hash_table_destroy (c->groups);
  g_ptr_array_free (c->free_runs, TRUE);
  g_ptr_array_free (c->free_batches, TRUE);
  g_ptr_array_free (c->free_merged, TRUE);
  g_free (c->route_load);
  g_free (c->queued);
  g_free (c->bundle);
  for (int i = 0; i < 1 << BUNDLE_MEMO_BITS; i++)
    {
      g_free (c->memo[i].sig);
      g_free (c->memo[i].b);
    }
  g_free (c->sig);
  g_free (c);
}

void
sim_collective_set_batched (SimCollective *c, gboolean batched)
{
  g_return_if_fail (c != NULL);
  c->batched = batched;
}

gint64
sim_collective_estimate_ns (SimCollective *c, SimCollectiveOp op, SimCollectiveAlgo algo, const int *gpus, int n_gpus,
                            double bytes, SimCollectiveAlgo *algo_used, GError **error)
{
  g_return_val_if_fail (c != NULL, -1);
  if (op < 0 || op >= SIM_COLLECTIVE_OP_COUNT || algo < 0 || algo >= SIM_COLLECTIVE_ALGO_COUNT)
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                   "collective operation %d or algorithm %d is out of range", op, algo);
      return -1;
    }
  const Group *g = group_get (c, gpus, n_gpus, error);
  if (!g)
    return -1;
  gint64 t = -1;
  if (algo == SIM_COLLECTIVE_ALGO_AUTO)
    algo = sim_alphabeta_best (op, &g->shape, &c->profile, bytes, &t);
  else
    t = sim_alphabeta_time_ns (op, algo, &g->shape, &c->profile, bytes);
  if (t < 0)
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_NOT_APPLICABLE,
                   "no closed form for %s/%s over %d GPUs: use --algo auto or another algorithm",
                   sim_collective_op_name (op), sim_collective_algo_name (algo), n_gpus);
      return -1;
    }
  if (algo_used)
    *algo_used = algo;
  return t;
}

int
sim_collective_active (const SimCollective *c)
{
  return c->active;
}

guint64
sim_collective_flows_started (const SimCollective *c)
{
  return c->flows_started;
}

static void run_phase_start (SimEngine *engine, gpointer data, guint64 arg);

static void
run_finish (SimEngine *engine, gpointer data, guint64 arg)
{
  Run *r = data;
  SimCollective *c = r->owner;
  SimFlowDoneFn done = r->done;
  gpointer user = r->user;
  guint64 uarg = r->arg;
  c->active--;
  g_ptr_array_add (c->free_runs, r);
  if (done)
    done (user, uarg);
}

/* Next phase after its latency, or the end. Always through the engine, never from inside a flow
 * callback, so callers may start flows from done. */
static void
run_advance (Run *r)
{
  SimCollective *c = r->owner;
  if ((guint) r->phase >= r->plan->phases->len)
    sim_engine_after (c->engine, 0, run_finish, r, 0);
  else
    sim_engine_after (c->engine, g_array_index (r->plan->phases, PlanPhase, r->phase).latency_ns
                                   + (r->phase == 0 ? r->fill_ns : 0),
                      run_phase_start, r, 0);
}

static void
run_flow_done_many (gpointer user, guint64 arg, int n)
{
  Run *r = user;
  if ((r->pending -= n) == 0)
    {
      r->phase++;
      run_advance (r);
    }
}

static void
run_flow_done (gpointer user, guint64 arg)
{
  run_flow_done_many (user, arg, 1);
}

/* What a start event's flows call as they end: per flow, or per bundle with its count. */
typedef struct {
  SimFlowDoneFn one;
  SimFlowDoneManyFn many;
} Done;

static const Done run_done = { run_flow_done, run_flow_done_many };

/* Queues the flows of phase ph of plan p for a run of `bytes` (each flow's path registered with the
 * net at its first start). */
static void
queue_phase_flows (SimCollective *c, const Plan *p, const PlanPhase *ph, double bytes)
{
  const guint32 *links = (const guint32 *) p->links->data;
  if (c->n_queued + ph->n_flows > c->cap_queued)
    {
      c->cap_queued = MAX (c->n_queued + ph->n_flows, 2 * c->cap_queued);
      c->queued = g_renew (struct Queued, c->queued, c->cap_queued);
    }
  for (int i = 0; i < ph->n_flows; i++)
    {
      PlanFlow *f = &g_array_index (p->flows, PlanFlow, ph->first_flow + i);
      c->flows_started++;
      if (f->path == NULL)
        f->path = sim_flow_net_path (c->net, links + f->links_off, f->n_links);
      c->queued[c->n_queued] = (struct Queued) { f->path, f->frac * bytes, f->weight, c->n_queued };
      c->n_queued++;
    }
}

static int
queued_cmp (const void *a, const void *b)
{
  const struct Queued *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? -1 : 1;
  if (x->weight != y->weight)
    return x->weight < y->weight ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

/* Starts the queued flows, those of one size and weight as one bundle (sim_flow_net_start_bundle:
 * exact, it splits itself where its members stop moving in lockstep): a ring per domain, the
 * sibling groups' rings or send/recv pairs. Bundles start in increasing (bytes, weight), each with
 * its members in queue order. Few distinct keys (an all-to-all's intra- and inter-node flows: two
 * keys over 8,064 flows) are gathered key by key; sorting them instead was 66% of a DeepSeek-V3
 * step's simulation. What starts is written to m (FALSE: a bundle had a member without links and
 * started member by member, which m does not hold). */
#define FEW_KEYS 8

/* p with room for need elements of size bytes (cap updated) */
static gpointer
grow (gpointer p, int *cap, int need, gsize size)
{
  if (need <= *cap)
    return p;
  *cap = MAX (need, 2 * *cap);
  return g_realloc_n (p, (gsize) *cap, size);
}

static gboolean
start_one (SimCollective *c, SimFlowPath **paths, int n, double bytes, double weight, const Done *done,
           gpointer user, BundleMemo *m)
{
  SimFlowPath *u = n >= 2 && bytes > 0 ? sim_flow_net_bundle_path (c->net, paths, n) : NULL;
  if (n >= 2 && u == NULL)
    {
      sim_flow_net_start_bundle (c->net, paths, n, bytes, weight, done->one, user, 0);
      return FALSE;
    }
  if (u != NULL)
    sim_flow_net_start_union (c->net, u, bytes, weight, done->many, user, 0);
  else
    sim_flow_net_start_path (c->net, paths[0], bytes, weight, done->one, user, 0);
  m->b = grow (m->b, &m->cap_b, m->n_b + 1, sizeof *m->b);
  m->b[m->n_b++] = (MemoBundle) { u ? u : paths[0], bytes, weight, u != NULL };
  return TRUE;
}

static inline gboolean
same_key (const struct Queued *a, const struct Queued *b)
{
  return a->bytes == b->bytes && a->weight == b->weight;
}

static gboolean
start_queued (SimCollective *c, const Done *done, gpointer user, BundleMemo *m)
{
  int n = c->n_queued;
  c->n_queued = 0;
  m->n_b = 0;
  if (n > c->cap_bundle)
    {
      c->cap_bundle = MAX (n, 2 * c->cap_bundle);
      c->bundle = g_renew (SimFlowPath *, c->bundle, c->cap_bundle);
    }
  gboolean ok = TRUE;
  struct Queued keys[FEW_KEYS];
  int n_keys = 0;
  for (int i = 0; i < n && n_keys <= FEW_KEYS; i++)
    {
      int k = 0;
      while (k < n_keys && !same_key (&keys[k], &c->queued[i]))
        k++;
      if (k == n_keys && n_keys++ < FEW_KEYS)
        keys[k] = c->queued[i];
    }
  if (n_keys <= FEW_KEYS)
    {
      /* insertion sort of the keys; each bundle takes its members in queue order */
      for (int a = 1; a < n_keys; a++)
        for (int b = a; b > 0 && queued_cmp (&keys[b], &keys[b - 1]) < 0; b--)
          {
            struct Queued t = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = t;
          }
      for (int k = 0; k < n_keys; k++)
        {
          int j = 0;
          for (int i = 0; i < n; i++)
            if (same_key (&c->queued[i], &keys[k]))
              c->bundle[j++] = c->queued[i].path;
          ok &= start_one (c, c->bundle, j, keys[k].bytes, keys[k].weight, done, user, m);
        }
      return ok;
    }
  qsort (c->queued, (gsize) n, sizeof *c->queued, queued_cmp);
  for (int i = 0; i < n;)
    {
      int j = i;
      for (; j < n && same_key (&c->queued[j], &c->queued[i]); j++)
        c->bundle[j - i] = c->queued[j].path;
      ok &= start_one (c, c->bundle, j - i, c->queued[i].bytes, c->queued[i].weight, done, user, m);
      i = j;
    }
  return ok;
}

/* splitmix64's finaliser */
static inline guint64
mix64 (guint64 z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static guint64
sig_hash (const SigItem *sig, int n)
{
  guint64 h = 0;
  for (int i = 0; i < n; i++)
    {
      guint64 bits;
      memcpy (&bits, &sig[i].bytes, sizeof bits);
      h = mix64 (h ^ (guint64) (guintptr) sig[i].plan);
      h = mix64 (h ^ ((guint64) sig[i].phase << 32) ^ bits);
    }
  return h;
}

static gboolean
sig_equal (const SigItem *a, const SigItem *b, int n)
{
  for (int i = 0; i < n; i++)
    if (a[i].plan != b[i].plan || a[i].phase != b[i].phase || a[i].bytes != b[i].bytes)
      return FALSE;
  return TRUE;
}

/* Starts, in one event, the flows of the runs c->sig[0..n_sig) (each its plan's phase at its
 * bytes); returns how many flows. */
static int
start_runs (SimCollective *c, int n_sig, const Done *done, gpointer user)
{
  const SigItem *sig = c->sig;
  if (c->batched)
    {
      int n = 0;
      for (int k = 0; k < n_sig; k++)
        {
          const Plan *p = sig[k].plan;
          const PlanPhase *ph = &g_array_index (p->phases, PlanPhase, sig[k].phase);
          const guint32 *links = (const guint32 *) p->links->data;
          for (int i = 0; i < ph->n_flows; i++)
            {
              PlanFlow *f = &g_array_index (p->flows, PlanFlow, ph->first_flow + i);
              if (f->path == NULL)
                f->path = sim_flow_net_path (c->net, links + f->links_off, f->n_links);
              sim_flow_net_start_batched (c->net, f->path, f->frac * sig[k].bytes, f->weight, done->one, user, 0);
            }
          n += ph->n_flows;
        }
      c->flows_started += (guint64) n;
      return n;
    }
  guint64 h = sig_hash (sig, n_sig);
  /* two ways: the entry that holds it, else the one used longer ago */
  BundleMemo *ways = &c->memo[(h >> (64 - BUNDLE_MEMO_BITS)) & ~(guint64) 1], *m = NULL;
  for (int w = 0; w < 2 && m == NULL; w++)
    if (ways[w].valid && ways[w].hash == h && ways[w].n_sig == n_sig && sig_equal (ways[w].sig, sig, n_sig))
      m = &ways[w];
  c->memo_clock++;
  if (m != NULL)
    {
      m->used = c->memo_clock;
      c->flows_started += (guint64) m->n_flows;
      for (int k = 0; k < m->n_b; k++)
        if (m->b[k].bundle)
          sim_flow_net_start_union (c->net, m->b[k].path, m->b[k].bytes, m->b[k].weight, done->many, user, 0);
        else
          sim_flow_net_start_path (c->net, m->b[k].path, m->b[k].bytes, m->b[k].weight, done->one, user, 0);
      return m->n_flows;
    }
  m = ways[0].used <= ways[1].used ? &ways[0] : &ways[1];
  m->used = c->memo_clock;
  int n = 0;
  for (int i = 0; i < n_sig; i++)
    {
      const PlanPhase *ph = &g_array_index (sig[i].plan->phases, PlanPhase, sig[i].phase);
      queue_phase_flows (c, sig[i].plan, ph, sig[i].bytes);
      n += ph->n_flows;
    }
  m->valid = start_queued (c, done, user, m);
  m->hash = h;
  m->n_flows = n;
  m->sig = grow (m->sig, &m->cap_sig, n_sig, sizeof *m->sig);
  memcpy (m->sig, sig, (gsize) n_sig * sizeof *sig);
  m->n_sig = n_sig;
  return n;
}

static SigItem *
sig_buffer (SimCollective *c, int n)
{
  c->sig = grow (c->sig, &c->cap_sig, n, sizeof *c->sig);
  return c->sig;
}

static void
run_phase_start (SimEngine *engine, gpointer data, guint64 arg)
{
  Run *r = data;
  SimCollective *c = r->owner;
  const PlanPhase *ph = &g_array_index (r->plan->phases, PlanPhase, r->phase);
  if (ph->n_flows == 0)
    {
      r->phase++;
      run_advance (r);
      return;
    }
  r->pending = ph->n_flows;
  sig_buffer (c, 1)[0] = (SigItem) { r->plan, r->phase, r->bytes };
  start_runs (c, 1, &run_done, r);
}

/* Works out a start of (op, algo, bytes) on g: the algorithm (AUTO: the closed form's fastest), the
 * plan, the protocol's latency and bytes, and whether it is latency-bound. */
static gboolean
start_work_out (SimCollective *c, const Group *g, SimCollectiveOp op, SimCollectiveAlgo algo, double bytes,
                struct Start *out, GError **error)
{
  int n_gpus = g->n;
  SimCollectiveAlgo algo_req = algo;
  if (algo == SIM_COLLECTIVE_ALGO_AUTO)
    {
      algo = sim_alphabeta_best (op, &g->shape, &c->profile, bytes, NULL);
      if (algo == SIM_COLLECTIVE_ALGO_AUTO)
        {
          g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_NOT_APPLICABLE,
                       "no algorithm applies to %s over %d GPUs", sim_collective_op_name (op), n_gpus);
          return FALSE;
        }
    }
  else if (!sim_alphabeta_applicable (op, algo, &g->shape))
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_NOT_APPLICABLE,
                   "algorithm %s does not apply to %s over %d GPUs in %d NVLink domain(s)%s: use --algo auto",
                   sim_collective_algo_name (algo), sim_collective_op_name (op), n_gpus, g->shape.domains,
                   algo == SIM_COLLECTIVE_ALGO_NVLS ? " (NVLS needs one domain with NVLink SHARP)" : "");
      return FALSE;
    }
  Plan key = { g, op, algo, NULL, NULL, NULL };
  Plan *p = g_hash_table_lookup (c->plans, &key);
  if (!p)
    {
      p = plan_build (c, g, op, algo);
      g_hash_table_add (c->plans, p);
    }
  *out = (struct Start) { bytes, op, algo_req, algo, p, bytes,
                          sim_alphabeta_fill_ns (op, algo, &g->shape, &c->profile, bytes), -1, 0, p->phases->len,
                          -1 };
  /* The latency before the flows: LL's (ring and tree, one phase) in place of Simple's and the fill,
   * every flow's bytes then at LL's share of the rate (as the closed form: the same links,
   * 1/ll_bw_fraction the bytes); else Simple's and the fill. */
  gint64 lat;
  if (sim_alphabeta_protocol (op, algo, &g->shape, &c->profile, bytes) == SIM_COLLECTIVE_PROTO_LL
      && p->phases->len == 1)
    {
      lat = sim_alphabeta_ll_latency_ns (op, algo, &g->shape, &c->profile);
      out->fill_ns = lat - g_array_index (p->phases, PlanPhase, 0).latency_ns;
      out->run_bytes = bytes / c->profile.ll_bw_fraction;
    }
  else
    lat = sim_alphabeta_latency_ns (op, algo, &g->shape, &c->profile) + out->fill_ns;
  if (bytes > 0)
    {
      /* Latency-bound (the transfer under 1% of the latency, e.g. an FP8 amax reduction of a few
       * hundred bytes): its bytes load no link measurably, so it takes its closed-form time without
       * flows, which would cost a max-min re-solve over every link of a large group for nothing. */
      gint64 total = sim_alphabeta_time_ns (op, algo, &g->shape, &c->profile, bytes);
      if (total >= 0 && lat > 0 && (total - lat) * 100 < lat)
        out->total_ns = total;
    }
  if (p->phases->len > 0)
    out->first_ns = g_array_index (p->phases, PlanPhase, 0).latency_ns + out->fill_ns;
  if (out->total_ns < 0 && p->phases->len == 1 && g_array_index (p->phases, PlanPhase, 0).n_flows > 0)
    out->merge_ns = out->first_ns;
  return TRUE;
}

/* The memo's hash of (op, algo, bytes); a group's slot is its top memo_bits bits. */
static inline guint64
memo_key (SimCollectiveOp op, SimCollectiveAlgo algo, double bytes)
{
  guint64 bits;
  memcpy (&bits, &bytes, sizeof bits);
  return (bits + (guint64) op * 31u + (guint64) algo) * 0x9E3779B97F4A7C15ull;
}

/* The memo slot of a key on g (which has its memo). */
static inline struct Start *
memo_slot (const Group *g, guint64 key)
{
  return &g->starts[key >> (64 - g->memo_bits)];
}

/* The memo entry of (op, algo, bytes) on g, worked out on a miss; NULL with error set if nothing
 * applies. */
static const struct Start *
start_lookup (SimCollective *c, const Group *g, SimCollectiveOp op, SimCollectiveAlgo algo, double bytes,
              GError **error)
{
  Group *gm = (Group *) g; /* the memo is not part of what the group is */
  if (g->starts == NULL || (g->memo_misses == START_MEMO_GROW && g->memo_bits < START_MEMO_BITS_MORE))
    {
      gm->memo_bits = g->starts == NULL ? START_MEMO_BITS : START_MEMO_BITS_MORE;
      g_free (gm->starts);
      gm->starts = g_new (struct Start, 1u << g->memo_bits);
      for (guint i = 0; i < 1u << g->memo_bits; i++)
        g->starts[i].bytes = -1;
    }
  struct Start *st = memo_slot (g, memo_key (op, algo, bytes));
  if (!(st->bytes == bytes && st->op == op && st->algo_req == algo))
    {
      struct Start fresh;
      if (gm->memo_misses < G_MAXUINT32)
        gm->memo_misses++;
      if (!start_work_out (c, g, op, algo, bytes, &fresh, error))
        return NULL;
      *st = fresh;
    }
  return st;
}

/* The arguments of a start that no group or profile can make valid. */
static gboolean
start_args_ok (SimCollectiveOp op, SimCollectiveAlgo algo, const Group *g, double bytes, GError **error)
{
  if (op < 0 || op >= SIM_COLLECTIVE_OP_COUNT || algo < 0 || algo >= SIM_COLLECTIVE_ALGO_COUNT)
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                   "collective operation %d or algorithm %d is out of range", op, algo);
      return FALSE;
    }
  if (!(bytes >= 0) || bytes > 1e18)
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                   "collective size %g bytes is not a size: give 0 or more bytes", bytes);
      return FALSE;
    }
  if (op == SIM_COLLECTIVE_SENDRECV && g->n != 2)
    {
      g_set_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID,
                   "send/recv takes 2 GPUs (source, destination), got %d", g->n);
      return FALSE;
    }
  return TRUE;
}

gboolean
sim_collective_start (SimCollective *c, SimCollectiveOp op, SimCollectiveAlgo algo, const int *gpus, int n_gpus,
                      double bytes, SimFlowDoneFn done, gpointer user, guint64 arg, SimCollectiveAlgo *algo_used,
                      GError **error)
{
  g_return_val_if_fail (c != NULL, FALSE);
  const Group *g = group_get (c, gpus, n_gpus, error);
  return g != NULL && sim_collective_start_group (c, op, algo, g, bytes, done, user, arg, algo_used, error);
}

const SimCollectiveGroup *
sim_collective_group (SimCollective *c, const int *gpus, int n_gpus, GError **error)
{
  g_return_val_if_fail (c != NULL, NULL);
  return group_get (c, gpus, n_gpus, error);
}

gboolean
sim_collective_start_group (SimCollective *c, SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveGroup *g,
                            double bytes, SimFlowDoneFn done, gpointer user, guint64 arg,
                            SimCollectiveAlgo *algo_used, GError **error)
{
  g_return_val_if_fail (c != NULL && g != NULL, FALSE);
  if (!start_args_ok (op, algo, g, bytes, error))
    return FALSE;
  const struct Start *st = start_lookup (c, g, op, algo, bytes, error);
  if (!st)
    return FALSE;
  if (algo_used)
    *algo_used = st->algo;
  Run *r = c->free_runs->len ? g_ptr_array_steal_index_fast (c->free_runs, c->free_runs->len - 1) : g_new (Run, 1);
  *r = (Run) { c, st->plan, st->run_bytes, st->fill_ns, 0, 0, done, user, arg };
  c->active++;
  /* run_advance from phase 0, from the memo (the plan is cold when hundreds of groups start) */
  if (bytes <= 0 || st->n_phases == 0)
    sim_engine_after (c->engine, 0, run_finish, r, 0); /* nothing to move: done now */
  else if (st->total_ns >= 0)
    sim_engine_after (c->engine, st->total_ns, run_finish, r, 0);
  else
    sim_engine_after (c->engine, st->first_ns, run_phase_start, r, 0);
  return TRUE;
}

/* ---- many groups at once ------------------------------------------------------------------------
 * A representative launches the same collective for every sibling group of its stage: hundreds of
 * runs that start together. Those whose plan is one phase (a ring or tree as one flow per channel,
 * a send/recv) with the same latency are run as one: after that latency all their flows start in
 * one event, and one event at the nanosecond the last of them lands ends them all, which is when
 * the last of the separate runs would have ended. The rest (latency-bound, several phases) run on
 * their own. */
typedef struct {
  SimCollective *owner;
  SimFlowDoneFn done;
  gpointer user;
  guint64 arg;
  int outstanding;             /* merged runs and separate runs not yet done */
} Batch;

typedef struct {
  SimCollective *owner;
  Batch *batch;
  gint64 latency_ns;
  GArray *starts;              /* struct Start of its groups (copies: the memo moves on) */
  int pending;                 /* flows in flight */
} Merged;

static void
batch_sub_done (gpointer user, guint64 arg)
{
  Batch *b = user;
  if (--b->outstanding > 0)
    return;
  SimFlowDoneFn done = b->done;
  gpointer u = b->user;
  guint64 a = b->arg;
  g_ptr_array_add (b->owner->free_batches, b);
  if (done)
    done (u, a);
}

static void
merged_free (gpointer p)
{
  Merged *m = p;
  g_array_free (m->starts, TRUE);
  g_free (m);
}

static void
merged_finish (SimEngine *engine, gpointer data, guint64 arg)
{
  Merged *m = data;
  Batch *b = m->batch;
  m->owner->active -= (int) m->starts->len;
  g_ptr_array_add (m->owner->free_merged, m);
  batch_sub_done (b, 0);
}

static void
merged_flow_done_many (gpointer user, guint64 arg, int n)
{
  Merged *m = user;
  if ((m->pending -= n) == 0)
    sim_engine_after (m->owner->engine, 0, merged_finish, m, 0);
}

static void
merged_flow_done (gpointer user, guint64 arg)
{
  merged_flow_done_many (user, arg, 1);
}

static const Done merged_done = { merged_flow_done, merged_flow_done_many };

static void
merged_start (SimEngine *engine, gpointer data, guint64 arg)
{
  Merged *m = data;
  /* Flows end through engine events, never inside a start. */
  SigItem *sig = sig_buffer (m->owner, (int) m->starts->len);
  for (guint k = 0; k < m->starts->len; k++)
    {
      const struct Start *st = &g_array_index (m->starts, struct Start, k);
      sig[k] = (SigItem) { st->plan, 0, st->run_bytes };
    }
  m->pending += start_runs (m->owner, (int) m->starts->len, &merged_done, m);
}

#define MERGE_MAX 8

gboolean
sim_collective_start_many (SimCollective *c, SimCollectiveOp op, const SimCollectiveGroup *const *groups,
                           int n_groups, double bytes, SimFlowDoneFn done, gpointer user, guint64 arg,
                           GError **error)
{
  g_return_val_if_fail (c != NULL && groups != NULL && n_groups > 0, FALSE);
  if (n_groups == 1)
    return sim_collective_start_group (c, op, SIM_COLLECTIVE_ALGO_AUTO, groups[0], bytes, done, user, arg, NULL,
                                       error);
  for (int gi = 0; gi < n_groups; gi++)
    if (!start_args_ok (op, SIM_COLLECTIVE_ALGO_AUTO, groups[gi], bytes, error))
      return FALSE;
  Batch *b = c->free_batches->len ? g_ptr_array_steal_index_fast (c->free_batches, c->free_batches->len - 1)
                                  : g_new (Batch, 1);
  *b = (Batch) { c, done, user, arg, 1 };  /* held until every group is launched */
  Merged *merged[MERGE_MAX];
  int n_merged = 0;
  /* Each group's memo entry is a cache miss of its own (two with the group) at a few hundred
   * groups: fetched a few groups ahead, the misses overlap. */
  guint64 key = memo_key (op, SIM_COLLECTIVE_ALGO_AUTO, bytes);
  for (int gi = 0; gi < n_groups; gi++)
    {
      if (gi + 4 < n_groups)
        __builtin_prefetch (groups[gi + 4]);
      if (gi + 2 < n_groups && groups[gi + 2]->starts != NULL)
        __builtin_prefetch (memo_slot (groups[gi + 2], key));
      const Group *g = groups[gi];
      const struct Start *st = NULL;
      if (bytes > 0)
        {
          st = start_lookup (c, g, op, SIM_COLLECTIVE_ALGO_AUTO, bytes, error);
          if (!st)
            goto fail;
          if (st->merge_ns < 0)
            st = NULL;
        }
      gint64 lat = st ? st->merge_ns : 0;
      int k = 0;
      while (st && k < n_merged && merged[k]->latency_ns != lat)
        k++;
      if (st && k == n_merged && n_merged < MERGE_MAX)
        {
          GArray *starts = NULL;
          if (c->free_merged->len)
            {
              merged[k] = g_ptr_array_steal_index_fast (c->free_merged, c->free_merged->len - 1);
              starts = merged[k]->starts;
              g_array_set_size (starts, 0);
            }
          else
            {
              merged[k] = g_new (Merged, 1);
              starts = g_array_new (FALSE, FALSE, sizeof (struct Start));
            }
          *merged[k] = (Merged) { c, b, lat, starts, 0 };
          n_merged++;
          b->outstanding++;
        }
      if (st && k < n_merged)
        {
          g_array_append_vals (merged[k]->starts, st, 1);
          c->active++;
          continue;
        }
      b->outstanding++;
      if (!sim_collective_start_group (c, op, SIM_COLLECTIVE_ALGO_AUTO, g, bytes, batch_sub_done, b, 0, NULL,
                                       error))
        {
          b->outstanding--;
          goto fail;
        }
    }
  for (int k = 0; k < n_merged; k++)
    sim_engine_after (c->engine, merged[k]->latency_ns, merged_start, merged[k], 0);
  /* Release the hold: every run holds b until an engine event ends it, so this is never the last. */
  b->outstanding--;
  return TRUE;
fail:
  for (int k = 0; k < n_merged; k++)
    {
      c->active -= (int) merged[k]->starts->len;
      g_ptr_array_add (c->free_merged, merged[k]);
      b->outstanding--;
    }
  /* Separate runs already started still hold b; it is freed by the last of them. */
  b->done = NULL;
  batch_sub_done (b, 0);
  return FALSE;
}
