/* SimQueue: a 4-ary min-heap of 16-byte nodes plus a slot array for the payload. See queue.h.
 *
 * Why this layout (measured with bench/engine, hold model):
 * - A node is one 128-bit key, time_ns << 64 | seq << 32 | slot, so ordering by (time, push order)
 *   is a single unsigned compare (times are >= 0) and the slot rides along for free.
 * - Arity 4 with 16-byte nodes puts the four children of a node in exactly one 64-byte cache line
 *   (the array is offset so index 1 is line-aligned): one line per level instead of two with 24-byte
 *   nodes or twice the levels with a binary heap. Measured at 10^5 pending: arity 4 ~1.7x arity 2;
 *   arity 8 (a generic tournament) was slower than both. The walk down is bounded by memory
 *   latency once the heap outgrows L2 (10^5 nodes = 1.6 MB): that limits throughput at size.
 * - Pop leaves the root vacant; the next push usually fills it (an event scheduling its successor)
 *   and otherwise the last node does (settle). Filling walks the hole down along the smaller child
 *   to a leaf (3 branch-free compares per level, prefetching the next level's four candidate
 *   lines) and sifts the new node up from there, usually a level or two: one walk per event.
 * - The payload (fn, data, arg) lives in a slot read once at pop; it is prefetched as soon as a node
 *   becomes the root. Carrying it in a parallel array moved with the keys was tried: it trades one
 *   miss per pop for payload moves at every level and measured ~15% slower at 10^5 pending.
 * - Slots are recycled last-in first-out so a pop-one-push-one workload reuses warm memory.
 *
 * seq is 32 bits to keep nodes at 16 bytes: when it is about to wrap, the live nodes are sorted
 * (a sorted array is a valid heap) and renumbered 0..n-1, once every ~4·10^9 pushes. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "sim/queue.h"

#define ARITY 4
#define SLOT_LIVE G_MAXUINT32  /* next-free marker of a slot that holds a pending event */
#define SLOT_NONE (G_MAXUINT32 - 1)
#define HEAP_PAD 3             /* nodes before heap[0] so that heap[1] starts a cache line */

typedef unsigned __int128 Node;  /* GCC/Clang extension, on every 64-bit target we build for */

typedef struct {
  SimQueueFn fn;
  gpointer data;
  guint64 arg;
  guint32 gen;   /* part of the id; bumped when the event leaves the queue so old ids go stale */
  guint32 next;  /* free-list link, or SLOT_LIVE */
  guint32 seq;   /* seq of the pending event in this slot: a heap node with another seq is stale */
} Slot;

struct SimQueue {
  Node *heap;  /* heap[-HEAP_PAD] is the start of a 64-byte aligned block */
  gsize n_heap, cap_heap;  /* n_heap counts live and stale nodes */
  Slot *slots;
  gsize n_slots, cap_slots;
  guint32 free_slot;
  guint32 next_seq;
  gsize n_stale;
  gboolean hole;  /* heap[0] is vacant (see settle) */
};

static inline Node
node_make (gint64 time_ns, guint32 seq, guint32 slot)
{
  return ((Node) (guint64) time_ns << 64) | ((Node) seq << 32) | slot;
}

static inline gint64 node_time (Node n) { return (gint64) (guint64) (n >> 64); }
static inline guint32 node_seq (Node n) { return (guint32) ((guint64) n >> 32); }
static inline guint32 node_slot (Node n) { return (guint32) n; }

static inline gboolean
node_stale (const SimQueue *q, Node n)
{
  const Slot *s = &q->slots[node_slot (n)];
  return s->next != SLOT_LIVE || s->seq != node_seq (n);
}

static inline void
sift_up (Node *heap, gsize i, Node x)
{
  while (i > 0)
    {
      gsize p = (i - 1) / ARITY;
      if (heap[p] <= x)
        break;
      heap[i] = heap[p];
      i = p;
    }
  heap[i] = x;
}

/* Classic top-down sift, used by heapify. */
static void
sift_down (Node *heap, gsize n, gsize i)
{
  Node x = heap[i];
  for (;;)
    {
      gsize c = ARITY * i + 1;
      if (c >= n)
        break;
      gsize best = c;
      gsize end = c + ARITY < n ? c + ARITY : n;
      for (gsize k = c + 1; k < end; k++)
        if (heap[k] < heap[best])
          best = k;
      if (x <= heap[best])
        break;
      heap[i] = heap[best];
      i = best;
    }
  heap[i] = x;
}

/* Fills the vacant root of a heap of n nodes (the root included) with x. */
static void
fill_root (SimQueue *q, gsize n, Node x)
{
  Node *heap = q->heap;
  gsize i = 0;
  /* Walk the hole down along the smallest child while all ARITY children exist. */
  for (;;)
    {
      gsize c = ARITY * i + 1;
      if (c + ARITY > n)
        break;
      /* The next level is one of four lines; fetch all four now so the one chosen is on its way
       * (the walk is a chain of dependent loads, latency-bound once the heap leaves the cache). */
      gsize g = ARITY * c + 1;
      if (g < n)
        {
          __builtin_prefetch (&heap[g]);
          __builtin_prefetch (&heap[g + ARITY]);
          __builtin_prefetch (&heap[g + 2 * ARITY]);
          __builtin_prefetch (&heap[g + 3 * ARITY]);
        }
      /* Index arithmetic instead of ?: keeps the unpredictable choices branch-free. */
      gsize b01 = c + (heap[c + 1] < heap[c]);
      gsize b23 = c + 2 + (heap[c + 3] < heap[c + 2]);
      gsize best = b01 ^ ((b01 ^ b23) & -(gsize) (heap[b23] < heap[b01]));
      heap[i] = heap[best];
      i = best;
    }
  /* A last, partial family of children. */
  gsize c = ARITY * i + 1;
  if (c < n)
    {
      gsize best = c;
      for (gsize k = c + 1; k < n; k++)
        if (heap[k] < heap[best])
          best = k;
      heap[i] = heap[best];
      i = best;
    }
  sift_up (heap, i, x);
  __builtin_prefetch (&q->slots[node_slot (heap[0])]);
}

/* Pop leaves the root vacant (hole) rather than refilling it at once: in the common pattern of an
 * event scheduling its successor, the next push drops straight into the root and the heap is
 * walked once per event instead of twice. Every other operation settles the hole first. */
static inline void
settle (SimQueue *q)
{
  if (!q->hole)
    return;
  q->hole = FALSE;
  gsize n = --q->n_heap;
  if (n > 0)
    fill_root (q, n, q->heap[n]);
}

static void
remove_root (SimQueue *q)
{
  q->hole = TRUE;
  settle (q);
}

/* Drops stale nodes from the top so heap[0], if any, is a live event. */
static inline void
skip_stale (SimQueue *q)
{
  settle (q);
  while (q->n_stale > 0 && q->n_heap > 0 && node_stale (q, q->heap[0]))
    {
      remove_root (q);
      q->n_stale--;
    }
}

static void
heapify (Node *heap, gsize n)
{
  if (n > 1)
    for (gsize i = (n - 2) / ARITY + 1; i-- > 0;)
      sift_down (heap, n, i);
}

/* Rebuilds the heap without stale nodes; called when they outnumber live ones, so the heap never
 * holds more than about twice the pending events and the rebuild cost is amortized over cancels. */
static void
compact (SimQueue *q)
{
  settle (q);
  gsize m = 0;
  for (gsize i = 0; i < q->n_heap; i++)
    if (!node_stale (q, q->heap[i]))
      q->heap[m++] = q->heap[i];
  q->n_heap = m;
  q->n_stale = 0;
  heapify (q->heap, m);
}

static int
node_cmp (const void *a, const void *b)
{
  Node x = *(const Node *) a, y = *(const Node *) b;
  return x < y ? -1 : x > y;
}

/* Reassigns seq 0..n-1 in (time, seq) order so next_seq can restart without breaking FIFO ties. */
static void
renumber (SimQueue *q)
{
  compact (q);
  qsort (q->heap, q->n_heap, sizeof (Node), node_cmp);
  for (gsize i = 0; i < q->n_heap; i++)
    {
      guint32 s = node_slot (q->heap[i]);
      q->heap[i] = node_make (node_time (q->heap[i]), (guint32) i, s);
      q->slots[s].seq = (guint32) i;
    }
  q->next_seq = (guint32) q->n_heap;
}

static void
release_slot (SimQueue *q, guint32 s)
{
  Slot *slot = &q->slots[s];
  slot->gen = slot->gen == G_MAXUINT32 ? 1 : slot->gen + 1;  /* gen 0 never used: ids are never 0 */
  slot->next = q->free_slot;
  q->free_slot = s;
}

static void
grow_heap (SimQueue *q)
{
  gsize cap = q->cap_heap ? 2 * q->cap_heap : 256;
  Node *block = g_aligned_alloc (cap + HEAP_PAD, sizeof (Node), 64);
  if (q->heap)
    {
      memcpy (block + HEAP_PAD, q->heap, q->n_heap * sizeof (Node));
      g_aligned_free (q->heap - HEAP_PAD);
    }
  q->heap = block + HEAP_PAD;
  q->cap_heap = cap;
}

SimQueue *
sim_queue_new (void)
{
  SimQueue *q = g_new0 (SimQueue, 1);
  q->free_slot = SLOT_NONE;
  return q;
}

void
sim_queue_free (SimQueue *queue)
{
  if (queue == NULL)
    return;
  if (queue->heap)
    g_aligned_free (queue->heap - HEAP_PAD);
  g_free (queue->slots);
  g_free (queue);
}

guint64
sim_queue_push (SimQueue *q, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg)
{
  g_return_val_if_fail (q != NULL, 0);
  g_return_val_if_fail (time_ns >= 0, 0);

  if (G_UNLIKELY (q->next_seq == G_MAXUINT32))
    renumber (q);
  if (!q->hole && q->n_heap == q->cap_heap)
    grow_heap (q);
  guint32 s = q->free_slot;
  if (s != SLOT_NONE)
    q->free_slot = q->slots[s].next;
  else
    {
      g_return_val_if_fail (q->n_slots < SLOT_NONE, 0);
      if (q->n_slots == q->cap_slots)
        {
          q->cap_slots = q->cap_slots ? 2 * q->cap_slots : 256;
          q->slots = g_renew (Slot, q->slots, q->cap_slots);
        }
      s = (guint32) q->n_slots++;
      q->slots[s].gen = 1;
    }
  Slot *slot = &q->slots[s];
  guint32 seq = q->next_seq++;
  slot->fn = fn;
  slot->data = data;
  slot->arg = arg;
  slot->next = SLOT_LIVE;
  slot->seq = seq;
  Node x = node_make (time_ns, seq, s);
  if (q->hole)
    {
      q->hole = FALSE;
      fill_root (q, q->n_heap, x);
    }
  else
    sift_up (q->heap, q->n_heap++, x);
  return ((guint64) slot->gen << 32) | s;
}

gboolean
sim_queue_cancel (SimQueue *q, guint64 id)
{
  g_return_val_if_fail (q != NULL, FALSE);
  guint32 s = (guint32) (id & G_MAXUINT32);
  guint32 gen = (guint32) (id >> 32);
  if (s >= q->n_slots || q->slots[s].next != SLOT_LIVE || q->slots[s].gen != gen)
    return FALSE;
  release_slot (q, s);
  q->n_stale++;
  if (q->n_stale > 64 && q->n_stale > q->n_heap - q->hole - q->n_stale)
    compact (q);
  return TRUE;
}

gboolean
sim_queue_pop (SimQueue *q, SimQueueEvent *out)
{
  g_return_val_if_fail (q != NULL && out != NULL, FALSE);
  skip_stale (q);
  if (q->n_heap == 0)
    return FALSE;
  Node top = q->heap[0];
  guint32 s = node_slot (top);
  const Slot *slot = &q->slots[s];
  *out = (SimQueueEvent) { node_time (top), ((guint64) slot->gen << 32) | s,
                           slot->fn, slot->data, slot->arg };
  release_slot (q, s);
  q->hole = TRUE;
  return TRUE;
}

gboolean
sim_queue_peek_time (SimQueue *q, gint64 *time_ns)
{
  g_return_val_if_fail (q != NULL, FALSE);
  skip_stale (q);
  if (q->n_heap == 0)
    return FALSE;
  if (time_ns)
    *time_ns = node_time (q->heap[0]);
  return TRUE;
}

guint64
sim_queue_length (const SimQueue *q)
{
  g_return_val_if_fail (q != NULL, 0);
  return q->n_heap - q->hole - q->n_stale;
}

void
sim_queue_debug_set_next_seq (SimQueue *q, guint32 next_seq)
{
  g_return_if_fail (q != NULL);
  settle (q);
  g_return_if_fail (q->n_heap == 0);
  q->next_seq = next_seq;
}
