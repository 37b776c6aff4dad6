/* Collectives as phases of flows on a SimFlowNet over SimTopology routes.
 *
 * Operations: all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, send/recv over any group
 * of GPUs (global ids). Algorithms: ring (NCCL-style, C channels), double binary tree, NVLS (in-switch
 * reduction in one NVLink domain), hierarchical (intra-domain reduce-scatter -> per-rail inter-domain
 * all-reduce -> intra-domain all-gather) and direct (all-to-all, send/recv).
 *
 * Sizes follow nccl-tests: `bytes` is the whole buffer (all-reduce/broadcast: the buffer; all-gather:
 * the gathered output; reduce-scatter: the input; all-to-all: each rank's send buffer; send/recv: the
 * message). Bus bandwidth = algbw * factor (all-reduce 2(n-1)/n, all-gather/reduce-scatter/all-to-all
 * (n-1)/n, broadcast/send-recv 1): sim_alphabeta_busbw_factor() in sim/net/alphabeta.h.
 *
 * Design for scale (why it is exact where it matters). A pipelined ring moves the same bytes over
 * every edge at the rate of its slowest edge: NCCL splits the buffer into chunks that stream around the
 * ring, so after the fill every edge carries V = 2(n-1)/n * S (all-reduce) at one common rate. One
 * flow whose path is the concatenation of all the ring's edge routes, carrying V bytes, reproduces
 * exactly that steady state under max-min sharing: every link of the ring carries V at one rate, and
 * that rate is set by the most contended link, as in the real pipeline. The fill/drain and per-step
 * synchronisation are the latency term (base + steps * step latency) added before the flow starts.
 * So a ring costs C flow events, not 2(n-1)*n chunk transfers: the 32 DP groups x 336 ranks of the
 * 10,752-GPU benchmark are 64 flows. A pipelined tree is the same (one flow per tree and channel over
 * all its edges both ways; a link shared by k edges is listed k times, which SimFlowNet loads k times). What it drops: the ramp of the first and last chunk (bounded by
 * steps * chunk/B, folded into the step latency) and the transient when contention changes mid-ring.
 * Routes of a (op, algo, group) are computed once and cached (the runner repeats the same collective
 * every step); the byte count scales a cached plan. Among ECMP choices a route takes the least loaded
 * by the routes planned so far (balanced static routing, as an InfiniBand subnet manager does), so
 * symmetric groups do not collide by hashing accident.
 *
 * Protocol efficiency (NCCL's ~20% on NVLink, IB header overhead on NICs) lives in the link
 * capacities: build the SimFlowNet from sim_collective_link_capacities(), so every flow, collective or
 * not, sees achievable rather than line rate. NVLS additionally inflates its NVLink bytes by
 * 1/nvls_eff (the switch reduction rate). */
#pragma once
#include <glib.h>
#include "sim/des/engine.h"
#include "sim/net/flow.h"
#include "sim/net/topology.h"

typedef enum {
  SIM_COLLECTIVE_ALLREDUCE,
  SIM_COLLECTIVE_REDUCE_SCATTER,
  SIM_COLLECTIVE_ALLGATHER,
  SIM_COLLECTIVE_ALLTOALL,
  SIM_COLLECTIVE_BROADCAST,
  SIM_COLLECTIVE_SENDRECV,
  SIM_COLLECTIVE_OP_COUNT
} SimCollectiveOp;

typedef enum {
  SIM_COLLECTIVE_ALGO_AUTO,   /* fastest of NCCL's algorithms by the closed form, as NCCL's tuner does */
  SIM_COLLECTIVE_ALGO_RING,
  SIM_COLLECTIVE_ALGO_TREE,   /* double binary tree (all-reduce) */
  SIM_COLLECTIVE_ALGO_NVLS,   /* NVLink SHARP, one NVLink domain */
  SIM_COLLECTIVE_ALGO_HIER,   /* intra-domain RS -> inter-domain per rail -> intra-domain AG; not NCCL's, so
                               * never AUTO's choice */
  SIM_COLLECTIVE_ALGO_DIRECT, /* all-to-all, send/recv: one flow per pair */
  SIM_COLLECTIVE_ALGO_COLLNET, /* all-reduce reduced in the scale-out switches (InfiniBand SHARP, NCCL
                                * CollNet Direct) */
  SIM_COLLECTIVE_ALGO_COUNT
} SimCollectiveAlgo;

/* Communication constants, filled by the scenario loader from [hardware]/[fabric] keys (each with its
 * source). Efficiencies are achieved / line rate; latencies are NCCL Simple-protocol figures. */
typedef struct {
  double nvlink_eff;          /* NVLink: ~20% protocol overhead -> 0.80 (NVIDIA, nccl-tests#212) */
  double nvls_eff;            /* NVSwitch reduction on top of nvlink_eff (NCCL nvlsEfficiency) */
  double nic_eff;             /* NIC/fabric: payload / wire bytes */
  gint64 base_latency_ns[SIM_COLLECTIVE_ALGO_COUNT]; /* per call */
  gint64 nvlink_step_latency_ns; /* per algorithm step whose slowest hop is NVLink */
  gint64 net_step_latency_ns;    /* per algorithm step crossing the network */
  /* The host's network post overhead (NCCL tuning.cc getNetOverhead: 1 us, 2 us on AMD x86): a ring
   * that crosses the network posts every step through its proxy, so each of its NVLink steps takes at
   * least this (three times it under Simple). */
  gint64 net_overhead_ns;
  /* NCCL's LL protocol (8-byte lines with an inline flag, no chunk pipeline): far lower latency,
   * a fraction of the bandwidth; NCCL's tuner picks it for small messages. Ring and tree only. */
  gint64 ll_base_latency_ns;      /* per call */
  gint64 ll_nvlink_step_latency_ns;
  gint64 ll_net_step_latency_ns;  /* ring step across the network */
  gint64 ll_tree_net_step_latency_ns; /* tree step across the network */
  double ll_bw_fraction;      /* LL bus bandwidth / Simple's; 0: no LL (Simple only) */
  int channels;               /* rings in parallel; 0 = one per rail (group members per domain) */
  /* Weights of a collective's flows in the fair sharing of links (sim/net/flow.h), as NCCL channels: a
   * channel is a CTA pushing data, so concurrent operations share a link by their channel counts. */
  double nvlink_channels;     /* channels of a collective inside one NVLink domain (0 = 32) */
  double net_channels_per_nic; /* channels per NIC of a ring/tree across domains, and per network
                               * peer of a send/recv (0 = 2) */
  double chunk_bytes;         /* pipelining unit of chains and trees: the last chunk trails the first
                               * by (hops - 1) chunk times (NCCL Simple: NCCL_BUFFSIZE 4 MiB / 8 steps) */
  /* CollNet Direct (fabrics with sharp): NCCL's bandwidth factor and latencies (tuning.cc) */
  double collnet_eff;         /* busBw factor (0.85 from compute capability 9.0; none before) */
  gint64 collnet_nvlink_latency_ns; /* per local exchange over NVLink (hwLat NVLink CollNetDirect) */
  gint64 collnet_arity_ns;    /* per local rank beyond the first ("arity serialization") */
  gint64 collnet_net_latency_ns;    /* the switches' reduction round trip (hwLat NET CollNetDirect) */
} SimCollectiveProfile;

/* What the closed forms need to know about a group on a topology. */
typedef struct {
  int ranks;                      /* n */
  int ranks_per_domain;           /* L: members per NVLink domain (the largest, if uneven) */
  int domains;                    /* D: NVLink domains the group spans */
  gboolean uniform;               /* every spanned domain holds L members */
  double nvlink_bw_bytes_per_s;   /* per GPU per direction, line rate */
  double nic_bw_bytes_per_s;      /* per GPU per direction, line rate, all its NICs */
  gboolean nvls;                  /* the domain has NVLink SHARP */
  gboolean sharp;                 /* the scale-out switches reduce (InfiniBand SHARP) */
  gint64 nvlink_latency_ns;       /* one-way GPU->GPU inside a domain (wires + switch) */
  gint64 net_latency_ns;          /* one-way GPU->GPU across the fabric */
} SimCollectiveShape;

const char *sim_collective_op_name (SimCollectiveOp op);
const char *sim_collective_algo_name (SimCollectiveAlgo algo);
/* Share weights in NCCL channels (the profile's figure, or NCCL's default when 0): a collective
 * inside one NVLink domain, and per NIC (per network peer for send/recv) across domains. */
double sim_collective_nvlink_channels (const SimCollectiveProfile *pr);
double sim_collective_net_channels (const SimCollectiveProfile *pr);
/* The weight of a send from src to dst, one of `peers` sent to at once: NCCL's p2p channels for a
 * peer (a collective's inside one domain, NCCL_NCHANNELS_PER_NET_PEER across it) over the peers. */
double sim_collective_p2p_weight (const SimCollectiveProfile *pr, const SimTopology *topo, int src, int dst,
                                  int peers);
/* Accepts allreduce|reducescatter|allgather|alltoall|broadcast|sendrecv (also with '_' or '-'). */
gboolean sim_collective_op_parse (const char *s, SimCollectiveOp *op, GError **error);
/* Accepts auto|ring|tree|nvls|hier|direct|collnet. */
gboolean sim_collective_algo_parse (const char *s, SimCollectiveAlgo *algo, GError **error);

/* Whether NCCL could run CollNet Direct on this cluster: the fabric's switches reduce (sharp), the GPUs
 * have NICs, and the domains are NVSwitch nodes (tuning.cc disables CollNet Direct without NVSwitches;
 * a mesh has none). */
gboolean sim_collective_fabric_reduces (const SimClusterSpec *cluster, const SimFabricSpec *fabric);
/* The group's shape on topo: members per domain, bandwidths and latencies read from its links. */
gboolean sim_collective_shape (const SimTopology *topo, const int *gpus, int n_gpus,
                               SimCollectiveShape *out, GError **error);
/* Link capacities for sim_flow_net_new: line rate times the profile's efficiency per link kind.
 * out has sim_topology_n_links(topo) entries. */
void sim_collective_link_capacities (const SimTopology *topo, const SimCollectiveProfile *profile,
                                     double *out);

typedef struct SimCollective SimCollective;

/* Binds an engine, a flow net (built from sim_collective_link_capacities) and a topology; all must
 * outlive it. The profile is copied. */
SimCollective *sim_collective_new (SimEngine *engine, SimFlowNet *net, const SimTopology *topo,
                                   const SimCollectiveProfile *profile);
void sim_collective_free (SimCollective *coll);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimCollective, sim_collective_free)
/* Every run starts its flows batched (sim_flow_net_start_batched) instead of as the bundles of its
 * own start event: the flows of the runs of one nanosecond with one size and weight move as one
 * bundle while they move alike. For a caller that starts many lockstep groups one by one (--full,
 * the TP mirror); the same rates and completions. */
void sim_collective_set_batched (SimCollective *coll, gboolean batched);

/* Starts op over gpus[0..n) now (send/recv: gpus[0] -> gpus[1]; broadcast: root gpus[0]).
 * done(user, arg) runs when the last rank has its result. algo AUTO picks the fastest applicable
 * algorithm by the closed form; *algo_used (may be NULL) says which. Fails, naming the reason, if the
 * algorithm does not apply (e.g. NVLS across domains) or the group is invalid. */
gboolean sim_collective_start (SimCollective *coll, SimCollectiveOp op, SimCollectiveAlgo algo,
                               const int *gpus, int n_gpus, double bytes, SimFlowDoneFn done,
                               gpointer user, guint64 arg, SimCollectiveAlgo *algo_used,
                               GError **error);
/* A group, for starting collectives on it without naming its GPUs again (a lookup hashes them all):
 * owned by coll, valid until it is freed. NULL with error set if the group is invalid. */
typedef struct SimCollectiveGroup SimCollectiveGroup;
const SimCollectiveGroup *sim_collective_group (SimCollective *coll, const int *gpus, int n_gpus, GError **error);
/* sim_collective_start on a group from sim_collective_group. */
gboolean sim_collective_start_group (SimCollective *coll, SimCollectiveOp op, SimCollectiveAlgo algo,
                                     const SimCollectiveGroup *group, double bytes, SimFlowDoneFn done,
                                     gpointer user, guint64 arg, SimCollectiveAlgo *algo_used, GError **error);
/* op on each of groups[0..n_groups) at once, algorithm AUTO: done runs once, when the last has
 * finished. The same flows at the same times as n_groups calls of sim_collective_start_group, in
 * fewer events: groups whose plan is one phase with the same latency run as one (a representative's
 * sibling groups); one group is sim_collective_start_group itself. */
gboolean sim_collective_start_many (SimCollective *coll, SimCollectiveOp op, const SimCollectiveGroup *const *groups,
                                    int n_groups, double bytes, SimFlowDoneFn done, gpointer user, guint64 arg,
                                    GError **error);
/* The closed-form time (sim/net/alphabeta.h) of the same call on this topology, without running it:
 * for a runner's quick estimates and cross-checks. algo AUTO gives the fastest; *algo_used says which.
 * Returns -1 with error set if the group is invalid or nothing applies. */
gint64 sim_collective_estimate_ns (SimCollective *coll, SimCollectiveOp op, SimCollectiveAlgo algo,
                                   const int *gpus, int n_gpus, double bytes, SimCollectiveAlgo *algo_used,
                                   GError **error);
/* Collectives started and not yet done. */
int sim_collective_active (const SimCollective *coll);
/* Flows started so far (all collectives), for benchmarks and tests of the decomposition. */
guint64 sim_collective_flows_started (const SimCollective *coll);

#define SIM_COLLECTIVE_ERROR (sim_collective_error_quark ())
GQuark sim_collective_error_quark (void);
typedef enum { SIM_COLLECTIVE_ERROR_INVALID, SIM_COLLECTIVE_ERROR_NOT_APPLICABLE } SimCollectiveError;
