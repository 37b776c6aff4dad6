/* The flow model of collectives (sim/net/collective.c) against the closed forms (sim/net/alphabeta.c):
 * agreement where nothing is shared (within 1%), a case where contention makes them differ, the
 * published busbw figures through the flow model, completion callbacks and bad input. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include "sim/net/alphabeta.h"
#include "sim/net/collective.h"
#include "coll-profile.h"

/* nodes x per_node GPUs, one NVLink domain per node, one NIC per GPU on a 2-tier fabric; `sharp`:
 * its switches reduce. */
static SimTopology *
cluster_sharp (int nodes, int per_node, double nvlink_GBps, double nic_GBps, gboolean nvls, SimFabricKind kind,
               int radix, double oversub, gboolean sharp)
{
  SimClusterSpec c = { 0 };
  c.gpus = nodes * per_node;
  c.gpus_per_node = per_node;
  c.nvlink_domain = per_node;
  c.nvlink_bw_bytes_per_s = nvlink_GBps * 1e9;
  c.nvls = nvls;
  c.nvlink_latency_ns = 1000;
  c.nics_per_gpu = 1;
  c.nic_bw_bytes_per_s = nic_GBps * 1e9;
  c.nic_latency_ns = 2000;
  SimFabricSpec f = { 0 };
  f.kind = kind;
  f.tiers = 2;
  f.radix = radix;
  f.oversubscription[0] = oversub;
  f.oversubscription[1] = 1;
  f.hop_latency_ns = 500;
  f.sharp = sharp;
  g_autoptr (GError) error = NULL;
  SimTopology *t = sim_topology_new (&c, &f, &error);
  g_assert_no_error (error);
  return t;
}

static SimTopology *
cluster (int nodes, int per_node, double nvlink_GBps, double nic_GBps, gboolean nvls, SimFabricKind kind,
         int radix, double oversub)
{
  return cluster_sharp (nodes, per_node, nvlink_GBps, nic_GBps, nvls, kind, radix, oversub, FALSE);
}

/* nodes x 8 GPUs of a fully connected mesh each (MI300X: 7 Infinity Fabric links of 64 GB/s per
 * direction per GPU, 448 in all), one NIC per GPU on a non-blocking rail-optimized 2-tier fabric. */
static SimTopology *
mesh_cluster_bw (int nodes, double nvlink_GBps, double nic_GBps)
{
  SimClusterSpec c = { 0 };
  c.gpus = nodes * 8;
  c.gpus_per_node = c.nvlink_domain = 8;
  c.nvlink_bw_bytes_per_s = nvlink_GBps * 1e9;
  c.mesh = TRUE;
  c.nvlink_latency_ns = 1000;
  c.nics_per_gpu = 1;
  c.nic_bw_bytes_per_s = nic_GBps * 1e9;
  c.nic_latency_ns = 2000;
  SimFabricSpec f = { .kind = SIM_FABRIC_RAIL_OPTIMIZED, .tiers = 2, .radix = 64, .oversubscription = { 1, 1, 1 },
                      .hop_latency_ns = 500 };
  g_autoptr (GError) error = NULL;
  SimTopology *t = sim_topology_new (&c, &f, &error);
  g_assert_no_error (error);
  return t;
}

static SimTopology *
mesh_cluster (int nodes, double nic_GBps)
{
  return mesh_cluster_bw (nodes, 448, nic_GBps);
}

typedef struct {
  SimEngine *engine;
  SimFlowNet *net;
  SimCollective *coll;
  double *caps;
  gint64 done_ns[8];
  int done_count;
} Sim;

static void
sim_setup (Sim *s, const SimTopology *t, const SimCollectiveProfile *p)
{
  memset (s, 0, sizeof *s);
  int n = sim_topology_n_links (t);
  s->caps = g_new (double, n);
  sim_collective_link_capacities (t, p, s->caps);
  s->engine = sim_engine_new ();
  s->net = sim_flow_net_new (s->engine, s->caps, n);
  s->coll = sim_collective_new (s->engine, s->net, t, p);
}

static void
sim_teardown (Sim *s)
{
  sim_collective_free (s->coll);
  sim_flow_net_free (s->net);
  sim_engine_free (s->engine);
  g_free (s->caps);
}

static void
on_done (gpointer user, guint64 arg)
{
  Sim *s = user;
  g_assert_cmpuint (arg, <, G_N_ELEMENTS (s->done_ns));
  s->done_ns[arg] = sim_engine_now (s->engine);
  s->done_count++;
}

/* Runs one collective alone; returns its time in ns. */
static gint64
run_one (const SimTopology *t, const SimCollectiveProfile *p, SimCollectiveOp op, SimCollectiveAlgo algo,
         const int *gpus, int n, double bytes)
{
  Sim s;
  sim_setup (&s, t, p);
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_collective_start (s.coll, op, algo, gpus, n, bytes, on_done, &s, 0, NULL, &error));
  g_assert_no_error (error);
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_count, ==, 1);
  g_assert_cmpint (sim_collective_active (s.coll), ==, 0);
  gint64 t_ns = s.done_ns[0];
  sim_teardown (&s);
  return t_ns;
}

static gint64
closed (const SimTopology *t, const SimCollectiveProfile *p, SimCollectiveOp op, SimCollectiveAlgo algo,
        const int *gpus, int n, double bytes)
{
  SimCollectiveShape sh;
  g_assert_true (sim_collective_shape (t, gpus, n, &sh, NULL));
  return sim_alphabeta_time_ns (op, algo, &sh, p, bytes);
}

static void
assert_agree (const SimTopology *t, const SimCollectiveProfile *p, SimCollectiveOp op, SimCollectiveAlgo algo,
              const int *gpus, int n, double bytes)
{
  gint64 f = run_one (t, p, op, algo, gpus, n, bytes);
  gint64 c = closed (t, p, op, algo, gpus, n, bytes);
  g_test_message ("%s/%s n=%d %.0f B: flow %" G_GINT64_FORMAT " ns, closed form %" G_GINT64_FORMAT " ns",
                  sim_collective_op_name (op), sim_collective_algo_name (algo), n, bytes, f, c);
  g_assert_cmpint (c, >, 0);
  /* 1%: both share the latency term exactly; only rounding of event times differs. */
  g_assert_cmpfloat (fabs ((double) f / c - 1), <, 0.01);
}

static void
iota (int *g, int n, int first, int stride)
{
  for (int i = 0; i < n; i++)
    g[i] = first + i * stride;
}

static void
test_one_domain_agrees (void)
{
  /* DGX H100: every algorithm inside one NVLink domain loads each GPU's up and down link exactly as
   * the closed form counts, and nothing else shares them. */
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (1, 8, 450, 50, TRUE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  int g[8];
  iota (g, 8, 0, 1);
  double S = 256.0 * (1 << 20);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_REDUCE_SCATTER, SIM_COLLECTIVE_ALGO_RING, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_BROADCAST, SIM_COLLECTIVE_ALGO_RING, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_NVLS, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_NVLS, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLTOALL, SIM_COLLECTIVE_ALGO_DIRECT, g, 8, S);
  int pair[2] = { 3, 5 };
  assert_agree (t, &p, SIM_COLLECTIVE_SENDRECV, SIM_COLLECTIVE_ALGO_DIRECT, pair, 2, S);
}

/* The flow model runs the LL protocol where the closed form picks it: small ring and tree all-reduces
 * inside a DGX H100 and across 4 of them take LL's latency and a quarter of the rate. */
static void
test_ll_agrees (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  coll_profile_ll_nccl (&p);
  g_autoptr (SimTopology) t = cluster (4, 8, 450, 50, TRUE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  int g[32];
  iota (g, 32, 0, 1);
  double S = 64.0 * 1024;
  SimCollectiveShape sh;
  g_assert_true (sim_collective_shape (t, g, 8, &sh, NULL));
  g_assert_cmpint (sim_alphabeta_protocol (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, &sh, &p, S), ==,
                   SIM_COLLECTIVE_PROTO_LL);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, g, 8, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, g, 32, S);
  g_assert_true (sim_collective_shape (t, g, 32, &sh, NULL));
  g_assert_cmpint (sim_alphabeta_protocol (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, &sh, &p, S), ==,
                   SIM_COLLECTIVE_PROTO_LL);
}

static void
test_across_domains_agrees (void)
{
  /* 4 nodes x 8 H100, rail-optimized non-blocking fabric. Ring: 8 channels, each leaving every node
   * once on a different rail, so each NIC carries one channel and each NVLink up-link seven, as the
   * closed form's R = min(L*Bi, L/(L-1)*Bn) assumes. Hier: per-rail rings stay on their rail's leaf. */
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (4, 8, 450, 50, TRUE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  int g[32];
  iota (g, 32, 0, 1);
  double S = 512.0 * (1 << 20);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g, 32, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_HIER, g, 32, S);
  assert_agree (t, &p, SIM_COLLECTIVE_REDUCE_SCATTER, SIM_COLLECTIVE_ALGO_HIER, g, 32, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_HIER, g, 32, S);
  /* Tree: 8 channels, each a double binary tree over the 4 nodes' heads (GPU k of each node) plus a
   * chain through the node; NICs carry the tree edges, NVLink the chains. */
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, g, 32, S);
  /* One GPU per node (a DP group over rail 2): ring and tree over NICs only. */
  int dp[4];
  iota (dp, 4, 2, 8);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, dp, 4, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, dp, 4, S);
  int pair[2] = { 1, 9 };
  assert_agree (t, &p, SIM_COLLECTIVE_SENDRECV, SIM_COLLECTIVE_ALGO_DIRECT, pair, 2, S);
}

static void
test_contention_differs (void)
{
  /* Plain fat tree, 2 nodes x 8 GPUs, 9-port leaves at 8:1: each leaf has its 8 NIC ports and ONE up
   * link to the single spine. Group A = GPU 0 of both nodes, group B = GPU 1 of both nodes, each a
   * 2-rank ring all-reduce. Alone, a group's ring crosses the up link with one flow at the NIC rate,
   * and the flow model agrees with the closed form. Together, both rings cross the same leaf up link
   * (and the same down link): max-min halves each one's rate, so the transfer takes twice as long,
   * while the closed form, which knows only the per-GPU NIC rate, still predicts the solo time. */
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (2, 8, 450, 50, TRUE, SIM_FABRIC_FAT_TREE, 9, 8);
  int a[2] = { 0, 8 }, b[2] = { 1, 9 };
  double S = 1 << 30;
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, a, 2, S);
  gint64 c = closed (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, a, 2, S);
  SimCollectiveShape sh;
  g_assert_true (sim_collective_shape (t, a, 2, &sh, NULL));
  gint64 lat = sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, &sh, &p);

  Sim s;
  sim_setup (&s, t, &p);
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, a, 2, S,
                                       on_done, &s, 0, NULL, NULL));
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, b, 2, S,
                                       on_done, &s, 1, NULL, NULL));
  g_assert_cmpint (sim_collective_active (s.coll), ==, 2);
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_count, ==, 2);
  for (int i = 0; i < 2; i++)
    {
      double ratio = (double) (s.done_ns[i] - lat) / (c - lat);
      g_test_message ("shared spine: group %d transfer %.3f x the closed form", i, ratio);
      g_assert_cmpfloat (fabs (ratio - 2.0), <, 0.01);
    }
  sim_teardown (&s);
}

/* Links are shared by NCCL channel counts, not by how many flows stand for a collective: a TP ring
 * inside node 0 (GPUs 0-3; one flow standing for nccl_nvlink_channels = 32) runs beside a DP ring
 * over both nodes (16 ranks, 8 per node: 8 rail flows of nccl_channels_per_nic = 2, each crossing
 * a node's NVLink ports but the one it leaves or enters the node by). On GPUs 0-3's ports the
 * weights are 32 : at most 16 and the DP ring is NVLink-bound there (its flows would get 50 GB/s
 * each from the NICs), so the TP ring keeps at least 2/3 of a port: its transfer takes more than
 * its solo time but at most 1.5x it. Counted per flow (1 against 7 or 8) it would take 8x. */
static void
test_channel_shares (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (2, 8, 450, 50, FALSE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  int tp[4], dp[16];
  iota (tp, 4, 0, 1);
  iota (dp, 16, 0, 1);
  double S = 256.0 * (1 << 20);
  gint64 solo = run_one (t, &p, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, tp, 4, S);
  SimCollectiveShape sh;
  g_assert_true (sim_collective_shape (t, tp, 4, &sh, NULL));
  gint64 lat = sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, &sh, &p);
  Sim s;
  sim_setup (&s, t, &p);
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, dp, 16, 16 * S,
                                       on_done, &s, 1, NULL, NULL));
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, tp, 4, S,
                                       on_done, &s, 0, NULL, NULL));
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_count, ==, 2);
  double ratio = (double) (s.done_ns[0] - lat) / (double) (solo - lat);
  g_test_message ("TP ring beside the DP ring: transfer %.3f x solo", ratio);
  g_assert_cmpfloat (ratio, >, 1.1);
  g_assert_cmpfloat (ratio, <=, 1.5 + 1e-3);
  sim_teardown (&s);
}

static void
test_concurrent_groups_balanced (void)
{
  /* 16 nodes x 8 GPUs on a plain fat tree of 16-port switches: one leaf per node with 8 NIC ports
   * and 8 up-links (non-blocking). Eight 16-rank rings (GPU k of every node, k = 0..7) run at once;
   * each leaf sends exactly 8 ring edges up, one per up-link if routes are spread perfectly. The
   * collective's route choice (least-loaded of several ECMP hashes, like a subnet manager's balanced
   * routing) must find that spread: then every ring runs at the NIC rate and the flow model equals the
   * closed form. Random hashing would put two edges on one up-link (8 balls in 8 bins) and halve a ring. */
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (16, 8, 450, 50, TRUE, SIM_FABRIC_FAT_TREE, 16, 1);
  int groups[8][16];
  for (int k = 0; k < 8; k++)
    iota (groups[k], 16, k, 8);
  double S = 256.0 * (1 << 20);
  gint64 c = closed (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, groups[0], 16, S);
  Sim s;
  sim_setup (&s, t, &p);
  for (int k = 0; k < 8; k++)
    g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, groups[k], 16, S,
                                         on_done, &s, (guint64) k, NULL, NULL));
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_count, ==, 8);
  for (int k = 0; k < 8; k++)
    g_assert_cmpfloat (fabs ((double) s.done_ns[k] / c - 1), <, 0.01);
  sim_teardown (&s);
}

static void
test_overlap_and_callbacks (void)
{
  /* Two disjoint DGX H100 nodes: their all-reduces share no link, so running both at once takes the
   * time of one; each completes by its own callback with its own arg. */
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (2, 8, 450, 50, TRUE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  int a[8], b[8];
  iota (a, 8, 0, 1);
  iota (b, 8, 8, 1);
  double S = 64.0 * (1 << 20);
  gint64 solo = run_one (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, a, 8, S);
  Sim s;
  sim_setup (&s, t, &p);
  SimCollectiveAlgo used = SIM_COLLECTIVE_ALGO_AUTO;
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, a, 8, S,
                                       on_done, &s, 3, &used, NULL));
  g_assert_cmpint (used, ==, SIM_COLLECTIVE_ALGO_RING);
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_AUTO, b, 8, S,
                                       on_done, &s, 5, &used, NULL));
  /* Auto picks NVLS for a large all-reduce in one NVLS domain (see test-alphabeta). */
  g_assert_cmpint (used, ==, SIM_COLLECTIVE_ALGO_NVLS);
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_count, ==, 2);
  g_assert_cmpint (s.done_ns[3], ==, solo);
  /* The estimate is the closed form: equal to the flow time here, since nothing is shared. */
  SimCollectiveAlgo est_algo = SIM_COLLECTIVE_ALGO_RING;
  gint64 est = sim_collective_estimate_ns (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_AUTO, b, 8, S,
                                           &est_algo, NULL);
  g_assert_cmpint (est_algo, ==, SIM_COLLECTIVE_ALGO_NVLS);
  g_assert_cmpfloat (fabs ((double) est / s.done_ns[5] - 1), <, 1e-6);
  g_assert_cmpint (sim_collective_estimate_ns (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_NVLS,
                                               (int[]) { 0, 8 }, 2, S, NULL, NULL), ==, -1);
  g_assert_cmpint (s.done_ns[5], <, solo);
  /* One ring flow (one channel in one domain) + 2 NVLink flows per GPU for NVLS. */
  g_assert_cmpuint (sim_collective_flows_started (s.coll), ==, 1 + 16);
  /* The same call again reuses the cached plan and takes the same time. */
  gint64 t0 = sim_engine_now (s.engine);
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, a, 8, S,
                                       on_done, &s, 4, NULL, NULL));
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_ns[4] - t0, ==, solo);
  sim_teardown (&s);
}

/* CollNet Direct (InfiniBand SHARP): applicable to all-reduce across domains on a reducing fabric only;
 * the flow model agrees with the closed form, which is max(2 (L-1)/L S/Bn, (S/L)/Bi) / collnet_eff
 * plus NCCL's latency; on A100-like nodes (300 GB/s NVLink, 25 GB/s NICs) auto takes it over the ring,
 * whose NICs carry twice the bytes. */
static void
test_collnet (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  p.collnet_eff = 0.85;
  p.collnet_nvlink_latency_ns = 3700;
  p.collnet_arity_ns = 400;
  p.collnet_net_latency_ns = 31000;
  p.base_latency_ns[SIM_COLLECTIVE_ALGO_COLLNET] = 0;
  int g[32];
  iota (g, 32, 0, 1);
  double S = 1024.0 * (1 << 20);
  g_autoptr (SimTopology) plain = cluster (4, 8, 300, 25, FALSE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  g_autoptr (SimTopology) t = cluster_sharp (4, 8, 300, 25, FALSE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1, TRUE);
  SimCollectiveShape sh;
  g_assert_true (sim_collective_shape (plain, g, 32, &sh, NULL));
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, &sh));
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &sh, &p, S, NULL), !=, SIM_COLLECTIVE_ALGO_COLLNET);
  g_assert_true (sim_collective_shape (t, g, 32, &sh, NULL));
  g_assert_true (sh.sharp);
  g_assert_true (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, &sh));
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_REDUCE_SCATTER, SIM_COLLECTIVE_ALGO_COLLNET, &sh));
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_COLLNET, &sh));
  g_assert_true (sim_collective_shape (t, g, 8, &sh, NULL));  /* one domain: nothing to reduce in switches */
  g_assert_false (sim_alphabeta_applicable (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, &sh));

  g_assert_true (sim_collective_shape (t, g, 32, &sh, NULL));
  double bn = 300e9 * p.nvlink_eff, bi = 25e9 * p.nic_eff;
  double xfer = MAX (2.0 * 7 / 8 * S / bn, S / 8 / bi) / 0.85;
  gint64 lat = 2 * (3700 + sh.nvlink_latency_ns + 7 * 400) + 31000 + 2 * sh.net_latency_ns;
  g_assert_cmpint (sim_alphabeta_latency_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, &sh, &p), ==, lat);
  g_assert_cmpint (closed (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, g, 32, S), ==,
                   lat + (gint64) llround (xfer * 1e9));
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, g, 32, S);
  int two[16];
  iota (two, 16, 8, 1);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, two, 16, S);
  gint64 ring = closed (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g, 32, S);
  gint64 best = -1;
  g_assert_cmpint (sim_alphabeta_best (SIM_COLLECTIVE_ALLREDUCE, &sh, &p, S, &best), ==, SIM_COLLECTIVE_ALGO_COLLNET);
  g_assert_cmpint (best, <, ring);
  /* Without the profile's factor the closed form gives no time (no time from a missing figure). */
  p.collnet_eff = 0;
  g_assert_cmpint (sim_alphabeta_time_ns (SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_COLLNET, &sh, &p, S), ==, -1);
}

static void
test_bad_input (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (2, 8, 450, 50, TRUE, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
  Sim s;
  sim_setup (&s, t, &p);
  int across[2] = { 0, 8 }, dup[3] = { 1, 2, 1 }, out[2] = { 0, 16 };
  GError *error = NULL;
  g_assert_false (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_NVLS, across, 2,
                                        1e6, on_done, &s, 0, NULL, &error));
  g_assert_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_NOT_APPLICABLE);
  g_clear_error (&error);
  g_assert_false (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, dup, 3,
                                        1e6, on_done, &s, 0, NULL, &error));
  g_assert_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, out, 2,
                                        1e6, on_done, &s, 0, NULL, &error));
  g_assert_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, across, 2,
                                        -1, on_done, &s, 0, NULL, &error));
  g_assert_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID);
  g_clear_error (&error);
  SimCollectiveOp op;
  g_assert_false (sim_collective_op_parse ("allsum", &op, &error));
  g_assert_error (error, SIM_COLLECTIVE_ERROR, SIM_COLLECTIVE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_true (sim_collective_op_parse ("all_reduce", &op, NULL));
  g_assert_cmpint (op, ==, SIM_COLLECTIVE_ALLREDUCE);
  /* Zero bytes and a single rank complete, by callback, at once. */
  int one[1] = { 4 };
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_AUTO, one, 1, 1e6,
                                       on_done, &s, 0, NULL, NULL));
  g_assert_true (sim_collective_start (s.coll, SIM_COLLECTIVE_ALLGATHER, SIM_COLLECTIVE_ALGO_RING, across, 2, 0,
                                       on_done, &s, 1, NULL, NULL));
  sim_engine_run (s.engine, -1);
  g_assert_cmpint (s.done_count, ==, 2);
  g_assert_cmpint (s.done_ns[0], ==, 0);
  g_assert_cmpint (s.done_ns[1], ==, 0);
  sim_teardown (&s);
}

static SimCollectiveOp
op_named (const char *name)
{
  SimCollectiveOp op = SIM_COLLECTIVE_OP_COUNT;
  g_assert_true (sim_collective_op_parse (name, &op, NULL));
  return op;
}

/* sim_collective_start_many is n separate starts in fewer events: on a 2:1 oversubscribed fat tree,
 * sets of groups (16-rank all-reduces on shared leaves, send/recv pairs inside and across nodes,
 * sizes from latency-bound to bandwidth-bound) end at the nanosecond the last of the same groups
 * started one by one ends, with every run accounted for. */
static void
many_done (gpointer user, guint64 arg)
{
  Sim *s = user;
  s->done_ns[0] = sim_engine_now (s->engine);
  s->done_count++;
}

/* Eight rings of 16 GPUs, one per node of 16 nodes x 8, and 24 send/recv pairs in and across nodes. */
static void
rings_and_pairs (int rings[8 * 16], int pairs[2 * 24])
{
  for (int k = 0; k < 8; k++)
    iota (rings + 16 * k, 16, k, 8);
  for (int i = 0; i < 24; i++)
    {
      pairs[2 * i] = (i * 37) % 128;
      pairs[2 * i + 1] = i % 3 == 0 ? pairs[2 * i] ^ 1 : (pairs[2 * i] + 8 * (1 + i % 5)) % 128;
    }
}

/* The handles of n groups of `size` GPUs each, laid end to end in gpus. */
static void
group_handles (SimCollective *c, const int *gpus, int size, int n, const SimCollectiveGroup **out)
{
  for (int g = 0; g < n; g++)
    out[g] = sim_collective_group (c, gpus + size * g, size, NULL);
}

static void
test_start_many (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (16, 8, 450, 50, TRUE, SIM_FABRIC_FAT_TREE, 16, 2);
  int rings[8 * 16], pairs[2 * 24];
  rings_and_pairs (rings, pairs);
  const double sizes[] = { 256, 64e3, 8e6, 256e6 };
  for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < 2; kind++)
      {
        SimCollectiveOp op = kind == 0 ? SIM_COLLECTIVE_ALLREDUCE : SIM_COLLECTIVE_SENDRECV;
        const int *gpus = kind == 0 ? rings : pairs;
        int size = kind == 0 ? 16 : 2, n = kind == 0 ? 8 : 24;
        Sim one;
        sim_setup (&one, t, &p);
        gint64 last = 0;
        Sim *sp = &one;
        for (int g = 0; g < n; g++)
          g_assert_true (sim_collective_start (one.coll, op, SIM_COLLECTIVE_ALGO_AUTO, gpus + size * g, size, sizes[k],
                                               on_done, sp, (guint64) (g % 8), NULL, NULL));
        sim_engine_run (one.engine, -1);
        g_assert_cmpint (one.done_count, ==, n);
        for (int g = 0; g < MIN (n, 8); g++)
          last = MAX (last, one.done_ns[g]);
        sim_teardown (&one);
        Sim many;
        sim_setup (&many, t, &p);
        g_autoptr (GError) error = NULL;
        const SimCollectiveGroup *groups[24];
        group_handles (many.coll, gpus, size, n, groups);
        g_assert_true (sim_collective_start_many (many.coll, op, groups, n, sizes[k], many_done, &many, 0, &error));
        g_assert_no_error (error);
        g_assert_cmpint (many.done_count, ==, 0);  /* never from inside the call */
        sim_engine_run (many.engine, -1);
        g_assert_cmpint (many.done_count, ==, 1);
        g_assert_cmpint (sim_collective_active (many.coll), ==, 0);
        g_test_message ("%s x %d, %.0f B: one by one %" G_GINT64_FORMAT " ns, at once %" G_GINT64_FORMAT " ns",
                        sim_collective_op_name (op), n, sizes[k], last, many.done_ns[0]);
        g_assert_cmpint (many.done_ns[0], ==, last);
        sim_teardown (&many);
      }
}

/* Starts over groups[0..n) in a simulation of its own or in s, run to the end: its time in ns. */
static gint64
timed_many (Sim *s, SimCollectiveOp op, const int *gpus, int size, int n, double bytes)
{
  const SimCollectiveGroup *groups[8];
  g_assert_cmpint (n, <=, 8);
  group_handles (s->coll, gpus, size, n, groups);
  gint64 t0 = sim_engine_now (s->engine);
  int before = s->done_count;
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_collective_start_many (s->coll, op, groups, n, bytes, many_done, s, 0, &error));
  g_assert_no_error (error);
  sim_engine_run (s->engine, -1);
  g_assert_cmpint (s->done_count, ==, before + 1);
  return s->done_ns[0] - t0;
}

static void
test_bundle_memo (void)
{
  /* A start event's bundles are remembered by what it starts (collective.c, BUNDLE_MEMO_BITS): all-to-alls
   * over four sibling groups across nodes and all-reduces over eight rings, 80 sizes each, the
   * sequence twice (more signatures than the memo holds: entries are replaced and found again),
   * each take in the one long simulation what they take in a fresh one, to the nanosecond. */
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (8, 8, 450, 50, FALSE, SIM_FABRIC_RAIL_OPTIMIZED, 16, 1);
  int a2a[4 * 16], rings[8 * 8];
  for (int k = 0; k < 4; k++)
    iota (a2a + 16 * k, 16, k, 4);
  for (int k = 0; k < 8; k++)
    iota (rings + 8 * k, 8, k, 8);
  Sim one;
  sim_setup (&one, t, &p);
  int checked = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < 80; k++)
      for (int kind = 0; kind < 2; kind++)
        {
          SimCollectiveOp op = kind == 0 ? SIM_COLLECTIVE_ALLTOALL : SIM_COLLECTIVE_ALLREDUCE;
          const int *gpus = kind == 0 ? a2a : rings;
          int size = kind == 0 ? 16 : 8, n = kind == 0 ? 4 : 8;
          double bytes = 1e6 * (1 + k % 40) * (k < 40 ? 1 : 3.5);
          gint64 seq = timed_many (&one, op, gpus, size, n, bytes);
          Sim fresh;
          sim_setup (&fresh, t, &p);
          gint64 alone = timed_many (&fresh, op, gpus, size, n, bytes);
          sim_teardown (&fresh);
          if (seq != alone)
            g_test_message ("%s %.0f B, pass %d: %" G_GINT64_FORMAT " ns after the others, %" G_GINT64_FORMAT
                            " ns alone", sim_collective_op_name (op), bytes, pass, seq, alone);
          g_assert_cmpint (seq, ==, alone);
          checked++;
        }
  g_assert_cmpint (checked, ==, 320);
  sim_teardown (&one);
}

/* sim_collective_set_batched: lockstep groups started one by one, their flows batched into
 * bundles across groups, end when they end unbatched, to the nanosecond: rings over 16 GPUs across
 * 16 nodes of a 2:1 oversubscribed fat tree (they share uplinks, so bundles split) and send/recv
 * pairs, four sizes, two waves (the second starts as the first ends). */
typedef struct {
  Sim *s;
  const SimCollectiveGroup **groups;
  int n;
  double bytes;
  gint64 done[2][24];
  int wave, left;
  SimCollectiveOp op;
} Waves;

static void
wave_start (Waves *w);

static void
wave_done (gpointer user, guint64 arg)
{
  Waves *w = user;
  w->done[w->wave][arg] = sim_engine_now (w->s->engine);
  if (--w->left == 0 && ++w->wave < 2)
    wave_start (w);
}

static void
wave_start (Waves *w)
{
  w->left = w->n;
  for (int g = 0; g < w->n; g++)
    g_assert_true (sim_collective_start_group (w->s->coll, w->op, SIM_COLLECTIVE_ALGO_AUTO, w->groups[g],
                                               w->bytes * (1 + g % 2), wave_done, w, (guint64) g, NULL, NULL));
}

static void
test_batched (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = cluster (16, 8, 450, 50, FALSE, SIM_FABRIC_FAT_TREE, 16, 2);
  int rings[8 * 16], pairs[2 * 24];
  rings_and_pairs (rings, pairs);
  const double sizes[] = { 256, 64e3, 8e6, 256e6 };
  for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++)
    for (int kind = 0; kind < 2; kind++)
      {
        gint64 when[2][2][24];
        for (int batched = 0; batched < 2; batched++)
          {
            Sim s;
            sim_setup (&s, t, &p);
            sim_collective_set_batched (s.coll, batched);
            const int *gpus = kind == 0 ? rings : pairs;
            int size = kind == 0 ? 16 : 2, n = kind == 0 ? 8 : 24;
            const SimCollectiveGroup *groups[24];
            group_handles (s.coll, gpus, size, n, groups);
            Waves w = { &s, groups, n, sizes[k], { { 0 } }, 0, 0,
                        kind == 0 ? SIM_COLLECTIVE_ALLREDUCE : SIM_COLLECTIVE_SENDRECV };
            wave_start (&w);
            sim_engine_run (s.engine, -1);
            g_assert_cmpint (w.wave, ==, 2);
            g_assert_cmpint (sim_collective_active (s.coll), ==, 0);
            memcpy (when[batched], w.done, sizeof w.done);
            sim_teardown (&s);
          }
        for (int wv = 0; wv < 2; wv++)
          for (int g = 0; g < (kind == 0 ? 8 : 24); g++)
            g_assert_cmpint (when[1][wv][g], ==, when[0][wv][g]);
      }
}

static void
test_published_busbw (void)
{
  /* The published figures of tests/data/nccl-busbw.tsv through the flow model on a topology built
   * from the same scenario files (line rates x sourced efficiencies), each within 10%. */
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "data", "nccl-busbw.tsv", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
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
      SimCollectiveOp op = op_named (f[3]);
      SimCollectiveAlgo algo = SIM_COLLECTIVE_ALGO_AUTO;
      g_assert_true (sim_collective_algo_parse (f[4], &algo, NULL));
      int ranks = atoi (f[5]), per_node = atoi (f[6]);
      double bytes = g_ascii_strtod (f[7], NULL), measured = g_ascii_strtod (f[8], NULL);
      gboolean per_nic = atoi (f[9]) != 0;
      int nodes = (ranks + per_node - 1) / per_node;
      g_assert_true (!hw.mesh || per_node == 8);
      g_autoptr (SimTopology) t = hw.mesh ? mesh_cluster_bw (nodes, hw.nvlink_bw_bytes_per_s / 1e9, hw.nic_bw_bytes_per_s / 1e9)
                                          : cluster (nodes, per_node, hw.nvlink_bw_bytes_per_s / 1e9,
                                                     hw.nic_bw_bytes_per_s / 1e9, hw.nvls, SIM_FABRIC_RAIL_OPTIMIZED, 64, 1);
      int *g = g_new (int, ranks);
      iota (g, ranks, 0, 1);
      gint64 t_ns = run_one (t, &p, op, algo, g, ranks, bytes);
      g_free (g);
      double predicted = bytes / (t_ns * 1e-9) * sim_alphabeta_busbw_factor (op, ranks) / 1e9 / (per_nic ? per_node : 1);
      g_test_message ("%s: flow model %.1f GB/s, measured %.1f GB/s (%+.1f%%)", f[0], predicted, measured,
                      100 * (predicted / measured - 1));
      g_assert_cmpfloat (fabs (predicted / measured - 1), <, 0.10);
      checked++;
    }
  g_assert_cmpint (checked, >=, 8);
}

/* A mesh node: a group of k of its GPUs reaches each other over k - 1 direct links, so the
 * all-reduce bus bandwidth of 8 GPUs is 7 times that of 2 (an MI300X node measured 312.9 and 47.7
 * GB/s: 6.6x, stas00/ml-engineering network/README.md); flow model and closed form agree inside the
 * node, for 2, 4 and 8 GPUs, and across nodes, where the channels walk the mesh along different
 * links (Walecki zigzags, sim/net/collective.c mesh_walk) and each leaves on its own NIC, so the
 * ring is NIC-bound as through a switch. */
static void
test_mesh (void)
{
  SimCollectiveProfile p;
  coll_profile_reference (&p, FALSE);
  g_autoptr (SimTopology) t = mesh_cluster (4, 50);
  double S = 256.0 * (1 << 20);
  int g8[8], g4[4] = { 0, 2, 5, 7 }, g2[2] = { 3, 6 };
  iota (g8, 8, 0, 1);
  const SimCollectiveOp ops[3] = { SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_REDUCE_SCATTER, SIM_COLLECTIVE_ALLGATHER };
  for (int o = 0; o < 3; o++)
    {
      assert_agree (t, &p, ops[o], SIM_COLLECTIVE_ALGO_RING, g8, 8, S);
      assert_agree (t, &p, ops[o], SIM_COLLECTIVE_ALGO_RING, g4, 4, S);
      assert_agree (t, &p, ops[o], SIM_COLLECTIVE_ALGO_RING, g2, 2, S);
    }
  /* Bandwidth-bound sizes (latency < 1% of the time): the bus bandwidth ratio is 7 within 2%. */
  double big = 4.0 * (1 << 30);
  gint64 t8 = run_one (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g8, 8, big);
  gint64 t2 = run_one (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g2, 2, big);
  double bus8 = big / t8 * sim_alphabeta_busbw_factor (SIM_COLLECTIVE_ALLREDUCE, 8);
  double bus2 = big / t2 * sim_alphabeta_busbw_factor (SIM_COLLECTIVE_ALLREDUCE, 2);
  g_test_message ("mesh all-reduce busbw: 8 GPUs %.1f GB/s, 2 GPUs %.1f GB/s", bus8, bus2);
  g_assert_cmpfloat (fabs (bus8 / bus2 / 7.0 - 1), <, 0.02);
  /* A send inside the node: one link, 64 GB/s × nvlink_eff. */
  int pair[2] = { 1, 4 };
  assert_agree (t, &p, SIM_COLLECTIVE_SENDRECV, SIM_COLLECTIVE_ALGO_DIRECT, pair, 2, S);
  /* Across 4 nodes: 8 ring channels, each on its own NIC, NIC-bound (8 × 50 GB/s < 7 × 64). */
  int g32[32];
  iota (g32, 32, 0, 1);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_RING, g32, 32, S);
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_HIER, g32, 32, S);
  /* Tree: each channel's chain through a node is its zigzag, both ways. */
  assert_agree (t, &p, SIM_COLLECTIVE_ALLREDUCE, SIM_COLLECTIVE_ALGO_TREE, g32, 32, S);
  SimCollectiveShape sh;
  g_assert_true (sim_collective_shape (t, g8, 8, &sh, NULL));
  g_assert_false (sh.nvls);
  g_assert_cmpfloat (sh.nvlink_bw_bytes_per_s, ==, 448e9);
  g_assert_true (sim_collective_shape (t, g2, 2, &sh, NULL));
  g_assert_cmpfloat (sh.nvlink_bw_bytes_per_s, ==, 64e9);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/collective/one-domain-agrees", test_one_domain_agrees);
  g_test_add_func ("/sim/collective/across-domains-agrees", test_across_domains_agrees);
  g_test_add_func ("/sim/collective/ll-agrees", test_ll_agrees);
  g_test_add_func ("/sim/collective/contention-differs", test_contention_differs);
  g_test_add_func ("/sim/collective/concurrent-groups-balanced", test_concurrent_groups_balanced);
  g_test_add_func ("/sim/collective/channel-shares", test_channel_shares);
  g_test_add_func ("/sim/collective/overlap-and-callbacks", test_overlap_and_callbacks);
  g_test_add_func ("/sim/collective/collnet", test_collnet);
  g_test_add_func ("/sim/collective/bad-input", test_bad_input);
  g_test_add_func ("/sim/collective/published-busbw", test_published_busbw);
  g_test_add_func ("/sim/collective/start-many", test_start_many);
  g_test_add_func ("/sim/collective/bundle-memo", test_bundle_memo);
  g_test_add_func ("/sim/collective/batched", test_batched);
  g_test_add_func ("/sim/collective/mesh", test_mesh);
  return g_test_run ();
}
