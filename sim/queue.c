/* SimQueue: a radix heap of 16-byte nodes plus a slot array for the payload. See queue.h.
 *
 * Why a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
 * problem", J. ACM 37(2), 1990): a discrete-event clock never runs backwards, so every time pushed
 * is >= the time of the last pop. Keys are then kept in 65 buckets by the highest bit in which they
 * differ from `last` (the smallest queued time seen), with 8-bit digits: bucket 0 holds keys equal to
 * it; bucket (d, v) keys whose highest byte differing from `last` is byte d, with value v there. A
 * push is an append; a pop takes from bucket 0 and, when that is empty, finds the lowest non-empty
 * bucket through per-level bitmaps, makes its minimum the new `last` and redistributes it into lower
 * levels (its keys agree with the new `last` on byte d and above). A node moves at most 8 times, in
 * practice 2-3 (pending times span ~2^23 ns), always by sequential appends, so the cost per event
 * stays flat as the queue grows past the caches. (A binary radix moved each node ~20 times here.) The 4-ary array heap
 * this replaced walked ~log4(n) levels of dependent cache misses per pop: at 10^5 pending it ran
 * 9-13 M events/s on this 2-core machine (bench/engine).
 *
 * Ties: a node is one 128-bit key, time_ns << 64 | seq << 32 | slot. Bucket 0 is kept sorted by
 * seq: a redistribution sorts what lands there, and later pushes into it carry a larger seq.
 * Cancel marks the slot dead (its generation is part of the id); dead nodes are dropped when met and
 * all of them when they outnumber the live ones. A push below `last` (possible only after a peek
 * that did not pop, e.g. sim_engine_run stopping at `until`) rebuilds the buckets around the new
 * minimum: O(n), rare. seq is 32 bits to keep nodes at 16 bytes: when it is about to wrap, the live
 * nodes are renumbered 0..n-1 in order, once every ~4·10^9 pushes. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "sim/queue.h"

#define N_LEVELS 8
#define N_BUCKETS (1 + N_LEVELS * 256)
#define SLOT_LIVE G_MAXUINT32  /* next-free marker of a slot that holds a pending event */
#define SLOT_NONE (G_MAXUINT32 - 1)

typedef unsigned __int128 Node;  /* GCC/Clang extension, on every 64-bit target we build for */

typedef struct {
  SimQueueFn fn;
  gpointer data;
  guint64 arg;
  guint32 gen;   /* part of the id; bumped when the event leaves the queue so old ids go stale */
  guint32 next;  /* free-list link, or SLOT_LIVE */
  guint32 seq;   /* seq of the pending event in this slot: a node with another seq is stale */
} Slot;

typedef struct {
  Node *v;
  gsize len, cap;
} Bucket;

struct SimQueue {
  Bucket bucket[N_BUCKETS];
  guint64 nonempty[N_LEVELS][4];  /* bit v of level d: bucket (d, v) holds nodes */
  gsize head0;     /* bucket[0].v[0 .. head0) were popped */
  guint64 last;    /* every queued time is >= last; bucket 0 holds times == last */
  gint64 floor;    /* time of the last pop: no push may go below it */
  gsize n_nodes;   /* queued nodes, live and stale */
  gsize n_stale;
  Slot *slots;
  gsize n_slots, cap_slots;
  guint32 free_slot;
  guint32 next_seq;
};

static inline Node
node_make (gint64 time_ns, guint32 seq, guint32 slot)
{
  return ((Node) (guint64) time_ns << 64) | ((Node) seq << 32) | slot;
}

static inline guint64 node_time (Node n) { return (guint64) (n >> 64); }
static inline guint32 node_seq (Node n) { return (guint32) ((guint64) n >> 32); }
static inline guint32 node_slot (Node n) { return (guint32) n; }

static inline gboolean
is_stale (const SimQueue *q, Node n)
{
  const Slot *s = &q->slots[node_slot (n)];
  return s->next != SLOT_LIVE || s->seq != node_seq (n);
}

static inline int
bucket_of (guint64 time, guint64 last)
{
  guint64 x = time ^ last;
  if (x == 0)
    return 0;
  int d = (63 - __builtin_clzll (x)) >> 3;
  return 1 + d * 256 + (int) ((time >> (8 * d)) & 255);
}

static inline void
append (Bucket *b, Node n)
{
  if (G_UNLIKELY (b->len == b->cap))
    {
      b->cap = b->cap ? 2 * b->cap : 64;
      b->v = g_renew (Node, b->v, b->cap);
    }
  b->v[b->len++] = n;
}

static inline void
append_to (SimQueue *q, int bi, Node n)
{
  Bucket *b = &q->bucket[bi];
  if (b->len == 0 && bi > 0)
    {
      int d = (bi - 1) >> 8, v = (bi - 1) & 255;
      q->nonempty[d][v >> 6] |= G_GUINT64_CONSTANT (1) << (v & 63);
    }
  append (b, n);
}

/* Lowest non-empty bucket above 0, or -1. */
static int
lowest_bucket (const SimQueue *q)
{
  for (int d = 0; d < N_LEVELS; d++)
    for (int w = 0; w < 4; w++)
      if (q->nonempty[d][w])
        return 1 + d * 256 + w * 64 + __builtin_ctzll (q->nonempty[d][w]);
  return -1;
}

static inline void
mark_empty (SimQueue *q, int bi)
{
  int d = (bi - 1) >> 8, v = (bi - 1) & 255;
  q->nonempty[d][v >> 6] &= ~(G_GUINT64_CONSTANT (1) << (v & 63));
}

static int
node_cmp (const void *a, const void *b)
{
  Node x = *(const Node *) a, y = *(const Node *) b;
  return x < y ? -1 : x > y;
}

static void
release_slot (SimQueue *q, guint32 s)
{
  Slot *slot = &q->slots[s];
  slot->gen = slot->gen == G_MAXUINT32 ? 1 : slot->gen + 1;  /* gen 0 never used: ids are never 0 */
  slot->next = q->free_slot;
  q->free_slot = s;
}

/* Moves every live node out of the buckets into a new array (sorted when asked), emptying them. */
static Node *
take_all (SimQueue *q, gsize *n_out, gboolean sorted)
{
  Node *all = g_new (Node, q->n_nodes - q->n_stale + 1);
  gsize n = 0;
  for (int b = 0; b < N_BUCKETS; b++)
    {
      Bucket *bk = &q->bucket[b];
      for (gsize i = b == 0 ? q->head0 : 0; i < bk->len; i++)
        if (!is_stale (q, bk->v[i]))
          all[n++] = bk->v[i];
      bk->len = 0;
    }
  q->head0 = 0;
  q->n_nodes = q->n_stale = 0;
  memset (q->nonempty, 0, sizeof q->nonempty);
  if (sorted)
    qsort (all, n, sizeof (Node), node_cmp);
  *n_out = n;
  return all;
}

/* Puts nodes back relative to a new base; the caller guarantees base <= every node's time and
 * passes them in key order when some may equal base (bucket 0 must stay sorted). */
static void
put_all (SimQueue *q, guint64 base, const Node *all, gsize n)
{
  q->last = base;
  for (gsize i = 0; i < n; i++)
    append_to (q, bucket_of (node_time (all[i]), base), all[i]);
  q->n_nodes = n;
}

/* Once every ~4·10^9 pushes: renumber the live nodes 0..n-1 in (time, seq) order. */
static void
renumber (SimQueue *q)
{
  gsize n;
  Node *all = take_all (q, &n, TRUE);
  for (gsize i = 0; i < n; i++)
    {
      guint32 s = node_slot (all[i]);
      q->slots[s].seq = (guint32) i;
      all[i] = node_make ((gint64) node_time (all[i]), (guint32) i, s);
    }
  put_all (q, q->last, all, n);
  q->next_seq = (guint32) n;
  g_free (all);
}

static void
compact (SimQueue *q)
{
  for (int b = 0; b < N_BUCKETS; b++)
    {
      Bucket *bk = &q->bucket[b];
      gsize w = 0;
      for (gsize i = b == 0 ? q->head0 : 0; i < bk->len; i++)
        if (!is_stale (q, bk->v[i]))
          bk->v[w++] = bk->v[i];
      bk->len = w;
      if (b > 0 && w == 0)
        mark_empty (q, b);
    }
  q->head0 = 0;
  q->n_nodes -= q->n_stale;
  q->n_stale = 0;
}

/* Makes bucket 0 start with a live node; FALSE if the queue holds none. */
static gboolean
settle (SimQueue *q)
{
  Bucket *b0 = &q->bucket[0];
  for (;;)
    {
      while (q->n_stale && q->head0 < b0->len && is_stale (q, b0->v[q->head0]))
        {
          q->head0++;
          q->n_nodes--;
          q->n_stale--;
        }
      if (q->head0 < b0->len)
        return TRUE;
      b0->len = q->head0 = 0;
      int b = lowest_bucket (q);
      if (b < 0)
        return FALSE;
      /* Lowest non-empty bucket: its minimum becomes the base, and its nodes all move lower
       * (they share every bit above b-1 with the new base). Stale nodes are dropped here. */
      Bucket *bk = &q->bucket[b];
      mark_empty (q, b);
      if (b <= 256)
        {
          /* Level 0: every node here has the same time (it differs from `last` in byte 0 alone),
           * which becomes `last`; the bucket becomes bucket 0 by swapping arrays. Stale nodes are
           * skipped at the head as usual. */
          Bucket tmp = *b0;
          *b0 = *bk;
          *bk = tmp;
          q->last = node_time (b0->v[0]);
          if (b0->len > 1)
            qsort (b0->v, b0->len, sizeof (Node), node_cmp);
          continue;
        }
      gsize n = bk->len;
      bk->len = 0;
      guint64 min = G_MAXUINT64;
      if (q->n_stale == 0)
        {
          /* The common case: nothing cancelled, so no slot is read (each read is a cache miss). */
          for (gsize i = 0; i < n; i++)
            min = MIN (min, node_time (bk->v[i]));
          q->last = min;
          for (gsize i = 0; i < n; i++)
            append_to (q, bucket_of (node_time (bk->v[i]), min), bk->v[i]);
        }
      else
        {
          for (gsize i = 0; i < n; i++)
            if (node_time (bk->v[i]) < min && !is_stale (q, bk->v[i]))
              min = node_time (bk->v[i]);
          if (min == G_MAXUINT64)
            {
              q->n_nodes -= n;
              q->n_stale -= n;
              continue;
            }
          q->last = min;
          for (gsize i = 0; i < n; i++)
            {
              Node x = bk->v[i];
              if (is_stale (q, x))
                {
                  q->n_nodes--;
                  q->n_stale--;
                  continue;
                }
              append_to (q, bucket_of (node_time (x), min), x);
            }
        }
      if (b0->len > 1)
        qsort (b0->v, b0->len, sizeof (Node), node_cmp);
    }
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
  for (int b = 0; b < N_BUCKETS; b++)
    g_free (queue->bucket[b].v);
  g_free (queue->slots);
  g_free (queue);
}

guint64
sim_queue_push (SimQueue *q, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg)
{
  g_return_val_if_fail (q != NULL, 0);
  g_return_val_if_fail (time_ns >= q->floor, 0);

  if (G_UNLIKELY (q->next_seq == G_MAXUINT32))
    renumber (q);
  if (G_UNLIKELY ((guint64) time_ns < q->last))
    {
      /* Below the base a peek settled on: rebuild around the new minimum. Nothing queued equals
       * it, so bucket 0 starts empty and order within it is kept. */
      gsize n;
      Node *all = take_all (q, &n, FALSE);
      put_all (q, (guint64) time_ns, all, n);
      g_free (all);
    }
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
  append_to (q, bucket_of ((guint64) time_ns, q->last), node_make (time_ns, seq, s));
  q->n_nodes++;
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
  if (q->n_stale > 64 && q->n_stale > q->n_nodes - q->n_stale)
    compact (q);
  return TRUE;
}

gboolean
sim_queue_pop (SimQueue *q, SimQueueEvent *out)
{
  return sim_queue_pop_until (q, -1, out);
}

gboolean
sim_queue_pop_until (SimQueue *q, gint64 until_ns, SimQueueEvent *out)
{
  g_return_val_if_fail (q != NULL && out != NULL, FALSE);
  if (!settle (q) || (until_ns >= 0 && q->last > (guint64) until_ns))
    return FALSE;
  Node top = q->bucket[0].v[q->head0++];
  q->n_nodes--;
  guint32 s = node_slot (top);
  const Slot *slot = &q->slots[s];
  *out = (SimQueueEvent) { (gint64) node_time (top), ((guint64) slot->gen << 32) | s,
                           slot->fn, slot->data, slot->arg };
  q->floor = (gint64) node_time (top);
  release_slot (q, s);
  /* The next pop reads its event's slot, cold at size: start fetching it while the caller runs
   * this event. Its node heads bucket 0 or, usually, the lowest bucket. */
  Bucket *b0 = &q->bucket[0];
  int next = q->head0 < b0->len ? 0 : lowest_bucket (q);
  if (next >= 0)
    __builtin_prefetch (&q->slots[node_slot (q->bucket[next].v[next ? 0 : q->head0])]);
  return TRUE;
}

gboolean
sim_queue_peek_time (SimQueue *q, gint64 *time_ns)
{
  g_return_val_if_fail (q != NULL, FALSE);
  if (!settle (q))
    return FALSE;
  if (time_ns)
    *time_ns = (gint64) q->last;
  return TRUE;
}

guint64
sim_queue_length (const SimQueue *q)
{
  g_return_val_if_fail (q != NULL, 0);
  return q->n_nodes - q->n_stale;
}

void
sim_queue_debug_set_next_seq (SimQueue *q, guint32 next_seq)
{
  g_return_if_fail (q != NULL);
  g_return_if_fail (sim_queue_length (q) == 0);
  q->next_seq = next_seq;
}
