/* Flows over routed paths of links, sharing link bandwidth max-min fairly (optionally weighted).
 *
 * A flow is bytes over a fixed list of link ids. Whenever a flow starts or ends, the rates of the
 * flows it shares links with are recomputed (see sim/net/maxmin.h) and completion events re-planned.
 * Path latency is the caller's business (delay the start or the notification).
 *
 * Cost model: starts and ends only note what changed; one recompute event at the current time
 * then re-solves the flows next to the changes (new flows, the flows of links a finished flow
 * left), widening to the connected component(s) of flows and links only when the max-min
 * bottleneck condition says more rates must change (flows elsewhere keep their rates and their
 * completion events), so 10^4 flows started by one collective in one event cost one solve, and a
 * flow ending in a large component costs a solve of its neighbours. Links with the same flows
 * and capacity are solved as one, and flows started as one bundle (sim_flow_net_start_bundle) are one
 * flow while they move in lockstep. Rates are therefore assigned when that event runs: a
 * flow's rate reads 0 until then (sim_flow_net_flush forces it). A flow finishes at the first
 * nanosecond at which all its bytes have arrived (rounded up, never early); flows with identical
 * histories get bit-identical rates and finish in the same nanosecond. */
#pragma once
#include <glib.h>
#include "sim/des/engine.h"

typedef struct SimFlowNet SimFlowNet;
typedef void (*SimFlowDoneFn) (gpointer user, guint64 arg);
/* The same for n flows that end together (members of a bundle): as n calls of a SimFlowDoneFn. */
typedef void (*SimFlowDoneManyFn) (gpointer user, guint64 arg, int n);

/* capacities[i]: link i in bytes/s, > 0; copied. The engine must outlive the net; freeing the net
 * cancels its pending events. Where the engine carries sensitivities (sim_engine_enable_sens, before
 * the net is made), a flow's completion carries its start's: the net follows no derivative through
 * the shares. */
SimFlowNet *sim_flow_net_new (SimEngine *engine, const double *capacities, int n_links);
void sim_flow_net_free (SimFlowNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimFlowNet, sim_flow_net_free)

/* Starts a flow now; done(user, arg) runs (from an engine event, never from inside this call) when
 * its last byte arrives. A flow with no links or no bytes finishes at the current time. links are
 * copied. Returns a flow id (never 0). */
guint64 sim_flow_net_start (SimFlowNet *net, const guint32 *links, int n_links, double bytes,
                            SimFlowDoneFn done, gpointer user, guint64 arg);
/* The same with a weight > 0 in the sharing: flows on a common bottleneck get rates in the ratio
 * of their weights (weighted max-min, sim/net/maxmin.h); sim_flow_net_start's flows weigh 1. */
guint64 sim_flow_net_start_weighted (SimFlowNet *net, const guint32 *links, int n_links, double bytes,
                                     double weight, SimFlowDoneFn done, gpointer user, guint64 arg);
/* A path registered once and started many times (a collective's ring, a representative's PP send):
 * the net keeps what it derived from the links (their atoms, flow.c), so a start costs the atoms
 * the path meets, not its links. Owned by the net, valid until it is freed; links are copied. */
typedef struct SimFlowPath SimFlowPath;
SimFlowPath *sim_flow_net_path (SimFlowNet *net, const guint32 *links, int n_links);
/* sim_flow_net_start_weighted over a registered path: the same flow, rates and completion. */
guint64 sim_flow_net_start_path (SimFlowNet *net, SimFlowPath *path, double bytes, double weight,
                                 SimFlowDoneFn done, gpointer user, guint64 arg);
/* n flows of `bytes` each at `weight` each, over registered paths[0..n), started now as one bundle:
 * the same rates and completions as n sim_flow_net_start_path calls, in one flow for as long as its
 * members move in lockstep (flow.c, "bundles"); done(user, arg) runs once per flow. */
void sim_flow_net_start_bundle (SimFlowNet *net, SimFlowPath *const *paths, int n, double bytes, double weight,
                                SimFlowDoneFn done, gpointer user, guint64 arg);
/* sim_flow_net_start_path, batched: the flows started so at one nanosecond join the net together at
 * its next recompute of that nanosecond, those of one size and weight (and, with sensitivities, of
 * starters with equal derivatives, which each flow carries) as one bundle whose members keep their
 * own done(user, arg) (--full's lockstep ranks: every PP send of a stage, every group's ring). The
 * same rates and completions as sim_flow_net_start_path (bundles split where members stop moving in
 * lockstep); until that recompute the flows are counted by sim_flow_net_active but have no id. */
void sim_flow_net_start_batched (SimFlowNet *net, SimFlowPath *path, double bytes, double weight,
                                 SimFlowDoneFn done, gpointer user, guint64 arg);
/* The union path that sim_flow_net_start_bundle starts paths[0..n) (n >= 2) as, for a caller that
 * starts the same members again and again; NULL if one of them has no links (those start one by
 * one). Owned by the net, as the paths are. */
SimFlowPath *sim_flow_net_bundle_path (SimFlowNet *net, SimFlowPath *const *paths, int n);
/* sim_flow_net_start_bundle of the union path's members (bytes > 0), without finding it again;
 * done(user, arg, n) runs once for the n members that end in one event, where start_bundle's runs
 * n times (a 16,384-GPU DeepSeek-V3 step spent 75% of its time in those calls). */
void sim_flow_net_start_union (SimFlowNet *net, SimFlowPath *bundle, double bytes, double weight,
                               SimFlowDoneManyFn done, gpointer user, guint64 arg);
/* Current rate of an active flow in bytes/s (0 if finished). */
double sim_flow_net_rate (const SimFlowNet *net, guint64 flow_id);
/* Bytes carried by a link so far, for --link-stats. */
double sim_flow_net_link_bytes (const SimFlowNet *net, int link);
int sim_flow_net_active (const SimFlowNet *net);
/* Runs the pending rate recompute now instead of at the end of the current time step. */
void sim_flow_net_flush (SimFlowNet *net);

/* Work counters, for benchmarks and reports. */
typedef struct {
  guint64 recomputes;        /* batched re-solves */
  guint64 flows_resolved;    /* flows re-solved, summed over recomputes (by the solve that was
                              * kept: a local try that failed its check is not counted) */
  guint64 reschedules;       /* completion events moved because a rate changed */
  guint64 bundles;           /* sim_flow_net_start_bundle calls that made a bundle */
  guint64 bundle_splits;     /* bundles split because some members would go faster alone */
} SimFlowNetStats;
SimFlowNetStats sim_flow_net_stats (const SimFlowNet *net);
