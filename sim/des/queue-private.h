/* SimQueue internals shared by sim/des/queue.c and the engine's event loop (sim/des/engine.c), which
 * inlines the hot push and pop below: at ~20 M events/s a call and its argument checks are a
 * sizeable share of an event. Nothing else may include this header; the contract is sim/des/queue.h.
 * The data structure is explained at the top of sim/des/queue.c. */
#pragma once
#include <glib.h>
#include "sim/des/queue.h"

#define SIM_QUEUE_LEVELS 8                          /* 8-bit digits of a 64-bit time */
#define SIM_QUEUE_BUCKETS (SIM_QUEUE_LEVELS * 256)  /* bucket d·256 + v: digit d differs, equals v */
#define SIM_QUEUE_SLOT_LIVE G_MAXUINT32             /* next-free marker of a slot holding an event */
#define SIM_QUEUE_SLOT_NONE (G_MAXUINT32 - 1)       /* end of the free list */
/* Pops prefetch the slot of the event this many places ahead in the front: the slot array is
 * larger than the caches at 10^5 pending and more. 4 measured best of 0, 2, 4, 8 on bench/engine
 * (+5% at 10^5, +20% at 10^6 over 0). */
#define SIM_QUEUE_PREFETCH 4

/* One queued event as the buckets see it: its time and its id (generation << 32 | slot). */
typedef struct {
  guint64 time_ns;
  guint64 id;
} SimQueueNode;

/* The payload, 32 bytes so that one slot is never split across two cache lines. */
typedef struct {
  SimQueueFn fn;
  gpointer data;
  guint64 arg;
  guint32 gen;   /* the id's high half; bumped when the event leaves, so old ids and nodes go stale */
  guint32 next;  /* free-list link, or SIM_QUEUE_SLOT_LIVE */
} SimQueueSlot;

typedef struct {
  SimQueueNode *v;
  guint32 len, cap;
} SimQueueBucket;

struct SimQueue {
  SimQueueBucket front;  /* the earliest events, sorted by (time, push order); v[head..len) pending */
  guint32 head;
  guint32 free_slot;
  guint64 front_limit;   /* front times < front_limit <= every bucket time; > base */
  guint64 base;          /* radix base: <= every bucket time; buckets index by digits vs base */
  gint64 floor;          /* time of the last pop: no push may go below it */
  gsize n_nodes;         /* queued nodes, live and stale */
  gsize n_stale;
  SimQueueSlot *slots;
  guint32 n_slots, cap_slots;
  guint32 first_gen;     /* generation of a new slot (1; tests move it to the wrap) */
  SimQueueBucket scratch;  /* spare storage for sorting a bucket */
  guint64 nonempty[SIM_QUEUE_LEVELS][4];  /* bit v of level d: bucket d·256 + v holds nodes */
  SimQueueBucket bucket[SIM_QUEUE_BUCKETS];
};

/* Out of line (sim/des/queue.c): the rare and the amortized paths. */
void sim_queue_grow (SimQueueBucket *b);
guint64 sim_queue_push_slow (SimQueue *q, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg);
gboolean sim_queue_settle (SimQueue *q);
void sim_queue_gen_wrap (SimQueue *q, SimQueueSlot *slot);

/* Bucket of a time t != base: the highest differing byte d and t's value v there. */
static inline guint
sim_queue_bucket_of (guint64 t, guint64 base)
{
  guint d = (guint) (63 - __builtin_clzll (t ^ base)) >> 3;
  return d * 256 + (guint) ((t >> (8 * d)) & 255);
}

static inline void
sim_queue_append (SimQueue *q, guint bi, SimQueueNode node)
{
  SimQueueBucket *b = &q->bucket[bi];
  if (b->len == 0)
    q->nonempty[bi >> 8][(bi >> 6) & 3] |= G_GUINT64_CONSTANT (1) << (bi & 63);
  if (G_UNLIKELY (b->len == b->cap))
    sim_queue_grow (b);
  b->v[b->len++] = node;
}

/* Takes free slot s for (fn, data, arg): unlinks it from the free list and marks it live. Returns
 * the event id (generation << 32 | slot). */
static inline __attribute__ ((always_inline)) guint64
sim_queue_take_slot (SimQueue *q, guint32 s, SimQueueFn fn, gpointer data, guint64 arg)
{
  SimQueueSlot *slot = &q->slots[s];
  q->free_slot = slot->next;
  slot->fn = fn;
  slot->data = data;
  slot->arg = arg;
  slot->next = SIM_QUEUE_SLOT_LIVE;
  return ((guint64) slot->gen << 32) | s;
}

/* sim_queue_push without the argument checks: the caller guarantees q != NULL and
 * time_ns >= q->floor (the engine's clock never runs behind it). The common case, a free slot and
 * room in the bucket, is inline; anything else is a tail call, so the inline part needs no saved
 * registers. */
static inline __attribute__ ((always_inline)) guint64
sim_queue_push_unchecked (SimQueue *q, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg)
{
  guint64 t = (guint64) time_ns;
  guint32 s = q->free_slot;
  if (G_UNLIKELY (s == SIM_QUEUE_SLOT_NONE || t < q->front_limit))
    return sim_queue_push_slow (q, time_ns, fn, data, arg);
  guint bi = sim_queue_bucket_of (t, q->base);
  SimQueueBucket *b = &q->bucket[bi];
  if (G_UNLIKELY (b->len == b->cap))
    return sim_queue_push_slow (q, time_ns, fn, data, arg);
  guint64 id = sim_queue_take_slot (q, s, fn, data, arg);
  if (b->len == 0)
    q->nonempty[bi >> 8][(bi >> 6) & 3] |= G_GUINT64_CONSTANT (1) << (bi & 63);
  b->v[b->len++] = (SimQueueNode) { t, id };
  q->n_nodes++;
  return id;
}

/* sim_queue_pop_until without the argument checks (q and out not NULL), the horizon given as
 * an unsigned limit (G_MAXUINT64 for none). */
static inline __attribute__ ((always_inline)) gboolean
sim_queue_pop_until_unchecked (SimQueue *q, guint64 limit_ns, SimQueueEvent *out)
{
  /* Fast path: a live head in the front. With cancelled nodes around, settle checks the head. */
  if (G_UNLIKELY (q->n_stale != 0 || q->head == q->front.len) && !sim_queue_settle (q))
    return FALSE;
  SimQueueNode top = q->front.v[q->head];
  if (top.time_ns > limit_ns)
    return FALSE;
  q->head++;
  q->n_nodes--;
  guint32 s = (guint32) top.id;
  SimQueueSlot *slot = &q->slots[s];
  out->time_ns = (gint64) top.time_ns;
  out->id = top.id;
  out->fn = slot->fn;
  out->data = slot->data;
  out->arg = slot->arg;
  q->floor = (gint64) top.time_ns;
  /* Release the slot: the new generation makes the id and any node naming it stale. */
  slot->next = q->free_slot;
  q->free_slot = s;
  if (G_UNLIKELY (slot->gen == G_MAXUINT32))
    sim_queue_gen_wrap (q, slot);
  else
    slot->gen++;
  /* A later pop reads its slot, cold at size: fetch it while the caller runs this event and the
   * next ones. */
  if (q->head + SIM_QUEUE_PREFETCH < q->front.len)
    __builtin_prefetch (&q->slots[(guint32) q->front.v[q->head + SIM_QUEUE_PREFETCH].id]);
  return TRUE;
}
