/* Calibration fits and measurement reading: NIST StRD certified problems through our wrappers,
 * recovery of known parameters from seeded synthetic data, nccl-tests parsing (fixtures in
 * tests/data reconstructed from published figures) and the profile text. */
#include "config.h"
#include <math.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "calib/fit.h"
#include "calib/measure.h"
#include "calib/profile.h"
#include "sim/scenario/scenario.h"
#include "sim/gpu/gpu.h"

#define SEED 20240601UL

static void
assert_rel (double got, double want, double rel)
{
  if (!(fabs (got - want) <= rel * fabs (want)))
    g_error ("got %.15g, want %.15g (relative tolerance %g)", got, want, rel);
}

/* NIST StRD linear regression "Norris" (lower difficulty), 36 observations y = B0 + B1·x.
 * Data and certified values: https://www.itl.nist.gov/div898/strd/lls/data/Norris.shtml
 *   B0 = -0.262323073774029  (sd 0.232818234301152)
 *   B1 =  1.00211681802045   (sd 0.429796848199937E-03)
 *   residual sd 0.884796396144373 */
static const double norris[][2] = { /* y, x */
  { 0.1, 0.2 }, { 338.8, 337.4 }, { 118.1, 118.2 }, { 888.0, 884.6 }, { 9.2, 10.1 }, { 228.1, 226.5 },
  { 668.5, 666.3 }, { 998.5, 996.3 }, { 449.1, 448.6 }, { 778.9, 777.0 }, { 559.2, 558.2 }, { 0.3, 0.4 },
  { 0.1, 0.6 }, { 778.1, 775.5 }, { 668.8, 666.9 }, { 339.3, 338.0 }, { 448.9, 447.5 }, { 10.8, 11.6 },
  { 557.7, 556.0 }, { 228.3, 228.1 }, { 998.0, 995.8 }, { 888.8, 887.6 }, { 119.6, 120.2 }, { 0.3, 0.3 },
  { 0.6, 0.3 }, { 557.6, 556.8 }, { 339.3, 339.1 }, { 888.0, 887.2 }, { 998.5, 999.0 }, { 778.9, 779.0 },
  { 10.2, 11.1 }, { 117.6, 118.3 }, { 228.9, 229.2 }, { 668.4, 669.1 }, { 449.2, 448.9 }, { 0.2, 0.5 },
};

static void
test_norris (void)
{
  gsize n = G_N_ELEMENTS (norris);
  double x[G_N_ELEMENTS (norris)], y[G_N_ELEMENTS (norris)], w[G_N_ELEMENTS (norris)];
  for (gsize i = 0; i < n; i++)
    y[i] = norris[i][0], x[i] = norris[i][1], w[i] = 1.0;
  CalibLinearFit f;
  g_autoptr (GError) error = NULL;
  /* Unweighted (GSL's own scatter-scaled covariance) and unit-weighted (our χ²/dof scaling) must
   * both reproduce the certified values: the two paths of calib_fit_linear. */
  for (int weighted = 0; weighted < 2; weighted++)
    {
      g_assert_true (calib_fit_linear (x, y, weighted ? w : NULL, n, &f, &error));
      g_assert_no_error (error);
      assert_rel (f.c0, -0.262323073774029, 1e-9);
      assert_rel (f.c1, 1.00211681802045, 1e-12);
      assert_rel (f.sigma_c0, 0.232818234301152, 1e-9);
      assert_rel (f.sigma_c1, 0.429796848199937e-03, 1e-9);
      assert_rel (sqrt (f.chisq / f.dof), 0.884796396144373, 1e-9);
      g_assert_cmpint (f.dof, ==, 34);
    }
}

/* NIST StRD nonlinear regression "Misra1a" (lower difficulty), y = b1·(1 − exp(−b2·x)).
 * https://www.itl.nist.gov/div898/strd/nls/data/misra1a.shtml
 *   b1 = 2.3894212918E+02 (sd 2.7070075241E+00), b2 = 5.5015643181E-04 (sd 7.2668688436E-06)
 *   residual sum of squares 1.2455138894E-01; starts (500, 1e-4) and (250, 5e-4). */
static const double misra1a[][2] = { /* y, x */
  { 10.07, 77.6 }, { 14.73, 114.9 }, { 17.94, 141.1 }, { 23.93, 190.8 }, { 29.61, 239.9 },
  { 35.18, 289.0 }, { 40.02, 332.8 }, { 44.82, 378.4 }, { 50.76, 434.8 }, { 55.05, 477.3 },
  { 61.01, 536.8 }, { 66.40, 593.1 }, { 75.47, 689.1 }, { 81.78, 760.0 },
};

static double
misra1a_model (double x, const double *p, gpointer user)
{
  return p[0] * (1.0 - exp (-p[1] * x));
}

static void
test_misra1a (void)
{
  gsize n = G_N_ELEMENTS (misra1a);
  double x[G_N_ELEMENTS (misra1a)], y[G_N_ELEMENTS (misra1a)];
  for (gsize i = 0; i < n; i++)
    y[i] = misra1a[i][0], x[i] = misra1a[i][1];
  const double starts[2][2] = { { 500, 1e-4 }, { 250, 5e-4 } };
  for (int s = 0; s < 2; s++)
    {
      CalibNlinFit f;
      g_autoptr (GError) error = NULL;
      g_assert_true (calib_fit_nlinear (misra1a_model, NULL, 2, starts[s], x, y, NULL, n, &f, &error));
      g_assert_no_error (error);
      /* NIST asks for about 6 agreeing digits from a good solver with default tolerances. */
      assert_rel (f.p[0], 2.3894212918e+02, 1e-6);
      assert_rel (f.p[1], 5.5015643181e-04, 1e-6);
      assert_rel (f.sigma[0], 2.7070075241e+00, 1e-4);
      assert_rel (f.sigma[1], 7.2668688436e-06, 1e-4);
      assert_rel (f.chisq, 1.2455138894e-01, 1e-6);
      g_assert_cmpint (f.dof, ==, 12);
    }
}

/* α-β line from known parameters with 2% Gaussian relative noise (seeded): the fit recovers α and
 * β within 3 of its own σ, and its σ is honest (the truth is not 10σ away nor σ absurdly large). */
static void
test_alpha_beta_synthetic (void)
{
  const double alpha_us = 25.0, busbw_GBps = 380.0; /* a ring all-gather on 8 H100, say */
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (rng, SEED);
  g_test_message ("seed %lu", SEED);
  GString *tsv = g_string_new ("# tool\tsynthetic\nbench\top\tdtype\tnranks\tsize_bytes\tcount\ttime_us_median\t"
                               "time_us_p10\ttime_us_p90\talgbw_GBps\tbusbw_GBps\tbusbw_GBps_p10\tbusbw_GBps_p90\twrong\n");
  int n = 8;
  double f = 7.0 / 8.0;
  for (double s = 1024; s <= 8.0 * 1073741824.0; s *= 2)
    {
      double t = alpha_us + s * f / (busbw_GBps * 1e3);
      double tm = t * (1.0 + gsl_ran_gaussian (rng, 0.02));
      /* p10/p90 of a normal with σ = 2% of t. */
      g_string_append_printf (tsv, "nccl\tall_gather\tfloat\t%d\t%.0f\t%.0f\t%.6f\t%.6f\t%.6f\t0\t%.6f\t0\t0\t0\n", n, s,
                              s / 4, tm, tm - 1.2816 * 0.02 * t, tm + 1.2816 * 0.02 * t, s * f / tm * 1e-3);
    }
  gsl_rng_free (rng);
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load_data (set, "synthetic.tsv", tsv->str, &error));
  g_string_free (tsv, TRUE);
  g_autoptr (CalibProfile) prof = calib_profile_fit (set, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (calib_profile_n_collectives (prof), ==, 1);
  const CalibCollectiveFit *c = calib_profile_collective (prof, 0);
  g_test_message ("alpha %.3f ± %.3f us, busbw %.2f ± %.2f GB/s, chi2/dof %.2f", c->alpha_us, c->sigma_alpha_us,
                  c->busbw_GBps, c->sigma_busbw_GBps, c->chisq_dof);
  g_assert_cmpstr (c->collective, ==, "all_gather");
  g_assert_cmpint (c->nranks, ==, 8);
  g_assert_cmpfloat (fabs (c->alpha_us - alpha_us), <, 3 * c->sigma_alpha_us);
  g_assert_cmpfloat (fabs (c->busbw_GBps - busbw_GBps), <, 3 * c->sigma_busbw_GBps);
  g_assert_cmpfloat (c->sigma_alpha_us, <, 0.1 * alpha_us);
  g_assert_cmpfloat (c->sigma_busbw_GBps, <, 0.02 * busbw_GBps);
  /* Weights match the true noise, so χ²/dof ≈ 1 (22 dof: 0.4 … 1.9 covers > 99%). */
  g_assert_cmpfloat (c->chisq_dof, >, 0.4);
  g_assert_cmpfloat (c->chisq_dof, <, 1.9);
}

/* Saturating GEMM curve from known parameters, 1.5% relative noise: recovered within 3σ. */
static void
test_saturating_synthetic (void)
{
  const double peak = 720.0, half_flop = 3e10, hill = 1.3;
  const double p_true[3] = { peak, log10 (half_flop), hill };
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (rng, SEED + 1);
  g_test_message ("seed %lu", SEED + 1);
  GString *tsv = g_string_new ("bench\tname\tdtype\tM\tN\tK\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                               "TFLOPS_median\tTFLOPS_p10\tTFLOPS_p90\twrong\n");
  for (int m = 256; m <= 16384; m *= 2)
    for (int k = 512; k <= 16384; k *= 4)
      {
        double flop = 2.0 * m * m * k;
        double r = calib_fit_saturating (flop, p_true, NULL) * (1.0 + gsl_ran_gaussian (rng, 0.015));
        double t = flop / r / 1e6;
        g_string_append_printf (tsv, "gemm\t-\tbf16\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t0\t0\t0\n", m, m, k, t, t, t,
                                r);
      }
  gsl_rng_free (rng);
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load_data (set, "gemm.tsv", tsv->str, &error));
  g_string_free (tsv, TRUE);
  g_autoptr (CalibProfile) prof = calib_profile_fit (set, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (calib_profile_n_curves (prof), ==, 1);
  const CalibCurveFit *c = calib_profile_curve (prof, 0);
  g_assert_cmpstr (c->series, ==, "bf16");
  for (int i = 0; i < 3; i++)
    {
      g_test_message ("p[%d] = %.5g ± %.3g (true %.5g)", i, c->fit.p[i], c->fit.sigma[i], p_true[i]);
      g_assert_cmpfloat (fabs (c->fit.p[i] - p_true[i]), <, 3 * c->fit.sigma[i]);
    }
  g_assert_cmpfloat (c->fit.sigma[0], <, 0.02 * peak);
}

static char *
data_path (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

/* The H200 fixture holds Azure's published in-place busbw (hardware.md §2) laid out as nccl-tests
 * output; the reader must find 8 ranks, the collective, the GPU name and exactly those figures. */
static void
test_nccl_tests_fixture (void)
{
  g_autofree char *path = data_path ("nccl-tests-h200-all_reduce-8gpu.txt");
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load (set, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (calib_measure_set_n_points (set), ==, 4);
  g_assert_cmpstr (calib_measure_set_source_gpu (set, 0), ==, "NVIDIA H200");
  const double busbw[4] = { 240.4, 412.5, 467.6, 479.98 };
  for (guint i = 0; i < 4; i++)
    {
      const CalibPoint *p = calib_measure_set_point (set, i);
      g_assert_cmpint (p->kind, ==, CALIB_KIND_NCCL);
      g_assert_cmpstr (p->op, ==, "all_reduce");
      g_assert_cmpint (p->nranks, ==, 8);
      assert_rel (p->rate, busbw[i], 1e-9);
      /* time = S·(2·7/8)/busbw, as printed to 0.1 µs. */
      assert_rel (p->time_us, p->size_bytes * 1.75 / (busbw[i] * 1e3), 1e-3);
      g_assert_true (isnan (p->time_us_p10));
    }
}

/* α-β fit of the H200 fixture. Expected from the two largest points alone (a hand derivation):
 * t(1 GiB) = 2^30·1.75/467.6e3 = 4018.6 µs, t(8 GiB) = 31318.8 µs, so busbw ≈ 7·2^30·1.75 /
 * (31318.8 − 4018.6) µs = 481.8 GB/s and α ≈ 119 µs. The small sizes pull the 1%-weighted line to
 * a smaller α; busbw stays near the NVLS figure (~480 GB/s, hardware.md §2). */
static void
test_fit_h200_fixture (void)
{
  g_autofree char *path = data_path ("nccl-tests-h200-all_reduce-8gpu.txt");
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load (set, path, &error));
  g_autoptr (CalibProfile) prof = calib_profile_fit (set, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (calib_profile_n_collectives (prof), ==, 1);
  const CalibCollectiveFit *c = calib_profile_collective (prof, 0);
  g_test_message ("H200 all_reduce: alpha %.2f ± %.2f us, busbw %.2f ± %.2f GB/s, chi2/dof %.3g", c->alpha_us,
                  c->sigma_alpha_us, c->busbw_GBps, c->sigma_busbw_GBps, c->chisq_dof);
  g_assert_cmpfloat (c->busbw_GBps, >, 470);
  g_assert_cmpfloat (c->busbw_GBps, <, 495);
  g_assert_cmpfloat (c->alpha_us, >, 0);
  g_assert_cmpfloat (c->alpha_us, <, 130);
  g_assert_cmpstr (c->sources, ==, "nccl-tests-h200-all_reduce-8gpu.txt");

  /* The profile text is a valid key file with the [hardware] keys, 1σ and sources in comments. */
  g_autofree char *text = calib_profile_to_data (prof, "trainsim fit test", NULL, NULL);
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_assert_true (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  gsize n = 0;
  g_auto (GStrv) colls = g_key_file_get_string_list (kf, "hardware", "nccl_collectives", &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpstr (colls[0], ==, "all_reduce");
  g_autofree double *bw = g_key_file_get_double_list (kf, "hardware", "nccl_busbw_GBps", &n, &error);
  g_assert_no_error (error);
  assert_rel (bw[0], c->busbw_GBps, 1e-5);
  g_autofree gint *ranks = g_key_file_get_integer_list (kf, "hardware", "nccl_nranks", &n, &error);
  g_assert_cmpint (ranks[0], ==, 8);
  g_assert_nonnull (strstr (text, "± "));
  g_assert_nonnull (strstr (text, "chi2/dof"));
  g_assert_nonnull (strstr (text, "nccl-tests-h200-all_reduce-8gpu.txt"));
}

/* Real nccl-tests layout (both column groups, redop/root) behind mpirun's --tag-output prefixes,
 * the collective named only by the file name. */
static void
test_nccl_tests_tagged (void)
{
  const char *text = "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5\n"
                     "[1,0]<stdout>:#  Rank  0 Group  0 Pid  11 on a device  0 [0x19] NVIDIA H100 80GB HBM3\n"
                     "[1,0]<stdout>:#  Rank  1 Group  0 Pid  12 on b device  0 [0x19] NVIDIA H100 80GB HBM3\n"
                     "[1,0]<stdout>:#       size  count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                     "[1,0]<stdout>:        1024    128  float  none   -1 20.00  0.05  0.03   0  19.00  0.05  0.03   0\n"
                     "[1,0]<stdout>:        2048    256  float  none   -1 21.00  0.10  0.05   0  20.00  0.10  0.05   0\n"
                     "some-host:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
                     "[1,0]<stdout>:# Avg bus bandwidth    : 0.04\n";
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load_data (set, "run/all_gather_perf.log", text, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (calib_measure_set_n_points (set), ==, 2);
  const CalibPoint *p = calib_measure_set_point (set, 1);
  g_assert_cmpstr (p->op, ==, "all_gather");
  g_assert_cmpint (p->nranks, ==, 2);
  assert_rel (p->time_us, 21.0, 1e-12); /* out-of-place, not in-place */
  assert_rel (p->size_bytes, 2048, 1e-12);
}

static void
test_rejects_bad_input (void)
{
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  const char *wrong = "bench\tname\tdtype\tM\tN\tK\ttime_us_median\ttime_us_p10\ttime_us_p90\tTFLOPS_median\t"
                      "TFLOPS_p10\tTFLOPS_p90\twrong\n"
                      "gemm\t-\tbf16\t1024\t1024\t1024\t5\t5\t5\t400\t400\t400\t3\n";
  g_assert_false (calib_measure_set_load_data (set, "w.tsv", wrong, &error));
  g_assert_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT);
  g_assert_nonnull (strstr (error->message, "w.tsv:2"));
  g_clear_error (&error);
  g_assert_false (calib_measure_set_load_data (set, "x.txt", "hello\n", &error));
  g_assert_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_INPUT);
  g_clear_error (&error);
  /* nccl-tests output without rank lines: the bus factor is unknowable. */
  g_assert_false (calib_measure_set_load_data (set, "all_reduce_perf.txt",
                                               "# nThread 1\n  1024 256 float sum -1 1 1 1 0 1 1 1 0\n", &error));
  g_assert_nonnull (strstr (error->message, "Rank"));
  g_clear_error (&error);
  /* Too few sizes for a saturating curve: not fitted, and a note naming the series says so (the
   * profile keeps the measured row in its table), not a silent skip. */
  const char *few = "bench\tname\tdtype\tM\tN\tK\ttime_us_median\ttime_us_p10\ttime_us_p90\tTFLOPS_median\t"
                    "TFLOPS_p10\tTFLOPS_p90\twrong\n"
                    "gemm\t-\tfp8\t1024\t1024\t1024\t5\t5\t5\t400\t400\t400\t0\n";
  g_autoptr (CalibMeasureSet) set2 = calib_measure_set_new ();
  g_assert_true (calib_measure_set_load_data (set2, "few.tsv", few, &error));
  g_autoptr (CalibProfile) prof = calib_profile_fit (set2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (calib_profile_n_curves (prof), ==, 0);
  g_assert_cmpuint (calib_profile_n_notes (prof), ==, 1);
  g_assert_nonnull (strstr (calib_profile_note (prof, 0), "gemm fp8 curve not fitted"));
  g_autofree char *text = calib_profile_to_data (prof, NULL, NULL, NULL);
  g_assert_nonnull (strstr (text, "# note: gemm fp8 curve not fitted"));
  g_assert_nonnull (strstr (text, "gemm_table = fp8:1024x1024x1024:400;"));
  g_assert_null (strstr (text, "gemm_peak_TFLOPS"));
  /* One rank: busbw 0 is a valid row, but nothing can be fitted from it, which is an error. */
  const char *one = "bench\top\tdtype\tnranks\tsize_bytes\tcount\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                    "algbw_GBps\tbusbw_GBps\tbusbw_GBps_p10\tbusbw_GBps_p90\twrong\n"
                    "nccl\tall_reduce\tfloat\t1\t1024\t256\t5\t5\t5\t0.2\t0\t0\t0\t0\n";
  g_autoptr (CalibMeasureSet) set3 = calib_measure_set_new ();
  g_assert_true (calib_measure_set_load_data (set3, "one.tsv", one, &error));
  g_autoptr (CalibProfile) prof3 = calib_profile_fit (set3, &error);
  g_assert_null (prof3);
  g_assert_error (error, CALIB_FIT_ERROR, CALIB_FIT_ERROR_TOO_FEW);
  g_assert_nonnull (strstr (error->message, "2 or more GPUs"));
  g_clear_error (&error);
}

/* Every bench kind of our TSVs parses, with FLOPs by the documented conventions. */
static void
test_our_tsv_kinds (void)
{
  const char *text = "# gpu\tNVIDIA H100 80GB HBM3\n"
                     "bench\tname\tpass\tdtype\tB\tH\tHkv\tS\tD\trecompute\ttime_us_median\ttime_us_p10\t"
                     "time_us_p90\tTFLOPS_median\tTFLOPS_p10\tTFLOPS_p90\twrong\n"
                     "attention\t-\tbwd\tbf16\t1\t32\t8\t4096\t128\tno\t1000\t990\t1010\t275\t272\t278\t0\n";
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load_data (set, "attn.tsv", text, &error));
  g_assert_no_error (error);
  const CalibPoint *p = calib_measure_set_point (set, 0);
  g_assert_cmpint (p->kind, ==, CALIB_KIND_ATTENTION);
  g_assert_cmpstr (p->op, ==, "bwd");
  /* backward = 2 × causal forward = 2 · 4·B·H·S²·D/2 = 4·32·4096²·128 */
  assert_rel (p->flop, 4.0 * 32 * 4096.0 * 4096.0 * 128, 1e-12);
  g_assert_cmpstr (calib_measure_set_source_gpu (set, 0), ==, "NVIDIA H100 80GB HBM3");
  const char *mem = "bench\top\tdtype\tbuffer_bytes\tbytes_moved\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                    "GBps_median\tGBps_p10\tGBps_p90\twrong\n"
                    "memory\tcopy\tfp32\t1048576\t2097152\t2\t2\t2\t1048\t1048\t1048\tN/A\n";
  g_assert_true (calib_measure_set_load_data (set, "mem.tsv", mem, &error));
  p = calib_measure_set_point (set, 1);
  g_assert_cmpint (p->kind, ==, CALIB_KIND_MEMORY);
  g_assert_cmpstr (p->op, ==, "copy");
  g_assert_cmpint (p->wrong, ==, -1);
  assert_rel (p->size_bytes, 2097152, 1e-12);
  g_assert_cmpuint (calib_measure_set_n_sources (set), ==, 2);
  /* A grouped GEMM (batch column, as calib-plan lists MoE experts): FLOPs 2·M·N·K·batch. */
  const char *grouped = "bench\tname\tdtype\tM\tN\tK\tbatch\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                        "TFLOPS_median\tTFLOPS_p10\tTFLOPS_p90\twrong\n"
                        "gemm\tfc1\tbf16\t512\t14336\t4096\t8\t1000\t990\t1010\t481\t476\t486\t0\n";
  g_assert_true (calib_measure_set_load_data (set, "moe.tsv", grouped, &error));
  p = calib_measure_set_point (set, 2);
  g_assert_cmpint (p->batch, ==, 8);
  assert_rel (p->flop, 2.0 * 512 * 14336 * 4096 * 8, 1e-12);
}

/* Two points fix the α-β line exactly (dof 0: no σ). A100 fixture (Azure ND A100 v4 busbw 228.1 at
 * 1 GiB, 231.58 at 8 GiB, factor 1.75): t = 8237.6 µs and 64911.9 µs, so busbw = 7·2^30·1.75 B /
 * (64911.9 − 8237.6) µs = 232.09 GB/s and α = 8237.6 − 2^30·1.75/232.09e3 = 141 µs. */
static void
test_two_point_line (void)
{
  g_autofree char *path = data_path ("nccl-tests-a100-all_reduce-8gpu.txt");
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load (set, path, &error));
  g_autoptr (CalibProfile) prof = calib_profile_fit (set, &error);
  g_assert_no_error (error);
  const CalibCollectiveFit *c = calib_profile_collective (prof, 0);
  g_assert_cmpfloat_with_epsilon (c->busbw_GBps, 232.09, 0.05);
  g_assert_cmpfloat_with_epsilon (c->alpha_us, 141.0, 1.0);
  g_assert_cmpint (c->dof, ==, 0);
  g_assert_true (isnan (c->sigma_busbw_GBps));
}

/* nccl-tests' bus factors (doc/PERFORMANCE.md in NVIDIA/nccl-tests). */
static void
test_bus_factor (void)
{
  assert_rel (calib_measure_bus_factor ("all_reduce", 8), 1.75, 1e-15);
  assert_rel (calib_measure_bus_factor ("all_gather", 8), 0.875, 1e-15);
  assert_rel (calib_measure_bus_factor ("reduce_scatter", 4), 0.75, 1e-15);
  assert_rel (calib_measure_bus_factor ("alltoall", 2), 0.5, 1e-15);
  assert_rel (calib_measure_bus_factor ("broadcast", 16), 1.0, 1e-15);
  g_assert_cmpfloat (calib_measure_bus_factor ("gossip", 8), ==, 0.0);
}

/* A profile written by `fit` is a scenario layer: on top of the embedded default (GPT-3 175B on
 * H100, whose h100-sxm.ini gives gemm_eff_max_bf16 0.803, gemm_eff_max_fp8 0.698, mem_eff 0.887,
 * nvlink_eff 0.80 from public figures), it must load through the strict loader and replace exactly
 * the [hardware] values it covers with the fitted ones: the bf16 series gives gemm_eff_max_bf16 =
 * P/989 and gemm_eff_half_GFLOP_bf16 = x½ (fp8 keeps its own figure), mem_eff =
 * copy peak / 3350 GB/s, nvlink_eff = ring busbw / 450 GB/s; the list keys arrive as written.
 * The synthetic measurements come from
 * known parameters chosen below H100's public figures, so every efficiency changes. */
static void
test_profile_loads_as_layer (void)
{
  GString *t = g_string_new ("# gpu\tsynthetic\n# nodes\t1\nbench\top\tdtype\tnranks\tsize_bytes\tcount\t"
                             "time_us_median\ttime_us_p10\ttime_us_p90\talgbw_GBps\tbusbw_GBps\tbusbw_GBps_p10\t"
                             "busbw_GBps_p90\twrong\n");
  const double alpha_us = 20, busbw = 340; /* all_gather on 8 GPUs of one node */
  for (double sz = 65536; sz <= 4.0 * 1073741824.0; sz *= 4)
    {
      double tm = alpha_us + sz * 0.875 / (busbw * 1e3);
      g_string_append_printf (t, "nccl\tall_gather\tfloat\t8\t%.0f\t%.0f\t%.4f\t%.4f\t%.4f\t0\t%.4f\t0\t0\t0\n", sz,
                              sz / 32, tm, tm, tm, sz * 0.875 / tm * 1e-3);
    }
  GString *g = g_string_new ("# gpu\tsynthetic\nbench\tname\tdtype\tM\tN\tK\ttime_us_median\ttime_us_p10\t"
                             "time_us_p90\tTFLOPS_median\tTFLOPS_p10\tTFLOPS_p90\twrong\n");
  /* GEMM rates drawn from the simulator's own curve on H100's 132 SMs (e_max 650/989, G½ 20 GFLOP,
   * 128×128-tile waves, K split where that fills the SMs), square and skinny shapes, so the fit must
   * recover both constants. */
  SimGpuSpec h100;
  memset (&h100, 0, sizeof h100);
  h100.sm_count = 132;
  const int shapes[][3] = { { 256, 256, 256 },     { 512, 512, 512 },     { 1024, 1024, 1024 },
                            { 2048, 2048, 2048 },  { 4096, 4096, 4096 },  { 8192, 8192, 8192 },
                            { 16384, 16384, 16384 }, { 2048, 12288, 12288 }, { 2048, 3072, 12288 },
                            { 1536, 5120, 4096 },  { 4096, 1280, 8192 } };
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    {
      int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      double flop = 2.0 * m * n * k, G = flop / 1e9;
      double r = 989.0 * (650.0 / 989.0) * G / (G + 20.0) * sim_gpu_wave_efficiency_k (&h100, m, n, k, 0);
      g_string_append_printf (g, "gemm\t-\tbf16\t%d\t%d\t%d\t%.9g\t%.9g\t%.9g\t%.9g\t0\t0\t0\n", m, n, k,
                              flop / r / 1e6, flop / r / 1e6, flop / r / 1e6, r);
    }
  GString *mem = g_string_new ("# gpu\tsynthetic\nbench\top\tdtype\tbuffer_bytes\tbytes_moved\ttime_us_median\t"
                               "time_us_p10\ttime_us_p90\tGBps_median\tGBps_p10\tGBps_p90\twrong\n");
  const double pm[3] = { 2800.0, log10 (4e7), 1.0 };
  for (double b = 1048576; b <= 4294967296.0; b *= 4)
    {
      double r = calib_fit_saturating (2 * b, pm, NULL);
      g_string_append_printf (mem, "memory\tcopy\tfp32\t%.0f\t%.0f\t%.6g\t%.6g\t%.6g\t%.6g\t0\t0\t0\n", b, 2 * b,
                              2 * b / r / 1e3, 2 * b / r / 1e3, 2 * b / r / 1e3, r);
    }
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (calib_measure_set_load_data (set, "nccl.tsv", t->str, &error));
  g_assert_true (calib_measure_set_load_data (set, "gemm.tsv", g->str, &error));
  g_assert_true (calib_measure_set_load_data (set, "memory.tsv", mem->str, &error));
  g_assert_no_error (error);
  g_string_free (t, TRUE);
  g_string_free (g, TRUE);
  g_string_free (mem, TRUE);
  g_autoptr (CalibProfile) prof = calib_profile_fit (set, &error);
  g_assert_no_error (error);

  g_autofree char *hw_path = g_build_filename (TRAINSIM_SRCDIR, "scenarios", "hardware", "h100-sxm.ini", NULL);
  g_autoptr (GKeyFile) hw = g_key_file_new ();
  g_assert_true (g_key_file_load_from_file (hw, hw_path, G_KEY_FILE_NONE, &error));
  g_autofree char *text = calib_profile_to_data (prof, "test", hw, "h100-sxm.ini");
  g_autofree char *dir = g_dir_make_tmp ("trainsim-calib-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "profile.ini", NULL);
  g_assert_true (g_file_set_contents (path, text, -1, &error));

  const char *base_files[] = { SIM_SCENARIO_DEFAULT, NULL };
  const char *files[] = { SIM_SCENARIO_DEFAULT, path, NULL };
  /* The microbenchmark curve alone: the deck calibration's in-situ scale (scenarios/calibration/)
   * multiplies it inside a training step, not in a microbenchmark. */
  const char *micro[] = { "hardware.gemm_insitu_bf16=1", "hardware.mem_insitu=1", NULL };
  g_autoptr (SimScenario) base = sim_scenario_load (base_files, micro, &error);
  g_assert_no_error (error);
  g_autoptr (SimScenario) sc = sim_scenario_load (files, micro, &error);
  g_assert_no_error (error);
  const SimGpuSpec *g0 = sim_scenario_gpu (base), *g1 = sim_scenario_gpu (sc);
  g_test_message ("gemm_eff_max %.4f -> %.4f, mem_eff %.4f -> %.4f, nvlink_eff %.4f -> %.4f", g0->gemm_eff_max[MODEL_DTYPE_BF16],
                  g1->gemm_eff_max[MODEL_DTYPE_BF16], g0->mem_eff, g1->mem_eff, g0->nvlink_eff, g1->nvlink_eff);
  /* Exact data, so the fits return the parameters; the profile prints 4 decimals. */
  g_assert_cmpfloat_with_epsilon (g1->gemm_eff_max[MODEL_DTYPE_BF16], 650.0 / 989.0, 1e-4);
  g_assert_cmpfloat_with_epsilon (g1->gemm_eff_half_gflop[MODEL_DTYPE_BF16], 20.0, 0.01);
  /* ... so the simulator, given the profile, reproduces every measured rate. */
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    {
      int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
      double G = 2.0 * m * n * k / 1e9;
      double want = (650.0 / 989.0) * G / (G + 20.0) * sim_gpu_wave_efficiency_k (&h100, m, n, k, 0);
      assert_rel (sim_gpu_gemm_efficiency (g1, MODEL_DTYPE_BF16, m, n, k), want, 2e-4);
    }
  g_assert_cmpfloat_with_epsilon (g1->mem_eff, 2800.0 / 3350.0, 1e-4);
  g_assert_cmpfloat_with_epsilon (g1->nvlink_eff, 340.0 / 450.0, 1e-4);
  g_assert_cmpfloat (g1->gemm_eff_max[MODEL_DTYPE_BF16], <, g0->gemm_eff_max[MODEL_DTYPE_BF16]);
  g_assert_cmpfloat (g1->gemm_eff_max[MODEL_DTYPE_FP8], ==, g0->gemm_eff_max[MODEL_DTYPE_FP8]);
  g_assert_cmpfloat (g1->mem_eff, <, g0->mem_eff);
  g_assert_cmpfloat (g1->nvlink_eff, <, g0->nvlink_eff);
  /* Values the profile does not cover stay as the base gives them. */
  g_assert_cmpfloat (g1->peak_flops[MODEL_DTYPE_BF16], ==, g0->peak_flops[MODEL_DTYPE_BF16]);
  g_assert_cmpfloat (g1->hbm_bw_bytes_per_s, ==, g0->hbm_bw_bytes_per_s);
  g_assert_cmpfloat (g1->attn_eff, ==, g0->attn_eff);
  /* The fitted lists arrive with the profile as their file. */
  const SimScenarioValue *v = sim_scenario_lookup (sc, "hardware", "nccl_busbw_GBps");
  g_assert_nonnull (v);
  g_assert_cmpstr (v->file, ==, path);
  assert_rel (g_ascii_strtod (v->value, NULL), 340.0, 1e-5);
  v = sim_scenario_lookup (sc, "hardware", "gemm_eff_max_bf16");
  g_assert_nonnull (strstr (v->source, "gemm.tsv"));
  g_assert_nonnull (strstr (v->source, "±"));
  g_remove (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/calib/fit/nist-norris", test_norris);
  g_test_add_func ("/calib/fit/nist-misra1a", test_misra1a);
  g_test_add_func ("/calib/fit/alpha-beta-recovers-known", test_alpha_beta_synthetic);
  g_test_add_func ("/calib/fit/saturating-recovers-known", test_saturating_synthetic);
  g_test_add_func ("/calib/measure/bus-factor", test_bus_factor);
  g_test_add_func ("/calib/measure/nccl-tests-fixture", test_nccl_tests_fixture);
  g_test_add_func ("/calib/measure/nccl-tests-tagged-output", test_nccl_tests_tagged);
  g_test_add_func ("/calib/measure/our-tsv-kinds", test_our_tsv_kinds);
  g_test_add_func ("/calib/measure/rejects-bad-input", test_rejects_bad_input);
  g_test_add_func ("/calib/profile/h200-fixture", test_fit_h200_fixture);
  g_test_add_func ("/calib/profile/a100-two-point-line", test_two_point_line);
  g_test_add_func ("/calib/profile/loads-as-scenario-layer", test_profile_loads_as_layer);
  return g_test_run ();
}
