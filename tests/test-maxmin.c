/* Max-min fair sharing: textbook cases with hand-derived rates, the fast solver against the dense
 * reference on many random small systems, and the defining property on larger ones. */
#include "config.h"
#include <math.h>
#include <glib.h>
#include "sim/net/maxmin.h"

/* A system in compressed rows, built from a -1-terminated list of links per flow. */
typedef struct {
  int n_links, n_flows;
  double capacity[64];
  int start[65];
  guint32 links[512];
} Sys;

static void
sys_flow (Sys *s, const int *links)
{
  if (s->n_flows == 0)
    s->start[0] = 0;
  int k = s->start[s->n_flows];
  for (; *links >= 0; links++)
    s->links[k++] = (guint32) *links;
  s->start[++s->n_flows] = k;
}

static void
solve_both (const Sys *s, double *fast, double *ref)
{
  g_autoptr (SimMaxmin) mm = sim_maxmin_new ();
  sim_maxmin_solve (mm, s->n_links, s->capacity, s->n_flows, s->start, s->links, NULL, fast);
  sim_maxmin_solve_reference (s->n_links, s->capacity, s->n_flows, s->start, s->links, NULL, ref);
}

static void
assert_rates (const Sys *s, const double *want)
{
  double fast[64], ref[64];
  solve_both (s, fast, ref);
  for (int f = 0; f < s->n_flows; f++)
    {
      if (isinf (want[f]))
        {
          g_assert_true (isinf (fast[f]) && isinf (ref[f]));
          continue;
        }
      g_assert_cmpfloat_with_epsilon (fast[f], want[f], 1e-12 * want[f]);
      g_assert_cmpfloat_with_epsilon (ref[f], want[f], 1e-9 * want[f]);
    }
}

/* Max-min fairness, checked from its definition: every link carries at most its capacity, and
 * every flow (with links) has a bottleneck: a full link on which no flow gets more than it. */
static void
assert_maxmin_property (const Sys *s, const int *start, const guint32 *links, int n_flows,
                        const double *capacity, int n_links, const double *rate)
{
  (void) s;
  double *load = g_new0 (double, n_links);
  double *maxrate = g_new0 (double, n_links);
  for (int f = 0; f < n_flows; f++)
    for (int k = start[f]; k < start[f + 1]; k++)
      {
        load[links[k]] += rate[f];
        maxrate[links[k]] = MAX (maxrate[links[k]], rate[f]);
      }
  for (int l = 0; l < n_links; l++)
    g_assert_cmpfloat (load[l], <=, capacity[l] * (1 + 1e-9));
  for (int f = 0; f < n_flows; f++)
    {
      if (start[f] == start[f + 1])
        {
          g_assert_true (isinf (rate[f]));
          continue;
        }
      g_assert_cmpfloat (rate[f], >, 0);
      gboolean has_bottleneck = FALSE;
      for (int k = start[f]; k < start[f + 1]; k++)
        {
          int l = (int) links[k];
          if (load[l] >= capacity[l] * (1 - 1e-9) && rate[f] >= maxrate[l] * (1 - 1e-9))
            has_bottleneck = TRUE;
        }
      g_assert_true (has_bottleneck);
    }
  g_free (load);
  g_free (maxrate);
}

/* Two flows on one link of capacity C: by symmetry each gets C/2. */
static void
test_two_flows_one_link (void)
{
  Sys s = { .n_links = 1, .capacity = { 10e9 } };
  sys_flow (&s, (int[]) { 0, -1 });
  sys_flow (&s, (int[]) { 0, -1 });
  assert_rates (&s, (double[]) { 5e9, 5e9 });
}

/* One flow over links of 10 and 4: limited by the slower link, 4. */
static void
test_flow_over_two_links (void)
{
  Sys s = { .n_links = 2, .capacity = { 10, 4 } };
  sys_flow (&s, (int[]) { 0, 1, -1 });
  assert_rates (&s, (double[]) { 4 });
}

/* Parking lot: a long flow crosses links 0..3 (capacity C each), and one short flow uses each link.
 * Every link has two flows, so all shares are C/2 and every flow gets C/2. */
static void
test_parking_lot (void)
{
  Sys s = { .n_links = 4, .capacity = { 8, 8, 8, 8 } };
  sys_flow (&s, (int[]) { 0, 1, 2, 3, -1 });
  for (int l = 0; l < 4; l++)
    sys_flow (&s, (int[]) { l, -1 });
  assert_rates (&s, (double[]) { 4, 4, 4, 4, 4 });
}

/* Parking lot with unequal links: A (1) and B (2); the long flow crosses both, s1 uses A, s2 uses B.
 * Shares: A 1/2, B 2/2 = 1. A is the bottleneck: long = s1 = 0.5. B then has 2 - 0.5 = 1.5 left
 * for s2 alone: s2 = 1.5. */
static void
test_parking_lot_unequal (void)
{
  Sys s = { .n_links = 2, .capacity = { 1, 2 } };
  sys_flow (&s, (int[]) { 0, 1, -1 });
  sys_flow (&s, (int[]) { 0, -1 });
  sys_flow (&s, (int[]) { 1, -1 });
  assert_rates (&s, (double[]) { 0.5, 0.5, 1.5 });
}

/* A worked example with three links a=10, b=6, c=4 and five flows: f1 {a}, f2 {a,b}, f3 {b,c},
 * f4 {c}, f5 {b}. Initial shares: a 10/2 = 5, b 6/3 = 2, c 4/2 = 2. Bottleneck b (2): f2 = f3 =
 * f5 = 2. Then a has 10 - 2 = 8 for f1, c has 4 - 2 = 2 for f4: c's share 2 comes next, f4 = 2;
 * then a: f1 = 8. All three links end full (a 8+2, b 2+2+2, c 2+2). */
static void
test_worked_example (void)
{
  Sys s = { .n_links = 3, .capacity = { 10, 6, 4 } };
  sys_flow (&s, (int[]) { 0, -1 });
  sys_flow (&s, (int[]) { 0, 1, -1 });
  sys_flow (&s, (int[]) { 1, 2, -1 });
  sys_flow (&s, (int[]) { 2, -1 });
  sys_flow (&s, (int[]) { 1, -1 });
  assert_rates (&s, (double[]) { 8, 2, 2, 2, 2 });
}

/* A flow with no links has no bottleneck: INFINITY, and it takes nothing from the others. A link
 * no flow uses changes nothing. A flow listing a link twice counts twice there: on a link of 9
 * shared with a single-crossing flow, the weights are 2 + 1, so both get 9/3 = 3. */
static void
test_degenerate (void)
{
  Sys s = { .n_links = 3, .capacity = { 9, 5, 1 } };
  sys_flow (&s, (int[]) { -1 });
  sys_flow (&s, (int[]) { 0, 0, -1 });
  sys_flow (&s, (int[]) { 0, -1 });
  sys_flow (&s, (int[]) { -1 });
  assert_rates (&s, (double[]) { INFINITY, 3, 3, INFINITY });

  Sys empty = { .n_links = 2, .capacity = { 1, 1 } };
  double r[1];
  g_autoptr (SimMaxmin) mm = sim_maxmin_new ();
  sim_maxmin_solve (mm, empty.n_links, empty.capacity, 0, (int[]) { 0 }, NULL, NULL, r);
  sim_maxmin_solve_reference (empty.n_links, empty.capacity, 0, (int[]) { 0 }, NULL, NULL, r);
}

static Sys random_system (GRand *rng);

/* Weighted: one link of 12 shared by weights 1, 2, 3 gives 2, 4, 6. The unequal parking lot with
 * the long flow weighing 2: shares per unit weight A 1/3, B 2/3; A binds: long 2/3, s1 1/3; B
 * has 2 - 2/3 left for s2: 4/3. Random weighted systems agree with the weighted reference. */
static void
test_weighted (void)
{
  double r[3], ref[3];
  g_autoptr (SimMaxmin) mm = sim_maxmin_new ();
  Sys a = { .n_links = 1, .capacity = { 12 } };
  for (int f = 0; f < 3; f++)
    sys_flow (&a, (int[]) { 0, -1 });
  sim_maxmin_solve (mm, a.n_links, a.capacity, a.n_flows, a.start, a.links, (double[]) { 1, 2, 3 }, r);
  for (int f = 0; f < 3; f++)
    g_assert_cmpfloat_with_epsilon (r[f], 2.0 * (f + 1), 1e-12);
  Sys b = { .n_links = 2, .capacity = { 1, 2 } };
  sys_flow (&b, (int[]) { 0, 1, -1 });
  sys_flow (&b, (int[]) { 0, -1 });
  sys_flow (&b, (int[]) { 1, -1 });
  double w[3] = { 2, 1, 1 };
  sim_maxmin_solve (mm, b.n_links, b.capacity, b.n_flows, b.start, b.links, w, r);
  sim_maxmin_solve_reference (b.n_links, b.capacity, b.n_flows, b.start, b.links, w, ref);
  double want[3] = { 2.0 / 3, 1.0 / 3, 4.0 / 3 };
  for (int f = 0; f < 3; f++)
    {
      g_assert_cmpfloat_with_epsilon (r[f], want[f], 1e-12);
      g_assert_cmpfloat_with_epsilon (ref[f], want[f], 1e-9);
    }
  g_autoptr (GRand) rng = g_rand_new_with_seed (11);
  for (int trial = 0; trial < 2000; trial++)
    {
      Sys s = random_system (rng);
      double wt[64], fast[64], slow[64];
      for (int f = 0; f < s.n_flows; f++)
        wt[f] = g_rand_double_range (rng, 0.25, 32);
      sim_maxmin_solve (mm, s.n_links, s.capacity, s.n_flows, s.start, s.links, wt, fast);
      sim_maxmin_solve_reference (s.n_links, s.capacity, s.n_flows, s.start, s.links, wt, slow);
      for (int f = 0; f < s.n_flows; f++)
        if (isinf (slow[f]))
          g_assert_true (isinf (fast[f]));
        else
          g_assert_cmpfloat_with_epsilon (fast[f], slow[f], 1e-9 * slow[f]);
    }
}

static Sys
random_system (GRand *rng)
{
  Sys s = { .n_links = g_rand_int_range (rng, 1, 13) };
  /* Capacities from a small set half of the time, so equal shares (ties) are common. */
  for (int l = 0; l < s.n_links; l++)
    s.capacity[l] = g_rand_boolean (rng) ? 10.0 * g_rand_int_range (rng, 1, 4)
                                         : g_rand_double_range (rng, 1, 100);
  int n_flows = g_rand_int_range (rng, 0, 21);
  for (int f = 0; f < n_flows; f++)
    {
      int path[6], n = g_rand_int_range (rng, 0, 5);
      if (g_rand_int_range (rng, 0, 10) > 0 && n == 0)
        n = 1;
      for (int k = 0; k < n; k++)
        path[k] = g_rand_int_range (rng, 0, s.n_links);
      path[n] = -1;
      sys_flow (&s, path);
    }
  if (n_flows == 0)
    s.start[0] = 0;
  return s;
}

static void
test_fast_vs_reference (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (20241122);
  for (int trial = 0; trial < 3000; trial++)
    {
      Sys s = random_system (rng);
      double fast[64], ref[64];
      solve_both (&s, fast, ref);
      for (int f = 0; f < s.n_flows; f++)
        {
          if (isinf (ref[f]))
            g_assert_true (isinf (fast[f]));
          else
            g_assert_cmpfloat_with_epsilon (fast[f], ref[f], 1e-9 * ref[f]);
        }
      assert_maxmin_property (&s, s.start, s.links, s.n_flows, s.capacity, s.n_links, fast);
    }
}

/* Bigger random systems (2000 flows of 1-6 hops over 300 links): too big for the dense
 * reference, checked against the definition. The workspace is reused across solves. */
static void
test_large_property (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  g_autoptr (SimMaxmin) mm = sim_maxmin_new ();
  const int n_links = 300, n_flows = 2000;
  double *capacity = g_new (double, n_links);
  int *start = g_new (int, n_flows + 1);
  guint32 *links = g_new (guint32, n_flows * 6);
  double *rate = g_new (double, n_flows);
  for (int trial = 0; trial < 5; trial++)
    {
      for (int l = 0; l < n_links; l++)
        capacity[l] = g_rand_double_range (rng, 1e9, 1e11);
      start[0] = 0;
      for (int f = 0; f < n_flows; f++)
        {
          int n = g_rand_int_range (rng, 1, 7);
          for (int k = 0; k < n; k++)
            links[start[f] + k] = (guint32) g_rand_int_range (rng, 0, n_links);
          start[f + 1] = start[f] + n;
        }
      sim_maxmin_solve (mm, n_links, capacity, n_flows, start, links, NULL, rate);
      assert_maxmin_property (NULL, start, links, n_flows, capacity, n_links, rate);
    }
  g_free (capacity);
  g_free (start);
  g_free (links);
  g_free (rate);
}

/* n identical flows over one link each through a shared core: bit-identical rates. */
static void
test_symmetric_bitwise (void)
{
  enum { N = 48 };
  Sys s = { .n_links = N + 1 };
  for (int l = 0; l < N; l++)
    s.capacity[l] = 50e9;
  s.capacity[N] = 3 * 50e9 / 7;  /* the core: a share that rounding could split */
  for (int f = 0; f < N; f++)
    sys_flow (&s, (int[]) { f, N, -1 });
  double fast[64], ref[64];
  solve_both (&s, fast, ref);
  for (int f = 1; f < N; f++)
    g_assert_true (fast[f] == fast[0]);
  g_assert_cmpfloat_with_epsilon (fast[0], s.capacity[N] / N, 1e-12 * fast[0]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/maxmin/two-flows-one-link", test_two_flows_one_link);
  g_test_add_func ("/sim/maxmin/flow-over-two-links", test_flow_over_two_links);
  g_test_add_func ("/sim/maxmin/parking-lot", test_parking_lot);
  g_test_add_func ("/sim/maxmin/parking-lot-unequal", test_parking_lot_unequal);
  g_test_add_func ("/sim/maxmin/worked-example", test_worked_example);
  g_test_add_func ("/sim/maxmin/degenerate", test_degenerate);
  g_test_add_func ("/sim/maxmin/fast-vs-reference", test_fast_vs_reference);
  g_test_add_func ("/sim/maxmin/large-property", test_large_property);
  g_test_add_func ("/sim/maxmin/symmetric-bitwise", test_symmetric_bitwise);
  g_test_add_func ("/sim/maxmin/weighted", test_weighted);
  return g_test_run ();
}
