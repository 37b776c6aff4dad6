/* SimEngine: the simulation clock and its event loop, a thin layer over SimQueue (sim/des/queue.h).
 * Like redis' ae.c, it only pops the earliest event, advances the clock to it and calls it; all the
 * policy (what an event means) lives in the callbacks. The queue's push and pop are inlined from
 * sim/des/queue-private.h: the engine checks its arguments once, and the clock never runs behind the
 * queue's last pop, which is all the unchecked versions require. */
#include "config.h"
#include "sim/des/engine.h"
#include "sim/des/queue-private.h"

struct SimEngine {
  SimQueue *queue;
  gint64 now_ns;
  gboolean stop;
};

SimEngine *
sim_engine_new (void)
{
  SimEngine *engine = g_new0 (SimEngine, 1);
  engine->queue = sim_queue_new ();
  return engine;
}

void
sim_engine_free (SimEngine *engine)
{
  if (engine == NULL)
    return;
  sim_queue_free (engine->queue);
  g_free (engine);
}

gint64
sim_engine_now (const SimEngine *engine)
{
  g_return_val_if_fail (engine != NULL, 0);
  return engine->now_ns;
}

guint64
sim_engine_at (SimEngine *engine, gint64 at_ns, SimEventFn fn, gpointer data, guint64 arg)
{
  g_return_val_if_fail (engine != NULL, 0);
  g_return_val_if_fail (fn != NULL, 0);
  /* An event in the past would break causality: a programming error, not a recoverable one. */
  g_return_val_if_fail (at_ns >= engine->now_ns, 0);
  return sim_queue_push_unchecked (engine->queue, at_ns, (SimQueueFn) fn, data, arg);
}

guint64
sim_engine_after (SimEngine *engine, gint64 delay_ns, SimEventFn fn, gpointer data, guint64 arg)
{
  g_return_val_if_fail (engine != NULL, 0);
  g_return_val_if_fail (delay_ns >= 0 && delay_ns <= G_MAXINT64 - engine->now_ns, 0);
  g_return_val_if_fail (fn != NULL, 0);
  return sim_queue_push_unchecked (engine->queue, engine->now_ns + delay_ns, (SimQueueFn) fn, data, arg);
}

gboolean
sim_engine_cancel (SimEngine *engine, guint64 id)
{
  g_return_val_if_fail (engine != NULL, FALSE);
  return id != 0 && sim_queue_cancel (engine->queue, id);
}

guint64
sim_engine_run (SimEngine *engine, gint64 until_ns)
{
  g_return_val_if_fail (engine != NULL, 0);
  g_return_val_if_fail (until_ns < 0 || until_ns >= engine->now_ns, 0);
  guint64 n = 0;
  SimQueue *queue = engine->queue;
  guint64 limit_ns = until_ns < 0 ? G_MAXUINT64 : (guint64) until_ns;
  SimQueueEvent ev;
  engine->stop = FALSE;
  while (!engine->stop && sim_queue_pop_until_unchecked (queue, limit_ns, &ev))
    {
      engine->now_ns = ev.time_ns;
      ((SimEventFn) ev.fn) (engine, ev.data, ev.arg);
      n++;
    }
  /* Running to a horizon means the clock reaches it, so later relative schedules start there. */
  if (!engine->stop && until_ns >= 0)
    engine->now_ns = until_ns;
  return n;
}

void
sim_engine_stop (SimEngine *engine)
{
  g_return_if_fail (engine != NULL);
  engine->stop = TRUE;
}

guint64
sim_engine_pending (const SimEngine *engine)
{
  g_return_val_if_fail (engine != NULL, 0);
  return sim_queue_length (engine->queue);
}
