/* Pipeline schedules (see schedule.h for the orders and their sources).
 *
 * Equations, stage s of p, m micro-batches, v chunks per stage, all from Megatron-Core's
 * schedules.py (logic re-derived, not copied):
 *   1F1B        warm-up w = min(p − s − 1, m); then (F w+i, B i) for i < m − w; then B m−w .. m−1.
 *   interleaved group size g = p (Megatron's default microbatch_group_size_per_vp_stage);
 *               table entry k (0 .. m·v−1): group G = k / (g·v), r = k mod (g·v),
 *               chunk = r / g, micro-batch = G·g + r mod g;
 *               warm-up w = min((p − s − 1)·2 + (v − 1)·g, m·v);
 *               forward k = table[k]; backward k = table[k] with chunk v − 1 − chunk;
 *               order F 0..w−1, then (F w+i, B i) for i < m·v − w, then B m·v − w .. m·v − 1.
 *   GPipe       F 0..m−1 then B 0..m−1. */
#include "model/schedule.h"

gboolean
model_schedule_check (ModelSchedule kind, int pp, int vpp, int microbatches, GError **error)
{
  if (pp < 1 || vpp < 1 || microbatches < 1)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "pipeline schedule: pp=%d, vpp=%d, micro-batches=%d must all be >= 1; "
                   "check [parallel] pp, vpp and the global/micro batch sizes", pp, vpp, microbatches);
      return FALSE;
    }
  if (kind != MODEL_SCHED_INTERLEAVED && vpp != 1)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "pipeline schedule %s cannot run vpp=%d model chunks per stage; "
                   "set [parallel] schedule=interleaved or vpp=1", model_schedule_name (kind), vpp);
      return FALSE;
    }
  if (kind == MODEL_SCHED_INTERLEAVED && vpp > 1 && microbatches % pp != 0)
    {
      /* Megatron-Core raises for a final micro-batch group smaller than pp (it would stall). */
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "interleaved pipeline schedule needs the micro-batch count (%d) to be a multiple "
                   "of pp (%d), as Megatron-Core does; change global_batch, micro_batch or dp",
                   microbatches, pp);
      return FALSE;
    }
  return TRUE;
}

int
model_schedule_n_slots (int vpp, int microbatches)
{
  return 2 * vpp * microbatches;
}

static gboolean
is_interleaved (ModelSchedule kind, int vpp)
{
  return kind == MODEL_SCHED_INTERLEAVED && vpp > 1;
}

int
model_schedule_warmup (ModelSchedule kind, int pp, int vpp, int microbatches, int stage)
{
  g_return_val_if_fail (stage >= 0 && stage < pp, 0);
  int total = is_interleaved (kind, vpp) ? microbatches * vpp : microbatches;
  int w;
  if (kind == MODEL_SCHED_GPIPE)
    w = total;
  else if (is_interleaved (kind, vpp))
    w = (pp - stage - 1) * 2 + (vpp - 1) * pp;
  else /* 1F1B, or interleaved with one chunk */
    w = pp - stage - 1;
  return MIN (w, total);
}

/* The k-th entry of the interleaved table (forward order). */
static void
table_entry (int k, int pp, int vpp, int *mb, int *chunk)
{
  int group = k / (pp * vpp), r = k % (pp * vpp);
  *chunk = r / pp;
  *mb = group * pp + r % pp;
}

static ModelScheduleSlot
slot_at (ModelSchedule kind, int pp, int vpp, int k, ModelPass pass)
{
  ModelScheduleSlot s = { k, 0, pass };
  if (is_interleaved (kind, vpp))
    {
      table_entry (k, pp, vpp, &s.microbatch, &s.chunk);
      if (pass == MODEL_PASS_BACKWARD)
        s.chunk = vpp - 1 - s.chunk;
    }
  return s;
}

void
model_schedule_fill (ModelSchedule kind, int pp, int vpp, int microbatches, int stage,
                     ModelScheduleSlot *out)
{
  g_return_if_fail (model_schedule_check (kind, pp, vpp, microbatches, NULL));
  g_return_if_fail (stage >= 0 && stage < pp && out != NULL);
  int total = is_interleaved (kind, vpp) ? microbatches * vpp : microbatches;
  int w = model_schedule_warmup (kind, pp, vpp, microbatches, stage);
  int n = 0;
  for (int k = 0; k < w; k++)
    out[n++] = slot_at (kind, pp, vpp, k, MODEL_PASS_FORWARD);
  for (int i = 0; i < total - w; i++)
    {
      out[n++] = slot_at (kind, pp, vpp, w + i, MODEL_PASS_FORWARD);
      out[n++] = slot_at (kind, pp, vpp, i, MODEL_PASS_BACKWARD);
    }
  for (int k = total - w; k < total; k++)
    out[n++] = slot_at (kind, pp, vpp, k, MODEL_PASS_BACKWARD);
  g_assert (n == model_schedule_n_slots (vpp, microbatches));
}

gboolean
model_schedule_parse (const char *s, ModelSchedule *out)
{
  static const struct { const char *name; ModelSchedule kind; } names[] = {
    { "gpipe", MODEL_SCHED_GPIPE }, { "1f1b", MODEL_SCHED_1F1B },
    { "interleaved", MODEL_SCHED_INTERLEAVED },
  };
  for (gsize i = 0; s != NULL && i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (s, names[i].name) == 0)
      {
        *out = names[i].kind;
        return TRUE;
      }
  return FALSE;
}

const char *
model_schedule_name (ModelSchedule kind)
{
  switch (kind)
    {
    case MODEL_SCHED_GPIPE: return "gpipe";
    case MODEL_SCHED_1F1B: return "1f1b";
    case MODEL_SCHED_INTERLEAVED: return "interleaved";
    default: return "?";
    }
}
