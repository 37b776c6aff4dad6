/* `trainsim topology SCENARIO… [--set group.key=value]… [--route SRC:DST]`: builds the cluster's
 * topology from the scenario's [cluster] and [fabric] and prints what was built (counts per tier,
 * links, scale-out bisection), optionally the route between two GPUs. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <glib.h>
#include "sim/cli/cmd.h"
#include "sim/scenario/scenario.h"
#include "sim/net/topology.h"

static gboolean
parse_pair (const char *text, int *a, int *b)
{
  char *end = NULL;
  errno = 0;
  long x = strtol (text, &end, 10);
  if (errno || end == text || *end != ':' || x < 0 || x > G_MAXINT)
    return FALSE;
  const char *rest = end + 1;
  long y = strtol (rest, &end, 10);
  if (errno || end == rest || *end != '\0' || y < 0 || y > G_MAXINT)
    return FALSE;
  *a = (int) x;
  *b = (int) y;
  return TRUE;
}

static void
print_route (const SimTopology *topo, const char *label, int n, const guint32 *links)
{
  static const char *const node_name[] = { "gpu", "nvswitch", "nic", "leaf", "spine", "core" };
  printf ("%s (%d links, %.2f us):", label, n, sim_topology_path_latency_ns (topo, links, n) / 1e3);
  SimNodeRef prev = { 0 };
  for (int i = 0; i < n; i++)
    {
      SimNodeRef from, to;
      sim_topology_link_ends (topo, (int) links[i], &from, &to);
      if (i == 0)
        printf (" %s %d", node_name[from.kind], from.index);
      else if (prev.kind >= SIM_NODE_LEAF && (from.kind != prev.kind || from.index != prev.index))
        /* Adaptive routing leaves non-binding trunks off the route: the switches in between spread it. */
        printf (" =[spread by adaptive routing]=> %s %d", node_name[from.kind], from.index);
      printf (" -[%s #%u]-> %s %d", sim_link_kind_name (sim_topology_link (topo, (int) links[i])->kind),
              links[i], node_name[to.kind], to.index);
      prev = to;
    }
  printf ("\n");
}

int
sim_cmd_topology (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) files = NULL;
  g_autofree char *route = NULL;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "override one key (after the files)", "GROUP.KEY=VALUE" },
    { "route", 'r', 0, G_OPTION_ARG_STRING, &route, "also print the routes between two GPUs", "SRC:DST" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "SCENARIO..." },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO...]");
  g_option_context_set_summary (ctx, "Builds the cluster topology of a scenario (files merged in order, then "
                                "--set overrides; none: the embedded default) and prints GPUs, NVLink "
                                "domains, NICs, switches per tier, directed links and the scale-out "
                                "bisection bandwidth.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim topology: %s\n", error->message);
      return 2;
    }
  int src = 0, dst = 0;
  if (route && !parse_pair (route, &src, &dst))
    {
      fprintf (stderr, "trainsim topology: --route '%s' is not SRC:DST: give two GPU indices, e.g. 0:9\n",
               route);
      return 2;
    }
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files, (const char *const *) sets,
                                                  &error);
  if (!sc)
    {
      fprintf (stderr, "trainsim topology: %s\n", error->message);
      return 2;
    }
  g_autoptr (SimTopology) topo = sim_topology_new (sim_scenario_cluster (sc), sim_scenario_fabric (sc), &error);
  if (!topo)
    {
      fprintf (stderr, "trainsim topology: cannot build the cluster: %s\n", error->message);
      return 2;
    }
  const SimScenarioRun *run = sim_scenario_run (sc);
  if (run->name)
    printf ("scenario          %s\n", run->name);
  g_autofree char *text = sim_topology_describe (topo);
  fputs (text, stdout);
  if (route)
    {
      int gpus = sim_topology_n_gpus (topo);
      if (src >= gpus || dst >= gpus)
        {
          fprintf (stderr, "trainsim topology: --route %d:%d is outside the %d GPUs: use indices 0..%d\n",
                   src, dst, gpus, gpus - 1);
          return 2;
        }
      guint32 links[SIM_TOPOLOGY_MAX_HOPS];
      int n = sim_topology_route (topo, src, dst, 0, links);
      print_route (topo, "route", n, links);
      n = sim_topology_route_pxn (topo, src, dst, 0, links);
      print_route (topo, "route with PXN", n, links);
    }
  return 0;
}
