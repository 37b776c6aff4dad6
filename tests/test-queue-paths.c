/* SimQueue's internal paths (sim/des/queue.c) against a reference, with times spread so that every one
 * is taken: pulls of level-0 buckets, of small buckets (insertion sort), of level-1 buckets sorted
 * by the level-2 presort, left unsorted by pushes (counting sort) or by a level-3 redistribution,
 * redistributions from every level, pushes into the front (after a peek, earlier than its head),
 * cancels (stale nodes met in the front and in redistributions, compaction) and the wrap of a slot's
 * 32-bit generation. The reference is a GTree keyed by (time, push order): whatever the queue does
 * inside, each pop must return the reference's minimum. */
#include "config.h"
#include <math.h>
#include <glib.h>
#include "sim/des/queue.h"

static void dummy (void) {}

typedef struct {
  gint64 time_ns;
  guint64 order;
} Key;

typedef struct {
  Key key;
  guint64 id;
} Ref;

static gint
key_cmp (gconstpointer a, gconstpointer b, gpointer unused)
{
  const Key *x = a, *y = b;
  (void) unused;
  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

typedef struct {
  GTree *tree;       /* Key -> Ref, pending events */
  GHashTable *by_id; /* id -> Ref, pending events */
  guint64 order;
} Model;

static guint64
model_push (Model *m, SimQueue *q, gint64 t)
{
  Ref *r = g_new (Ref, 1);
  r->key = (Key) { t, m->order++ };
  r->id = sim_queue_push (q, t, dummy, r, r->key.order);
  g_assert_cmpuint (r->id, !=, 0);
  g_assert_null (g_hash_table_lookup (m->by_id, &r->id));  /* ids of pending events are unique */
  g_tree_insert (m->tree, &r->key, r);
  g_hash_table_insert (m->by_id, &r->id, r);
  return r->id;
}

static gboolean
first_ref (gpointer key, gpointer value, gpointer data)
{
  (void) key;
  *(Ref **) data = value;
  return TRUE;
}

/* Pops one event and checks it against the reference minimum; returns its time. */
static gint64
model_pop (Model *m, SimQueue *q)
{
  Ref *want = NULL;
  g_tree_foreach (m->tree, first_ref, &want);
  SimQueueEvent ev;
  gboolean got = sim_queue_pop (q, &ev);
  g_assert_cmpint (got, ==, want != NULL);
  if (!got)
    return -1;
  g_assert_cmpint (ev.time_ns, ==, want->key.time_ns);
  g_assert_cmpuint (ev.arg, ==, want->key.order);
  g_assert_cmpuint (ev.id, ==, want->id);
  g_assert_true (ev.data == want);
  g_tree_remove (m->tree, &want->key);
  g_hash_table_remove (m->by_id, &want->id);
  g_free (want);
  return ev.time_ns;
}

static void
model_cancel (Model *m, SimQueue *q, guint64 id)
{
  Ref *r = g_hash_table_lookup (m->by_id, &id);
  g_assert_cmpint (sim_queue_cancel (q, id), ==, r != NULL);
  if (r)
    {
      g_tree_remove (m->tree, &r->key);
      g_hash_table_remove (m->by_id, &id);
      g_free (r);
    }
}

static void
model_init (Model *m)
{
  m->tree = g_tree_new_full (key_cmp, NULL, NULL, NULL);
  m->by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  m->order = 0;
}

static void
model_clear (Model *m)
{
  GList *refs = g_hash_table_get_values (m->by_id);
  g_list_free_full (refs, g_free);
  g_tree_destroy (m->tree);
  g_hash_table_destroy (m->by_id);
}

/* Each case: pending size, spread of push times after now (uniform in [0, spread)), cancel share
 * and grid. A grid of 2^24 ns puts many times exactly at the lower bound of a level-3 or higher
 * bucket, which a redistribution sends straight to the front. Spreads from 8 ns (ties everywhere, level 0) through 2^40 ns (levels 4-5); with 3000
 * pending and a 2000 ns spread, level-1 buckets get ~400 nodes, mostly unsorted pushes. */
typedef struct {
  guint size;
  gint64 spread_ns;
  int cancel_pct;
  gint64 grid_ns;  /* > 0: spread-wide times are rounded up to a multiple of it */
} Case;

static gint64
on_grid (const Case *c, gint64 t)
{
  return c->grid_ns > 0 ? (t + c->grid_ns - 1) / c->grid_ns * c->grid_ns : t;
}

static void
run_case (const Case *c, guint32 seed)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  g_autoptr (SimQueue) q = sim_queue_new ();
  Model m;
  model_init (&m);
  gint64 now = 0;
  g_autoptr (GArray) issued = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < c->size; i++)
    model_push (&m, q, on_grid (c, now + (gint64) (g_rand_double (rng) * c->spread_ns)));
  for (guint op = 0; op < 6 * c->size; op++)
    {
      int what = g_rand_int_range (rng, 0, 100);
      if (what < 45)
        {
          gint64 t = model_pop (&m, q);
          now = t >= 0 ? t : now;
        }
      else if (what < 45 + 45)
        {
          /* Mostly spread-wide, sometimes at now (ties, pushes into the front) or at the peeked
           * minimum minus a little (earlier than the front's head, but not before now). */
          gint64 t = on_grid (c, now + (gint64) (g_rand_double (rng) * c->spread_ns));
          int how = g_rand_int_range (rng, 0, 10);
          if (how == 0)
            t = now;
          else if (how == 1)
            {
              gint64 head, back = g_rand_int_range (rng, 0, 3);
              if (sim_queue_peek_time (q, &head))
                t = MAX (now, head - back);
            }
          guint64 id = model_push (&m, q, t);
          g_array_append_val (issued, id);
        }
      else if (what < 90 + c->cancel_pct / 2 && issued->len > 0)
        model_cancel (&m, q, g_array_index (issued, guint64, g_rand_int_range (rng, 0, issued->len)));
      else
        {
          gint64 t;
          gboolean any = sim_queue_peek_time (q, &t);
          g_assert_cmpint (any, ==, g_tree_nnodes (m.tree) > 0);
        }
      g_assert_cmpuint (sim_queue_length (q), ==, g_tree_nnodes (m.tree));
    }
  /* Mass cancel, then drain. */
  for (guint i = 0; i < issued->len; i++)
    if (g_rand_int_range (rng, 0, 100) < c->cancel_pct)
      model_cancel (&m, q, g_array_index (issued, guint64, i));
  while (model_pop (&m, q) >= 0)
    ;
  g_assert_cmpuint (sim_queue_length (q), ==, 0);
  model_clear (&m);
}

static void
test_spreads (void)
{
  const Case cases[] = {
    { 500, 8, 0 },          { 500, 8, 20 },           { 3000, 2000, 0 },       { 3000, 2000, 20 },
    { 3000, 70000, 0 },     { 3000, 70000, 10 },      { 2000, 1 << 24, 0 },    { 2000, 1 << 24, 30 },
    { 1000, G_GINT64_CONSTANT (1) << 40, 0 },         { 1000, G_GINT64_CONSTANT (1) << 40, 60 },
    { 40, 300, 0 },         { 40, 1 << 20, 50 },
    { 2000, G_GINT64_CONSTANT (1) << 32, 0, 1 << 24 }, { 2000, G_GINT64_CONSTANT (1) << 32, 20, 1 << 24 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (guint32 seed = 1; seed <= 3; seed++)
      run_case (&cases[i], seed * 100 + i);
}

/* A hold model (one push per pop, exponential increments) at 2000 pending, the benchmark's shape:
 * level-2 buckets are presorted and their level-1 buckets pulled without a sort. */
static void
test_hold (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  g_autoptr (SimQueue) q = sim_queue_new ();
  Model m;
  model_init (&m);
  gint64 now = 0;
  for (int i = 0; i < 2000; i++)
    model_push (&m, q, (gint64) (-20000.0 * log (1.0 - g_rand_double (rng))));
  for (int i = 0; i < 60000; i++)
    {
      now = model_pop (&m, q);
      model_push (&m, q, now + (gint64) (-20000.0 * log (1.0 - g_rand_double (rng))));
    }
  while (model_pop (&m, q) >= 0)
    ;
  model_clear (&m);
}

/* A slot's generation (the high half of its ids) wraps after 2^32 uses. A stale node of a cancelled
 * event must not come back to life when its slot's generation comes round, so the queue drops all
 * stale nodes at a wrap. The test starts the generations just below the wrap, cancels a far event
 * and cycles its slot through the wrap; ids stay non-zero and unique, the cancelled event never
 * pops, and an id from before the wrap stays dead. */
static void
test_generation_wrap (void)
{
  g_autoptr (SimQueue) q = sim_queue_new ();
  sim_queue_debug_set_next_seq (q, G_MAXUINT32 - 3);
  guint64 far = sim_queue_push (q, 1000000, dummy, NULL, 999);
  guint64 other = sim_queue_push (q, 2000000, dummy, NULL, 998);
  g_assert_true (sim_queue_cancel (q, far));
  SimQueueEvent ev;
  guint64 seen_ids[16];
  for (int i = 0; i < 16; i++)
    {
      /* The free list is LIFO: each push reuses the slot the cancel or the last pop released. */
      guint64 id = sim_queue_push (q, i, dummy, NULL, (guint64) i);
      g_assert_cmpuint (id, !=, 0);
      g_assert_cmpuint (id, !=, far);
      seen_ids[i] = id;
      g_assert_true (sim_queue_pop (q, &ev));
      g_assert_cmpuint (ev.arg, ==, (guint64) i);
      g_assert_cmpuint (ev.id, ==, id);
      g_assert_cmpuint (sim_queue_length (q), ==, 1);
    }
  /* The slot went through generations MAX-2 .. MAX, 1, 2, ...: the ids differ. */
  for (int i = 1; i < 16; i++)
    g_assert_cmpuint (seen_ids[i], !=, seen_ids[i - 1]);
  g_assert_false (sim_queue_cancel (q, far));
  g_assert_false (sim_queue_cancel (q, seen_ids[0]));
  g_assert_true (sim_queue_pop (q, &ev));
  g_assert_cmpuint (ev.id, ==, other);
  g_assert_false (sim_queue_pop (q, &ev));

  /* A cancel that wraps the generation: the compaction it causes drops its own node. */
  g_autoptr (SimQueue) q2 = sim_queue_new ();
  sim_queue_debug_set_next_seq (q2, G_MAXUINT32);
  guint64 a = sim_queue_push (q2, 5, dummy, NULL, 1);
  guint64 b = sim_queue_push (q2, 7, dummy, NULL, 2);
  guint64 c = sim_queue_push (q2, 1 << 30, dummy, NULL, 3);
  g_assert_true (sim_queue_cancel (q2, c));
  g_assert_cmpuint (sim_queue_length (q2), ==, 2);
  g_assert_true (sim_queue_cancel (q2, a));
  g_assert_cmpuint (sim_queue_length (q2), ==, 1);
  g_assert_true (sim_queue_pop (q2, &ev));
  g_assert_cmpuint (ev.id, ==, b);
  g_assert_false (sim_queue_pop (q2, &ev));
  g_assert_cmpuint (sim_queue_length (q2), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/queue/paths/spreads", test_spreads);
  g_test_add_func ("/sim/queue/paths/hold", test_hold);
  g_test_add_func ("/sim/queue/paths/generation-wrap", test_generation_wrap);
  return g_test_run ();
}
