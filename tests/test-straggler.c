/* Stragglers (sim/step/straggler.c) through the runner's compute_scale hook: the jitter has mean 1, a
 * seed reproduces a step, no variation equals the plain full simulation exactly, and GPUs that are
 * all slow by 1.5× stretch every compute op by 1.5×. */
#include <math.h>
#include <stdlib.h>
#include <glib.h>
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/step/straggler.h"

/* Llama 3.1 8B on one 8-GPU H100 node, TP4 PP2: small enough for a quick --full step. */
static SimScenario *
load (void)
{
  const char *files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "models/llama3.1-8b.ini",
                          NULL };
  const char *sets[] = { "cluster.gpus=8", "parallel.tp=4", "parallel.pp=2", "parallel.sp=true",
                         "parallel.micro_batch=1", "parallel.global_batch=8", "training.seq_len=2048", "training.steps=10", NULL };
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (files, sets, &error);
  g_assert_no_error (error);
  return sc;
}

static SimRunnerResult
step (const SimScenario *sc, SimStraggler *st)
{
  SimCollectiveProfile prof;
  GError *error = NULL;
  g_assert_true (sim_scenario_collective_profile (sc, &prof, &error));
  SimRunnerOptions ro;
  sim_runner_options_init (&ro);
  ro.full = TRUE;
  if (st)
    {
      ro.compute_scale = sim_straggler_scale;
      ro.compute_scale_user = st;
      ro.link_scale = sim_straggler_link_scale;
      ro.link_scale_user = st;
    }
  SimRunnerResult res;
  g_assert_true (sim_runner_run (sim_scenario_shape (sc), sim_scenario_plan (sc), sim_scenario_gpu (sc),
                                 sim_scenario_cluster (sc), sim_scenario_fabric (sc), &prof, &ro, &res, &error));
  g_assert_no_error (error);
  return res;
}

/* Lognormal(μ = −σ²/2, σ) has mean 1: over 10⁵ draws within 4 standard errors (σ/√n ≈ 3.2e-4). */
static void
test_jitter_mean_one (void)
{
  SimStragglerParams p = { 0.1, 0, 0, 1 };
  g_autoptr (SimStraggler) s = sim_straggler_new (&p, 4, 42);
  double sum = 0;
  int n = 100000;
  for (int i = 0; i < n; i++)
    sum += sim_straggler_scale (s, i % 4);
  g_assert_cmpfloat (fabs (sum / n - 1), <, 4 * 0.1 / sqrt (n) * 1.01);
}

/* Each of 10,000 GPUs slow with probability 0.5: 5,000 ± 4·50. */
static void
test_slow_fraction (void)
{
  SimStragglerParams p = { 0, 0, 0.5, 2 };
  g_autoptr (SimStraggler) s = sim_straggler_new (&p, 10000, 3);
  g_assert_cmpint (abs (sim_straggler_n_slow (s) - 5000), <, 200);
  int slow = 0;
  for (int g = 0; g < 10000; g++)
    slow += sim_straggler_scale (s, g) == 2.0;
  g_assert_cmpint (slow, ==, sim_straggler_n_slow (s));
}

static void
test_runner_hook (void)
{
  g_autoptr (SimScenario) sc = load ();
  SimRunnerResult plain = step (sc, NULL);
  /* No variation: the hook returns 1 for every op, the step is the plain one to the nanosecond. */
  SimStragglerParams none = { 0, 0, 0, 1 };
  g_autoptr (SimStraggler) s0 = sim_straggler_new (&none, 8, 1);
  SimRunnerResult same = step (sc, s0);
  g_assert_cmpint (same.step_ns, ==, plain.step_ns);
  /* Every GPU slow by 1.5: every compute op takes 1.5× (rounded to ns per op), so the critical
   * rank's compute is 1.5× within one ns per op, and the step is longer. */
  SimStragglerParams all = { 0, 0, 1, 1.5 };
  g_autoptr (SimStraggler) s1 = sim_straggler_new (&all, 8, 1);
  SimRunnerResult slow = step (sc, s1);
  g_assert_cmpint (slow.step_ns, >, plain.step_ns);
  double want = 1.5 * plain.breakdown_s[SIM_BD_COMPUTE];
  g_assert_cmpfloat (fabs (slow.breakdown_s[SIM_BD_COMPUTE] - want), <, 1e-9 * (double) plain.ops_executed + 1e-6 * want);
  /* Jitter: one seed reproduces the step; another seed gives another. */
  SimStragglerParams jit = { 0.1, 0.02, 0, 1 };
  g_autoptr (SimStraggler) a = sim_straggler_new (&jit, 8, 7);
  g_autoptr (SimStraggler) b = sim_straggler_new (&jit, 8, 7);
  g_autoptr (SimStraggler) c = sim_straggler_new (&jit, 8, 8);
  SimRunnerResult ra = step (sc, a), rb = step (sc, b), rc = step (sc, c);
  g_assert_cmpint (ra.step_ns, ==, rb.step_ns);
  g_assert_cmpint (ra.step_ns, !=, rc.step_ns);
  /* Jitter of mean 1 can only delay a synchronous step on average; one draw stays within ±20%. */
  g_assert_cmpfloat (fabs ((double) ra.step_ns / plain.step_ns - 1), <, 0.2);
}

/* Links: with 3 degraded links at 0.25 among the 8-GPU node's scale-out links, exactly 3 links
 * report 0.25 and the NVLink ones 1; the step with a degraded link used by the job's traffic is
 * never faster than the plain one. */
static void
test_degraded_links (void)
{
  g_autoptr (SimScenario) sc = load ();
  g_autoptr (SimTopology) topo = sim_topology_new (sim_scenario_cluster (sc), sim_scenario_fabric (sc), NULL);
  g_assert_nonnull (topo);
  SimStragglerParams p = { 0, 0, 0, 1, 0, 3, 0.25 };
  g_autoptr (SimStraggler) s = sim_straggler_new (&p, 8, 5);
  sim_straggler_bind_links (s, topo);
  int degraded = 0;
  for (int l = 0; l < sim_topology_n_links (topo); l++)
    {
      double f = sim_straggler_link_scale (s, l);
      SimLinkKind k = sim_topology_link (topo, l)->kind;
      if (k == SIM_LINK_NVLINK_UP || k == SIM_LINK_NVLINK_DOWN)
        g_assert_cmpfloat (f, ==, 1.0);
      degraded += f == 0.25;
    }
  g_assert_cmpint (degraded, ==, 3);
  SimRunnerResult plain = step (sc, NULL);
  SimRunnerResult slow = step (sc, s);
  g_assert_cmpint (slow.step_ns, >=, plain.step_ns);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/straggler/jitter-mean-one", test_jitter_mean_one);
  g_test_add_func ("/sim/straggler/slow-fraction", test_slow_fraction);
  g_test_add_func ("/sim/straggler/runner-hook", test_runner_hook);
  g_test_add_func ("/sim/straggler/degraded-links", test_degraded_links);
  return g_test_run ();
}
