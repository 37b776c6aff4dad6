/* `--trace FILE`: the simulated step as Chrome trace event JSON (opens in Perfetto or
 * chrome://tracing): one process per simulated rank ("rank R, stage S"), one thread per stream
 * (compute, tp, cp, pp-send-fwd, pp-send-bwd, dp, ep), one complete event ("ph": "X") per op named
 * by what it is accounted to (compute, tp, dp, …) with its bytes. Events stream to the file as the
 * runner ends them (sim/step/runner.h SimRunnerOptions.trace), so memory stays flat.
 *
 * It also keeps a merged timeline (back-to-back ops of one category on one stream become one
 * interval) for plots/timeline.gp: sim_trace_write_timeline(). */
#pragma once
#include <glib.h>
#include "sim/step/runner.h"

typedef struct SimTrace SimTrace;

/* path NULL: no JSON file, only the timeline. */
SimTrace *sim_trace_new (const char *path, GError **error);
/* The SimRunnerTraceFn to install with `user` = the SimTrace. */
void sim_trace_event (gpointer user, const SimRunnerTraceEvent *event);
/* `--link-stats FILE`: with the SimTrace as trace_user and sim_trace_links as the runner's
 * link_stats hook, the bytes every link carried in the simulated step and its utilisation
 * (bytes / (capacity · step)), a TSV with a per-kind summary in its comment lines. */
void sim_trace_set_link_stats (SimTrace *trace, const char *path);
void sim_trace_links (gpointer user, const SimTopology *topo, const double *link_bytes, gint64 step_ns);

/* Ends the JSON document and closes the file; reports a --link-stats write failure too. */
gboolean sim_trace_finish (SimTrace *trace, GError **error);
guint64 sim_trace_n_events (const SimTrace *trace);
/* Writes the timeline of at most `max_ranks` ranks (the lowest stage first) as the TSV
 * plots/timeline.gp reads (lane, label, kind, start_ms, end_ms, text). */
gboolean sim_trace_write_timeline (const SimTrace *trace, const char *path, int max_ranks, GError **error);
void sim_trace_free (SimTrace *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimTrace, sim_trace_free)
