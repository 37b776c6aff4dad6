/* The cluster as a graph of directed links: NVLink domains (8-GPU nodes or NVL72 racks) and a
 * scale-out fabric (rail-optimized or plain fat tree, 2 or 3 tiers, oversubscription per tier).
 *
 * Built from specs, never hand-written. Routing is deterministic: ECMP picks among equal-cost
 * up-links by a stated hash of (src, dst, flow_hash). */
#pragma once
#include <glib.h>
#include "sim/link.h"

typedef struct {
  int gpus;                    /* GPUs in the job */
  int gpus_per_node;           /* host or tray: 8 (HGX/DGX), 4 (GB200 tray) */
  int nvlink_domain;           /* GPUs one NVSwitch fabric can connect: 8, or 72 for NVL72 */
  int gpus_per_domain_used;    /* GPUs used per domain (MLPerf GB200: 64 of 72); 0 = nvlink_domain */
  double nvlink_bw_bytes_per_s;/* per GPU per direction (from the GPU profile) */
  gboolean nvls;
  gint64 nvlink_latency_ns;
  int nics_per_gpu;
  double nic_bw_bytes_per_s;   /* per NIC per direction (line rate) */
  gint64 nic_latency_ns;
} SimClusterSpec;

typedef enum { SIM_FABRIC_RAIL_OPTIMIZED, SIM_FABRIC_FAT_TREE } SimFabricKind;

typedef struct {
  SimFabricKind kind;
  int tiers;                   /* 2 (leaf-spine) or 3 (leaf-spine-core) */
  int radix;                   /* switch ports */
  double oversubscription[3];  /* per tier (leaf, spine, core): down/up capacity; 1 = non-blocking */
  double link_bw_bytes_per_s;  /* switch-to-switch links; 0 = the NIC rate */
  gint64 hop_latency_ns;       /* per switch hop */
} SimFabricSpec;

typedef struct {
  int gpus, nodes, domains, nics;
  int switches[3];             /* per tier */
  int nvswitch_domains;
  int links;                   /* directed links */
  double bisection_bytes_per_s;/* scale-out bisection bandwidth, one direction */
} SimTopologySummary;

typedef struct SimTopology SimTopology;

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
