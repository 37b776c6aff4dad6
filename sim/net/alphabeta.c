/* Closed-form alpha-beta collective times; the equations and their derivation are in sim/net/alphabeta.h.
 * Constants come from the SimCollectiveProfile (efficiencies from datasheet line rates and published
 * protocol overheads, latencies from NCCL's Simple-protocol tuning tables), never from the case. */
#include "config.h"
#include <math.h>
#include "sim/net/alphabeta.h"

double
sim_alphabeta_busbw_factor (SimCollectiveOp op, int n)
{
  if (n <= 1)
    return op == SIM_COLLECTIVE_SENDRECV || op == SIM_COLLECTIVE_BROADCAST ? 1.0 : 0.0;
  switch (op)
    {
    case SIM_COLLECTIVE_ALLREDUCE:
      return 2.0 * (n - 1) / n;
    case SIM_COLLECTIVE_REDUCE_SCATTER:
    case SIM_COLLECTIVE_ALLGATHER:
    case SIM_COLLECTIVE_ALLTOALL:
      return (double) (n - 1) / n;
    case SIM_COLLECTIVE_BROADCAST:
    case SIM_COLLECTIVE_SENDRECV:
    case SIM_COLLECTIVE_OP_COUNT:
    default:
      return 1.0;
    }
}

gboolean
sim_alphabeta_applicable (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape)
{
  gboolean reduce_like = op == SIM_COLLECTIVE_ALLREDUCE || op == SIM_COLLECTIVE_REDUCE_SCATTER
                         || op == SIM_COLLECTIVE_ALLGATHER;
  if (op == SIM_COLLECTIVE_SENDRECV && shape->ranks != 2)
    return FALSE;
  switch (algo)
    {
    case SIM_COLLECTIVE_ALGO_RING:
      return reduce_like || op == SIM_COLLECTIVE_BROADCAST;
    case SIM_COLLECTIVE_ALGO_TREE:
      return op == SIM_COLLECTIVE_ALLREDUCE;
    case SIM_COLLECTIVE_ALGO_NVLS:
      return reduce_like && shape->domains == 1 && shape->nvls && shape->ranks > 1;
    case SIM_COLLECTIVE_ALGO_HIER:
      return reduce_like && shape->domains > 1 && shape->uniform && shape->ranks_per_domain > 1;
    case SIM_COLLECTIVE_ALGO_DIRECT:
      return op == SIM_COLLECTIVE_ALLTOALL || op == SIM_COLLECTIVE_SENDRECV;
    case SIM_COLLECTIVE_ALGO_COLLNET:
      /* NCCL runs reduce-scatter and all-gather on CollNet only with a network plugin that has them
       * (tuning.cc: busBw 0 without iallgather/ireducescatter); all-reduce is the case SHARP serves. */
      return op == SIM_COLLECTIVE_ALLREDUCE && shape->sharp && shape->domains > 1 && shape->uniform;
    case SIM_COLLECTIVE_ALGO_AUTO:
    case SIM_COLLECTIVE_ALGO_COUNT:
    default:
      return FALSE;
    }
}

static int
ceil_log2 (int n)
{
  int k = 0;
  while ((1 << k) < n)
    k++;
  return k;
}

/* Ring steps: every step moves one segment one edge. NCCL counts a step as crossing the network when
 * the edge leaves a domain; with D domains a pass of n-1 steps has D-1 such edges on the critical path. */
static void
ring_steps (SimCollectiveOp op, const SimCollectiveShape *s, int *intra, int *inter)
{
  int passes = op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1;
  int steps = passes * (s->ranks - 1);
  int net = s->domains > 1 ? passes * (s->domains - 1) : 0;
  *inter = net;
  *intra = steps - net;
}

/* Aggregate per-rank ring rate over all channels (see the header). */
static double
ring_rate (const SimCollectiveShape *s, const SimCollectiveProfile *p, double bn, double bi)
{
  if (s->domains <= 1)
    return bn;
  int l = s->ranks_per_domain;
  int c = p->channels > 0 ? p->channels : l;
  int exits_max = (c + l - 1) / l;         /* channels leaving a domain at one GPU */
  int intra_max = c - c / l;               /* channels whose next hop from a GPU stays in the domain */
  double r = bi / exits_max;
  if (intra_max > 0)
    r = MIN (r, bn / intra_max);
  return c * r;
}

int
sim_alphabeta_btree_parent (int r, int n)
{
  if (r <= 0 || r >= n)
    return -1;
  int bit = r & -r;
  int up = (r ^ bit) | (bit << 1);
  return up >= n ? (r ^ bit) : up;
}

int
sim_alphabeta_dtree_rank (int t, int r, int n)
{
  if (t == 0 || r < 0)
    return r;
  return n % 2 == 0 ? n - 1 - r : (r + 1) % n;
}

/* Largest number of tree-edge transfers one domain's head sends (= receives) over both trees: its
 * edge to the parent plus one per child, summed over the two trees. */
static int
dtree_max_degree (int d)
{
  if (d <= 1)
    return 0;
  int *deg = g_new0 (int, d);
  for (int t = 0; t < 2; t++)
    for (int r = 0; r < d; r++)
      {
        int up = sim_alphabeta_btree_parent (r, d);
        if (up < 0)
          continue;
        deg[sim_alphabeta_dtree_rank (t, r, d)]++;
        deg[sim_alphabeta_dtree_rank (t, up, d)]++;
      }
  int mx = 0;
  for (int i = 0; i < d; i++)
    mx = MAX (mx, deg[i]);
  g_free (deg);
  return mx;
}

/* Transfer time of the tree all-reduce (NCCL's: a double binary tree over domains whose heads are
 * joined to the other members of their domain by a chain; C channels, each with its own head, S/2
 * per tree per channel). Chain: a GPU in the middle sends S/(2C) up and S/(2C) down per tree, head
 * and tail half that, so over C = L channels 2(L-1)/L S per GPU on NVLink. Tree: a head sends
 * S/(2C) per edge it has in either tree, deg edges at most, on its NIC, head of ceil(C/L) channels. */
static double
tree_time_s (const SimCollectiveShape *s, const SimCollectiveProfile *p, double bytes)
{
  double bn = s->nvlink_bw_bytes_per_s * p->nvlink_eff, bi = s->nic_bw_bytes_per_s * p->nic_eff;
  int l = s->ranks_per_domain, d = s->domains;
  int c = d > 1 ? (p->channels > 0 ? p->channels : l) : 1;
  double t = 0;
  if (l > 1)
    {
      /* Per channel a GPU is middle (2 units), head or tail (1 unit) of the chain; units of S/(2C)
       * per tree, two trees. */
      int worst = 0;
      for (int j = 0; j < l; j++)
        {
          int units = 0;
          for (int k = 0; k < c; k++)
            {
              int pos = ((j - k) % l + l) % l; /* channel k's chain starts at local rank k mod L */
              units += (pos == 0 || pos == l - 1) ? 1 : 2;
            }
          worst = MAX (worst, units);
        }
      t = MAX (t, 2.0 * worst * bytes / (2.0 * c) / bn);
    }
  if (d > 1)
    {
      int heads = (c + l - 1) / l;
      t = MAX (t, heads * dtree_max_degree (d) * bytes / (2.0 * c) / bi);
    }
  return t;
}

/* The latency term for base (per call) and step latencies: the algorithm's steps over NVLink and
 * across the network. A ring that crosses the network takes at least net_floor per NVLink step (NCCL
 * tuning.cc: intraLat = max(intraLat, netOverhead), the proxy posting every step). */
static gint64
steps_latency (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s, gint64 base, gint64 nv_step,
               gint64 net_step, gint64 net_floor)
{
  gint64 nv = nv_step + s->nvlink_latency_ns;
  gint64 net = net_step + s->net_latency_ns;
  gint64 lat = base;
  int intra = 0, inter = 0;
  switch (algo)
    {
    case SIM_COLLECTIVE_ALGO_RING:
      ring_steps (op, s, &intra, &inter);
      if (inter > 0)
        nv = MAX (nv_step, net_floor) + s->nvlink_latency_ns;
      break;
    case SIM_COLLECTIVE_ALGO_TREE:
      /* Up and down: the chain inside a domain (L-1 hops) and the tree over domains (log2 D). */
      intra = 2 * (s->ranks_per_domain - 1);
      inter = 2 * ceil_log2 (s->domains);
      break;
    case SIM_COLLECTIVE_ALGO_NVLS:
      /* One switch round trip per pass (ld_reduce, st): the NVLS base latency covers the rest. */
      intra = op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1;
      break;
    case SIM_COLLECTIVE_ALGO_HIER:
      {
        int l = s->ranks_per_domain, d = s->domains;
        int passes_intra = op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1;
        intra = passes_intra * (l - 1);
        inter = (op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1) * (d - 1);
        /* Each phase starts after the previous one: one base latency per extra phase. */
        lat += (op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1) * base;
      }
      break;
    case SIM_COLLECTIVE_ALGO_DIRECT:
      /* All pairs at once: one step, over the network if any pair crosses it. */
      if (s->domains > 1)
        inter = 1;
      else
        intra = 1;
      break;
    case SIM_COLLECTIVE_ALGO_AUTO:
    case SIM_COLLECTIVE_ALGO_COUNT:
    default:
      return -1;
    }
  return lat + intra * nv + inter * net;
}

gint64
sim_alphabeta_latency_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s,
                          const SimCollectiveProfile *p)
{
  if (!sim_alphabeta_applicable (op, algo, s))
    return -1;
  if (s->ranks <= 1)
    return 0;
  if (algo == SIM_COLLECTIVE_ALGO_COLLNET)
    {
      /* tuning.cc: 2 (min(1, L-1) intraLat + (L-1) 0.4 us) + interLat, the local scatter and gather
       * around one reduction round trip through the switches */
      int l = s->ranks_per_domain;
      gint64 local = MIN (1, l - 1) * (p->collnet_nvlink_latency_ns + s->nvlink_latency_ns) + (l - 1) * p->collnet_arity_ns;
      return p->base_latency_ns[algo] + 2 * local + p->collnet_net_latency_ns + 2 * s->net_latency_ns;
    }
  return steps_latency (op, algo, s, p->base_latency_ns[algo], p->nvlink_step_latency_ns, p->net_step_latency_ns,
                        3 * p->net_overhead_ns);
}

gint64
sim_alphabeta_ll_latency_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s,
                             const SimCollectiveProfile *p)
{
  if (!(p->ll_bw_fraction > 0) || (algo != SIM_COLLECTIVE_ALGO_RING && algo != SIM_COLLECTIVE_ALGO_TREE)
      || !sim_alphabeta_applicable (op, algo, s))
    return -1;
  if (s->ranks <= 1)
    return 0;
  return steps_latency (op, algo, s, p->ll_base_latency_ns, p->ll_nvlink_step_latency_ns,
                        algo == SIM_COLLECTIVE_ALGO_TREE ? p->ll_tree_net_step_latency_ns : p->ll_net_step_latency_ns,
                        p->net_overhead_ns);
}

gint64
sim_alphabeta_fill_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s,
                       const SimCollectiveProfile *p, double bytes)
{
  /* Pipeline fill of chains and trees: the first chunk crosses every hop of the longest path before
   * the last hop streams at the steady rate, so the fill is the path's chunk times (each hop at its
   * link's rate: the pipeline is still empty) less one hop. A ring has none (every rank starts sending
   * its own segment at once). A chunk is at most the data a channel carries per tree (NCCL shrinks
   * chunks for small messages). */
  if (!(p->chunk_bytes > 0) || !(bytes > 0) || !sim_alphabeta_applicable (op, algo, s) || s->ranks <= 1)
    return 0;
  double bn = s->nvlink_bw_bytes_per_s * p->nvlink_eff, bi = s->nic_bw_bytes_per_s * p->nic_eff;
  int c = s->domains > 1 ? (p->channels > 0 ? p->channels : s->ranks_per_domain) : 1;
  int nv_hops = 0, net_hops = 0;
  double chunk = p->chunk_bytes;
  if (algo == SIM_COLLECTIVE_ALGO_RING && op == SIM_COLLECTIVE_BROADCAST)
    {
      nv_hops = s->ranks - s->domains;
      net_hops = s->domains - 1;
      chunk = MIN (chunk, bytes / c);
    }
  else if (algo == SIM_COLLECTIVE_ALGO_TREE)
    {
      nv_hops = 2 * (s->ranks_per_domain - 1);
      net_hops = 2 * ceil_log2 (s->domains);
      chunk = MIN (chunk, bytes / (2.0 * c));
    }
  int hops = nv_hops + net_hops;
  if (hops <= 1 || (nv_hops > 0 && !(bn > 0)) || (net_hops > 0 && !(bi > 0)))
    return 0;
  double path = (nv_hops > 0 ? nv_hops * chunk / bn : 0) + (net_hops > 0 ? net_hops * chunk / bi : 0);
  return (gint64) llround (path * (hops - 1) / hops * 1e9);
}

/* Transfer seconds at the Simple protocol's rates; -1 if a rate the group needs is unknown. */
static double
transfer_s (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s, const SimCollectiveProfile *p,
            double bytes)
{
  double n = s->ranks, l = s->ranks_per_domain, d = s->domains;
  double bn = s->nvlink_bw_bytes_per_s * p->nvlink_eff;
  double bi = s->nic_bw_bytes_per_s * p->nic_eff;
  /* Rates the group needs must be known: no time from a missing figure. */
  if ((s->ranks_per_domain > 1 && !(bn > 0)) || (s->domains > 1 && !(bi > 0))
      || (algo == SIM_COLLECTIVE_ALGO_NVLS && !(p->nvls_eff > 0))
      || (algo == SIM_COLLECTIVE_ALGO_COLLNET && !(p->collnet_eff > 0)))
    return -1.0;
  double t = 0;                               /* seconds of transfer */
  switch (algo)
    {
    case SIM_COLLECTIVE_ALGO_RING:
      {
        double r = ring_rate (s, p, bn, bi);
        double v = op == SIM_COLLECTIVE_BROADCAST ? bytes : bytes * sim_alphabeta_busbw_factor (op, s->ranks);
        t = v / r;
      }
      break;
    case SIM_COLLECTIVE_ALGO_TREE:
      t = tree_time_s (s, p, bytes);
      break;
    case SIM_COLLECTIVE_ALGO_NVLS:
      t = (op == SIM_COLLECTIVE_ALLREDUCE ? (1.0 + 1.0 / n) : 1.0) * bytes / (bn * p->nvls_eff);
      break;
    case SIM_COLLECTIVE_ALGO_HIER:
      {
        double passes = op == SIM_COLLECTIVE_ALLREDUCE ? 2.0 : 1.0;
        t = passes * (l - 1) / l * bytes / bn + passes * (d - 1) / d * (bytes / l) / bi;
      }
      break;
    case SIM_COLLECTIVE_ALGO_DIRECT:
      if (op == SIM_COLLECTIVE_SENDRECV)
        t = bytes / (s->domains > 1 ? bi : bn);
      else
        t = MAX ((l - 1) / n * bytes / bn, (n - l) / n * bytes / bi);
      break;
    case SIM_COLLECTIVE_ALGO_COLLNET:
      /* scatter and gather inside the domain pipelined with the shard's round trip to the switches */
      t = MAX (l > 1 ? 2.0 * (l - 1) / l * bytes / bn : 0.0, bytes / l / bi) / p->collnet_eff;
      break;
    case SIM_COLLECTIVE_ALGO_AUTO:
    case SIM_COLLECTIVE_ALGO_COUNT:
    default:
      return -1.0;
    }
  return t;
}

/* Times of both protocols (-1: not applicable); the caller checked applicability and size. */
static void
proto_times (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s, const SimCollectiveProfile *p,
             double bytes, gint64 *simple, gint64 *ll)
{
  *simple = *ll = -1;
  double t = transfer_s (op, algo, s, p, bytes);
  if (t < 0)
    return;
  *simple = sim_alphabeta_latency_ns (op, algo, s, p) + sim_alphabeta_fill_ns (op, algo, s, p, bytes)
            + (gint64) llround (t * 1e9);
  gint64 ll_lat = sim_alphabeta_ll_latency_ns (op, algo, s, p);
  if (ll_lat >= 0)
    *ll = ll_lat + (gint64) llround (t / p->ll_bw_fraction * 1e9);
}

SimCollectiveProto
sim_alphabeta_protocol (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s,
                        const SimCollectiveProfile *p, double bytes)
{
  g_return_val_if_fail (s != NULL && p != NULL, SIM_COLLECTIVE_PROTO_SIMPLE);
  if (!sim_alphabeta_applicable (op, algo, s) || s->ranks <= 1 || bytes <= 0)
    return SIM_COLLECTIVE_PROTO_SIMPLE;
  gint64 simple, ll;
  proto_times (op, algo, s, p, bytes, &simple, &ll);
  return ll >= 0 && ll < simple ? SIM_COLLECTIVE_PROTO_LL : SIM_COLLECTIVE_PROTO_SIMPLE;
}

gint64
sim_alphabeta_time_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s,
                       const SimCollectiveProfile *p, double bytes)
{
  g_return_val_if_fail (s != NULL && p != NULL, -1);
  if (!sim_alphabeta_applicable (op, algo, s))
    return -1;
  if (s->ranks <= 1 || bytes <= 0)
    return 0;
  gint64 simple, ll;
  proto_times (op, algo, s, p, bytes, &simple, &ll);
  return ll >= 0 && ll < simple ? ll : simple;
}

SimCollectiveAlgo
sim_alphabeta_best (SimCollectiveOp op, const SimCollectiveShape *s, const SimCollectiveProfile *p,
                    double bytes, gint64 *time_ns)
{
  SimCollectiveAlgo best = SIM_COLLECTIVE_ALGO_AUTO;
  gint64 best_t = -1;
  for (int a = SIM_COLLECTIVE_ALGO_RING; a < SIM_COLLECTIVE_ALGO_COUNT; a++)
    {
      /* NCCL's tuner has no hierarchical algorithm (tuning.cc: reduce-scatter and all-gather run
       * ring, NVLS in one domain, PAT or CollNet Direct; all-reduce adds tree, NVLS tree, CollNet),
       * so AUTO never picks it: a what-if asks for it by name. */
      if (a == SIM_COLLECTIVE_ALGO_HIER)
        continue;
      gint64 t = sim_alphabeta_time_ns (op, a, s, p, bytes);
      if (t >= 0 && (best_t < 0 || t < best_t))
        {
          best = a;
          best_t = t;
        }
    }
  if (time_ns)
    *time_ns = best_t;
  return best;
}
