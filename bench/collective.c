/* Benchmark: one 2 GiB all-reduce over every DP group of the 10,752-GPU H100 cluster of MLPerf
 * Training v3.1 GPT-3 175B (1,344 DGX H100, 8 x NDR 400G rails, TP4 PP8 DP336, rank order tp,cp,dp,pp:
 * 32 DP groups of 336 ranks, 2 per node, 168 nodes each), all 32 at once sharing a 3-tier
 * rail-optimized fat tree of 64-port switches. Runs ring, tree, hierarchical and auto in turn and
 * prints, per algorithm, simulated time, busbw, flows, events and wall time; then peak RSS.
 * Constants: the H100 figures of scenarios/hardware/ (450 GB/s NVLink per direction, 50 GB/s NIC,
 * efficiencies 0.80 / 4096/4122). Ends with `wall_s=… rss_mib=…` (wall_s: all runs together). */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <glib.h>
#include "sim/alphabeta.h"
#include "sim/collective.h"

#define TP 4
#define PP 8
#define DP 336
#define GPUS (TP * PP * DP)

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
  gint64 t_start = g_get_monotonic_time ();
  SimClusterSpec cs = { 0 };
  cs.gpus = GPUS;
  cs.gpus_per_node = 8;
  cs.nvlink_domain = 8;
  cs.nvlink_bw_bytes_per_s = 450e9;
  cs.nvls = TRUE;
  cs.nvlink_latency_ns = 1000;
  cs.nics_per_gpu = 1;
  cs.nic_bw_bytes_per_s = 50e9;
  cs.nic_latency_ns = 2000;
  SimFabricSpec fs = { 0 };
  fs.kind = SIM_FABRIC_RAIL_OPTIMIZED;
  fs.tiers = 3;
  fs.radix = 64;
  fs.oversubscription[0] = fs.oversubscription[1] = fs.oversubscription[2] = 1;
  fs.hop_latency_ns = 500;
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) topo = sim_topology_new (&cs, &fs, &error);
  if (!topo)
    {
      fprintf (stderr, "bench-collective: %s\n", error->message);
      return 1;
    }
  SimCollectiveProfile prof = { 0 };
  prof.nvlink_eff = 0.80;
  prof.nvls_eff = 0.85;
  prof.nic_eff = 4096.0 / 4122.0;
  for (int a = 0; a < SIM_COLLECTIVE_ALGO_COUNT; a++)
    prof.base_latency_ns[a] = 8400;
  prof.base_latency_ns[SIM_COLLECTIVE_ALGO_NVLS] = 25000;
  prof.nvlink_step_latency_ns = 3400;
  prof.net_step_latency_ns = 14000;
  prof.chunk_bytes = 512 * 1024;   /* NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 */

  /* DP groups: rank = tp + TP*dp + TP*DP*pp (cp = 1). */
  static int groups[TP * PP][DP];
  for (int pp = 0; pp < PP; pp++)
    for (int tp = 0; tp < TP; tp++)
      for (int dp = 0; dp < DP; dp++)
        groups[pp * TP + tp][dp] = tp + TP * dp + TP * DP * pp;
  double bytes = 2.0 * (1 << 30);
  int n_links = sim_topology_n_links (topo);
  double *caps = g_new (double, n_links);
  sim_collective_link_capacities (topo, &prof, caps);
  SimCollectiveShape shape;
  if (!sim_collective_shape (topo, groups[0], DP, &shape, &error))
    {
      fprintf (stderr, "bench-collective: %s\n", error->message);
      return 1;
    }
  printf ("# %d GPUs, %d links; %d DP groups x %d ranks (%d per node, %d nodes); 2 GiB all-reduce each\n", GPUS,
          n_links, TP * PP, DP, shape.ranks_per_domain, shape.domains);
  printf ("%-6s %12s %12s %14s %10s %10s %8s\n", "algo", "sim_ms", "busbw_GBps", "closed_busbw", "flows",
          "events", "wall_s");
  static const SimCollectiveAlgo algos[] = { SIM_COLLECTIVE_ALGO_RING, SIM_COLLECTIVE_ALGO_TREE,
                                             SIM_COLLECTIVE_ALGO_HIER, SIM_COLLECTIVE_ALGO_AUTO };
  double factor = sim_alphabeta_busbw_factor (SIM_COLLECTIVE_ALLREDUCE, DP);
  for (gsize k = 0; k < G_N_ELEMENTS (algos); k++)
    {
      gint64 w0 = g_get_monotonic_time ();
      g_autoptr (SimEngine) engine = sim_engine_new ();
      g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, caps, n_links);
      g_autoptr (SimCollective) coll = sim_collective_new (engine, net, topo, &prof);
      Count count = { engine, 0, 0 };
      SimCollectiveAlgo used = algos[k];
      for (int g = 0; g < TP * PP; g++)
        if (!sim_collective_start (coll, SIM_COLLECTIVE_ALLREDUCE, algos[k], groups[g], DP, bytes, on_done, &count,
                                   (guint64) g, &used, &error))
          {
            fprintf (stderr, "bench-collective: %s\n", error->message);
            return 1;
          }
      guint64 events = sim_engine_run (engine, -1);
      if (count.done != TP * PP)
        {
          fprintf (stderr, "bench-collective: %d of %d collectives completed\n", count.done, TP * PP);
          return 1;
        }
      double wall = (g_get_monotonic_time () - w0) * 1e-6;
      double busbw = bytes / (count.last_ns * 1e-9) * factor / 1e9;
      gint64 closed = sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, used, &shape, &prof, bytes);
      char name[16];
      g_snprintf (name, sizeof name, "%s%s", algos[k] == SIM_COLLECTIVE_ALGO_AUTO ? "auto:" : "",
                  sim_collective_algo_name (used));
      printf ("%-6s %12.3f %12.1f %14.1f %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT " %8.3f\n", name,
              count.last_ns * 1e-6, busbw, bytes / (closed * 1e-9) * factor / 1e9,
              sim_collective_flows_started (coll), events, wall);
    }
  g_free (caps);
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  double wall_s = (g_get_monotonic_time () - t_start) * 1e-6;
  printf ("wall_s=%.3f rss_mib=%.1f\n", wall_s, ru.ru_maxrss / 1024.0);
  return 0;
}
