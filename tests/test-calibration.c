/* sim/calibrate/calibration: the robust linear step (recovery, coverage of its 1σ, Huber weights, a
 * fold that never reads the rows it leaves out) and the whole fit on a synthetic deck whose step
 * times the simulator drew at known constants (with noise). */
#include "config.h"
#include <math.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include "sim/calibrate/calibration.h"
#include "sim/scenario/scenario.h"

#define N 40
#define NP 3

typedef struct {
  double r[N], J[N * NP];
  gboolean use[N];
  double lin[NP], phi0[NP], sd0[NP], lo[NP], hi[NP];
} Lin;

/* r_i = J_i·(φ_lin − φ_true) + ε: the exact linear model whose minimum is φ_true. */
static void
lin_draw (Lin *l, gsl_rng *rng, const double *truth, double noise)
{
  for (int k = 0; k < NP; k++)
    {
      l->lin[k] = l->phi0[k] = 1.0;
      l->sd0[k] = 100.0; /* a prior too weak to matter */
      l->lo[k] = 0.01;
      l->hi[k] = 100.0;
    }
  for (int i = 0; i < N; i++)
    {
      l->use[i] = TRUE;
      l->r[i] = gsl_ran_gaussian (rng, noise);
      for (int k = 0; k < NP; k++)
        {
          l->J[i * NP + k] = 0.2 + 0.8 * gsl_rng_uniform (rng);
          l->r[i] += l->J[i * NP + k] * (l->lin[k] - truth[k]);
        }
    }
}

static void
lin_seeded (Lin *l, unsigned long seed, const double *truth, double noise)
{
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (rng, seed);
  lin_draw (l, rng, truth, noise);
  gsl_rng_free (rng);
}

static SimCalibrationLinear
lin_view (const Lin *l)
{
  return (SimCalibrationLinear) { N, NP, l->r, l->J, l->use, l->lin, l->phi0, l->sd0, l->lo, l->hi };
}

static void
test_solve_recovers (void)
{
  const double truth[NP] = { 1.2, 0.9, 2.0 };
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (rng, 7);
  int inside[NP] = { 0 };
  const int reps = 400;
  for (int rep = 0; rep < reps; rep++)
    {
      Lin l;
      lin_draw (&l, rng, truth, 0.01);
      SimCalibrationLinear v = lin_view (&l);
      double phi[NP], cov[NP * NP];
      g_autoptr (GError) error = NULL;
      g_assert_true (sim_calibration_solve (&v, phi, cov, NULL, &error));
      g_assert_no_error (error);
      for (int k = 0; k < NP; k++)
        {
          double se = sqrt (cov[k * NP + k]);
          g_assert_cmpfloat (se, >, 0);
          g_assert_cmpfloat (fabs (phi[k] - truth[k]), <, 6 * se);
          inside[k] += fabs (phi[k] - truth[k]) <= se;
        }
    }
  /* The stated 1σ covers the truth about 68% of the time (Huber weighting of Gaussian noise costs
   * a few percent of efficiency, not coverage). */
  for (int k = 0; k < NP; k++)
    {
      double rate = (double) inside[k] / reps;
      g_test_message ("constant %d: 1 sigma covers the truth in %.0f%% of %d draws", k, 100 * rate, reps);
      g_assert_cmpfloat (rate, >, 0.58);
      g_assert_cmpfloat (rate, <, 0.78);
    }
  gsl_rng_free (rng);
}

static void
test_solve_outlier (void)
{
  const double truth[NP] = { 1.1, 1.0, 0.8 };
  Lin l;
  lin_seeded (&l, 11, truth, 0.01);
  l.r[3] += 1.0; /* a row the model does not cover: 100σ off */
  SimCalibrationLinear v = lin_view (&l);
  double phi[NP], cov[NP * NP], w[N];
  g_assert_true (sim_calibration_solve (&v, phi, cov, w, NULL));
  g_assert_cmpfloat (w[3], <, 0.05);
  g_assert_cmpfloat (w[0], ==, 1.0);
  for (int k = 0; k < NP; k++)
    g_assert_cmpfloat (fabs (phi[k] - truth[k]), <, 0.05);
}

/* A fold leaves rows out: what stands in their residuals (here NaN, then a large value) must not
 * change its constants by a bit. */
static void
test_solve_fold_never_reads (void)
{
  const double truth[NP] = { 1.3, 0.7, 1.0 };
  Lin l;
  lin_seeded (&l, 3, truth, 0.02);
  for (int i = 0; i < 10; i++)
    l.use[i] = FALSE;
  double a[NP], b[NP];
  for (int i = 0; i < 10; i++)
    l.r[i] = NAN;
  SimCalibrationLinear v = lin_view (&l);
  g_assert_true (sim_calibration_solve (&v, a, NULL, NULL, NULL));
  for (int i = 0; i < 10; i++)
    l.r[i] = 1e6;
  g_assert_true (sim_calibration_solve (&v, b, NULL, NULL, NULL));
  for (int k = 0; k < NP; k++)
    {
      g_assert_true (isfinite (a[k]));
      g_assert_cmpfloat (a[k], ==, b[k]);
    }
}

/* The prior holds a constant no row informs, and the range clamps. */
static void
test_solve_prior_and_range (void)
{
  const double truth[NP] = { 1.2, 0.9, 5.0 };
  Lin l;
  lin_seeded (&l, 5, truth, 0.01);
  for (int i = 0; i < N; i++)
    l.J[i * NP + 1] = 0; /* no row depends on constant 1 */
  l.phi0[1] = 0.75;
  l.sd0[1] = 0.1;
  l.hi[2] = 3.0;
  SimCalibrationLinear v = lin_view (&l);
  double phi[NP];
  g_assert_true (sim_calibration_solve (&v, phi, NULL, NULL, NULL));
  g_assert_cmpfloat (fabs (phi[1] - 0.75), <, 1e-9);
  g_assert_cmpfloat (phi[2], ==, 3.0);
}

/* A tie (the GEMM scales of one generation's precisions) carries an informed constant's value to
 * one that no row informs, where the prior alone would hold it; where the rows inform both and
 * disagree, a loose tie moves them little. */
static void
test_solve_tie (void)
{
  const double truth[NP] = { 1.2, 0.9, 2.0 };
  Lin l;
  lin_seeded (&l, 11, truth, 0.01);
  for (int i = 0; i < N; i++)
    {
      l.r[i] -= l.J[i * NP + 1] * (l.lin[1] - truth[1]);
      l.J[i * NP + 1] = 0; /* no row depends on constant 1 */
    }
  l.phi0[1] = 0.75;
  l.sd0[1] = 0.5;
  int tie[NP] = { -1, 0, -1 };
  double tie_sd[NP] = { 0, 0.05, 0 };
  SimCalibrationLinear v = lin_view (&l);
  double untied[NP], tied[NP];
  g_assert_true (sim_calibration_solve (&v, untied, NULL, NULL, NULL));
  v.tie = tie;
  v.tie_sd = tie_sd;
  g_assert_true (sim_calibration_solve (&v, tied, NULL, NULL, NULL));
  g_assert_cmpfloat (fabs (untied[1] - 0.75), <, 1e-6);
  /* prior 0.75 ± 0.5 against the tie 1.2 ± 0.05: within 1% of (0.75/0.25 + 1.2/0.0025)/(4 + 400) */
  g_assert_cmpfloat (fabs (tied[1] - 1.1955), <, 0.012);
  g_assert_cmpfloat (fabs (tied[0] - truth[0]), <, 0.02);
  /* both informed, 0.3 apart: a tie of 0.1 leaves each near its rows' value */
  Lin m;
  lin_seeded (&m, 12, truth, 0.01);
  int tie2[NP] = { -1, 0, -1 };
  double tie2_sd[NP] = { 0, 0.1, 0 };
  SimCalibrationLinear w = lin_view (&m);
  w.tie = tie2;
  w.tie_sd = tie2_sd;
  double both[NP];
  g_assert_true (sim_calibration_solve (&w, both, NULL, NULL, NULL));
  g_assert_cmpfloat (fabs (both[0] - truth[0]), <, 0.02);
  g_assert_cmpfloat (fabs (both[1] - truth[1]), <, 0.02);
}

/* Two groups (generations) share no constant: what the rows of one do, outliers included, must not
 * move the other's constants by a bit (each group has its own robust scale and weights). */
static void
test_solve_groups_apart (void)
{
  const double truth[NP] = { 1.2, 0.9, 1.5 };
  Lin l;
  lin_seeded (&l, 9, truth, 0.01);
  int row_group[N], param_group[NP] = { 0, 0, 1 };
  for (int i = 0; i < N; i++)
    {
      row_group[i] = i < N / 2 ? 0 : 1;
      /* group 0's rows depend on constants 0 and 1 only, group 1's on constant 2 only */
      for (int k = 0; k < NP; k++)
        if ((row_group[i] == 0) != (param_group[k] == 0))
          {
            l.r[i] -= l.J[i * NP + k] * (l.lin[k] - truth[k]);
            l.J[i * NP + k] = 0;
          }
    }
  SimCalibrationLinear v = lin_view (&l);
  v.row_group = row_group;
  v.param_group = param_group;
  v.n_groups = 2;
  double a[NP], b[NP];
  g_assert_true (sim_calibration_solve (&v, a, NULL, NULL, NULL));
  for (int i = N / 2; i < N; i++)
    l.r[i] *= i % 3 ? 5.0 : -40.0; /* group 1 far noisier, with outliers */
  g_assert_true (sim_calibration_solve (&v, b, NULL, NULL, NULL));
  /* equal up to rounding in the joint least-squares decomposition */
  g_assert_cmpfloat_with_epsilon (a[0], b[0], 1e-12);
  g_assert_cmpfloat_with_epsilon (a[1], b[1], 1e-12);
  g_assert_cmpfloat (fabs (a[2] - b[2]), >, 1e-3);
  for (int k = 0; k < 2; k++)
    g_assert_cmpfloat (fabs (a[k] - truth[k]), <, 0.05);
}

/* ---- The whole fit on a deck drawn from the simulator ----------------------------------------- */

static const char *deck_header =
  "id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,moe_experts,"
  "moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,nvlink_domain,nic_gbps_per_gpu,"
  "tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,step_time_s,step_time_basis,confidence,"
  "notes\n";

/* Small GPT rows on 8 H100 (BF16): sizes and micro-batches spread GEMM, memory-bound and per-kernel
 * time and the fixed per-step time in different proportions, so the four constants are told apart. */
static const char *deck_rows[] = {
  "s1,Synthetic A,GPT,gpt,4,512,8,8,2048,32768,512,gelu,0,0,0,16,1,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
  "s2,Synthetic A,GPT,gpt,4,1024,16,16,4096,32768,1024,gelu,0,0,0,16,2,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
  "s3,Synthetic B,GPT,gpt,4,2048,16,16,8192,32768,1024,gelu,0,0,0,16,2,8,h100-sxm,8,8,400,2,1,1,1,4,1,1,1,0,none,bf16,STEP,log,low,x\n",
  "s4,Synthetic B,GPT,gpt,2,4096,32,32,16384,32768,2048,gelu,0,0,0,8,1,8,h100-sxm,8,8,400,4,1,1,1,2,1,1,1,0,none,bf16,STEP,log,low,x\n",
  "s5,Synthetic C,GPT,gpt,4,256,4,4,1024,32768,256,gelu,0,0,0,64,8,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
  "s6,Synthetic C,Llama,llama,4,1024,16,4,3072,32000,2048,swiglu,0,0,0,16,1,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
  /* Long sequences (attention-heavy) and very short steps (the fixed per-step time shows). */
  "s7,Synthetic D,Llama,llama,2,1024,8,8,3072,32000,8192,swiglu,0,0,0,8,1,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
  "s8,Synthetic D,GPT,gpt,2,2048,16,16,8192,32768,4096,gelu,0,0,0,8,1,8,h100-sxm,8,8,400,2,1,1,1,4,1,1,1,0,none,bf16,STEP,log,low,x\n",
  "s9,Synthetic E,GPT,gpt,2,256,4,4,1024,32768,128,gelu,0,0,0,8,1,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
  "s10,Synthetic E,GPT,gpt,2,512,8,8,2048,32768,256,gelu,0,0,0,8,1,8,h100-sxm,8,8,400,1,1,1,1,8,1,0,1,0,none,bf16,STEP,log,low,x\n",
};

/* The row with STEP replaced by the step time. */
static char *
row_with (const char *row, double step)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (num, sizeof num, "%.9g", step);
  g_auto (GStrv) parts = g_strsplit (row, "STEP", 2);
  return g_strconcat (parts[0], num, parts[1], NULL);
}

static void
test_fit_recovers_simulated (void)
{
  const char *truth_sets[] = { "hardware.gemm_insitu_bf16=0.8", "hardware.mem_insitu=0.7", "hardware.launch_us=6",
                               "hardware.step_overhead_ms=3", NULL };
  const double truth[] = { 0.8, 0.7, 6.0, 3.0 };
  gsl_rng *rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (rng, 1);
  /* Draw the "measured" step times: the simulator at the true constants, ×(1 + 0.5% noise). */
  g_autoptr (GString) text = g_string_new (deck_header);
  for (gsize i = 0; i < G_N_ELEMENTS (deck_rows); i++)
    {
      g_autofree char *row = row_with (deck_rows[i], 1.0);
      g_autofree char *one = g_strconcat (deck_header, row, NULL);
      g_autoptr (SimValidateDeck) d = sim_validate_deck_parse (one, strlen (one), "truth.csv", NULL);
      g_assert_nonnull (d);
      SimValidateOptions o = { NULL, truth_sets, 1, FALSE, FALSE, TRUE, 0 };
      SimValidateResult res;
      sim_validate_run_row (sim_validate_deck_row (d, 0), &o, &res);
      g_assert_cmpint (res.status, ==, SIM_VALIDATE_OK);
      double m = res.predicted_s * (1 + gsl_ran_gaussian (rng, 0.005));
      sim_validate_result_clear (&res);
      g_autofree char *measured = row_with (deck_rows[i], m);
      g_string_append (text, measured);
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text->str, text->len, "synthetic.csv", &error);
  g_assert_no_error (error);
  SimCalibrationOptions co = { { NULL, NULL, 2, FALSE, FALSE, TRUE, 0 }, TRUE, 3 };
  SimCalibrationResult r;
  g_assert_true (sim_calibration_fit (deck, &co, &r, &error));
  g_assert_no_error (error);
  if (g_test_verbose ())
    sim_calibration_write (stdout, &r, deck);
  const char *keys[] = { "gemm_insitu_bf16", "mem_insitu", "launch_us", "step_overhead_ms" };
  for (int j = 0; j < 4; j++)
    {
      const SimCalibrationParam *p = NULL;
      for (int k = 0; k < r.np; k++)
        if (strcmp (r.params[k].key, keys[j]) == 0)
          p = &r.params[k];
      g_assert_nonnull (p);
      g_assert_cmpint (p->generation, ==, SIM_CALIBRATION_HOPPER);
      g_test_message ("%s: fitted %g ± %g, truth %g", keys[j], p->value, p->se, truth[j]);
      double tol = MAX (4 * p->se, j >= 2 ? 1.0 : 0.04 * truth[j]);
      g_assert_cmpfloat (fabs (p->value - truth[j]), <, tol);
    }
  for (guint i = 0; i < r.n; i++)
    {
      g_assert_cmpfloat (fabs (r.fit_pct[i]), <, 2.0);
      g_assert_true (isfinite (r.loso_pct[i]));
    }
  g_assert_cmpfloat (r.band_log_sigma[SIM_CALIBRATION_HOPPER], >, 0);
  /* A fold never reads its source: scale source A's measured steps by 1.5 and refit; the
   * leave-one-source-out predictions of A's rows (measured × (1 + error)) stay the same. */
  g_autoptr (GString) text2 = g_string_new (NULL);
  g_auto (GStrv) lines = g_strsplit (text->str, "\n", -1);
  for (int i = 0; lines[i]; i++)
    {
      if (strstr (lines[i], ",Synthetic A,") == NULL)
        {
          g_string_append_printf (text2, "%s%s", lines[i], lines[i + 1] ? "\n" : "");
          continue;
        }
      g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
      char num[G_ASCII_DTOSTR_BUF_SIZE];
      g_free (f[33]);
      /* line i is deck row i − 1 (line 0 is the header) */
      f[33] = g_strdup (g_ascii_formatd (num, sizeof num, "%.9g",
                                         1.5 * sim_validate_deck_row (deck, (guint) i - 1)->step_time_s));
      g_autofree char *joined = g_strjoinv (",", f);
      g_string_append_printf (text2, "%s\n", joined);
    }
  g_autoptr (SimValidateDeck) deck2 = sim_validate_deck_parse (text2->str, text2->len, "synthetic2.csv", &error);
  g_assert_no_error (error);
  SimCalibrationResult r2;
  g_assert_true (sim_calibration_fit (deck2, &co, &r2, &error));
  for (guint i = 0; i < r.n; i++)
    {
      const SimValidateRow *a = sim_validate_deck_row (deck, i), *b = sim_validate_deck_row (deck2, i);
      if (strcmp (a->source, "Synthetic A") != 0)
        continue;
      g_assert_cmpfloat (b->step_time_s, !=, a->step_time_s);
      double ta = a->step_time_s * (1 + r.loso_pct[i] / 100), tb = b->step_time_s * (1 + r2.loso_pct[i] / 100);
      g_assert_cmpfloat_with_epsilon (ta, tb, 1e-9 * ta);
    }
  sim_calibration_result_clear (&r2);
  g_autofree char *layer = sim_calibration_layer (&r, deck, SIM_CALIBRATION_HOPPER, "fit");
  g_assert_nonnull (strstr (layer, "[calibration]\ngeneration = hopper\n"));
  g_assert_nonnull (strstr (layer, "gemm_insitu_bf16.source = fitted on deck rows"));
  /* Each constant's 1σ is the square root of its covariance diagonal (in φ: se · φ² for a scale);
   * the layer's covariance loads and holds the generation's constants. */
  for (int k = 0; k < r.np; k++)
    {
      const SimCalibrationParam *p = &r.params[k];
      double phi = p->inverse ? 1.0 / p->value : p->value;
      double sphi = sqrt (r.cov[k * SIM_CALIBRATION_MAX_PARAMS + k]);
      g_assert_cmpfloat (fabs ((p->inverse ? sphi / (phi * phi) : sphi) - p->se), <, 1e-9 * MAX (p->se, 1e-12));
    }
  g_assert_nonnull (strstr (layer, "\ncovariance = "));
  g_autofree char *layer_path = g_build_filename (g_get_tmp_dir (), "trainsim-test-layer-XXXXXX.ini", NULL);
  int fd = g_mkstemp (layer_path);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (layer_path, layer, -1, NULL));
  const char *files[] = { "runs/gpt3-175b-mlperf-v3.1.ini", layer_path, NULL };
  g_autoptr (SimScenario) sc = sim_scenario_load (files, NULL, &error);
  g_assert_no_error (error);
  int in_gen = 0;
  for (int k = 0; k < r.np; k++)
    in_gen += r.params[k].generation == SIM_CALIBRATION_HOPPER;
  g_assert_cmpint (sim_scenario_run (sc)->n_cov, ==, MIN (in_gen, 8));
  g_remove (layer_path);
  g_assert_null (sim_calibration_layer (&r, deck, SIM_CALIBRATION_AMPERE, "fit"));
  sim_calibration_result_clear (&r);
  gsl_rng_free (rng);
}

/* A source that is its generation's only one leaves a fold at the prior, where its rows were
 * simulated already: their leave-one-source-out prediction is that simulation (the prior's error,
 * to the digit) and the folds add no simulation. Two rows of one source; the fit with and without
 * --cross-validate simulates as often. */
static void
test_fit_single_source_fold (void)
{
  g_autoptr (GString) text = g_string_new (deck_header);
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *row = row_with (deck_rows[i], 0.01 * (i + 1));
      g_string_append (text, row);
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text->str, text->len, "single.csv", &error);
  g_assert_no_error (error);
  guint sims[2];
  for (int cv = 0; cv < 2; cv++)
    {
      SimCalibrationOptions co = { { NULL, NULL, 1, FALSE, FALSE, TRUE, 0 }, cv, 3 };
      SimCalibrationResult r;
      g_assert_true (sim_calibration_fit (deck, &co, &r, &error));
      g_assert_no_error (error);
      sims[cv] = r.simulations;
      for (guint i = 0; cv && i < r.n; i++)
        g_assert_cmpfloat (r.loso_pct[i], ==, r.prior_pct[i]);
      sim_calibration_result_clear (&r);
    }
  g_assert_cmpuint (sims[1], ==, sims[0]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/calibrate/solve/recovers-and-covers", test_solve_recovers);
  g_test_add_func ("/calibrate/solve/huber-outlier", test_solve_outlier);
  g_test_add_func ("/calibrate/solve/fold-never-reads", test_solve_fold_never_reads);
  g_test_add_func ("/calibrate/solve/prior-and-range", test_solve_prior_and_range);
  g_test_add_func ("/calibrate/solve/groups-apart", test_solve_groups_apart);
  g_test_add_func ("/calibrate/solve/tie", test_solve_tie);
  g_test_add_func ("/calibrate/fit/recovers-simulated", test_fit_recovers_simulated);
  g_test_add_func ("/calibrate/fit/single-source-fold", test_fit_single_source_fold);
  return g_test_run ();
}
