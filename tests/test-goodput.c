/* Goodput under failures (sim/plan/goodput.c) and cost (sim/report/cost.c): Young/Daly intervals on a textbook
 * example, the analytic model against the Monte Carlo where the analytic model is exact, runs
 * without failures equal to the plain run, spares and repair, asynchronous checkpoints, the
 * Llama 3 failure table through a scenario, the derived checkpoint size, and cost by hand. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "sim/plan/goodput.h"
#include "sim/report/cost.h"
#include "model/shape.h"

#define HOUR 3600.0

static void
assert_rel (double got, double want, double rel)
{
  if (fabs (got - want) > rel * fabs (want))
    g_error ("got %.10g, want %.10g (rel %g)", got, want, rel);
}

/* δ = 5 min, M = 24 h. Young: sqrt(2·5·1440) = sqrt(14400) = 120 min. Daly: x = δ/(2M) = 5/2880 =
 * 0.00173611, sqrt(x) = 0.0416667; 120 · (1 + 0.0416667/3 + 0.00173611/9) − 5
 * = 120 · 1.01408179 − 5 = 116.68981 min. */
static void
test_young_daly_textbook (void)
{
  assert_rel (sim_goodput_young_interval (300, 24 * HOUR), 120 * 60, 1e-12);
  assert_rel (sim_goodput_daly_interval (300, 24 * HOUR), 116.68981 * 60, 1e-6);
  /* δ >= 2M: Daly's rule checkpoints once per MTBF. */
  assert_rel (sim_goodput_daly_interval (3 * HOUR, HOUR), HOUR, 1e-12);
  g_assert_cmpfloat (sim_goodput_daly_interval (300, 0), ==, 0);
}

/* One segment L = M, no restart: M (e − 1). */
static void
test_segment_formula (void)
{
  assert_rel (sim_goodput_segment_s (18000, 0, 1 / 18000.0), 18000 * (M_E - 1), 1e-12);
  /* With restart R = M: × e. */
  assert_rel (sim_goodput_segment_s (18000, 18000, 1 / 18000.0), 18000 * M_E * (M_E - 1), 1e-12);
  g_assert_cmpfloat (sim_goodput_segment_s (123, 45, 0), ==, 123);
}

static void
base_params (SimGoodputParams *p)
{
  sim_goodput_params_init (p);
  p->work_s = 100 * HOUR;
  p->init_s = 600;
  p->step_s = 1;
  p->failures_per_s = 1 / (5 * HOUR);
  p->checkpoint_block_s = p->checkpoint_write_s = 60;
  p->restart_s = 300;
}

/* No failures: the optimum is one segment (no checkpoint) and both models give init + work
 * exactly; with a given interval of 1 h on 10 h of work, 9 checkpoints of 60 s are added. */
static void
test_no_failures_equals_plain (void)
{
  SimGoodputParams p;
  base_params (&p);
  p.failures_per_s = 0;
  SimGoodputAnalytic a;
  SimGoodputMonteCarlo mc;
  g_assert_true (sim_goodput_analytic (&p, &a, NULL));
  g_assert_cmpfloat (a.checkpoints, ==, 0);
  g_assert_cmpfloat (a.expected_s, ==, p.init_s + p.work_s);
  g_assert_cmpfloat (a.goodput, ==, 1);
  g_assert_true (sim_goodput_monte_carlo (&p, 7, 10, &mc, NULL));
  assert_rel (mc.mean_s, p.init_s + p.work_s, 1e-12);
  g_assert_cmpfloat (mc.sd_s, ==, 0);
  g_assert_cmpfloat (mc.failures, ==, 0);

  /* An empty run: goodput 1, not 0/0. */
  SimGoodputParams e = p;
  e.work_s = e.init_s = 0;
  g_assert_true (sim_goodput_analytic (&e, &a, NULL));
  g_assert_cmpfloat (a.goodput, ==, 1);
  g_assert_true (sim_goodput_monte_carlo (&e, 7, 10, &mc, NULL));
  g_assert_cmpfloat (mc.goodput, ==, 1);

  p.work_s = 10 * HOUR;
  p.interval_s = HOUR;
  g_assert_true (sim_goodput_analytic (&p, &a, NULL));
  g_assert_cmpfloat (a.checkpoints, ==, 9);
  assert_rel (a.expected_s, 600 + 10 * HOUR + 9 * 60, 1e-12);
  g_assert_true (sim_goodput_monte_carlo (&p, 7, 10, &mc, NULL));
  assert_rel (mc.mean_s, 600 + 10 * HOUR + 9 * 60, 1e-12);
}

/* Poisson failures, synchronous checkpoints, no repair waits: the analytic model is exact, so the
 * Monte Carlo mean must fall within 4 standard errors of it (seeded: deterministic). Checked at
 * Daly's interval and at a poor one (4×). */
static void
check_agreement (const SimGoodputParams *p, guint64 seed)
{
  SimGoodputAnalytic a;
  SimGoodputMonteCarlo mc;
  g_assert_true (sim_goodput_analytic (p, &a, NULL));
  g_assert_true (sim_goodput_monte_carlo (p, seed, 2000, &mc, NULL));
  double se = mc.sd_s / sqrt (mc.trials);
  if (fabs (mc.mean_s - a.expected_s) > 4 * se)
    g_error ("Monte Carlo %.6g ± %.3g s vs analytic %.6g s", mc.mean_s, se, a.expected_s);
  g_assert_cmpfloat (fabs (mc.failures - a.expected_failures), <, 0.05 * a.expected_failures + 0.5);
  g_assert_cmpfloat (a.goodput, <, 1);
}

static void
test_monte_carlo_agrees_with_daly (void)
{
  SimGoodputParams p;
  base_params (&p);
  check_agreement (&p, 1);
  SimGoodputAnalytic a;
  g_assert_true (sim_goodput_analytic (&p, &a, NULL));
  p.interval_s = 4 * a.interval_s;
  check_agreement (&p, 2);
  /* Weibull with shape 1 is the exponential. */
  p.interval_s = 0;
  p.distribution = SIM_GOODPUT_WEIBULL;
  p.weibull_shape = 1;
  check_agreement (&p, 3);
}

/* Daly's interval is near the true optimum of the exact model: no worse than 0.7× or 1.4× of it,
 * and the expected time there is within 0.1% of the best of a fine scan. */
static void
test_daly_is_near_optimal (void)
{
  SimGoodputParams p;
  base_params (&p);
  SimGoodputAnalytic a, b;
  g_assert_true (sim_goodput_analytic (&p, &a, NULL));
  double best = a.expected_s;
  for (double f = 0.3; f <= 3.0; f += 0.01)
    {
      p.interval_s = a.daly_interval_s * f;
      g_assert_true (sim_goodput_analytic (&p, &b, NULL));
      if (fabs (f - 0.7) < 1e-9 || fabs (f - 1.4) < 1e-9)
        g_assert_cmpfloat (b.expected_s, >=, a.expected_s);
      best = MIN (best, b.expected_s);
    }
  g_assert_cmpfloat (a.expected_s, <=, best * 1.001);
}

/* Without spares every hardware failure waits for its own repair: wait = failures × repair
 * exactly. With many spares nobody waits. */
static void
test_spares_and_repair (void)
{
  SimGoodputParams p;
  base_params (&p);
  p.hardware_fraction = 1;
  p.repair_s = 48 * HOUR;
  SimGoodputMonteCarlo mc;
  g_assert_true (sim_goodput_monte_carlo (&p, 11, 200, &mc, NULL));
  g_assert_cmpfloat (mc.failures, >, 10);
  assert_rel (mc.wait_s, mc.failures * p.repair_s, 1e-9);
  SimGoodputAnalytic a;
  g_assert_true (sim_goodput_analytic (&p, &a, NULL));
  /* The analytic model adds the same wait per failure: close to the simulation. */
  assert_rel (a.expected_s, mc.mean_s, 0.05);
  p.spare_nodes = 100;
  g_assert_true (sim_goodput_monte_carlo (&p, 11, 200, &mc, NULL));
  g_assert_cmpfloat (mc.wait_s, ==, 0);
  /* Two spares against 20 failures per 100 h with 48 h repairs: some waits, fewer than none. */
  p.spare_nodes = 2;
  SimGoodputMonteCarlo two;
  g_assert_true (sim_goodput_monte_carlo (&p, 11, 200, &two, NULL));
  g_assert_cmpfloat (two.wait_s, >, 0);
  g_assert_cmpfloat (two.wait_s, <, two.failures * p.repair_s);
}

/* Asynchronous checkpoints block for 10 s instead of 600 s; the write runs behind. Goodput must
 * rise, the analytic approximation stays within 1% of the simulation, and a seed reproduces. */
static void
test_async_checkpoint (void)
{
  SimGoodputParams p;
  base_params (&p);
  p.checkpoint_block_s = p.checkpoint_write_s = 600;
  SimGoodputMonteCarlo sync, async, again;
  g_assert_true (sim_goodput_monte_carlo (&p, 5, 1000, &sync, NULL));
  p.checkpoint_block_s = 10;
  p.checkpoint_write_s = 610;
  g_assert_true (sim_goodput_monte_carlo (&p, 5, 1000, &async, NULL));
  g_assert_cmpfloat (async.goodput_lo, >, sync.goodput_hi);
  SimGoodputAnalytic a;
  g_assert_true (sim_goodput_analytic (&p, &a, NULL));
  assert_rel (a.expected_s, async.mean_s, 0.01);
  g_assert_true (sim_goodput_monte_carlo (&p, 5, 1000, &again, NULL));
  g_assert_cmpfloat (again.mean_s, ==, async.mean_s);
}

static void
test_bad_input (void)
{
  SimGoodputParams p;
  base_params (&p);
  p.step_s = 0;
  GError *error = NULL;
  SimGoodputAnalytic a;
  g_assert_false (sim_goodput_analytic (&p, &a, &error));
  g_assert_error (error, SIM_GOODPUT_ERROR, SIM_GOODPUT_ERROR_INVALID);
  g_clear_error (&error);
  /* An interval far beyond the MTBF never completes: refused, not looped forever. */
  base_params (&p);
  p.interval_s = 1000 * HOUR;
  p.failures_per_s = 1 / 60.0;
  g_assert_false (sim_goodput_analytic (&p, &a, &error));
  g_clear_error (&error);
}

static SimScenario *
load (const char *const *sets)
{
  const char *files[] = { "runs/gpt3-175b-mlperf-v3.1.ini", "reliability/llama3-405b-h100.ini", NULL };
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (files, sets, &error);
  g_assert_no_error (error);
  return sc;
}

/* The Llama 3 table at Llama 3's scale: GPU, host, NIC and software interruptions sum to
 * 268 + 46 + 7 + 63 = 384 in 54 days (rates in the file are rounded to 6 digits). */
static void
test_llama3_rates (void)
{
  const char *sets[] = { "cluster.gpus=16384", "parallel.global_batch=4096", NULL };
  g_autoptr (SimScenario) sc = load (sets);
  SimGoodputInputs in;
  GError *error = NULL;
  g_assert_true (sim_goodput_from_scenario (sc, 1.0, 1e6, &in, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (in.count[SIM_FAILURE_NODE], ==, 2048);
  double day = 86400;
  double sum = 0;
  for (int i = 0; i < SIM_FAILURE_COUNT; i++)
    if (i != SIM_FAILURE_LINK && i != SIM_FAILURE_SWITCH)
      sum += in.count[i] * in.rate_per_s[i] * day;
  assert_rel (sum, 384.0 / 54, 1e-5);
  g_assert_cmpfloat (in.count[SIM_FAILURE_LINK], >, 16384);
  /* GPU, node and NIC failures take a node out: (268 + 46 + 7) / total. */
  double hw = (in.count[0] * in.rate_per_s[0] + in.count[1] * in.rate_per_s[1] + in.count[2] * in.rate_per_s[2]);
  assert_rel (in.params.hardware_fraction, hw / in.params.failures_per_s, 1e-12);
  assert_rel (in.failures_per_day, in.params.failures_per_s * day, 1e-12);
}

/* Checkpoint: bf16 weights (2 B) + the optimizer's 16-bit remainders (2 B: the scenario's
 * master_weights, NeMo's Apex optimizer; 4 B for an fp32 master) + Adam m, v (8 B) = 12 B per
 * parameter; written at min(gpus × per-GPU, aggregate); restart = reinit + read + warm-up. */
static void
test_checkpoint_size_and_rates (void)
{
  const char *sets[] = { "reliability.write_GBps_per_gpu=0.1", "reliability.read_GBps_aggregate=500", NULL };
  g_autoptr (SimScenario) sc = load (sets);
  SimGoodputInputs in;
  g_assert_true (sim_goodput_from_scenario (sc, 1.0, 1e6, &in, NULL));
  ModelParams mp;
  model_shape_params (sim_scenario_shape (sc), sim_scenario_shape (sc)->vocab, &mp);
  g_assert_true (in.checkpoint_derived);
  assert_rel (in.checkpoint_bytes, mp.total * 12.0, 1e-12);
  g_autoptr (SimScenario) fp32 = load ((const char *[]) { "parallel.master_weights=fp32", NULL });
  SimGoodputInputs in32;
  g_assert_true (sim_goodput_from_scenario (fp32, 1.0, 1e6, &in32, NULL));
  assert_rel (in32.checkpoint_bytes, mp.total * 14.0, 1e-12);
  /* 10,752 GPUs × 0.1 GB/s = 1,075.2 GB/s < 2,000 GB/s aggregate. */
  assert_rel (in.write_bytes_per_s, 1075.2e9, 1e-12);
  /* Read: per GPU as write (1,075.2 GB/s) but the aggregate read is 500 GB/s. */
  assert_rel (in.read_bytes_per_s, 500e9, 1e-12);
  assert_rel (in.params.restart_s, 600 + in.checkpoint_bytes / 500e9 + 120, 1e-12);
  g_assert_false (in.async);

  const char *async[] = { "reliability.async_checkpoint=true", "reliability.snapshot_GBps_per_gpu=20",
                          "reliability.checkpoint_GB=1075.2", NULL };
  g_autoptr (SimScenario) sa = load (async);
  g_assert_true (sim_goodput_from_scenario (sa, 1.0, 1e6, &in, NULL));
  /* 1,075.2 GB / 10,752 GPUs = 0.1 GB per GPU at 20 GB/s = 5 ms blocking; + 1,075.2/2,000 s write. */
  assert_rel (in.params.checkpoint_block_s, 0.005, 1e-12);
  assert_rel (in.params.checkpoint_write_s, 0.005 + 0.5376, 1e-12);

  const char *no_snap[] = { "reliability.async_checkpoint=true", NULL };
  g_autoptr (SimScenario) sn = load (no_snap);
  GError *error = NULL;
  g_assert_false (sim_goodput_from_scenario (sn, 1.0, 1e6, &in, &error));
  g_assert_nonnull (strstr (error->message, "snapshot_GBps_per_gpu"));
  g_clear_error (&error);
  const char *no_write[] = { "reliability.write_GBps_aggregate=0", NULL };
  g_autoptr (SimScenario) sw = load (no_write);
  g_assert_false (sim_goodput_from_scenario (sw, 1.0, 1e6, &in, &error));
  g_assert_nonnull (strstr (error->message, "write_GBps"));
  g_clear_error (&error);
}

/* By hand: 8 GPUs at 700 W busy, 100 W idle, utilization 0.5 → 400 W each; one node at 1,000 W:
 * IT 4,200 W, × PUE 1.5 = 6.3 kW. Capex $8,766 per GPU over 1 year of 8,766 h: $8/h for the job,
 * + 6.3 kW × $0.1 = $8.63 per hour-long step. Run: 2 h training at 6.3 kW + 1 h idle at
 * (800 + 1,000) × 1.5 = 2.7 kW = 15.3 kWh; $8 × 3 h + 15.3 × 0.1 = $25.53; 1e6 tokens. */
static void
test_cost_by_hand (void)
{
  SimCostParams p = { 0 };
  p.gpus = 8;
  p.nodes = 1;
  p.gpu_busy_w = 700;
  p.gpu_idle_w = 100;
  p.utilization = 0.5;
  p.node_w = 1000;
  p.pue = 1.5;
  p.capex_usd_per_gpu = 8766;
  p.amortization_years = 1;
  p.usd_per_kwh = 0.1;
  p.kg_co2e_per_kwh = 0.5;
  SimCost c;
  sim_cost_compute (&p, 3600, 7200, 10800, 1e6, &c);
  assert_rel (c.it_w, 4200, 1e-12);
  assert_rel (c.step_kwh, 6.3, 1e-12);
  assert_rel (c.step_usd, 8.63, 1e-12);
  assert_rel (c.run_kwh, 15.3, 1e-12);
  assert_rel (c.run_usd, 25.53, 1e-12);
  assert_rel (c.run_kg_co2e, 7.65, 1e-12);
  assert_rel (c.mtok_usd, 25.53, 1e-12);
  /* A cloud price replaces capex and energy in dollars; energy is still reported. */
  p.usd_per_gpu_hour = 2;
  sim_cost_compute (&p, 3600, 7200, 10800, 1e6, &c);
  assert_rel (c.step_usd, 16, 1e-12);
  assert_rel (c.run_usd, 48, 1e-12);
  assert_rel (c.run_kwh, 15.3, 1e-12);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/goodput/young-daly-textbook", test_young_daly_textbook);
  g_test_add_func ("/sim/goodput/segment-formula", test_segment_formula);
  g_test_add_func ("/sim/goodput/no-failures-equals-plain", test_no_failures_equals_plain);
  g_test_add_func ("/sim/goodput/monte-carlo-agrees-with-daly", test_monte_carlo_agrees_with_daly);
  g_test_add_func ("/sim/goodput/daly-is-near-optimal", test_daly_is_near_optimal);
  g_test_add_func ("/sim/goodput/spares-and-repair", test_spares_and_repair);
  g_test_add_func ("/sim/goodput/async-checkpoint", test_async_checkpoint);
  g_test_add_func ("/sim/goodput/bad-input", test_bad_input);
  g_test_add_func ("/sim/goodput/llama3-rates", test_llama3_rates);
  g_test_add_func ("/sim/goodput/checkpoint-size-and-rates", test_checkpoint_size_and_rates);
  g_test_add_func ("/sim/cost/by-hand", test_cost_by_hand);
  return g_test_run ();
}
