/* The cluster as a graph of directed links: NVLink domains (8-GPU nodes or NVL72 racks) and a
 * scale-out fabric (rail-optimized or plain fat tree, 2 or 3 tiers, oversubscription per tier).
 *
 * Built from specs, never hand-written. Routing is deterministic: ECMP picks among equal-cost
 * up-links by a stated hash of (src, dst, flow_hash). */
#pragma once
#include <glib.h>
#include "sim/net/link.h"

typedef struct {
  int gpus;                    /* GPUs in the job */
  int gpus_per_node;           /* host or tray: 8 (HGX/DGX), 4 (GB200 tray) */
  int nvlink_domain;           /* GPUs one NVSwitch fabric can connect: 8, or 72 for NVL72 */
  int gpus_per_domain_used;    /* GPUs used per domain (MLPerf GB200: 64 of 72); 0 = nvlink_domain */
  double nvlink_bw_bytes_per_s;/* per GPU per direction (from the GPU profile) */
  /* The domain is a full mesh of direct GPU-GPU links (AMD Infinity Fabric), not a switch: each GPU
   * splits nvlink_bw_bytes_per_s evenly over nvlink_domain - 1 links, one to each peer. */
  gboolean mesh;
  gboolean nvls;
  gint64 nvlink_latency_ns;
  int nics_per_gpu;
  double nic_bw_bytes_per_s;   /* per NIC per direction (line rate) */
  gint64 nic_latency_ns;
} SimClusterSpec;

typedef enum { SIM_FABRIC_RAIL_OPTIMIZED, SIM_FABRIC_FAT_TREE } SimFabricKind;

/* static: each flow keeps one ECMP path (hash, or the collectives' balanced choice). adaptive: the
 * switches spread every flow over all minimal up-ports (InfiniBand AR with "TREE" groups, Spectrum-X
 * packet spraying), so each tier's up-links act as one trunk (see sim/net/topology.c). */
typedef enum { SIM_ROUTING_STATIC, SIM_ROUTING_ADAPTIVE } SimFabricRouting;

typedef struct {
  SimFabricKind kind;
  int tiers;                   /* 2 (leaf-spine) or 3 (leaf-spine-core) */
  int radix;                   /* switch ports */
  double oversubscription[3];  /* per tier (leaf, spine, core): down/up capacity; 1 = non-blocking */
  double link_bw_bytes_per_s;  /* switch-to-switch links; 0 = the NIC rate */
  gint64 hop_latency_ns;       /* per switch hop */
  SimFabricRouting routing;
  int planes;                  /* independent switch planes each NIC is split over; 0 or 1: one */
  gboolean sharp;              /* the switches reduce (InfiniBand SHARP): NCCL's CollNet all-reduce */
} SimFabricSpec;

typedef struct {
  int gpus, nodes, domains, nics;
  int switches[3];             /* per tier, every plane counted */
  int planes;                  /* switch planes (1: one fabric) */
  int nvswitch_domains;
  int links;                   /* directed links */
  double bisection_bytes_per_s;/* scale-out bisection bandwidth, one direction */
  /* Added by the topology module: how the fabric was built. */
  int tiers;                   /* 0 when there is no scale-out fabric (one domain, no NICs) */
  int rails;                   /* rail-optimized: gpus_per_node x nics_per_gpu; fat tree: 1 */
  int pods;                    /* leaf-spine groups below the core (1 in a 2-tier fabric) */
  int ports_down[3], ports_up[3];  /* ports per switch of each tier (cabled down, up) */
  int links_by_kind[SIM_LINK_KIND_COUNT];
} SimTopologySummary;

/* The two ends of a directed link, for tests and diagnostics. A NIC belongs to GPU index / nics_per_gpu;
 * an NVSwitch node stands for the whole non-blocking switch fabric of one NVLink domain. */
typedef enum {
  SIM_NODE_GPU, SIM_NODE_NVSWITCH, SIM_NODE_NIC, SIM_NODE_LEAF, SIM_NODE_SPINE, SIM_NODE_CORE
} SimNodeKind;
typedef struct {
  SimNodeKind kind;
  int index;
} SimNodeRef;

typedef struct SimTopology SimTopology;

/* Added by the topology module: invalid cluster or fabric specs. */
#define SIM_TOPOLOGY_ERROR (sim_topology_error_quark ())
typedef enum { SIM_TOPOLOGY_ERROR_INVALID } SimTopologyError;
GQuark sim_topology_error_quark (void);

#define SIM_TOPOLOGY_MAX_HOPS 16

SimTopology *sim_topology_new (const SimClusterSpec *cluster, const SimFabricSpec *fabric, GError **error);
void sim_topology_free (SimTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimTopology, sim_topology_free)

int sim_topology_n_links (const SimTopology *topo);
const SimLink *sim_topology_link (const SimTopology *topo, int link_id);
/* GPU -> NVLink domain index, node index. */
int sim_topology_domain_of (const SimTopology *topo, int gpu);
int sim_topology_node_of (const SimTopology *topo, int gpu);
/* Writes the link ids from src to dst (same domain: NVLink; else NIC/fabric) into links[],
 * returns how many (<= SIM_TOPOLOGY_MAX_HOPS). */
int sim_topology_route (const SimTopology *topo, int src_gpu, int dst_gpu, guint32 flow_hash,
                        guint32 links[SIM_TOPOLOGY_MAX_HOPS]);
void sim_topology_summarize (const SimTopology *topo, SimTopologySummary *out);

/* Added by the topology module: NCCL's PXN path. Across NVLink domains, first hop over NVLink to the
 * GPU of the source's node with the destination's local index (so on the destination's rail), then
 * that GPU's route; otherwise the same as sim_topology_route. At most 8 links. */
int sim_topology_route_pxn (const SimTopology *topo, int src_gpu, int dst_gpu, guint32 flow_hash,
                            guint32 links[SIM_TOPOLOGY_MAX_HOPS]);

/* Added by the topology module. */
const SimClusterSpec *sim_topology_cluster (const SimTopology *topo);  /* copy of the spec (nvls, …) */
const SimFabricSpec *sim_topology_fabric (const SimTopology *topo);
int sim_topology_n_gpus (const SimTopology *topo);
/* The up-link (NIC -> leaf) or down-link of NIC k of gpu; -1 if it has no such NIC. */
int sim_topology_nic_link (const SimTopology *topo, int gpu, int k, gboolean up);
/* Rail of a GPU's first NIC (local index within its node; 0 in a plain fat tree). */
int sim_topology_rail_of (const SimTopology *topo, int gpu);
/* Writes every link's capacity (bytes/s) into capacities[0 .. n_links-1], for sim_flow_net_new. */
void sim_topology_fill_capacities (const SimTopology *topo, double *capacities);
/* Sum of the links' latencies: NVLink latency, or NIC latency + switch hops x hop latency. */
gint64 sim_topology_path_latency_ns (const SimTopology *topo, const guint32 *links, int n_links);
void sim_topology_link_ends (const SimTopology *topo, int link_id, SimNodeRef *from, SimNodeRef *to);
/* Heap bytes owned by the topology (routes are computed from indices; nothing grows with pairs). */
gsize sim_topology_memory_bytes (const SimTopology *topo);
/* Human-readable summary (counts per tier, links, bisection in TB/s); free with g_free. */
char *sim_topology_describe (const SimTopology *topo);
