/* SimQueue: the pending-event set of the simulator.
 *
 * Events are ordered by (time_ns, push order), so events at the same nanosecond pop first-in
 * first-out: simultaneous events run in a reproducible order that does not depend on the queue's
 * layout. The queue holds small nodes (time, id); the payload sits in a slot array recycled through
 * a free list, so a push allocates nothing once the arrays have grown.
 *
 * Cancel is O(1) by tombstone: the id names a slot and the slot's generation, cancelling bumps the
 * generation, and the stale node is dropped when it is met (or when tombstones outnumber live
 * events and the queue is compacted). Ids are never 0, so 0 can mean "no event". */
#pragma once
#include <glib.h>

typedef struct SimQueue SimQueue;
/* Generic function pointer (like GObject's GCallback; GLib proper has none): the queue never calls
 * it, the owner casts it back to its own callback type. */
typedef void (*SimQueueFn) (void);

/* One popped event. fn is an opaque callback the owner casts back to its real type. */
typedef struct {
  gint64 time_ns;
  guint64 id;
  SimQueueFn fn;
  gpointer data;
  guint64 arg;
} SimQueueEvent;

SimQueue *sim_queue_new (void);
void sim_queue_free (SimQueue *queue);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimQueue, sim_queue_free)

/* Adds an event at time_ns (>= 0); returns its id (never 0). */
guint64 sim_queue_push (SimQueue *queue, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg);
/* TRUE if id was pending and is now removed; FALSE for ids already popped, cancelled or unknown. */
gboolean sim_queue_cancel (SimQueue *queue, guint64 id);
/* Removes the earliest event into *out; FALSE if the queue is empty. */
gboolean sim_queue_pop (SimQueue *queue, SimQueueEvent *out);
/* The same, but only an event at or before until_ns (any if until_ns < 0): the event loop's one
 * call per event instead of a peek and a pop. */
gboolean sim_queue_pop_until (SimQueue *queue, gint64 until_ns, SimQueueEvent *out);
/* Time of the earliest event; FALSE if the queue is empty. */
gboolean sim_queue_peek_time (SimQueue *queue, gint64 *time_ns);
/* Number of pending (not cancelled) events. */
guint64 sim_queue_length (const SimQueue *queue);
/* Tests only: on an empty queue, sets the generation (the high half of ids) that every slot starts
 * from, to exercise the wrap of the 32-bit generation (0 means 1). Ties no longer need a sequence
 * number (see sim/des/queue.c); the name is kept for its callers. */
void sim_queue_debug_set_next_seq (SimQueue *queue, guint32 next_seq);
