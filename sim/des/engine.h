/* The discrete-event engine: a clock in integer nanoseconds and a queue of callbacks ordered by
 * (time, scheduling sequence), so simultaneous events run in the order they were scheduled.
 * Scheduling does not allocate once the queue has grown to its working size. */
#pragma once
#include <glib.h>

typedef struct SimEngine SimEngine;
typedef void (*SimEventFn) (SimEngine *engine, gpointer data, guint64 arg);

SimEngine *sim_engine_new (void);
void sim_engine_free (SimEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimEngine, sim_engine_free)

gint64 sim_engine_now (const SimEngine *engine);
/* Schedules fn(engine, data, arg) at absolute time at_ns (>= now); returns an id for cancel. */
guint64 sim_engine_at (SimEngine *engine, gint64 at_ns, SimEventFn fn, gpointer data, guint64 arg);
guint64 sim_engine_after (SimEngine *engine, gint64 delay_ns, SimEventFn fn, gpointer data, guint64 arg);
/* TRUE if the event was pending and is now cancelled. */
gboolean sim_engine_cancel (SimEngine *engine, guint64 id);
/* Runs until the queue is empty (or until_ns, if >= 0: events at times <= until_ns run, then the
 * clock is set to until_ns); returns the events executed. */
guint64 sim_engine_run (SimEngine *engine, gint64 until_ns);
/* Called from an event: sim_engine_run returns after the current event (the clock stays there). */
void sim_engine_stop (SimEngine *engine);
guint64 sim_engine_pending (const SimEngine *engine);

/* Forward-mode sensitivities of event times (off unless enabled): each event carries the derivative
 * of its time with respect to n parameters, d(t_e) = d(t_cause) + d(delay), where the cause is the
 * event that scheduled it (a DES moves on from the last condition met, so this follows the critical
 * path) and d(delay) is what the scheduler declares with sim_engine_delay_sens just before its at()
 * or after() (0 otherwise: a latency). Exact where the schedule does not change under a small step
 * of the parameters (no event changes order), as a derivative of a max-plus system is. */
void sim_engine_enable_sens (SimEngine *engine, int n);
int sim_engine_sens_n (const SimEngine *engine);
/* The running event's n derivatives (zeros outside events); NULL when not enabled. */
const double *sim_engine_sens (const SimEngine *engine);
/* Adds d (n values) to the derivatives of the next event scheduled. */
void sim_engine_delay_sens (SimEngine *engine, const double *d);
/* The next event scheduled carries d (n values) as its derivatives outright, not the running
 * event's plus a delay's (an event timed from an earlier one than the running event). */
void sim_engine_next_sens (SimEngine *engine, const double *d);
