/* Closed-form collective times (sim/net/alphabeta.c): nccl-tests bus-bandwidth conventions, the
 * equations on hand-derived cases, algorithm choice, and the published busbw figures of
 * tests/data/nccl-busbw.tsv predicted within 10% from line rates and published overheads. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "sim/net/alphabeta.h"
#include "coll-profile.h"

#define GBPS 1e9


typedef struct {
  const char *gpu;
  double nvlink_GBps;   /* per direction, datasheet (hardware.md section 1) */
  double nic_GBps;      /* per GPU, datasheet line rate (hardware.md section 1b) */
  gboolean nvls;
  gboolean blackwell;
} Hw;

static const Hw hw_table[] = {
  { "H100-SXM", 450, 50, TRUE, FALSE },        /* NVLink 4 900 GB/s bidirectional; NDR 400 Gb/s */
  { "H200-SXM", 450, 50, TRUE, FALSE },        /* NVLink 4; NDR */
  { "A100-SXM4-80GB", 300, 25, FALSE, FALSE }, /* NVLink 3 600 GB/s bidirectional; HDR 200 Gb/s */
  { "GB200", 900, 50, TRUE, TRUE },            /* NVLink 5 1.8 TB/s bidirectional; NDR */
};

static const Hw *
hw_lookup (const char *gpu)
{
  for (gsize i = 0; i < G_N_ELEMENTS (hw_table); i++)
    if (strcmp (hw_table[i].gpu, gpu) == 0)
      return &hw_table[i];
  return NULL;
}

static void
shape_for (SimCollectiveShape *s, const Hw *hw, int ranks, int per_node)
{
  memset (s, 0, sizeof *s);
  s->ranks = ranks;
  s->ranks_per_domain = MIN (ranks, per_node);
  s->domains = (ranks + per_node - 1) / per_node;
  s->uniform = ranks % s->ranks_per_domain == 0;
  s->nvlink_bw_bytes_per_s = hw->nvlink_GBps * GBPS;
  s->nic_bw_bytes_per_s = hw->nic_GBps * GBPS;
  s->nvls = hw->nvls;
  s->nvlink_latency_ns = 1000;
  s->net_latency_ns = 3000;
}

/* Names as in the TSV (the test does not depend on the flow model's parser). */
static SimCollectiveOp
op_of (const char *s)
{
  static const char *const names[] = { "allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "sendrecv" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (s, names[i]) == 0)
      return (SimCollectiveOp) i;
  g_assert_not_reached ();
}

static SimCollectiveAlgo
algo_of (const char *s)
{
  static const char *const names[] = { "auto", "ring", "tree", "nvls", "hier", "direct" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (s, names[i]) == 0)
      return (SimCollectiveAlgo) i;
  g_assert_not_reached ();
}

static double
busbw_GBps (SimCollectiveOp op, int n, double bytes, gint64 t_ns)
{
  return bytes / (t_ns * 1e-9) * sim_alphabeta_busbw_factor (op, n) / GBPS;
}

static void
test_busbw_factors (void)
{
  /* nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather/reduce-scatter (n-1)/n. */
  g_assert_cmpfloat_with_epsilon (sim_alphabeta_busbw_factor (SIM_COLLECTIVE_ALLREDUCE, 8), 1.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_alphabeta_busbw_factor (SIM_COLLECTIVE_ALLGATHER, 8), 0.875, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_alphabeta_busbw_factor (SIM_COLLECTIVE_REDUCE_SCATTER, 4), 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_alphabeta_busbw_factor (SIM_COLLECTIVE_BROADCAST, 8), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (sim_alphabeta_busbw_factor (SIM_COLLECTIVE_SENDRECV, 2), 1.0, 1e-12);
}

static void
test_ring_busbw_is_link_rate (void)
{
  /* A ring moves 2(n-1)/n S over each rank's link, so busbw -> the achievable link rate at any n
   * once latency is negligible: 8 H100 in one domain: 450 * 0.8 = 360 GB/s. */
  SimCollectiveProfile p;
  SimCollectiveShape s;
  coll_profile_reference (&p, FALSE);
  shape_for (&s, hw_lookup ("H100-SXM"), 8, 8);
  double bytes = 16.0 * (1 << 30);
  gint64 t = sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, &s, &p, bytes);
  g_assert_cmpfloat (fabs (busbw_GBps (SIM_COLLECTIVE_ALLREDUCE, 8, bytes, t) - 360.0), <, 0.5);
  /* The latency term: base 8.4 us + 14 steps * (3.4 + 1.0) us = 70 us, the whole time at 0+ bytes. */
  g_assert_cmpint (sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, &s, &p),
                   ==, 8400 + 14 * 4400);
  g_assert_cmpint (sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, &s, &p, 0), ==, 0);
}

static void
test_hier_equation (void)
{
  /* 2 domains x 8 H100: hier AR of 1 GiB = 2 * 7/8 S/360e9 + 2 * 1/2 * (S/8)/(50e9*eff) + latency. */
  SimCollectiveProfile p;
  SimCollectiveShape s;
  coll_profile_reference (&p, FALSE);
  shape_for (&s, hw_lookup ("H100-SXM"), 16, 8);
  double S = 1 << 30;
  double expect = 2 * 7.0 / 8 * S / 360e9 + (S / 8) / (50e9 * p.nic_eff);
  gint64 lat = sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_HIER, &s, &p);
  /* base x3 (three phases) + 14 NVLink steps + 2 network steps */
  g_assert_cmpint (lat, ==, 3 * 8400 + 14 * 4400 + 2 * 17000);
  gint64 t = sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_HIER, &s, &p, S);
  g_assert_cmpfloat (fabs ((t - lat) * 1e-9 - expect), <, 2e-9);
}

/* NCCL's LL protocol: 8 H100 in one domain (NVLink hop 1 us in the shape), ring all-reduce, 14 steps.
 * Simple: 8.4 + 14 (3.4 + 1.0) = 70 us of latency; LL: 6.6 + 14 (0.6 + 1.0) = 29 us, at a quarter of
 * the 360 GB/s. 1 KiB moves 1.75 KiB: 4.98 ns at Simple's rate, 19.9 ns at LL's, so LL takes
 * 29,000 + 20 ns. They cross where 70 + t = 29 + 4 t: t = 13.67 us, 2.81 MB; 1 GB is Simple. Without
 * ll_bw_fraction there is no LL. */
static void
test_ll_protocol (void)
{
  SimCollectiveProfile p;
  SimCollectiveShape s;
  coll_profile_reference (&p, FALSE);
  shape_for (&s, hw_lookup ("H100-SXM"), 8, 8);
  const SimCollectiveOp ar = SIM_COLLECTIVE_ALLREDUCE;
  const SimCollectiveAlgo ring = SIM_COLLECTIVE_ALGO_RING;
  g_assert_cmpint (sim_alphabeta_ll_latency_ns (ar, ring, &s, &p), ==, -1);
  g_assert_cmpint (sim_alphabeta_time_ns (ar, ring, &s, &p, 1024), ==, 70000 + 5);
  coll_profile_ll_nccl (&p);
  g_assert_cmpint (sim_alphabeta_ll_latency_ns (ar, ring, &s, &p), ==, 6600 + 14 * 1600);
  g_assert_cmpint (sim_alphabeta_protocol (ar, ring, &s, &p, 1024), ==, SIM_COLLECTIVE_PROTO_LL);
  g_assert_cmpint (sim_alphabeta_time_ns (ar, ring, &s, &p, 1024), ==, 29000 + 20);
  g_assert_cmpint (sim_alphabeta_protocol (ar, ring, &s, &p, 2.5e6), ==, SIM_COLLECTIVE_PROTO_LL);
  g_assert_cmpint (sim_alphabeta_protocol (ar, ring, &s, &p, 3.2e6), ==, SIM_COLLECTIVE_PROTO_SIMPLE);
  g_assert_cmpint (sim_alphabeta_protocol (ar, ring, &s, &p, 1e9), ==, SIM_COLLECTIVE_PROTO_SIMPLE);
  /* Not for NVLS, hier or direct. */
  g_assert_cmpint (sim_alphabeta_ll_latency_ns (ar, SIM_COLLECTIVE_ALGO_NVLS, &s, &p), ==, -1);
  /* Across 256 single-GPU domains the tree's LL net steps (5.0 + 3.0 us, 16 of them) apply. */
  SimCollectiveShape wide;
  shape_for (&wide, hw_lookup ("H100-SXM"), 256, 1);
  g_assert_cmpint (sim_alphabeta_ll_latency_ns (ar, SIM_COLLECTIVE_ALGO_TREE, &wide, &p), ==, 6600 + 16 * 8000);
}

/* NCCL tuning.cc getNetOverhead: a ring across nodes pays at least the host's network post overhead
 * per NVLink step, 3x under Simple. 2 nodes of 8 A100, all-gather: 15 steps, 1 across the network.
 * 2 us (AMD host) lifts Simple's 3.4 us NVLink step to 6 us, LL's 0.6 to 2; 1 us (Intel) leaves Simple's
 * 3.4 (3 < 3.4) and lifts LL's to 1; a ring inside one node keeps its own steps. */
static void
test_net_overhead (void)
{
  SimCollectiveProfile p;
  SimCollectiveShape two, one;
  coll_profile_reference (&p, FALSE);
  coll_profile_ll_nccl (&p);
  shape_for (&two, hw_lookup ("A100-SXM4-80GB"), 16, 8);
  shape_for (&one, hw_lookup ("A100-SXM4-80GB"), 8, 8);
  const SimCollectiveOp ag = SIM_COLLECTIVE_ALLGATHER;
  const SimCollectiveAlgo ring = SIM_COLLECTIVE_ALGO_RING;
  gint64 net = p.net_step_latency_ns + two.net_latency_ns, ll_net = p.ll_net_step_latency_ns + two.net_latency_ns;
  p.net_overhead_ns = 0;
  g_assert_cmpint (sim_alphabeta_latency_ns (ag, ring, &two, &p), ==, 8400 + 14 * 4400 + net);
  p.net_overhead_ns = 2000;
  g_assert_cmpint (sim_alphabeta_latency_ns (ag, ring, &two, &p), ==, 8400 + 14 * 7000 + net);
  g_assert_cmpint (sim_alphabeta_ll_latency_ns (ag, ring, &two, &p), ==, 6600 + 14 * 3000 + ll_net);
  g_assert_cmpint (sim_alphabeta_latency_ns (ag, ring, &one, &p), ==, 8400 + 7 * 4400);
  /* The tree's steps do not take it (tuning.cc adds it to rings only). */
  gint64 tree2 = sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, &two, &p);
  p.net_overhead_ns = 0;
  g_assert_cmpint (sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, &two, &p), ==, tree2);
  p.net_overhead_ns = 1000;
  g_assert_cmpint (sim_alphabeta_latency_ns (ag, ring, &two, &p), ==, 8400 + 14 * 4400 + net);
  g_assert_cmpint (sim_alphabeta_ll_latency_ns (ag, ring, &two, &p), ==, 6600 + 14 * 2000 + ll_net);
}

static void
test_applicability_and_choice (void)
{
  SimCollectiveProfile p;
  SimCollectiveShape one, two;
  coll_profile_reference (&p, FALSE);
  shape_for (&one, hw_lookup ("H100-SXM"), 8, 8);
  shape_for (&two, hw_lookup ("H100-SXM"), 16, 8);
  /* NVLS needs one NVLink domain with SHARP; hierarchical needs several domains. */
  g_assert_true (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_NVLS, &one));
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_NVLS, &two));
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_HIER, &one));
  g_assert_true (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_HIER, &two));
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLTOALL, SIM_COLLECTIVE_ALGO_RING, &one));
  g_assert_cmpint (sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_NVLS, &two, &p, 1e6), ==, -1);
  /* Large all-reduce in a DGX H100: NVLS moves (1+1/8) S at 306 GB/s vs the ring's 1.75 S at 360. */
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &one, &p, 1e9, NULL), ==, SIM_COLLECTIVE_ALGO_NVLS);
  /* A100 has no NVLS: ring. */
  SimCollectiveShape a100;
  shape_for (&a100, hw_lookup ("A100-SXM4-80GB"), 8, 8);
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &a100, &p, 1e9, NULL), ==, SIM_COLLECTIVE_ALGO_RING);
  /* Small messages across many domains: the tree's 2 log2(n) steps beat the ring's 2(n-1). */
  SimCollectiveShape wide;
  shape_for (&wide, hw_lookup ("H100-SXM"), 256, 1);
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &wide, &p, 1024, NULL), ==, SIM_COLLECTIVE_ALGO_TREE);
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLTOALL, &two, &p, 1e6, NULL), ==, SIM_COLLECTIVE_ALGO_DIRECT);
  /* An all-gather over 280 DGX A100 (SC21's 2,240 GPUs) at 256 MB: the hierarchical scheme's 7 + 279
   * steps would beat the ring's 2,239, but NCCL has no such algorithm, so AUTO takes the ring. */
  SimCollectiveShape sc21;
  shape_for (&sc21, hw_lookup ("A100-SXM4-80GB"), 2240, 8);
  const double mid = 256.0 * 1024 * 1024;
  gint64 t_hier = sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_HIER, &sc21, &p, mid);
  gint64 t_ring = sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, &sc21, &p, mid), t_best;
  g_assert_cmpint (t_hier, >, 0);
  g_assert_cmpint (t_hier, <, t_ring);
  for (int op = SIM_COLLECTIVE_ALLREDUCE; op <= SIM_COLLECTIVE_ALLGATHER; op++)
    g_assert_cmpint (sim_alphabeta_best (op, &sc21, &p, mid, NULL), !=, SIM_COLLECTIVE_ALGO_HIER);
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLGATHER, &sc21, &p, mid, &t_best), ==, SIM_COLLECTIVE_ALGO_RING);
  g_assert_cmpint (t_best, ==, t_ring);
}

static void
test_published_busbw (void)
{
  /* Every published figure of tests/data/nccl-busbw.tsv within 10%, from the constants of the
   * scenario files the row names (line rates, protocol overheads, NCCL latencies; see their sources). */
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "nccl-busbw.tsv", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  int checked = 0;
  for (int i = 0; lines[i]; i++)
    {
      if (lines[i][0] == '#' || lines[i][0] == '\0' || g_str_has_prefix (lines[i], "case\t"))
        continue;
      g_auto (GStrv) f = g_strsplit (lines[i], "\t", -1);
      g_assert_cmpint (g_strv_length (f), ==, 11);
      SimCollectiveProfile p;
      CollHw hw;
      coll_profile_load (f[1], f[2], &p, &hw);
      SimCollectiveOp op = op_of (f[3]);
      SimCollectiveAlgo algo = algo_of (f[4]);
      int ranks = atoi (f[5]), per_node = atoi (f[6]);
      double bytes = g_ascii_strtod (f[7], NULL), measured = g_ascii_strtod (f[8], NULL);
      gboolean per_nic = atoi (f[9]) != 0;
      SimCollectiveShape s;
      memset (&s, 0, sizeof s);
      s.ranks = ranks;
      s.ranks_per_domain = MIN (ranks, per_node);
      s.domains = (ranks + per_node - 1) / per_node;
      s.uniform = ranks % s.ranks_per_domain == 0;
      /* A mesh node (scaleup_mesh): the group's members of a node reach each other over L - 1 of a
       * GPU's 7 links, as sim_collective_shape counts them. */
      s.nvlink_bw_bytes_per_s = hw.mesh ? hw.nvlink_bw_bytes_per_s / (per_node - 1) * MAX (s.ranks_per_domain - 1, 1)
                                        : hw.nvlink_bw_bytes_per_s;
      s.nic_bw_bytes_per_s = hw.nic_bw_bytes_per_s * hw.nics_per_gpu;
      s.nvls = hw.nvls && !hw.mesh;
      s.nvlink_latency_ns = hw.nvlink_latency_ns;
      s.net_latency_ns = hw.nic_latency_ns + 3 * hw.hop_latency_ns;
      gint64 t = sim_alphabeta_time_ns (op, algo, &s, &p, bytes);
      g_assert_cmpint (t, >, 0);
      double predicted = busbw_GBps (op, ranks, bytes, t) / (per_nic ? per_node : 1);
      g_test_message ("%s: predicted %.1f GB/s, measured %.1f GB/s (%+.1f%%)", f[0], predicted, measured,
                      100 * (predicted / measured - 1));
      g_assert_cmpfloat (fabs (predicted / measured - 1), <, 0.10);
      checked++;
    }
  g_assert_cmpint (checked, >=, 8);
}

static void
test_profiles_complete (void)
{
  /* Every hardware profile carries the collective constants with sources, every fabric its NIC
   * efficiency: sim_scenario_collective_profile refuses a scenario without them. */
  const char *src = g_getenv ("TRAINSIM_SRCDIR") ? g_getenv ("TRAINSIM_SRCDIR") : TRAINSIM_SRCDIR;
  static const struct { const char *dir, *group, *keys[3]; } sets[] = {
    { "hardware", "hardware", { "nvlink_eff", "coll_base_latency_us", "nvlink_step_latency_us" } },
    { "fabrics", "fabric", { "nic_eff", "net_step_latency_us", NULL } },
  };
  int files = 0;
  for (gsize k = 0; k < G_N_ELEMENTS (sets); k++)
    {
      g_autofree char *dir_path = g_build_filename (src, "scenarios", sets[k].dir, NULL);
      g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
      g_assert_nonnull (dir);
      const char *name;
      while ((name = g_dir_read_name (dir)))
        {
          if (!g_str_has_suffix (name, ".ini"))
            continue;
          g_autofree char *path = g_build_filename (dir_path, name, NULL);
          g_autoptr (GKeyFile) kf = g_key_file_new ();
          g_assert_true (g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL));
          for (int i = 0; i < 3 && sets[k].keys[i]; i++)
            {
              g_autofree char *source = g_strconcat (sets[k].keys[i], ".source", NULL);
              if (!g_key_file_has_key (kf, sets[k].group, sets[k].keys[i], NULL)
                  || !g_key_file_has_key (kf, sets[k].group, source, NULL))
                g_error ("%s: [%s] %s or its .source is missing", path, sets[k].group, sets[k].keys[i]);
            }
          if (k == 0 && g_key_file_get_boolean (kf, "hardware", "nvls", NULL)
              && !g_key_file_has_key (kf, "hardware", "nvls_eff", NULL))
            g_error ("%s: nvls = true without nvls_eff", path);
          files++;
        }
    }
  g_assert_cmpint (files, >=, 8);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/alphabeta/busbw-factors", test_busbw_factors);
  g_test_add_func ("/sim/alphabeta/ring-busbw-is-link-rate", test_ring_busbw_is_link_rate);
  g_test_add_func ("/sim/alphabeta/hier-equation", test_hier_equation);
  g_test_add_func ("/sim/alphabeta/ll-protocol", test_ll_protocol);
  g_test_add_func ("/sim/alphabeta/net-overhead", test_net_overhead);
  g_test_add_func ("/sim/alphabeta/applicability-and-choice", test_applicability_and_choice);
  g_test_add_func ("/sim/alphabeta/published-busbw", test_published_busbw);
  g_test_add_func ("/sim/alphabeta/profiles-complete", test_profiles_complete);
  return g_test_run ();
}
