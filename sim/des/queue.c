/* SimQueue: a sorted front run over a radix heap of 16-byte nodes, plus a slot array for the
 * payload. See queue.h; the structs and the inlined push and pop are in queue-private.h.
 *
 * Why a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
 * problem", J. ACM 37(2), 1990): a discrete-event clock never runs backwards, so every time pushed
 * is >= the time of the last pop. Times are kept in 8·256 buckets relative to a base: bucket (d, v)
 * holds times whose highest byte differing from the base is byte d, with value v there. Buckets
 * are ordered by time range, so the lowest non-empty one (per-level bitmaps) holds the minimum. A
 * push is an append; a node moves down a level at most 8 times, in practice 2-3 (pending times span
 * ~2^23 ns), always by sequential appends, so the cost per event stays flat as the queue grows past
 * the caches. The 4-ary array heap this replaced walked ~log4(n) levels of dependent cache misses
 * per pop: at 10^5 pending it ran 9-13 M events/s on this 2-core machine (bench/engine).
 *
 * The front: pops come from a sorted run, `front`, holding every time < front_limit; the buckets
 * hold the times >= front_limit. When the front runs out, the lowest bucket, of range [lo, hi), is
 * pulled: the base moves to lo (which keeps every other bucket's index, as their times agree with
 * the old base above the pulled digit) and then
 *   - a bucket of level 0 (one time), or of level 1 (times differ in byte 0 alone), or a small one
 *     (<= SMALL nodes) becomes the front, sorted if it is not already, with front_limit = hi;
 *   - a larger one is redistributed by digit relative to lo into lower levels, its nodes at lo into
 *     the front, with front_limit = lo + 1. A level-2 bucket is first sorted by byte 0 (a counting
 *     sort), so that the level-1 buckets it fills come out sorted (LSD radix order) and their pulls
 *     need no sort; only pushes straight into a level-1 bucket can leave it unsorted.
 * The previous design scattered level-1 buckets over 256 level-0 buckets and pulled each in turn
 * (and kept a 32-bit sequence in every node for ties): its settle took ~190 instructions per event
 * at 10^5 pending, all of this ~65 (cachegrind on bench/engine; ~450 -> ~210 per event in all).
 * A push below front_limit is inserted into the front after its equal times (found by binary
 * search), shifting the shorter side: the nodes after it, or those before it into the room the pops
 * left before the head. So no push ever falls below the base. A front grown past FRONT_SPILL nodes
 * by such pushes first gives its later half back to the buckets (front_spill).
 *
 * Ties: order among equal times is push order, with no sequence number stored. In every bucket,
 * nodes of equal time are in push order: pushes append, a pull redistributes a bucket in order into
 * buckets that were empty (all lower than the lowest non-empty one), and every sort is stable. So
 * the front is in (time, push order), and a push into it goes after the equal times, being the
 * latest.
 *
 * Cancel gives the slot a new generation (part of the id and of the node), leaving a stale node that
 * is dropped when met, or all of them when they outnumber the live ones (compaction). A slot's 32-bit
 * generation wraps after 2^32 uses; compacting then guarantees no stale node survives to see its
 * generation come round again. */
#include "config.h"
#include <string.h>
#include "sim/des/queue-private.h"

/* A pulled bucket (of level 2 or more) this small becomes the front by an insertion sort, cheaper
 * than redistributing it and pulling the small buckets that makes; so does an unsorted level-1
 * bucket, whereas a larger one is counting-sorted. */
#define SMALL 32

/* Stale nodes are carried through a pull while fewer than 1 in STALE_CARRY nodes is stale. */
#define STALE_CARRY 16

/* An emptied bucket keeps its array up to this many nodes (16 KiB) and gives back a larger one.
 * Kept, every one of the 2,048 buckets would hold the most it ever held: 73 MiB of the 115 MiB
 * peak of a 10,752-GPU --full step, 254 of 333 MiB at 32,768 GPUs, while at most 65,536 events
 * were pending (2026-11-27). */
#define KEEP 1024

static inline void
bucket_trim (SimQueueBucket *b)
{
  if (b->len == 0 && b->cap > KEEP)
    {
      g_free (b->v);
      b->v = NULL;
      b->cap = 0;
    }
}

G_STATIC_ASSERT (sizeof (SimQueueSlot) == 32);  /* two to a cache line, none straddling one */

static inline gboolean
is_stale (const SimQueue *q, SimQueueNode n)
{
  return q->slots[(guint32) n.id].gen != (guint32) (n.id >> 32);
}

static inline void
mark_empty (SimQueue *q, guint bi)
{
  q->nonempty[bi >> 8][(bi >> 6) & 3] &= ~(G_GUINT64_CONSTANT (1) << (bi & 63));
}

/* Lowest non-empty bucket, or -1. */
static int
lowest_bucket (const SimQueue *q)
{
  for (int d = 0; d < SIM_QUEUE_LEVELS; d++)
    for (int w = 0; w < 4; w++)
      if (q->nonempty[d][w])
        return d * 256 + w * 64 + __builtin_ctzll (q->nonempty[d][w]);
  return -1;
}

/* Grows b to hold n nodes, doubling. A bucket of 2^31 nodes (32 GiB) is out of memory in all but
 * name: abort as g_malloc would, rather than overflow the 32-bit length. */
static void
reserve (SimQueueBucket *b, gsize n)
{
  if (n <= b->cap)
    return;
  if (n > G_MAXUINT32 / 2)
    g_error ("SimQueue: a bucket of %" G_GSIZE_FORMAT " events is out of memory; simulate fewer "
             "pending events", n);
  guint32 cap = b->cap ? b->cap : 64;
  while (cap < n)
    cap *= 2;
  b->cap = cap;
  b->v = g_renew (SimQueueNode, b->v, cap);
}

void
sim_queue_grow (SimQueueBucket *b)
{
  reserve (b, (gsize) b->len + 1);
}

static guint32
new_slot (SimQueue *q)
{
  g_return_val_if_fail (q->n_slots < SIM_QUEUE_SLOT_NONE, SIM_QUEUE_SLOT_NONE);
  if (q->n_slots == q->cap_slots)
    {
      /* Cache-line aligned, so that no 32-byte slot straddles two lines (malloc aligns to 16). */
      guint32 cap = q->cap_slots ? (guint32) MIN (2 * (guint64) q->cap_slots, SIM_QUEUE_SLOT_NONE) : 256;
      SimQueueSlot *slots = g_aligned_alloc (cap, sizeof (SimQueueSlot), 64);
      if (q->n_slots)
        memcpy (slots, q->slots, q->n_slots * sizeof (SimQueueSlot));
      g_aligned_free (q->slots);
      q->slots = slots;
      q->cap_slots = cap;
    }
  guint32 s = q->n_slots++;
  q->slots[s].gen = q->first_gen;
  q->slots[s].next = SIM_QUEUE_SLOT_NONE;  /* the caller pops it off the (empty) free list */
  return s;
}

/* Drops every stale node, keeping the order of the rest. */
static void
compact (SimQueue *q)
{
  gsize removed = 0;
  SimQueueBucket *f = &q->front;
  guint32 w = 0;
  for (guint32 i = q->head; i < f->len; i++)
    if (!is_stale (q, f->v[i]))
      f->v[w++] = f->v[i];
  removed += f->len - q->head - w;
  f->len = w;
  q->head = 0;
  for (guint bi = 0; bi < SIM_QUEUE_BUCKETS; bi++)
    {
      SimQueueBucket *b = &q->bucket[bi];
      if (b->len == 0)
        continue;
      w = 0;
      for (guint32 i = 0; i < b->len; i++)
        if (!is_stale (q, b->v[i]))
          b->v[w++] = b->v[i];
      removed += b->len - w;
      b->len = w;
      if (w == 0)
        mark_empty (q, bi);
    }
  q->n_nodes -= removed;
  q->n_stale -= removed;
}

void
sim_queue_gen_wrap (SimQueue *q, SimQueueSlot *slot)
{
  slot->gen = 1;  /* 0 is never used, so that no id is 0 */
  if (q->n_stale)
    compact (q);
}

static void
release_slot (SimQueue *q, guint32 s)
{
  SimQueueSlot *slot = &q->slots[s];
  slot->next = q->free_slot;
  q->free_slot = s;
  if (slot->gen == G_MAXUINT32)
    sim_queue_gen_wrap (q, slot);
  else
    slot->gen++;
}

/* The first place in the front past every node of time <= t (binary search). */
static guint32
front_after (const SimQueue *q, guint64 t)
{
  const SimQueueBucket *f = &q->front;
  guint32 lo = q->head, hi = f->len;
  while (lo < hi)
    {
      guint32 mid = lo + (hi - lo) / 2;
      if (f->v[mid].time_ns > t)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

/* A front whose limit lies far ahead (a small bucket of a high level became it) fills up with the
 * pushes below that limit, and each insertion shifts half of it: at 32,768 GPUs --full, 4.5% of the
 * time was those shifts. Past FRONT_SPILL nodes the later half goes back to the buckets, in order,
 * and the limit comes down to its first time. Those times lie between the base and the old limit,
 * below every bucket that holds anything, so they land in buckets of lower levels that were empty
 * when the front was pulled or hold later times only (times at or past the old limit): equal times
 * stay together and in push order, and the pops see the same sequence. */
#define FRONT_SPILL 512

static void
front_spill (SimQueue *q)
{
  SimQueueBucket *f = &q->front;
  guint64 first = f->v[q->head].time_ns;
  guint64 t = f->v[q->head + (f->len - q->head) / 2].time_ns;
  /* from the first node at the middle's time, or past the head's time if that is the middle's */
  guint32 cut = front_after (q, t == first ? first : t - 1);
  if (cut == f->len)
    return;  /* one time throughout: inserts append after it */
  for (guint32 i = cut; i < f->len; i++)
    sim_queue_append (q, sim_queue_bucket_of (f->v[i].time_ns, q->base), f->v[i]);
  q->front_limit = f->v[cut].time_ns;
  f->len = cut;
}

/* After the equal times, moving the shorter side: a push at the current time, the common case with
 * thousands of flow completions pending in the front, lands near the head, so it shifts the few
 * nodes before it into the room the pops left, not the many after it. */
static void
front_insert (SimQueue *q, SimQueueNode node)
{
  SimQueueBucket *f = &q->front;
  if (G_UNLIKELY (f->len - q->head >= FRONT_SPILL))
    {
      front_spill (q);
      if (node.time_ns >= q->front_limit)
        {
          sim_queue_append (q, sim_queue_bucket_of (node.time_ns, q->base), node);
          return;
        }
    }
  guint32 i = front_after (q, node.time_ns);
  if (q->head > 0 && i - q->head <= f->len - i)
    {
      memmove (&f->v[q->head - 1], &f->v[q->head], (i - q->head) * sizeof (SimQueueNode));
      q->head--;
      f->v[i - 1] = node;
      return;
    }
  if (G_UNLIKELY (f->len == f->cap))
    sim_queue_grow (f);
  memmove (&f->v[i + 1], &f->v[i], (f->len - i) * sizeof (SimQueueNode));
  f->v[i] = node;
  f->len++;
}

static inline void
front_append (SimQueueBucket *f, SimQueueNode x)
{
  if (G_UNLIKELY (f->len == f->cap))
    sim_queue_grow (f);
  f->v[f->len++] = x;
}

/* Stable sort by time alone: the input has equal times in push order (see the top). One
 * comparison per node already in place. */
static void
insertion_sort (SimQueueNode *v, guint32 n)
{
  for (guint32 i = 1; i < n; i++)
    {
      SimQueueNode x = v[i];
      if (v[i - 1].time_ns <= x.time_ns)
        continue;
      guint32 j = i;
      do
        {
          v[j] = v[j - 1];
          j--;
        }
      while (j > 0 && v[j - 1].time_ns > x.time_ns);
      v[j] = x;
    }
}

/* Sorts an unsorted level-1 bucket of more than SMALL nodes (times differ in byte 0 alone) into the
 * (empty) front: a stable counting sort on byte 0 that visits only the byte values present, through
 * a 256-bit set of them; a counter is reset when its value is first seen, so the 256 counters are
 * never cleared or summed in full. */
static void
counting_sort (SimQueueBucket *b, SimQueueBucket *f)
{
  guint64 seen[4] = { 0, 0, 0, 0 };
  guint32 count[256];  /* count[k] is valid where bit k of seen is set */
  guint32 n = b->len;
  const SimQueueNode *in = b->v;
  for (guint32 i = 0; i < n; i++)
    {
      guint k = (guint) (in[i].time_ns & 255);
      guint64 bit = G_GUINT64_CONSTANT (1) << (k & 63);
      guint32 c = (seen[k >> 6] & bit) ? count[k] : 0;
      count[k] = c + 1;
      seen[k >> 6] |= bit;
    }
  guint32 sum = 0;
  for (guint w = 0; w < 4; w++)
    for (guint64 x = seen[w]; x; x &= x - 1)
      {
        guint k = w * 64 + (guint) __builtin_ctzll (x);
        guint32 c = count[k];
        count[k] = sum;
        sum += c;
      }
  reserve (f, n);
  SimQueueNode *out = f->v;
  for (guint32 i = 0; i < n; i++)
    out[count[in[i].time_ns & 255]++] = in[i];
  f->len = n;
  b->len = 0;
}

static gboolean
is_sorted (const SimQueueBucket *b)
{
  for (guint32 i = 1; i < b->len; i++)
    if (b->v[i - 1].time_ns > b->v[i].time_ns)
      return FALSE;
  return TRUE;
}

/* Stable sort of a large bucket by byte 0 of its times (a dense counting sort through the scratch
 * array, whose storage it trades with the bucket's). Done before a level-2 bucket is redistributed
 * by byte 1, it leaves each level-1 bucket sorted (LSD radix order): their pulls then need no sort,
 * unless later pushes broke the order. */
static void
sort_low_byte (SimQueue *q, SimQueueBucket *b)
{
  guint32 count[256];
  memset (count, 0, sizeof count);
  guint32 n = b->len;
  const SimQueueNode *in = b->v;
  for (guint32 i = 0; i < n; i++)
    count[in[i].time_ns & 255]++;
  guint32 sum = 0;
  for (guint k = 0; k < 256; k++)
    {
      guint32 c = count[k];
      count[k] = sum;
      sum += c;
    }
  SimQueueBucket *t = &q->scratch;
  reserve (t, n);
  for (guint32 i = 0; i < n; i++)
    t->v[count[in[i].time_ns & 255]++] = in[i];
  t->len = n;
  SimQueueBucket tmp = *b;
  *b = *t;
  *t = tmp;
  t->len = 0;
}

/* Moves the lowest non-empty bucket bi into the front (which is empty) or into lower buckets. */
static void
pull_into (SimQueue *q, guint bi)
{
  guint d = bi >> 8, v = bi & 255;
  guint shift = 8 * (d + 1);
  guint64 lo = (shift == 64 ? 0 : q->base >> shift << shift) | ((guint64) v << (8 * d));
  guint64 width = G_GUINT64_CONSTANT (1) << (8 * d);
  SimQueueBucket *b = &q->bucket[bi];
  SimQueueBucket *f = &q->front;
  mark_empty (q, bi);
  q->base = lo;
  if (d <= 1 || b->len <= SMALL)
    {
      /* One time (level 0), level 1 (sorted already, usually) or small: sort if need be and
       * make it the front. */
      if (d == 1 && b->len > SMALL)
        {
          if (!is_sorted (b))
            {
              counting_sort (b, f);
              q->head = 0;
              q->front_limit = lo + width;
              return;
            }
        }
      else if (d > 0)
        insertion_sort (b->v, b->len);  /* one comparison per node in place */
      SimQueueBucket tmp = *f;  /* the front is empty: trade arrays, no copy */
      *f = *b;
      *b = tmp;
      q->head = 0;
      q->front_limit = lo + width;
      return;
    }
  if (d == 2)
    sort_low_byte (q, b);
  guint32 n = b->len;
  b->len = 0;
  /* Redistribute one level down or more, in order; times equal to lo go to the front. */
  q->front_limit = lo + 1;
  const SimQueueNode *in = b->v;
  /* Stale nodes are dropped here (a cold slot read per node moved) only while they are a fair share
   * of the queue; a few are carried down to the front, where settle drops them at the head (whose
   * slot the pops prefetch). At 131,072 GPUs --full the flow net's reschedules keep a few
   * cancelled events about at all times, and these reads were a quarter of the event loop's time. */
  gboolean carry = q->n_stale == 0 || q->n_stale * STALE_CARRY < q->n_nodes;
  if (carry && d == 2)
    {
      /* The common case, written out: times differ from lo in bytes 0 and 1 alone. */
      for (guint32 i = 0; i < n; i++)
        {
          SimQueueNode x = in[i];
          guint64 off = x.time_ns - lo;
          if (G_LIKELY (off >= 256))
            sim_queue_append (q, 256 + (guint) (off >> 8), x);
          else if (off != 0)
            sim_queue_append (q, (guint) off, x);
          else
            front_append (f, x);
        }
      return;
    }
  if (carry)
    {
      for (guint32 i = 0; i < n; i++)
        {
          SimQueueNode x = in[i];
          if (G_UNLIKELY (x.time_ns == lo))
            front_append (f, x);
          else
            sim_queue_append (q, sim_queue_bucket_of (x.time_ns, lo), x);
        }
      return;
    }
  /* With cancelled events around, stale nodes are dropped here (a slot read per node). */
  for (guint32 i = 0; i < n; i++)
    {
      SimQueueNode x = in[i];
      if (is_stale (q, x))
        {
          q->n_nodes--;
          q->n_stale--;
        }
      else if (x.time_ns == lo)
        front_append (f, x);
      else
        sim_queue_append (q, sim_queue_bucket_of (x.time_ns, lo), x);
    }
}

/* ... and leaves the bucket, empty now, no larger than KEEP. */
static void
pull (SimQueue *q, guint bi)
{
  pull_into (q, bi);
  bucket_trim (&q->bucket[bi]);
}

/* Makes the front start with a live node; FALSE if the queue holds none. */
gboolean
sim_queue_settle (SimQueue *q)
{
  SimQueueBucket *f = &q->front;
  gboolean pulled = FALSE;
  for (;;)
    {
      while (q->n_stale && q->head < f->len && is_stale (q, f->v[q->head]))
        {
          q->head++;
          q->n_nodes--;
          q->n_stale--;
        }
      if (q->head < f->len)
        {
          /* The pops prefetch SIM_QUEUE_PREFETCH ahead: start a new front the same way. */
          for (guint32 i = q->head; pulled && i < f->len && i <= q->head + SIM_QUEUE_PREFETCH; i++)
            __builtin_prefetch (&q->slots[(guint32) f->v[i].id]);
          return TRUE;
        }
      f->len = q->head = 0;
      int bi = lowest_bucket (q);
      if (bi < 0)
        return FALSE;
      pull (q, (guint) bi);
      pulled = TRUE;
    }
}

/* The general push: a new slot, a push into the front, or a full bucket. */
guint64
sim_queue_push_slow (SimQueue *q, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg)
{
  guint32 s = q->free_slot;
  if (s == SIM_QUEUE_SLOT_NONE)
    {
      s = new_slot (q);
      if (s == SIM_QUEUE_SLOT_NONE)
        return 0;
    }
  SimQueueNode node = { (guint64) time_ns, sim_queue_take_slot (q, s, fn, data, arg) };
  if (node.time_ns >= q->front_limit)
    sim_queue_append (q, sim_queue_bucket_of (node.time_ns, q->base), node);
  else
    front_insert (q, node);
  q->n_nodes++;
  return node.id;
}

SimQueue *
sim_queue_new (void)
{
  SimQueue *q = g_new0 (SimQueue, 1);
  q->free_slot = SIM_QUEUE_SLOT_NONE;
  q->front_limit = 1;  /* base 0: time 0 goes to the front, every other to a bucket */
  q->first_gen = 1;
  return q;
}

void
sim_queue_free (SimQueue *queue)
{
  if (queue == NULL)
    return;
  for (int b = 0; b < SIM_QUEUE_BUCKETS; b++)
    g_free (queue->bucket[b].v);
  g_free (queue->front.v);
  g_free (queue->scratch.v);
  g_aligned_free (queue->slots);
  g_free (queue);
}

guint64
sim_queue_push (SimQueue *q, gint64 time_ns, SimQueueFn fn, gpointer data, guint64 arg)
{
  g_return_val_if_fail (q != NULL, 0);
  g_return_val_if_fail (time_ns >= q->floor, 0);
  return sim_queue_push_unchecked (q, time_ns, fn, data, arg);
}

gboolean
sim_queue_cancel (SimQueue *q, guint64 id)
{
  g_return_val_if_fail (q != NULL, FALSE);
  guint32 s = (guint32) (id & G_MAXUINT32);
  guint32 gen = (guint32) (id >> 32);
  if (s >= q->n_slots || q->slots[s].next != SIM_QUEUE_SLOT_LIVE || q->slots[s].gen != gen)
    return FALSE;
  q->n_stale++;  /* before the release: a generation wrap there compacts, dropping this node */
  release_slot (q, s);
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
  return sim_queue_pop_until_unchecked (q, until_ns < 0 ? G_MAXUINT64 : (guint64) until_ns, out);
}

gboolean
sim_queue_peek_time (SimQueue *q, gint64 *time_ns)
{
  g_return_val_if_fail (q != NULL, FALSE);
  if (!sim_queue_settle (q))
    return FALSE;
  if (time_ns)
    *time_ns = (gint64) q->front.v[q->head].time_ns;
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
  if (q->n_stale)
    compact (q);  /* no stale node may see its slot's generation change under it */
  q->first_gen = next_seq ? next_seq : 1;
  for (guint32 s = 0; s < q->n_slots; s++)
    q->slots[s].gen = q->first_gen;
}
