/* Pipeline schedules: counts, ordering, dependency feasibility and the bubble of a unit-time
 * execution against the closed forms of Narayanan et al. (SC21): (p−1)/m for GPipe and 1F1B,
 * (p−1)/(v·m) for interleaved 1F1B, on uniform stages with no communication time. */
#include <string.h>
#include <glib.h>
#include "model/schedule.h"

typedef struct {
  int p, v, m;
  gint64 makespan;       /* -1: deadlock */
  gint64 busy_per_stage; /* m·v·(tf + tb) */
} UnitRun;

/* Executes every stage's slot list in order; a forward of (stage, chunk) needs the forward of the
 * same micro-batch on the (stage, chunk) before it in its pipeline (model_schedule_next backwards:
 * chunk c on the last stage feeds chunk c+1 on the first when interleaved; DualPipe's second copy
 * runs from the last rank to the first), a backward needs the backward after it (or, at the
 * pipeline's end, its own forward). Each slot takes tf or tb time units and starts as soon as its
 * stage is free and its dependency is done (communication takes no time); an overlapped pair
 * (overlap_next) starts when both of its slots could and takes tf + tb (no communication to hide).
 * List scheduling to a fixed point: if some stage's next slot can never become ready, the schedule
 * deadlocks. */
/* The interleaved micro-batch group size unit_run_w fills with (0: pp). */
static int unit_group;

static UnitRun
unit_run_w (ModelSchedule kind, int p, int v, int m, gint64 tf, gint64 tb, gint64 tw)
{
  UnitRun r = { p, v, m, -1, (gint64) m * (kind == MODEL_SCHED_DUALPIPE ? 1 : v) * (tf + tb) };
  int n = model_schedule_n_slots (kind, p, v, m);
  ModelScheduleSlot *slots = g_new (ModelScheduleSlot, (gsize) p * n);
  int *count = g_new (int, p);
  gint64 *fdone = g_new (gint64, (gsize) p * v * m), *bdone = g_new (gint64, (gsize) p * v * m);
  int *next = g_new0 (int, p);
  gint64 *free_at = g_new0 (gint64, p);
  for (int i = 0; i < p * v * m; i++)
    fdone[i] = bdone[i] = -1;
  int total = 0;
  for (int s = 0; s < p; s++)
    total += count[s] = model_schedule_fill_grouped (kind, p, v, m, unit_group, s, slots + (gsize) s * n);
#define AT(st, c, mb) ((((gsize) (st) * v) + (c)) * m + (mb))
  gboolean progress = TRUE;
  int done = 0;
  while (progress)
    {
      progress = FALSE;
      for (int s = 0; s < p; s++)
        while (next[s] < count[s])
          {
            int np = slots[(gsize) s * n + next[s]].overlap_next ? 2 : 1;
            gint64 start = free_at[s];
            for (int j = 0; j < np && start >= 0; j++)
              {
                ModelScheduleSlot *sl = &slots[(gsize) s * n + next[s] + j];
                int ts, tc;
                gint64 dep;
                if (sl->weight)
                  dep = 0; /* its backward ran before it on this stage */
                else if (sl->pass == MODEL_PASS_FORWARD)
                  dep = model_schedule_next (kind, p, v, s, sl->chunk, MODEL_PASS_BACKWARD, &ts, &tc)
                          ? fdone[AT (ts, tc, sl->microbatch)] : 0;
                else
                  dep = model_schedule_next (kind, p, v, s, sl->chunk, MODEL_PASS_FORWARD, &ts, &tc)
                          ? bdone[AT (ts, tc, sl->microbatch)] : fdone[AT (s, sl->chunk, sl->microbatch)];
                start = dep < 0 ? -1 : MAX (start, dep);
              }
            if (start < 0)
              break;
            for (int j = 0; j < np; j++)
              {
                ModelScheduleSlot *sl = &slots[(gsize) s * n + next[s]];
                start += sl->pass == MODEL_PASS_FORWARD ? tf : sl->weight ? tw : sl->zb ? tb - tw : tb;
                if (!sl->weight)
                  (sl->pass == MODEL_PASS_FORWARD ? fdone : bdone)[AT (s, sl->chunk, sl->microbatch)] = start;
                next[s]++;
                done++;
              }
            /* A pair's slots both end when it ends. */
            if (np == 2)
              for (int j = 1; j <= 2; j++)
                {
                  ModelScheduleSlot *sl = &slots[(gsize) s * n + next[s] - j];
                  (sl->pass == MODEL_PASS_FORWARD ? fdone : bdone)[AT (s, sl->chunk, sl->microbatch)] = start;
                }
            free_at[s] = start;
            progress = TRUE;
          }
    }
#undef AT
  if (done == total)
    for (int s = 0; s < p; s++)
      r.makespan = MAX (r.makespan, free_at[s]);
  g_free (slots); g_free (fdone); g_free (bdone); g_free (next); g_free (free_at); g_free (count);
  return r;
}

static UnitRun
unit_run (ModelSchedule kind, int p, int v, int m, gint64 tf, gint64 tb)
{
  return unit_run_w (kind, p, v, m, tf, tb, 0);
}

static void
test_counts_and_order (void)
{
  const ModelSchedule kinds[] = { MODEL_SCHED_GPIPE, MODEL_SCHED_1F1B, MODEL_SCHED_INTERLEAVED };
  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    for (int p = 1; p <= 8; p *= 2)
      for (int v = 1; v <= (kinds[k] == MODEL_SCHED_INTERLEAVED ? 4 : 1); v++)
        for (int m = p; m <= 4 * p; m += p)
          for (int s = 0; s < p; s++)
            {
              int n = model_schedule_n_slots (kinds[k], p, v, m);
              g_autofree ModelScheduleSlot *sl = g_new (ModelScheduleSlot, n);
              g_autofree int *fpos = g_new (int, v * m);
              g_autofree int *bpos = g_new (int, v * m);
              for (int i = 0; i < v * m; i++)
                fpos[i] = bpos[i] = -1;
              model_schedule_fill (kinds[k], p, v, m, s, sl);
              for (int i = 0; i < n; i++)
                {
                  g_assert_cmpint (sl[i].microbatch, >=, 0);
                  g_assert_cmpint (sl[i].microbatch, <, m);
                  g_assert_cmpint (sl[i].chunk, >=, 0);
                  g_assert_cmpint (sl[i].chunk, <, v);
                  int *pos = sl[i].pass == MODEL_PASS_FORWARD ? fpos : bpos;
                  g_assert_cmpint (pos[sl[i].chunk * m + sl[i].microbatch], ==, -1); /* once each */
                  pos[sl[i].chunk * m + sl[i].microbatch] = i;
                }
              for (int i = 0; i < v * m; i++)
                g_assert_cmpint (fpos[i], <, bpos[i]); /* both present (>= 0), F before B */
              /* Warm-up = leading forwards before the first backward. */
              int w = 0;
              while (sl[w].pass == MODEL_PASS_FORWARD)
                w++;
              int total = v * m;
              int expect = kinds[k] == MODEL_SCHED_GPIPE ? total
                           : v > 1 ? MIN ((p - s - 1) * 2 + (v - 1) * p, total)
                                   : MIN (p - s - 1, total);
              /* The steady phase opens with one more forward before the first backward. */
              g_assert_cmpint (w, ==, MIN (expect + 1, total));
              g_assert_cmpint (model_schedule_warmup (kinds[k], p, v, m, s), ==, expect);
            }
}

/* Megatron-Core's order for p=2, v=2, m=4, written out by hand from the table
 * k → (mb, chunk): 0→(0,0) 1→(1,0) 2→(0,1) 3→(1,1) 4→(2,0) 5→(3,0) 6→(2,1) 7→(3,1).
 * Stage 0 warms up (2−0−1)·2 + (2−1)·2 = 4 forwards, stage 1 warms up 2. */
static void
test_interleaved_by_hand (void)
{
  static const char *expect[2] = {
    "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0",
    "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0",
  };
  for (int s = 0; s < 2; s++)
    {
      ModelScheduleSlot sl[16];
      model_schedule_fill (MODEL_SCHED_INTERLEAVED, 2, 2, 4, s, sl);
      g_autoptr (GString) got = g_string_new (NULL);
      for (int i = 0; i < 16; i++)
        g_string_append_printf (got, "%s%c%d.%d", i ? " " : "",
                                sl[i].pass == MODEL_PASS_FORWARD ? 'F' : 'B', sl[i].microbatch, sl[i].chunk);
      g_assert_cmpstr (got->str, ==, expect[s]);
    }
}

/* 1F1B on 4 stages, 6 micro-batches, last stage: no warm-up, strict alternation. */
static void
test_1f1b_last_stage (void)
{
  ModelScheduleSlot sl[12];
  model_schedule_fill (MODEL_SCHED_1F1B, 4, 1, 6, 3, sl);
  for (int i = 0; i < 12; i++)
    {
      g_assert_cmpint (sl[i].pass, ==, i % 2 ? MODEL_PASS_BACKWARD : MODEL_PASS_FORWARD);
      g_assert_cmpint (sl[i].microbatch, ==, i / 2);
    }
}

/* No deadlock, and the bubble fraction (makespan − busy)/busy equals the closed form exactly:
 * bubble time (p−1)·(tf+tb) per stage with per-chunk times tf, tb (Narayanan et al. SC21 eq. 1
 * and §2.2), i.e. (p−1)/m of the ideal time for GPipe/1F1B and (p−1)/(v·m) interleaved. */
static void
test_bubble (void)
{
  const gint64 times[][2] = { { 1, 1 }, { 1, 2 }, { 2, 3 } };
  for (gsize t = 0; t < G_N_ELEMENTS (times); t++)
    for (int p = 1; p <= 8; p *= 2)
      for (int v = 1; v <= 4; v++)
        for (int m = p; m <= 4 * p; m += p)
          {
            ModelSchedule kinds[3] = { MODEL_SCHED_INTERLEAVED, MODEL_SCHED_1F1B, MODEL_SCHED_GPIPE };
            for (int k = 0; k < (v == 1 ? 3 : 1); k++)
              {
                UnitRun r = unit_run (kinds[k], p, v, m, times[t][0], times[t][1]);
                if (r.makespan < 0)
                  g_error ("%s p=%d v=%d m=%d deadlocks", model_schedule_name (kinds[k]), p, v, m);
                gint64 bubble = r.makespan - r.busy_per_stage;
                /* bubble / busy == (p−1)/(v·m)  ⇔  bubble·v·m == (p−1)·busy (exact integers) */
                if (bubble * v * m != (gint64) (p - 1) * r.busy_per_stage)
                  g_error ("%s p=%d v=%d m=%d tf=%" G_GINT64_FORMAT " tb=%" G_GINT64_FORMAT
                           ": makespan %" G_GINT64_FORMAT ", busy %" G_GINT64_FORMAT,
                           model_schedule_name (kinds[k]), p, v, m, times[t][0], times[t][1],
                           r.makespan, r.busy_per_stage);
              }
          }
}

/* DualPipe (model/schedule.h): every micro-batch of each copy once forward and once backward on
 * each rank, forward first; a W slot for each zero-bubble backward, after it and in its order
 * (2(H − h − 1) + h + 1 of them); no deadlock; every rank starts with pp forwards (a middle rank
 * pp + 1); the pairs are forward-then-backward of the two copies. */
static void
test_dualpipe (void)
{
  for (int p = 2; p <= 16; p *= 2)
    for (int m = 2 * p; m <= 4 * p + 2; m += 2)
      {
        int cap = model_schedule_n_slots (MODEL_SCHED_DUALPIPE, p, 2, m);
        g_assert_cmpint (cap, ==, 2 * m + p);
        for (int s = 0; s < p; s++)
          {
            g_autofree ModelScheduleSlot *sl = g_new (ModelScheduleSlot, cap);
            g_autofree int *fpos = g_new (int, m), *bpos = g_new (int, m), *wpos = g_new (int, m);
            for (int i = 0; i < m; i++)
              fpos[i] = bpos[i] = wpos[i] = -1;
            int n = model_schedule_fill (MODEL_SCHED_DUALPIPE, p, 2, m, s, sl);
            int h = MIN (s, p - 1 - s), H = p / 2, zbs = 0, ws = 0, last_w = -1;
            g_assert_cmpint (n, ==, 2 * m + 2 * (H - h - 1) + h + 1);
            for (int i = 0; i < n; i++)
              {
                g_assert_cmpint (sl[i].microbatch, <, m / 2);
                int key = sl[i].chunk * (m / 2) + sl[i].microbatch;
                int *pos = sl[i].weight ? wpos : sl[i].pass == MODEL_PASS_FORWARD ? fpos : bpos;
                g_assert_cmpint (pos[key], ==, -1);
                pos[key] = i;
                zbs += sl[i].zb;
                if (sl[i].weight)
                  {
                    /* After its backward, and the oldest deferred one: backwards' order. */
                    g_assert_cmpint (bpos[key], >=, 0);
                    g_assert_true (sl[bpos[key]].zb);
                    g_assert_cmpint (bpos[key], >, last_w);
                    last_w = bpos[key];
                    ws++;
                  }
                if (sl[i].overlap_next)
                  {
                    g_assert_cmpint (i + 1, <, n);
                    g_assert_cmpint (sl[i].pass, ==, MODEL_PASS_FORWARD);
                    g_assert_cmpint (sl[i + 1].pass, ==, MODEL_PASS_BACKWARD);
                    g_assert_false (sl[i + 1].zb || sl[i + 1].weight);
                    g_assert_cmpint (sl[i + 1].chunk, !=, sl[i].chunk);
                  }
              }
            g_assert_cmpint (zbs, ==, ws);
            g_assert_cmpint (ws, ==, 2 * (H - h - 1) + h + 1);
            for (int i = 0; i < m; i++)
              g_assert_cmpint (fpos[i], <, bpos[i]);
            int w = 0;
            while (sl[w].pass == MODEL_PASS_FORWARD)
              w++;
            g_assert_cmpint (w, ==, p + (h == H - 1)); /* a middle rank: one more */
            g_assert_cmpint (model_schedule_warmup (MODEL_SCHED_DUALPIPE, p, 2, m, s), ==, w);
          }
        /* Times (tf, tb, tw): the backward tb includes its weight gradients tw. */
        const gint64 times[][3] = { { 1, 1, 0 }, { 1, 2, 0 }, { 2, 3, 0 }, { 2, 4, 2 }, { 1, 2, 1 }, { 3, 5, 2 } };
        for (gsize t = 0; t < G_N_ELEMENTS (times); t++)
          {
            gint64 tf = times[t][0], tb = times[t][1], tw = times[t][2];
            UnitRun r = unit_run_w (MODEL_SCHED_DUALPIPE, p, 2, m, tf, tb, tw);
            if (r.makespan < 0)
              g_error ("dualpipe p=%d m=%d deadlocks", p, m);
            /* The paper's bubble (arXiv 2412.19437 Table 2), (p/2 − 1)(F&B + B − 3W), a pair taking
             * F&B = tf + tb here (no communication to hide): (p/2 − 1)(tf + 2tb − 3tw). With the W
             * split (tw > 0) the list schedule meets it exactly, as without it when tf = tb; it
             * never exceeds it; always under 1F1B's (p − 1)(tf + tb); the W split only shortens it;
             * independent of m. */
            gint64 bubble = r.makespan - r.busy_per_stage;
            gint64 paper = (gint64) (p / 2 - 1) * (tf + 2 * tb - 3 * tw);
            UnitRun plain = unit_run_w (MODEL_SCHED_DUALPIPE, p, 2, m, tf, tb, 0);
            g_test_message ("dualpipe p=%d m=%d tf=%" G_GINT64_FORMAT " tb=%" G_GINT64_FORMAT " tw=%" G_GINT64_FORMAT
                            ": bubble %" G_GINT64_FORMAT ", paper %" G_GINT64_FORMAT, p, m, tf, tb, tw, bubble, paper);
            g_assert_cmpint (bubble, <=, paper);
            if (tw > 0 || tf == tb)
              g_assert_cmpint (bubble, ==, paper);
            g_assert_cmpint (bubble, <=, plain.makespan - plain.busy_per_stage);
            if (p > 2)
              g_assert_cmpint (bubble, <, (gint64) (p - 1) * (tf + tb));
            else
              g_assert_cmpint (bubble, ==, 0);
          }
      }
  GError *error = NULL;
  g_assert_false (model_schedule_check (MODEL_SCHED_DUALPIPE, 4, 2, 6, &error)); /* m < 2p */
  g_clear_error (&error);
  g_assert_false (model_schedule_check (MODEL_SCHED_DUALPIPE, 3, 2, 12, &error)); /* odd pp */
  g_clear_error (&error);
  g_assert_false (model_schedule_check (MODEL_SCHED_DUALPIPE, 4, 1, 8, &error)); /* one chunk */
  g_clear_error (&error);
  g_assert_true (model_schedule_check (MODEL_SCHED_DUALPIPE, 4, 2, 8, NULL));
  ModelSchedule k;
  g_assert_true (model_schedule_parse ("dualpipe", &k) && k == MODEL_SCHED_DUALPIPE);
}

/* Megatron-Core's table with microbatch_group_size_per_vp_stage g = 3 for p = 2, v = 2, m = 5: groups
 * at 0 (full, 3 micro-batches) and 3 (the last, 3 + 3 >= 5, size 2), k → (mb, chunk): 0→(0,0) 1→(1,0)
 * 2→(2,0) 3→(0,1) 4→(1,1) 5→(2,1) 6→(3,0) 7→(4,0) 8→(3,1) 9→(4,1). Stage 0 warms up
 * (2−0−1)·2 + (2−1)·3 = 5 forwards. Such counts (m not a multiple of p) run deadlock-free with g;
 * the check takes g in [p, m] with m mod g 0 or at least p. */
static void
test_interleaved_groups (void)
{
  ModelScheduleSlot sl[20];
  int n = model_schedule_fill_grouped (MODEL_SCHED_INTERLEAVED, 2, 2, 5, 3, 0, sl);
  GString *got = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf (got, "%s%c%d.%d", i ? " " : "", sl[i].pass == MODEL_PASS_FORWARD ? 'F' : 'B',
                            sl[i].microbatch, sl[i].chunk);
  g_assert_cmpstr (got->str, ==,
                   "F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 B0.1 F3.0 B1.1 F4.0 B2.1 F3.1 B0.0 F4.1 B1.0 B2.0 B3.1 B4.1 B3.0 B4.0");
  g_string_free (got, TRUE);
  g_assert_cmpint (model_schedule_warmup_grouped (MODEL_SCHED_INTERLEAVED, 2, 2, 5, 3, 0), ==, 5);
  const struct { int p, v, m, g; } ok[] = { { 2, 2, 5, 3 }, { 4, 2, 6, 6 }, { 4, 3, 9, 5 }, { 8, 4, 12, 12 }, { 4, 2, 8, 4 } };
  for (gsize i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      g_assert_true (model_schedule_check_grouped (MODEL_SCHED_INTERLEAVED, ok[i].p, ok[i].v, ok[i].m, ok[i].g, NULL));
      unit_group = ok[i].g;
      UnitRun r = unit_run (MODEL_SCHED_INTERLEAVED, ok[i].p, ok[i].v, ok[i].m, 1, 2);
      unit_group = 0;
      g_assert_cmpint (r.makespan, >=, r.busy_per_stage); /* no deadlock */
    }
  GError *error = NULL;
  g_assert_false (model_schedule_check_grouped (MODEL_SCHED_INTERLEAVED, 4, 2, 6, 0, &error)); /* 6 mod 4 = 2 */
  g_assert_nonnull (strstr (error->message, "pp by default"));
  g_clear_error (&error);
  g_assert_false (model_schedule_check_grouped (MODEL_SCHED_INTERLEAVED, 4, 2, 6, 3, &error)); /* g < p */
  g_clear_error (&error);
  g_assert_false (model_schedule_check_grouped (MODEL_SCHED_INTERLEAVED, 4, 2, 6, 7, &error)); /* g > m */
  g_clear_error (&error);
  g_assert_false (model_schedule_check_grouped (MODEL_SCHED_INTERLEAVED, 4, 2, 9, 4, &error)); /* 9 mod 4 = 1 */
  g_clear_error (&error);
}

static void
test_check (void)
{
  GError *error = NULL;
  g_assert_true (model_schedule_check (MODEL_SCHED_INTERLEAVED, 8, 12, 8, NULL));
  g_assert_false (model_schedule_check (MODEL_SCHED_INTERLEAVED, 8, 12, 12, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_clear_error (&error);
  g_assert_false (model_schedule_check (MODEL_SCHED_1F1B, 4, 2, 8, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_clear_error (&error);
  g_assert_false (model_schedule_check (MODEL_SCHED_GPIPE, 0, 1, 8, &error));
  g_clear_error (&error);
  /* 1F1B takes any micro-batch count, even fewer than stages. */
  g_assert_true (model_schedule_check (MODEL_SCHED_1F1B, 8, 1, 3, NULL));
  ModelSchedule k;
  g_assert_true (model_schedule_parse ("Interleaved", &k) && k == MODEL_SCHED_INTERLEAVED);
  g_assert_false (model_schedule_parse ("zb-v", &k));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/schedule/counts-and-order", test_counts_and_order);
  g_test_add_func ("/model/schedule/interleaved-by-hand", test_interleaved_by_hand);
  g_test_add_func ("/model/schedule/interleaved-groups", test_interleaved_groups);
  g_test_add_func ("/model/schedule/1f1b-last-stage", test_1f1b_last_stage);
  g_test_add_func ("/model/schedule/bubble", test_bubble);
  g_test_add_func ("/model/schedule/check", test_check);
  g_test_add_func ("/model/schedule/dualpipe", test_dualpipe);
  return g_test_run ();
}
