/* `trainsim collective`: predicted nccl-tests rows for one collective over a group of a scenario's
 * plan, so predictions can be laid beside real nccl-tests output.
 *
 *   trainsim collective SCENARIO… --op allreduce --group dp --sizes 1K:16G [--algo auto]
 *
 * For each size (doubling from min to max, as nccl-tests -f 2) it runs the flow model on the
 * scenario's topology and prints size, count, type, time_us, algbw and busbw (nccl-tests' bus
 * bandwidth convention, sim/net/alphabeta.h), the algorithm used, and the closed-form time beside it.
 * --concurrent runs every group of that dimension at once (e.g. all DP groups), sharing the fabric. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "model/plan.h"
#include "sim/net/alphabeta.h"
#include "sim/cli/cmd.h"
#include "sim/net/collective.h"
#include "sim/scenario/scenario.h"

/* "1K", "16G", "4096": binary multiples as nccl-tests -b/-e. */
static gboolean
parse_size (const char *s, double *out, GError **error)
{
  char *end = NULL;
  double v = g_ascii_strtod (s, &end);
  double mult = 1;
  if (end && *end)
    {
      switch (g_ascii_toupper (*end))
        {
        case 'K': mult = 1024.0; break;
        case 'M': mult = 1024.0 * 1024; break;
        case 'G': mult = 1024.0 * 1024 * 1024; break;
        case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
        default: mult = 0; break;
        }
      if (mult > 0 && end[1] != '\0' && g_ascii_strcasecmp (end + 1, "B") != 0)
        mult = 0;
    }
  if (end == s || mult == 0 || !(v >= 0) || v * mult > 1e15)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "size '%s' is not a size: give bytes with an optional K, M, G or T suffix (e.g. 1K:16G)", s);
      return FALSE;
    }
  *out = v * mult;
  return TRUE;
}

static gboolean
parse_sizes (const char *s, double *lo, double *hi, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (s, ":", -1);
  guint n = g_strv_length (parts);
  if (n < 1 || n > 2 || !parse_size (parts[0], lo, error) || !parse_size (parts[n - 1], hi, error))
    {
      if (error && !*error)
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--sizes '%s' is not MIN:MAX or SIZE (e.g. 1K:16G)", s);
      return FALSE;
    }
  if (*hi < *lo || *lo <= 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--sizes '%s': MIN must be positive and at most MAX", s);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_group (const char *s, int *dim, GError **error)
{
  static const struct { const char *name; int dim; } names[] = {
    { "tp", MODEL_DIM_TP }, { "cp", MODEL_DIM_CP }, { "ep", MODEL_DIM_EP }, { "dp", MODEL_DIM_DP },
    { "pp", MODEL_DIM_PP }, { "world", -1 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (s, names[i].name) == 0)
      {
        *dim = names[i].dim;
        return TRUE;
      }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "--group '%s' is not a group: use tp, cp, ep, dp, pp or world", s);
  return FALSE;
}

/* The group of `rank` along dim (-1: every GPU); returns its size. */
static int
group_of (const ModelPlan *plan, int gpus, int dim, int rank, int *out)
{
  if (dim < 0)
    {
      for (int i = 0; i < gpus; i++)
        out[i] = i;
      return gpus;
    }
  return model_plan_group (plan, rank, (ModelDim) dim, out);
}

typedef struct {
  SimEngine *engine;
  int done;
  gint64 last_ns;
} Done;

static void
on_done (gpointer user, guint64 arg)
{
  Done *d = user;
  d->done++;
  d->last_ns = sim_engine_now (d->engine);
}

int
sim_cmd_collective (int argc, char **argv)
{
  /* Defaults are applied after parsing: GOption does not free a preset string it replaces. */
  g_autofree char *op_s = NULL, *group_s = NULL, *sizes_s = NULL, *algo_s = NULL;
  g_auto (GStrv) sets = NULL, files = NULL;
  int rank = 0;
  gboolean concurrent = FALSE;
  GOptionEntry entries[] = {
    { "op", 0, 0, G_OPTION_ARG_STRING, &op_s, "allreduce, reducescatter, allgather, alltoall, broadcast, sendrecv (allreduce)", "OP" },
    { "group", 'g', 0, G_OPTION_ARG_STRING, &group_s, "tp, cp, ep, dp, pp or world (dp)", "DIM" },
    { "rank", 'r', 0, G_OPTION_ARG_INT, &rank, "the group of this global rank (0)", "R" },
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_s, "MIN:MAX bytes, doubling, K/M/G suffixes (1K:16G)", "MIN:MAX" },
    { "algo", 'a', 0, G_OPTION_ARG_STRING, &algo_s,
      "ring, tree, nvls, hier, direct, collnet (fabrics with sharp) or auto (auto)", "ALGO" },
    { "concurrent", 0, 0, G_OPTION_ARG_NONE, &concurrent, "run every group of the dimension at once", NULL },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "override a key: group.key=value (repeatable)", "G.K=V" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "SCENARIO…" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("SCENARIO… — predicted nccl-tests rows for one collective");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
      "Runs the flow model of the collective over the group of --rank along --group, for sizes\n"
      "doubling from MIN to MAX, on the scenario's cluster and fabric, and prints nccl-tests columns\n"
      "(busbw: all-reduce algbw*2(n-1)/n, all-gather/reduce-scatter/all-to-all (n-1)/n) plus the\n"
      "closed-form time. With no SCENARIO: the embedded default.\n"
      "Example: trainsim collective runs/gpt3-175b-mlperf-v3.1.ini --op allreduce --group dp --sizes 1M:2G");
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim collective: %s\n", error->message);
      return 2;
    }
  if (!op_s) op_s = g_strdup ("allreduce");
  if (!group_s) group_s = g_strdup ("dp");
  if (!sizes_s) sizes_s = g_strdup ("1K:16G");
  if (!algo_s) algo_s = g_strdup ("auto");
  SimCollectiveOp op;
  SimCollectiveAlgo algo;
  int dim;
  double lo, hi;
  if (!sim_collective_op_parse (op_s, &op, &error) || !sim_collective_algo_parse (algo_s, &algo, &error)
      || !parse_group (group_s, &dim, &error) || !parse_sizes (sizes_s, &lo, &hi, &error))
    {
      fprintf (stderr, "trainsim collective: %s\n", error->message);
      return 2;
    }
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files, (const char *const *) sets, &error);
  if (!sc)
    {
      fprintf (stderr, "trainsim collective: %s\n", error->message);
      return 2;
    }
  const ModelPlan *plan = sim_scenario_plan (sc);
  g_autoptr (SimTopology) topo = sim_topology_new (sim_scenario_cluster (sc), sim_scenario_fabric (sc), &error);
  if (!topo)
    {
      fprintf (stderr, "trainsim collective: %s\n", error->message);
      return 2;
    }
  int gpus = sim_topology_n_gpus (topo);
  if (rank < 0 || rank >= gpus)
    {
      fprintf (stderr, "trainsim collective: --rank %d is outside 0..%d\n", rank, gpus - 1);
      return 2;
    }
  SimCollectiveProfile prof;
  if (!sim_scenario_collective_profile (sc, &prof, &error))
    {
      fprintf (stderr, "trainsim collective: %s\n", error->message);
      return 2;
    }

  /* Groups: the one of --rank, or (--concurrent) every group of the dimension, each once. */
  g_autoptr (GPtrArray) groups = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (int));
  g_autofree int *buf = g_new (int, gpus);
  g_autofree guint8 *seen = g_new0 (guint8, gpus);
  for (int r = concurrent ? 0 : rank; r < (concurrent ? gpus : rank + 1); r++)
    {
      if (seen[r])
        continue;
      int n = group_of (plan, gpus, dim, r, buf);
      for (int i = 0; i < n; i++)
        seen[buf[i]] = 1;
      g_ptr_array_add (groups, g_memdup2 (buf, sizeof (int) * n));
      g_array_append_val (sizes, n);
    }
  int n = g_array_index (sizes, int, 0);
  const int *g0 = groups->pdata[0];
  if (op == SIM_COLLECTIVE_SENDRECV && n < 2)
    {
      fprintf (stderr, "trainsim collective: send/recv needs a group of at least 2 GPUs\n");
      return 2;
    }
  int n_use = op == SIM_COLLECTIVE_SENDRECV ? 2 : n; /* send/recv: first member to the second */
  SimCollectiveShape shape;
  if (!sim_collective_shape (topo, g0, n_use, &shape, &error))
    {
      fprintf (stderr, "trainsim collective: %s\n", error->message);
      return 2;
    }
  int n_links = sim_topology_n_links (topo);
  g_autofree double *caps = g_new (double, n_links);
  sim_collective_link_capacities (topo, &prof, caps);

  printf ("# trainsim collective (trainsim %s, git %s)\n", PACKAGE_VERSION, TRAINSIM_GIT_REV);
  const char *const *read = sim_scenario_files (sc);
  printf ("# scenario:");
  for (int i = 0; read && read[i]; i++)
    printf (" %s", read[i]);
  printf ("\n# %s over the %s group of rank %d: %d GPUs in %d NVLink domain(s), %d per domain; %u group(s) at once\n",
          sim_collective_op_name (op), group_s, rank, n_use, shape.domains, shape.ranks_per_domain, groups->len);
  printf ("# profile: nvlink_eff %.3f nic_eff %.4f nvls_eff %.2f%s; algo %s%s\n", prof.nvlink_eff, prof.nic_eff,
          prof.nvls_eff, shape.sharp ? " sharp (collnet)" : "", sim_collective_algo_name (algo),
          algo == SIM_COLLECTIVE_ALGO_AUTO ? " (fastest closed form per size)" : "");
  printf ("#\n# %10s %12s %8s %7s %12s %9s %9s %12s\n", "size", "count", "type", "algo", "time", "algbw", "busbw",
          "closed_time");
  printf ("# %10s %12s %8s %7s %12s %9s %9s %12s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "(us)");
  double factor = sim_alphabeta_busbw_factor (op, n_use);
  double per_elem = (op == SIM_COLLECTIVE_ALLGATHER || op == SIM_COLLECTIVE_REDUCE_SCATTER) ? 4.0 * n_use : 4.0;
  for (double size = lo; size <= hi * (1 + 1e-12); size *= 2)
    {
      g_autoptr (SimEngine) engine = sim_engine_new ();
      g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, caps, n_links);
      g_autoptr (SimCollective) coll = sim_collective_new (engine, net, topo, &prof);
      Done d = { engine, 0, 0 };
      SimCollectiveAlgo used = algo;
      for (guint k = 0; k < groups->len; k++)
        {
          int gn = op == SIM_COLLECTIVE_SENDRECV ? 2 : g_array_index (sizes, int, k);
          if (!sim_collective_start (coll, op, algo, groups->pdata[k], gn, size, on_done, &d, k, k == 0 ? &used : NULL,
                                     &error))
            {
              fprintf (stderr, "trainsim collective: %s\n", error->message);
              return 2;
            }
        }
      sim_engine_run (engine, -1);
      if (d.done != (int) groups->len)
        {
          fprintf (stderr, "trainsim collective: %d of %u collectives completed\n", d.done, groups->len);
          return 1;
        }
      double t_s = d.last_ns * 1e-9;
      double algbw = t_s > 0 ? size / t_s / 1e9 : 0;
      gint64 closed = sim_alphabeta_time_ns (op, used, &shape, &prof, size);
      g_autofree char *algo_proto = g_strdup_printf (
        "%s%s", sim_collective_algo_name (used),
        sim_alphabeta_protocol (op, used, &shape, &prof, size) == SIM_COLLECTIVE_PROTO_LL ? "/LL" : "");
      printf ("  %10.0f %12.0f %8s %7s %12.2f %9.2f %9.2f %12.2f\n", size, size / per_elem, "float", algo_proto,
              t_s * 1e6, algbw, algbw * factor, closed * 1e-3);
    }
  return 0;
}
