/* SimFlowNet: completion times derived by hand, component isolation, local re-solves, batching,
 * agreement with an independent fluid simulation built on the brute-force max-min solver,
 * determinism. */
#include "config.h"
#include <math.h>
#include <string.h>
#include <glib.h>
#include "sim/des/engine.h"
#include "sim/net/flow.h"
#include "sim/net/maxmin.h"

typedef struct {
  SimEngine *engine;
  gint64 done_ns[4096];
  int n_done;
  guint64 order[4096];  /* args in completion order */
} Done;

static void
on_done (gpointer user, guint64 arg)
{
  Done *d = user;
  d->done_ns[arg] = sim_engine_now (d->engine);
  d->order[d->n_done++] = arg;
}

/* Link of 1 GB/s; A = 1 MB and B = 3 MB start together. Each gets 0.5 GB/s, so A finishes at
 * 1e6 / 0.5e9 = 2 ms. B has 3 - 1 = 2 MB left, alone at 1 GB/s: 2 ms more, t = 4 ms. */
static void
test_two_flows_one_link (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  guint32 path[] = { 0 };
  guint64 a = sim_flow_net_start (net, path, 1, 1e6, on_done, &d, 0);
  sim_flow_net_start (net, path, 1, 3e6, on_done, &d, 1);
  g_assert_cmpfloat (sim_flow_net_rate (net, a), ==, 0);  /* not solved until the batch runs */
  sim_engine_run (engine, 0);
  g_assert_cmpfloat (sim_flow_net_rate (net, a), ==, 0.5e9);
  g_assert_cmpint (sim_flow_net_active (net), ==, 2);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.n_done, ==, 2);
  g_assert_cmpint (d.done_ns[0], ==, 2000000);
  g_assert_cmpint (d.done_ns[1], ==, 4000000);
  g_assert_cmpfloat (sim_flow_net_rate (net, a), ==, 0);
  g_assert_cmpint (sim_flow_net_active (net), ==, 0);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 4e6, 1e-6);
}

/* A = 4 MB alone on 1 GB/s from t = 0 (would end at 4 ms). B = 1 MB joins at 1 ms, when A has
 * 3 MB left; both run at 0.5 GB/s, so B ends 2 ms later (t = 3 ms), by which A sent 1 MB more;
 * A's last 2 MB at 1 GB/s take 2 ms: t = 5 ms. */
typedef struct {
  SimFlowNet *net;
  Done *d;
} Join;

static void
start_b (SimEngine *engine, gpointer data, guint64 arg)
{
  Join *j = data;
  guint32 path[] = { 0 };
  sim_flow_net_start (j->net, path, 1, 1e6, on_done, j->d, 1);
}

static void
test_join_midway (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  Join j = { net, &d };
  guint32 path[] = { 0 };
  guint64 a = sim_flow_net_start (net, path, 1, 4e6, on_done, &d, 0);
  sim_engine_at (engine, 1000000, start_b, &j, 0);
  sim_engine_run (engine, 999999);
  g_assert_cmpfloat (sim_flow_net_rate (net, a), ==, 1e9);
  sim_engine_run (engine, 1000000);
  g_assert_cmpfloat (sim_flow_net_rate (net, a), ==, 0.5e9);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 1e6, 1e-6);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.done_ns[1], ==, 3000000);
  g_assert_cmpint (d.done_ns[0], ==, 5000000);
  g_assert_cmpint (d.order[0], ==, 1);
}

/* 10 bytes at 3 bytes/ns need 3.33 ns: the flow ends at 4 ns, never at 3. The link then counts
 * exactly 10 bytes, not the 12 it could carry in 4 ns. */
static void
test_never_early (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 3e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  guint32 path[] = { 0 };
  sim_flow_net_start (net, path, 1, 10, on_done, &d, 0);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.done_ns[0], ==, 4);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 10, 1e-9);
}

/* Flows with no links or no bytes end at the current time, from an event, not inside start. */
static void
test_degenerate (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  guint32 path[] = { 0 };
  sim_engine_run (engine, 50);
  guint64 a = sim_flow_net_start (net, NULL, 0, 1e6, on_done, &d, 0);
  sim_flow_net_start (net, path, 1, 0, on_done, &d, 1);
  g_assert_cmpint (d.n_done, ==, 0);
  g_assert_true (isinf (sim_flow_net_rate (net, a)));
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.n_done, ==, 2);
  g_assert_cmpint (d.done_ns[0], ==, 50);
  g_assert_cmpint (d.done_ns[1], ==, 50);
  g_assert_cmpfloat (sim_flow_net_link_bytes (net, 0), ==, 0);

  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*links[k] < *");
  guint32 bad[] = { 1 };
  g_assert_cmpuint (sim_flow_net_start (net, bad, 1, 1, on_done, &d, 2), ==, 0);
  g_test_assert_expected_messages ();
}

/* Two components: link 0 with X and Y, link 1 with Z. A flow added to link 0 re-solves only
 * link 0's three flows; Z keeps its rate and its completion event (1 GB at 1 GB/s: 1 s). */
static void
test_component_isolation (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9, 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 2);
  Done d = { engine };
  guint32 p0[] = { 0 }, p1[] = { 1 };
  sim_flow_net_start (net, p0, 1, 1e6, on_done, &d, 0);
  sim_flow_net_start (net, p0, 1, 1e6, on_done, &d, 1);
  guint64 z = sim_flow_net_start (net, p1, 1, 1e9, on_done, &d, 2);
  sim_engine_run (engine, 100);
  SimFlowNetStats s0 = sim_flow_net_stats (net);
  g_assert_cmpuint (s0.recomputes, ==, 1);
  g_assert_cmpuint (s0.flows_resolved, ==, 3);
  sim_flow_net_start (net, p0, 1, 1e6, on_done, &d, 3);
  sim_engine_run (engine, 200);
  SimFlowNetStats s1 = sim_flow_net_stats (net);
  g_assert_cmpuint (s1.recomputes, ==, 2);
  g_assert_cmpuint (s1.flows_resolved - s0.flows_resolved, ==, 3);
  g_assert_cmpfloat (sim_flow_net_rate (net, z), ==, 1e9);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.done_ns[2], ==, 1000000000);
  /* X and Y ran 100 ns at 0.5 GB/s (50 B each), then with the third flow W at 1/3 GB/s each:
   * 999,950 B take 2,999,850 ns, so X and Y end at 100 + 2,999,850 = 2,999,950 ns. W sent as much
   * as they did since t = 100, so 50 B remain, alone at 1 GB/s: 50 ns more, t = 3,000,000 ns. */
  g_assert_cmpint (d.done_ns[0], ==, 2999950);
  g_assert_cmpint (d.done_ns[1], ==, 2999950);
  g_assert_cmpint (d.done_ns[3], ==, 3000000);
}

/* 1000 flows, each over its own 100 GB/s link and a shared 7 GB/s core, start in one event: one
 * solve for all of them, bit-identical rates (7e6 B/s each), a single completion time
 * (1e6 B / 7e6 B/s = 142,857,142.86 ns, rounded up), and one more solve when they all end. */
typedef struct {
  SimFlowNet *net;
  Done *d;
  int n;
} Batch;

static void
start_batch (SimEngine *engine, gpointer data, guint64 arg)
{
  Batch *b = data;
  for (int i = 0; i < b->n; i++)
    {
      guint32 path[] = { (guint32) i, (guint32) b->n };
      sim_flow_net_start (b->net, path, 2, 1e6, on_done, b->d, (guint64) i);
    }
}

static void
test_simultaneous_batch (void)
{
  enum { N = 1000 };
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[N + 1];
  for (int l = 0; l < N; l++)
    cap[l] = 100e9;
  cap[N] = 7e9;
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, N + 1);
  static Done d;
  d = (Done) { engine };
  Batch b = { net, &d, N };
  sim_engine_at (engine, 10, start_batch, &b, 0);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.n_done, ==, N);
  for (int i = 0; i < N; i++)
    g_assert_cmpint (d.done_ns[i], ==, 10 + 142857143);
  SimFlowNetStats s = sim_flow_net_stats (net);
  g_assert_cmpuint (s.recomputes, ==, 2);
  g_assert_cmpuint (s.flows_resolved, ==, N);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, N), N * 1e6, 1e-3);
}

/* Random scenarios: flows with random paths and sizes start at random nanoseconds. The flow net's
 * completion times are compared with a fluid simulation written here from scratch on top of the
 * brute-force solver (continuous time, no rounding), and at many instants the live rates are
 * compared with the brute-force solution for the live flows. */
#define MAX_FLOWS 40
#define MAX_LINKS 10

typedef struct {
  int n_links, n_flows;
  double capacity[MAX_LINKS];
  gint64 start_ns[MAX_FLOWS];  /* sorted */
  gboolean chained;  /* the second half of the flows is started by the first half's completions */
  double bytes[MAX_FLOWS];
  double weight[MAX_FLOWS];    /* 0: unweighted (1) */
  int path_start[MAX_FLOWS + 1];
  guint32 path[MAX_FLOWS * 4];
} Scenario;

static double
weight_of (const Scenario *sc, int f)
{
  return sc->weight[f] > 0 ? sc->weight[f] : 1.0;
}

/* The weights of the flows of a compressed-rows subset (map[i]: scenario flow of row i). */
static void
weights_of (const Scenario *sc, const int *map, int n, double *w)
{
  for (int i = 0; i < n; i++)
    w[i] = weight_of (sc, map[i]);
}

typedef struct {
  const Scenario *sc;
  SimEngine *engine;
  SimFlowNet *net;
  Done done;
  guint64 id[MAX_FLOWS];
} Run;

static Scenario
random_scenario (GRand *rng)
{
  Scenario sc = { .n_links = g_rand_int_range (rng, 1, MAX_LINKS + 1),
                  .n_flows = g_rand_int_range (rng, 1, MAX_FLOWS + 1) };
  for (int l = 0; l < sc.n_links; l++)
    sc.capacity[l] = g_rand_boolean (rng) ? 25e9 * g_rand_int_range (rng, 1, 5)
                                          : g_rand_double_range (rng, 1e9, 1e11);
  gint64 t = 0;
  sc.path_start[0] = 0;
  for (int f = 0; f < sc.n_flows; f++)
    {
      /* Same-time starts are common (collectives); otherwise up to 20 us apart. */
      if (g_rand_int_range (rng, 0, 3) > 0)
        t += g_rand_int_range (rng, 0, 20000);
      sc.start_ns[f] = t;
      sc.bytes[f] = g_rand_boolean (rng) ? 1e6 : g_rand_double_range (rng, 1e3, 4e6);
      int n = g_rand_int_range (rng, 1, 5);
      for (int k = 0; k < n; k++)
        sc.path[sc.path_start[f] + k] = (guint32) g_rand_int_range (rng, 0, sc.n_links);
      sc.path_start[f + 1] = sc.path_start[f] + n;
    }
  return sc;
}

/* Continuous-time reference: between events all rates are constant; the next event is the
 * earliest start or completion. Times in double nanoseconds. */
static void
fluid_reference (const Scenario *sc, double *finish_ns)
{
  double remaining[MAX_FLOWS], rate[MAX_FLOWS];
  gboolean live[MAX_FLOWS] = { FALSE };
  int next_start = 0, n_ended = 0;
  double now = 0;
  while (n_ended < sc->n_flows)
    {
      while (next_start < sc->n_flows && sc->start_ns[next_start] <= now)
        {
          live[next_start] = TRUE;
          remaining[next_start] = sc->bytes[next_start];
          next_start++;
        }
      /* Solve for the live flows (compressed rows over the live subset). */
      int start[MAX_FLOWS + 1], map[MAX_FLOWS], n = 0;
      guint32 links[MAX_FLOWS * 4];
      start[0] = 0;
      for (int f = 0; f < sc->n_flows; f++)
        if (live[f])
          {
            int k0 = start[n];
            for (int k = sc->path_start[f]; k < sc->path_start[f + 1]; k++)
              links[k0++] = sc->path[k];
            map[n] = f;
            start[++n] = k0;
          }
      double r[MAX_FLOWS], w[MAX_FLOWS];
      weights_of (sc, map, n, w);
      sim_maxmin_solve_reference (sc->n_links, sc->capacity, n, start, links, w, r);
      double dt = next_start < sc->n_flows ? sc->start_ns[next_start] - now : INFINITY;
      for (int i = 0; i < n; i++)
        {
          rate[map[i]] = r[i];
          dt = MIN (dt, remaining[map[i]] / r[i] * 1e9);
        }
      now += dt;
      for (int i = 0; i < n; i++)
        {
          int f = map[i];
          remaining[f] -= rate[f] * dt * 1e-9;
          if (remaining[f] <= 1e-9 * sc->bytes[f])
            {
              live[f] = FALSE;
              finish_ns[f] = now;
              n_ended++;
            }
        }
    }
}

static void on_done_run (gpointer user, guint64 arg);

static void
start_flow (SimEngine *engine, gpointer data, guint64 arg)
{
  Run *r = data;
  const Scenario *sc = r->sc;
  r->id[arg] = sim_flow_net_start_weighted (r->net, sc->path + sc->path_start[arg],
                                            sc->path_start[arg + 1] - sc->path_start[arg], sc->bytes[arg],
                                            weight_of (sc, (int) arg), on_done_run, r, arg);
  g_assert_cmpuint (r->id[arg], !=, 0);
}

/* Completion: record it and, in chained scenarios, start the follow-up flow from inside the
 * callback (as a collective's next step would), reusing the slot just freed. */
static void
on_done_run (gpointer user, guint64 arg)
{
  Run *r = user;
  on_done (&r->done, arg);
  int half = r->sc->n_flows / 2;
  if (r->sc->chained && (int) arg < half)
    start_flow (r->engine, r, arg + (guint64) half);
}

/* Live rates against the brute-force solver for the live flows. */
static void
check_rates (Run *r)
{
  const Scenario *sc = r->sc;
  int start[MAX_FLOWS + 1], map[MAX_FLOWS], n = 0;
  guint32 links[MAX_FLOWS * 4];
  start[0] = 0;
  for (int f = 0; f < sc->n_flows; f++)
    if (r->id[f] && sim_flow_net_rate (r->net, r->id[f]) > 0)
      {
        int k0 = start[n];
        for (int k = sc->path_start[f]; k < sc->path_start[f + 1]; k++)
          links[k0++] = sc->path[k];
        map[n] = f;
        start[++n] = k0;
      }
  g_assert_cmpint (n, ==, sim_flow_net_active (r->net));
  double want[MAX_FLOWS], w[MAX_FLOWS];
  weights_of (sc, map, n, w);
  sim_maxmin_solve_reference (sc->n_links, sc->capacity, n, start, links, w, want);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (sim_flow_net_rate (r->net, r->id[map[i]]), want[i], 1e-9 * want[i]);
}

static void
run_scenario (const Scenario *sc, Run *r, gboolean check)
{
  r->sc = sc;
  r->engine = sim_engine_new ();
  r->net = sim_flow_net_new (r->engine, sc->capacity, sc->n_links);
  r->done = (Done) { r->engine };
  for (int f = 0; f < sc->n_flows; f++)
    {
      r->id[f] = 0;
      if (!sc->chained || f < sc->n_flows / 2 || f >= 2 * (sc->n_flows / 2))
        sim_engine_at (r->engine, sc->start_ns[f], start_flow, r, (guint64) f);
    }
  /* Step through time; every step boundary is a check point (all events at or before it ran). */
  while (sim_engine_pending (r->engine) > 0)
    {
      sim_engine_run (r->engine, sim_engine_now (r->engine) + 3001);
      if (check)
        check_rates (r);
    }
  g_assert_cmpint (r->done.n_done, ==, sc->n_flows);
}

static void
free_run (Run *r)
{
  sim_flow_net_free (r->net);
  sim_engine_free (r->engine);
}

static void
test_vs_fluid_reference (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (12345);
  double max_dev = 0;
  for (int trial = 0; trial < 60; trial++)
    {
      Scenario sc = random_scenario (rng);
      static Run r;
      run_scenario (&sc, &r, TRUE);
      double ref[MAX_FLOWS];
      fluid_reference (&sc, ref);
      for (int f = 0; f < sc.n_flows; f++)
        {
          /* Each completion is rounded up to the next ns, which holds its links < 1 ns longer:
           * flows sharing them slow down a little, and flows sharing links with those can speed
           * up a little. So each flow may deviate from the continuous solution by up to ~1 ns per
           * completion before it, either way (its own bytes are never short: never-early). */
          double got = (double) r.done.done_ns[f];
          max_dev = MAX (max_dev, fabs (got - ref[f]));
          g_assert_cmpfloat (fabs (got - ref[f]), <=, 1e-9 * ref[f] + sc.n_flows);
        }
      /* Conservation: each link carried exactly the bytes of the flows that crossed it. */
      for (int l = 0; l < sc.n_links; l++)
        {
          double want = 0;
          for (int f = 0; f < sc.n_flows; f++)
            for (int k = sc.path_start[f]; k < sc.path_start[f + 1]; k++)
              want += sc.path[k] == (guint32) l ? sc.bytes[f] : 0;
          g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (r.net, l), want, 1e-9 * want + 1e-6);
        }
      free_run (&r);
    }
  g_test_message ("largest deviation from the continuous solution: %.2f ns", max_dev);
}

/* Weighted sharing (flows standing for several NCCL channels): the same random scenarios with
 * weights from {1, 2, 16, 0.5}, rates against the weighted brute-force solver at every step and
 * completions against the weighted fluid solution. By hand first: weights 1 and 3 on one 40 GB/s
 * link split it 10 : 30, so 1 MB and 3 MB finish together at 100 us. */
static void
test_weighted (void)
{
  Scenario one = { .n_links = 1, .n_flows = 2, .capacity = { 40e9 }, .bytes = { 1e6, 3e6 },
                   .weight = { 1, 3 }, .path_start = { 0, 1, 2 }, .path = { 0, 0 } };
  static Run r;
  run_scenario (&one, &r, TRUE);
  g_assert_cmpint (r.done.done_ns[0], ==, 100000);
  g_assert_cmpint (r.done.done_ns[1], ==, 100000);
  free_run (&r);
  g_autoptr (GRand) rng = g_rand_new_with_seed (2611);
  static const double weights[] = { 1, 2, 16, 0.5 };
  for (int trial = 0; trial < 40; trial++)
    {
      Scenario sc = random_scenario (rng);
      for (int f = 0; f < sc.n_flows; f++)
        sc.weight[f] = weights[g_rand_int_range (rng, 0, 4)];
      run_scenario (&sc, &r, TRUE);
      double ref[MAX_FLOWS];
      fluid_reference (&sc, ref);
      for (int f = 0; f < sc.n_flows; f++)
        g_assert_cmpfloat (fabs ((double) r.done.done_ns[f] - ref[f]), <=, 1e-9 * ref[f] + sc.n_flows);
      free_run (&r);
    }
}

/* The same scenario twice gives the same completion times and link counters, bit for bit. */
static void
test_determinism (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (99);
  for (int trial = 0; trial < 10; trial++)
    {
      Scenario sc = random_scenario (rng);
      static Run a, b;
      run_scenario (&sc, &a, FALSE);
      run_scenario (&sc, &b, FALSE);
      for (int f = 0; f < sc.n_flows; f++)
        g_assert_cmpint (a.done.done_ns[f], ==, b.done.done_ns[f]);
      for (int i = 0; i < sc.n_flows; i++)
        g_assert_cmpuint (a.done.order[i], ==, b.done.order[i]);
      for (int l = 0; l < sc.n_links; l++)
        g_assert_true (sim_flow_net_link_bytes (a.net, l) == sim_flow_net_link_bytes (b.net, l));
      free_run (&a);
      free_run (&b);
    }
}

/* Chained random scenarios: each completion of the first half starts a flow of the second half
 * from inside the done callback. Rates match the brute-force solver at every step, every flow
 * completes, links conserve bytes, and a second run is bit-identical. */
static void
test_chained_random (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (4242);
  for (int trial = 0; trial < 40; trial++)
    {
      Scenario sc = random_scenario (rng);
      sc.chained = TRUE;
      static Run a, b;
      run_scenario (&sc, &a, TRUE);
      run_scenario (&sc, &b, FALSE);
      for (int f = 0; f < sc.n_flows; f++)
        g_assert_cmpint (a.done.done_ns[f], ==, b.done.done_ns[f]);
      int half = sc.n_flows / 2;
      for (int f = 0; f < half; f++)
        g_assert_cmpint (a.done.done_ns[f + half], >, a.done.done_ns[f]);
      for (int l = 0; l < sc.n_links; l++)
        {
          double want = 0;
          for (int f = 0; f < sc.n_flows; f++)
            for (int k = sc.path_start[f]; k < sc.path_start[f + 1]; k++)
              want += sc.path[k] == (guint32) l ? sc.bytes[f] : 0;
          g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (a.net, l), want, 1e-9 * want + 1e-6);
        }
      free_run (&a);
      free_run (&b);
    }
}

/* Registered paths (sim_flow_net_path) are the same flows as raw starts: random scenarios in which
 * half the flows reuse one of three template paths, run once with every start raw and once with
 * every start on a registered path (one per distinct link list, shared by the flows that have it),
 * give bit-identical completions and link bytes, and rates that match the brute-force solver at
 * every step. Atoms split under live flows and templates go stale and are re-derived on the way. */
typedef struct {
  Run run;
  GHashTable *by_links;  /* link list as a string -> SimFlowPath* */
} PathRun;

static void
start_flow_on_path (SimEngine *engine, gpointer data, guint64 arg)
{
  PathRun *pr = data;
  Run *r = &pr->run;
  const Scenario *sc = r->sc;
  const guint32 *links = sc->path + sc->path_start[arg];
  int n = sc->path_start[arg + 1] - sc->path_start[arg];
  GString *key = g_string_new (NULL);
  for (int k = 0; k < n; k++)
    g_string_append_printf (key, "%u,", links[k]);
  SimFlowPath *path = g_hash_table_lookup (pr->by_links, key->str);
  if (path == NULL)
    {
      path = sim_flow_net_path (r->net, links, n);
      g_hash_table_insert (pr->by_links, g_strdup (key->str), path);
    }
  g_string_free (key, TRUE);
  r->id[arg] = sim_flow_net_start_path (r->net, path, sc->bytes[arg], weight_of (sc, (int) arg), on_done_run, r, arg);
  g_assert_cmpuint (r->id[arg], !=, 0);
}

static Scenario
templated_scenario (GRand *rng)
{
  Scenario in = random_scenario (rng), sc = in;
  int t = MIN (3, in.n_flows);
  sc.path_start[0] = 0;
  for (int f = 0; f < in.n_flows; f++)
    {
      int from = f >= t && g_rand_boolean (rng) ? f % t : f;
      int n = in.path_start[from + 1] - in.path_start[from];
      memcpy (sc.path + sc.path_start[f], in.path + in.path_start[from], sizeof (guint32) * n);
      sc.path_start[f + 1] = sc.path_start[f] + n;
    }
  return sc;
}

static void
test_registered_paths (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (777);
  for (int trial = 0; trial < 60; trial++)
    {
      Scenario sc = templated_scenario (rng);
      sc.chained = trial % 2 == 1;
      static Run raw;
      static PathRun on;
      run_scenario (&sc, &raw, TRUE);
      /* The same run, every start on a registered path. */
      Run *r = &on.run;
      r->sc = &sc;
      r->engine = sim_engine_new ();
      r->net = sim_flow_net_new (r->engine, sc.capacity, sc.n_links);
      r->done = (Done) { r->engine };
      on.by_links = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      for (int f = 0; f < sc.n_flows; f++)
        {
          r->id[f] = 0;
          if (!sc.chained || f < sc.n_flows / 2 || f >= 2 * (sc.n_flows / 2))
            sim_engine_at (r->engine, sc.start_ns[f], start_flow_on_path, &on, (guint64) f);
        }
      r->sc = &sc;
      while (sim_engine_pending (r->engine) > 0)
        {
          sim_engine_run (r->engine, sim_engine_now (r->engine) + 3001);
          check_rates (r);
        }
      g_assert_cmpint (r->done.n_done, ==, sc.n_flows);
      for (int f = 0; f < sc.n_flows; f++)
        g_assert_cmpint (r->done.done_ns[f], ==, raw.done.done_ns[f]);
      for (int l = 0; l < sc.n_links; l++)
        g_assert_true (sim_flow_net_link_bytes (r->net, l) == sim_flow_net_link_bytes (raw.net, l));
      g_hash_table_destroy (on.by_links);
      free_run (r);
      free_run (&raw);
    }
}

/* By hand: A runs on a registered path over links 0-3 (one atom); B then crosses link 1 twice
 * (splitting the atom under A), and C starts on A's path again (stale, re-derived). Link 1
 * (1 GB/s) carries A, C once and B twice: max-min gives each crossing 0.25 GB/s, so A and C run
 * at 0.25 GB/s and B at 0.25 GB/s over its two crossings. All 1 MB: all end at 4 ms; link 1 carried
 * 1 + 1 + 2 = 4 MB, link 0 2 MB. */
static void
test_path_split_live (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9, 1e9, 1e9, 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 4);
  Done d = { engine };
  guint32 all[] = { 0, 1, 2, 3 }, twice[] = { 1, 1 };
  SimFlowPath *p = sim_flow_net_path (net, all, 4);
  guint64 a = sim_flow_net_start_path (net, p, 1e6, 1.0, on_done, &d, 0);
  guint64 b = sim_flow_net_start (net, twice, 2, 1e6, on_done, &d, 1);
  guint64 c = sim_flow_net_start_path (net, p, 1e6, 1.0, on_done, &d, 2);
  sim_engine_run (engine, 0);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_rate (net, a), 0.25e9, 1);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_rate (net, b), 0.25e9, 1);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_rate (net, c), 0.25e9, 1);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.n_done, ==, 3);
  for (int f = 0; f < 3; f++)
    g_assert_cmpint (d.done_ns[f], ==, 4000000);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 1), 4e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 2e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 3), 2e6, 1e-6);
}

/* Bundles (sim_flow_net_start_bundle). By hand: members i = 0..3 of 1 MB each cross their own
 * 1 GB/s link up_i; flow X (1 MB) also crosses up_0. Alone, member 0 and X share up_0 at 0.5 GB/s
 * (both end at 2 ms) and members 1-3 run at 1 GB/s (1 ms). The bundle is first held to member 0's
 * 0.5 GB/s; members 1-3 have no bottleneck of their own there, so they split off and end at 1 ms. */
typedef struct {
  SimEngine *engine;
  GArray *times[64];   /* per arg: completion times, in order */
} BDone;

static void
on_bdone (gpointer user, guint64 arg)
{
  BDone *d = user;
  gint64 now = sim_engine_now (d->engine);
  g_array_append_val (d->times[arg], now);
}

static void
test_bundle_split_by_hand (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9, 1e9, 1e9, 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 4);
  BDone d = { engine };
  for (int a = 0; a < 2; a++)
    d.times[a] = g_array_new (FALSE, FALSE, sizeof (gint64));
  SimFlowPath *up[4];
  for (guint32 l = 0; l < 4; l++)
    up[l] = sim_flow_net_path (net, &l, 1);
  sim_flow_net_start_bundle (net, up, 4, 1e6, 1.0, on_bdone, &d, 0);
  sim_flow_net_start_path (net, up[0], 1e6, 1.0, on_bdone, &d, 1);
  g_assert_cmpint (sim_flow_net_active (net), ==, 5);
  sim_engine_run (engine, -1);
  g_assert_cmpuint (d.times[0]->len, ==, 4);
  g_assert_cmpuint (d.times[1]->len, ==, 1);
  for (int k = 0; k < 3; k++)
    g_assert_cmpint (g_array_index (d.times[0], gint64, k), ==, 1000000);
  g_assert_cmpint (g_array_index (d.times[0], gint64, 3), ==, 2000000);
  g_assert_cmpint (g_array_index (d.times[1], gint64, 0), ==, 2000000);
  g_assert_cmpint (sim_flow_net_active (net), ==, 0);
  SimFlowNetStats st = sim_flow_net_stats (net);
  g_assert_cmpuint (st.bundles, ==, 1);
  g_assert_cmpuint (st.bundle_splits, ==, 1);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 2e6, 1e-6);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 3), 1e6, 1e-6);
  for (int a = 0; a < 2; a++)
    g_array_free (d.times[a], TRUE);
}

/* Random groups of 1-4 flows of one size and weight, each over 1-4 random links (repeats allowed)
 * of a dozen links with three capacities, started at a few instants: started as bundles, every
 * group's completion times equal, to the nanosecond, those of the same flows started one by one, and
 * so do the links' byte counts; the same as union paths (sim_flow_net_bundle_path, then
 * sim_flow_net_start_union, whose callback counts the members that end) and as flows started
 * batched (sim_flow_net_start_batched: the groups of one instant, size and weight bundled together,
 * each member ending through its own callback). Symmetric groups (members
 * on links of one capacity that nothing else crosses) never split. */
#define BG_MAX 12

static gint
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

typedef struct {
  int n_links, n_groups;
  double capacity[16];
  int k[BG_MAX];               /* members */
  guint32 links[BG_MAX][4][5]; /* per member: n, then links */
  double bytes[BG_MAX], weight[BG_MAX];
  gint64 start_ns[BG_MAX];
} BScenario;

typedef struct {
  const BScenario *sc;
  SimFlowNet *net;
  SimFlowPath *path[BG_MAX][4];
  int mode;                    /* 0: one by one, 1: sim_flow_net_start_bundle, 2: sim_flow_net_start_union,
                                * 3: sim_flow_net_start_batched */
  BDone d;
} BRun;

static void
on_bdone_many (gpointer user, guint64 arg, int n)
{
  g_assert_cmpint (n, >=, 1);
  for (int m = 0; m < n; m++)
    on_bdone (user, arg);
}

static void
bundle_start_cb (SimEngine *engine, gpointer data, guint64 arg)
{
  BRun *r = data;
  int g = (int) arg;
  if (r->mode == 3)
    for (int m = 0; m < r->sc->k[g]; m++)
      sim_flow_net_start_batched (r->net, r->path[g][m], r->sc->bytes[g], r->sc->weight[g], on_bdone, &r->d,
                                  (guint64) g);
  else if (r->mode == 2 && r->sc->k[g] >= 2)
    sim_flow_net_start_union (r->net, sim_flow_net_bundle_path (r->net, r->path[g], r->sc->k[g]), r->sc->bytes[g],
                              r->sc->weight[g], on_bdone_many, &r->d, (guint64) g);
  else if (r->mode >= 1)
    sim_flow_net_start_bundle (r->net, r->path[g], r->sc->k[g], r->sc->bytes[g], r->sc->weight[g], on_bdone, &r->d,
                               (guint64) g);
  else
    for (int m = 0; m < r->sc->k[g]; m++)
      sim_flow_net_start_path (r->net, r->path[g][m], r->sc->bytes[g], r->sc->weight[g], on_bdone, &r->d,
                               (guint64) g);
}

static SimFlowNetStats
bundle_run (const BScenario *sc, int mode, GArray **times, double *link_bytes)
{
  SimEngine *engine = sim_engine_new ();
  BRun r = { sc, sim_flow_net_new (engine, sc->capacity, sc->n_links), .mode = mode, .d = { engine } };
  for (int g = 0; g < sc->n_groups; g++)
    {
      r.d.times[g] = times[g];
      for (int m = 0; m < sc->k[g]; m++)
        r.path[g][m] = sim_flow_net_path (r.net, sc->links[g][m] + 1, (int) sc->links[g][m][0]);
      sim_engine_at (engine, sc->start_ns[g], bundle_start_cb, &r, (guint64) g);
    }
  sim_engine_run (engine, -1);
  for (int l = 0; l < sc->n_links; l++)
    link_bytes[l] = sim_flow_net_link_bytes (r.net, l);
  SimFlowNetStats st = sim_flow_net_stats (r.net);
  g_assert_cmpint (sim_flow_net_active (r.net), ==, 0);
  sim_flow_net_free (r.net);
  sim_engine_free (engine);
  return st;
}

static void
test_bundle_vs_flows (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (4242);
  static const double caps[] = { 1e9, 2e9, 4e9 };
  guint64 splits = 0, symmetric_splits = 0, batched_bundles = 0;
  for (int trial = 0; trial < 400; trial++)
    {
      BScenario sc = { .n_links = 12 };
      gboolean symmetric = trial % 4 == 0;
      for (int l = 0; l < sc.n_links; l++)
        sc.capacity[l] = symmetric ? 1e9 : caps[g_rand_int_range (rng, 0, 3)];
      sc.n_groups = symmetric ? 3 : g_rand_int_range (rng, 2, BG_MAX + 1);
      for (int g = 0; g < sc.n_groups; g++)
        {
          sc.k[g] = g_rand_int_range (rng, 1, 5);
          sc.bytes[g] = 1e5 * g_rand_int_range (rng, 1, 40);
          sc.weight[g] = g_rand_int_range (rng, 1, 3);
          sc.start_ns[g] = 250000 * g_rand_int_range (rng, 0, 4);
          for (int m = 0; m < sc.k[g]; m++)
            {
              if (symmetric)
                {
                  /* group g, member m: its own link g * 4 + m, and link g * 4 + m of nobody else */
                  sc.links[g][m][0] = 1;
                  sc.links[g][m][1] = (guint32) (g * 4 + m);
                  continue;
                }
              int n = g_rand_int_range (rng, 1, 5);
              sc.links[g][m][0] = (guint32) n;
              for (int h = 1; h <= n; h++)
                sc.links[g][m][h] = (guint32) g_rand_int_range (rng, 0, sc.n_links);
            }
        }
      GArray *a[BG_MAX], *b[BG_MAX], *u[BG_MAX], *q[BG_MAX];
      for (int g = 0; g < sc.n_groups; g++)
        {
          a[g] = g_array_new (FALSE, FALSE, sizeof (gint64));
          b[g] = g_array_new (FALSE, FALSE, sizeof (gint64));
          u[g] = g_array_new (FALSE, FALSE, sizeof (gint64));
          q[g] = g_array_new (FALSE, FALSE, sizeof (gint64));
        }
      double la[16], lb[16], lu[16], lq[16];
      bundle_run (&sc, 0, a, la);
      SimFlowNetStats st = bundle_run (&sc, 1, b, lb);
      SimFlowNetStats su = bundle_run (&sc, 2, u, lu);
      /* batched: the groups of one instant, size and weight become one bundle */
      SimFlowNetStats sq = bundle_run (&sc, 3, q, lq);
      batched_bundles += sq.bundles;
      g_assert_cmpuint (su.bundles, ==, st.bundles);
      g_assert_cmpuint (su.bundle_splits, ==, st.bundle_splits);
      splits += st.bundle_splits;
      if (symmetric)
        symmetric_splits += st.bundle_splits;
      for (int g = 0; g < sc.n_groups; g++)
        {
          g_assert_cmpuint (a[g]->len, ==, (guint) sc.k[g]);
          g_assert_cmpuint (b[g]->len, ==, (guint) sc.k[g]);
          g_assert_cmpuint (u[g]->len, ==, (guint) sc.k[g]);
          /* one by one, a group's members may end in any order: compare sorted */
          g_array_sort (a[g], cmp_i64);
          g_array_sort (b[g], cmp_i64);
          g_array_sort (u[g], cmp_i64);
          g_assert_cmpuint (q[g]->len, ==, (guint) sc.k[g]);
          g_array_sort (q[g], cmp_i64);
          for (int m = 0; m < sc.k[g]; m++)
            {
              g_assert_cmpint (g_array_index (a[g], gint64, m), ==, g_array_index (b[g], gint64, m));
              g_assert_cmpint (g_array_index (u[g], gint64, m), ==, g_array_index (b[g], gint64, m));
              g_assert_cmpint (g_array_index (q[g], gint64, m), ==, g_array_index (a[g], gint64, m));
            }
          g_array_free (a[g], TRUE);
          g_array_free (b[g], TRUE);
          g_array_free (u[g], TRUE);
          g_array_free (q[g], TRUE);
        }
      for (int l = 0; l < sc.n_links; l++)
        {
          g_assert_cmpfloat_with_epsilon (lb[l], la[l], 1e-9 * MAX (la[l], 1.0));
          g_assert_cmpfloat (lu[l], ==, lb[l]);
          g_assert_cmpfloat_with_epsilon (lq[l], la[l], 1e-9 * MAX (la[l], 1.0));
        }
    }
  g_assert_cmpuint (symmetric_splits, ==, 0);
  g_assert_cmpuint (splits, >, 50);  /* the random groups did exercise splitting */
  g_assert_cmpuint (batched_bundles, >, 400);  /* and batching made bundles across groups */
}

/* Batched starts keep their starters' derivatives (sim_engine_enable_sens): two events of one
 * nanosecond with different derivatives each start a flow of one size over a link of its own;
 * batched or not, each flow ends carrying its starter's derivatives, as a flow's end carries its
 * start's (flow.h). */
typedef struct {
  SimEngine *engine;
  SimFlowNet *net;
  SimFlowPath *path[2];
  gboolean batched;
  double end_sens[2];
} SensRun;

static void
sens_done (gpointer user, guint64 arg)
{
  SensRun *r = user;
  r->end_sens[arg] = sim_engine_sens (r->engine)[0];
}

static void
sens_start (SimEngine *engine, gpointer data, guint64 arg)
{
  SensRun *r = data;
  if (r->batched)
    sim_flow_net_start_batched (r->net, r->path[arg], 1e6, 1.0, sens_done, r, arg);
  else
    sim_flow_net_start_path (r->net, r->path[arg], 1e6, 1.0, sens_done, r, arg);
}

static void
test_batched_sens (void)
{
  double out[2][2];
  for (int batched = 0; batched < 2; batched++)
    {
      g_autoptr (SimEngine) engine = sim_engine_new ();
      sim_engine_enable_sens (engine, 1);
      double cap[] = { 1e9, 1e9 };
      SensRun r = { engine, sim_flow_net_new (engine, cap, 2), { NULL, NULL }, batched, { 0, 0 } };
      for (guint32 l = 0; l < 2; l++)
        r.path[l] = sim_flow_net_path (r.net, &l, 1);
      for (int k = 0; k < 2; k++)
        {
          double d = 3.0 + 4.0 * k;   /* the two starters' derivatives: 3 and 7 */
          sim_engine_delay_sens (engine, &d);
          sim_engine_at (engine, 1000, sens_start, &r, (guint64) k);
        }
      sim_engine_run (engine, -1);
      for (int k = 0; k < 2; k++)
        out[batched][k] = r.end_sens[k];
      g_assert_cmpuint (sim_flow_net_stats (r.net).bundles, ==, 0); /* different derivatives: no bundle */
      sim_flow_net_free (r.net);
    }
  for (int k = 0; k < 2; k++)
    {
      g_assert_cmpfloat (out[0][k], ==, 3.0 + 4.0 * k);
      g_assert_cmpfloat (out[1][k], ==, out[0][k]);
    }
}

/* flush solves at once: the rate is there before the engine runs, and the scheduled batch
 * recompute is withdrawn (one solve in all). */
static void
test_flush (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 8e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  guint32 path[] = { 0 };
  guint64 a = sim_flow_net_start (net, path, 1, 8e3, on_done, &d, 0);
  sim_flow_net_flush (net);
  g_assert_cmpfloat (sim_flow_net_rate (net, a), ==, 8e9);
  sim_engine_run (engine, 0);
  g_assert_cmpuint (sim_flow_net_stats (net).recomputes, ==, 1);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.done_ns[0], ==, 1000);  /* 8 kB at 8 GB/s */
}

/* A path that lists a link twice loads it twice: with a single-crossing flow on a 3 GB/s link the
 * weights are 2 + 1, so each flow gets 3 GB/s / 3 = 1 GB/s. Both carry 1 MB: 1 ms. The link
 * counts the doubled flow's bytes twice: 2 + 1 = 3 MB. */
static void
test_duplicate_link (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 3e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  guint32 twice[] = { 0, 0 }, once[] = { 0 };
  sim_flow_net_start (net, twice, 2, 1e6, on_done, &d, 0);
  sim_flow_net_start (net, once, 1, 1e6, on_done, &d, 1);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.done_ns[0], ==, 1000000);
  g_assert_cmpint (d.done_ns[1], ==, 1000000);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 3e6, 1e-6);
}

/* Freeing the net with flows in flight cancels its events: running the engine afterwards touches
 * nothing of the freed net (ASan would catch it). */
static void
test_free_in_flight (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 1e9 };
  SimFlowNet *net = sim_flow_net_new (engine, cap, 1);
  Done d = { engine };
  guint32 path[] = { 0 };
  sim_flow_net_start (net, path, 1, 1e6, on_done, &d, 0);
  sim_engine_run (engine, 10);
  sim_flow_net_start (net, path, 1, 1e6, on_done, &d, 1);
  sim_flow_net_free (net);
  g_assert_cmpuint (sim_engine_pending (engine), ==, 0);
  sim_engine_run (engine, -1);
  g_assert_cmpint (d.n_done, ==, 0);
}

/* Local re-solves (flow.c re-solves the flows next to a change first and checks the bottleneck
 * condition). Links: 0 (2 GB/s) carries A and B, 1 (3 GB/s) carries B and C, 2 (1 GB/s) carries D
 * alone. Max-min: A = B = 1 GB/s (link 0 full), C = 3 - 1 = 2 GB/s (link 1 full), D = 1 GB/s.
 * A (1 MB) ends at 1 ms. Its neighbour B alone on link 0 would keep 1 GB/s if only it were
 * re-solved, but then B has no bottleneck (link 0 is not full and C gets more on link 1), so C has
 * to be re-solved too: B = C = 1.5 GB/s. D, in another component, is left alone: the recompute
 * re-solves B and C only (A, B, C, D at the start, then 2). */
static void
test_local_resolve (void)
{
  g_autoptr (SimEngine) engine = sim_engine_new ();
  double cap[] = { 2e9, 3e9, 1e9 };
  g_autoptr (SimFlowNet) net = sim_flow_net_new (engine, cap, 3);
  Done d = { engine };
  guint32 pa[] = { 0 }, pb[] = { 0, 1 }, pc[] = { 1 }, pd[] = { 2 };
  sim_flow_net_start (net, pa, 1, 1e6, on_done, &d, 0);
  guint64 b = sim_flow_net_start (net, pb, 2, 1e9, on_done, &d, 1);
  guint64 c = sim_flow_net_start (net, pc, 1, 1e9, on_done, &d, 2);
  guint64 dd = sim_flow_net_start (net, pd, 1, 1e9, on_done, &d, 3);
  sim_engine_run (engine, 0);
  g_assert_cmpfloat (sim_flow_net_rate (net, b), ==, 1e9);
  g_assert_cmpfloat (sim_flow_net_rate (net, c), ==, 2e9);
  g_assert_cmpfloat (sim_flow_net_rate (net, dd), ==, 1e9);
  SimFlowNetStats s0 = sim_flow_net_stats (net);
  g_assert_cmpuint (s0.flows_resolved, ==, 4);
  sim_engine_run (engine, 1000000);
  g_assert_cmpint (d.n_done, ==, 1);
  g_assert_cmpint (d.done_ns[0], ==, 1000000);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_rate (net, b), 1.5e9, 1e-3);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_rate (net, c), 1.5e9, 1e-3);
  g_assert_cmpfloat (sim_flow_net_rate (net, dd), ==, 1e9);
  SimFlowNetStats s1 = sim_flow_net_stats (net);
  g_assert_cmpuint (s1.recomputes - s0.recomputes, ==, 1);
  g_assert_cmpuint (s1.flows_resolved - s0.flows_resolved, ==, 2);
  /* Link 0 carried A's 1 MB and B's 1 MB so far; link 1 B's 1 MB and C's 2 MB. */
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 0), 2e6, 1e-3);
  g_assert_cmpfloat_with_epsilon (sim_flow_net_link_bytes (net, 1), 3e6, 1e-3);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/flow/two-flows-one-link", test_two_flows_one_link);
  g_test_add_func ("/sim/flow/join-midway", test_join_midway);
  g_test_add_func ("/sim/flow/never-early", test_never_early);
  g_test_add_func ("/sim/flow/degenerate", test_degenerate);
  g_test_add_func ("/sim/flow/component-isolation", test_component_isolation);
  g_test_add_func ("/sim/flow/simultaneous-batch", test_simultaneous_batch);
  g_test_add_func ("/sim/flow/vs-fluid-reference", test_vs_fluid_reference);
  g_test_add_func ("/sim/flow/weighted", test_weighted);
  g_test_add_func ("/sim/flow/determinism", test_determinism);
  g_test_add_func ("/sim/flow/chained-random", test_chained_random);
  g_test_add_func ("/sim/flow/flush", test_flush);
  g_test_add_func ("/sim/flow/registered-paths", test_registered_paths);
  g_test_add_func ("/sim/flow/path-split-live", test_path_split_live);
  g_test_add_func ("/sim/flow/duplicate-link", test_duplicate_link);
  g_test_add_func ("/sim/flow/free-in-flight", test_free_in_flight);
  g_test_add_func ("/sim/flow/local-resolve", test_local_resolve);
  g_test_add_func ("/sim/flow/bundle-split-by-hand", test_bundle_split_by_hand);
  g_test_add_func ("/sim/flow/bundle-vs-flows", test_bundle_vs_flows);
  g_test_add_func ("/sim/flow/batched-sens", test_batched_sens);
  return g_test_run ();
}
