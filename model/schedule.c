/* Pipeline schedules (see schedule.h for the orders and their sources).
 *
 * Equations, stage s of p, m micro-batches, v chunks per stage, all from Megatron-Core's
 * schedules.py (logic re-derived, not copied):
 *   1F1B        warm-up w = min(p − s − 1, m); then (F w+i, B i) for i < m − w; then B m−w .. m−1.
 *   interleaved group size g (microbatch_group_size_per_vp_stage, default p); the groups start at
 *               0, g, 2g, … and the last one, the first whose start + g >= m, takes every micro-batch
 *               left (get_schedule_table): table entry k (0 .. m·v−1) in a full group G = k / (g·v),
 *               r = k mod (g·v): chunk = r / g, micro-batch = G·g + r mod g; in the last group
 *               (start L·g, size S = m − L·g), k' = k − L·g·v: chunk = k' / S, micro-batch
 *               L·g + k' mod S;
 *               warm-up w = min((p − s − 1)·2 + (v − 1)·g, m·v);
 *               forward k = table[k]; backward k = table[k] with chunk v − 1 − chunk;
 *               order F 0..w−1, then (F w+i, B i) for i < m·v − w, then B m·v − w .. m·v − 1.
 *   GPipe       F 0..m−1 then B 0..m−1.
 *   DualPipe    H = p/2, h = min(s, p − 1 − s), M = m/2 per direction; phases 0/1 are the rank's
 *               own direction first (chunk 0 on the first half of the ranks, chunk 1 on the
 *               second); with F_x, B_x the next forward/backward of phase x and (F_x&B_y) an
 *               overlapped pair, the steps of dualpipe.py step():
 *               1: 2(H−h−1) × F_0;  2: (h+1) × (F_0, F_1);  3: (H−h−1) × (B_1, F_1);
 *               4: (M − p + h + 1) × ((F_0&B_1), (F_1&B_0)), the first F_0, B_1 of a middle rank
 *               (h = H − 1) not paired;  5: (H−h−1) × (B_1, (F_1&B_0));  6: (h+1) × (B_1, B_0);
 *               7: (H−h−1) × B_0. Each phase runs M forwards and M backwards.
 *               Zero bubble: step 3's B_1 and step 7's B_0 defer their weight gradients, and W
 *               (the oldest deferred) follows step 3's B_1 and precedes step 7's B_0; step 6
 *               defers from its middle on ((h+1)/2-th iteration: from B_1 when h is odd, from B_0
 *               when even); step 8 runs the h + 1 W left. 2(H − h − 1) + h + 1 W slots in all. */
#include "model/schedule.h"

gboolean
model_schedule_check (ModelSchedule kind, int pp, int vpp, int microbatches, GError **error)
{
  return model_schedule_check_grouped (kind, pp, vpp, microbatches, 0, error);
}

gboolean
model_schedule_check_grouped (ModelSchedule kind, int pp, int vpp, int microbatches, int group, GError **error)
{
  if (pp < 1 || vpp < 1 || microbatches < 1)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "pipeline schedule: pp=%d, vpp=%d, micro-batches=%d must all be >= 1; "
                   "check [parallel] pp, vpp and the global/micro batch sizes", pp, vpp, microbatches);
      return FALSE;
    }
  if (kind == MODEL_SCHED_DUALPIPE)
    {
      if (vpp != 2 || pp % 2 != 0 || pp > 128 || microbatches % 2 != 0 || microbatches < 2 * pp)
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "DualPipe needs vpp = 2 (the two pipeline copies), an even pp (at most 128) and an even "
                       "micro-batch count of at least 2*pp (got pp=%d, vpp=%d, micro-batches=%d), as "
                       "deepseek-ai/DualPipe asserts; change pp, vpp or the global/micro batch sizes",
                       pp, vpp, microbatches);
          return FALSE;
        }
      return TRUE;
    }
  if (kind != MODEL_SCHED_INTERLEAVED && vpp != 1)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "pipeline schedule %s cannot run vpp=%d model chunks per stage; "
                   "set [parallel] schedule=interleaved or vpp=1", model_schedule_name (kind), vpp);
      return FALSE;
    }
  int g = group > 0 ? group : pp;
  if (kind == MODEL_SCHED_INTERLEAVED && vpp > 1 && (g < pp || g > microbatches))
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "interleaved pipeline schedule: micro-batch group size %d must lie between pp (%d) and the "
                   "micro-batch count (%d), as Megatron-Core asks of microbatch_group_size_per_vp_stage; "
                   "change [parallel] microbatch_group_size or the batch sizes", g, pp, microbatches);
      return FALSE;
    }
  if (kind == MODEL_SCHED_INTERLEAVED && vpp > 1 && microbatches % g != 0 && microbatches % g < pp)
    {
      /* Megatron-Core raises for a final micro-batch group smaller than pp (it would stall). */
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "interleaved pipeline schedule needs the micro-batch count (%d) modulo the group size "
                   "(%d%s) to be 0 or at least pp (%d), as Megatron-Core does; change global_batch, micro_batch, dp "
                   "or [parallel] microbatch_group_size",
                   microbatches, g, group > 0 ? "" : ", pp by default", pp);
      return FALSE;
    }
  return TRUE;
}

int
model_schedule_n_slots (ModelSchedule kind, int pp, int vpp, int microbatches)
{
  return kind == MODEL_SCHED_DUALPIPE ? 2 * microbatches + pp : 2 * vpp * microbatches;
}

int
model_schedule_positions (ModelSchedule kind, int pp, int vpp)
{
  return kind == MODEL_SCHED_DUALPIPE ? pp : pp * vpp;
}

int
model_schedule_position (ModelSchedule kind, int pp, int vpp, int stage, int chunk)
{
  if (kind == MODEL_SCHED_DUALPIPE)
    return chunk == 0 ? stage : pp - 1 - stage;
  return chunk * pp + stage;
}

gboolean
model_schedule_next (ModelSchedule kind, int pp, int vpp, int stage, int chunk, ModelPass pass,
                     int *to_stage, int *to_chunk)
{
  gboolean fwd = pass == MODEL_PASS_FORWARD;
  if (kind == MODEL_SCHED_DUALPIPE)
    {
      int to = stage + ((chunk == 0) == fwd ? 1 : -1);
      *to_stage = to;
      *to_chunk = chunk;
      return to >= 0 && to < pp;
    }
  int vs = chunk * pp + stage + (fwd ? 1 : -1);
  *to_stage = vs >= 0 ? vs % pp : 0;
  *to_chunk = vs >= 0 ? vs / pp : 0;
  return vs >= 0 && vs < pp * vpp;
}

static gboolean
is_interleaved (ModelSchedule kind, int vpp)
{
  return kind == MODEL_SCHED_INTERLEAVED && vpp > 1;
}

int
model_schedule_warmup (ModelSchedule kind, int pp, int vpp, int microbatches, int stage)
{
  return model_schedule_warmup_grouped (kind, pp, vpp, microbatches, 0, stage);
}

int
model_schedule_warmup_grouped (ModelSchedule kind, int pp, int vpp, int microbatches, int group, int stage)
{
  g_return_val_if_fail (stage >= 0 && stage < pp, 0);
  int g = group > 0 ? group : pp;
  int total = is_interleaved (kind, vpp) ? microbatches * vpp : microbatches;
  int w;
  if (kind == MODEL_SCHED_DUALPIPE)
    /* Steps 1 and 2, 2(H − h − 1) + 2(h + 1); a middle rank's step 4 opens with an unpaired F_0. */
    return pp + (MIN (stage, pp - 1 - stage) == pp / 2 - 1);
  if (kind == MODEL_SCHED_GPIPE)
    w = total;
  else if (is_interleaved (kind, vpp))
    w = (pp - stage - 1) * 2 + (vpp - 1) * g;
  else /* 1F1B, or interleaved with one chunk */
    w = pp - stage - 1;
  return MIN (w, total);
}

/* The k-th entry of the interleaved table (forward order) for m micro-batches in groups of g. */
static void
table_entry (int k, int m, int g, int vpp, int *mb, int *chunk)
{
  int last = (m - 1) / g; /* the last group: the first whose start + g >= m */
  if (k < last * g * vpp)
    {
      int group = k / (g * vpp), r = k % (g * vpp);
      *chunk = r / g;
      *mb = group * g + r % g;
      return;
    }
  int size = m - last * g, r = k - last * g * vpp;
  *chunk = r / size;
  *mb = last * g + r % size;
}

static ModelScheduleSlot
slot_at (ModelSchedule kind, int vpp, int m, int g, int k, ModelPass pass)
{
  ModelScheduleSlot s = { k, 0, pass, FALSE, FALSE, FALSE };
  if (is_interleaved (kind, vpp))
    {
      table_entry (k, m, g, vpp, &s.microbatch, &s.chunk);
      if (pass == MODEL_PASS_BACKWARD)
        s.chunk = vpp - 1 - s.chunk;
    }
  return s;
}

typedef struct {
  ModelScheduleSlot *out;
  int n, next[2][2]; /* next micro-batch per (pass, chunk) */
  int chunk_of[2];   /* phase -> chunk */
  int wq[64], wq_mb[64], w_head, w_tail; /* deferred weight gradients (chunk, micro-batch), FIFO */
} Dual;

static void
dual_put (Dual *d, ModelPass pass, int phase, gboolean overlap_next, gboolean zb)
{
  int c = d->chunk_of[phase];
  ModelScheduleSlot s = { d->next[pass][c]++, c, pass, overlap_next, zb, FALSE };
  if (zb)
    {
      g_assert (d->w_tail - d->w_head < 64);
      d->wq[d->w_tail % 64] = c;
      d->wq_mb[d->w_tail++ % 64] = s.microbatch;
    }
  d->out[d->n++] = s;
}

static void
dual_weight (Dual *d)
{
  g_assert (d->w_head < d->w_tail);
  ModelScheduleSlot s = { d->wq_mb[d->w_head % 64], d->wq[d->w_head % 64], MODEL_PASS_BACKWARD, FALSE, FALSE, TRUE };
  d->w_head++;
  d->out[d->n++] = s;
}

static int
dual_fill (int pp, int m, int stage, ModelScheduleSlot *out)
{
  int H = pp / 2, h = MIN (stage, pp - 1 - stage), M = m / 2;
  gboolean middle = h == H - 1;
  Dual d = { out, 0, { { 0, 0 }, { 0, 0 } }, { stage < H ? 0 : 1, stage < H ? 1 : 0 }, { 0 }, { 0 }, 0, 0 };
  const ModelPass F = MODEL_PASS_FORWARD, B = MODEL_PASS_BACKWARD;
  for (int i = 0; i < 2 * (H - h - 1); i++)
    dual_put (&d, F, 0, FALSE, FALSE);
  for (int i = 0; i < h + 1; i++)
    {
      dual_put (&d, F, 0, FALSE, FALSE);
      dual_put (&d, F, 1, FALSE, FALSE);
    }
  for (int i = 0; i < H - h - 1; i++)
    {
      dual_put (&d, B, 1, FALSE, TRUE);
      dual_weight (&d);
      dual_put (&d, F, 1, FALSE, FALSE);
    }
  for (int i = 0; i < M - pp + h + 1; i++)
    {
      /* The reference code leaves a middle rank's first pair unoverlapped to shorten the bubble. */
      gboolean pair = !(i == 0 && middle);
      dual_put (&d, F, 0, pair, FALSE);
      dual_put (&d, B, 1, FALSE, FALSE);
      dual_put (&d, F, 1, TRUE, FALSE);
      dual_put (&d, B, 0, FALSE, FALSE);
    }
  for (int i = 0; i < H - h - 1; i++)
    {
      dual_put (&d, B, 1, FALSE, FALSE);
      dual_put (&d, F, 1, TRUE, FALSE);
      dual_put (&d, B, 0, FALSE, FALSE);
    }
  gboolean zb = FALSE;
  for (int i = 0; i < h + 1; i++)
    {
      if (i == (h + 1) / 2 && h % 2 == 1)
        zb = TRUE;
      dual_put (&d, B, 1, FALSE, zb);
      if (i == (h + 1) / 2 && h % 2 == 0)
        zb = TRUE;
      dual_put (&d, B, 0, FALSE, zb);
    }
  for (int i = 0; i < H - h - 1; i++)
    {
      dual_weight (&d);
      dual_put (&d, B, 0, FALSE, TRUE);
    }
  for (int i = 0; i < h + 1; i++)
    dual_weight (&d);
  g_assert (d.w_head == d.w_tail);
  g_assert (d.n == 2 * m + 2 * (H - h - 1) + h + 1);
  return d.n;
}

int
model_schedule_fill (ModelSchedule kind, int pp, int vpp, int microbatches, int stage,
                     ModelScheduleSlot *out)
{
  return model_schedule_fill_grouped (kind, pp, vpp, microbatches, 0, stage, out);
}

int
model_schedule_fill_grouped (ModelSchedule kind, int pp, int vpp, int microbatches, int group, int stage,
                             ModelScheduleSlot *out)
{
  g_return_val_if_fail (model_schedule_check_grouped (kind, pp, vpp, microbatches, group, NULL), 0);
  g_return_val_if_fail (stage >= 0 && stage < pp && out != NULL, 0);
  if (kind == MODEL_SCHED_DUALPIPE)
    return dual_fill (pp, microbatches, stage, out);
  int g = group > 0 ? group : pp, m = microbatches;
  int total = is_interleaved (kind, vpp) ? m * vpp : m;
  int w = model_schedule_warmup_grouped (kind, pp, vpp, m, group, stage);
  int n = 0;
  for (int k = 0; k < w; k++)
    out[n++] = slot_at (kind, vpp, m, g, k, MODEL_PASS_FORWARD);
  for (int i = 0; i < total - w; i++)
    {
      out[n++] = slot_at (kind, vpp, m, g, w + i, MODEL_PASS_FORWARD);
      out[n++] = slot_at (kind, vpp, m, g, i, MODEL_PASS_BACKWARD);
    }
  for (int k = total - w; k < total; k++)
    out[n++] = slot_at (kind, vpp, m, g, k, MODEL_PASS_BACKWARD);
  g_assert (n == model_schedule_n_slots (kind, pp, vpp, microbatches));
  return n;
}

gboolean
model_schedule_parse (const char *s, ModelSchedule *out)
{
  static const struct { const char *name; ModelSchedule kind; } names[] = {
    { "gpipe", MODEL_SCHED_GPIPE }, { "1f1b", MODEL_SCHED_1F1B },
    { "interleaved", MODEL_SCHED_INTERLEAVED }, { "dualpipe", MODEL_SCHED_DUALPIPE },
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
    case MODEL_SCHED_DUALPIPE: return "dualpipe";
    default: return "?";
    }
}
