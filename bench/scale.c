/* bench/scale: one training step of GPT-3 175B from 8 to 1,048,576 H100, default (one rank per
 * pipeline stage) and --full, each case in its own process so that its peak RSS is its own.
 *
 * Usage: bench/scale [--full-max GPUS] [--max GPUS] [--moe] [--tsv FILE] [--plot FILE.png]
 *   --full-max: largest cluster simulated with --full (default 10752; --full at 131,072 takes
 *               minutes and GiBs, so it is asked for, not run by default)
 *   --max:      largest cluster (default 1048576)
 *   --moe:      also Mixtral 8x7B (EP 8) at 64, 512, 4,096 and 32,768 GPUs, default mode: the all-to-alls' cost
 *   --tsv:      the table as TSV (columns below); --plot: wall and peak RSS vs GPUs, drawn by
 *               plots/bench-scale.gp with gnuplot (TRAINSIM_PLOTS_DIR or ./plots)
 * Prints one table: case, GPUs, mode, wall s, peak RSS MiB, events, events/s, ranks simulated,
 * links in the topology, RSS per simulated rank (KiB), predicted step s.
 *
 * The cases: the embedded MLPerf v3.1 scenario (TP 4, PP 8, VPP 12, FP8, 8 sequences per DP
 * replica, so the batch follows the GPUs), with the cluster size changed. Below 32 GPUs PP falls
 * to GPUs / 4. The fabric is the scenario's 3-tier rail-optimized NDR fat tree; its 64-port
 * switches reach 32,768 GPUs on 8 rails, so larger clusters use 128-port switches (a 64 x 800G
 * Spectrum-4 or Quantum-X800 switch split into 128 x 400G) and, above 524,288, two planes of 200G
 * ports on 256-port switches (fabric.planes = 2: the same split into 256 x 200G). Memory is
 * advisory: below 512 GPUs the model does not fit, the step is timed. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/des/heap.h"

typedef struct {
  double wall_s, step_s;
  guint64 events;
  int ranks;
  double links;
  int ok;
} Result;

static const int sizes[] = { 8, 64, 512, 4096, 10752, 32768, 131072, 1048576 };

/* The MoE case (--moe): Mixtral 8x7B, TP 2 with SP, EP 8, 4 sequences of 4,096 per replica, on the
 * embedded H100 profile and NDR fabric: every MoE layer's all-to-alls over the EP groups. */
static const int moe_sizes[] = { 64, 512, 4096, 32768 };

/* Runs in the child: loads the case, simulates one step, writes the result to fd. */
static int
run_case (int gpus, gboolean full, gboolean moe, int fd)
{
  char g[64], pp[64], radix[64];
  g_snprintf (g, sizeof g, "cluster.gpus=%d", gpus);
  g_snprintf (pp, sizeof pp, "parallel.pp=%d", gpus >= 32 ? 8 : MAX (gpus / 4, 1));
  g_snprintf (radix, sizeof radix, "fabric.radix=%d", gpus > 524288 ? 256 : gpus > 32768 ? 128 : 64);
  const char *sets[] = { g, pp, radix, "parallel.global_batch_per_dp=8",
                         gpus >= 32 ? "parallel.vpp=12" : "parallel.vpp=1",
                         gpus > 524288 ? "fabric.planes=2" : "fabric.planes=1", NULL };
  const char *moe_sets[] = { g, "parallel.tp=2", "parallel.ep=8", "parallel.sp=true", "parallel.micro_batch=1",
                             "parallel.global_batch_per_dp=4", "training.seq_len=4096", NULL };
  const char *files[] = { NULL };
  const char *moe_files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "models/mixtral-8x7b.ini",
                              NULL };
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (moe ? moe_files : files, moe ? moe_sets : sets, &error);
  Result res = { 0 };
  if (sc != NULL)
    {
      SimPredictOptions o = { 0 };
      sim_runner_options_init (&o.run);
      o.run.full = full;
      o.run.memory_advisory = TRUE; /* small clusters do not fit GPT-3 175B: time the step anyway */
      SimRunnerPrediction p;
      gint64 t0 = g_get_monotonic_time ();
      if (sim_runner_predict (sc, &o, &p, &error))
        {
          res.wall_s = (g_get_monotonic_time () - t0) / 1e6;
          res.step_s = p.step_s;
          res.events = p.step.events;
          res.ranks = p.step.ranks_simulated;
          g_autoptr (SimTopology) topo = sim_topology_new (sim_scenario_cluster (sc), sim_scenario_fabric (sc), NULL);
          res.links = topo ? sim_topology_n_links (topo) : 0;
          res.ok = 1;
        }
      sim_scenario_free (sc);
    }
  if (!res.ok)
    fprintf (stderr, "bench/scale: %d GPUs: %s\n", gpus, error ? error->message : "failed");
  g_clear_error (&error);
  return write (fd, &res, sizeof res) == (ssize_t) sizeof res && res.ok ? 0 : 1;
}

static gboolean
measure (int gpus, gboolean full, gboolean moe, Result *res, double *rss_mib)
{
  int fds[2];
  if (pipe (fds) != 0)
    return FALSE;
  fflush (stdout);
  pid_t pid = fork ();
  if (pid < 0)
    return FALSE;
  if (pid == 0)
    {
      close (fds[0]);
      _exit (run_case (gpus, full, moe, fds[1]));
    }
  close (fds[1]);
  ssize_t n = read (fds[0], res, sizeof *res);
  close (fds[0]);
  int status;
  struct rusage ru;
  while (wait4 (pid, &status, 0, &ru) < 0 && errno == EINTR)
    ;
  *rss_mib = ru.ru_maxrss / 1024.0; /* Linux: KiB, this child alone */
  return n == (ssize_t) sizeof *res && res->ok && WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* Measures one case and prints its row (and its TSV row); FALSE if it failed. */
static gboolean
report_case (const char *name, int gpus, gboolean full, gboolean moe, FILE *tsv)
{
  Result r;
  double rss;
  if (!measure (gpus, full, moe, &r, &rss))
    {
      printf ("%-18s %9d %8s failed\n", name, gpus, full ? "full" : "default");
      return FALSE;
    }
  double eps = r.wall_s > 0 ? r.events / r.wall_s : 0;
  double per_rank = rss * 1024.0 / MAX (r.ranks, 1);
  printf ("%-18s %9d %8s %9.3f %10.1f %11" G_GUINT64_FORMAT " %10.3g %8d %10.0f %10.1f %8.4f\n", name, gpus,
          full ? "full" : "default", r.wall_s, rss, r.events, eps, r.ranks, r.links, per_rank, r.step_s);
  if (tsv)
    fprintf (tsv, "%s\t%d\t%s\t%.4f\t%.1f\t%" G_GUINT64_FORMAT "\t%.4g\t%d\t%.0f\t%.2f\t%.6f\n", name, gpus,
             full ? "full" : "default", r.wall_s, rss, r.events, eps, r.ranks, r.links, per_rank, r.step_s);
  return TRUE;
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  int full_max = 10752, max = 1048576;
  const char *tsv_path = NULL, *plot_path = NULL;
  gboolean moe = FALSE;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--full-max") == 0 && i + 1 < argc)
      full_max = atoi (argv[++i]);
    else if (strcmp (argv[i], "--max") == 0 && i + 1 < argc)
      max = atoi (argv[++i]);
    else if (strcmp (argv[i], "--tsv") == 0 && i + 1 < argc)
      tsv_path = argv[++i];
    else if (strcmp (argv[i], "--plot") == 0 && i + 1 < argc)
      plot_path = argv[++i];
    else if (strcmp (argv[i], "--moe") == 0)
      moe = TRUE;
    else
      {
        fprintf (stderr, "usage: bench/scale [--full-max GPUS] [--max GPUS] [--moe] [--tsv FILE] [--plot FILE.png]\n");
        return 2;
      }
  g_autofree char *tmp_tsv = NULL;
  if (plot_path != NULL && tsv_path == NULL)
    tsv_path = tmp_tsv = g_strdup_printf ("%s.tsv", plot_path);
  FILE *tsv = tsv_path ? fopen (tsv_path, "w") : NULL;
  if (tsv_path && !tsv)
    {
      fprintf (stderr, "bench/scale: %s: %s\n", tsv_path, g_strerror (errno));
      return 2;
    }
  const char *head = "case\tgpus\tmode\twall_s\tpeak_rss_mib\tevents\tevents_per_s\tranks_simulated\tlinks\t"
                     "rss_kib_per_rank\tstep_s";
  const char *heap = sim_heap_describe ();
  if (tsv)
    fprintf (tsv, "# bench/scale: GPT-3 175B (MLPerf v3.1 scenario), one step per case and mode; heap in %s\n%s\n",
             heap, head);
  printf ("# heap in %s\n", heap);
  printf ("%-18s %9s %8s %9s %10s %11s %10s %8s %10s %10s %8s\n", "case", "GPUs", "mode", "wall s",
          "peak MiB", "events", "events/s", "ranks", "links", "KiB/rank", "step s");
  int failed = 0;
  for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (int full = 0; full <= 1; full++)
      if (sizes[k] <= max && (!full || sizes[k] <= full_max))
        failed += !report_case ("gpt3-175b", sizes[k], full, FALSE, tsv);
  for (gsize k = 0; moe && k < G_N_ELEMENTS (moe_sizes); k++)
    if (moe_sizes[k] <= max)
      failed += !report_case ("mixtral-8x7b", moe_sizes[k], FALSE, TRUE, tsv);
  if (tsv)
    fclose (tsv);
  if (plot_path)
    {
      const char *dir = g_getenv ("TRAINSIM_PLOTS_DIR");
      g_autofree char *script = g_build_filename (dir ? dir : "plots", "bench-scale.gp", NULL);
      g_autofree char *cmd = g_strdup_printf ("gnuplot -c '%s' '%s' '%s'", script, tsv_path, plot_path);
      if (system (cmd) != 0)
        {
          fprintf (stderr, "bench/scale: %s failed (gnuplot installed? plots/ found?)\n", cmd);
          failed++;
        }
      else
        printf ("plot: %s\n", plot_path);
    }
  return failed ? 1 : 0;
}
