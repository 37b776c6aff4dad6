/* Hold-model benchmark of the event engine (the classic priority-queue benchmark): the queue is
 * filled to a steady size n, then every executed event schedules one new event at now + an
 * exponential increment, so the pending count stays n while events run. Reports events/s for
 * n = 10^3, 10^5, 10^6. Increments are drawn beforehand from a seeded splitmix64 stream (seed
 * printed) into a table of 4096 exponential samples that the events cycle through, so the figure
 * measures the engine rather than libm's log(); the mean increment (1 ms) keeps ties rare. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <glib.h>

/* CPU time of this process in microseconds: the CI machine is shared, so wall time would also
 * count time spent descheduled. */
static gint64
cpu_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
#include "sim/des/engine.h"
#include "sim/des/heap.h"

#define MEAN_INCREMENT_NS 1e6

#define N_INCREMENTS 4096

typedef struct {
  gint64 increment_ns[N_INCREMENTS];
  guint32 next;
  guint64 remaining;  /* events still to schedule */
} Hold;

static guint64
splitmix64 (guint64 *state)
{
  guint64 z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static gint64
exp_increment (guint64 *state)
{
  double u = ((splitmix64 (state) >> 11) + 0.5) * 0x1.0p-53;  /* (0, 1) */
  return (gint64) (-MEAN_INCREMENT_NS * log (u));
}

static void
hold_event (SimEngine *engine, gpointer data, guint64 arg)
{
  Hold *h = data;
  sim_engine_after (engine, h->increment_ns[h->next++ % N_INCREMENTS], hold_event, h, arg);
  if (--h->remaining == 0)
    sim_engine_stop (engine);  /* the queue keeps its n pending events for the next phase */
}

static double
run_hold (guint64 n_pending, guint64 n_events, guint64 seed)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  static Hold h;
  guint64 rng = seed;
  for (int i = 0; i < N_INCREMENTS; i++)
    h.increment_ns[i] = exp_increment (&rng);
  h.next = 0;
  for (guint64 i = 0; i < n_pending; i++)
    sim_engine_at (engine, exp_increment (&rng), hold_event, &h, i);
  /* Warm-up: one pass over the queue so the heap reaches its steady shape before timing. */
  h.remaining = n_pending;
  sim_engine_run (engine, -1);
  g_assert (sim_engine_pending (engine) == n_pending);
  h.remaining = n_events;
  gint64 t0 = cpu_us ();
  guint64 done = sim_engine_run (engine, -1);
  gint64 t1 = cpu_us ();
  g_assert (done == n_events && sim_engine_pending (engine) == n_pending);
  return done / ((t1 - t0) * 1e-6);
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  guint64 seed = argc > 1 ? g_ascii_strtoull (argv[1], NULL, 10) : 20241122;
  guint64 sizes[] = { 1000, 100000, 1000000 };
  if (argc > 2)  /* one size only, for profiling: bench/engine SEED N [EVENTS] */
    for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
      sizes[i] = g_ascii_strtoull (argv[2], NULL, 10);
  double rate[G_N_ELEMENTS (sizes)];
  printf ("# hold model: steady pending n, one pop + one push per event, exp increments (mean %.0f ns), seed %" G_GUINT64_FORMAT "\n",
          MEAN_INCREMENT_NS, seed);
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      guint64 n_events = argc > 3 ? g_ascii_strtoull (argv[3], NULL, 10) : 20000000;
      double best = 0;
      for (int rep = 0; rep < 3; rep++)
        {
          double r = run_hold (sizes[i], n_events, seed + rep);
          best = r > best ? r : best;
        }
      rate[i] = best;
      printf ("pending=%-8" G_GUINT64_FORMAT " events=%" G_GUINT64_FORMAT "  best of 3: %.1f M events/s\n",
              sizes[i], n_events, best / 1e6);
    }
  printf ("events_per_s_1e3=%.0f events_per_s_1e5=%.0f events_per_s_1e6=%.0f\n", rate[0], rate[1], rate[2]);
  return 0;
}
