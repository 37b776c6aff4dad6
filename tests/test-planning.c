/* Planning tools: the closed-form estimate's terms, sweep grid and row format, scaling efficiency,
 * the progress line, and the search's pruning against exhaustive evaluation. */
#include "config.h"
#include <math.h>
#include <string.h>
#include <glib.h>
#include "model/flops.h"
#include "model/layer.h"
#include "sim/plan/estimate.h"
#include "sim/plan/progress.h"
#include "sim/plan/search.h"
#include "sim/plan/sweep.h"
#include "sim/step/runner.h"

/* GPT 1.7B (Narayanan et al. SC21, Table 1) on H100 SXM with NDR400 rail-optimized fabric. */
static const char *const small_files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini",
                                           "models/megatron-gpt-1.7b.ini", NULL };

static SimScenario *
load_small (const char *const *extra)
{
  GPtrArray *sets = g_ptr_array_new ();
  g_ptr_array_add (sets, (gpointer) "parallel.micro_batch=1");
  g_ptr_array_add (sets, (gpointer) "training.seq_len=2048");
  for (int i = 0; extra && extra[i]; i++)
    g_ptr_array_add (sets, (gpointer) extra[i]);
  g_ptr_array_add (sets, NULL);
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (small_files, (const char *const *) sets->pdata, &error);
  g_assert_no_error (error);
  g_ptr_array_free (sets, TRUE);
  return sc;
}

/* A run scenario with `sets`, and the estimate's view of its hardware. */
static SimScenario *
load_run (const char *run, const char *const *sets, SimEstimateHw *hw)
{
  const char *files[] = { run, NULL };
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (files, sets, &error);
  g_assert_no_error (error);
  sim_estimate_hw_from_scenario (sc, hw);
  return sc;
}

/* Both scenarios estimated with the first one's hardware. */
static void
estimate_both (SimScenario *a, SimScenario *b, SimEstimate *ea, SimEstimate *eb)
{
  SimEstimateHw hw;
  sim_estimate_hw_from_scenario (a, &hw);
  g_assert_true (sim_estimate_step (sim_scenario_shape (a), sim_scenario_plan (a), &hw, TRUE, ea, NULL));
  g_assert_true (sim_estimate_step (sim_scenario_shape (b), sim_scenario_plan (b), &hw, TRUE, eb, NULL));
}

static double
sum_parts (const SimEstimate *e)
{
  double s = 0;
  for (int i = 0; i < SIM_EST_COUNT; i++)
    s += e->part_s[i];
  return s;
}

/* One GPU: no communication, no bubble; compute is the model FLOPs (no recompute) at peak × efficiency. */
static void
test_one_gpu (void)
{
  const char *extra[] = { "cluster.gpus=1", "cluster.gpus_per_node=1", "cluster.nvlink_domain=1", "parallel.global_batch=8",
                          NULL };
  g_autoptr (SimScenario) sc = load_small (extra);
  SimEstimateHw hw;
  sim_estimate_hw_from_scenario (sc, &hw);
  SimEstimate e;
  GError *error = NULL;
  g_assert_true (sim_estimate_step (sim_scenario_shape (sc), sim_scenario_plan (sc), &hw, TRUE, &e, &error));
  g_assert_no_error (error);
  const ModelPlan *p = sim_scenario_plan (sc);
  const ModelShape *s = sim_scenario_shape (sc);
  /* Compute is at least the model FLOPs at the GPU's peak (kernels are timed at or below it). */
  double flops = model_flops_closed_form (s, model_shape_padded_vocab (s, 1), 8.0 * 2048);
  g_assert_cmpfloat (e.part_s[SIM_EST_COMPUTE], >=, flops / hw.peak_flops[p->matmul_dtype]);
  for (int i = SIM_EST_TP; i <= SIM_EST_BUBBLE; i++)
    g_assert_cmpfloat (e.part_s[i], ==, 0.0);
  g_assert_cmpfloat (e.part_s[SIM_EST_OPTIMIZER], >, 0.0);
  g_assert_cmpfloat_with_epsilon (sum_parts (&e), e.step_s, 1e-12);
  /* MFU = model FLOPs / (step · peak) is at most the GEMM efficiency (memory-bound kernels,
   * launches and the optimizer add time). */
  g_assert_cmpfloat (e.mfu, <=, hw.gemm_eff);
  g_assert_cmpfloat (e.mfu, >, 0.3);
}

/* A fabric whose switches reduce (BERT on 4,320 A100, SBATCH_NETWORK=sharp): the estimate prices each
 * gradient bucket's all-reduce as CollNet Direct does, max(2(L-1)/L S/Bn, (S/L)/Bi) / collnet_eff plus
 * NCCL's latency, the algorithm the simulator's AUTO takes; without sharp the best of the other
 * algorithms, slower here, and far below the plain ring form's 2 x 4,319 network steps. */
static void
test_sharp (void)
{
  const char *off[] = { "fabric.sharp=false", NULL };
  SimEstimateHw hw_on, hw_off;
  g_autoptr (SimScenario) on = load_run ("runs/bert-large-mlperf-v1.1-nvidia-4320.ini", NULL, &hw_on);
  g_autoptr (SimScenario) plain = load_run ("runs/bert-large-mlperf-v1.1-nvidia-4320.ini", off, &hw_off);
  g_assert_true (hw_on.sharp);
  g_assert_false (hw_off.sharp);
  SimEstimate a, b;
  g_assert_true (sim_estimate_step (sim_scenario_shape (on), sim_scenario_plan (on), &hw_on, TRUE, &a, NULL));
  g_assert_true (sim_estimate_step (sim_scenario_shape (plain), sim_scenario_plan (plain), &hw_off, TRUE, &b, NULL));
  g_test_message ("DP all-reduce: %.4f s with SHARP, %.4f s without", a.comm_s[SIM_EST_DP], b.comm_s[SIM_EST_DP]);
  g_assert_cmpfloat (a.comm_s[SIM_EST_DP], <, b.comm_s[SIM_EST_DP]);
  g_assert_cmpfloat (b.comm_s[SIM_EST_DP], <, 0.02); /* the ring form alone: 0.054 s */
  /* The gradients in dp_bucket_MiB buckets (model/layer.c), each a CollNet all-reduce of its own. */
  ModelRankParams rp;
  model_layer_rank_params (sim_scenario_shape (on), sim_scenario_plan (on), 0, &rp);
  double S = (double) rp.dense * 2.0; /* fp16 gradients */
  double bucket = sim_scenario_plan (on)->dp_bucket_mb * 1048576.0, k = floor (S / bucket), want = 0;
  double lat = 2.0 * (hw_on.coll.collnet_nvlink_latency_ns * 1e-9 + hw_on.nvlink_latency_s + 7 * hw_on.coll.collnet_arity_ns * 1e-9)
               + hw_on.coll.collnet_net_latency_ns * 1e-9 + 2.0 * hw_on.nic_latency_s;
  for (int i = 0; i <= (int) k; i++)
    {
      double x = i < (int) k ? bucket : S - k * bucket;
      if (x > 0)
        want += MAX (2.0 * 7 / 8 * x / hw_on.nvlink_bw_bytes_per_s, x / 8 / hw_on.nic_bw_bytes_per_s)
                  / hw_on.coll.collnet_eff + lat;
    }
  g_assert_cmpfloat (k, >, 10);
  g_assert_cmpfloat (fabs (a.comm_s[SIM_EST_DP] / want - 1), <, 1e-6); /* ns rounding */
}

/* An FP8 plan whose first half of the layers keeps its GEMMs in BF16 (bf16_layers_first = 12 of 24):
 * the average layer is half the all-FP8 layer and half the all-BF16 layer. */
static void
test_bf16_layers (void)
{
  const char *fp8[] = { "cluster.gpus=1", "cluster.gpus_per_node=1", "cluster.nvlink_domain=1",
                        "parallel.global_batch=8", "parallel.matmul_dtype=fp8", NULL };
  const char *half[] = { "cluster.gpus=1", "cluster.gpus_per_node=1", "cluster.nvlink_domain=1",
                         "parallel.global_batch=8", "parallel.matmul_dtype=fp8", "parallel.bf16_layers_first=12",
                         NULL };
  const char *bf16[] = { "cluster.gpus=1", "cluster.gpus_per_node=1", "cluster.nvlink_domain=1",
                         "parallel.global_batch=8", "parallel.matmul_dtype=bf16", NULL };
  const char *const *sets[3] = { fp8, half, bf16 };
  double layer_s[3];
  for (int i = 0; i < 3; i++)
    {
      g_autoptr (SimScenario) sc = load_small (sets[i]);
      SimEstimateHw hw;
      sim_estimate_hw_from_scenario (sc, &hw);
      SimEstimateLayer ly;
      sim_estimate_layer (sim_scenario_shape (sc), sim_scenario_plan (sc), &hw, &ly);
      layer_s[i] = ly.layer_compute_s;
    }
  g_assert_cmpfloat (layer_s[0], <, layer_s[2]);
  g_assert_cmpfloat (fabs (layer_s[1] - 0.5 * (layer_s[0] + layer_s[2])), <, 1e-12 * layer_s[2]);
}

/* FP8 delayed scaling's amax all-reduces in the estimate: tp 2 x dp 8 = 16 GPUs over two 8-GPU domains,
 * 64 sequences = 8 micro-batches of one chunk: 2 · 8 latency-bound all-reduces of a few hundred bytes,
 * each at least LL's 6.6 us base latency and, over two domains, well under Simple's 100 us. */
static void
test_amax (void)
{
  const char *on[] = { "cluster.gpus=16", "parallel.tp=2", "parallel.global_batch=64", "parallel.matmul_dtype=fp8",
                       NULL };
  const char *off[] = { "cluster.gpus=16", "parallel.tp=2", "parallel.global_batch=64", "parallel.matmul_dtype=fp8",
                        "parallel.fp8_reduce_amax=false", NULL };
  g_autoptr (SimScenario) a = load_small (on);
  g_autoptr (SimScenario) b = load_small (off);
  SimEstimate ea, eb;
  estimate_both (a, b, &ea, &eb);
  double added = ea.part_s[SIM_EST_DP] - eb.part_s[SIM_EST_DP];
  g_assert_cmpfloat (added, >=, 16 * 6.6e-6);
  g_assert_cmpfloat (added, <, 16 * 100e-6);
  g_assert_cmpfloat (fabs (ea.step_s - eb.step_s - added), <, 1e-12);
}

/* Pipeline bubble (Narayanan et al. SC21): (pp − 1)/(vpp · m) of the compute. pp 4, m = 64/(8·1) = 8:
 * 3/8; with vpp 2: 3/16. */
static void
test_bubble (void)
{
  const char *a[] = { "cluster.gpus=32", "parallel.pp=4", "parallel.global_batch=64", NULL };
  const char *b[] = { "cluster.gpus=32", "parallel.pp=4", "parallel.vpp=2", "parallel.global_batch=64", NULL };
  g_autoptr (SimScenario) sa = load_small (a);
  g_autoptr (SimScenario) sb = load_small (b);
  SimEstimate ea, eb;
  estimate_both (sa, sb, &ea, &eb);
  g_assert_cmpint (model_plan_microbatches (sim_scenario_plan (sa)), ==, 8);
  g_assert_cmpfloat_with_epsilon (ea.part_s[SIM_EST_BUBBLE] / ea.part_s[SIM_EST_COMPUTE], 3.0 / 8.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (eb.part_s[SIM_EST_BUBBLE] / eb.part_s[SIM_EST_COMPUTE], 3.0 / 16.0, 1e-12);
  g_assert_cmpfloat (ea.part_s[SIM_EST_PP], >, 0.0);
  /* The critical path's sends: 2(pp − 1) without interleaving, 2(pp·vpp − 1) with it. */
  g_assert_cmpfloat_with_epsilon (eb.part_s[SIM_EST_PP] / ea.part_s[SIM_EST_PP], 7.0 / 3.0, 1e-9);
}

/* GPT-3 175B on 10,752 H100 (pp 8, vpp 12, the distributed optimizer with overlapped reduce and
 * gather): only the first model chunk's share of the DP reduce and gather stays exposed, and the
 * estimate lands within 15% of the simulated step (it read +21.6% when it exposed all but one
 * micro-batch's backward of it, and only 2(pp − 1) pipeline sends). */
static void
test_interleaved (void)
{
  SimEstimateHw hw;
  g_autoptr (SimScenario) sc = load_run ("runs/gpt3-175b-mlperf-v3.1.ini", NULL, &hw);
  SimEstimate e;
  g_assert_true (sim_estimate_step (sim_scenario_shape (sc), sim_scenario_plan (sc), &hw, TRUE, &e, NULL));
  g_assert_cmpint (sim_scenario_plan (sc)->vpp, ==, 12);
  g_assert_cmpfloat (e.part_s[SIM_EST_DP], <, e.comm_s[SIM_EST_DP] / 6.0);
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  SimRunnerPrediction p;
  g_assert_true (sim_runner_predict (sc, &o, &p, NULL));
  g_test_message ("estimate %.4f s (DP %.4f of %.4f, PP %.4f), simulated %.4f s", e.step_s, e.part_s[SIM_EST_DP],
                  e.comm_s[SIM_EST_DP], e.part_s[SIM_EST_PP], p.step_s);
  g_assert_cmpfloat (fabs (e.step_s / p.step_s - 1.0), <, 0.15);
  /* The fixed per-step host time (the Hopper calibration's step_overhead_ms) is in the step. */
  g_assert_cmpint (hw.gpu.step_overhead_ns, >, 0);
  SimEstimateHw bare = hw;
  bare.gpu.step_overhead_ns = 0;
  SimEstimate e0;
  g_assert_true (sim_estimate_step (sim_scenario_shape (sc), sim_scenario_plan (sc), &bare, TRUE, &e0, NULL));
  g_assert_cmpfloat (fabs (e.step_s - e0.step_s - hw.gpu.step_overhead_ns * 1e-9 * (1.0 + hw.virtualization_overhead)),
                     <, 1e-9);
}

/* Placement: TP8 innermost stays in the 8-GPU NVLink domain; TP8 outermost crosses nodes, so its
 * bandwidth term grows by the NVLink / NIC ratio (H100 NVLink4 450 GB/s × nvlink_eff vs one NDR NIC
 * 50 GB/s per GPU: more than 5×). */
static void
test_placement (void)
{
  const char *in[] = { "cluster.gpus=32", "parallel.tp=8", "parallel.global_batch=64", NULL };
  const char *out[] = { "cluster.gpus=32", "parallel.tp=8", "parallel.global_batch=64", "parallel.order=dp,cp,ep,pp,tp",
                        NULL };
  g_autoptr (SimScenario) si = load_small (in);
  g_autoptr (SimScenario) so = load_small (out);
  SimEstimate ei, eo;
  estimate_both (si, so, &ei, &eo);
  g_assert_cmpfloat (ei.comm_s[SIM_EST_TP], >, 0.0);
  g_assert_cmpfloat (eo.comm_s[SIM_EST_TP], >, 5.0 * ei.comm_s[SIM_EST_TP]);
  g_assert_cmpfloat (eo.step_s, >, ei.step_s);
}

/* A plan that does not fit is refused with MODEL_ERROR_OUT_OF_MEMORY and its memory figure kept:
 * GPT-3 175B's 175e9 parameters need 16 bytes each unsharded, 2.8 TB, on one 80 GB GPU. */
static void
test_no_fit (void)
{
  const char *sets[] = { "cluster.gpus=8", "parallel.tp=8", "parallel.pp=1", "parallel.vpp=1", NULL };
  SimEstimateHw hw;
  g_autoptr (SimScenario) sc = load_run ("runs/gpt3-175b-mlperf-v3.1.ini", sets, &hw);
  GError *error = NULL;
  SimEstimate e;
  g_assert_false (sim_estimate_step (sim_scenario_shape (sc), sim_scenario_plan (sc), &hw, TRUE, &e, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);
  g_assert_cmpfloat (e.memory_bytes, >, hw.hbm_bytes);
}

/* Grid: the last axis varies fastest; n points = product of the axis lengths. */
static void
test_sweep_grid (void)
{
  g_autoptr (SimSweep) sw = sim_sweep_new (small_files, NULL);
  GError *error = NULL;
  g_assert_true (sim_sweep_add_vary (sw, "cluster.gpus=8,16,32", &error));
  g_assert_true (sim_sweep_add_vary (sw, "parallel.order=tp,cp,ep,dp,pp;tp,cp,ep,pp,dp", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim_sweep_n_points (sw), ==, 6);
  g_auto (GStrv) p3 = sim_sweep_point_sets (sw, 3);
  g_assert_cmpstr (p3[0], ==, "cluster.gpus=16");
  g_assert_cmpstr (p3[1], ==, "parallel.order=tp,cp,ep,pp,dp");
  g_assert_false (sim_sweep_add_vary (sw, "cluster.gpus=1", &error));
  g_assert_error (error, SIM_SWEEP_ERROR, SIM_SWEEP_ERROR_USAGE);
  g_clear_error (&error);
  g_assert_false (sim_sweep_add_vary (sw, "cluster.nope=1", &error));
  g_clear_error (&error);
  g_assert_false (sim_sweep_add_vary (sw, "gpus", &error));
  g_clear_error (&error);
}

/* A row read back from its line is the same row (17 significant digits are exact for doubles), and
 * writing it again gives the same bytes. */
static void
test_row_roundtrip (void)
{
  const char *sets[] = { "parallel.micro_batch=1", "training.seq_len=2048", "parallel.global_batch=64", NULL };
  g_autoptr (SimSweep) sw = sim_sweep_new (small_files, sets);
  g_assert_true (sim_sweep_add_vary (sw, "cluster.gpus=32,33", NULL));
  for (guint i = 0; i < 2; i++)
    {
      SimSweepRow row = { 0 }, back = { 0 };
      GError *error = NULL;
      g_assert_true (sim_sweep_eval (sw, i, &row, &error));
      g_assert_no_error (error);
      /* 33 GPUs: dp would not be whole, an invalid row with the reason. */
      g_assert_cmpint (row.status, ==, i == 0 ? SIM_SWEEP_OK : SIM_SWEEP_INVALID);
      g_autofree char *line = sim_sweep_row_to_line (&row, 1);
      g_assert_true (sim_sweep_row_from_line (line, 1, &back, &error));
      g_autofree char *again = sim_sweep_row_to_line (&back, 1);
      g_assert_cmpstr (line, ==, again);
      g_assert_cmpfloat (back.step_s, ==, row.step_s);
      g_assert_cmpstr (back.reason, ==, row.reason);
      sim_sweep_row_clear (&row);
      sim_sweep_row_clear (&back);
    }
  SimSweepRow bad = { 0 };
  GError *error = NULL;
  g_assert_false (sim_sweep_row_from_line ("0\tok\t1", 1, &bad, &error));
  g_clear_error (&error);
}

/* Weak: step(base)/step; strong: step(base)·base/(step·gpus). Steps 1.0 s at 8 GPUs, 1.25 s at 16:
 * weak 0.8; strong 1.0·8/(1.25·16) = 0.4. */
static void
test_scaling (void)
{
  g_autoptr (SimSweep) sw = sim_sweep_new (NULL, NULL);
  g_assert_true (sim_sweep_add_vary (sw, "cluster.gpus=8,16", NULL));
  char s8[] = "8", s16[] = "16";
  char *v8[] = { s8, NULL }, *v16[] = { s16, NULL };
  SimSweepRow a = { .index = 0, .values = v8, .status = SIM_SWEEP_OK, .gpus = 8, .step_s = 1.0 };
  SimSweepRow b = { .index = 1, .values = v16, .status = SIM_SWEEP_OK, .gpus = 16, .step_s = 1.25 };
  a.global_batch = b.global_batch = 64;
  SimSweepRow *rows[] = { &a, &b };
  double eff[2];
  sim_sweep_scaling (sw, rows, 2, 0, SIM_SWEEP_SCALING_WEAK, eff);
  g_assert_cmpfloat_with_epsilon (eff[0], 1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (eff[1], 0.8, 1e-15);
  sim_sweep_scaling (sw, rows, 2, 0, SIM_SWEEP_SCALING_STRONG, eff);
  g_assert_cmpfloat_with_epsilon (eff[1], 0.4, 1e-15);
  /* Auto: the same global batch at both scales is strong scaling. */
  sim_sweep_scaling (sw, rows, 2, 0, SIM_SWEEP_SCALING_AUTO, eff);
  g_assert_cmpfloat_with_epsilon (eff[1], 0.4, 1e-15);
  sim_sweep_scaling (sw, rows, 2, 16, SIM_SWEEP_SCALING_WEAK, eff);
  g_assert_cmpfloat_with_epsilon (eff[0], 1.25, 1e-15);
}

static void
test_progress_format (void)
{
  /* 5 of 10 in 2 s: 2.5/s, 5 left: 2 s. */
  g_autofree char *s = sim_progress_format ("points", 5, 10, 2.0);
  g_assert_cmpstr (s, ==, "5/10 points (50%), 2.5/s, ETA 0m02s");
  g_autofree char *h = sim_progress_format ("plans", 1, 7201, 1.0);
  g_assert_cmpstr (h, ==, "1/7201 plans (0%), 1.0/s, ETA 2h00m");
  /* Not a TTY under the test harness: nothing is drawn (nothing to assert but no crash). */
  g_autoptr (SimProgress) p = sim_progress_new ("points", 3, TRUE);
  sim_progress_update (p, 1);
}

static int
cmp_est (const void *a, const void *b)
{
  const SimSearchCandidate *x = a, *y = b;
  if (x->estimate_s != y->estimate_s)
    return x->estimate_s < y->estimate_s ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Every valid plan of the scenario's space with its estimate (stage 1 without pruning). */
static GArray *
exhaustive_stage1 (const SimScenario *sc, SimSearchOptions *o, SimSearchStats *st)
{
  sim_search_options_init (o);
  o->exhaustive = TRUE;
  GArray *all = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  sim_search_stage1 (sc, o, all, st);
  return all;
}

/* Every candidate of stage 1 for the small scenario with `extra` set (load_small), *sc its scenario. */
static GArray *
small_space (const char *const *extra, SimScenario **sc)
{
  SimSearchOptions o;
  SimSearchStats st;
  *sc = load_small (extra);
  return exhaustive_stage1 (*sc, &o, &st);
}

/* The pruned search (lower-bound skip in stage 1, margin window in stage 2) keeps the true best of
 * an exhaustive evaluation of every valid plan, and splitting stage 1 over 3 workers selects the
 * same plans as one. Small cases: GPT 1.7B on 16 and 64 A100. */
static void
check_pruning (int gpus, int gbs)
{
  g_autofree char *g = g_strdup_printf ("cluster.gpus=%d", gpus);
  g_autofree char *b = g_strdup_printf ("parallel.global_batch=%d", gbs);
  const char *extra[] = { g, b, NULL };
  g_autoptr (SimScenario) sc = load_small (extra);
  SimSearchOptions o;
  SimSearchStats st;
  g_autoptr (GArray) all = exhaustive_stage1 (sc, &o, &st);
  g_assert_cmpuint (all->len, ==, st.estimated);
  g_assert_cmpuint (all->len, >, 100);
  g_array_sort (all, cmp_est);
  const guint best_index = g_array_index (all, SimSearchCandidate, 0).index;

  sim_search_options_init (&o);
  g_autoptr (GArray) pruned = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  SimSearchStats st2;
  sim_search_stage1 (sc, &o, pruned, &st2);
  g_assert_cmpuint (st2.valid, ==, st.valid);
  g_assert_cmpuint (st2.estimated, <, st.estimated); /* the bound skipped some */
  sim_search_select (pruned, &o);
  sim_search_rank (pruned);
  g_assert_cmpuint (pruned->len, >, 0);
  g_assert_cmpuint (g_array_index (pruned, SimSearchCandidate, 0).index, ==, best_index);
  /* The exhaustive list through the same selection rule (no cap) starts with the pruned selection:
   * the bound never removed a plan within the margin. */
  SimSearchOptions nocap;
  sim_search_options_init (&nocap);
  nocap.confirm = G_MAXUINT;
  sim_search_select (all, &nocap);
  g_assert_cmpuint (all->len, >=, pruned->len);
  for (guint i = 0; i < pruned->len; i++)
    g_assert_cmpuint (g_array_index (pruned, SimSearchCandidate, i).index, ==,
                      g_array_index (all, SimSearchCandidate, i).index);

  /* Three workers, merged. */
  g_autoptr (GArray) merged = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  for (int r = 0; r < 3; r++)
    {
      sim_search_options_init (&o);
      o.rank = r, o.size = 3;
      g_autoptr (GArray) part = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
      SimSearchStats s3;
      sim_search_stage1 (sc, &o, part, &s3);
      for (guint i = 0; i < part->len; i++)
        {
          /* Through the wire format, as MPI ships them. */
          g_autofree char *line = sim_search_candidate_to_line (&g_array_index (part, SimSearchCandidate, i));
          SimSearchCandidate c = { 0 };
          g_assert_true (sim_search_candidate_from_line (line, &c));
          g_array_append_val (merged, c);
        }
    }
  sim_search_options_init (&o);
  sim_search_select (merged, &o);
  sim_search_rank (merged);
  g_assert_cmpuint (merged->len, ==, pruned->len);
  for (guint i = 0; i < merged->len; i++)
    {
      g_assert_cmpuint (g_array_index (merged, SimSearchCandidate, i).index, ==,
                        g_array_index (pruned, SimSearchCandidate, i).index);
      g_assert_cmpfloat (g_array_index (merged, SimSearchCandidate, i).confirmed_s, ==,
                         g_array_index (pruned, SimSearchCandidate, i).confirmed_s);
    }
}

/* A candidate's pipeline fields survive the MPI wire format, and its plan text holds `needle`. */
static void
check_pipeline_wire (const SimSearchCandidate *c, const char *needle)
{
  g_autofree char *line = sim_search_candidate_to_line (c);
  SimSearchCandidate back = { 0 };
  g_assert_true (sim_search_candidate_from_line (line, &back));
  g_assert_cmpint (back.plan.pp_first_layers, ==, c->plan.pp_first_layers);
  g_assert_cmpint (back.plan.pp_last_layers, ==, c->plan.pp_last_layers);
  g_assert_cmpint (back.plan.mb_group, ==, c->plan.mb_group);
  g_autofree char *text = sim_search_describe_plan (&c->plan);
  g_assert_nonnull (strstr (text, needle));
  g_assert_true (strstr (text, needle) < strstr (text, " order=")); /* the placement order comes last */
}

/* A model whose layers few pipeline degrees divide (GPT 1.7B cut to 23 layers, prime) is still
 * searched at pp 2, 4, 8 and 16: with uneven first and last ranks, which the wire format carries and
 * the plan text names. */
static void
test_search_uneven_pipeline (void)
{
  const char *extra[] = { "model.layers=23", "cluster.gpus=16", "parallel.global_batch=64", NULL };
  g_autoptr (SimScenario) sc = NULL;
  g_autoptr (GArray) all = small_space (extra, &sc);
  guint seen = 0;
  for (guint i = 0; i < all->len; i++)
    {
      const SimSearchCandidate *c = &g_array_index (all, SimSearchCandidate, i);
      if (c->plan.pp == 1)
        continue;
      g_assert_true (model_plan_validate (&c->plan, sim_scenario_shape (sc), NULL));
      g_assert_cmpint (c->plan.pp_first_layers, >, 0);
      seen |= 1u << c->plan.pp;
      check_pipeline_wire (c, " first=");
    }
  g_assert_cmpuint (seen, ==, (1u << 2) | (1u << 4) | (1u << 8) | (1u << 16));
  /* 40 sequences on 16 GPUs: at pp 4, dp 4, micro-batch 1 the interleaved plans run 10 micro-batches
   * in groups of 5, which the wire format carries and the plan text names. */
  const char *odd[] = { "cluster.gpus=16", "parallel.global_batch=40", "parallel.pp=4", "parallel.vpp=2",
                        "parallel.schedule=interleaved", "parallel.microbatch_group_size=5", NULL };
  g_autoptr (SimScenario) sc2 = NULL;
  g_autoptr (GArray) all2 = small_space (odd, &sc2);
  guint grouped = 0;
  for (guint i = 0; i < all2->len; i++)
    {
      const SimSearchCandidate *c = &g_array_index (all2, SimSearchCandidate, i);
      if (c->plan.pp != 4 || c->plan.vpp < 2 || c->plan.dp != 4 || c->plan.micro_batch != 1)
        continue;
      g_assert_cmpint (c->plan.mb_group, ==, 5);
      check_pipeline_wire (c, " group=5");
      grouped++;
    }
  g_assert_cmpuint (grouped, >, 0);
  /* The group follows each candidate's own micro-batch: 48 sequences at dp 4 are 12 micro-batches
   * of 1 (no group) but 6 of 2, which run in a group of 6. */
  const char *even[] = { "cluster.gpus=16", "parallel.global_batch=48", "parallel.pp=4", "parallel.vpp=2",
                         "parallel.schedule=interleaved", NULL };
  g_autoptr (SimScenario) sc3 = NULL;
  g_autoptr (GArray) all3 = small_space (even, &sc3);
  guint of_two = 0;
  for (guint i = 0; i < all3->len; i++)
    {
      const SimSearchCandidate *c = &g_array_index (all3, SimSearchCandidate, i);
      if (c->plan.pp == 4 && c->plan.vpp == 2 && c->plan.dp == 4)
        {
          g_assert_cmpint (c->plan.mb_group, ==, c->plan.micro_batch == 2 ? 6 : 0);
          of_two += c->plan.micro_batch == 2;
        }
    }
  g_assert_cmpuint (of_two, >, 0);
  /* A scenario's pipeline layout holds at its own pp, vpp and schedule: those candidates carry it
   * (named "layout"), the others split by the rules, and merging a candidate into the scenario's
   * plan keeps the layout only where it holds. */
  const char *lay[] = { "model.layers=23", "cluster.gpus=16", "parallel.global_batch=64", "parallel.pp=4",
                        "parallel.pp_layout=Et*5|t*6|t*6|t*6L", NULL };
  g_autoptr (SimScenario) sc4 = NULL;
  g_autoptr (GArray) all4 = small_space (lay, &sc4);
  const ModelPlan *base = sim_scenario_plan (sc4);
  g_assert_nonnull (base->pp_layout);
  guint kept = 0, other = 0;
  for (guint i = 0; i < all4->len; i++)
    {
      const SimSearchCandidate *c = &g_array_index (all4, SimSearchCandidate, i);
      if (c->plan.pp < 2)
        continue;
      gboolean own = c->plan.pp == 4 && c->plan.vpp == 1 && c->plan.schedule == base->schedule;
      g_assert_true (own ? c->plan.pp_layout == base->pp_layout : c->plan.pp_layout == NULL);
      g_assert_true (model_plan_validate (&c->plan, sim_scenario_shape (sc4), NULL));
      ModelPlan merged = *base;
      sim_search_merge_plan (&merged, &c->plan);
      g_assert_true (merged.pp_layout == c->plan.pp_layout);
      if (own)
        {
          g_autofree char *text = sim_search_describe_plan (&c->plan);
          g_assert_nonnull (strstr (text, " layout"));
        }
      kept += own, other += !own;
    }
  g_assert_cmpuint (kept, >, 0);
  g_assert_cmpuint (other, >, 0);
}

static void
test_pruning_16 (void)
{
  check_pruning (16, 64);
}

static void
test_pruning_64 (void)
{
  check_pruning (64, 512);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/planning/estimate/one-gpu", test_one_gpu);
  g_test_add_func ("/planning/estimate/bubble", test_bubble);
  g_test_add_func ("/planning/estimate/interleaved", test_interleaved);
  g_test_add_func ("/planning/estimate/bf16-layers", test_bf16_layers);
  g_test_add_func ("/planning/estimate/fp8-amax", test_amax);
  g_test_add_func ("/planning/estimate/placement", test_placement);
  g_test_add_func ("/planning/estimate/no-fit", test_no_fit);
  g_test_add_func ("/planning/estimate/sharp", test_sharp);
  g_test_add_func ("/planning/sweep/grid", test_sweep_grid);
  g_test_add_func ("/planning/sweep/row-roundtrip", test_row_roundtrip);
  g_test_add_func ("/planning/sweep/scaling", test_scaling);
  g_test_add_func ("/planning/progress/format", test_progress_format);
  g_test_add_func ("/planning/search/pruning-keeps-best-16", test_pruning_16);
  g_test_add_func ("/planning/search/uneven-pipeline", test_search_uneven_pipeline);
  g_test_add_func ("/planning/search/pruning-keeps-best-64", test_pruning_64);
  return g_test_run ();
}
