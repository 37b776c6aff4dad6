/* Cost of max-min flow sharing at collective scale: 10,752 flows (one per GPU of the MLPerf GPT-3
 * run) start in one event over a two-tier leaf/spine fabric with 4:1 oversubscription, random
 * permutation traffic and hashed spine choice, so leaf uplinks and spine downlinks are shared
 * across leaves and the flows form one large connected component (the worst case for the
 * component-local recompute).
 *   uniform:   equal sizes; one solve at the start, the flows end in few distinct nanoseconds.
 *   staggered: sizes spread over [32, 64] MiB, so nearly every completion is its own event and
 *              re-solves the (shrinking) component: the quadratic worst case.
 * Fabric numbers are round placeholders (50 GB/s = 400 Gb/s NIC), not a calibrated system. */
#include "config.h"
#include <stdio.h>
#include <time.h>
#include <glib.h>

/* CPU time of this process in microseconds: the CI machine is shared, so wall time would also
 * count time spent descheduled. */
static gint64
cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
#include "sim/des/engine.h"
#include "sim/net/flow.h"
#include "sim/des/heap.h"

#define HOSTS 10752
#define PER_LEAF 32
#define LEAVES (HOSTS / PER_LEAF)
#define SPINES 8
#define NIC_BYTES_PER_S 50e9

typedef struct {
  int n_done;
  gint64 last_ns;
  SimEngine *engine;
} Count;

static void
on_done (gpointer user, guint64 arg)
{
  Count *c = user;
  c->n_done++;
  c->last_ns = sim_engine_now (c->engine);
}

static guint32 link_host_up (int h) { return (guint32) h; }
static guint32 link_host_down (int h) { return (guint32) (HOSTS + h); }
static guint32 link_leaf_up (int leaf, int s) { return (guint32) (2 * HOSTS + leaf * SPINES + s); }
static guint32 link_spine_down (int s, int leaf) { return (guint32) (2 * HOSTS + LEAVES * SPINES + s * LEAVES + leaf); }
#define N_LINKS (2 * HOSTS + 2 * LEAVES * SPINES)

typedef struct {
  double start_ms, total_ms;
  SimFlowNetStats stats;
  gint64 sim_end_ns;
} Result;

static Result
run (gboolean staggered, guint32 seed)
{
  static double cap[N_LINKS];
  for (int l = 0; l < N_LINKS; l++)
    cap[l] = NIC_BYTES_PER_S;  /* 8 uplinks of 50 GB/s for 32 hosts: 4:1 oversubscribed */
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  static int dst[HOSTS];
  for (int h = 0; h < HOSTS; h++)
    dst[h] = h;
  for (int h = HOSTS - 1; h > 0; h--)
    {
      int j = g_rand_int_range (rng, 0, h + 1), t = dst[h];
      dst[h] = dst[j];
      dst[j] = t;
    }
  g_autoptr (SimEngine) engine = sim_engine_new ();
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, N_LINKS);
  Count count = { 0, 0, engine };
  Result r = { 0 };
  gint64 t0 = cpu_us ();
  for (int h = 0; h < HOSTS; h++)
    {
      int s = (int) ((guint32) (h * 2654435761u + dst[h] * 40503u) >> 7) % SPINES;
      guint32 path[4];
      int n = 0;
      path[n++] = link_host_up (h);
      if (h / PER_LEAF != dst[h] / PER_LEAF)
        {
          path[n++] = link_leaf_up (h / PER_LEAF, s);
          path[n++] = link_spine_down (s, dst[h] / PER_LEAF);
        }
      path[n++] = link_host_down (dst[h]);
      double bytes = staggered ? g_rand_double_range (rng, 32, 64) * 1048576 : 64 * 1048576.0;
      sim_flow_net_start (net, path, n, bytes, on_done, &count, (guint64) h);
    }
  sim_engine_run (engine, 0);  /* the batched solve of all starts */
  gint64 t1 = cpu_us ();
  sim_engine_run (engine, -1);
  gint64 t2 = cpu_us ();
  g_assert (count.n_done == HOSTS);
  r.start_ms = (t1 - t0) * 1e-3;
  r.total_ms = (t2 - t0) * 1e-3;
  r.stats = sim_flow_net_stats (net);
  r.sim_end_ns = count.last_ns;
  return r;
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  guint32 seed = argc > 1 ? (guint32) g_ascii_strtoull (argv[1], NULL, 10) : 1;
  printf ("# %d flows, %d links (%d leaves x %d spines, 4:1), random permutation, seed %u\n",
          HOSTS, N_LINKS, LEAVES, SPINES, seed);
  Result u = run (FALSE, seed), s = run (TRUE, seed);
  const char *names[] = { "uniform", "staggered" };
  Result *rs[] = { &u, &s };
  for (int i = 0; i < 2; i++)
    printf ("%-9s start batch %.1f ms, whole run %.1f ms; %" G_GUINT64_FORMAT " recomputes, %"
            G_GUINT64_FORMAT " flows re-solved (%.0f ns each), %" G_GUINT64_FORMAT
            " completions re-planned; simulated %.3f ms\n",
            names[i], rs[i]->start_ms, rs[i]->total_ms, rs[i]->stats.recomputes,
            rs[i]->stats.flows_resolved, rs[i]->total_ms * 1e6 / rs[i]->stats.flows_resolved,
            rs[i]->stats.reschedules, rs[i]->sim_end_ns * 1e-6);
  printf ("flows=%d start_batch_ms=%.1f uniform_run_ms=%.1f staggered_run_ms=%.1f "
          "staggered_recomputes=%" G_GUINT64_FORMAT " ns_per_flow_resolved=%.0f\n",
          HOSTS, u.start_ms, u.total_ms, s.total_ms, s.stats.recomputes,
          s.total_ms * 1e6 / s.stats.flows_resolved);
  return 0;
}
