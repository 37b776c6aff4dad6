/* Topology builders and routing, checked against hand-computed counts (derivations beside each case,
 * using the formulas at the top of sim/net/topology.c) and against NVIDIA's published DGX SuperPOD table. */
#include "config.h"
#include <string.h>
#include <glib.h>
#include "sim/net/topology.h"

/* NDR InfiniBand 400 Gb/s = 50e9 B/s; XDR / 800G Ethernet = 100e9 B/s (reference/hardware.md §1b). */
#define NDR_BPS 50e9
#define XDR_BPS 100e9
/* NVLink per GPU per direction: H100 900 GB/s total -> 450e9; NVLink 5 1.8 TB/s -> 900e9 (hardware.md §1). */
#define NVLINK4_BPS 450e9
#define NVLINK5_BPS 900e9

static SimClusterSpec
hgx_h100 (int nodes)
{
  return (SimClusterSpec) {
    .gpus = nodes * 8, .gpus_per_node = 8, .nvlink_domain = 8, .gpus_per_domain_used = 0,
    .nvlink_bw_bytes_per_s = NVLINK4_BPS, .nvls = TRUE, .nvlink_latency_ns = 2000,
    .nics_per_gpu = 1, .nic_bw_bytes_per_s = NDR_BPS, .nic_latency_ns = 1500,
  };
}

static SimClusterSpec
gb200_nvl72 (int racks)
{
  return (SimClusterSpec) {
    .gpus = racks * 64, .gpus_per_node = 4, .nvlink_domain = 72, .gpus_per_domain_used = 64,
    .nvlink_bw_bytes_per_s = NVLINK5_BPS, .nvls = TRUE, .nvlink_latency_ns = 2000,
    .nics_per_gpu = 1, .nic_bw_bytes_per_s = XDR_BPS, .nic_latency_ns = 1500,
  };
}

/* An 8-GPU Infinity Fabric node (MI300X): each GPU's 448 GB/s per direction over 7 direct links of
 * 64 GB/s (stas00/ml-engineering network/README.md, "Infinity Fabric / xGMI"). */
static SimClusterSpec
mi300x (int nodes)
{
  return (SimClusterSpec) {
    .gpus = nodes * 8, .gpus_per_node = 8, .nvlink_domain = 8, .gpus_per_domain_used = 0,
    .nvlink_bw_bytes_per_s = 448e9, .mesh = TRUE, .nvls = FALSE, .nvlink_latency_ns = 2000,
    .nics_per_gpu = 1, .nic_bw_bytes_per_s = NDR_BPS, .nic_latency_ns = 1500,
  };
}

static SimFabricSpec
fabric (SimFabricKind kind, int tiers, int radix)
{
  return (SimFabricSpec) {
    .kind = kind, .tiers = tiers, .radix = radix, .oversubscription = { 1, 1, 1 },
    .link_bw_bytes_per_s = 0, .hop_latency_ns = 300,
  };
}

static SimTopology *
build_ok (const SimClusterSpec *c, const SimFabricSpec *f)
{
  g_autoptr (GError) error = NULL;
  SimTopology *t = sim_topology_new (c, f, &error);
  g_assert_no_error (error);
  g_assert_nonnull (t);
  return t;
}

static int
route_kinds (const SimTopology *t, int a, int b, guint32 hash, SimLinkKind kinds[SIM_TOPOLOGY_MAX_HOPS])
{
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  int n = sim_topology_route (t, a, b, hash, links);
  for (int i = 0; i < n; i++)
    kinds[i] = sim_topology_link (t, (int) links[i])->kind;
  return n;
}

static void
assert_kinds (const SimTopology *t, int a, int b, const SimLinkKind *want, int n_want)
{
  SimLinkKind got[SIM_TOPOLOGY_MAX_HOPS];
  for (guint32 h = 0; h < 64; h++)
    {
      int n = route_kinds (t, a, b, h, got);
      g_assert_cmpint (n, ==, n_want);
      for (int i = 0; i < n; i++)
        g_assert_cmpstr (sim_link_kind_name (got[i]), ==, sim_link_kind_name (want[i]));
    }
}

/* A route is a chain: it starts at the source GPU (or its NIC) and ends at the destination. */
static void
assert_chain (const SimTopology *t, int a, int b, guint32 hash)
{
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  int n = sim_topology_route (t, a, b, hash, links);
  int npg = sim_topology_cluster (t)->nics_per_gpu;
  g_assert_cmpint (n, >, 0);
  SimNodeRef from, to, prev = { 0 };
  for (int i = 0; i < n; i++)
    {
      sim_topology_link_ends (t, (int) links[i], &from, &to);
      if (i == 0)
        {
          if (from.kind == SIM_NODE_GPU)
            g_assert_cmpint (from.index, ==, a);
          else
            {
              g_assert_cmpint (from.kind, ==, SIM_NODE_NIC);
              g_assert_cmpint (from.index / npg, ==, a);
            }
        }
      else
        {
          g_assert_cmpint (from.kind, ==, prev.kind);
          g_assert_cmpint (from.index, ==, prev.index);
        }
      prev = to;
    }
  if (to.kind == SIM_NODE_GPU)
    g_assert_cmpint (to.index, ==, b);
  else
    {
      g_assert_cmpint (to.kind, ==, SIM_NODE_NIC);
      g_assert_cmpint (to.index / npg, ==, b);
    }
}

/* Every switch uses at most `radix` ports: count each up link at both of its ends (a port is one
 * up link plus its down twin). Also checks down links mirror up links one to one. */
static void
assert_radix (const SimTopology *t, int radix)
{
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  int n_sw[3] = { s.switches[0], s.switches[1], s.switches[2] };
  int *ports[3], *down_ports[3];
  for (int tier = 0; tier < 3; tier++)
    {
      ports[tier] = g_new0 (int, n_sw[tier] + 1);
      down_ports[tier] = g_new0 (int, n_sw[tier] + 1);
    }
  int n = sim_topology_n_links (t);
  for (int id = 0; id < n; id++)
    {
      SimNodeRef from, to;
      sim_topology_link_ends (t, id, &from, &to);
      const SimLink *l = sim_topology_link (t, id);
      gboolean up = l->kind == SIM_LINK_NIC_UP || l->kind == SIM_LINK_LEAF_UP || l->kind == SIM_LINK_SPINE_UP;
      gboolean down = l->kind == SIM_LINK_NIC_DOWN || l->kind == SIM_LINK_LEAF_DOWN || l->kind == SIM_LINK_SPINE_DOWN;
      SimNodeRef ends[2] = { from, to };
      for (int e = 0; e < 2; e++)
        {
          int tier = ends[e].kind == SIM_NODE_LEAF ? 0 : ends[e].kind == SIM_NODE_SPINE ? 1
                     : ends[e].kind == SIM_NODE_CORE ? 2 : -1;
          if (tier < 0)
            continue;
          g_assert_cmpint (ends[e].index, >=, 0);
          g_assert_cmpint (ends[e].index, <, n_sw[tier]);
          if (up)
            ports[tier][ends[e].index]++;
          if (down)
            down_ports[tier][ends[e].index]++;
        }
    }
  for (int tier = 0; tier < 3; tier++)
    for (int i = 0; i < n_sw[tier]; i++)
      {
        g_assert_cmpint (ports[tier][i], <=, radix);
        g_assert_cmpint (ports[tier][i], ==, down_ports[tier][i]);
        g_assert_cmpint (ports[tier][i], >, 0);  /* no idle switch was counted */
      }
  for (int tier = 0; tier < 3; tier++)
    {
      g_free (ports[tier]);
      g_free (down_ports[tier]);
    }
}

/* 1,344 nodes x 8 H100, rail-optimized NDR 400G, 64-port switches (the MLPerf v3.1 GPT-3 scale).
 * 2 tiers cannot hold it: 8 rails x ceil(1344/32) = 336 leaves > 64 spine ports. 3 tiers:
 *   leaves: d1 = u1 = 32 (1:1); L_r = ceil(1344/32) = 42 per rail; L = 8*42 = 336.
 *   spines: d2 = 32; pods per rail Q_r = ceil(42/32) = 2 -> 16 pods of L_p = 21 leaves;
 *           m1 = largest divisor of 32 with 21*m1 <= 32 = 1 -> S = 32 spines per pod, 512 spines,
 *           each with 21 down ports used and u2 = 21 up.
 *   cores:  m2 = largest divisor of 21 with 16*m2 <= 64 = 3 -> C = 7 per plane, 32*7 = 224 cores.
 *   links:  NVLink 2*10,752 + NIC 2*10,752 + leaf 2*336*32 + spine 2*512*21: each 21,504, = 86,016.
 *   bisection: min(10,752*50e9, 336*32*50e9, 512*21*50e9)/2 = 537.6e12/2 = 268.8 TB/s.
 * Memory: sizeof (SimTopology) = 464 bytes on x86-64 (printed below); nothing scales with GPUs. */
static void
test_h100_1344 (void)
{
  SimClusterSpec c = hgx_h100 (1344);
  SimFabricSpec f2 = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  g_autoptr (GError) error = NULL;
  g_assert_null (sim_topology_new (&c, &f2, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "336 leaves"));
  g_assert_nonnull (strstr (error->message, "3 tiers"));

  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  g_assert_cmpint (s.gpus, ==, 10752);
  g_assert_cmpint (s.nodes, ==, 1344);
  g_assert_cmpint (s.domains, ==, 1344);
  g_assert_cmpint (s.nics, ==, 10752);
  g_assert_cmpint (s.rails, ==, 8);
  g_assert_cmpint (s.pods, ==, 16);
  g_assert_cmpint (s.switches[0], ==, 336);
  g_assert_cmpint (s.switches[1], ==, 512);
  g_assert_cmpint (s.switches[2], ==, 224);
  g_assert_cmpint (s.ports_down[1], ==, 21);
  g_assert_cmpint (s.ports_up[1], ==, 21);
  g_assert_cmpint (s.links, ==, 86016);
  g_assert_cmpint (s.links_by_kind[SIM_LINK_SPINE_UP], ==, 10752);
  g_assert_cmpfloat_with_epsilon (s.bisection_bytes_per_s, 268.8e12, 1e6);
  g_assert_true (sim_topology_cluster (t)->nvls);
  gsize mem = sim_topology_memory_bytes (t);
  g_test_message ("10,752-GPU topology: %" G_GSIZE_FORMAT " bytes", mem);
  g_assert_cmpuint (mem, <, 4096);
  assert_radix (t, 64);
}

/* 128 GB200 NVL72 racks, 64 of 72 GPUs used (16 trays of 4), one 800G NIC per GPU, 64-port switches.
 *   GPUs 128*64 = 8,192; trays 2,048; NVLink domains 128; rails 4 (GPU index in the tray).
 *   leaves: L_r = 2048/32 = 64 per rail, L = 256 (> 64: needs 3 tiers).
 *   spines: Q_r = ceil(64/32) = 2 -> 8 pods of 32 leaves; m1 = 1, S = 32, 256 spines.
 *   cores:  m2 = largest divisor of 32 with 8*m2 <= 64 = 8 -> C = 4, 32*4 = 128 cores.
 *   links:  2*8,192 (NVLink) + 2*8,192 (NIC) + 2*256*32 + 2*256*32 = 65,536.
 *   bisection: 8,192*100e9/2 = 409.6 TB/s. */
static void
test_gb200_128 (void)
{
  SimClusterSpec c = gb200_nvl72 (128);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  g_assert_cmpint (s.gpus, ==, 8192);
  g_assert_cmpint (s.nodes, ==, 2048);
  g_assert_cmpint (s.domains, ==, 128);
  g_assert_cmpint (s.nics, ==, 8192);
  g_assert_cmpint (s.rails, ==, 4);
  g_assert_cmpint (s.switches[0], ==, 256);
  g_assert_cmpint (s.switches[1], ==, 256);
  g_assert_cmpint (s.switches[2], ==, 128);
  g_assert_cmpint (s.links, ==, 65536);
  g_assert_cmpfloat_with_epsilon (s.bisection_bytes_per_s, 409.6e12, 1e6);
  g_assert_cmpint (sim_topology_domain_of (t, 63), ==, 0);
  g_assert_cmpint (sim_topology_domain_of (t, 64), ==, 1);
  g_assert_cmpint (sim_topology_node_of (t, 63), ==, 15);
  assert_radix (t, 64);

  /* GPU 0 and 63: different trays of the same rack -> NVLink. GPU 0 -> 64: rail 0, trays 0 and 16,
   * same leaf (32 trays per leaf) -> NIC only. GPU 63 -> 64: rails 3 and 0 -> through the core. */
  static const SimLinkKind nv[] = { SIM_LINK_NVLINK_UP, SIM_LINK_NVLINK_DOWN };
  static const SimLinkKind leaf[] = { SIM_LINK_NIC_UP, SIM_LINK_NIC_DOWN };
  static const SimLinkKind core[] = { SIM_LINK_NIC_UP, SIM_LINK_LEAF_UP, SIM_LINK_SPINE_UP,
                                      SIM_LINK_SPINE_DOWN, SIM_LINK_LEAF_DOWN, SIM_LINK_NIC_DOWN };
  assert_kinds (t, 0, 63, nv, 2);
  assert_kinds (t, 0, 64, leaf, 2);
  assert_kinds (t, 63, 64, core, 6);
}

/* NVIDIA DGX SuperPOD B200 RA, "Larger DGX SuperPOD component counts" (64-port NDR switches,
 * 8 rails): nodes -> leaf, spine, core switches. 64: 16/8/-; 128: 32/16/-; 256: 64/32/-;
 * 512: 128/128/64; 1,024: 256/256/128; 2,048: 512/512/256. Cable counts there equal the GPU count at
 * every level, i.e. our NIC and (non-blocking) leaf-up link counts. */
static void
test_superpod_table (void)
{
  static const struct { int nodes, tiers, leaf, spine, core; } rows[] = {
    { 64, 2, 16, 8, 0 }, { 128, 2, 32, 16, 0 }, { 256, 2, 64, 32, 0 },
    { 512, 3, 128, 128, 64 }, { 1024, 3, 256, 256, 128 }, { 2048, 3, 512, 512, 256 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      SimClusterSpec c = hgx_h100 (rows[i].nodes);
      SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, rows[i].tiers, 64);
      g_autoptr (SimTopology) t = build_ok (&c, &f);
      SimTopologySummary s;
      sim_topology_summarize (t, &s);
      g_assert_cmpint (s.switches[0], ==, rows[i].leaf);
      g_assert_cmpint (s.switches[1], ==, rows[i].spine);
      g_assert_cmpint (s.switches[2], ==, rows[i].core);
      g_assert_cmpint (s.links_by_kind[SIM_LINK_LEAF_UP], ==, rows[i].nodes * 8);
      if (rows[i].tiers == 3)
        g_assert_cmpint (s.links_by_kind[SIM_LINK_SPINE_UP], ==, rows[i].nodes * 8);
      assert_radix (t, 64);
    }
}

/* Route shapes on the 1,344-node H100 cluster (32 nodes per leaf, 21 leaves per pod, pods per rail). */
static void
test_route_kinds (void)
{
  SimClusterSpec c = hgx_h100 (1344);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  static const SimLinkKind nv[] = { SIM_LINK_NVLINK_UP, SIM_LINK_NVLINK_DOWN };
  static const SimLinkKind leaf[] = { SIM_LINK_NIC_UP, SIM_LINK_NIC_DOWN };
  static const SimLinkKind spine[] = { SIM_LINK_NIC_UP, SIM_LINK_LEAF_UP, SIM_LINK_LEAF_DOWN,
                                       SIM_LINK_NIC_DOWN };
  static const SimLinkKind core[] = { SIM_LINK_NIC_UP, SIM_LINK_LEAF_UP, SIM_LINK_SPINE_UP,
                                      SIM_LINK_SPINE_DOWN, SIM_LINK_LEAF_DOWN, SIM_LINK_NIC_DOWN };
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  g_assert_cmpint (sim_topology_route (t, 5, 5, 0, links), ==, 0);
  assert_kinds (t, 0, 7, nv, 2);            /* same node */
  assert_kinds (t, 0, 8, leaf, 2);          /* node 0 -> 1, rail 0, same leaf */
  assert_kinds (t, 0, 31 * 8, leaf, 2);     /* node 31: last port of leaf 0 */
  assert_kinds (t, 0, 32 * 8, spine, 4);    /* node 32: leaf 1 of rail 0, same pod */
  assert_kinds (t, 0, 21 * 32 * 8, core, 6);/* node 672: leaf 21 = pod 1 of rail 0 */
  assert_kinds (t, 0, 9, core, 6);          /* rail 0 -> rail 1: rails join at the core */
  g_assert_cmpint (sim_topology_rail_of (t, 9), ==, 1);

  /* Latency: NVLink latency; NIC latency + 1 switch; NIC latency + 5 switches. */
  g_assert_cmpint (sim_topology_route (t, 0, 7, 1, links), ==, 2);
  g_assert_cmpint (sim_topology_path_latency_ns (t, links, 2), ==, 2000);
  g_assert_cmpint (sim_topology_route (t, 0, 8, 1, links), ==, 2);
  g_assert_cmpint (sim_topology_path_latency_ns (t, links, 2), ==, 1500 + 300);
  g_assert_cmpint (sim_topology_route (t, 0, 9, 1, links), ==, 6);
  g_assert_cmpint (sim_topology_path_latency_ns (t, links, 6), ==, 1500 + 5 * 300);

  /* 2 tiers (128 nodes): a different rail crosses the spine. */
  SimClusterSpec c2 = hgx_h100 (128);
  SimFabricSpec f2 = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  g_autoptr (SimTopology) t2 = build_ok (&c2, &f2);
  assert_kinds (t2, 0, 9, spine, 4);
  assert_kinds (t2, 0, 8, leaf, 2);
  assert_kinds (t2, 3, 4, nv, 2);

  /* Plain fat tree: NICs fill leaves in node order (32 NICs = 4 nodes per leaf), so node 0 -> node 1
   * on another local index shares a leaf, and node 4 is on the next leaf. */
  SimFabricSpec fp = fabric (SIM_FABRIC_FAT_TREE, 2, 64);
  g_autoptr (SimTopology) tp = build_ok (&c2, &fp);
  assert_kinds (tp, 0, 9, leaf, 2);
  assert_kinds (tp, 0, 31, leaf, 2);
  assert_kinds (tp, 0, 32, spine, 4);
  SimTopologySummary s;
  sim_topology_summarize (tp, &s);
  g_assert_cmpint (s.rails, ==, 1);
  g_assert_cmpint (s.switches[0], ==, 32);  /* 1,024 NICs / 32 */
}

/* PXN on the 1,344-node cluster: GPU 0 -> GPU 9 (node 1, local 1) goes over NVLink to GPU 1 (rail 1),
 * then node 0 -> node 1 on rail 1 shares a leaf: 4 links instead of 6 through the core. Same rail and
 * same domain are unchanged. */
static void
test_route_pxn (void)
{
  SimClusterSpec c = hgx_h100 (1344);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  guint32 links[SIM_TOPOLOGY_MAX_HOPS], plain[SIM_TOPOLOGY_MAX_HOPS];
  int n = sim_topology_route_pxn (t, 0, 9, 3, links);
  g_assert_cmpint (n, ==, 4);
  static const SimLinkKind want[] = { SIM_LINK_NVLINK_UP, SIM_LINK_NVLINK_DOWN, SIM_LINK_NIC_UP,
                                      SIM_LINK_NIC_DOWN };
  for (int i = 0; i < n; i++)
    g_assert_cmpint (sim_topology_link (t, (int) links[i])->kind, ==, want[i]);
  SimNodeRef from, to;
  sim_topology_link_ends (t, (int) links[1], &from, &to);
  g_assert_cmpint (to.kind, ==, SIM_NODE_GPU);
  g_assert_cmpint (to.index, ==, 1);
  sim_topology_link_ends (t, (int) links[2], &from, &to);
  g_assert_cmpint (from.index, ==, 1);  /* GPU 1's NIC */
  /* node 0 -> node 700 (other pod), local 2 -> 5: NVLink to GPU 5, then rail 5 via the core (4 links). */
  g_assert_cmpint (sim_topology_route_pxn (t, 2, 700 * 8 + 5, 1, links), ==, 8);
  for (int pair = 0; pair < 3; pair++)
    {
      int a = pair == 0 ? 0 : 3, b = pair == 0 ? 8 : pair == 1 ? 5 : 3 + 8 * 40;
      int m = sim_topology_route_pxn (t, a, b, 11, links);
      g_assert_cmpint (m, ==, sim_topology_route (t, a, b, 11, plain));
      g_assert_cmpmem (links, m * sizeof *links, plain, m * sizeof *plain);
    }
}

/* Every route is a connected chain, and a->b and b->a have the same length with mirrored kinds. */
static void
test_route_chain_symmetric (void)
{
  SimClusterSpec cs[2] = { hgx_h100 (1344), gb200_nvl72 (128) };
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  g_autoptr (GRand) rng = g_rand_new_with_seed (42);
  for (int k = 0; k < 2; k++)
    {
      g_autoptr (SimTopology) t = build_ok (&cs[k], &f);
      int gpus = sim_topology_n_gpus (t);
      for (int i = 0; i < 20000; i++)
        {
          int a = g_rand_int_range (rng, 0, gpus), b = g_rand_int_range (rng, 0, gpus);
          if (a == b)
            continue;
          guint32 h = g_rand_int (rng);
          SimLinkKind ab[SIM_TOPOLOGY_MAX_HOPS], ba[SIM_TOPOLOGY_MAX_HOPS];
          int n = route_kinds (t, a, b, h, ab);
          int m = route_kinds (t, b, a, h ^ 0x5555u, ba);
          g_assert_cmpint (n, ==, m);
          g_assert_true (n == 2 || n == 4 || n == 6);
          for (int j = 0; j < n; j++)
            {
              /* up kinds are even, their down twin is the next value */
              g_assert_cmpint (ab[j] / 2, ==, ba[n - 1 - j] / 2);
              g_assert_cmpint (ab[j] % 2, !=, ba[n - 1 - j] % 2);
            }
          assert_chain (t, a, b, h);
        }
    }
}

/* Naive reference: an explicit graph built from every link's ends, searched breadth-first. Each
 * route must be a shortest path (in links) from the source GPU or its NICs to the destination GPU
 * or its NICs; ECMP only chooses among equal-length ones. */
static int
node_id (const SimTopology *t, SimNodeRef r, const int *offset)
{
  (void) t;
  return offset[r.kind] + r.index;
}

static void
check_shortest (const SimTopology *t)
{
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  int npg = sim_topology_cluster (t)->nics_per_gpu;
  int count[6] = { s.gpus, s.domains, s.nics, s.switches[0], s.switches[1], s.switches[2] };
  int offset[7] = { 0 };
  for (int k = 0; k < 6; k++)
    offset[k + 1] = offset[k] + count[k];
  int n_nodes = offset[6], n_links = sim_topology_n_links (t);
  /* adjacency in compressed rows */
  g_autofree int *deg = g_new0 (int, n_nodes + 1);
  g_autofree int *head = g_new (int, n_links);
  g_autofree int *tail = g_new (int, n_links);
  for (int id = 0; id < n_links; id++)
    {
      SimNodeRef from, to;
      sim_topology_link_ends (t, id, &from, &to);
      tail[id] = node_id (t, from, offset);
      head[id] = node_id (t, to, offset);
      deg[tail[id] + 1]++;
    }
  for (int v = 0; v < n_nodes; v++)
    deg[v + 1] += deg[v];
  g_autofree int *adj = g_new (int, n_links);
  g_autofree int *fill = g_memdup2 (deg, sizeof (int) * (gsize) n_nodes);
  for (int id = 0; id < n_links; id++)
    adj[fill[tail[id]]++] = head[id];
  g_autofree int *dist = g_new (int, n_nodes);
  g_autofree int *queue = g_new (int, n_nodes);
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  for (int a = 0; a < s.gpus; a++)
    {
      for (int v = 0; v < n_nodes; v++)
        dist[v] = -1;
      int qh = 0, qt = 0;
      dist[a] = 0;
      queue[qt++] = a;
      for (int k = 0; k < npg; k++)
        {
          dist[offset[SIM_NODE_NIC] + a * npg + k] = 0;
          queue[qt++] = offset[SIM_NODE_NIC] + a * npg + k;
        }
      while (qh < qt)
        {
          int v = queue[qh++];
          for (int e = deg[v]; e < deg[v + 1]; e++)
            if (dist[adj[e]] < 0)
              {
                dist[adj[e]] = dist[v] + 1;
                queue[qt++] = adj[e];
              }
        }
      for (int b = 0; b < s.gpus; b++)
        {
          if (a == b)
            continue;
          int best = dist[b];
          for (int k = 0; k < npg; k++)
            {
              int d = dist[offset[SIM_NODE_NIC] + b * npg + k];
              if (d >= 0 && (best < 0 || d < best))
                best = d;
            }
          g_assert_cmpint (best, >, 0);
          g_assert_cmpint (sim_topology_route (t, a, b, (guint32) (a * 7919 + b), links), ==, best);
        }
    }
}

static void
test_routes_are_shortest (void)
{
  /* 16 x 8 H100, radix 8, 3 tiers: d1 = 4, 4 leaves per rail (32), 8 pods of 4 leaves, 32 spines,
   * 16 cores. Plain fat tree: 128 NICs on 32 leaves, 8 pods. GB200: 4 racks, radix 16, 4 rails of 64
   * trays on 8 leaves each, 4 pods. 2-tier H100 with radix 64 (128 nodes, parallel leaf-spine links). */
  SimClusterSpec c = hgx_h100 (16);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 8);
  g_autoptr (SimTopology) t1 = build_ok (&c, &f);
  check_shortest (t1);
  f.kind = SIM_FABRIC_FAT_TREE;
  g_autoptr (SimTopology) t2 = build_ok (&c, &f);
  check_shortest (t2);
  SimClusterSpec g = gb200_nvl72 (4);
  SimFabricSpec fg = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 16);
  g_autoptr (SimTopology) t3 = build_ok (&g, &fg);
  check_shortest (t3);
  SimClusterSpec c2 = hgx_h100 (32);
  c2.nics_per_gpu = 2;  /* 2 NICs per GPU: 16 rails */
  SimFabricSpec f2 = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  g_autoptr (SimTopology) t4 = build_ok (&c2, &f2);
  check_shortest (t4);
  assert_radix (t4, 64);
  /* Plain fat tree, 2 NICs per GPU, radix 8 at 2:1: d1 = 5 (5 + ceil(5/2) = 8), an odd port count,
   * so some GPUs' two NICs sit on different leaves (and pods). */
  SimClusterSpec c5 = hgx_h100 (4);
  c5.nics_per_gpu = 2;
  SimFabricSpec f5 = fabric (SIM_FABRIC_FAT_TREE, 3, 8);
  f5.oversubscription[0] = 2;
  g_autoptr (SimTopology) t5 = build_ok (&c5, &f5);
  SimTopologySummary s5;
  sim_topology_summarize (t5, &s5);
  g_assert_cmpint (s5.ports_down[0], ==, 5);
  g_assert_cmpint (s5.switches[0], ==, 13);  /* ceil(64/5) */
  check_shortest (t5);
  assert_radix (t5, 8);
}

/* ECMP: 16,000 flow hashes between two GPUs on different rails of the 2-tier 128-node cluster
 * (16 spines) should each carry 1,000 +- 4.4 sigma (sigma = sqrt(16000 * 1/16 * 15/16) = 30.6);
 * likewise over the 224 cores of the 1,344-node cluster (n = 64,000: 285.7 +- 4.7 sigma, sigma = 16.9). */
static void
test_ecmp_uniform (void)
{
  SimClusterSpec c = hgx_h100 (128);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  int hist[16] = { 0 };
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  for (guint32 h = 0; h < 16000; h++)
    {
      g_assert_cmpint (sim_topology_route (t, 0, 9, h, links), ==, 4);
      SimNodeRef from, to;
      sim_topology_link_ends (t, (int) links[1], &from, &to);
      g_assert_cmpint (to.kind, ==, SIM_NODE_SPINE);
      hist[to.index]++;
    }
  for (int i = 0; i < 16; i++)
    {
      g_assert_cmpint (hist[i], >, 1000 - 135);
      g_assert_cmpint (hist[i], <, 1000 + 135);
    }

  SimClusterSpec c3 = hgx_h100 (1344);
  SimFabricSpec f3 = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  g_autoptr (SimTopology) t3 = build_ok (&c3, &f3);
  g_autofree int *cores = g_new0 (int, 224);
  for (guint32 h = 0; h < 64000; h++)
    {
      g_assert_cmpint (sim_topology_route (t3, 17, 1000, h, links), ==, 6);
      SimNodeRef from, to;
      sim_topology_link_ends (t3, (int) links[2], &from, &to);
      g_assert_cmpint (to.kind, ==, SIM_NODE_CORE);
      cores[to.index]++;
    }
  for (int i = 0; i < 224; i++)
    {
      g_assert_cmpint (cores[i], >, 286 - 80);
      g_assert_cmpint (cores[i], <, 286 + 80);
    }
}

/* Leaf oversubscription o = 3 with 64 ports: d1 = 48, u1 = 16 (48 + ceil(48/3) = 64), so a leaf's
 * up capacity is 16*50e9 = 0.8 TB/s = its 2.4 TB/s of NIC ports / 3. With 96 nodes (whole leaves:
 * 96/48 = 2 per rail, 16 leaves vs 96/32 = 3 per rail, 24 leaves at 1:1) the total leaf up capacity
 * and the bisection drop by exactly 3: 24*32 vs 16*16 links = 768 vs 256; bisection 19.2 vs 6.4 TB/s.
 * 2:1 gives d1 = 42, u1 = 21 (42 + 21 = 63 <= 64; 43 + 22 > 64). */
static void
test_oversubscription (void)
{
  SimClusterSpec c = hgx_h100 (96);
  SimFabricSpec f1 = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  SimFabricSpec f3 = f1;
  f3.oversubscription[0] = 3;
  g_autoptr (SimTopology) t1 = build_ok (&c, &f1);
  g_autoptr (SimTopology) t3 = build_ok (&c, &f3);
  SimTopologySummary s1, s3;
  sim_topology_summarize (t1, &s1);
  sim_topology_summarize (t3, &s3);
  g_assert_cmpint (s3.ports_down[0], ==, 48);
  g_assert_cmpint (s3.ports_up[0], ==, 16);
  g_assert_cmpfloat_with_epsilon (s3.ports_up[0] * NDR_BPS, s3.ports_down[0] * NDR_BPS / 3, 1);
  g_assert_cmpint (s1.links_by_kind[SIM_LINK_LEAF_UP], ==, 768);
  g_assert_cmpint (s3.links_by_kind[SIM_LINK_LEAF_UP], ==, 256);
  g_assert_cmpfloat_with_epsilon (s1.bisection_bytes_per_s, 19.2e12, 1e6);
  g_assert_cmpfloat_with_epsilon (s3.bisection_bytes_per_s, 6.4e12, 1e6);
  assert_radix (t3, 64);

  SimFabricSpec f2 = f1;
  f2.oversubscription[0] = 2;
  g_autoptr (SimTopology) t2 = build_ok (&c, &f2);
  SimTopologySummary s2;
  sim_topology_summarize (t2, &s2);
  g_assert_cmpint (s2.ports_down[0], ==, 42);
  g_assert_cmpint (s2.ports_up[0], ==, 21);

  /* Capacities: every leaf up link runs at the switch-link rate; faster trunks (800G on 400G NICs)
   * halve the up ports needed at 1:1: d1 + ceil(d1/2) <= 64 -> d1 = 42, u1 = 21. */
  SimFabricSpec fx = f1;
  fx.link_bw_bytes_per_s = XDR_BPS;
  g_autoptr (SimTopology) tx = build_ok (&c, &fx);
  SimTopologySummary sx;
  sim_topology_summarize (tx, &sx);
  g_assert_cmpint (sx.ports_down[0], ==, 42);
  g_assert_cmpint (sx.ports_up[0], ==, 21);
  int n = sim_topology_n_links (tx);
  g_autofree double *cap = g_new (double, n);
  sim_topology_fill_capacities (tx, cap);
  for (int i = 0; i < n; i++)
    {
      const SimLink *l = sim_topology_link (tx, i);
      g_assert_cmpfloat (cap[i], ==, l->bandwidth_bytes_per_s);
      double want = l->kind <= SIM_LINK_NVLINK_DOWN ? NVLINK4_BPS
                    : l->kind <= SIM_LINK_NIC_DOWN ? NDR_BPS : XDR_BPS;
      g_assert_cmpfloat (cap[i], ==, want);
    }
}

static void
assert_invalid (const SimClusterSpec *c, const SimFabricSpec *f, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimTopology) t = sim_topology_new (c, f, &error);
  g_assert_null (t);
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_INVALID);
  if (!strstr (error->message, needle))
    g_error ("message '%s' lacks '%s'", error->message, needle);
}

static void
test_invalid (void)
{
  SimClusterSpec c = hgx_h100 (16);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  SimClusterSpec bad = c;
  bad.gpus = 0;
  assert_invalid (&bad, &f, "0 GPUs");
  bad = c;
  bad.gpus = 100;
  assert_invalid (&bad, &f, "not divisible by gpus_per_node");
  bad = c;
  bad.nics_per_gpu = 0;
  assert_invalid (&bad, &f, "no NICs");
  bad = c;
  bad.nic_bw_bytes_per_s = 0;
  assert_invalid (&bad, &f, "NIC bandwidth");
  SimClusterSpec g = gb200_nvl72 (2);
  g.gpus_per_domain_used = 66;  /* not whole trays of 4 */
  assert_invalid (&g, &f, "whole number");
  g.gpus_per_domain_used = 80;
  assert_invalid (&g, &f, "outside");

  SimFabricSpec bf = f;
  bf.radix = 8;  /* 4 down per leaf: 8 rails x 4 leaves = 32 leaves > 8 spine ports */
  assert_invalid (&c, &bf, "use 3 tiers or a larger radix");
  bf.tiers = 3;  /* spine d2 = 4: 1 pod per rail, 8 pods <= 8: fits */
  g_autoptr (SimTopology) ok = build_ok (&c, &bf);
  assert_radix (ok, 8);
  SimClusterSpec big = hgx_h100 (64);  /* 16 leaves per rail -> 4 pods per rail -> 32 pods > 8 */
  assert_invalid (&big, &bf, "larger radix");
  bf = f;
  bf.tiers = 4;
  assert_invalid (&c, &bf, "4 tiers");
  bf = f;
  bf.oversubscription[0] = 0;
  assert_invalid (&c, &bf, "leaf oversubscription");
  bf = f;
  bf.oversubscription[1] = 2;
  assert_invalid (&c, &bf, "no up links");
  g_autoptr (GError) error = NULL;
  g_assert_null (sim_topology_new (&c, NULL, &error));
  g_assert_nonnull (strstr (error->message, "no fabric"));
}

/* One NVLink domain without NICs is a valid cluster (a single HGX box). */
static void
test_single_domain (void)
{
  SimClusterSpec c = hgx_h100 (1);
  c.nics_per_gpu = 0;
  g_autoptr (SimTopology) t = build_ok (&c, NULL);
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  g_assert_cmpint (s.tiers, ==, 0);
  g_assert_cmpint (s.links, ==, 16);
  g_assert_cmpfloat (s.bisection_bytes_per_s, ==, 0);
  static const SimLinkKind nv[] = { SIM_LINK_NVLINK_UP, SIM_LINK_NVLINK_DOWN };
  assert_kinds (t, 2, 6, nv, 2);
  g_autofree char *d = sim_topology_describe (t);
  g_assert_nonnull (strstr (d, "none"));
}

/* 131,072 GPUs (16,384 nodes, 128-port switches) build and route in constant memory. */
static void
test_large_is_cheap (void)
{
  SimClusterSpec c = hgx_h100 (16384);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 128);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  g_assert_cmpuint (sim_topology_memory_bytes (t), <, 4096);
  guint32 links[SIM_TOPOLOGY_MAX_HOPS];
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  guint64 sum = 0;
  for (int i = 0; i < 100000; i++)
    {
      int n = sim_topology_route (t, g_rand_int_range (rng, 0, 131072), g_rand_int_range (rng, 0, 131072),
                                  (guint32) i, links);
      for (int j = 0; j < n; j++)
        g_assert_cmpint (links[j], <, sim_topology_n_links (t));
      sum += (guint64) n;
    }
  g_assert_cmpuint (sum, >, 0);
  g_autofree char *d = sim_topology_describe (t);
  g_assert_nonnull (strstr (d, "core"));
}

/* Adaptive routing pools each tier's up-links into one trunk per leaf and per pod (sim/net/topology.c).
 * 1,344 x 8 H100, NDR, radix 64, 3 tiers (the case above): a leaf has 32 NIC ports and u1 = 32 up
 * links, so its trunk carries 32 x 50 GB/s = 1.6 TB/s, exactly the NICs below it; a pod has S = 32
 * spines with u2 = 21 core links each, 672 x 50 GB/s = 33.6 TB/s, again its 672 NICs (21 leaves x
 * 32). Such trunks can never limit a flow, so routes list only the NICs; the path latency still
 * counts every switch hop, as the static route does. Rail 0's first pod holds nodes 0..671, so node
 * 0 -> node 40 (leaf 1) stays in the pod and node 0 -> node 700 crosses the core. Cables (what
 * fails, what is bought) do not change. */
static void
test_adaptive_trunks (void)
{
  SimClusterSpec c = hgx_h100 (1344);
  SimFabricSpec fs = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  SimFabricSpec fa = fs;
  fa.routing = SIM_ROUTING_ADAPTIVE;
  g_autoptr (SimTopology) ts = build_ok (&c, &fs);
  g_autoptr (SimTopology) ta = build_ok (&c, &fa);
  SimTopologySummary ss, sa;
  sim_topology_summarize (ts, &ss);
  sim_topology_summarize (ta, &sa);
  g_assert_cmpint (sa.links, ==, ss.links);
  for (int k = 0; k < SIM_LINK_KIND_COUNT; k++)
    g_assert_cmpint (sa.links_by_kind[k], ==, ss.links_by_kind[k]);
  g_assert_cmpfloat_with_epsilon (sa.bisection_bytes_per_s, ss.bisection_bytes_per_s, 1.0);
  /* The graph itself: one trunk per leaf (336) and per pod (16) and direction. */
  g_assert_cmpint (sim_topology_n_links (ta), ==, 2 * 10752 + 2 * 10752 + 2 * 336 + 2 * 16);

  guint32 a[SIM_TOPOLOGY_MAX_HOPS], b[SIM_TOPOLOGY_MAX_HOPS];
  const int dst[] = { 40 * 8, 700 * 8 };
  for (int i = 0; i < 2; i++)
    {
      int n = sim_topology_route (ta, 0, dst[i], 1, a);
      g_assert_cmpint (n, ==, 2);
      g_assert_cmpint (sim_topology_link (ta, (int) a[0])->kind, ==, SIM_LINK_NIC_UP);
      g_assert_cmpint (sim_topology_link (ta, (int) a[1])->kind, ==, SIM_LINK_NIC_DOWN);
      g_assert_cmpint (sim_topology_route (ta, 0, dst[i], 987654, b), ==, 2);
      g_assert_cmpmem (a, n * sizeof *a, b, n * sizeof *b);  /* no hash */
      /* Same latency as the static route: NIC 1.5 us + 300 ns per switch hop (3 in the pod, 5 via
       * the core). */
      int m = sim_topology_route (ts, 0, dst[i], 1, b);
      g_assert_cmpint (sim_topology_path_latency_ns (ta, a, n), ==, sim_topology_path_latency_ns (ts, b, m));
      g_assert_cmpint (sim_topology_path_latency_ns (ta, a, n), ==, 1500 + (i ? 5 : 3) * 300);
    }

  /* Oversubscribed 2:1 at the leaf: the largest d1 with d1 + ceil(d1/2) <= 64 is 42 (43 + 22 = 65),
   * so u1 = 21 up links, half the NICs below: the leaf trunks bind and are on the route, with
   * 21 x 50 GB/s. The pods are non-blocking above their (narrower) leaf trunks: no pod trunk. */
  SimFabricSpec fo = fa;
  fo.oversubscription[0] = 2;
  g_autoptr (SimTopology) to = build_ok (&c, &fo);
  int n = sim_topology_route (to, 0, 50 * 8, 1, a);
  g_assert_cmpint (n, ==, 4);
  const SimLink *up = sim_topology_link (to, (int) a[1]);
  g_assert_cmpint (up->kind, ==, SIM_LINK_LEAF_UP);
  g_assert_cmpfloat_with_epsilon (up->bandwidth_bytes_per_s, 21 * NDR_BPS, 1.0);
  g_assert_cmpint (sim_topology_link (to, (int) a[2])->kind, ==, SIM_LINK_LEAF_DOWN);
  int m = sim_topology_route (ts, 0, 50 * 8, 1, b);
  g_assert_cmpint (sim_topology_path_latency_ns (to, a, n), ==, sim_topology_path_latency_ns (ts, b, m));
}

/* Multi-plane (fabric planes = 4, adaptive): each plane is the fabric described, its ports at a
 * quarter of the rates, so switch and cable counts are four times one plane's and the simulated
 * graph, routes, trunk capacities and bisection are those of one plane at full rate (the NIC sprays
 * over the planes). Static routing with planes is refused. */
static void
test_planes (void)
{
  SimClusterSpec c = hgx_h100 (1344);
  SimFabricSpec f1 = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 3, 64);
  f1.routing = SIM_ROUTING_ADAPTIVE;
  f1.oversubscription[0] = 2;
  SimFabricSpec f4 = f1;
  f4.planes = 4;
  g_autoptr (SimTopology) t1 = build_ok (&c, &f1);
  g_autoptr (SimTopology) t4 = build_ok (&c, &f4);
  SimTopologySummary s1, s4;
  sim_topology_summarize (t1, &s1);
  sim_topology_summarize (t4, &s4);
  g_assert_cmpint (s4.planes, ==, 4);
  for (int i = 0; i < 3; i++)
    g_assert_cmpint (s4.switches[i], ==, 4 * s1.switches[i]);
  g_assert_cmpint (s4.links_by_kind[SIM_LINK_LEAF_UP], ==, 4 * s1.links_by_kind[SIM_LINK_LEAF_UP]);
  g_assert_cmpint (s4.links_by_kind[SIM_LINK_NIC_UP], ==, s1.links_by_kind[SIM_LINK_NIC_UP]);
  g_assert_cmpfloat (s4.bisection_bytes_per_s, ==, s1.bisection_bytes_per_s);
  g_assert_cmpint (sim_topology_n_links (t4), ==, sim_topology_n_links (t1));
  guint32 a[SIM_TOPOLOGY_MAX_HOPS], b[SIM_TOPOLOGY_MAX_HOPS];
  int n = sim_topology_route (t4, 0, 50 * 8, 1, a);
  g_assert_cmpint (n, ==, sim_topology_route (t1, 0, 50 * 8, 1, b));
  g_assert_cmpmem (a, n * sizeof *a, b, n * sizeof *b);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat (sim_topology_link (t4, (int) a[i])->bandwidth_bytes_per_s, ==,
                       sim_topology_link (t1, (int) b[i])->bandwidth_bytes_per_s);
  SimFabricSpec fs = f4;
  fs.routing = SIM_ROUTING_STATIC;
  g_autoptr (GError) error = NULL;
  g_assert_null (sim_topology_new (&c, &fs, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "planes"));
}

/* A mesh domain: D·8·7 direct links (4 nodes: 224) and no NVLink up/down links; a same-node route is
 * the one link from a to b at 448/7 = 64 GB/s with the scale-up latency; across nodes NICs as
 * before; the mesh must be one node and cannot have NVLS. */
static void
test_mesh (void)
{
  SimClusterSpec c = mi300x (4);
  SimFabricSpec f = fabric (SIM_FABRIC_RAIL_OPTIMIZED, 2, 64);
  g_autoptr (SimTopology) t = build_ok (&c, &f);
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  g_assert_cmpint (s.links_by_kind[SIM_LINK_MESH], ==, 4 * 8 * 7);
  g_assert_cmpint (s.links_by_kind[SIM_LINK_NVLINK_UP], ==, 0);
  g_assert_cmpint (s.links_by_kind[SIM_LINK_NVLINK_DOWN], ==, 0);
  g_assert_cmpint (s.nvswitch_domains, ==, 0);
  for (int a = 8; a < 16; a++)
    for (int b = 8; b < 16; b++)
      {
        guint32 links[SIM_TOPOLOGY_MAX_HOPS];
        int n = sim_topology_route (t, a, b, 0, links);
        if (a == b)
          {
            g_assert_cmpint (n, ==, 0);
            continue;
          }
        g_assert_cmpint (n, ==, 1);
        const SimLink *l = sim_topology_link (t, (int) links[0]);
        g_assert_cmpint (l->kind, ==, SIM_LINK_MESH);
        g_assert_cmpfloat (l->bandwidth_bytes_per_s, ==, 64e9);
        g_assert_cmpint (sim_topology_path_latency_ns (t, links, 1), ==, 2000);
        SimNodeRef from, to;
        sim_topology_link_ends (t, (int) links[0], &from, &to);
        g_assert_cmpint (from.kind, ==, SIM_NODE_GPU);
        g_assert_cmpint (from.index, ==, a);
        g_assert_cmpint (to.kind, ==, SIM_NODE_GPU);
        g_assert_cmpint (to.index, ==, b);
      }
  SimLinkKind kinds[SIM_TOPOLOGY_MAX_HOPS];
  int n = route_kinds (t, 3, 11, 0, kinds);
  g_assert_cmpint (kinds[0], ==, SIM_LINK_NIC_UP);
  g_assert_cmpint (kinds[n - 1], ==, SIM_LINK_NIC_DOWN);
  g_autofree char *d = sim_topology_describe (t);
  g_assert_nonnull (strstr (d, "mesh domains      4 of 8 GPUs, fully connected: 64.0 GB/s per link"));
  g_autoptr (GError) error = NULL;
  SimClusterSpec bad = mi300x (4);
  bad.nvls = TRUE;
  g_assert_null (sim_topology_new (&bad, &f, &error));
  g_assert_error (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_INVALID);
  g_clear_error (&error);
  bad = mi300x (4);
  bad.gpus_per_node = 4;
  g_assert_null (sim_topology_new (&bad, &f, &error));
  g_assert_nonnull (strstr (error->message, "mesh"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/topology/h100-1344-summary", test_h100_1344);
  g_test_add_func ("/sim/topology/gb200-128-racks-summary", test_gb200_128);
  g_test_add_func ("/sim/topology/superpod-reference-counts", test_superpod_table);
  g_test_add_func ("/sim/topology/route-kinds", test_route_kinds);
  g_test_add_func ("/sim/topology/route-pxn", test_route_pxn);
  g_test_add_func ("/sim/topology/route-chain-symmetric", test_route_chain_symmetric);
  g_test_add_func ("/sim/topology/routes-are-shortest", test_routes_are_shortest);
  g_test_add_func ("/sim/topology/ecmp-uniform", test_ecmp_uniform);
  g_test_add_func ("/sim/topology/oversubscription", test_oversubscription);
  g_test_add_func ("/sim/topology/adaptive-trunks", test_adaptive_trunks);
  g_test_add_func ("/sim/topology/planes", test_planes);
  g_test_add_func ("/sim/topology/invalid-specs", test_invalid);
  g_test_add_func ("/sim/topology/single-domain", test_single_domain);
  g_test_add_func ("/sim/topology/large-is-cheap", test_large_is_cheap);
  g_test_add_func ("/sim/topology/mesh", test_mesh);
  return g_test_run ();
}
