/* sim/sensitivity: elasticities against direct re-simulation, exact zeros for constants the run
 * never touches, order, refused sides, bad δ. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/calibrate/sensitivity.h"

/* One H100, two layers of the 1.7B GPT: compute and the optimizer only, no network at all. */
static const char *const files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini",
                                     "models/megatron-gpt-1.7b.ini", NULL };
#define BASE_SETS "cluster.gpus=1", "cluster.gpus_per_node=1", "cluster.nvlink_domain=1", "model.layers=2", "parallel.tp=1", "parallel.pp=1", \
                  "parallel.micro_batch=1", "parallel.global_batch=2", "training.seq_len=2048"

static double
step_with (const char *extra)
{
  const char *sets[] = { BASE_SETS, "scenario.base_gpus=0", extra, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load (files, sets, &error);
  g_assert_no_error (error);
  SimPredictOptions po = { 0 };
  sim_runner_options_init (&po.run);
  SimRunnerPrediction pred;
  g_assert_true (sim_runner_predict (sc, &po, &pred, &error));
  return pred.step_s;
}

static const SimSensitivityRow *
row_of (const SimSensitivity *s, const char *key)
{
  for (guint i = 0; i < sim_sensitivity_n_rows (s); i++)
    if (strcmp (sim_sensitivity_row (s, i)->key, key) == 0)
      return sim_sensitivity_row (s, i);
  return NULL;
}

static void
test_elasticities (void)
{
  const char *sets[] = { BASE_SETS, NULL };
  SimSensitivityOptions opt = { 0.05, 2 };
  g_autoptr (GError) error = NULL;
  g_autoptr (SimSensitivity) s = sim_sensitivity_run (files, sets, &opt, &error);
  g_assert_no_error (error);
  double t0 = step_with (NULL);
  g_assert_cmpfloat (sim_sensitivity_base_s (s), ==, t0);
  /* The bf16 GEMM efficiency (0.803 in the profile) against two direct runs. */
  const SimSensitivityRow *g = row_of (s, "hardware.gemm_eff_max_bf16");
  g_assert_nonnull (g);
  g_assert_cmpstr (g->value, ==, "0.803");
  g_assert_true (g_str_has_prefix (g->provenance, "stas00/ml-engineering"));
  double lo = step_with ("hardware.gemm_eff_max_bf16=0.76285"), hi = step_with ("hardware.gemm_eff_max_bf16=0.84315");
  g_assert_cmpfloat (g->lo_s, ==, lo);
  g_assert_cmpfloat (g->hi_s, ==, hi);
  g_assert_cmpfloat (fabs (g->elasticity - (hi - lo) / (0.1 * t0)), <, 1e-12);
  /* GEMMs are a large part but not all of the step (on this 2-layer case the calibrated
   * memory-bound kernels take much of the rest): between 0 and -1. */
  g_assert_cmpfloat (g->elasticity, <, -0.1);
  g_assert_cmpfloat (g->elasticity, >, -1.0);
  g_assert_null (g->refused);
  /* No network on one GPU: the NIC moves nothing, to the last bit. */
  const SimSensitivityRow *nic = row_of (s, "fabric.nic_eff");
  g_assert_nonnull (nic);
  g_assert_cmpfloat (nic->elasticity, ==, 0.0);
  /* A run without FP8 never reads the FP8 efficiency. */
  g_assert_cmpfloat (row_of (s, "hardware.gemm_eff_max_fp8")->elasticity, ==, 0.0);
  /* Largest first; rows refused on both sides (no elasticity) last. */
  gboolean seen_nan = FALSE;
  for (guint i = 0; i < sim_sensitivity_n_rows (s); i++)
    {
      double e = sim_sensitivity_row (s, i)->elasticity;
      if (isnan (e))
        seen_nan = TRUE;
      else
        {
          g_assert_false (seen_nan);
          if (i > 0)
            g_assert_cmpfloat (fabs (sim_sensitivity_row (s, i - 1)->elasticity), >=, fabs (e));
        }
    }
  /* Constants without a value are not listed (the fabric gives no per-hop latency); the launch gap
   * of the Hopper calibration (scenarios/calibration/hopper.ini) is. */
  g_assert_null (row_of (s, "fabric.hop_latency_us"));
  g_assert_nonnull (row_of (s, "hardware.launch_us"));
}

/* 0.98 + 5 % is above 1: the loader refuses that side; the row keeps the one-sided difference. */
static void
test_refused_side (void)
{
  const char *sets[] = { BASE_SETS, "hardware.gemm_eff_max_bf16=0.98", NULL };
  SimSensitivityOptions opt = { 0.05, 1 };
  g_autoptr (GError) error = NULL;
  g_autoptr (SimSensitivity) s = sim_sensitivity_run (files, sets, &opt, &error);
  g_assert_no_error (error);
  const SimSensitivityRow *g = row_of (s, "hardware.gemm_eff_max_bf16");
  g_assert_true (isnan (g->hi_s));
  g_assert_false (isnan (g->lo_s));
  g_assert_nonnull (g->refused);
  g_assert_true (g_str_has_prefix (g->refused, "+5 %: "));
  g_assert_nonnull (strstr (g->refused, "gemm_eff_max_bf16"));
  double t0 = sim_sensitivity_base_s (s);
  g_assert_cmpfloat (fabs (g->elasticity - (t0 - g->lo_s) / (0.05 * t0)), <, 1e-12);
  g_autofree char *json = sim_sensitivity_to_json (s);
  g_assert_nonnull (strstr (json, "\"hi_step_s\" : null"));
}

static void
test_bad_delta (void)
{
  const char *sets[] = { BASE_SETS, NULL };
  SimSensitivityOptions opt = { 0.6, 1 };
  g_autoptr (GError) error = NULL;
  g_assert_null (sim_sensitivity_run (files, sets, &opt, &error));
  g_assert_error (error, SIM_SENSITIVITY_ERROR, SIM_SENSITIVITY_ERROR_USAGE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/sensitivity/elasticities", test_elasticities);
  g_test_add_func ("/sim/sensitivity/refused-side", test_refused_side);
  g_test_add_func ("/sim/sensitivity/bad-delta", test_bad_delta);
  return g_test_run ();
}
