/* SimFlowNet: flows sharing links max-min fairly, with completions driven by the engine.
 * See flow.h for the contract.
 *
 * State is lazy: a flow stores (remaining bytes, rate, time of that snapshot) and a link stores
 * (bytes carried, sum of its flows' rates, time of that snapshot); both are brought up to date
 * only when a rate changes, as remaining -= rate × elapsed. A flow whose rate does not change in a
 * recompute keeps its snapshot and its completion event untouched.
 *
 * Completion time: the first nanosecond T with rate × (T - t0) >= remaining, i.e.
 * t0 + ceil(remaining / rate · 1e9), where "remaining" is allowed a rounding slack of FINISH_REL
 * of the flow's size. When its event runs, the remaining bytes are re-evaluated; if rounding left
 * more than that slack, the flow is re-planned instead of finished, so it never finishes early. On finishing, the link counters are corrected by the sub-ns
 * overshoot so each link's byte count is exactly the sum of the sizes of the flows it carried.
 *
 * Memory: flows live in a slot array recycled through a free list; each slot keeps its path
 * buffer for reuse, links keep their flow lists, and the component search and solver use scratch
 * arrays of the net: nothing is allocated per event once the arrays have grown. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/flow.h"
#include "sim/maxmin.h"

#define FLOW_LIVE G_MAXUINT32
#define FLOW_NONE (G_MAXUINT32 - 1)
/* Remaining bytes below this fraction of the flow's size are rounding noise: ~10^4 lazy updates
 * at ~1e-16 relative error each stay far below it, while at any rate it is far less than 1 ns of
 * transfer for flows shorter than 1000 s. */
#define FINISH_REL 1e-12

typedef struct {
  guint32 *links;
  int *link_pos;   /* index of this flow in links[k]'s flow list */
  int n_links, cap_links;
  double bytes;
  double remaining;  /* at updated_ns */
  gint64 updated_ns;
  double rate;
  guint64 event;     /* pending completion event, 0 if none */
  SimFlowDoneFn done;
  gpointer user;
  guint64 arg;
  guint32 gen;
  guint32 next;      /* free list, or FLOW_LIVE */
  guint32 mark;      /* epoch of the last component search that reached this flow */
} Flow;

typedef struct {
  guint32 flow;
  guint32 k;  /* position of this link in the flow's path */
} Member;

typedef struct {
  double capacity;
  Member *members;
  int n_members, cap_members;
  double bytes;      /* carried up to updated_ns */
  double rate;       /* sum of the rates of its flows */
  gint64 updated_ns;
  guint32 mark;
  int local;         /* index in the current solve; -1 if left out of it */
  gboolean sole;     /* in the current solve: every member is the same flow */
  guint64 sig;       /* in the current solve: order-free hash of its members' flows */
  gboolean keep;
  gboolean dirty;
} Link;

struct SimFlowNet {
  SimEngine *engine;
  Link *links;
  int n_links;
  Flow *flows;
  guint32 n_flows, cap_flows, free_flow;
  int active;
  guint64 recompute_event;
  guint32 epoch;
  SimFlowNetStats stats;
  /* scratch */
  int *dirty, n_dirty, cap_dirty;
  int *comp_links, cap_comp_links;
  guint32 *comp_flows, cap_comp_flows;
  int *start, cap_start;
  guint32 *path;
  int cap_path;
  double *capacity, *rates;
  int cap_capacity, cap_rates;
  int *twin_table, cap_twin;  /* open addressing: shared links by (members, capacity) */
  int *flow_count, cap_flow_count;
  SimMaxmin *solver;
};

#define GROW(ptr, cap, need, type)                                                                 \
  do {                                                                                             \
    if ((need) > (cap))                                                                            \
      {                                                                                            \
        (cap) = MAX ((need), 2 * (cap));                                                           \
        (ptr) = g_renew (type, (ptr), (cap));                                                      \
      }                                                                                            \
  } while (0)

/* splitmix64's finaliser: members' flows summed through it give an order-free link signature */
static inline guint64
flow_mix (guint32 fi)
{
  guint64 z = (guint64) fi + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void recompute_cb (SimEngine *engine, gpointer data, guint64 arg);
static void complete_cb (SimEngine *engine, gpointer data, guint64 arg);

static inline double
elapsed_s (gint64 from_ns, gint64 to_ns)
{
  return (double) (to_ns - from_ns) * 1e-9;
}

static void
link_advance (Link *l, gint64 now)
{
  if (now != l->updated_ns)
    {
      l->bytes += l->rate * elapsed_s (l->updated_ns, now);
      l->updated_ns = now;
    }
}

static void
mark_dirty (SimFlowNet *net, int l)
{
  if (net->links[l].dirty)
    return;
  net->links[l].dirty = TRUE;
  GROW (net->dirty, net->cap_dirty, net->n_dirty + 1, int);
  net->dirty[net->n_dirty++] = l;
  if (net->recompute_event == 0)
    net->recompute_event = sim_engine_after (net->engine, 0, recompute_cb, net, 0);
}

/* The first nanosecond at which the flow's remaining bytes have all arrived. Callers bring the
 * flow's snapshot to the current time first (updated_ns == now). */
static gint64
finish_time (const SimFlowNet *net, const Flow *f)
{
  gint64 now = sim_engine_now (net->engine);
  if (f->remaining <= FINISH_REL * f->bytes || isinf (f->rate))
    return now;
  /* Done means remaining <= FINISH_REL of the size, so aim for that, not for exactly zero:
   * otherwise a quotient like 2999850.0000000005 (an exact 2999850 after rounding) costs 1 ns. */
  double ns = ceil ((f->remaining - FINISH_REL * f->bytes) / f->rate * 1e9);
  double horizon = (double) (G_MAXINT64 / 2 - now);
  return now + (gint64) MIN (MAX (ns, 1.0), horizon);
}

static void
plan_completion (SimFlowNet *net, Flow *f, guint32 index)
{
  if (f->event)
    sim_engine_cancel (net->engine, f->event);
  f->event = sim_engine_at (net->engine, finish_time (net, f), complete_cb, net, index);
}

SimFlowNet *
sim_flow_net_new (SimEngine *engine, const double *capacities, int n_links)
{
  g_return_val_if_fail (engine != NULL, NULL);
  g_return_val_if_fail (n_links >= 0 && (n_links == 0 || capacities != NULL), NULL);
  for (int l = 0; l < n_links; l++)
    g_return_val_if_fail (capacities[l] > 0 && isfinite (capacities[l]), NULL);
  SimFlowNet *net = g_new0 (SimFlowNet, 1);
  net->engine = engine;
  net->n_links = n_links;
  net->links = g_new0 (Link, MAX (n_links, 1));
  for (int l = 0; l < n_links; l++)
    net->links[l].capacity = capacities[l];
  net->free_flow = FLOW_NONE;
  net->solver = sim_maxmin_new ();
  return net;
}

void
sim_flow_net_free (SimFlowNet *net)
{
  if (net == NULL)
    return;
  if (net->recompute_event)
    sim_engine_cancel (net->engine, net->recompute_event);
  for (guint32 i = 0; i < net->n_flows; i++)
    {
      if (net->flows[i].next == FLOW_LIVE && net->flows[i].event)
        sim_engine_cancel (net->engine, net->flows[i].event);
      g_free (net->flows[i].links);
      g_free (net->flows[i].link_pos);
    }
  for (int l = 0; l < net->n_links; l++)
    g_free (net->links[l].members);
  g_free (net->links);
  g_free (net->flows);
  g_free (net->dirty);
  g_free (net->comp_links);
  g_free (net->comp_flows);
  g_free (net->start);
  g_free (net->path);
  g_free (net->capacity);
  g_free (net->rates);
  g_free (net->twin_table);
  g_free (net->flow_count);
  sim_maxmin_free (net->solver);
  g_free (net);
}

guint64
sim_flow_net_start (SimFlowNet *net, const guint32 *links, int n_links, double bytes,
                    SimFlowDoneFn done, gpointer user, guint64 arg)
{
  g_return_val_if_fail (net != NULL, 0);
  g_return_val_if_fail (n_links >= 0 && (n_links == 0 || links != NULL), 0);
  g_return_val_if_fail (bytes >= 0 && isfinite (bytes), 0);
  for (int k = 0; k < n_links; k++)
    g_return_val_if_fail (links[k] < (guint32) net->n_links, 0);

  guint32 i = net->free_flow;
  if (i != FLOW_NONE)
    net->free_flow = net->flows[i].next;
  else
    {
      g_return_val_if_fail (net->n_flows < FLOW_NONE, 0);
      if (net->n_flows == net->cap_flows)
        {
          net->cap_flows = net->cap_flows ? 2 * net->cap_flows : 64;
          net->flows = g_renew (Flow, net->flows, net->cap_flows);
        }
      i = net->n_flows++;
      net->flows[i] = (Flow) { .gen = 1 };
    }
  Flow *f = &net->flows[i];
  if (n_links > f->cap_links)
    {
      f->cap_links = MAX (n_links, 8);
      f->links = g_renew (guint32, f->links, f->cap_links);
      f->link_pos = g_renew (int, f->link_pos, f->cap_links);
    }
  f->n_links = n_links;
  if (n_links > 0)
    memcpy (f->links, links, (gsize) n_links * sizeof (guint32));
  f->bytes = bytes;
  f->remaining = bytes;
  f->updated_ns = sim_engine_now (net->engine);
  f->rate = 0;
  f->event = 0;
  f->done = done;
  f->user = user;
  f->arg = arg;
  f->next = FLOW_LIVE;
  f->mark = 0;
  net->active++;

  if (n_links == 0 || bytes == 0)
    {
      /* Nothing to share: done at once, but through the engine like every completion. */
      f->rate = n_links == 0 ? INFINITY : 0;
      f->event = sim_engine_after (net->engine, 0, complete_cb, net, i);
    }
  else
    for (int k = 0; k < n_links; k++)
      {
        Link *l = &net->links[links[k]];
        GROW (l->members, l->cap_members, l->n_members + 1, Member);
        f->link_pos[k] = l->n_members;
        l->members[l->n_members++] = (Member) { i, (guint32) k };
        mark_dirty (net, (int) links[k]);
      }
  return ((guint64) f->gen << 32) | i;
}

static const Flow *
lookup (const SimFlowNet *net, guint64 id)
{
  guint32 i = (guint32) (id & G_MAXUINT32);
  if (i >= net->n_flows || net->flows[i].next != FLOW_LIVE || net->flows[i].gen != (guint32) (id >> 32))
    return NULL;
  return &net->flows[i];
}

double
sim_flow_net_rate (const SimFlowNet *net, guint64 flow_id)
{
  g_return_val_if_fail (net != NULL, 0);
  const Flow *f = lookup (net, flow_id);
  return f ? f->rate : 0;
}

double
sim_flow_net_link_bytes (const SimFlowNet *net, int link)
{
  g_return_val_if_fail (net != NULL && link >= 0 && link < net->n_links, 0);
  const Link *l = &net->links[link];
  return l->bytes + l->rate * elapsed_s (l->updated_ns, sim_engine_now (net->engine));
}

int
sim_flow_net_active (const SimFlowNet *net)
{
  g_return_val_if_fail (net != NULL, 0);
  return net->active;
}

SimFlowNetStats
sim_flow_net_stats (const SimFlowNet *net)
{
  SimFlowNetStats zero = { 0 };
  g_return_val_if_fail (net != NULL, zero);
  return net->stats;
}

/* Removes flow i from its links (swap-remove, fixing the moved member's back-pointer). */
static void
detach (SimFlowNet *net, Flow *f, double overshoot_bytes, gint64 now)
{
  for (int k = 0; k < f->n_links; k++)
    {
      int li = (int) f->links[k];
      Link *l = &net->links[li];
      link_advance (l, now);
      /* The link counted this flow at full rate up to now; it really carried remaining less. */
      l->bytes -= overshoot_bytes;
      l->rate -= f->rate;
      int pos = f->link_pos[k];
      Member last = l->members[--l->n_members];
      if (pos != l->n_members)
        {
          l->members[pos] = last;
          net->flows[last.flow].link_pos[last.k] = pos;
        }
      mark_dirty (net, li);
    }
}

static void
complete_cb (SimEngine *engine, gpointer data, guint64 arg)
{
  SimFlowNet *net = data;
  guint32 i = (guint32) arg;
  Flow *f = &net->flows[i];
  gint64 now = sim_engine_now (engine);
  f->event = 0;
  double remaining = f->remaining;
  if (f->n_links > 0 && f->bytes > 0)
    {
      remaining -= f->rate * elapsed_s (f->updated_ns, now);
      if (remaining > FINISH_REL * f->bytes)
        {
          /* Rounding put the event a hair early: re-plan from here (at least 1 ns later). */
          f->remaining = remaining;
          f->updated_ns = now;
          plan_completion (net, f, i);
          return;
        }
      detach (net, f, -remaining, now);
    }
  SimFlowDoneFn done = f->done;
  gpointer user = f->user;
  guint64 done_arg = f->arg;
  f->gen = f->gen == G_MAXUINT32 ? 1 : f->gen + 1;
  f->next = net->free_flow;
  net->free_flow = i;
  net->active--;
  if (done)
    done (user, done_arg);
}

/* Re-solves the components reachable from the dirty links and re-plans changed completions. */
static void
recompute (SimFlowNet *net)
{
  gint64 now = sim_engine_now (net->engine);
  if (++net->epoch == 0)
    {
      /* epoch wrapped: clear marks so old ones cannot collide */
      for (int l = 0; l < net->n_links; l++)
        net->links[l].mark = 0;
      for (guint32 i = 0; i < net->n_flows; i++)
        net->flows[i].mark = 0;
      net->epoch = 1;
    }
  guint32 epoch = net->epoch;

  /* Breadth-first search over link -> flow -> link, seeded with the dirty links. */
  int n_comp_links = 0;
  guint32 n_comp_flows = 0;
  GROW (net->comp_links, net->cap_comp_links, net->n_links, int);
  for (int d = 0; d < net->n_dirty; d++)
    {
      Link *l = &net->links[net->dirty[d]];
      l->dirty = FALSE;
      if (l->mark != epoch)
        {
          l->mark = epoch;
          net->comp_links[n_comp_links++] = net->dirty[d];
        }
    }
  net->n_dirty = 0;
  int n_occ = 0;
  for (int q = 0; q < n_comp_links; q++)
    {
      Link *l = &net->links[net->comp_links[q]];
      l->local = q;  /* BFS position, until the solver's indices are assigned below */
      l->sole = l->n_members > 0;
      l->keep = FALSE;
      l->sig = 0;
      for (int m = 0; m < l->n_members; m++)
        {
          guint32 fi = l->members[m].flow;
          if (fi != l->members[0].flow)
            l->sole = FALSE;
          l->sig += flow_mix (fi);
          Flow *f = &net->flows[fi];
          if (f->mark == epoch)
            continue;
          f->mark = epoch;
          GROW (net->comp_flows, net->cap_comp_flows, n_comp_flows + 1, guint32);
          net->comp_flows[n_comp_flows++] = fi;
          n_occ += f->n_links;
          for (int k = 0; k < f->n_links; k++)
            {
              Link *l2 = &net->links[f->links[k]];
              if (l2->mark != epoch)
                {
                  l2->mark = epoch;
                  net->comp_links[n_comp_links++] = (int) f->links[k];
                }
            }
        }
    }

  /* Private links (crossed by one flow only, once or more) are left out of the solve except, per
   * flow, the one of least (share, BFS position), share = capacity / crossings as the solver
   * computes it: a private link's share stays that until its flow freezes, and the solver pops
   * links in (share, index) order, so that link pops before the flow's other private links, which
   * then drain unpopped. The kept links keep their relative order, so ties break as before and
   * the rates come out bit-identical; the solve shrinks from every link of every path (a merged
   * PP flow crosses thousands) to the shared links plus one per flow. */
  for (guint32 c = 0; c < n_comp_flows; c++)
    {
      const Flow *f = &net->flows[net->comp_flows[c]];
      Link *best = NULL;
      double best_share = 0;
      for (int k = 0; k < f->n_links; k++)
        {
          Link *l = &net->links[f->links[k]];
          if (!l->sole)
            continue;
          double share = l->capacity / l->n_members;
          if (best == NULL || share < best_share || (share == best_share && l->local < best->local))
            {
              best = l;
              best_share = share;
            }
        }
      if (best != NULL)
        best->keep = TRUE;
    }
  /* Twins: shared links with the same capacity and the same flows (as a multiset) get the same
   * frozen rates subtracted in the same order, so their shares are bit-identical at every step of
   * the solve; the first in BFS order (least index) pops first, freezes all their flows and the
   * others drain unpopped. Only that one is solved (a collective's ring and a PP send crossing the
   * same stretch of fabric make many such links). Signatures are verified member by member. */
  int n_twin = 1;
  while (n_twin < 2 * n_comp_links)
    n_twin *= 2;
  GROW (net->twin_table, net->cap_twin, n_twin, int);
  memset (net->twin_table, 0xff, (gsize) n_twin * sizeof (int));
  GROW (net->flow_count, net->cap_flow_count, (int) net->n_flows, int);
  if (net->cap_flow_count > 0 && n_comp_flows > 0)
    for (guint32 c = 0; c < n_comp_flows; c++)
      net->flow_count[net->comp_flows[c]] = 0;
  int n_solve = 0;
  GROW (net->capacity, net->cap_capacity, n_comp_links, double);
  for (int q = 0; q < n_comp_links; q++)
    {
      Link *l = &net->links[net->comp_links[q]];
      link_advance (l, now);
      gboolean twin = FALSE;
      if (l->n_members > 0 && !l->sole)
        {
          guint64 h = l->sig ^ ((guint64) l->n_members * 0x9E3779B97F4A7C15ull);
          for (int slot = (int) (h & (guint64) (n_twin - 1));; slot = (slot + 1) & (n_twin - 1))
            {
              int other = net->twin_table[slot];
              if (other < 0)
                {
                  net->twin_table[slot] = net->comp_links[q];
                  break;
                }
              const Link *o2 = &net->links[other];
              if (o2->sig != l->sig || o2->n_members != l->n_members || o2->capacity != l->capacity)
                continue;
              for (int m = 0; m < l->n_members; m++)
                net->flow_count[l->members[m].flow]++;
              for (int m = 0; m < o2->n_members; m++)
                net->flow_count[o2->members[m].flow]--;
              twin = TRUE;
              for (int m = 0; m < l->n_members; m++)
                {
                  if (net->flow_count[l->members[m].flow] != 0)
                    twin = FALSE;
                  net->flow_count[l->members[m].flow] = 0;
                }
              for (int m = 0; m < o2->n_members; m++)
                net->flow_count[o2->members[m].flow] = 0;
              if (twin)
                break;
            }
        }
      if (l->n_members == 0 || (l->sole && !l->keep) || twin)
        l->local = -1;
      else
        {
          net->capacity[n_solve] = l->capacity;
          l->local = n_solve++;
        }
    }

  /* Local compressed rows for the solver. */
  GROW (net->start, net->cap_start, (int) n_comp_flows + 1, int);
  GROW (net->rates, net->cap_rates, (int) n_comp_flows + 1, double);
  GROW (net->path, net->cap_path, n_occ, guint32);
  int o = 0;
  for (guint32 c = 0; c < n_comp_flows; c++)
    {
      const Flow *f = &net->flows[net->comp_flows[c]];
      net->start[c] = o;
      for (int k = 0; k < f->n_links; k++)
        {
          int local = net->links[f->links[k]].local;
          if (local >= 0)
            net->path[o++] = (guint32) local;
        }
    }
  net->start[n_comp_flows] = o;
  if (n_comp_flows > 0)
    sim_maxmin_solve (net->solver, n_solve, net->capacity, (int) n_comp_flows, net->start,
                      net->path, net->rates);
  net->stats.recomputes++;
  net->stats.flows_resolved += n_comp_flows;

  for (int q = 0; q < n_comp_links; q++)
    net->links[net->comp_links[q]].rate = 0;
  for (guint32 c = 0; c < n_comp_flows; c++)
    {
      guint32 fi = net->comp_flows[c];
      Flow *f = &net->flows[fi];
      double rate = net->rates[c];
      for (int k = 0; k < f->n_links; k++)
        net->links[f->links[k]].rate += rate;
      if (rate == f->rate)
        continue;  /* same rate: snapshot and completion event stay valid */
      f->remaining -= f->rate * elapsed_s (f->updated_ns, now);
      f->updated_ns = now;
      f->rate = rate;
      if (f->event)
        net->stats.reschedules++;
      plan_completion (net, f, fi);
    }
}

static void
recompute_cb (SimEngine *engine, gpointer data, guint64 arg)
{
  SimFlowNet *net = data;
  net->recompute_event = 0;
  recompute (net);
}

void
sim_flow_net_flush (SimFlowNet *net)
{
  g_return_if_fail (net != NULL);
  if (net->recompute_event == 0)
    return;
  sim_engine_cancel (net->engine, net->recompute_event);
  net->recompute_event = 0;
  recompute (net);
}
