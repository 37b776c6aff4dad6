/* Closed-form alpha-beta collective times; the equations and their derivation are in sim/alphabeta.h.
 * Constants come from the SimCollectiveProfile (efficiencies from datasheet line rates and published
 * protocol overheads, latencies from NCCL's Simple-protocol tuning tables), never from the case. */
#include "config.h"
#include <math.h>
#include "sim/alphabeta.h"

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

static double
tree_rate (const SimCollectiveShape *s, const SimCollectiveProfile *p)
{
  double bn = s->nvlink_bw_bytes_per_s * p->nvlink_eff, bi = s->nic_bw_bytes_per_s * p->nic_eff;
  return s->domains > 1 ? MIN (bn, bi) : bn;
}

gint64
sim_alphabeta_latency_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *s,
                          const SimCollectiveProfile *p)
{
  if (!sim_alphabeta_applicable (op, algo, s))
    return -1;
  if (s->ranks <= 1)
    return 0;
  gint64 nv = p->nvlink_step_latency_ns + s->nvlink_latency_ns;
  gint64 net = p->net_step_latency_ns + s->net_latency_ns;
  gint64 lat = p->base_latency_ns[algo];
  int intra = 0, inter = 0;
  switch (algo)
    {
    case SIM_COLLECTIVE_ALGO_RING:
      ring_steps (op, s, &intra, &inter);
      break;
    case SIM_COLLECTIVE_ALGO_TREE:
      /* Up and down the tree: depth ceil(log2 n) each way. */
      if (s->domains > 1)
        inter = 2 * ceil_log2 (s->ranks);
      else
        intra = 2 * ceil_log2 (s->ranks);
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
        lat += (op == SIM_COLLECTIVE_ALLREDUCE ? 2 : 1) * p->base_latency_ns[algo];
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
  lat += intra * nv + inter * net;
  /* Pipeline fill of chains and trees: the last chunk leaves the root (hops - 1) chunk times after the
   * first. A ring has none (every rank starts sending its own segment at once). */
  int hops = 0;
  double b = 0;
  if (algo == SIM_COLLECTIVE_ALGO_RING && op == SIM_COLLECTIVE_BROADCAST)
    {
      hops = s->ranks - 1;
      b = ring_rate (s, p, s->nvlink_bw_bytes_per_s * p->nvlink_eff, s->nic_bw_bytes_per_s * p->nic_eff);
    }
  else if (algo == SIM_COLLECTIVE_ALGO_TREE)
    {
      hops = 2 * ceil_log2 (s->ranks);
      b = tree_rate (s, p);
    }
  if (hops > 1 && b > 0 && p->chunk_bytes > 0)
    lat += (gint64) llround ((hops - 1) * p->chunk_bytes / b * 1e9);
  return lat;
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
  double n = s->ranks, l = s->ranks_per_domain, d = s->domains;
  double bn = s->nvlink_bw_bytes_per_s * p->nvlink_eff;
  double bi = s->nic_bw_bytes_per_s * p->nic_eff;
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
      t = 2.0 * bytes / tree_rate (s, p);
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
    case SIM_COLLECTIVE_ALGO_AUTO:
    case SIM_COLLECTIVE_ALGO_COUNT:
    default:
      return -1;
    }
  return sim_alphabeta_latency_ns (op, algo, s, p) + (gint64) llround (t * 1e9);
}

SimCollectiveAlgo
sim_alphabeta_best (SimCollectiveOp op, const SimCollectiveShape *s, const SimCollectiveProfile *p,
                    double bytes, gint64 *time_ns)
{
  SimCollectiveAlgo best = SIM_COLLECTIVE_ALGO_AUTO;
  gint64 best_t = -1;
  for (int a = SIM_COLLECTIVE_ALGO_RING; a < SIM_COLLECTIVE_ALGO_COUNT; a++)
    {
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
