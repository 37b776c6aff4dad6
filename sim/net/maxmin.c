/* Max-min fair sharing: a fast bottleneck-heap solver and a dense textbook reference. See maxmin.h.
 *
 * Fast solver (bottleneck order): the fair share of a link is its remaining capacity over the
 * weights of the flows still unfrozen on it (a rate per unit of weight). The link with the
 * smallest share is the next bottleneck: each unfrozen flow on it gets its weight times that
 * share, is frozen, and its rate is taken from every link it crosses. Removing a flow of weight w
 * and rate w·s from a link whose share is >= s never lowers that link's share
 * ((c - w·s) / (W - w) >= c / W when s <= c / W), so shares only rise and the bottlenecks come out
 * of the heap in increasing order, which is the order progressive filling saturates them. With
 * every weight 1 the weight sums are exact small integers: the unweighted solve, bit for bit.
 *
 * Floating point: a share reached through different subtraction orders can differ in the last
 * bits. Shares within a relative 1e-12 of the previous bottleneck level are snapped to it, so
 * symmetric flows (a collective's) get bit-identical rates and finish at the same nanosecond;
 * remaining capacities are clamped at 0. */
#include "config.h"
#include <math.h>
#include <string.h>
#include "sim/net/maxmin.h"

#define SNAP_REL 1e-12

struct SimMaxmin {
  int cap_links, cap_flows, cap_occ;
  int *link_start;      /* link -> its occurrences in link_flows (compressed rows, transposed) */
  int *link_flows;
  double *remaining;    /* capacity not yet given to frozen flows */
  int *unfrozen;        /* occurrences of unfrozen flows on the link */
  double *wsum;         /* their weights */
  double *share;
  int *heap, *heap_pos; /* indexed binary min-heap of links by (share, link id); pos -1 if out */
  int n_heap;
  guint8 *frozen;
};

SimMaxmin *
sim_maxmin_new (void)
{
  return g_new0 (SimMaxmin, 1);
}

void
sim_maxmin_free (SimMaxmin *mm)
{
  if (mm == NULL)
    return;
  g_free (mm->link_start);
  g_free (mm->link_flows);
  g_free (mm->remaining);
  g_free (mm->unfrozen);
  g_free (mm->wsum);
  g_free (mm->share);
  g_free (mm->heap);
  g_free (mm->heap_pos);
  g_free (mm->frozen);
  g_free (mm);
}

static void
reserve (SimMaxmin *mm, int n_links, int n_flows, int n_occ)
{
  if (n_links > mm->cap_links)
    {
      int c = MAX (n_links, 2 * mm->cap_links);
      mm->link_start = g_renew (int, mm->link_start, c + 1);
      mm->remaining = g_renew (double, mm->remaining, c);
      mm->unfrozen = g_renew (int, mm->unfrozen, c);
      mm->wsum = g_renew (double, mm->wsum, c);
      mm->share = g_renew (double, mm->share, c);
      mm->heap = g_renew (int, mm->heap, c);
      mm->heap_pos = g_renew (int, mm->heap_pos, c);
      mm->cap_links = c;
    }
  if (n_flows > mm->cap_flows)
    {
      int c = MAX (n_flows, 2 * mm->cap_flows);
      mm->frozen = g_renew (guint8, mm->frozen, c);
      mm->cap_flows = c;
    }
  if (n_occ > mm->cap_occ)
    {
      int c = MAX (n_occ, 2 * mm->cap_occ);
      mm->link_flows = g_renew (int, mm->link_flows, c);
      mm->cap_occ = c;
    }
}

static inline gboolean
link_before (const SimMaxmin *mm, int a, int b)
{
  return mm->share[a] < mm->share[b] || (mm->share[a] == mm->share[b] && a < b);
}

static void
heap_place (SimMaxmin *mm, int i, int l)
{
  mm->heap[i] = l;
  mm->heap_pos[l] = i;
}

static void
heap_up (SimMaxmin *mm, int i)
{
  int l = mm->heap[i];
  while (i > 0)
    {
      int p = (i - 1) / 2;
      if (!link_before (mm, l, mm->heap[p]))
        break;
      heap_place (mm, i, mm->heap[p]);
      i = p;
    }
  heap_place (mm, i, l);
}

static void
heap_down (SimMaxmin *mm, int i)
{
  int l = mm->heap[i];
  for (;;)
    {
      int c = 2 * i + 1;
      if (c >= mm->n_heap)
        break;
      if (c + 1 < mm->n_heap && link_before (mm, mm->heap[c + 1], mm->heap[c]))
        c++;
      if (!link_before (mm, mm->heap[c], l))
        break;
      heap_place (mm, i, mm->heap[c]);
      i = c;
    }
  heap_place (mm, i, l);
}

static void
heap_remove (SimMaxmin *mm, int l)
{
  int i = mm->heap_pos[l];
  mm->heap_pos[l] = -1;
  int last = mm->heap[--mm->n_heap];
  if (i == mm->n_heap)
    return;
  heap_place (mm, i, last);
  heap_up (mm, i);
  heap_down (mm, mm->heap_pos[last]);
}

void
sim_maxmin_solve (SimMaxmin *mm, int n_links, const double *capacity, int n_flows,
                  const int *flow_start, const guint32 *flow_links, const double *weight, double *rate)
{
  g_return_if_fail (mm != NULL && n_links >= 0 && n_flows >= 0);
  g_return_if_fail (n_flows == 0 || (flow_start != NULL && rate != NULL));
  int n_occ = n_flows > 0 ? flow_start[n_flows] : 0;
  reserve (mm, n_links, n_flows, n_occ);

  /* Transpose flow -> links into link -> flows (counting sort). */
  memset (mm->unfrozen, 0, (gsize) n_links * sizeof (int));
  for (int k = 0; k < n_occ; k++)
    {
      g_return_if_fail (flow_links[k] < (guint32) n_links);
      mm->unfrozen[flow_links[k]]++;
    }
  mm->link_start[0] = 0;
  for (int l = 0; l < n_links; l++)
    mm->link_start[l + 1] = mm->link_start[l] + mm->unfrozen[l];
  for (int f = 0; f < n_flows; f++)
    for (int k = flow_start[f]; k < flow_start[f + 1]; k++)
      {
        int l = (int) flow_links[k];
        /* rows fill front to back in flow order while unfrozen[] counts down to 0 */
        mm->link_flows[mm->link_start[l + 1] - mm->unfrozen[l]] = f;
        mm->unfrozen[l]--;
      }
  /* unfrozen[] is zero again; recount while seeding the heap. */
  mm->n_heap = 0;
  for (int l = 0; l < n_links; l++)
    {
      mm->unfrozen[l] = mm->link_start[l + 1] - mm->link_start[l];
      mm->wsum[l] = 0;
      if (weight)
        for (int k = mm->link_start[l]; k < mm->link_start[l + 1]; k++)
          mm->wsum[l] += weight[mm->link_flows[k]];
      else
        mm->wsum[l] = mm->unfrozen[l];
      mm->remaining[l] = capacity[l];
      mm->heap_pos[l] = -1;
      if (mm->unfrozen[l] > 0)
        {
          mm->share[l] = capacity[l] / mm->wsum[l];
          heap_place (mm, mm->n_heap++, l);
        }
    }
  /* Bottom-up heap construction, O(L): (share, link id) is a strict total order, so the links pop
   * in the same sequence however the heap was built. */
  for (int i = mm->n_heap / 2 - 1; i >= 0; i--)
    heap_down (mm, i);
  for (int f = 0; f < n_flows; f++)
    {
      mm->frozen[f] = flow_start[f + 1] == flow_start[f];
      if (mm->frozen[f])
        rate[f] = INFINITY;
    }

  double level = 0;
  while (mm->n_heap > 0)
    {
      int l = mm->heap[0];
      heap_remove (mm, l);
      double s = mm->share[l];
      if (s <= level * (1 + SNAP_REL))
        s = level;  /* same level as the previous bottleneck, up to rounding */
      level = s;
      for (int k = mm->link_start[l]; k < mm->link_start[l + 1]; k++)
        {
          int f = mm->link_flows[k];
          if (mm->frozen[f])
            continue;
          mm->frozen[f] = 1;
          double w = weight ? weight[f] : 1.0;
          rate[f] = w * s;
          for (int j = flow_start[f]; j < flow_start[f + 1]; j++)
            {
              int l2 = (int) flow_links[j];
              mm->remaining[l2] = MAX (mm->remaining[l2] - rate[f], 0.0);
              mm->unfrozen[l2]--;
              mm->wsum[l2] -= w;
              if (mm->heap_pos[l2] < 0)
                continue;  /* l itself, or a link already drained */
              if (mm->unfrozen[l2] == 0)
                heap_remove (mm, l2);
              else
                {
                  double old = mm->share[l2];
                  mm->share[l2] = mm->remaining[l2] / MAX (mm->wsum[l2], 1e-300);
                  if (mm->share[l2] >= old)  /* the usual case (see top); rounding may lower it */
                    heap_down (mm, mm->heap_pos[l2]);
                  else
                    heap_up (mm, mm->heap_pos[l2]);
                }
            }
        }
    }
}

void
sim_maxmin_solve_reference (int n_links, const double *capacity, int n_flows,
                            const int *flow_start, const guint32 *flow_links, const double *weight,
                            double *rate)
{
  g_return_if_fail (n_links >= 0 && n_flows >= 0);
  if (n_flows == 0)
    return;
  int *a = g_new0 (int, (gsize) n_flows * n_links);  /* a[f * n_links + l]: times f crosses l */
  gboolean *frozen = g_new0 (gboolean, n_flows);
  double *headroom = g_new (double, n_links);
  int n_unfrozen = 0;
  for (int f = 0; f < n_flows; f++)
    {
      for (int k = flow_start[f]; k < flow_start[f + 1]; k++)
        a[f * n_links + flow_links[k]]++;
      frozen[f] = flow_start[f + 1] == flow_start[f];
      rate[f] = frozen[f] ? INFINITY : 0;
      n_unfrozen += !frozen[f];
    }
  while (n_unfrozen > 0)
    {
      /* Headroom per unit of unfrozen weight: how much every unfrozen flow can still rise on link l,
       * per unit of its weight. */
      double delta = INFINITY;
      for (int l = 0; l < n_links; l++)
        {
          double used = 0, w = 0;
          for (int f = 0; f < n_flows; f++)
            if (a[f * n_links + l])
              {
                used += a[f * n_links + l] * rate[f];
                w += frozen[f] ? 0 : a[f * n_links + l] * (weight ? weight[f] : 1.0);
              }
          headroom[l] = w > 0 ? (capacity[l] - used) / w : INFINITY;
          delta = MIN (delta, headroom[l]);
        }
      delta = MAX (delta, 0.0);
      for (int f = 0; f < n_flows; f++)
        if (!frozen[f])
          rate[f] += delta * (weight ? weight[f] : 1.0);
      /* Links whose headroom was the minimum (up to rounding) are now full: freeze their flows. */
      for (int l = 0; l < n_links; l++)
        if (headroom[l] - delta <= 1e-12 * capacity[l])
          for (int f = 0; f < n_flows; f++)
            if (a[f * n_links + l] && !frozen[f])
              {
                frozen[f] = TRUE;
                n_unfrozen--;
              }
    }
  g_free (a);
  g_free (frozen);
  g_free (headroom);
}
