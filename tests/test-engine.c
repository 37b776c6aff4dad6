/* SimEngine: clock, ordering, cancel, run horizons, the 10^7-event run. */
#include "config.h"
#include <glib.h>
#include "sim/des/engine.h"

typedef struct {
  GArray *log;  /* (now, arg) pairs in execution order */
  guint64 cancel_id;
} Rec;

typedef struct {
  gint64 now_ns;
  guint64 arg;
} Entry;

static void
record (SimEngine *engine, gpointer data, guint64 arg)
{
  Rec *rec = data;
  Entry e = { sim_engine_now (engine), arg };
  g_array_append_val (rec->log, e);
}

static void
test_order_and_clock (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Rec rec = { g_array_new (FALSE, FALSE, sizeof (Entry)), 0 };
  const gint64 times[] = { 50, 10, 30, 10, 0, 1000000000000 };
  for (guint i = 0; i < G_N_ELEMENTS (times); i++)
    sim_engine_at (engine, times[i], record, &rec, i);
  g_assert_cmpuint (sim_engine_pending (engine), ==, 6);
  g_assert_cmpuint (sim_engine_run (engine, -1), ==, 6);
  /* Sorted by time, the two events at 10 in scheduling order (args 1 then 3). */
  const Entry want[] = { { 0, 4 }, { 10, 1 }, { 10, 3 }, { 30, 2 }, { 50, 0 }, { 1000000000000, 5 } };
  g_assert_cmpuint (rec.log->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_assert_cmpint (g_array_index (rec.log, Entry, i).now_ns, ==, want[i].now_ns);
      g_assert_cmpuint (g_array_index (rec.log, Entry, i).arg, ==, want[i].arg);
    }
  g_assert_cmpint (sim_engine_now (engine), ==, 1000000000000);
  g_assert_cmpuint (sim_engine_pending (engine), ==, 0);
  g_array_unref (rec.log);
}

/* An event scheduled at "now" from inside an event runs after everything already due at now. */
static void
chain (SimEngine *engine, gpointer data, guint64 arg)
{
  record (engine, data, arg);
  if (arg == 0)
    sim_engine_after (engine, 0, record, data, 99);
}

static void
test_ties_are_fifo (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Rec rec = { g_array_new (FALSE, FALSE, sizeof (Entry)), 0 };
  sim_engine_at (engine, 5, chain, &rec, 0);
  for (guint64 i = 1; i <= 100; i++)
    sim_engine_at (engine, 5, record, &rec, i);
  sim_engine_run (engine, -1);
  g_assert_cmpuint (rec.log->len, ==, 102);
  for (guint i = 0; i <= 100; i++)
    g_assert_cmpuint (g_array_index (rec.log, Entry, i).arg, ==, i);
  g_assert_cmpuint (g_array_index (rec.log, Entry, 101).arg, ==, 99);
  g_array_unref (rec.log);
}

static void
cancel_other (SimEngine *engine, gpointer data, guint64 arg)
{
  Rec *rec = data;
  record (engine, data, arg);
  g_assert_true (sim_engine_cancel (engine, rec->cancel_id));
  g_assert_false (sim_engine_cancel (engine, rec->cancel_id));
}

static void
test_cancel (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Rec rec = { g_array_new (FALSE, FALSE, sizeof (Entry)), 0 };
  guint64 head = sim_engine_at (engine, 1, record, &rec, 1);
  guint64 second = sim_engine_at (engine, 2, cancel_other, &rec, 2);
  rec.cancel_id = sim_engine_at (engine, 3, record, &rec, 3);
  sim_engine_at (engine, 4, record, &rec, 4);
  g_assert_true (sim_engine_cancel (engine, head));   /* the head */
  g_assert_false (sim_engine_cancel (engine, head));  /* twice */
  g_assert_false (sim_engine_cancel (engine, 0));
  g_assert_cmpuint (sim_engine_pending (engine), ==, 3);
  g_assert_cmpuint (sim_engine_run (engine, -1), ==, 2);  /* 2 ran and cancelled 3; then 4 */
  g_assert_false (sim_engine_cancel (engine, second));   /* already ran */
  g_assert_cmpuint (rec.log->len, ==, 2);
  g_assert_cmpuint (g_array_index (rec.log, Entry, 0).arg, ==, 2);
  g_assert_cmpuint (g_array_index (rec.log, Entry, 1).arg, ==, 4);
  g_array_unref (rec.log);
}

static void
test_run_until (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Rec rec = { g_array_new (FALSE, FALSE, sizeof (Entry)), 0 };
  for (guint64 t = 10; t <= 100; t += 10)
    sim_engine_at (engine, (gint64) t, record, &rec, t);
  /* Events at times <= 35 run; the clock then stands at the horizon. */
  g_assert_cmpuint (sim_engine_run (engine, 35), ==, 3);
  g_assert_cmpint (sim_engine_now (engine), ==, 35);
  g_assert_cmpuint (sim_engine_pending (engine), ==, 7);
  /* An event exactly at the horizon runs. */
  g_assert_cmpuint (sim_engine_run (engine, 40), ==, 1);
  sim_engine_after (engine, 5, record, &rec, 45);  /* relative to the horizon: t = 45 */
  g_assert_cmpuint (sim_engine_run (engine, -1), ==, 7);
  g_assert_cmpint (g_array_index (rec.log, Entry, 4).now_ns, ==, 45);
  g_assert_cmpint (sim_engine_now (engine), ==, 100);
  g_array_unref (rec.log);
}

static void
stopper (SimEngine *engine, gpointer data, guint64 arg)
{
  record (engine, data, arg);
  sim_engine_stop (engine);
}

static void
test_stop (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Rec rec = { g_array_new (FALSE, FALSE, sizeof (Entry)), 0 };
  sim_engine_at (engine, 1, record, &rec, 1);
  sim_engine_at (engine, 2, stopper, &rec, 2);
  sim_engine_at (engine, 3, record, &rec, 3);
  g_assert_cmpuint (sim_engine_run (engine, 100), ==, 2);
  g_assert_cmpint (sim_engine_now (engine), ==, 2);  /* a stop does not jump to the horizon */
  g_assert_cmpuint (sim_engine_run (engine, -1), ==, 1);
  g_array_unref (rec.log);
}

static void
test_past_rejected (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Rec rec = { g_array_new (FALSE, FALSE, sizeof (Entry)), 0 };
  sim_engine_at (engine, 100, record, &rec, 0);
  sim_engine_run (engine, -1);
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*at_ns >= engine->now_ns*");
  g_assert_cmpuint (sim_engine_at (engine, 99, record, &rec, 1), ==, 0);
  g_test_assert_expected_messages ();
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*delay_ns >= 0*");
  g_assert_cmpuint (sim_engine_after (engine, -1, record, &rec, 1), ==, 0);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (sim_engine_pending (engine), ==, 0);
  g_array_unref (rec.log);
}

/* 10^7 events through a queue held at 1000 pending (each event schedules its successor at a
 * pseudo-random delay). Checks the count, that time never goes backwards, and that the queue ends
 * empty. About 1 s optimized and ~2 s under ASan+UBSan on the 2-core CI machine. */
#define BIG_EVENTS 10000000

typedef struct {
  guint64 rng;
  guint64 to_schedule;
  guint64 executed;
  gint64 last_ns;
} Big;

static void
big_event (SimEngine *engine, gpointer data, guint64 arg)
{
  Big *b = data;
  gint64 now = sim_engine_now (engine);
  g_assert (now >= b->last_ns);
  b->last_ns = now;
  b->executed++;
  if (b->to_schedule > 0)
    {
      b->to_schedule--;
      b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;  /* LCG (Knuth MMIX) */
      sim_engine_after (engine, (gint64) (b->rng >> 44), big_event, b, arg);  /* 0 .. 2^20 ns */
    }
}

static void
test_ten_million (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  Big b = { 42, BIG_EVENTS - 1000, 0, 0 };
  for (guint64 i = 0; i < 1000; i++)
    sim_engine_at (engine, (gint64) i, big_event, &b, i);
  gint64 t0 = g_get_monotonic_time ();
  guint64 n = sim_engine_run (engine, -1);
  gint64 t1 = g_get_monotonic_time ();
  g_test_message ("%d events in %.2f s", BIG_EVENTS, (t1 - t0) * 1e-6);
  g_assert_cmpuint (n, ==, BIG_EVENTS);
  g_assert_cmpuint (b.executed, ==, BIG_EVENTS);
  g_assert_cmpuint (sim_engine_pending (engine), ==, 0);
}

/* Sensitivities: an event's derivatives are its cause's plus the delay the scheduler declared. A
 * chain a -> b (delay d(b) = (1, 0)) -> c (no declared delay) and a -> x (delay (0, 2)): c carries
 * (1, 0) and x (0, 2); a cancelled event's slot, reused, carries the new event's. */
typedef struct {
  double seen[4][2];
  guint64 cancel;
} SensRec;

static void
sens_record (SimEngine *engine, gpointer data, guint64 arg)
{
  SensRec *rec = data;
  const double *d = sim_engine_sens (engine);
  rec->seen[arg][0] = d[0];
  rec->seen[arg][1] = d[1];
  if (arg == 0)
    {
      static const double db[2] = { 1, 0 }, dx[2] = { 0, 2 };
      sim_engine_delay_sens (engine, db);
      sim_engine_after (engine, 10, sens_record, rec, 1);
      sim_engine_delay_sens (engine, dx);
      g_assert_true (sim_engine_cancel (engine, rec->cancel));
      sim_engine_after (engine, 20, sens_record, rec, 3);
    }
  else if (arg == 1)
    sim_engine_after (engine, 5, sens_record, rec, 2);
}

static void
test_sensitivities (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  g_assert_null (sim_engine_sens (engine));
  sim_engine_enable_sens (engine, 2);
  SensRec rec = { { { 0 } } };
  sim_engine_at (engine, 0, sens_record, &rec, 0);
  rec.cancel = sim_engine_at (engine, 50, sens_record, &rec, 2);
  g_assert_cmpuint (sim_engine_run (engine, -1), ==, 4);
  g_assert_cmpfloat (rec.seen[1][0], ==, 1);
  g_assert_cmpfloat (rec.seen[1][1], ==, 0);
  g_assert_cmpfloat (rec.seen[2][0], ==, 1);
  g_assert_cmpfloat (rec.seen[2][1], ==, 0);
  g_assert_cmpfloat (rec.seen[3][0], ==, 0);
  g_assert_cmpfloat (rec.seen[3][1], ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/engine/order-and-clock", test_order_and_clock);
  g_test_add_func ("/sim/engine/ties-are-fifo", test_ties_are_fifo);
  g_test_add_func ("/sim/engine/cancel", test_cancel);
  g_test_add_func ("/sim/engine/run-until", test_run_until);
  g_test_add_func ("/sim/engine/stop", test_stop);
  g_test_add_func ("/sim/engine/past-rejected", test_past_rejected);
  g_test_add_func ("/sim/engine/ten-million-events", test_ten_million);
  g_test_add_func ("/sim/engine/sensitivities", test_sensitivities);
  return g_test_run ();
}
