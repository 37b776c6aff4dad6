/* SimEngine: the simulation clock and its event loop, a thin layer over SimQueue (sim/des/queue.h).
 * Like redis' ae.c, it only pops the earliest event, advances the clock to it and calls it; all the
 * policy (what an event means) lives in the callbacks. The queue's push and pop are inlined from
 * sim/des/queue-private.h: the engine checks its arguments once, and the clock never runs behind the
 * queue's last pop, which is all the unchecked versions require. */
#include "config.h"
#include <string.h>
#include "sim/des/engine.h"
#include "sim/des/queue-private.h"

struct SimEngine {
  SimQueue *queue;
  gint64 now_ns;
  gboolean stop;
  /* sensitivities (sim_engine_enable_sens): n per queue slot, the running event's, the next delay's */
  int n_sens;
  double *slot_sens, *cur_sens, *delay_sens;
  guint32 cap_slots;
  gboolean has_delay;
};

/* The event just pushed as `id` takes the running event's derivatives plus the declared delay's. */
static void
sens_push (SimEngine *engine, guint64 id)
{
  guint32 s = (guint32) id;
  int n = engine->n_sens;
  if (s >= engine->cap_slots)
    {
      guint32 cap = MAX (s + 1, 2 * engine->cap_slots);
      engine->slot_sens = g_renew (double, engine->slot_sens, (gsize) cap * n);
      engine->cap_slots = cap;
    }
  double *d = engine->slot_sens + (gsize) s * n;
  for (int i = 0; i < n; i++)
    d[i] = engine->cur_sens[i] + (engine->has_delay ? engine->delay_sens[i] : 0.0);
  if (engine->has_delay)
    {
      memset (engine->delay_sens, 0, sizeof (double) * n);
      engine->has_delay = FALSE;
    }
}

void
sim_engine_enable_sens (SimEngine *engine, int n)
{
  g_return_if_fail (engine != NULL && n > 0 && engine->n_sens == 0);
  engine->n_sens = n;
  engine->cur_sens = g_new0 (double, n);
  engine->delay_sens = g_new0 (double, n);
}

int
sim_engine_sens_n (const SimEngine *engine)
{
  g_return_val_if_fail (engine != NULL, 0);
  return engine->n_sens;
}

const double *
sim_engine_sens (const SimEngine *engine)
{
  g_return_val_if_fail (engine != NULL, NULL);
  return engine->cur_sens;
}

void
sim_engine_delay_sens (SimEngine *engine, const double *d)
{
  g_return_if_fail (engine != NULL && d != NULL);
  if (engine->n_sens == 0)
    return;
  for (int i = 0; i < engine->n_sens; i++)
    engine->delay_sens[i] += d[i];
  engine->has_delay = TRUE;
}

void
sim_engine_next_sens (SimEngine *engine, const double *d)
{
  g_return_if_fail (engine != NULL && d != NULL);
  if (engine->n_sens == 0)
    return;
  for (int i = 0; i < engine->n_sens; i++)
    engine->delay_sens[i] = d[i] - engine->cur_sens[i];
  engine->has_delay = TRUE;
}

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
  g_free (engine->slot_sens);
  g_free (engine->cur_sens);
  g_free (engine->delay_sens);
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
  guint64 id = sim_queue_push_unchecked (engine->queue, at_ns, (SimQueueFn) fn, data, arg);
  if (G_UNLIKELY (engine->n_sens))
    sens_push (engine, id);
  return id;
}

guint64
sim_engine_after (SimEngine *engine, gint64 delay_ns, SimEventFn fn, gpointer data, guint64 arg)
{
  g_return_val_if_fail (engine != NULL, 0);
  g_return_val_if_fail (delay_ns >= 0 && delay_ns <= G_MAXINT64 - engine->now_ns, 0);
  g_return_val_if_fail (fn != NULL, 0);
  guint64 id = sim_queue_push_unchecked (engine->queue, engine->now_ns + delay_ns, (SimQueueFn) fn, data, arg);
  if (G_UNLIKELY (engine->n_sens))
    sens_push (engine, id);
  return id;
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
      if (G_UNLIKELY (engine->n_sens))
        memcpy (engine->cur_sens, engine->slot_sens + (gsize) (guint32) ev.id * engine->n_sens,
                sizeof (double) * engine->n_sens);
      ((SimEventFn) ev.fn) (engine, ev.data, ev.arg);
      n++;
    }
  /* Outside events the running derivatives are zero (what scheduling from outside starts from). */
  if (engine->n_sens)
    memset (engine->cur_sens, 0, sizeof (double) * engine->n_sens);
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
