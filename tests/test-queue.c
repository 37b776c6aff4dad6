/* SimQueue against a naive reference: a sorted array of (time, push order) with linear cancel.
 * Whatever the heap does inside, every pop must return exactly what the sorted list says. */
#include "config.h"
#include <glib.h>
#include "sim/des/queue.h"

typedef struct {
  gint64 time_ns;
  guint64 order;  /* push order: the FIFO tie-break */
  guint64 id;
  guint64 arg;
} Ref;

static void dummy (void) {}

static gint
ref_cmp (gconstpointer a, gconstpointer b)
{
  const Ref *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Inserts keeping the array sorted (binary search for the position). */
static void
ref_insert (GArray *ref, Ref r)
{
  guint lo = 0, hi = ref->len;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if (ref_cmp (&g_array_index (ref, Ref, mid), &r) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
  g_array_insert_val (ref, lo, r);
}

static gboolean
ref_cancel (GArray *ref, guint64 id)
{
  for (guint i = 0; i < ref->len; i++)
    if (g_array_index (ref, Ref, i).id == id)
      {
        g_array_remove_index (ref, i);
        return TRUE;
      }
  return FALSE;
}

/* Random mixes of push (times drawn from a narrow window, so ties are frequent), pop and cancel of
 * live, popped and made-up ids, checked step by step against the reference. Seeded, so a failure
 * replays. */
static void
test_random_vs_reference (void)
{
  for (guint32 seed = 1; seed <= 20; seed++)
    {
      g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
      g_autoptr (SimQueue) q = sim_queue_new ();
      g_autoptr (GArray) ref = g_array_new (FALSE, FALSE, sizeof (Ref));
      g_autoptr (GArray) issued = g_array_new (FALSE, FALSE, sizeof (guint64));
      guint64 order = 0;
      gint64 now = 0;
      int n_ops = 4000 + g_rand_int_range (rng, 0, 4000);
      int push_pct = g_rand_int_range (rng, 40, 70);  /* drifts the size up or down per seed */
      for (int op = 0; op < n_ops; op++)
        {
          int what = g_rand_int_range (rng, 0, 100);
          if (what < push_pct)
            {
              Ref r = { now + g_rand_int_range (rng, 0, 50), order++, 0, order };
              r.id = sim_queue_push (q, r.time_ns, dummy, NULL, r.arg);
              g_assert_cmpuint (r.id, !=, 0);
              ref_insert (ref, r);
              g_array_append_val (issued, r.id);
            }
          else if (what < push_pct + 20 || issued->len == 0)
            {
              SimQueueEvent ev;
              gboolean got = sim_queue_pop (q, &ev);
              g_assert_cmpint (got, ==, ref->len > 0);
              if (got)
                {
                  Ref r = g_array_index (ref, Ref, 0);
                  g_array_remove_index (ref, 0);
                  g_assert_cmpint (ev.time_ns, ==, r.time_ns);
                  g_assert_cmpuint (ev.arg, ==, r.arg);
                  g_assert_cmpuint (ev.id, ==, r.id);
                  g_assert_true (ev.fn == dummy);
                  now = ev.time_ns;
                }
            }
          else
            {
              /* Any id ever issued (live, popped or cancelled), or sometimes garbage. */
              guint64 id = g_rand_int_range (rng, 0, 10) == 0
                               ? ((guint64) g_rand_int (rng) << 32 | g_rand_int (rng))
                               : g_array_index (issued, guint64, g_rand_int_range (rng, 0, issued->len));
              gboolean expect = ref_cancel (ref, id);
              g_assert_cmpint (sim_queue_cancel (q, id), ==, expect);
            }
          g_assert_cmpuint (sim_queue_length (q), ==, ref->len);
          gint64 t;
          g_assert_cmpint (sim_queue_peek_time (q, &t), ==, ref->len > 0);
          if (ref->len > 0)
            g_assert_cmpint (t, ==, g_array_index (ref, Ref, 0).time_ns);
        }
      /* Drain. */
      SimQueueEvent ev;
      for (guint i = 0; i < ref->len; i++)
        {
          g_assert_true (sim_queue_pop (q, &ev));
          g_assert_cmpuint (ev.arg, ==, g_array_index (ref, Ref, i).arg);
        }
      g_assert_false (sim_queue_pop (q, &ev));
    }
}

/* 1000 events at one time, pushed between events at other times, come out in push order. */
static void
test_ties_are_fifo (void)
{
  g_autoptr (SimQueue) q = sim_queue_new ();
  for (guint64 i = 0; i < 1000; i++)
    {
      sim_queue_push (q, 500, dummy, NULL, i);
      sim_queue_push (q, (gint64) ((i * 7919) % 1000), dummy, NULL, 100000 + i);
    }
  SimQueueEvent ev;
  guint64 next = 0;
  gint64 last = -1;
  while (sim_queue_pop (q, &ev))
    {
      g_assert_cmpint (ev.time_ns, >=, last);
      last = ev.time_ns;
      if (ev.arg < 100000)
        g_assert_cmpuint (ev.arg, ==, next++);
    }
  g_assert_cmpuint (next, ==, 1000);
}

static void
test_cancel (void)
{
  g_autoptr (SimQueue) q = sim_queue_new ();
  guint64 a = sim_queue_push (q, 10, dummy, NULL, 1);
  guint64 b = sim_queue_push (q, 20, dummy, NULL, 2);
  guint64 c = sim_queue_push (q, 30, dummy, NULL, 3);
  g_assert_cmpuint (sim_queue_length (q), ==, 3);

  /* Cancel of the head: the next pop is the second event. */
  g_assert_true (sim_queue_cancel (q, a));
  g_assert_cmpuint (sim_queue_length (q), ==, 2);
  /* Double cancel. */
  g_assert_false (sim_queue_cancel (q, a));
  gint64 t;
  g_assert_true (sim_queue_peek_time (q, &t));
  g_assert_cmpint (t, ==, 20);

  SimQueueEvent ev;
  g_assert_true (sim_queue_pop (q, &ev));
  g_assert_cmpuint (ev.id, ==, b);
  /* Cancel of an id that already ran. */
  g_assert_false (sim_queue_cancel (q, b));
  /* The slot of b is reused by the next push: b's id must still be dead, the new one alive. */
  guint64 d = sim_queue_push (q, 25, dummy, NULL, 4);
  g_assert_cmpuint (d, !=, b);
  g_assert_false (sim_queue_cancel (q, b));
  g_assert_false (sim_queue_cancel (q, 0));
  g_assert_false (sim_queue_cancel (q, G_MAXUINT64));
  g_assert_true (sim_queue_cancel (q, c));
  g_assert_true (sim_queue_pop (q, &ev));
  g_assert_cmpuint (ev.id, ==, d);
  g_assert_false (sim_queue_pop (q, &ev));
  g_assert_cmpuint (sim_queue_length (q), ==, 0);
}

/* Mass cancellation triggers compaction; survivors keep their order. */
static void
test_cancel_many (void)
{
  g_autoptr (SimQueue) q = sim_queue_new ();
  guint64 ids[3000];
  for (guint64 i = 0; i < 3000; i++)
    ids[i] = sim_queue_push (q, (gint64) (i % 17), dummy, NULL, i);
  for (guint64 i = 0; i < 3000; i++)
    if (i % 10 != 0)
      g_assert_true (sim_queue_cancel (q, ids[i]));
  g_assert_cmpuint (sim_queue_length (q), ==, 300);
  SimQueueEvent ev, prev = { -1, 0, NULL, NULL, 0 };
  guint n = 0;
  while (sim_queue_pop (q, &ev))
    {
      g_assert_cmpuint (ev.arg % 10, ==, 0);
      g_assert_true (ev.time_ns > prev.time_ns || (ev.time_ns == prev.time_ns && ev.arg > prev.arg));
      prev = ev;
      n++;
    }
  g_assert_cmpuint (n, ==, 300);
}

/* Slot generations (the high half of event ids) are 32-bit and wrap after ~4·10^9 reuses of a slot;
 * starting them just below the wrap, ties must stay FIFO (stable buckets and sorts, no sequence
 * numbers) and a cancelled event must stay cancelled across it. */
static void
test_sequence_wrap (void)
{
  g_autoptr (SimQueue) q = sim_queue_new ();
  sim_queue_debug_set_next_seq (q, G_MAXUINT32 - 20);
  guint64 ids[100];
  for (guint64 i = 0; i < 100; i++)
    ids[i] = sim_queue_push (q, (gint64) (i % 3), dummy, NULL, i);
  g_assert_true (sim_queue_cancel (q, ids[4]));
  SimQueueEvent ev;
  for (gint64 t = 0; t < 3; t++)
    for (guint64 i = (guint64) t; i < 100; i += 3)
      {
        if (i == 4)
          continue;
        g_assert_true (sim_queue_pop (q, &ev));
        g_assert_cmpint (ev.time_ns, ==, t);
        g_assert_cmpuint (ev.arg, ==, i);
      }
  g_assert_false (sim_queue_pop (q, &ev));
}

/* Pops one event, which must be the reference's first (removed); returns its time. */
static gint64
pop_expect (SimQueue *q, GArray *ref)
{
  SimQueueEvent ev;
  g_assert_true (sim_queue_pop (q, &ev));
  Ref r = g_array_index (ref, Ref, 0);
  g_array_remove_index (ref, 0);
  g_assert_cmpuint (ev.id, ==, r.id);
  g_assert_cmpint (ev.time_ns, ==, r.time_ns);
  return ev.time_ns;
}

/* Pops everything left, in the reference's order, and then nothing. */
static void
drain_expect (SimQueue *q, GArray *ref)
{
  while (ref->len > 0)
    pop_expect (q, ref);
  SimQueueEvent ev;
  g_assert_false (sim_queue_pop (q, &ev));
}

/* Few cancelled events among many far apart in time: pulls carry the stale nodes down through the
 * levels (queue.c, STALE_CARRY) and the front drops them at its head. Times span three bytes, so
 * level-2 buckets are redistributed; about 1 push in 60 is cancelled, fewer than 1 node in 16 stays
 * stale. Every pop must still be the reference's, and no cancelled event may come out. */
static void
test_carry_stale (void)
{
  for (guint32 seed = 1; seed <= 8; seed++)
    {
      g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
      g_autoptr (SimQueue) q = sim_queue_new ();
      g_autoptr (GArray) ref = g_array_new (FALSE, FALSE, sizeof (Ref));
      g_autoptr (GArray) live = g_array_new (FALSE, FALSE, sizeof (guint64));
      guint64 order = 0;
      gint64 now = 0;
      for (int op = 0; op < 30000; op++)
        {
          int what = g_rand_int_range (rng, 0, 120);
          if (what < 60 || ref->len == 0)
            {
              Ref r = { now + g_rand_int_range (rng, 0, 1 << 20), order++, 0, order };
              r.id = sim_queue_push (q, r.time_ns, dummy, NULL, r.arg);
              ref_insert (ref, r);
              g_array_append_val (live, r.id);
            }
          else if (what < 119)
            now = pop_expect (q, ref);
          else
            {
              guint k = g_rand_int_range (rng, 0, live->len);
              guint64 id = g_array_index (live, guint64, k);
              g_array_remove_index_fast (live, k);
              g_assert_cmpint (sim_queue_cancel (q, id), ==, ref_cancel (ref, id));
            }
          g_assert_cmpuint (sim_queue_length (q), ==, ref->len);
        }
      drain_expect (q, ref);
    }
}

/* A front with a wide limit: after the pop at 0 the next pull makes a one-node level-2 bucket the
 * front, its limit 65,536 ns on, and thousands of pushes land inside that window, in random order
 * with ties, between pops. The front spills its later half back to the buckets (queue.c,
 * FRONT_SPILL) again and again; every pop must still be the reference's. */
static void
test_front_spill (void)
{
  for (guint32 seed = 1; seed <= 6; seed++)
    {
      g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
      g_autoptr (SimQueue) q = sim_queue_new ();
      g_autoptr (GArray) ref = g_array_new (FALSE, FALSE, sizeof (Ref));
      guint64 order = 0;
      gint64 starts[] = { 0, 1 << 20, 1 << 21 };
      for (int i = 0; i < 3; i++)
        {
          Ref r = { starts[i], order++, 0, order };
          r.id = sim_queue_push (q, r.time_ns, dummy, NULL, r.arg);
          ref_insert (ref, r);
        }
      gint64 now = 0;
      for (int op = 0; op < 20000; op++)
        {
          if (op < 2 || g_rand_int_range (rng, 0, 4) == 0)
            now = pop_expect (q, ref);
          else
            {
              /* inside the front's window, often on a time already queued */
              gint64 t = (1 << 20) + g_rand_int_range (rng, 0, 4096) * 16;
              t = MAX (t, now);
              Ref r = { t, order++, 0, order };
              r.id = sim_queue_push (q, r.time_ns, dummy, NULL, r.arg);
              ref_insert (ref, r);
            }
          g_assert_cmpuint (sim_queue_length (q), ==, ref->len);
        }
      drain_expect (q, ref);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/queue/random-vs-reference", test_random_vs_reference);
  g_test_add_func ("/sim/queue/ties-are-fifo", test_ties_are_fifo);
  g_test_add_func ("/sim/queue/cancel", test_cancel);
  g_test_add_func ("/sim/queue/cancel-many", test_cancel_many);
  g_test_add_func ("/sim/queue/carry-stale", test_carry_stale);
  g_test_add_func ("/sim/queue/front-spill", test_front_spill);
  g_test_add_func ("/sim/queue/sequence-wrap", test_sequence_wrap);
  return g_test_run ();
}
