/* Benchmark: one 2 GiB all-reduce over every DP group of the 10,752-GPU H100 cluster of the embedded
 * default scenario (MLPerf Training v3.1 GPT-3 175B: 1,344 DGX H100, 8 x NDR 400G rails, TP4 PP8 DP336,
 * rank order tp,cp,ep,dp,pp: 32 DP groups of 336 ranks, 2 per node over 168 nodes), all 32 at once
 * sharing the 3-tier rail-optimized fat tree. Runs ring, tree, hierarchical and auto in turn and prints,
 * per algorithm, simulated time, busbw (flow model and closed form), flows, events and wall time; then
 * peak RSS. Ends with `wall_s=… rss_mib=…` (wall_s: scenario load, topology and all runs). */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <glib.h>
#include "model/plan.h"
#include "sim/net/alphabeta.h"
#include "sim/net/collective.h"
#include "sim/scenario/scenario.h"
#include "sim/des/heap.h"

typedef struct {
  SimEngine *engine;
  int done;
  gint64 last_ns;
} Count;

static void
on_done (gpointer user, guint64 arg)
{
  Count *c = user;
  c->done++;
  c->last_ns = sim_engine_now (c->engine);
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  gint64 t_start = g_get_monotonic_time ();
  g_autoptr (GError) error = NULL;
  const char *files[] = { argc > 1 ? argv[1] : SIM_SCENARIO_DEFAULT, NULL };
  g_autoptr (SimScenario) sc = sim_scenario_load (files, NULL, &error);
  SimCollectiveProfile prof;
  g_autoptr (SimTopology) topo = NULL;
  if (sc && sim_scenario_collective_profile (sc, &prof, &error))
    topo = sim_topology_new (sim_scenario_cluster (sc), sim_scenario_fabric (sc), &error);
  if (!topo)
    {
      fprintf (stderr, "bench-collective: %s\n", error->message);
      return 1;
    }
  const ModelPlan *plan = sim_scenario_plan (sc);
  int gpus = sim_topology_n_gpus (topo);
  /* Every DP group once: the group of each rank not yet seen. */
  g_autoptr (GPtrArray) groups = g_ptr_array_new_with_free_func (g_free);
  g_autofree guint8 *seen = g_new0 (guint8, gpus);
  g_autofree int *buf = g_new (int, gpus);
  int dp = 0;
  for (int r = 0; r < gpus; r++)
    if (!seen[r])
      {
        dp = model_plan_group (plan, r, MODEL_DIM_DP, buf);
        for (int i = 0; i < dp; i++)
          seen[buf[i]] = 1;
        g_ptr_array_add (groups, g_memdup2 (buf, sizeof (int) * dp));
      }
  double bytes = 2.0 * (1 << 30);
  int n_links = sim_topology_n_links (topo);
  g_autofree double *caps = g_new (double, n_links);
  sim_collective_link_capacities (topo, &prof, caps);
  SimCollectiveShape shape;
  if (!sim_collective_shape (topo, groups->pdata[0], dp, &shape, &error))
    {
      fprintf (stderr, "bench-collective: %s\n", error->message);
      return 1;
    }
  printf ("# %s: %d GPUs, %d links; %u DP groups x %d ranks (%d per node, %d nodes); 2 GiB all-reduce each, all at once\n",
          files[0], gpus, n_links, groups->len, dp, shape.ranks_per_domain, shape.domains);
  printf ("%-10s %10s %11s %13s %8s %8s %8s\n", "algo", "sim_ms", "busbw_GBps", "closed_busbw", "flows", "events",
          "wall_s");
  static const SimCollectiveAlgo algos[] = { SIM_COLLECTIVE_ALGO_RING, SIM_COLLECTIVE_ALGO_TREE,
                                             SIM_COLLECTIVE_ALGO_HIER, SIM_COLLECTIVE_ALGO_AUTO };
  double factor = sim_alphabeta_busbw_factor (SIM_COLLECTIVE_ALLREDUCE, dp);
  for (gsize k = 0; k < G_N_ELEMENTS (algos); k++)
    {
      gint64 w0 = g_get_monotonic_time ();
      g_autoptr (SimEngine) engine = sim_engine_new ();
      g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, caps, n_links);
      g_autoptr (SimCollective) coll = sim_collective_new (engine, net, topo, &prof);
      Count count = { engine, 0, 0 };
      SimCollectiveAlgo used = algos[k];
      for (guint g = 0; g < groups->len; g++)
        if (!sim_collective_start (coll, SIM_COLLECTIVE_ALLREDUCE, algos[k], groups->pdata[g], dp, bytes, on_done,
                                   &count, g, &used, &error))
          {
            fprintf (stderr, "bench-collective: %s\n", error->message);
            return 1;
          }
      guint64 events = sim_engine_run (engine, -1);
      if (count.done != (int) groups->len)
        {
          fprintf (stderr, "bench-collective: %d of %u collectives completed\n", count.done, groups->len);
          return 1;
        }
      double wall = (g_get_monotonic_time () - w0) * 1e-6;
      double busbw = bytes / (count.last_ns * 1e-9) * factor / 1e9;
      gint64 closed = sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, used, &shape, &prof, bytes);
      char name[16];
      g_snprintf (name, sizeof name, "%s%s", algos[k] == SIM_COLLECTIVE_ALGO_AUTO ? "auto:" : "",
                  sim_collective_algo_name (used));
      printf ("%-10s %10.3f %11.1f %13.1f %8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8.3f\n", name,
              count.last_ns * 1e-6, busbw, bytes / (closed * 1e-9) * factor / 1e9, sim_collective_flows_started (coll),
              events, wall);
    }
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  printf ("wall_s=%.3f rss_mib=%.1f\n", (g_get_monotonic_time () - t_start) * 1e-6, ru.ru_maxrss / 1024.0);
  return 0;
}
