/* Flows over routed paths of links, sharing link bandwidth max-min fairly.
 *
 * A flow is bytes over a fixed list of link ids. Whenever a flow starts or ends, the rates of the
 * flows it shares links with are recomputed (see sim/maxmin.h) and completion events re-planned.
 * Path latency is the caller's business (delay the start or the notification). */
#pragma once
#include <glib.h>
#include "sim/engine.h"

typedef struct SimFlowNet SimFlowNet;
typedef void (*SimFlowDoneFn) (gpointer user, guint64 arg);

/* capacities[i]: link i in bytes/s; copied. */
SimFlowNet *sim_flow_net_new (SimEngine *engine, const double *capacities, int n_links);
void sim_flow_net_free (SimFlowNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimFlowNet, sim_flow_net_free)

/* Starts a flow now; done(user, arg) runs when its last byte arrives. Returns a flow id. */
guint64 sim_flow_net_start (SimFlowNet *net, const guint32 *links, int n_links, double bytes,
                            SimFlowDoneFn done, gpointer user, guint64 arg);
/* Current rate of an active flow in bytes/s (0 if finished). */
double sim_flow_net_rate (const SimFlowNet *net, guint64 flow_id);
/* Bytes carried by a link so far, for --link-stats. */
double sim_flow_net_link_bytes (const SimFlowNet *net, int link);
int sim_flow_net_active (const SimFlowNet *net);
