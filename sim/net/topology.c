/* The cluster as directed links: NVLink domains plus a rail-optimized or plain fat tree.
 *
 * Nothing is stored per link or per pair: links are numbered in blocks by kind and every link of a
 * kind has the same capacity and latency, so a link's ends and a route follow from index arithmetic.
 * A 10^5-GPU topology costs sizeof (SimTopology).
 *
 * Scale-up. GPUs are numbered densely over the GPUs used: node (host or tray) = g / gpus_per_node,
 * NVLink domain = g / U with U = gpus_per_domain_used (a whole number of nodes; MLPerf GB200 uses 64 of
 * the 72 GPUs of an NVL72 rack, 16 trays of 4). An NVSwitch domain is a non-blocking switch: GPU g has
 * one up link (GPU -> switch) and one down link (switch -> GPU) at the per-direction NVLink rate, so a
 * same-domain route is exactly two hops. NVLS is only carried in the spec for the collectives.
 * A mesh domain (cluster.mesh: AMD Infinity Fabric, eight GPUs of a node each linked directly to the
 * seven others) has no switch: GPU a has one link to each peer b at nvlink_bw / (nvlink_domain - 1)
 * per direction, so a same-domain route is one hop and a group of k GPUs of the domain reaches its
 * members over k - 1 links only ("2 GPUs performed 6.5x slower than 8" in all-reduce busbw on an
 * MI300X node: stas00/ml-engineering network/README.md, "Peer-to-peer bandwidth"). Link (a, b) of
 * domain d is number d*U*(U-1) + la*(U-1) + (lb < la ? lb : lb - 1), la and lb the local indices.
 *
 * Scale-out endpoints. GPU g has nics_per_gpu = N NICs, NIC e = g*N + k. Rail-optimized: NIC (g, k)
 * sits on rail (g mod gpus_per_node)*N + k, at position node(g) along its rail; each rail has its own
 * leaves ("each GPU rail onto a different first level (LEAF) switch", NVIDIA InfiniBand Cluster
 * Bring-up Procedure, "Setting the InfiniBand Cluster Topology"). Plain fat tree: one rail, position e
 * (NICs reach leaves in node order).
 *
 * Ports per switch. All ports of a switch count alike in the radix k. A leaf with d down ports at the
 * NIC rate b_nic and u up ports at the switch-link rate b_link has oversubscription d*b_nic/(u*b_link);
 * the leaf takes the largest d with d + ceil(d*b_nic/(o1*b_link)) <= k (so the ratio is at most o1),
 * u = ceil(d*b_nic/(o1*b_link)). Spines in a 3-tier fabric bound their down ports d2 likewise with o2
 * (all ports at b_link); the top tier has no up ports (its oversubscription must be 1).
 *
 * Switch counts (R rails, P_r positions per rail, ceil = rounding up):
 *   leaves per rail  L_r = ceil(P_r / d1),  leaves L = R * L_r.
 *   2 tiers: one spine-leaf group of all L leaves (rails join at the spine). Each leaf spreads its u1
 *     up links over S spines with m1 parallel links per leaf-spine pair, m1 = the largest divisor of u1
 *     with L*m1 <= k; S = u1/m1. Needs L <= k.
 *   3 tiers: spine-leaf groups ("pods") never mix rails (rails join at the core): pods per rail
 *     Q_r = ceil(L_r / d2), leaves per pod L_p = ceil(L_r / Q_r), pods Q = R*Q_r; m1 = largest divisor
 *     of u1 with L_p*m1 <= d2, S = u1/m1 spines per pod, Q*S spines. A spine cables u2 =
 *     ceil(L_p*m1/o2) up ports (its used down ports over o2). Spine s of every pod belongs to plane s;
 *     a plane has C cores, each linked to every pod's spine s by m2 parallel links, m2 = the largest
 *     divisor of u2 with Q*m2 <= k, C = u2/m2, cores = S*C. Needs Q <= k.
 * This reproduces NVIDIA's published DGX SuperPOD counts with 64-port NDR switches (DGX SuperPOD
 * B200 Reference Architecture, table "Larger DGX SuperPOD component counts": 128 nodes -> 32 leaf,
 * 16 spine; 512 nodes -> 128 leaf, 128 spine, 64 core; 2,048 nodes -> 512, 512, 256); a test checks it.
 *
 * Routing (deterministic, no tables). h = fmix32(src*0x9E3779B1 ^ fmix32(dst ^ fmix32(flow_hash ^
 * 0x7F4A7C15))), fmix32 being MurmurHash3's 32-bit finalizer. Same GPU: empty route. Same NVLink
 * domain: GPU up, GPU down. Otherwise NIC k = fmix32(h + 0x1B56C4E9) mod N at both ends (plain fat
 * tree: that value mod the number of NIC pairs whose lowest common tier is lowest picks among those
 * pairs, in order), then up only as far as the lowest common tier: same leaf: NIC up, NIC down; same pod: NIC up, leaf up j, leaf
 * down j, NIC down with j = fmix32(h + 0x68E31DA4) mod u1 (the spine is j mod S, so flows spread
 * evenly over the spines); else also spine up i and spine down i through core (plane j mod S,
 * i mod C) with i = fmix32(h + 0xB5297A4D) mod u2.
 *
 * Adaptive routing (fabric routing = adaptive). Switches pick the up-port per packet by load among
 * all ports with minimal hops to the destination (InfiniBand AR "TREE" groups: NVIDIA InfiniBand
 * Cluster Bring-up Procedure, "Adaptive Routing"; Spectrum-X adaptive routing on Ethernet). In the
 * fluid model that is perfect spreading, so the links of one tier are pooled: each leaf has one up
 * trunk and one down trunk of u1 links (capacity u1 * b_link), and each pod (3 tiers) one trunk to
 * and one from the core of S * u2 links. A route is then NIC up, leaf trunk up, [pod trunk up, pod
 * trunk down], leaf trunk down, NIC down, with no hash: two flows contend only where their real
 * traffic would, at the NICs and at a tier's total capacity (oversubscription). Static hashing
 * instead lets two large flows land on one up-link and halve each other, which an AR fabric avoids.
 * A trunk at least as wide as the NICs below it can never limit a flow (everything it carries
 * entered through those NICs), so a non-blocking tier's trunks are left off the routes: the
 * solver then sees only the links that can bind, and sim_topology_path_latency_ns adds the switch
 * hops the route no longer lists. Trunk links still exist (numbered, with their capacity).
 *
 * Planes (fabric planes = P, adaptive routing only). A multi-plane fabric splits each NIC port into
 * P lanes on P independent copies of the fabric (an 800G NIC as 4 x 200G, Spectrum-X multiplane;
 * ConnectX-8's planes), so a switch of radix k runs its ports at 1/P of the rates and reaches as far
 * as one plane of radix k does. The NIC sprays each flow's packets over all planes: in the fluid model
 * the planes are pooled (one NIC link at the full rate, each trunk the sum of its P copies), which
 * is exactly what one plane at full rate gives; planes change the switch and cable counts (times P)
 * and the port speed the radix refers to, not a simulated rate. Static routing pins a flow to one
 * plane and is refused with planes > 1.
 *
 * Latency: NVLink up carries nvlink_latency_ns (down 0); NIC up carries nic_latency_ns; every link
 * leaving a switch carries hop_latency_ns. A path's latency is thus the NVLink latency, or the NIC
 * latency plus hop_latency_ns per switch crossed.
 *
 * Bisection (scale-out, one direction): half the smallest aggregate capacity of the NIC links, the
 * leaf up links and (3 tiers) the spine up links; a non-blocking tree gives half the NIC capacity. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "sim/net/topology.h"

G_DEFINE_QUARK (sim-topology-error-quark, sim_topology_error)

/* Link ids stay below 2^31 (guint32 in routes, int in the flow net). */
#define MAX_LINKS ((gint64) G_MAXINT32)

struct SimTopology {
  SimClusterSpec cluster;
  SimFabricSpec fabric;
  int gpus, nodes, domain_gpus, domains, nics_per_gpu, nics;
  int tiers;                 /* 0: no scale-out fabric */
  int rails, rail_len;       /* R, P_r */
  int leaf_down, leaf_up;    /* d1, u1 */
  int leaves_per_rail, leaves;
  int pods_per_rail, pods, pod_leaves;
  int leaf_spine_par, spines_per_pod, spines;  /* m1, S */
  int spine_down, spine_up;  /* d2, u2 (3 tiers) */
  int spine_core_par, cores_per_plane, cores;  /* m2, C */
  gboolean leaf_trunk, pod_trunk;  /* adaptive routing: the trunks that can bind (oversubscribed) */
  double link_bw;
  double mesh_link_bw;       /* mesh domains: per GPU pair and direction */
  double bisection_bytes_per_s;
  guint32 base[SIM_LINK_KIND_COUNT + 1];
  SimLink proto[SIM_LINK_KIND_COUNT];
};

static inline guint32
fmix32 (guint32 h)
{
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

static gboolean
invalid (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
invalid (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, SIM_TOPOLOGY_ERROR, SIM_TOPOLOGY_ERROR_INVALID, msg);
  g_free (msg);
  return FALSE;
}

static gboolean
rate_ok (double x)
{
  return isfinite (x) && x > 0;
}

/* Largest down-port count d with d + ceil(d*ratio/o) <= radix; 0 if none. */
static int
split_ports (int radix, double ratio, double o, int *up)
{
  for (int d = radix - 1; d >= 1; d--)
    {
      /* The tiny slack keeps exact ratios (48/3) from rounding up through floating error. */
      double need = ceil (d * ratio / o * (1.0 - 1e-12));
      if (need < 1)
        need = 1;
      if (d + need <= radix)
        {
          *up = (int) need;
          return d;
        }
    }
  *up = 0;
  return 0;
}

static int
largest_divisor_within (int n, int limit)
{
  for (int m = MIN (n, limit); m >= 1; m--)
    if (n % m == 0)
      return m;
  return 0;
}

static gboolean
check_cluster (const SimClusterSpec *c, GError **error)
{
  if (c->gpus <= 0)
    return invalid (error, "cluster has %d GPUs: set the GPU count to a positive number", c->gpus);
  if (c->gpus_per_node <= 0)
    return invalid (error, "cluster has %d GPUs per node: set gpus_per_node to a positive number "
                    "(8 for HGX/DGX, 4 for a GB200/GB300 tray)", c->gpus_per_node);
  if (c->gpus % c->gpus_per_node != 0)
    return invalid (error, "cluster GPUs (%d) are not divisible by gpus_per_node (%d): use a whole "
                    "number of nodes", c->gpus, c->gpus_per_node);
  if (c->nvlink_domain <= 0)
    return invalid (error, "NVLink domain of %d GPUs: set nvlink_domain to 8 (NVSwitch node) or 72 "
                    "(NVL72 rack)", c->nvlink_domain);
  if (c->gpus_per_domain_used < 0 || c->gpus_per_domain_used > c->nvlink_domain)
    return invalid (error, "gpus_per_domain_used = %d is outside 0..nvlink_domain (%d): use 0 for "
                    "all GPUs of the domain", c->gpus_per_domain_used, c->nvlink_domain);
  int used = c->gpus_per_domain_used ? c->gpus_per_domain_used : c->nvlink_domain;
  if (used % c->gpus_per_node != 0)
    return invalid (error, "%d GPUs used per NVLink domain are not a whole number of %d-GPU nodes: "
                    "make gpus_per_domain_used a multiple of gpus_per_node", used, c->gpus_per_node);
  if (used > 1 && !rate_ok (c->nvlink_bw_bytes_per_s))
    return invalid (error, "NVLink bandwidth %g B/s is not positive: set the GPU's NVLink bandwidth",
                    c->nvlink_bw_bytes_per_s);
  if (c->mesh && (c->nvlink_domain < 2 || c->nvlink_domain != c->gpus_per_node))
    return invalid (error, "a mesh scale-up domain links the GPUs of one node directly: set nvlink_domain "
                    "to gpus_per_node (%d, got %d) and at least 2", c->gpus_per_node, c->nvlink_domain);
  if (c->mesh && c->nvls)
    return invalid (error, "a mesh scale-up domain has no switch to reduce in: set nvls = false");
  if (c->nvlink_latency_ns < 0 || c->nic_latency_ns < 0)
    return invalid (error, "negative NVLink or NIC latency: latencies must be >= 0");
  if (c->nics_per_gpu < 0)
    return invalid (error, "%d NICs per GPU: set nics_per_gpu to 0 or more", c->nics_per_gpu);
  int domains = (c->gpus + used - 1) / used;
  if (c->nics_per_gpu == 0 && domains > 1)
    return invalid (error, "%d GPUs span %d NVLink domains but there are no NICs: set nics_per_gpu "
                    "to at least 1", c->gpus, domains);
  if (c->nics_per_gpu > 0 && !rate_ok (c->nic_bw_bytes_per_s))
    return invalid (error, "NIC bandwidth %g B/s is not positive: set the NIC line rate",
                    c->nic_bw_bytes_per_s);
  if ((gint64) c->gpus * MAX (c->nics_per_gpu, 1) > MAX_LINKS / 16)
    return invalid (error, "%d GPUs x %d NICs is beyond what link ids can number: simulate fewer GPUs",
                    c->gpus, c->nics_per_gpu);
  return TRUE;
}

static gboolean
check_fabric (const SimFabricSpec *f, GError **error)
{
  static const char *const tier_name[3] = { "leaf", "spine", "core" };
  if (f->kind != SIM_FABRIC_RAIL_OPTIMIZED && f->kind != SIM_FABRIC_FAT_TREE)
    return invalid (error, "unknown fabric kind %d: use rail-optimized or fat-tree", (int) f->kind);
  if (f->tiers != 2 && f->tiers != 3)
    return invalid (error, "fabric has %d tiers: use 2 (leaf-spine) or 3 (leaf-spine-core)", f->tiers);
  if (f->radix < 2)
    return invalid (error, "switch radix %d is too small: a switch needs at least 2 ports", f->radix);
  for (int t = 0; t < 3; t++)
    {
      double o = f->oversubscription[t];
      if (t < f->tiers - 1)
        {
          if (!rate_ok (o))
            return invalid (error, "%s oversubscription %g is not positive: use 1 for non-blocking, "
                            "e.g. 2 for 2:1", tier_name[t], o);
        }
      else if (o != 0 && o != 1)
        return invalid (error, "%s oversubscription is %g but the %s tier has no up links in a "
                        "%d-tier fabric: set it to 1", tier_name[t], o, tier_name[t], f->tiers);
    }
  if (!isfinite (f->link_bw_bytes_per_s) || f->link_bw_bytes_per_s < 0)
    return invalid (error, "switch link bandwidth %g B/s is invalid: use 0 for the NIC rate or a "
                    "positive rate", f->link_bw_bytes_per_s);
  if (f->hop_latency_ns < 0)
    return invalid (error, "negative switch hop latency: latencies must be >= 0");
  if (f->planes < 0)
    return invalid (error, "[fabric] planes = %d is negative: use 1 for one fabric", f->planes);
  if (f->planes > 1 && f->routing != SIM_ROUTING_ADAPTIVE)
    return invalid (error, "[fabric] planes = %d needs routing = adaptive (a NIC sprays its packets over "
                    "the planes); with static routing set planes = 1", f->planes);
  return TRUE;
}

/* Builds the switch tiers; t already holds the cluster counts. */
static gboolean
build_fabric (SimTopology *t, GError **error)
{
  const SimFabricSpec *f = &t->fabric;
  int k = f->radix;
  t->tiers = f->tiers;
  t->link_bw = f->link_bw_bytes_per_s > 0 ? f->link_bw_bytes_per_s : t->cluster.nic_bw_bytes_per_s;
  if (f->kind == SIM_FABRIC_RAIL_OPTIMIZED)
    {
      t->rails = t->cluster.gpus_per_node * t->nics_per_gpu;
      t->rail_len = t->nodes;
    }
  else
    {
      t->rails = 1;
      t->rail_len = t->nics;
    }
  double ratio = t->cluster.nic_bw_bytes_per_s / t->link_bw;
  t->leaf_down = split_ports (k, ratio, f->oversubscription[0], &t->leaf_up);
  if (t->leaf_down < 1)
    return invalid (error, "a %d-port leaf cannot give %g:1 oversubscription with NIC/switch link "
                    "rates %g:1: use a larger radix or a higher oversubscription", k,
                    f->oversubscription[0], ratio);
  t->leaves_per_rail = (t->rail_len + t->leaf_down - 1) / t->leaf_down;
  t->leaves = t->rails * t->leaves_per_rail;
  if (f->tiers == 2)
    {
      if (t->leaves > k)
        return invalid (error, "a 2-tier fabric of %d-port switches connects at most %d leaves "
                        "(%d NIC ports each), but %d NICs need %d leaves: use 3 tiers or a larger "
                        "radix", k, k, t->leaf_down, t->nics, t->leaves);
      t->pods_per_rail = 0;
      t->pods = 1;
      t->pod_leaves = t->leaves;
      t->leaf_spine_par = largest_divisor_within (t->leaf_up, k / t->leaves);
      t->spines_per_pod = t->leaf_up / t->leaf_spine_par;
      t->spines = t->spines_per_pod;
      t->spine_down = t->leaves * t->leaf_spine_par;
      t->spine_up = 0;
      t->cores = 0;
      t->cores_per_plane = 0;
      t->spine_core_par = 0;
    }
  else
    {
      t->spine_down = split_ports (k, 1.0, f->oversubscription[1], &t->spine_up);
      if (t->spine_down < 1)
        return invalid (error, "a %d-port spine cannot give %g:1 oversubscription: use a larger "
                        "radix", k, f->oversubscription[1]);
      t->pods_per_rail = (t->leaves_per_rail + t->spine_down - 1) / t->spine_down;
      t->pods = t->rails * t->pods_per_rail;
      if (t->pods > k)
        return invalid (error, "a 3-tier fabric of %d-port switches joins at most %d spine-leaf "
                        "groups of %d leaves, but %d NICs on %d rail(s) need %d groups: use a larger "
                        "radix or fewer GPUs", k, k, t->spine_down, t->nics, t->rails, t->pods);
      t->pod_leaves = (t->leaves_per_rail + t->pods_per_rail - 1) / t->pods_per_rail;
      t->leaf_spine_par = largest_divisor_within (t->leaf_up, t->spine_down / t->pod_leaves);
      t->spines_per_pod = t->leaf_up / t->leaf_spine_par;
      t->spines = t->pods * t->spines_per_pod;
      /* Up ports are cabled for the down ports actually used, not for the radix. */
      int used_down = t->pod_leaves * t->leaf_spine_par;
      t->spine_up = MAX (1, (int) ceil (used_down / f->oversubscription[1] * (1.0 - 1e-12)));
      t->spine_core_par = largest_divisor_within (t->spine_up, k / t->pods);
      t->cores_per_plane = t->spine_up / t->spine_core_par;
      t->cores = t->spines_per_pod * t->cores_per_plane;
    }
  double cap = t->nics * t->cluster.nic_bw_bytes_per_s;
  cap = MIN (cap, (double) t->leaves * t->leaf_up * t->link_bw);
  if (f->tiers == 3)
    cap = MIN (cap, (double) t->spines * t->spine_up * t->link_bw);
  t->bisection_bytes_per_s = cap / 2;
  return TRUE;
}

SimTopology *
sim_topology_new (const SimClusterSpec *cluster, const SimFabricSpec *fabric, GError **error)
{
  g_return_val_if_fail (cluster != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (!check_cluster (cluster, error))
    return NULL;
  gboolean scale_out = cluster->nics_per_gpu > 0;
  if (scale_out && fabric == NULL)
    {
      invalid (error, "the cluster has NICs but no fabric was given: describe the [fabric]");
      return NULL;
    }
  if (scale_out && !check_fabric (fabric, error))
    return NULL;

  g_autofree SimTopology *t = g_new0 (SimTopology, 1);
  t->cluster = *cluster;
  if (fabric)
    t->fabric = *fabric;
  t->gpus = cluster->gpus;
  t->nodes = cluster->gpus / cluster->gpus_per_node;
  t->domain_gpus = cluster->gpus_per_domain_used ? cluster->gpus_per_domain_used : cluster->nvlink_domain;
  t->cluster.gpus_per_domain_used = t->domain_gpus;
  t->domains = (t->gpus + t->domain_gpus - 1) / t->domain_gpus;
  t->nics_per_gpu = cluster->nics_per_gpu;
  t->nics = t->gpus * t->nics_per_gpu;
  if (scale_out && !build_fabric (t, error))
    return NULL;

  gint64 count[SIM_LINK_KIND_COUNT] = { 0 };
  if (cluster->mesh)
    count[SIM_LINK_MESH] = (gint64) t->domains * t->domain_gpus * (t->domain_gpus - 1);
  else
    count[SIM_LINK_NVLINK_UP] = count[SIM_LINK_NVLINK_DOWN] = t->gpus;
  count[SIM_LINK_NIC_UP] = count[SIM_LINK_NIC_DOWN] = t->nics;
  gboolean trunks = scale_out && t->fabric.routing == SIM_ROUTING_ADAPTIVE;
  if (scale_out)
    count[SIM_LINK_LEAF_UP] = count[SIM_LINK_LEAF_DOWN] = trunks ? t->leaves : (gint64) t->leaves * t->leaf_up;
  if (t->tiers == 3)
    count[SIM_LINK_SPINE_UP] = count[SIM_LINK_SPINE_DOWN] = trunks ? t->pods : (gint64) t->spines * t->spine_up;
  gint64 total = 0;
  for (int i = 0; i < SIM_LINK_KIND_COUNT; i++)
    {
      t->base[i] = (guint32) total;
      total += count[i];
      if (total > MAX_LINKS)
        {
          invalid (error, "the topology would have more than %" G_GINT64_FORMAT " links: simulate "
                   "fewer GPUs", MAX_LINKS);
          return NULL;
        }
    }
  t->base[SIM_LINK_KIND_COUNT] = (guint32) total;

  for (int i = 0; i < SIM_LINK_KIND_COUNT; i++)
    {
      t->proto[i].kind = (SimLinkKind) i;
      t->proto[i].latency_ns = t->fabric.hop_latency_ns; /* links leaving a switch */
      t->proto[i].bandwidth_bytes_per_s = t->link_bw;
    }
  t->proto[SIM_LINK_NVLINK_UP].bandwidth_bytes_per_s = cluster->nvlink_bw_bytes_per_s;
  t->proto[SIM_LINK_NVLINK_DOWN].bandwidth_bytes_per_s = cluster->nvlink_bw_bytes_per_s;
  t->proto[SIM_LINK_NVLINK_UP].latency_ns = cluster->nvlink_latency_ns;
  t->proto[SIM_LINK_NVLINK_DOWN].latency_ns = 0;
  if (cluster->mesh)
    t->mesh_link_bw = cluster->nvlink_bw_bytes_per_s / (cluster->nvlink_domain - 1);
  t->proto[SIM_LINK_MESH].bandwidth_bytes_per_s = t->mesh_link_bw;
  t->proto[SIM_LINK_MESH].latency_ns = cluster->nvlink_latency_ns;
  t->proto[SIM_LINK_NIC_UP].bandwidth_bytes_per_s = cluster->nic_bw_bytes_per_s;
  t->proto[SIM_LINK_NIC_DOWN].bandwidth_bytes_per_s = cluster->nic_bw_bytes_per_s;
  t->proto[SIM_LINK_NIC_UP].latency_ns = cluster->nic_latency_ns;
  if (trunks)
    {
      double leaf_trunk = t->leaf_up * t->link_bw, pod_trunk = (double) t->spines_per_pod * t->spine_up * t->link_bw;
      t->proto[SIM_LINK_LEAF_UP].bandwidth_bytes_per_s = t->proto[SIM_LINK_LEAF_DOWN].bandwidth_bytes_per_s = leaf_trunk;
      t->proto[SIM_LINK_SPINE_UP].bandwidth_bytes_per_s = t->proto[SIM_LINK_SPINE_DOWN].bandwidth_bytes_per_s = pod_trunk;
      /* Can a trunk bind? Only if narrower than what can enter it: the NICs of its leaf, or (pod)
       * the leaf trunks of its pod when those are not narrower still. */
      double nics_below = (double) t->leaf_down * cluster->nic_bw_bytes_per_s;
      t->leaf_trunk = leaf_trunk < nics_below * (1.0 - 1e-12);
      double into_pod = (double) t->pod_leaves * MIN (leaf_trunk, nics_below);
      t->pod_trunk = t->tiers == 3 && pod_trunk < into_pod * (1.0 - 1e-12);
    }
  return g_steal_pointer (&t);
}

void
sim_topology_free (SimTopology *topo)
{
  g_free (topo);
}

int
sim_topology_n_links (const SimTopology *topo)
{
  g_return_val_if_fail (topo != NULL, 0);
  return (int) topo->base[SIM_LINK_KIND_COUNT];
}

static SimLinkKind
kind_of (const SimTopology *t, guint32 id)
{
  int k = 0;
  while (k + 1 < SIM_LINK_KIND_COUNT && id >= t->base[k + 1])
    k++;
  return (SimLinkKind) k;
}

const SimLink *
sim_topology_link (const SimTopology *topo, int link_id)
{
  g_return_val_if_fail (topo != NULL, NULL);
  g_return_val_if_fail (link_id >= 0 && (guint32) link_id < topo->base[SIM_LINK_KIND_COUNT], NULL);
  return &topo->proto[kind_of (topo, (guint32) link_id)];
}

int
sim_topology_domain_of (const SimTopology *topo, int gpu)
{
  g_return_val_if_fail (topo != NULL && gpu >= 0 && gpu < topo->gpus, -1);
  return gpu / topo->domain_gpus;
}

int
sim_topology_node_of (const SimTopology *topo, int gpu)
{
  g_return_val_if_fail (topo != NULL && gpu >= 0 && gpu < topo->gpus, -1);
  return gpu / topo->cluster.gpus_per_node;
}

int
sim_topology_n_gpus (const SimTopology *topo)
{
  g_return_val_if_fail (topo != NULL, 0);
  return topo->gpus;
}

const SimClusterSpec *
sim_topology_cluster (const SimTopology *topo)
{
  g_return_val_if_fail (topo != NULL, NULL);
  return &topo->cluster;
}

const SimFabricSpec *
sim_topology_fabric (const SimTopology *topo)
{
  g_return_val_if_fail (topo != NULL, NULL);
  return &topo->fabric;
}

/* Rail and position of NIC e (see the top comment). */
static int
nic_leaf (const SimTopology *t, int e)
{
  int rail, pos;
  if (t->fabric.kind == SIM_FABRIC_RAIL_OPTIMIZED)
    {
      int g = e / t->nics_per_gpu;
      rail = (g % t->cluster.gpus_per_node) * t->nics_per_gpu + e % t->nics_per_gpu;
      pos = g / t->cluster.gpus_per_node;
    }
  else
    {
      rail = 0;
      pos = e;
    }
  return rail * t->leaves_per_rail + pos / t->leaf_down;
}

static int
leaf_pod (const SimTopology *t, int leaf)
{
  if (t->tiers == 2)
    return 0;
  int rail = leaf / t->leaves_per_rail, within = leaf % t->leaves_per_rail;
  return rail * t->pods_per_rail + within / t->pod_leaves;
}

int
sim_topology_rail_of (const SimTopology *topo, int gpu)
{
  g_return_val_if_fail (topo != NULL && gpu >= 0 && gpu < topo->gpus, -1);
  if (topo->tiers == 0 || topo->fabric.kind != SIM_FABRIC_RAIL_OPTIMIZED)
    return 0;
  return (gpu % topo->cluster.gpus_per_node) * topo->nics_per_gpu;
}

/* A route inside one scale-up domain: up and down through the switch, or the mesh's direct link. */
static int
scaleup_route (const SimTopology *t, int src, int dst, guint32 *links)
{
  if (t->cluster.mesh)
    {
      int u = t->domain_gpus, d = src / u, a = src % u, b = dst % u;
      links[0] = t->base[SIM_LINK_MESH] + (guint32) ((gint64) d * u * (u - 1) + a * (u - 1) + (b < a ? b : b - 1));
      return 1;
    }
  links[0] = t->base[SIM_LINK_NVLINK_UP] + (guint32) src;
  links[1] = t->base[SIM_LINK_NVLINK_DOWN] + (guint32) dst;
  return 2;
}

int
sim_topology_route (const SimTopology *topo, int src_gpu, int dst_gpu, guint32 flow_hash,
                    guint32 links[SIM_TOPOLOGY_MAX_HOPS])
{
  const SimTopology *t = topo;
  g_return_val_if_fail (t != NULL && links != NULL, 0);
  g_return_val_if_fail (src_gpu >= 0 && src_gpu < t->gpus && dst_gpu >= 0 && dst_gpu < t->gpus, 0);
  if (src_gpu == dst_gpu)
    return 0;
  if (src_gpu / t->domain_gpus == dst_gpu / t->domain_gpus)
    return scaleup_route (t, src_gpu, dst_gpu, links);
  guint32 h = fmix32 ((guint32) src_gpu * 0x9E3779B1u
                      ^ fmix32 ((guint32) dst_gpu ^ fmix32 (flow_hash ^ 0x7F4A7C15u)));
  int npg = t->nics_per_gpu;
  guint32 hk = fmix32 (h + 0x1B56C4E9u);
  int es = src_gpu * npg, ed = dst_gpu * npg;
  if (npg > 1 && t->fabric.kind == SIM_FABRIC_RAIL_OPTIMIZED)
    {
      /* Every NIC index gives the same tiers (rail = local index, k), so hash it. */
      es += (int) (hk % (guint32) npg);
      ed += (int) (hk % (guint32) npg);
    }
  else if (npg > 1)
    {
      /* Plain fat tree: a GPU's NICs may straddle a leaf or pod boundary; take the NIC pairs whose
       * lowest common tier is lowest, the hash picking among them. */
      int best = 3, ties = 0;
      for (int pass = 0; pass < 2; pass++)
        {
          int pick = pass ? (int) (hk % (guint32) ties) : -1, seen = 0;
          for (int ks = 0; ks < npg; ks++)
            for (int kd = 0; kd < npg; kd++)
              {
                int a = nic_leaf (t, src_gpu * npg + ks), b = nic_leaf (t, dst_gpu * npg + kd);
                int level = a == b ? 0 : leaf_pod (t, a) == leaf_pod (t, b) ? 1 : 2;
                if (!pass && level < best)
                  best = level, ties = 0;
                if (!pass && level == best)
                  ties++;
                if (pass && level == best && seen++ == pick)
                  {
                    es = src_gpu * npg + ks;
                    ed = dst_gpu * npg + kd;
                  }
              }
        }
    }
  int n = 0;
  links[n++] = t->base[SIM_LINK_NIC_UP] + (guint32) es;
  int ls = nic_leaf (t, es), ld = nic_leaf (t, ed);
  if (ls != ld && t->fabric.routing == SIM_ROUTING_ADAPTIVE)
    {
      /* Only the trunks that can bind (see the top comment). */
      if (t->leaf_trunk)
        links[n++] = t->base[SIM_LINK_LEAF_UP] + (guint32) ls;
      int ps = leaf_pod (t, ls), pd = leaf_pod (t, ld);
      if (ps != pd && t->pod_trunk)
        {
          links[n++] = t->base[SIM_LINK_SPINE_UP] + (guint32) ps;
          links[n++] = t->base[SIM_LINK_SPINE_DOWN] + (guint32) pd;
        }
      if (t->leaf_trunk)
        links[n++] = t->base[SIM_LINK_LEAF_DOWN] + (guint32) ld;
    }
  else if (ls != ld)
    {
      guint32 j = fmix32 (h + 0x68E31DA4u) % (guint32) t->leaf_up;
      links[n++] = t->base[SIM_LINK_LEAF_UP] + (guint32) ls * (guint32) t->leaf_up + j;
      int ps = leaf_pod (t, ls), pd = leaf_pod (t, ld);
      if (ps != pd)
        {
          guint32 s = j % (guint32) t->spines_per_pod;
          guint32 i = fmix32 (h + 0xB5297A4Du) % (guint32) t->spine_up;
          guint32 u2 = (guint32) t->spine_up;
          links[n++] = t->base[SIM_LINK_SPINE_UP] + ((guint32) ps * t->spines_per_pod + s) * u2 + i;
          links[n++] = t->base[SIM_LINK_SPINE_DOWN] + ((guint32) pd * t->spines_per_pod + s) * u2 + i;
        }
      links[n++] = t->base[SIM_LINK_LEAF_DOWN] + (guint32) ld * (guint32) t->leaf_up + j;
    }
  links[n++] = t->base[SIM_LINK_NIC_DOWN] + (guint32) ed;
  return n;
}

/* PXN ("PCI x NVLink", NCCL >= 2.12): a GPU hands data over NVLink to a peer whose NIC sits on the
 * destination's rail, so inter-node traffic stays on one rail (NVIDIA technical blog "Doubling
 * all2all Performance with NVIDIA Collective Communication Library 2.12"). */
int
sim_topology_route_pxn (const SimTopology *topo, int src_gpu, int dst_gpu, guint32 flow_hash,
                        guint32 links[SIM_TOPOLOGY_MAX_HOPS])
{
  const SimTopology *t = topo;
  g_return_val_if_fail (t != NULL && links != NULL, 0);
  g_return_val_if_fail (src_gpu >= 0 && src_gpu < t->gpus && dst_gpu >= 0 && dst_gpu < t->gpus, 0);
  int p = t->cluster.gpus_per_node;
  int mid = (src_gpu / p) * p + dst_gpu % p;
  if (mid == src_gpu || src_gpu / t->domain_gpus == dst_gpu / t->domain_gpus)
    return sim_topology_route (t, src_gpu, dst_gpu, flow_hash, links);
  guint32 rest[SIM_TOPOLOGY_MAX_HOPS];
  int n = sim_topology_route (t, mid, dst_gpu, flow_hash, rest);
  int k = scaleup_route (t, src_gpu, mid, links);
  memcpy (links + k, rest, (gsize) n * sizeof *rest);  /* n <= 6, so at most 8 links */
  return k + n;
}

int
sim_topology_nic_link (const SimTopology *topo, int gpu, int k, gboolean up)
{
  g_return_val_if_fail (topo != NULL && gpu >= 0 && gpu < topo->gpus, -1);
  if (k < 0 || k >= topo->nics_per_gpu)
    return -1;
  return (int) topo->base[up ? SIM_LINK_NIC_UP : SIM_LINK_NIC_DOWN] + gpu * topo->nics_per_gpu + k;
}

void
sim_topology_link_ends (const SimTopology *topo, int link_id, SimNodeRef *from, SimNodeRef *to)
{
  const SimTopology *t = topo;
  g_return_if_fail (t != NULL && from != NULL && to != NULL);
  g_return_if_fail (link_id >= 0 && (guint32) link_id < t->base[SIM_LINK_KIND_COUNT]);
  SimLinkKind kind = kind_of (t, (guint32) link_id);
  int x = (int) ((guint32) link_id - t->base[kind]);
  SimNodeRef lo = { 0 }, hi = { 0 };  /* lower and upper end; up links go lo -> hi */
  switch (kind)
    {
    case SIM_LINK_NVLINK_UP:
    case SIM_LINK_NVLINK_DOWN:
      lo = (SimNodeRef) { SIM_NODE_GPU, x };
      hi = (SimNodeRef) { SIM_NODE_NVSWITCH, x / t->domain_gpus };
      break;
    case SIM_LINK_NIC_UP:
    case SIM_LINK_NIC_DOWN:
      lo = (SimNodeRef) { SIM_NODE_NIC, x };
      hi = (SimNodeRef) { SIM_NODE_LEAF, nic_leaf (t, x) };
      break;
    case SIM_LINK_LEAF_UP:
    case SIM_LINK_LEAF_DOWN:
      if (t->fabric.routing == SIM_ROUTING_ADAPTIVE)
        {
          /* A leaf's trunk: its far end is named by the pod's first spine. */
          lo = (SimNodeRef) { SIM_NODE_LEAF, x };
          hi = (SimNodeRef) { SIM_NODE_SPINE, leaf_pod (t, x) * t->spines_per_pod };
        }
      else
      {
        int leaf = x / t->leaf_up, j = x % t->leaf_up;
        lo = (SimNodeRef) { SIM_NODE_LEAF, leaf };
        hi = (SimNodeRef) { SIM_NODE_SPINE, leaf_pod (t, leaf) * t->spines_per_pod + j % t->spines_per_pod };
      }
      break;
    case SIM_LINK_SPINE_UP:
    case SIM_LINK_SPINE_DOWN:
      if (t->fabric.routing == SIM_ROUTING_ADAPTIVE)
        {
          /* A pod's trunk to the core: named by the pod's first spine and the first core. */
          lo = (SimNodeRef) { SIM_NODE_SPINE, x * t->spines_per_pod };
          hi = (SimNodeRef) { SIM_NODE_CORE, 0 };
        }
      else
      {
        int spine = x / t->spine_up, i = x % t->spine_up;
        lo = (SimNodeRef) { SIM_NODE_SPINE, spine };
        hi = (SimNodeRef) { SIM_NODE_CORE,
                            (spine % t->spines_per_pod) * t->cores_per_plane + i % t->cores_per_plane };
      }
      break;
    case SIM_LINK_MESH:
      {
        int u = t->domain_gpus, per = u * (u - 1), d = x / per, a = (x % per) / (u - 1), b = (x % per) % (u - 1);
        *from = (SimNodeRef) { SIM_NODE_GPU, d * u + a };
        *to = (SimNodeRef) { SIM_NODE_GPU, d * u + (b < a ? b : b + 1) };
        return;
      }
    case SIM_LINK_KIND_COUNT:
    default:
      g_assert_not_reached ();
    }
  gboolean up = kind == SIM_LINK_NVLINK_UP || kind == SIM_LINK_NIC_UP || kind == SIM_LINK_LEAF_UP
                || kind == SIM_LINK_SPINE_UP;
  *from = up ? lo : hi;
  *to = up ? hi : lo;
}

void
sim_topology_fill_capacities (const SimTopology *topo, double *capacities)
{
  g_return_if_fail (topo != NULL && capacities != NULL);
  for (int k = 0; k < SIM_LINK_KIND_COUNT; k++)
    for (guint32 i = topo->base[k]; i < topo->base[k + 1]; i++)
      capacities[i] = topo->proto[k].bandwidth_bytes_per_s;
}

gint64
sim_topology_path_latency_ns (const SimTopology *topo, const guint32 *links, int n_links)
{
  g_return_val_if_fail (topo != NULL && (links != NULL || n_links == 0), 0);
  gint64 sum = 0;
  for (int i = 0; i < n_links; i++)
    {
      sum += sim_topology_link (topo, (int) links[i])->latency_ns;
      if (topo->fabric.routing != SIM_ROUTING_ADAPTIVE || i + 1 >= n_links
          || kind_of (topo, links[i]) != SIM_LINK_NIC_UP)
        continue;
      /* Adaptive routing leaves non-binding trunks off a route: add the switch hops they stand for
       * (leaf -> spine -> leaf, or through the core: four), less those whose links are listed. */
      int es = (int) (links[i] - topo->base[SIM_LINK_NIC_UP]);
      int j = i + 1;
      while (j < n_links && kind_of (topo, links[j]) != SIM_LINK_NIC_DOWN)
        j++;
      if (j == n_links)
        continue;
      int ed = (int) (links[j] - topo->base[SIM_LINK_NIC_DOWN]);
      int ls = nic_leaf (topo, es), ld = nic_leaf (topo, ed);
      int hops = ls == ld ? 0 : leaf_pod (topo, ls) == leaf_pod (topo, ld) ? 2 : 4;
      sum += (gint64) (hops - (j - i - 1)) * topo->fabric.hop_latency_ns;
    }
  return sum;
}

gsize
sim_topology_memory_bytes (const SimTopology *topo)
{
  g_return_val_if_fail (topo != NULL, 0);
  return sizeof *topo;
}

void
sim_topology_summarize (const SimTopology *topo, SimTopologySummary *out)
{
  const SimTopology *t = topo;
  g_return_if_fail (t != NULL && out != NULL);
  memset (out, 0, sizeof *out);
  out->gpus = t->gpus;
  out->nodes = t->nodes;
  out->domains = t->domains;
  out->nvswitch_domains = t->cluster.mesh ? 0 : t->domains;
  out->nics = t->nics;
  int planes = MAX (t->fabric.planes, 1);
  out->planes = planes;
  out->switches[0] = t->leaves * planes;
  out->switches[1] = t->spines * planes;
  out->switches[2] = t->cores * planes;
  out->links = sim_topology_n_links (t);
  out->bisection_bytes_per_s = t->bisection_bytes_per_s;
  out->tiers = t->tiers;
  out->rails = t->rails;
  out->pods = t->tiers ? t->pods : 0;
  if (t->tiers)
    {
      out->ports_down[0] = t->leaf_down;
      out->ports_up[0] = t->leaf_up;
      out->ports_down[1] = t->tiers == 2 ? t->leaves * t->leaf_spine_par : t->pod_leaves * t->leaf_spine_par;
      out->ports_up[1] = t->tiers == 3 ? t->spine_up : 0;
      out->ports_down[2] = t->tiers == 3 ? t->pods * t->spine_core_par : 0;
    }
  for (int k = 0; k < SIM_LINK_KIND_COUNT; k++)
    out->links_by_kind[k] = (int) (t->base[k + 1] - t->base[k]);
  if (t->tiers && t->fabric.routing == SIM_ROUTING_ADAPTIVE)
    {
      /* Cables, not trunks: what fails and what is bought does not change with the routing. */
      out->links_by_kind[SIM_LINK_LEAF_UP] = out->links_by_kind[SIM_LINK_LEAF_DOWN] = t->leaves * t->leaf_up * planes;
      out->links_by_kind[SIM_LINK_SPINE_UP] = out->links_by_kind[SIM_LINK_SPINE_DOWN] =
        t->tiers == 3 ? t->spines * t->spine_up * planes : 0;
      out->links = 0;
      for (int k = 0; k < SIM_LINK_KIND_COUNT; k++)
        out->links += out->links_by_kind[k];
    }
}

char *
sim_topology_describe (const SimTopology *topo)
{
  g_return_val_if_fail (topo != NULL, NULL);
  const SimTopology *t = topo;
  SimTopologySummary s;
  sim_topology_summarize (t, &s);
  GString *o = g_string_new (NULL);
  g_string_append_printf (o, "GPUs              %d in %d nodes of %d\n", s.gpus, s.nodes,
                          t->cluster.gpus_per_node);
  if (t->cluster.mesh)
    g_string_append_printf (o, "mesh domains      %d of %d GPUs, fully connected: %.1f GB/s per link per "
                            "direction, %d links and %.0f GB/s per GPU\n", s.domains, t->domain_gpus,
                            t->mesh_link_bw / 1e9, t->cluster.nvlink_domain - 1,
                            t->cluster.nvlink_bw_bytes_per_s / 1e9);
  else
    g_string_append_printf (o, "NVLink domains    %d of %d GPUs used (of %d), %.0f GB/s per GPU per "
                            "direction, NVLS %s\n", s.domains, t->domain_gpus, t->cluster.nvlink_domain,
                            t->cluster.nvlink_bw_bytes_per_s / 1e9, t->cluster.nvls ? "yes" : "no");
  if (t->tiers)
    {
      g_string_append_printf (o, "NICs              %d (%d per GPU, %.0f Gb/s each)\n", s.nics,
                              t->nics_per_gpu, t->cluster.nic_bw_bytes_per_s * 8 / 1e9);
      g_string_append_printf (o, "fabric            %s, %d tiers, %d-port switches, %d rail(s), "
                              "%d pod(s), %.0f Gb/s switch links%s\n",
                              t->fabric.kind == SIM_FABRIC_RAIL_OPTIMIZED ? "rail-optimized fat tree"
                                                                          : "fat tree",
                              t->tiers, t->fabric.radix, s.rails, s.pods, t->link_bw / s.planes * 8 / 1e9,
                              t->fabric.sharp ? ", in-switch reduction (SHARP)" : "");
      if (s.planes > 1)
        g_string_append_printf (o, "planes            %d, each NIC's %.0f Gb/s split %d ways (%.0f Gb/s ports); "
                                "switch counts below are of all planes\n", s.planes,
                                t->cluster.nic_bw_bytes_per_s * 8 / 1e9, s.planes,
                                t->cluster.nic_bw_bytes_per_s / s.planes * 8 / 1e9);
      static const char *const tier[3] = { "leaf", "spine", "core" };
      for (int i = 0; i < t->tiers; i++)
        g_string_append_printf (o, "  %-6s switches %6d   ports down %3d, up %3d\n", tier[i],
                                s.switches[i], s.ports_down[i], s.ports_up[i]);
    }
  else
    g_string_append (o, "fabric            none (one NVLink domain, no NICs)\n");
  g_string_append_printf (o, "directed links    %d\n", s.links);
  for (int k = 0; k < SIM_LINK_KIND_COUNT; k++)
    if (s.links_by_kind[k])
      g_string_append_printf (o, "  %-12s %8d\n", sim_link_kind_name ((SimLinkKind) k),
                              s.links_by_kind[k]);
  g_string_append_printf (o, "bisection         %.1f TB/s scale-out, one direction\n",
                          s.bisection_bytes_per_s / 1e12);
  g_string_append_printf (o, "topology memory   %" G_GSIZE_FORMAT " bytes\n", sim_topology_memory_bytes (t));
  return g_string_free (o, FALSE);
}
