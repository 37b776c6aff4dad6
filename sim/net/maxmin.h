/* Max-min fair rates of flows sharing links (progressive filling / water-filling).
 *
 * Allocation: raise every flow's rate together; when a link fills up, the flows crossing it stop
 * at that rate and the others keep rising. The result is the unique allocation where no flow can
 * get more without taking from a flow that has no more than it: each flow has a bottleneck link,
 * full, on which no other flow gets more. It models TCP/RDMA-like fair sharing at flow level, the
 * usual abstraction of flow-level network simulators (e.g. SimGrid's LMM without weights).
 *
 * Input is compressed rows: flow f crosses links flow_links[flow_start[f] .. flow_start[f+1]-1].
 * A link listed twice by one flow carries that flow twice (it counts double on that link).
 * A flow with no links has no bottleneck and gets rate INFINITY; links with no flow are ignored.
 * Capacities are in bytes/s, > 0. */
#pragma once
#include <glib.h>

/* Reusable scratch space: once grown, solving allocates nothing. */
typedef struct SimMaxmin SimMaxmin;

SimMaxmin *sim_maxmin_new (void);
void sim_maxmin_free (SimMaxmin *mm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimMaxmin, sim_maxmin_free)

/* The fast solver: bottleneck links in a heap ordered by fair share, O((F·k + L) log L) for F flows
 * of k links each over L links. Writes rate[0 .. n_flows-1].
 *
 * weight (NULL: every flow 1) makes the allocation weighted max-min: rates rise in proportion to
 * the weights, so flows on a common bottleneck get rates in the ratio of their weights (a flow that
 * stands for w NCCL channels, each a CTA pushing data, gets w shares); weights are > 0. */
void sim_maxmin_solve (SimMaxmin *mm, int n_links, const double *capacity, int n_flows,
                       const int *flow_start, const guint32 *flow_links, const double *weight, double *rate);

/* The textbook algorithm on a dense flow × link matrix, kept as a reference for tests:
 * raise all unfrozen flows by the smallest remaining headroom, freeze the flows of full links,
 * repeat. O(F·L) memory and O(F·L) per round; for small systems only. */
void sim_maxmin_solve_reference (int n_links, const double *capacity, int n_flows,
                                 const int *flow_start, const guint32 *flow_links, const double *weight,
                                 double *rate);
