/* The training-step simulation on small clusters: a hand-computed two-GPU data-parallel step,
 * representatives vs --full on symmetric plans, the pipeline bubble that emerges from execution,
 * and TP/PP/DP sanity. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include "sim/step/runner.h"
#include "model/memory.h"

/* An idealised GPU for hand computation: 1 PFLOP/s... made exact: peak 1e12 FLOP/s so a kernel of F
 * FLOPs takes F/1000 ns; efficiency 1, no size or wave effects (half-GFLOP 0, sm_count 0), no
 * memory-bound time (hbm bandwidth 0 disables the byte term), no launch overhead or slowdown. */
static void
ideal_gpu (SimGpuSpec *g)
{
  memset (g, 0, sizeof *g);
  g_strlcpy (g->name, "ideal", sizeof g->name);
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    {
      g->peak_flops[d] = 1e12;
      g->gemm_eff_max[d] = 1.0;
    }
  g->hbm_bytes = 80e9;
  g->attn_eff = 1.0;
  g->mem_eff = 1.0;
  g->nvlink_bw_bytes_per_s = 100e9;
}

/* NVLink domains of `per_node` GPUs, one 50 GB/s NIC per GPU, a rail-optimized two-tier fabric;
 * every latency 0 unless `latency`. */
static void
cluster_of (SimClusterSpec *c, SimFabricSpec *f, SimCollectiveProfile *p, int gpus, int per_node,
            double nvlink_bw, gboolean latency)
{
  memset (c, 0, sizeof *c);
  c->gpus = gpus;
  c->gpus_per_node = per_node;
  c->nvlink_domain = per_node;
  c->nvlink_bw_bytes_per_s = nvlink_bw;
  c->nics_per_gpu = 1;
  c->nic_bw_bytes_per_s = 50e9;
  c->nvlink_latency_ns = latency ? 1000 : 0;
  c->nic_latency_ns = latency ? 2000 : 0;
  memset (f, 0, sizeof *f);
  f->kind = SIM_FABRIC_RAIL_OPTIMIZED;
  f->tiers = 2;
  f->radix = 64;
  f->oversubscription[0] = f->oversubscription[1] = f->oversubscription[2] = 1;
  f->hop_latency_ns = latency ? 500 : 0;
  memset (p, 0, sizeof *p);
  p->nvlink_eff = 1.0;
  p->nvls_eff = 1.0;
  p->nic_eff = 1.0;
  if (latency)
    {
      for (int a = 0; a < SIM_COLLECTIVE_ALGO_COUNT; a++)
        p->base_latency_ns[a] = 8000;
      p->nvlink_step_latency_ns = 3000;
      p->net_step_latency_ns = 10000;
    }
}

/* A small GPT: 1024 hidden, 8 heads, 4096 FFN (GeLU), tied embeddings, sequence 1024. */
static void
small_gpt (ModelShape *s, int layers, int vocab)
{
  memset (s, 0, sizeof *s);
  g_strlcpy (s->name, "small", sizeof s->name);
  s->layers = layers;
  s->hidden = 1024;
  s->heads = 8;
  s->ffn_hidden = 4096;
  s->vocab = vocab;
  s->seq_len = 1024;
  s->activation = MODEL_ACT_GELU;
  s->norm = MODEL_NORM_LAYERNORM;
  s->position = MODEL_POS_LEARNED;
  s->tied_embeddings = TRUE;
  g_autoptr (GError) error = NULL;
  g_assert_true (model_shape_finish (s, &error));
  g_assert_no_error (error);
}

static void
plan_of (ModelPlan *p, int tp, int pp, int vpp, int cp, int dp, int mbs_per_pipe)
{
  model_plan_init (p);
  p->tp = tp;
  p->pp = pp;
  p->vpp = vpp;
  p->cp = cp;
  p->dp = dp;
  p->gpus = tp * pp * cp * dp;
  p->sp = tp > 1;
  p->micro_batch = 1;
  p->global_batch = dp * mbs_per_pipe;
  p->schedule = vpp > 1 ? MODEL_SCHED_INTERLEAVED : MODEL_SCHED_1F1B;
}

/* One test's world: GPU, cluster, fabric, collective constants, model and plan. */
typedef struct {
  SimGpuSpec g;
  SimClusterSpec c;
  SimFabricSpec f;
  SimCollectiveProfile cp;
  ModelShape s;
  ModelPlan p;
} World;

/* The runner's defaults, with or without --full, and no framework memory overhead. */
static SimRunnerOptions
test_options (gboolean full)
{
  SimRunnerOptions o;
  sim_runner_options_init (&o);
  o.full = full;
  o.memory_overhead_bytes = 0;
  return o;
}

static SimRunnerResult
run_with (const ModelShape *s, const ModelPlan *p, const SimGpuSpec *g, const SimClusterSpec *c,
          const SimFabricSpec *f, const SimCollectiveProfile *cp, const SimRunnerOptions *o)
{
  SimRunnerResult r;
  g_autoptr (GError) error = NULL;
  gboolean ok = sim_runner_run (s, p, g, c, f, cp, o, &r, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  double sum = 0;
  for (int b = 0; b < SIM_BD_COUNT; b++)
    sum += r.breakdown_s[b];
  /* The breakdown accounts for the whole step of the critical rank. */
  g_assert_cmpfloat (fabs (sum - r.step_ns / 1e9), <, 1e-9 * 10 + 1e-6 * r.step_ns / 1e9);
  /* Readiness from the predecessors' streams (what many ranks use) gives the same step, to the
   * nanosecond, as the per-rank dependency counters these small worlds use. */
  if (!o->stream_readiness && o->trace == NULL)
    {
      SimRunnerOptions o2 = *o;
      o2.stream_readiness = TRUE;
      SimRunnerResult r2;
      g_assert_true (sim_runner_run (s, p, g, c, f, cp, &o2, &r2, &error));
      g_assert_cmpint (r2.step_ns, ==, r.step_ns);
      g_assert_cmpint (r2.ops_executed, ==, r.ops_executed);
      g_assert_cmpint (r2.critical_rank, ==, r.critical_rank);
      for (int b = 0; b < SIM_BD_COUNT; b++)
        g_assert_cmpfloat (r2.breakdown_s[b], ==, r.breakdown_s[b]);
    }
  return r;
}

static SimRunnerResult
run (const ModelShape *s, const ModelPlan *p, const SimGpuSpec *g, const SimClusterSpec *c,
     const SimFabricSpec *f, const SimCollectiveProfile *cp, gboolean full)
{
  SimRunnerOptions o = test_options (full);
  return run_with (s, p, g, c, f, cp, &o);
}

static SimRunnerResult
world_run (const World *w, gboolean full)
{
  return run (&w->s, &w->p, &w->g, &w->c, &w->f, &w->cp, full);
}

/* The ideal GPU at 100 TFLOP/s bf16 (compute long enough to overlap) and the small GPT of `layers`
 * layers: the start of most worlds below. */
static void
fast_world (World *w, int layers)
{
  ideal_gpu (&w->g);
  w->g.peak_flops[MODEL_DTYPE_BF16] = 1e14;
  small_gpt (&w->s, layers, 32000);
}

/* Two GPUs in one NVLink domain, pure DP (zero 0: all-reduce), one micro-batch each, one DP bucket.
 * Per micro-batch, with T = 1024 tokens, h = 1024, s = 1024, 8 heads of d = 128, L = 2, vocabulary
 * V = 32,000 (already a multiple of 128: Megatron does not pad it), at 1e12 FLOP/s (F FLOPs take
 * F/1000 ns), FLOPs as model/op.h counts them:
 *   layer forward GEMMs 2·T·h·(3h + h + 4h + 4h) = 24·T·h² = 25,769,803,776
 *   layer forward attention, causal pairs s(s+1)/2: 4·d·heads·524,800 = 2,149,580,800
 *   layer backward: GEMMs (dgrad + wgrad) ×2 = 51,539,607,552, flash attention ×2.5 (it
 *   recomputes the scores) = 5,373,952,000
 *   LM head forward 2·T·V·h = 67,108,864,000, backward ×2 = 134,217,728,000
 *   compute = 2·84,832,944,128 + 201,326,592,000 = 370,992,480,256 FLOPs = 370,992,480.3 ns
 * (each of the 2·(5 + 9) + 3 = 31 kernels rounds up to a whole ns: + ≤ 31 ns).
 * Gradients in fp32, launched as one bucket after the embedding backward (40 GiB bucket), over
 * the parameters: L·(12h² + 2h) + V·h + 1024·h (positions) + h (final norm) = 58,987,520, so
 * 235,950,080 B; a 2-GPU ring all-reduce moves 2(n−1)/n = 1× the buffer over one 100 GB/s NVLink
 * direction: 2,359,500.8 ns, exposed entirely (the optimizer needs it; nothing left to overlap).
 * Optimizer and memory-bound kernels take 0 (no HBM term). Step = 373,351,981.1 ns (+ rounding). */
static void
test_two_gpu_dp (void)
{
  World w;
  ideal_gpu (&w.g);
  cluster_of (&w.c, &w.f, &w.cp, 2, 2, 100e9, FALSE);
  small_gpt (&w.s, 2, 32000);
  plan_of (&w.p, 1, 1, 1, 1, 2, 1);
  w.p.dp_bucket_mb = 40 * 1024;
  w.p.dp_overlap = TRUE;
  SimRunnerResult r = world_run (&w, FALSE);
  double compute_ns = 370992480.256, ar_ns = 2359500.8;
  g_test_message ("step %" G_GINT64_FORMAT " ns, compute %.0f, dp %.0f", r.step_ns,
                  r.breakdown_s[SIM_BD_COMPUTE] * 1e9, r.breakdown_s[SIM_BD_DP] * 1e9);
  g_assert_cmpfloat (fabs (r.breakdown_s[SIM_BD_COMPUTE] * 1e9 - compute_ns), <=, 32);
  g_assert_cmpfloat (fabs (r.breakdown_s[SIM_BD_DP] * 1e9 - ar_ns), <=, 2);
  g_assert_cmpfloat (fabs (r.step_ns - (compute_ns + ar_ns)), <=, 34);
  g_assert_true (r.symmetric);
  /* Tokens per second and MFU follow from the step: 2 GPUs × 1024 tokens per step. */
  g_assert_cmpfloat (fabs (r.tokens_per_s - 2048.0 / (r.step_ns / 1e9)), <, 1e-6);
}

/* Representatives (one rank per stage, sibling collectives launched together) and --full agree
 * exactly on symmetric placements, for several plans on two 8-GPU nodes. */
/* The GPU and model the representatives' and TP-mirror comparisons share. */
static void
mirror_world (World *w)
{
  ideal_gpu (&w->g);
  w->g.hbm_bw_bytes_per_s = 3e12;
  w->g.launch_ns = 4000;
  w->g.overlap_slowdown = 0.1;
  small_gpt (&w->s, 8, 32000);
}

/* Plan `pl` (tp pp vpp cp dp m) of case i on GPUs in nodes of `per_node`, NVLink domains of `domain`. */
static void
mirror_case (World *w, const int pl[6], gsize i, int per_node, int domain)
{
  plan_of (&w->p, pl[0], pl[1], pl[2], pl[3], pl[4], pl[5]);
  w->p.zero = 1;
  w->p.dp_overlap = TRUE;
  w->p.tp_comm_overlap = i % 2 == 0;
  w->p.dp_bucket_mb = 16;
  cluster_of (&w->c, &w->f, &w->cp, w->p.gpus, per_node, 450e9, TRUE);
  w->c.nvlink_domain = domain;
}

static void
test_symmetry (void)
{
  static const int plans[][6] = {
    /* tp pp vpp cp dp m */
    { 2, 2, 1, 1, 4, 4 }, { 4, 2, 2, 1, 2, 4 }, { 2, 2, 1, 2, 2, 2 }, { 1, 4, 1, 1, 4, 6 },
    { 8, 2, 1, 1, 1, 3 },
  };
  World w;
  mirror_world (&w);
  for (gsize i = 0; i < G_N_ELEMENTS (plans); i++)
    {
      mirror_case (&w, plans[i], i, 8, 8);
      const ModelPlan *p = &w.p;
      SimRunnerResult a = world_run (&w, FALSE);
      SimRunnerResult b = world_run (&w, TRUE);
      g_test_message ("plan %zu: representatives %" G_GINT64_FORMAT " ns (%d ranks), full %"
                      G_GINT64_FORMAT " ns (%d ranks)", i, a.step_ns, a.ranks_simulated, b.step_ns,
                      b.ranks_simulated);
      g_assert_true (a.symmetric);
      g_assert_false (b.symmetric);
      g_assert_false (a.tp_mirror);
      g_assert_cmpint (a.ranks_simulated, ==, p->pp);
      g_assert_cmpint (b.ranks_simulated, ==, p->gpus);
      g_assert_cmpint (a.step_ns, ==, b.step_ns);
    }
}

/* Stages that cut NVLink domains unevenly fail the representatives' check (48 GPUs in NVLink domains
 * of two 8-GPU nodes, PP 4: stage 0's 12 GPUs sit in one domain, stage 1's span two) and run one
 * rank per TP group (its TP positions, in one node, mirrored), which must agree with --full to the
 * ns; a TP group spanning nodes (nodes of 2 GPUs, TP 4) runs every rank, and so does an FP8 amax
 * group that holds several TP positions across domains. */
static void
test_tp_mirror (void)
{
  static const int plans[][6] = {
    /* tp pp vpp cp dp m */
    { 2, 4, 1, 1, 6, 8 }, { 2, 4, 2, 1, 6, 8 }, { 2, 4, 1, 2, 3, 8 }, { 4, 4, 1, 1, 3, 8 }, { 4, 4, 2, 1, 3, 8 },
  };
  World w;
  mirror_world (&w);
  for (gsize i = 0; i <= G_N_ELEMENTS (plans); i++)
    {
      gboolean split = i == G_N_ELEMENTS (plans);
      mirror_case (&w, plans[split ? 3 : i], i, split ? 2 : 8, 16);
      const ModelPlan *p = &w.p;
      SimRunnerResult a = world_run (&w, FALSE);
      SimRunnerResult b = world_run (&w, TRUE);
      g_test_message ("plan %zu%s: default %" G_GINT64_FORMAT " ns (%d ranks), full %" G_GINT64_FORMAT
                      " ns (%d ranks)", i, split ? " (TP across nodes)" : "", a.step_ns, a.ranks_simulated,
                      b.step_ns, b.ranks_simulated);
      g_assert_false (a.symmetric);
      g_assert_cmpint (a.tp_mirror, ==, !split);
      g_assert_false (b.tp_mirror);
      g_assert_cmpint (a.ranks_simulated, ==, split ? p->gpus : p->gpus / p->tp);
      g_assert_cmpint (b.ranks_simulated, ==, p->gpus);
      g_assert_cmpint (a.step_ns, ==, b.step_ns);
    }
  /* FP8 delayed scaling reduces its amaxes over TP × DP: that group spans the domains with several
   * TP positions in it (their ring edges leave the domain from different GPUs), so every rank runs;
   * over TP only it stays in a node and the mirror holds. */
  for (int tp_only = 0; tp_only <= 1; tp_only++)
    {
      mirror_case (&w, plans[0], 1, 8, 16);
      w.p.matmul_dtype = MODEL_DTYPE_FP8;
      w.p.fp8_scaling = MODEL_FP8_DELAYED;
      w.p.fp8_reduce_amax = TRUE;
      w.p.fp8_amax_tp_only = tp_only;
      SimRunnerResult a = world_run (&w, FALSE);
      SimRunnerResult b = world_run (&w, TRUE);
      g_test_message ("fp8 amax over %s: default %d ranks", tp_only ? "TP" : "TP x DP", a.ranks_simulated);
      g_assert_cmpint (a.tp_mirror, ==, tp_only);
      g_assert_cmpint (a.step_ns, ==, b.step_ns);
    }
}

/* Pipeline only, uniform stages (the LM head of a 128-token vocabulary is 1/96 of a layer's
 * FLOPs; the embedding and all memory-bound kernels take no time), communication free
 * (1e18 B/s, no latency): the measured bubble of the critical stage over its compute must be
 * (p−1)/m for 1F1B and (p−1)/(v·m) for interleaved 1F1B (Narayanan et al. SC21). The LM head adds
 * at most 1/96 per layer to one stage: 3% tolerance. */
static void
test_bubble (void)
{
  /* pp, vpp, m, and the interleaved micro-batch group (Megatron-Core's
   * microbatch_group_size_per_vp_stage, 0: pp) for counts pp does not divide, which keep the bubble. */
  static const int cases[][4] = { { 4, 1, 8, 0 }, { 4, 2, 8, 0 }, { 2, 4, 4, 0 }, { 8, 1, 16, 0 }, { 4, 3, 12, 0 },
                                  { 4, 2, 6, 6 }, { 2, 2, 5, 3 }, { 4, 3, 9, 5 } };
  SimGpuSpec g;
  SimClusterSpec c;
  SimFabricSpec f;
  SimCollectiveProfile cp;
  ModelShape s;
  ideal_gpu (&g);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      int pp = cases[i][0], v = cases[i][1], m = cases[i][2];
      small_gpt (&s, pp * v * 2, 128);
      ModelPlan p;
      plan_of (&p, 1, pp, v, 1, 1, m);
      p.mb_group = cases[i][3];
      cluster_of (&c, &f, &cp, p.gpus, MIN (p.gpus, 8), 1e18, FALSE);
      SimRunnerResult r = run (&s, &p, &g, &c, &f, &cp, FALSE);
      double bubble = r.breakdown_s[SIM_BD_BUBBLE] / r.breakdown_s[SIM_BD_COMPUTE];
      double expect = (pp - 1.0) / (v * m);
      g_test_message ("pp %d vpp %d m %d group %d: bubble %.4f, (p-1)/(v·m) %.4f", pp, v, m, cases[i][3], bubble,
                      expect);
      g_assert_cmpfloat (fabs (bubble - expect), <, 0.03 * expect + 1e-9);
    }
}

/* TP only, one 8-GPU node: the TP collectives are exposed without overlap and mostly hidden with
 * tp_comm_overlap; TP across two NVLink domains (4 GPUs each, 50 GB/s NICs) is legal and slower. */
static void
test_tp (void)
{
  World w;
  fast_world (&w, 4);
  plan_of (&w.p, 8, 1, 1, 1, 1, 2);
  cluster_of (&w.c, &w.f, &w.cp, 8, 8, 450e9, TRUE);
  SimRunnerResult plain = world_run (&w, FALSE);
  w.p.tp_comm_overlap = TRUE;
  SimRunnerResult ovl = world_run (&w, FALSE);
  cluster_of (&w.c, &w.f, &w.cp, 8, 4, 450e9, TRUE);
  SimRunnerResult split = world_run (&w, FALSE);
  g_test_message ("tp8: plain %" G_GINT64_FORMAT " (tp %.6f s), overlap %" G_GINT64_FORMAT
                  " (tp %.6f s), across domains %" G_GINT64_FORMAT, plain.step_ns,
                  plain.breakdown_s[SIM_BD_TP], ovl.step_ns, ovl.breakdown_s[SIM_BD_TP], split.step_ns);
  g_assert_cmpfloat (plain.breakdown_s[SIM_BD_TP], >, 0);
  g_assert_cmpfloat (ovl.breakdown_s[SIM_BD_TP], <, plain.breakdown_s[SIM_BD_TP]);
  g_assert_cmpint (ovl.step_ns, <, plain.step_ns);
  g_assert_cmpint (split.step_ns, >, ovl.step_ns);
  /* Without communication cost the TP step is compute only: the comm is what makes it longer. */
  g_assert_cmpfloat (plain.breakdown_s[SIM_BD_COMPUTE], <, plain.step_ns / 1e9);
}

/* Userbuffers and the overlap slowdown, TP8 alone (no other communication): GEMMs whose TP
 * collective shares their SMs (bulk and pipeline without margin: "bulk sm=16") are stretched by
 * overlap_slowdown while it runs; with a margin they run on 116 of 132 SMs instead and are not
 * stretched, nor is ring exchange (copy engines). What slowdown is left is the same in both: the
 * LM head, not a userbuffers GEMM, beside the final all-gather (norms and activations wait for the
 * collectives). The small GEMMs here have fewer 128×128 tiles than SMs and split K to fill them
 * (sim/gpu/gpu.h), so 16 SMs fewer cost them some compute, less than the slowdown they avoid. */
static void
test_tp_userbuffers (void)
{
  World w;
  fast_world (&w, 4);
  w.g.sm_count = 132;
  w.g.overlap_slowdown = 0.5;
  plan_of (&w.p, 8, 1, 1, 1, 1, 2);
  w.p.tp_comm_overlap = TRUE;
  cluster_of (&w.c, &w.f, &w.cp, 8, 8, 450e9, TRUE);
  GError *error = NULL;
  for (int u = 0; u < MODEL_UB_COUNT; u++)
    g_assert_true (model_ub_parse ("bulk sm=16", &w.p.ub[u], &error));
  SimRunnerResult shared = world_run (&w, FALSE);
  for (int u = 0; u < MODEL_UB_COUNT; u++)
    g_assert_true (model_ub_parse ("bulk sm=16 margin", &w.p.ub[u], &error));
  SimRunnerResult margin = world_run (&w, FALSE);
  for (int u = 0; u < MODEL_UB_COUNT; u++)
    g_assert_true (model_ub_parse ("ring_exchange", &w.p.ub[u], &error));
  SimRunnerResult ring = world_run (&w, FALSE);
  g_test_message ("slowdown: shared %.6f s, margin %.6f s, ring %.6f s; compute %.6f / %.6f / %.6f s",
                  shared.breakdown_s[SIM_BD_SLOWDOWN], margin.breakdown_s[SIM_BD_SLOWDOWN],
                  ring.breakdown_s[SIM_BD_SLOWDOWN], shared.breakdown_s[SIM_BD_COMPUTE],
                  margin.breakdown_s[SIM_BD_COMPUTE], ring.breakdown_s[SIM_BD_COMPUTE]);
  g_assert_cmpfloat (margin.breakdown_s[SIM_BD_SLOWDOWN], <, 0.5 * shared.breakdown_s[SIM_BD_SLOWDOWN]);
  g_assert_cmpfloat (fabs (ring.breakdown_s[SIM_BD_SLOWDOWN] - margin.breakdown_s[SIM_BD_SLOWDOWN]), <, 1e-9);
  g_assert_cmpfloat (margin.breakdown_s[SIM_BD_COMPUTE], >, shared.breakdown_s[SIM_BD_COMPUTE]);
  g_assert_cmpfloat (margin.breakdown_s[SIM_BD_COMPUTE] + margin.breakdown_s[SIM_BD_SLOWDOWN], <,
                     shared.breakdown_s[SIM_BD_COMPUTE] + shared.breakdown_s[SIM_BD_SLOWDOWN]);
  /* Ring exchange cuts each GEMM in 8 pieces of 128 rows: a few tiles each on 132 SMs. */
  g_assert_cmpfloat (ring.breakdown_s[SIM_BD_COMPUTE], >, margin.breakdown_s[SIM_BD_COMPUTE]);
}

/* FP8 delayed scaling's amax reduction (TE reduce_amax over TP x CP x DP): on a TP2 DP4 FP8 plan it
 * adds a blocking all-reduce after every slot: 2 micro-batches x (forward + backward) = 4 on the one
 * stage, each at least the 8 us base latency of cluster_of's profile. With current scaling or BF16
 * GEMMs the flag changes nothing. */
static SimRunnerResult
run_amax (ModelPlan *p, ModelDtype dtype, ModelFp8Scaling scaling, gboolean reduce)
{
  SimGpuSpec g;
  SimClusterSpec c;
  SimFabricSpec f;
  SimCollectiveProfile cp;
  ModelShape s;
  ideal_gpu (&g);
  g.peak_flops[MODEL_DTYPE_FP8] = 2e14;
  small_gpt (&s, 2, 32000);
  cluster_of (&c, &f, &cp, 8, 2, 450e9, TRUE);
  p->matmul_dtype = dtype;
  p->fp8_scaling = scaling;
  p->fp8_reduce_amax = reduce;
  return run (&s, p, &g, &c, &f, &cp, FALSE);
}

static void
test_fp8_amax_reduction (void)
{
  ModelPlan p;
  plan_of (&p, 2, 1, 1, 1, 4, 2);
  SimRunnerResult on = run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_DELAYED, TRUE);
  SimRunnerResult off = run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_DELAYED, FALSE);
  g_test_message ("amax reduction: on %" G_GINT64_FORMAT " ns, off %" G_GINT64_FORMAT " ns", on.step_ns, off.step_ns);
  g_assert_cmpint (on.step_ns - off.step_ns, >=, 4 * 8000);
  g_assert_cmpfloat (on.breakdown_s[SIM_BD_DP], >, off.breakdown_s[SIM_BD_DP]);
  g_assert_cmpint (run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_CURRENT, TRUE).step_ns, ==,
                   run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_CURRENT, FALSE).step_ns);
  g_assert_cmpint (run_amax (&p, MODEL_DTYPE_BF16, MODEL_FP8_DELAYED, TRUE).step_ns, ==,
                   run_amax (&p, MODEL_DTYPE_BF16, MODEL_FP8_DELAYED, FALSE).step_ns);
}

/* The same plan with the amaxes reduced over TP only (the 2 ranks of one domain, where the TP x DP
 * group spans 4 domains): each of the 4 all-reduces still blocks, at its 8 us base latency or more,
 * but costs less than over the network. Async (NVTE_ASYNC_AMAX_REDUCTION), compute does not wait
 * for them: only the TP collectives queued behind them on the TP stream do. */
static void
test_fp8_amax_group (void)
{
  ModelPlan p;
  plan_of (&p, 2, 1, 1, 1, 4, 2);
  SimRunnerResult all = run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_DELAYED, TRUE);
  SimRunnerResult off = run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_DELAYED, FALSE);
  p.fp8_amax_tp_only = TRUE;
  SimRunnerResult tp = run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_DELAYED, TRUE);
  p.fp8_amax_async = TRUE;
  SimRunnerResult async = run_amax (&p, MODEL_DTYPE_FP8, MODEL_FP8_DELAYED, TRUE);
  g_test_message ("amax over TP x DP %" G_GINT64_FORMAT " ns, TP %" G_GINT64_FORMAT " ns, TP async %" G_GINT64_FORMAT
                  " ns, none %" G_GINT64_FORMAT " ns", all.step_ns, tp.step_ns, async.step_ns, off.step_ns);
  g_assert_cmpint (tp.step_ns - off.step_ns, >=, 4 * 8000);
  g_assert_cmpint (tp.step_ns, <, all.step_ns);
  g_assert_cmpint (async.step_ns, <, tp.step_ns);
  g_assert_cmpint (async.step_ns, >=, off.step_ns);
}

/* NCCL CTA caps: on a DP4 plan with overlapped gradient reduce-scatter and parameter all-gather
 * (the only communication), compute beside them is stretched by overlap_slowdown 0.5; capping the
 * DP communicator to 10 CTAs of 100 SMs stretches it by 10/100 = 0.1, a fifth, and a cap above
 * the slowdown's share (100 CTAs) changes nothing. Compute itself is the same. */
static void
test_nccl_ctas (void)
{
  World w;
  ideal_gpu (&w.g);
  w.g.overlap_slowdown = 0.5;
  w.g.sm_count = 100;
  small_gpt (&w.s, 4, 32000);
  plan_of (&w.p, 1, 1, 1, 1, 4, 4);
  w.p.zero = 1;
  w.p.dp_overlap = TRUE;
  w.p.dp_bucket_mb = 1;
  cluster_of (&w.c, &w.f, &w.cp, w.p.gpus, 4, 450e9, TRUE);
  SimRunnerResult nccl = world_run (&w, FALSE);
  w.p.nccl_ctas[MODEL_DIM_DP] = 10;
  SimRunnerResult capped = world_run (&w, FALSE);
  w.p.nccl_ctas[MODEL_DIM_DP] = 100;
  SimRunnerResult wide = world_run (&w, FALSE);
  g_test_message ("slowdown: NCCL's own %.9f s, 10 CTAs %.9f s, 100 CTAs %.9f s",
                  nccl.breakdown_s[SIM_BD_SLOWDOWN], capped.breakdown_s[SIM_BD_SLOWDOWN],
                  wide.breakdown_s[SIM_BD_SLOWDOWN]);
  g_assert_cmpfloat (nccl.breakdown_s[SIM_BD_SLOWDOWN], >, 0);
  g_assert_cmpfloat (fabs (5.0 * capped.breakdown_s[SIM_BD_SLOWDOWN] - nccl.breakdown_s[SIM_BD_SLOWDOWN]), <,
                     1e-3 * nccl.breakdown_s[SIM_BD_SLOWDOWN]);
  g_assert_cmpfloat (capped.breakdown_s[SIM_BD_COMPUTE], ==, nccl.breakdown_s[SIM_BD_COMPUTE]);
  g_assert_cmpint (wide.step_ns, ==, nccl.step_ns);
}

/* Gradient accumulation over m = 3 micro-batches on one GPU (the small GPT, 2 layers, V = 32,000,
 * bf16 p = 2, fp32 grads g = 4) with 1 TB/s of HBM. Each wgrad stays compute-bound (FC1's, 8.6 GFLOP
 * at 100 TFLOP/s = 86 µs, moves 44 MB = 44 µs even fused), so fused accumulation costs no time; an
 * add reads W·(p + g) and writes W·g = 10 B per weight over W = L·12h² + V·h = 57,933,824 elements
 * (4 GEMMs a layer and the LM head): 579,338.24 ns a micro-batch (9 kernels, each rounded up to
 * a ns). add pays it 3 times, autograd twice (the first micro-batch keeps its gradient). */
static void
test_grad_accum (void)
{
  World w;
  fast_world (&w, 2);
  w.g.hbm_bw_bytes_per_s = 1e12;
  cluster_of (&w.c, &w.f, &w.cp, 1, 1, 100e9, FALSE);
  plan_of (&w.p, 1, 1, 1, 1, 1, 3);
  SimRunnerResult fused = world_run (&w, FALSE);
  w.p.grad_accum = MODEL_GRAD_ACCUM_ADD;
  SimRunnerResult add = world_run (&w, FALSE);
  w.p.grad_accum = MODEL_GRAD_ACCUM_AUTOGRAD;
  SimRunnerResult autograd = world_run (&w, FALSE);
  double per_mb = 579338.24;
  g_test_message ("fused %" G_GINT64_FORMAT " ns, add %" G_GINT64_FORMAT ", autograd %" G_GINT64_FORMAT,
                  fused.step_ns, add.step_ns, autograd.step_ns);
  g_assert_cmpfloat (fabs ((double) (add.step_ns - fused.step_ns) - 3 * per_mb), <=, 3 * 9);
  g_assert_cmpfloat (fabs ((double) (autograd.step_ns - fused.step_ns) - 2 * per_mb), <=, 2 * 9);
}

/* Pipeline sends of 2021 Megatron, TP2 PP2 without SP on 4 GPUs over two nodes (the PP hop crosses the
 * NIC): scatter/gather sends 1/2 of each activation (2 MiB -> 1 MiB) and all-gathers it over TP at
 * the receiver, so the PP streams are busy less (the latency stays) and TP gains the all-gathers;
 * blocking sends make each stage wait for its send: more PP time exposed, a step no shorter. */
static void
test_pp_sends (void)
{
  World w;
  fast_world (&w, 4);
  plan_of (&w.p, 2, 2, 1, 1, 1, 4);
  w.p.sp = FALSE;
  cluster_of (&w.c, &w.f, &w.cp, 4, 2, 450e9, TRUE);
  w.p.pp_scatter_gather = FALSE;
  SimRunnerResult whole = world_run (&w, FALSE);
  w.p.pp_scatter_gather = TRUE;
  SimRunnerResult split = world_run (&w, FALSE);
  w.p.pp_blocking = TRUE;
  SimRunnerResult blocking = world_run (&w, FALSE);
  g_test_message ("pp busy: whole %.6f s, split %.6f s; pp exposed: split %.6f s, blocking %.6f s",
                  whole.comm_busy_s[SIM_BD_PP], split.comm_busy_s[SIM_BD_PP], split.breakdown_s[SIM_BD_PP],
                  blocking.breakdown_s[SIM_BD_PP]);
  g_assert_cmpfloat (split.comm_busy_s[SIM_BD_PP], <, whole.comm_busy_s[SIM_BD_PP]);
  g_assert_cmpfloat (split.comm_busy_s[SIM_BD_TP], >, whole.comm_busy_s[SIM_BD_TP]);
  g_assert_cmpfloat (blocking.breakdown_s[SIM_BD_PP], >, split.breakdown_s[SIM_BD_PP]);
  g_assert_cmpint (blocking.step_ns, >=, split.step_ns);
}

/* 16 GPUs on two nodes, pure DP with the distributed optimizer, 8 layers, 16 MiB buckets. */
static void
dp16_world (World *w)
{
  fast_world (w, 8);
  plan_of (&w->p, 1, 1, 1, 1, 16, 1);
  w->p.zero = 1;
  w->p.dp_bucket_mb = 16;
}

/* DP only, 16 GPUs on two nodes: the distributed optimizer's reduce-scatter + all-gather, overlapped
 * with backward/forward, exposes less DP time than the blocking variant, and the blocking step is
 * compute + exposed DP (no bubble without a pipeline). */
static void
test_dp (void)
{
  World w;
  dp16_world (&w);
  cluster_of (&w.c, &w.f, &w.cp, 16, 8, 450e9, TRUE);
  SimRunnerResult blocking = world_run (&w, FALSE);
  w.p.dp_overlap = TRUE;
  SimRunnerResult ovl = world_run (&w, FALSE);
  g_test_message ("dp16: blocking %" G_GINT64_FORMAT " (dp %.6f s), overlapped %" G_GINT64_FORMAT
                  " (dp %.6f s)", blocking.step_ns, blocking.breakdown_s[SIM_BD_DP], ovl.step_ns,
                  ovl.breakdown_s[SIM_BD_DP]);
  g_assert_cmpfloat (blocking.breakdown_s[SIM_BD_DP], >, 0);
  g_assert_cmpfloat (ovl.breakdown_s[SIM_BD_DP], <, blocking.breakdown_s[SIM_BD_DP]);
  g_assert_cmpint (ovl.step_ns, <, blocking.step_ns);
  g_assert_cmpfloat (blocking.breakdown_s[SIM_BD_BUBBLE], <, 1e-9);
}

/* Bytes of rank 0's DP collectives by stream, from the trace hook. */
typedef struct { double gather, dp_ag, dp_rs, host_ns; int n_gather, n_rs, n_host; } DpBytes;

static void
dp_bytes_trace (gpointer user, const SimRunnerTraceEvent *ev)
{
  DpBytes *d = user;
  if (ev->rank != 0)
    return;
  if (strcmp (ev->stream_name, "dp-gather") == 0)
    {
      d->gather += ev->bytes;
      d->n_gather++;
    }
  else if (strcmp (ev->stream_name, "dp") == 0)
    {
      d->dp_rs += ev->bytes;
      d->n_rs++;
    }
  else if (strcmp (ev->name, "zero3_list_host") == 0)
    {
      d->host_ns += (double) (ev->end_ns - ev->start_ns);
      d->n_host++;
    }
}

static DpBytes
run_dp_bytes (const ModelShape *s, const ModelPlan *p, const SimGpuSpec *g, const SimClusterSpec *c,
              const SimFabricSpec *f, const SimCollectiveProfile *cp, SimRunnerResult *out)
{
  SimRunnerOptions o = test_options (FALSE);
  DpBytes d = { 0 };
  o.trace = dp_bytes_trace;
  o.trace_user = &d;
  g_autoptr (GError) error = NULL;
  gboolean ok = sim_runner_run (s, p, g, c, f, cp, &o, out, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  return d;
}

/* ZeRO-3 (DeepSpeed stage 3 / FSDP full shard), dp 2, m = 2 micro-batches, full recompute, on the
 * small GPT (L = 4, h = 1024, V = 32,000, 1024 learned positions, tied embeddings, pp 1).
 * Parameters: P = L·(12h² + 2h) + V·h + 1024·h + h (final norm) = 83,890,176 of which the
 * embedding (word + position) E = (V + 1024)·h = 33,816,576 is used once per pass and the rest,
 * R = P − E, by the layers. Per micro-batch each layer's parameters are gathered before its
 * forward, before its recompute and before its backward (released after each use), the embedding
 * before the forward and the backward slot: gathered bf16 bytes per step = m·2·(3R + 2E), i.e. 3×
 * the layer parameter bytes per micro-batch; gradients reduce-scattered (fp32) every micro-batch:
 * m·4·P. No step-end parameter gather (the updated shard is the only copy). Each layer use is one
 * collective: m·(3L + 2) gathers. ZeRO-2 for contrast: no per-layer gathers; DeepSpeed's ZeRO-2
 * reduce-scatters its gradients every micro-batch too (only the shard is resident) plus one bf16
 * parameter all-gather of P after the optimizer; Megatron's zero 2 (its distributed optimizer, a full
 * gradient buffer) only in the last micro-batch. Without recompute ZeRO-3 gathers the layers twice:
 * m·2·(2R + 2E). */
static void
test_zero3 (void)
{
  World w;
  int L = 4, m = 2;
  fast_world (&w, L);
  plan_of (&w.p, 1, 1, 1, 1, 2, m);
  w.p.zero = 3;
  w.p.recompute = MODEL_RECOMPUTE_FULL;
  w.p.dp_overlap = TRUE;
  cluster_of (&w.c, &w.f, &w.cp, 2, 2, 100e9, TRUE);
  double h = 1024, E = (32000.0 + 1024) * h, P = L * (12 * h * h + 2 * h) + E + h, R = P - E;
  SimRunnerResult r3;
  DpBytes z3 = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &r3);
  g_test_message ("zero3: gathered %.0f B in %d, reduce-scattered %.0f B in %d, step %" G_GINT64_FORMAT,
                  z3.gather, z3.n_gather, z3.dp_rs, z3.n_rs, r3.step_ns);
  g_assert_cmpfloat (fabs (z3.gather - m * 2.0 * (3 * R + 2 * E)), <, 1e-9 * z3.gather);
  g_assert_cmpfloat (fabs (z3.dp_rs - m * 4.0 * P), <, 1e-9 * z3.dp_rs);
  g_assert_cmpint (z3.n_gather, ==, m * (3 * L + 2));
  g_assert_cmpint (z3.n_rs, >=, m * L);
  w.p.zero = 2;
  w.p.framework = MODEL_FW_DEEPSPEED;
  SimRunnerResult r2;
  DpBytes z2 = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &r2);
  g_assert_cmpfloat (z2.gather, ==, 0);
  /* reduce-scatters m·4·P plus the step's parameter all-gather 2·P on the same stream */
  g_assert_cmpfloat (fabs (z2.dp_rs - (m * 4.0 * P + 2.0 * P)), <, 1e-9 * z2.dp_rs);
  w.p.framework = MODEL_FW_MEGATRON;
  z2 = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &r2);
  g_assert_cmpfloat (z2.gather, ==, 0);
  g_assert_cmpfloat (fabs (z2.dp_rs - (4.0 * P + 2.0 * P)), <, 1e-9 * z2.dp_rs);
  w.p.zero = 3;
  w.p.recompute = MODEL_RECOMPUTE_NONE;
  DpBytes z3n = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &r3);
  g_assert_cmpfloat (fabs (z3n.gather - m * 2.0 * (2 * R + 2 * E)), <, 1e-9 * z3n.gather);
  g_assert_cmpint (z3n.n_gather, ==, m * (2 * L + 2));
  /* DeepSpeed 0.3's blocking fetch: 4 gathers per use (a GPT layer's weight matrices), each with
   * the GPU idle before it, so the step grows and more DP time is exposed. Its bytes are the weight
   * matrices alone: the norms (and the final norm, whose share the layer gathers carried) are under
   * the 1e5-element persistence threshold and stay gathered. */
  w.p.zero3_blocking = TRUE;
  SimRunnerResult rb;
  DpBytes zb = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &rb);
  g_assert_cmpfloat (fabs (zb.gather - (z3n.gather - m * 2.0 * L * (2 * h + h / L) * 2)), <, 1e-9 * zb.gather);
  g_assert_cmpint (zb.n_gather, ==, 4 * z3n.n_gather);
  g_assert_cmpint (rb.step_ns, >, r3.step_ns);
  g_assert_cmpfloat (rb.breakdown_s[SIM_BD_DP], >, r3.breakdown_s[SIM_BD_DP]);
  /* Its list collectives: per parameter gathered or reduce-scattered, a host loop of dp × eager_op
   * the GPU waits for. 4 pieces per gather (zb.n_gather in all); every parameter tensor of a layer
   * reduce-scattered, the 4 weights and the 2 norm weights (this GPT has no biases), every
   * micro-batch: m·6·P/(R/L) (the embedding counts as E/(R/L) layers' worth), one host loop before
   * each collective; and after the optimizer the re-gather of the persistent (< 1e5 elements)
   * parameters: 2 norms per layer and the final norm, + 2 for the list's own loops. */
  w.g.eager_op_ns = 10000;
  SimRunnerResult rl;
  DpBytes zl = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &rl);
  g_assert_cmpint (zl.n_gather, ==, zb.n_gather);
  double tensors = zb.n_gather + m * 6.0 * P / (R / L) + (2.0 * L + 1 + 2);
  double host_ns = tensors * 2 * 10000.0;
  g_test_message ("list host: %.1f tensors, %.0f ns (traced %d, %.0f ns); step %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT,
                  tensors, host_ns, zl.n_host, zl.host_ns, rb.step_ns, rl.step_ns);
  g_assert_cmpint (zl.n_host, ==, zb.n_gather + zb.n_rs + 1);
  g_assert_cmpfloat (fabs (zl.host_ns - host_ns), <, zl.n_host);
  /* ... at least: a host loop after the device synchronize also keeps the next gather from
   * starting beside the previous reduce-scatter. */
  g_assert_cmpfloat ((double) (rl.step_ns - rb.step_ns), >=, host_ns - zl.n_host);
  g_assert_cmpfloat ((rl.breakdown_s[SIM_BD_DP] - rb.breakdown_s[SIM_BD_DP]) * 1e9, >=, host_ns - zl.n_host);
  /* With an HBM rate the list buffers cost 3× each gathered byte (zero-fill, copy out) and 2× each
   * reduce-scattered one (copy in), at hbm_bw · mem_eff: 1 TB/s here. Around the reduce-scatters,
   * per backward: every gradient copied into the 5e8-element bucket (2×; all of this model's
   * tensors are smaller than the bucket, and its L layers never fill it), and the epilogue's
   * reduction divides the whole bucket buffer in place (2 × 5e8 elements): per gradient byte
   * 2 + 2·5e8 / (L·(12h² + 2h)) more. */
  double hbm = w.g.hbm_bw_bytes_per_s, eff = w.g.mem_eff;
  w.g.hbm_bw_bytes_per_s = 1e12;
  w.g.mem_eff = 1.0;
  SimRunnerResult rm;
  DpBytes zm = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &rm);
  double rs_moved = 2.0 + 2.0 + 2.0 * 5e8 / (L * (12 * h * h + 2 * h));
  double moved_ns = (3.0 * zm.gather + rs_moved * zm.dp_rs) / 1e12 * 1e9;
  g_test_message ("list buffers: %.0f ns over %.0f B gathered, %.0f B reduce-scattered", zm.host_ns - zl.host_ns,
                  zm.gather, zm.dp_rs);
  g_assert_cmpfloat (fabs (zm.host_ns - zl.host_ns - moved_ns), <, zm.n_host);
  w.g.hbm_bw_bytes_per_s = hbm;
  w.g.mem_eff = eff;
  w.g.eager_op_ns = 0;
  /* DeepSpeed keeps what it uses again within stage3_max_reuse_distance: with full recompute the
   * last matrix of a layer's recompute (dense_4h_to_h, 4h² elements, bf16) serves its backward, so
   * each micro-batch gathers L of them fewer, in the blocking fetch (one piece fewer per layer)
   * and in DeepSpeed's own ZeRO-3 (the same bytes, one gather per use); Megatron's ZeRO-3 (z3,
   * above) gathers all three times. */
  w.p.recompute = MODEL_RECOMPUTE_FULL;
  SimRunnerResult rk;
  DpBytes zk = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &rk);
  double fc2 = m * L * 4 * h * h * 2.0;
  g_test_message ("kept for the backward: %.0f B gathered against %.0f", zk.gather, z3.gather);
  double persistent = m * 3.0 * L * (2 * h + h / L) * 2; /* as above, over three uses per layer */
  g_assert_cmpfloat (fabs (zk.gather - (z3.gather - fc2 - persistent)), <, 1e-9 * z3.gather);
  g_assert_cmpint (zk.n_gather, ==, 4 * z3.n_gather - m * L);
  w.p.zero3_blocking = FALSE;
  w.p.framework = MODEL_FW_DEEPSPEED;
  zk = run_dp_bytes (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &rk);
  g_assert_cmpfloat (fabs (zk.gather - (z3.gather - fc2)), <, 1e-9 * z3.gather);
  g_assert_cmpint (zk.n_gather, ==, z3.n_gather);
  w.p.framework = MODEL_FW_MEGATRON;
}

/* Rank 0's parameter gathers and compute kernels, from the trace hook: how many gathers run
 * beside a compute kernel. */
typedef struct { gint64 ag_start[512], ag_end[512], c_start[4096], c_end[4096]; int n_ag, n_c; } PrefetchTrace;

static void
prefetch_trace (gpointer user, const SimRunnerTraceEvent *ev)
{
  PrefetchTrace *t = user;
  if (ev->rank != 0)
    return;
  if (strcmp (ev->stream_name, "dp-gather") == 0 && t->n_ag < 512)
    {
      t->ag_start[t->n_ag] = ev->start_ns;
      t->ag_end[t->n_ag++] = ev->end_ns;
    }
  else if (strcmp (ev->stream_name, "compute") == 0 && ev->end_ns > ev->start_ns && t->n_c < 4096)
    {
      t->c_start[t->n_c] = ev->start_ns;
      t->c_end[t->n_c++] = ev->end_ns;
    }
}

static int
prefetch_overlapped (const World *w, int *n_gathers)
{
  SimRunnerOptions o = test_options (FALSE);
  PrefetchTrace *t = g_new0 (PrefetchTrace, 1);
  SimRunnerResult r;
  o.trace = prefetch_trace;
  o.trace_user = t;
  g_autoptr (GError) error = NULL;
  gboolean ok = sim_runner_run (&w->s, &w->p, &w->g, &w->c, &w->f, &w->cp, &o, &r, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  int n = 0;
  for (int i = 0; i < t->n_ag; i++)
    for (int j = 0; j < t->n_c; j++)
      if (MIN (t->ag_end[i], t->c_end[j]) > MAX (t->ag_start[i], t->c_start[j]))
        {
          n++;
          break;
        }
  *n_gathers = t->n_ag;
  g_free (t);
  return n;
}

/* DeepSpeed 0.3's blocking fetch prefetches the next matrix beside a module's compute while the
 * gathered elements stay under stage3_max_live_parameters (1e9). Small GPT (L = 4, h = 1024), dp 2,
 * m = 2, no recompute: per micro-batch a forward and a backward slot, each gathering the embedding
 * in 4 pieces first (blocking) and 4L matrices, all prefetched but the slot's first: 2·(4L − 1) of
 * 2·(4 + 4L) gathers beside compute. At h = 16384 (qkv 8.05e8, dense 2.68e8, each MLP matrix
 * 1.07e9 elements) no prefetch follows an MLP matrix: the forward prefetches dense and h→4h of
 * each layer (2L), the backward qkv of each layer (dense's prefetch) and 4h→h of all but the
 * slot's first (qkv's): 2L − 1. */
static void
test_zero3_prefetch (void)
{
  World w;
  int L = 4, m = 2, n;
  fast_world (&w, L);
  plan_of (&w.p, 1, 1, 1, 1, 2, m);
  w.p.zero = 3;
  w.p.zero3_blocking = TRUE;
  w.p.dp_overlap = TRUE;
  cluster_of (&w.c, &w.f, &w.cp, 2, 2, 100e9, TRUE);
  int small = prefetch_overlapped (&w, &n);
  g_test_message ("h 1024: %d of %d gathers beside compute", small, n);
  g_assert_cmpint (n, ==, m * 2 * (4 + 4 * L));
  g_assert_cmpint (small, ==, m * 2 * (4 * L - 1));
  /* Megatron's dp_overlap has no say in DeepSpeed's reductions (on the compute stream): the same
   * step without it (it used to deadlock: the reductions deferred past the backward that waited for
   * them). */
  w.p.dp_overlap = FALSE;
  g_assert_cmpint (prefetch_overlapped (&w, &n), ==, small);
  w.p.dp_overlap = TRUE;
  w.s.hidden = 16384;
  w.s.heads = 128;
  w.s.ffn_hidden = 4 * 16384;
  w.g.hbm_bytes = 1e12; /* what it takes at dp 2; the memory model is not under test */
  g_autoptr (GError) error = NULL;
  g_assert_true (model_shape_finish (&w.s, &error));
  int large = prefetch_overlapped (&w, &n);
  g_test_message ("h 16384: %d of %d gathers beside compute", large, n);
  g_assert_cmpint (n, ==, m * 2 * (4 + 4 * L));
  g_assert_cmpint (large, ==, m * (2 * L + 2 * L - 1));
}

/* Every valid combination of framework, ZeRO stage, DeepSpeed 0.3's blocking fetch, DP overlap,
 * recompute, pipeline and tensor parallelism and micro-batch count builds a task graph the
 * simulator runs to its end: none stalls (a stall is a cycle in the graph; zero3_blocking with
 * dp_overlap off used to be one). Small GPT (L = 4) on 8 GPUs in 2 domains, so DP crosses the
 * network; a combination model_plan_validate refuses is skipped, and there must be many of the
 * others. */
static void
test_plan_combinations (void)
{
  World w;
  fast_world (&w, 4);
  w.g.hbm_bytes = 1e12;
  cluster_of (&w.c, &w.f, &w.cp, 8, 4, 100e9, TRUE);
  const ModelRecompute rcs[] = { MODEL_RECOMPUTE_NONE, MODEL_RECOMPUTE_SELECTIVE, MODEL_RECOMPUTE_FULL };
  int ran = 0, refused = 0;
  for (int fw = 0; fw < MODEL_FW_COUNT; fw++)
    for (int z = 0; z <= 3; z++)
      for (int bits = 0; bits < 4; bits++)
        for (gsize rc = 0; rc < G_N_ELEMENTS (rcs); rc++)
          for (int pp = 1; pp <= 2; pp++)
            for (int tp = 1; tp <= 2; tp++)
              for (int m = 1; m <= 2; m++)
                {
                  plan_of (&w.p, tp, pp, 1, 1, 8 / (tp * pp), m * pp);
                  w.p.framework = (ModelFramework) fw;
                  w.p.zero = z;
                  w.p.zero3_blocking = (bits & 1) != 0;
                  w.p.dp_overlap = (bits & 2) != 0;
                  w.p.recompute = rcs[rc];
                  g_autoptr (GError) invalid = NULL;
                  if (!model_plan_validate (&w.p, &w.s, &invalid))
                    {
                      refused++;
                      continue;
                    }
                  SimRunnerOptions o = test_options (FALSE);
                  SimRunnerResult r;
                  g_autoptr (GError) error = NULL;
                  gboolean ok = sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &o, &r, &error);
                  if (!ok)
                    g_error ("framework %d zero %d blocking %d dp_overlap %d recompute %d pp %d tp %d m %d: %s", fw, z,
                             bits & 1, bits >> 1, (int) rcs[rc], pp, tp, m * pp, error->message);
                  g_assert_cmpint (r.step_ns, >, 0);
                  ran++;
                }
  g_test_message ("%d combinations ran, %d refused by the plan's rules", ran, refused);
  g_assert_cmpint (ran, >, refused);
  /* Then 3,000 drawn (a fixed seed) from a wider space: interleaved and DualPipe pipelines, context
   * and expert parallelism (a MoE shape of 4 experts, top 2), TP overlap, blocking pipeline sends,
   * no sequence parallelism, FP8 with delayed scaling. */
  ModelShape dense = w.s, moe = w.s;
  moe.moe_experts = 4, moe.moe_top_k = 2, moe.moe_ffn_hidden = 1024;
  g_autoptr (GError) shape_error = NULL;
  g_assert_true (model_shape_finish (&moe, &shape_error));
  g_autoptr (GRand) rand = g_rand_new_with_seed (20261127);
  int ran2 = 0, ran_moe = 0, ran_dualpipe = 0;
  for (int i = 0; i < 3000; i++)
    {
      int pp = g_rand_int_range (rand, 1, 3), tp = g_rand_int_range (rand, 1, 3), cp = g_rand_int_range (rand, 1, 3);
      int vpp = pp > 1 ? g_rand_int_range (rand, 1, 3) : 1, m = g_rand_int_range (rand, 1, 3);
      if (8 % (tp * pp * cp) != 0)
        continue;
      plan_of (&w.p, tp, pp, vpp, cp, 8 / (tp * pp * cp), m * pp);
      w.p.framework = (ModelFramework) g_rand_int_range (rand, 0, MODEL_FW_COUNT);
      w.p.zero = g_rand_int_range (rand, 0, 4);
      w.p.zero3_blocking = g_rand_boolean (rand);
      w.p.dp_overlap = g_rand_boolean (rand);
      w.p.tp_comm_overlap = g_rand_boolean (rand);
      w.p.pp_blocking = g_rand_boolean (rand);
      w.p.sp = tp > 1 && g_rand_boolean (rand);
      w.p.recompute = rcs[g_rand_int_range (rand, 0, G_N_ELEMENTS (rcs))];
      if (g_rand_boolean (rand))
        {
          w.p.matmul_dtype = MODEL_DTYPE_FP8;
          w.p.fp8_scaling = MODEL_FP8_DELAYED;
        }
      w.s = g_rand_int_range (rand, 0, 3) == 0 ? moe : dense;
      if (w.s.moe_experts > 0)
        w.p.ep = 1 << g_rand_int_range (rand, 0, 3);
      if (pp == 2 && vpp == 2 && g_rand_int_range (rand, 0, 3) == 0)
        w.p.schedule = MODEL_SCHED_DUALPIPE;
      g_autoptr (GError) invalid = NULL;
      if (!model_plan_validate (&w.p, &w.s, &invalid))
        continue;
      SimRunnerOptions o = test_options (FALSE);
      SimRunnerResult r;
      g_autoptr (GError) error = NULL;
      if (!sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &o, &r, &error))
        g_error ("draw %d (framework %d zero %d tp %d pp %d vpp %d cp %d ep %d experts %d schedule %d): %s", i,
                 (int) w.p.framework, w.p.zero, tp, pp, vpp, cp, w.p.ep, w.s.moe_experts, (int) w.p.schedule,
                 error->message);
      ran2++;
      ran_moe += w.s.moe_experts > 0 && w.p.ep > 1;
      ran_dualpipe += w.p.schedule == MODEL_SCHED_DUALPIPE;
    }
  g_test_message ("%d drawn combinations ran, %d with expert parallelism, %d DualPipe", ran2, ran_moe, ran_dualpipe);
  g_assert_cmpint (ran2, >, 500);
  g_assert_cmpint (ran_moe, >, 50);
  g_assert_cmpint (ran_dualpipe, >, 20);
}

/* Rank 0's DP-stream and compute intervals, from the trace hook. */
typedef struct { gint64 dp_start[64], dp_end[64]; int n_dp; gint64 first_compute; } OpgTrace;

static void
opg_trace (gpointer user, const SimRunnerTraceEvent *ev)
{
  OpgTrace *t = user;
  if (ev->rank != 0)
    return;
  if (strcmp (ev->stream_name, "dp") == 0 && t->n_dp < 64)
    {
      t->dp_start[t->n_dp] = ev->start_ns;
      t->dp_end[t->n_dp++] = ev->end_ns;
    }
  else if (strcmp (ev->stream_name, "compute") == 0 && ev->end_ns > ev->start_ns
           && (t->first_compute < 0 || ev->start_ns < t->first_compute))
    t->first_compute = ev->start_ns;
}

/* Megatron's --overlap-param-gather: DP 16 on two nodes, zero 1, one micro-batch, the small GPT
 * with L = 8. Parameters P = 8·(12h² + 2h) + (V + 1024)·h + h = 134,497,280 (h = 1024,
 * V = 32,000), gathered in bf16: 268,994,560 B in buckets of max(16 MiB, 40e6 params · 2 B) =
 * 80e6 B: 4 buckets, issued at step start. The first holds the embedding (67.6 MB) and is needed
 * by the first forward op; the others start at 80, 160 and 240 MB, i.e. in layers 0, 3 and 6
 * (25.2 MB per layer after the embedding). So compute waits for bucket 0 only and the forward of
 * the first layers overlaps the gathers of buckets 1..3: the first compute starts after bucket 0
 * ends but before bucket 3 ends. (Waiting for the whole chunk, it would start after all four.) */
static void
test_overlap_param_gather (void)
{
  World w;
  dp16_world (&w);
  w.p.dp_overlap = TRUE;
  cluster_of (&w.c, &w.f, &w.cp, 16, 8, 450e9, TRUE);
  SimRunnerOptions o = test_options (FALSE);
  OpgTrace t = { .first_compute = -1 };
  o.trace = opg_trace;
  o.trace_user = &t;
  SimRunnerResult r;
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &o, &r, &error));
  g_assert_no_error (error);
  /* 4 gathers at step start, then the gradient reduce-scatters after the backward */
  g_assert_cmpint (t.n_dp, >=, 5);
  g_assert_cmpint (t.dp_start[0], ==, 0);
  g_test_message ("bucket ends %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT ", first compute %" G_GINT64_FORMAT,
                  t.dp_end[0], t.dp_end[3], t.first_compute);
  g_assert_cmpint (t.first_compute, >=, t.dp_end[0]);
  g_assert_cmpint (t.first_compute, <, t.dp_end[3]);
  g_assert_cmpint (t.dp_start[4], >=, t.dp_end[3]);
}

/* FP8 parameter all-gather (Megatron-Core --fp8-param-gather): the DP16 world of
 * test_overlap_param_gather with FP8 matmuls. Its bf16 gathers carry 268,994,560 B (P = 134,497,280
 * parameters × 2 B); the 8 layers' GEMM weights, 8 · 12h² = 100,663,296 (qkv 3h², proj h², fc1 and fc2
 * 4h² each, h = 1024), travel at 1 byte instead: 168,331,264 B. The optimizer phase then casts the
 * FP32 shard (W/16) and transposes the gathered FP8 weights instead of casting all of W from bf16. */
typedef struct { double ag; gboolean shard_cast, transpose, weight_cast; } AgTrace;

static void
ag_trace (gpointer user, const SimRunnerTraceEvent *ev)
{
  AgTrace *t = user;
  if (ev->rank != 0 || !ev->name)
    return;
  if (strcmp (ev->name, "dp_param_ag") == 0)
    t->ag += ev->bytes;
  t->shard_cast |= strcmp (ev->name, "fp8_param_shard_cast") == 0;
  t->transpose |= strcmp (ev->name, "fp8_weight_transpose") == 0;
  t->weight_cast |= strcmp (ev->name, "fp8_weight_cast") == 0;
}

static AgTrace
run_ag (const World *w)
{
  SimRunnerOptions o = test_options (FALSE);
  AgTrace t = { 0 };
  o.trace = ag_trace;
  o.trace_user = &t;
  SimRunnerResult r;
  g_autoptr (GError) error = NULL;
  g_assert_true (sim_runner_run (&w->s, &w->p, &w->g, &w->c, &w->f, &w->cp, &o, &r, &error));
  g_assert_no_error (error);
  return t;
}

static void
test_fp8_param_gather (void)
{
  World w;
  dp16_world (&w);
  w.p.dp_overlap = TRUE;
  w.p.matmul_dtype = MODEL_DTYPE_FP8;
  cluster_of (&w.c, &w.f, &w.cp, 16, 8, 450e9, TRUE);
  AgTrace bf16 = run_ag (&w);
  g_assert_cmpfloat (bf16.ag, ==, 268994560.0);
  g_assert_true (bf16.weight_cast && !bf16.shard_cast && !bf16.transpose);
  w.p.fp8_param_gather = TRUE;
  g_autoptr (GError) error = NULL;
  g_assert_true (model_plan_validate (&w.p, &w.s, &error));
  AgTrace fp8 = run_ag (&w);
  g_assert_cmpfloat (fp8.ag, ==, 168331264.0);
  g_assert_true (!fp8.weight_cast && fp8.shard_cast && fp8.transpose);
  /* It needs FP8 matmuls and the distributed optimizer. */
  w.p.zero = 0;
  g_assert_false (model_plan_validate (&w.p, &w.s, &error));
  g_assert_nonnull (strstr (error->message, "fp8_param_gather"));
  g_clear_error (&error);
  w.p.zero = 1;
  w.p.matmul_dtype = MODEL_DTYPE_BF16;
  g_assert_false (model_plan_validate (&w.p, &w.s, &error));
  g_assert_nonnull (strstr (error->message, "matmul_dtype = fp8"));
  g_clear_error (&error);
  /* Dense models only: a MoE shape is refused, not silently mis-sharded. */
  w.p.matmul_dtype = MODEL_DTYPE_FP8;
  ModelShape moe = w.s;
  moe.moe_experts = 8, moe.moe_top_k = 2, moe.moe_ffn_hidden = 4096;
  g_assert_false (model_plan_validate (&w.p, &moe, &error));
  g_assert_nonnull (strstr (error->message, "dense models only"));
}

/* The expert all-to-all under DeepEP's dispatcher: EP 4 over 2 NVLink domains of 2 GPUs, top-4 of 8
 * experts. One copy per target node: 2·(1 − (1/2)^4) = 1.875 of the 4 copies (model/layer.h), so the
 * EP streams move 0.47 of the bytes; routing limited to 1 node: 1 copy, 0.25. All four GPUs in one
 * domain: nothing to deduplicate, the same step as the all-to-all dispatcher. */
static SimRunnerResult
run_moe (World *w, ModelMoeDispatcher d, int node_limit, int per_node)
{
  w->p.moe_dispatcher = d;
  w->s.moe_node_limit = node_limit;
  cluster_of (&w->c, &w->f, &w->cp, w->p.gpus, per_node, 450e9, FALSE);
  return world_run (w, FALSE);
}

static void
test_moe_dispatcher (void)
{
  World w;
  fast_world (&w, 2);
  w.s.moe_experts = 8, w.s.moe_top_k = 4, w.s.moe_ffn_hidden = 1024;
  plan_of (&w.p, 1, 1, 1, 1, 4, 2);
  w.p.ep = 4;
  double a2a = run_moe (&w, MODEL_MOE_DISPATCH_ALLTOALL, 0, 2).comm_busy_s[SIM_BD_EP];
  double deepep = run_moe (&w, MODEL_MOE_DISPATCH_DEEPEP, 0, 2).comm_busy_s[SIM_BD_EP];
  double limited = run_moe (&w, MODEL_MOE_DISPATCH_DEEPEP, 1, 2).comm_busy_s[SIM_BD_EP];
  g_test_message ("EP busy: all-to-all %.9f s, DeepEP %.9f s, DeepEP one node %.9f s", a2a, deepep, limited);
  g_assert_cmpfloat (fabs (deepep / a2a - 1.875 / 4), <, 0.02);
  g_assert_cmpfloat (fabs (limited / a2a - 0.25), <, 0.02);
  g_assert_cmpint (run_moe (&w, MODEL_MOE_DISPATCH_DEEPEP, 1, 4).step_ns, ==,
                   run_moe (&w, MODEL_MOE_DISPATCH_ALLTOALL, 0, 4).step_ns);
}

/* DualPipe (model/schedule.h). With no communication cost its bubble is the schedule's own: at
 * most the paper's (p/2 − 1)(F&B + B − 3W) per rank with a pair taking F + B (arXiv 2412.19437
 * Table 2), taken here with W = 0 (its weight-gradient split only shortens it), well under 1F1B's
 * (p − 1)(F + B); F and B are one chunk's forward and backward.
 * Rank s holds two chunks (the two pipeline copies: the weights of 1F1B's stages s and p − 1 − s) and at
 * most p + 1 chunks of activations. With all-to-alls that cost time, the paired slots hide them:
 * less exposed EP communication than 1F1B on the same plan. Representatives equal --full. */
static void
test_dualpipe (void)
{
  World w;
  ideal_gpu (&w.g);
  for (int pp = 2; pp <= 8; pp *= 2)
    {
      int m = 4 * pp;
      small_gpt (&w.s, pp * 2, 128);
      plan_of (&w.p, 1, pp, 1, 1, 1, m);
      cluster_of (&w.c, &w.f, &w.cp, w.p.gpus, MIN (w.p.gpus, 8), 1e18, FALSE);
      SimRunnerResult one = world_run (&w, FALSE);
      w.p.schedule = MODEL_SCHED_DUALPIPE;
      w.p.vpp = 2;
      SimRunnerResult dual = world_run (&w, FALSE);
      /* Per chunk (one stage of layers, the embedding and head small at vocabulary 128). */
      double chunk = dual.breakdown_s[SIM_BD_COMPUTE] / m;
      double f = chunk / 3.0, b = 2.0 * chunk / 3.0; /* backward ≈ 2 × forward (GEMMs dgrad + wgrad) */
      double paper = (pp / 2 - 1) * (f + 2 * b), onef1b = (pp - 1) * chunk;
      g_test_message ("dualpipe pp %d m %d: bubble %.6f s (paper %.6f, 1F1B %.6f; 1F1B ran %.6f), step %.6f vs %.6f",
                      pp, m, dual.breakdown_s[SIM_BD_BUBBLE], paper, onef1b, one.breakdown_s[SIM_BD_BUBBLE],
                      dual.step_ns / 1e9, one.step_ns / 1e9);
      g_assert_cmpfloat (dual.breakdown_s[SIM_BD_BUBBLE], <=, paper * 1.05 + 1e-9);
      g_assert_cmpfloat (dual.breakdown_s[SIM_BD_BUBBLE], <, one.breakdown_s[SIM_BD_BUBBLE] * 0.75 + 1e-12);
      g_assert_cmpint (dual.step_ns, <, one.step_ns);
      /* The same work: each micro-batch passes one copy's chunks. */
      g_assert_cmpfloat (fabs (dual.model_flops_per_step / one.model_flops_per_step - 1.0), <, 1e-12);
      g_assert_cmpfloat (fabs (dual.hardware_flops_per_step / one.hardware_flops_per_step - 1.0), <, 1e-12);
      /* Two copies of the parameters; activations of at most pp + 1 chunks at once. */
      ModelMemory m1, m1r, m2;
      ModelPlan p1 = w.p;
      p1.schedule = MODEL_SCHED_1F1B;
      p1.vpp = 1;
      model_memory_rank (&w.s, &p1, 0, 0, &m1);
      model_memory_rank (&w.s, &p1, pp - 1, 0, &m1r);
      model_memory_rank (&w.s, &w.p, 0, 0, &m2);
      g_assert_cmpfloat (fabs (m2.weights_bytes - m1.weights_bytes - m1r.weights_bytes), <, 1.0);
      g_assert_cmpfloat (model_memory_layers_in_flight (&w.s, &w.p, 0), <=, (pp + 1) * 2.0);
      g_assert_cmpint (world_run (&w, TRUE).step_ns, ==, dual.step_ns);
    }
  /* An MoE with costly all-to-alls: 16 experts, top 4, EP 4 over NICs of two GPUs per node. */
  fast_world (&w, 8);
  w.s.moe_experts = 16, w.s.moe_top_k = 4, w.s.moe_ffn_hidden = 1024;
  plan_of (&w.p, 1, 4, 1, 1, 4, 16);
  w.p.ep = 4;
  cluster_of (&w.c, &w.f, &w.cp, w.p.gpus, 2, 450e9, TRUE);
  w.c.nic_bw_bytes_per_s = 25e9;
  SimRunnerResult one = world_run (&w, FALSE);
  w.p.schedule = MODEL_SCHED_DUALPIPE;
  w.p.vpp = 2;
  SimRunnerResult dual = world_run (&w, FALSE);
  g_test_message ("MoE: exposed EP 1F1B %.6f s, DualPipe %.6f s (EP busy %.6f / %.6f); step %.6f / %.6f; compute %.6f",
                  one.breakdown_s[SIM_BD_EP], dual.breakdown_s[SIM_BD_EP], one.comm_busy_s[SIM_BD_EP],
                  dual.comm_busy_s[SIM_BD_EP], one.step_ns / 1e9, dual.step_ns / 1e9, dual.breakdown_s[SIM_BD_COMPUTE]);
  g_assert_cmpfloat (dual.comm_busy_s[SIM_BD_EP], >, 0);
  g_assert_cmpfloat (dual.breakdown_s[SIM_BD_EP], <, 0.75 * one.breakdown_s[SIM_BD_EP]);
  g_assert_cmpint (dual.step_ns, <, one.step_ns);
  g_assert_cmpint (world_run (&w, TRUE).step_ns, ==, dual.step_ns);
}

/* Plans the runner must refuse: micro-batches not a multiple of pp under interleaving, and a plan
 * whose GPU count disagrees with the cluster. */
static void
test_invalid (void)
{
  World w;
  ideal_gpu (&w.g);
  small_gpt (&w.s, 8, 32000);
  plan_of (&w.p, 1, 4, 2, 1, 1, 6);
  cluster_of (&w.c, &w.f, &w.cp, 4, 4, 450e9, FALSE);
  SimRunnerResult r;
  GError *error = NULL;
  g_assert_false (sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, NULL, &r, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_clear_error (&error);
  plan_of (&w.p, 1, 4, 1, 1, 1, 6);
  cluster_of (&w.c, &w.f, &w.cp, 8, 8, 450e9, FALSE);
  g_assert_false (sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, NULL, &r, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
}

/* A plan whose model states alone exceed the GPU is refused with MODEL_ERROR_OUT_OF_MEMORY: 59 M
 * parameters × 16 B (bf16 weights, fp32 grads, fp32 master + Adam m, v) = 0.94 GB > 0.5 GB; the
 * same plan with 80 GB runs. */
static void
test_memory (void)
{
  World w;
  ideal_gpu (&w.g);
  small_gpt (&w.s, 2, 32000);
  plan_of (&w.p, 1, 1, 1, 1, 2, 1);
  cluster_of (&w.c, &w.f, &w.cp, 2, 2, 100e9, FALSE);
  SimRunnerOptions o = test_options (FALSE);
  SimRunnerResult r;
  GError *error = NULL;
  w.g.hbm_bytes = 0.5e9;
  g_assert_false (sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &o, &r, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);
  w.g.hbm_bytes = 80e9;
  g_assert_true (sim_runner_run (&w.s, &w.p, &w.g, &w.c, &w.f, &w.cp, &o, &r, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (r.memory_bytes, >, 0.94e9);
  g_assert_cmpfloat (r.memory_bytes, <, 80e9);
}

/* Rank 0's executed ops, in the order they end (the trace hook). */
typedef struct {
  const char *name, *stream;
  gint64 start, end;
} FwEvent;

static void
fw_trace (gpointer user, const SimRunnerTraceEvent *ev)
{
  if (ev->rank != 0)
    return;
  FwEvent e = { ev->name ? ev->name : "", ev->stream_name, ev->start_ns, ev->end_ns };
  g_array_append_val ((GArray *) user, e);
}

static GArray *
fw_run (const World *w, SimRunnerResult *r)
{
  GArray *ev = g_array_new (FALSE, FALSE, sizeof (FwEvent));
  SimRunnerOptions o = test_options (FALSE);
  o.trace = fw_trace;
  o.trace_user = ev;
  g_autoptr (GError) error = NULL;
  gboolean ok = sim_runner_run (&w->s, &w->p, &w->g, &w->c, &w->f, &w->cp, &o, r, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  return ev;
}

static gboolean
is_dp_reduce (const FwEvent *e)
{
  return strcmp (e->name, "dp_grad_rs") == 0 || strcmp (e->name, "dp_grad_ar") == 0;
}

/* What the trace shows of a framework's DP schedule on a pp 1 world: the slots run F0 B0 F1 B1 ...
 * (1F1B on one stage), each opening with its zero-length slot_entry. */
typedef struct {
  int reduces[8];          /* DP gradient reductions starting in micro-batch j's backward */
  int reduces_total, gathers, param_ags;
  int reduce_beside_compute; /* reductions that overlap a kernel of the compute stream */
  gint64 first_reduce, last_reduce_end[8], fwd_entry[8], last_bwd_end;
} FwCount;

static FwCount
fw_count (const World *w, SimRunnerResult *r)
{
  g_autoptr (GArray) ev = fw_run (w, r);
  FwEvent *e = (FwEvent *) ev->data;
  int m = model_plan_microbatches (&w->p);
  g_assert_cmpint (m, <=, 8);
  gint64 entry[16];
  int n_entry = 0;
  gint64 synced = -1;
  for (guint i = 0; i < ev->len; i++)
    if (strcmp (e[i].name, "slot_entry") == 0)
      {
        g_assert_cmpint (n_entry, <, 16);
        entry[n_entry++] = e[i].start;
      }
    else if (strcmp (e[i].name, "grads_synced") == 0)
      synced = e[i].start;
  g_assert_cmpint (n_entry, ==, 2 * m);
  FwCount k = { .first_reduce = G_MAXINT64 };
  for (int j = 0; j < m; j++)
    k.fwd_entry[j] = entry[2 * j];
  for (guint i = 0; i < ev->len; i++)
    {
      if (strcmp (e[i].stream, "compute") == 0 && e[i].end > e[i].start && e[i].start < synced)
        k.last_bwd_end = MAX (k.last_bwd_end, e[i].end);
      if (strcmp (e[i].name, "zero3_param_ag") == 0)
        k.gathers++;
      if (strcmp (e[i].name, "dp_param_ag") == 0)
        k.param_ags++;
      if (!is_dp_reduce (&e[i]))
        continue;
      k.reduces_total++;
      k.first_reduce = MIN (k.first_reduce, e[i].start);
      for (int j = 0; j < m; j++)
        if (e[i].start >= entry[2 * j + 1] && (j == m - 1 || e[i].start < entry[2 * j + 2]))
          {
            k.reduces[j]++;
            k.last_reduce_end[j] = MAX (k.last_reduce_end[j], e[i].end);
          }
      for (guint q = 0; q < ev->len; q++)
        if (strcmp (e[q].stream, "compute") == 0 && e[q].end > e[q].start && e[q].start < e[i].end
            && e[q].end > e[i].start)
          {
            k.reduce_beside_compute++;
            break;
          }
    }
  return k;
}

/* Framework semantics (model/framework.c) counted in a trace: the small GPT with L = 8 layers on
 * two GPUs (dp 2), m = 3 micro-batches, fast NVLink (450 GB/s) so each reduction starts in the
 * backward that issues it. Gradients of a layer: 12h² + 2h = 12.6 M fp32 = 50 MB; all of them,
 * embedding included, 134.5 M parameters.
 *   megatron zero 1 (dp_overlap): buckets of max(40 MiB, 40e6 · 4 B) = 160 MB, every 4 layers, only
 *     in the last micro-batch's backward, and beside it (the first starts before it ends); the
 *     updated parameters' all-gather at the next step's start. zero 2 is the same schedule.
 *   deepspeed zero 1: after the last backward (nothing beside compute); zero 2: one 5e8-element
 *     bucket flushed at the end of every micro-batch's backward, on the compute stream (no kernel
 *     runs beside it); both with the all-gather after the optimizer.
 *   fsdp2 and composer zero 3: every micro-batch's backward reduce-scatters each layer and then the
 *     embedding (L + 1), and the next forward waits for them; gathers per micro-batch: each layer
 *     before its forward and its backward, the (tied) embedding before the forward only (kept
 *     through the backward): 2L + 1, also with full recompute (the backward's gather serves the
 *     recompute), where megatron gathers 3L + 2. zero 2 (kept after forward): L + 1 per micro-batch.
 *   fsdp2 zero 0 all-reduces each layer every micro-batch; composer zero 0 (DDP) only in the last. */
static void
test_framework (void)
{
  World w;
  int L = 8, m = 3;
  fast_world (&w, L);
  plan_of (&w.p, 1, 1, 1, 1, 2, m);
  cluster_of (&w.c, &w.f, &w.cp, 2, 2, 450e9, TRUE);
  SimRunnerResult r;

  w.p.zero = 1;
  w.p.dp_overlap = TRUE;
  FwCount mg = fw_count (&w, &r);
  g_test_message ("megatron zero 1: reductions %d %d %d, first at %" G_GINT64_FORMAT
                  ", backward ends %" G_GINT64_FORMAT,
                  mg.reduces[0], mg.reduces[1], mg.reduces[2], mg.first_reduce, mg.last_bwd_end);
  g_assert_cmpint (mg.reduces[0], ==, 0);
  g_assert_cmpint (mg.reduces[1], ==, 0);
  g_assert_cmpint (mg.reduces[2], ==, 3);   /* layers 8..5, 4..1, then the embedding */
  g_assert_cmpint (mg.reduces_total, ==, 3);
  g_assert_cmpint (mg.first_reduce, <, mg.last_bwd_end);
  g_assert_cmpint (mg.reduce_beside_compute, >, 0);
  g_assert_cmpint (mg.param_ags, >, 0);
  w.p.zero = 2;
  FwCount mg2 = fw_count (&w, &r);
  g_assert_cmpint (mg2.reduces_total, ==, 3);
  g_assert_cmpint (mg2.reduces[2], ==, 3);
  g_assert_cmpint (mg2.first_reduce, ==, mg.first_reduce);

  w.p.framework = MODEL_FW_NEMO;
  FwCount ne = fw_count (&w, &r);
  g_assert_cmpint (ne.first_reduce, ==, mg.first_reduce);
  g_assert_cmpint (ne.reduces_total, ==, mg.reduces_total);

  w.p.framework = MODEL_FW_DEEPSPEED;
  w.p.zero = 1;
  FwCount d1 = fw_count (&w, &r);
  g_assert_cmpint (d1.reduces_total, ==, 1);
  g_assert_cmpint (d1.reduces[2], ==, 1);
  g_assert_cmpint (d1.first_reduce, >=, d1.last_bwd_end);
  g_assert_cmpint (d1.reduce_beside_compute, ==, 0);
  g_assert_cmpint (d1.param_ags, ==, 1);
  w.p.zero = 2;
  FwCount d2 = fw_count (&w, &r);
  for (int j = 0; j < m; j++)
    g_assert_cmpint (d2.reduces[j], ==, 1);
  g_assert_cmpint (d2.reduce_beside_compute, ==, 0);
  g_assert_cmpint (d2.first_reduce, <, mg.first_reduce);

  int per_bwd = L + 1;
  for (int fw = MODEL_FW_FSDP2; fw <= MODEL_FW_COMPOSER; fw++)
    {
      w.p.framework = (ModelFramework) fw;
      w.p.zero = 3;
      w.p.recompute = MODEL_RECOMPUTE_NONE;
      FwCount f3 = fw_count (&w, &r);
      g_test_message ("%s zero 3: reductions %d %d %d, gathers %d", fw == MODEL_FW_FSDP2 ? "fsdp2" : "composer",
                      f3.reduces[0], f3.reduces[1], f3.reduces[2], f3.gathers);
      for (int j = 0; j < m; j++)
        g_assert_cmpint (f3.reduces[j], ==, per_bwd);
      for (int j = 0; j + 1 < m; j++)
        g_assert_cmpint (f3.fwd_entry[j + 1], >=, f3.last_reduce_end[j]);
      g_assert_cmpint (f3.reduce_beside_compute, >, 0);
      g_assert_cmpint (f3.gathers, ==, m * (2 * L + 1));
      g_assert_cmpint (f3.param_ags, ==, 0);
      w.p.recompute = MODEL_RECOMPUTE_FULL;
      FwCount f3r = fw_count (&w, &r);
      g_assert_cmpint (f3r.gathers, ==, m * (2 * L + 1));
      w.p.recompute = MODEL_RECOMPUTE_NONE;
      w.p.zero = 2;
      FwCount f2 = fw_count (&w, &r);
      for (int j = 0; j < m; j++)
        g_assert_cmpint (f2.reduces[j], ==, per_bwd);
      g_assert_cmpint (f2.gathers, ==, m * (L + 1));
      w.p.zero = 0;
      FwCount f0 = fw_count (&w, &r);
      g_assert_cmpint (f0.gathers, ==, 0);
      if (fw == MODEL_FW_FSDP2)
        for (int j = 0; j < m; j++)
          g_assert_cmpint (f0.reduces[j], ==, per_bwd);
      else
        g_assert_cmpint (f0.reduces[0] + f0.reduces[1], ==, 0);
    }
  w.p.framework = MODEL_FW_MEGATRON;
  w.p.zero = 3;
  w.p.recompute = MODEL_RECOMPUTE_FULL;
  FwCount m3 = fw_count (&w, &r);
  g_assert_cmpint (m3.gathers, ==, m * (3 * L + 2));

  /* What the frameworks do not offer is refused. */
  GError *error = NULL;
  w.p.recompute = MODEL_RECOMPUTE_NONE;
  w.p.framework = MODEL_FW_FSDP2;
  w.p.zero = 1;
  g_assert_false (model_plan_validate (&w.p, &w.s, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_assert_nonnull (strstr (error->message, "zero 1"));
  g_clear_error (&error);
}

/* Under pipeline parallelism (pp 2, L = 16, dp 2, m = 4), stage 0: megatron zero 1 reduces in the
 * last micro-batch's backward only (dp_overlap: beside it, the first 160 MB bucket after 4 of the
 * stage's 8 layers); fsdp2 reduce-scatters each of its 8 layers and the embedding once, after the
 * stage's last backward (torch pipelining's perform_reduce_grad); zero 2 (kept after forward, and
 * after backward under pipelining) gathers each unit once per step: 8 + 1. */
static void
test_framework_pipelined (void)
{
  World w;
  fast_world (&w, 16);
  plan_of (&w.p, 1, 2, 1, 1, 2, 4);
  cluster_of (&w.c, &w.f, &w.cp, 4, 4, 450e9, TRUE);
  w.p.dp_overlap = TRUE;
  w.p.framework = MODEL_FW_FSDP2;
  w.p.zero = 2;
  SimRunnerResult r;
  g_autoptr (GArray) ev = fw_run (&w, &r);
  const FwEvent *e = (const FwEvent *) ev->data;
  gint64 synced = -1, last_bwd_end = 0, first_reduce = G_MAXINT64;
  int reduces = 0, gathers = 0;
  for (guint i = 0; i < ev->len; i++)
    if (strcmp (e[i].name, "grads_synced") == 0)
      synced = e[i].start;
  for (guint i = 0; i < ev->len; i++)
    {
      if (strcmp (e[i].stream, "compute") == 0 && e[i].end > e[i].start && e[i].start < synced)
        last_bwd_end = MAX (last_bwd_end, e[i].end);
      gathers += strcmp (e[i].name, "zero3_param_ag") == 0;
      if (is_dp_reduce (&e[i]))
        {
          reduces++;
          first_reduce = MIN (first_reduce, e[i].start);
        }
    }
  g_test_message ("fsdp2 pp2 zero 2: %d reductions from %" G_GINT64_FORMAT " (backward ends %" G_GINT64_FORMAT
                  "), %d gathers", reduces, first_reduce, last_bwd_end, gathers);
  g_assert_cmpint (reduces, ==, 8 + 1);
  g_assert_cmpint (first_reduce, >=, last_bwd_end);
  g_assert_cmpint (gathers, ==, 8 + 1);
  w.p.framework = MODEL_FW_MEGATRON;
  w.p.zero = 1;
  g_autoptr (GArray) ev1 = fw_run (&w, &r);
  e = (const FwEvent *) ev1->data;
  first_reduce = G_MAXINT64, last_bwd_end = 0, synced = -1;
  for (guint i = 0; i < ev1->len; i++)
    if (strcmp (e[i].name, "grads_synced") == 0)
      synced = e[i].start;
  for (guint i = 0; i < ev1->len; i++)
    {
      if (strcmp (e[i].stream, "compute") == 0 && e[i].end > e[i].start && e[i].start < synced)
        last_bwd_end = MAX (last_bwd_end, e[i].end);
      if (is_dp_reduce (&e[i]))
        first_reduce = MIN (first_reduce, e[i].start);
    }
  g_assert_cmpint (first_reduce, <, last_bwd_end);
  /* DeepSpeed refuses ZeRO-2/3 with pipeline parallelism, Composer any pipeline. */
  GError *error = NULL;
  w.p.framework = MODEL_FW_DEEPSPEED;
  w.p.zero = 2;
  g_assert_false (model_plan_validate (&w.p, &w.s, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_clear_error (&error);
  w.p.framework = MODEL_FW_COMPOSER;
  w.p.zero = 3;
  g_assert_false (model_plan_validate (&w.p, &w.s, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_clear_error (&error);
}

/* Sensitivities (SimRunnerOptions.sensitivities): the step is the same with them on, and each
 * derivative matches a central difference of the step over a small step of its constant (0.1% of φ
 * = 1/scale, 0.1 µs of launch) on a world of pipeline bubbles, overlapped DP buckets, TP
 * collectives, memory-bound kernels and launch gaps. The difference is taken where the schedule does
 * not reorder: a sensitivity is the slope of a piecewise-linear step, exact on its piece. */
static SimRunnerResult
sens_run (const World *w, gboolean full, gboolean sens)
{
  SimRunnerOptions o = test_options (full);
  o.sensitivities = sens;
  return run_with (&w->s, &w->p, &w->g, &w->c, &w->f, &w->cp, &o);
}

/* φ of constant `dir` (1/gemm_insitu bf16, 1/mem_insitu, launch in µs), read or set. */
static double
sens_phi (const World *w, int dir)
{
  return dir == SIM_GPU_SENS_LAUNCH ? w->g.launch_ns / 1000.0
         : dir == SIM_GPU_SENS_MEM  ? 1.0 / w->g.mem_insitu
                                    : 1.0 / w->g.gemm_insitu[dir];
}

static void
sens_set_phi (World *w, int dir, double phi)
{
  if (dir == SIM_GPU_SENS_LAUNCH)
    w->g.launch_ns = (gint64) llround (phi * 1000.0);
  else if (dir == SIM_GPU_SENS_MEM)
    w->g.mem_insitu = 1.0 / phi;
  else
    w->g.gemm_insitu[dir] = 1.0 / phi;
}

static void
test_sensitivities (void)
{
  World w;
  fast_world (&w, 8);
  w.g.hbm_bw_bytes_per_s = 2e12;
  w.g.mem_eff = 0.8;
  w.g.mem_insitu = 0.7;
  w.g.gemm_insitu[MODEL_DTYPE_BF16] = 0.9;
  w.g.launch_ns = 3000;
  plan_of (&w.p, 2, 2, 1, 1, 2, 8);
  cluster_of (&w.c, &w.f, &w.cp, w.p.gpus, 4, 100e9, TRUE);
  static const int dirs[] = { MODEL_DTYPE_BF16, SIM_GPU_SENS_MEM, SIM_GPU_SENS_LAUNCH };
  for (int full = 0; full <= 1; full++)
    {
      SimRunnerResult plain = sens_run (&w, full, FALSE), r = sens_run (&w, full, TRUE);
      g_assert_cmpint (plain.step_ns, ==, r.step_ns);
      for (gsize k = 0; k < G_N_ELEMENTS (dirs); k++)
        {
          double phi = sens_phi (&w, dirs[k]), h = dirs[k] == SIM_GPU_SENS_LAUNCH ? 0.1 : 1e-3 * phi;
          World up = w, down = w;
          sens_set_phi (&up, dirs[k], phi + h);
          sens_set_phi (&down, dirs[k], phi - h);
          double fd = (double) (sens_run (&up, full, FALSE).step_ns - sens_run (&down, full, FALSE).step_ns) / (2 * h);
          double ad = r.step_sens[dirs[k]];
          g_test_message ("full %d, constant %d: sensitivity %.6g ns, central difference %.6g ns", full, dirs[k], ad,
                          fd);
          g_assert_cmpfloat (ad, >, 0);
          g_assert_cmpfloat (fabs (ad - fd), <=, 0.01 * fabs (fd) + 200);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/runner/two-gpu-dp", test_two_gpu_dp);
  g_test_add_func ("/sim/runner/symmetry", test_symmetry);
  g_test_add_func ("/sim/runner/tp-mirror", test_tp_mirror);
  g_test_add_func ("/sim/runner/bubble", test_bubble);
  g_test_add_func ("/sim/runner/tp", test_tp);
  g_test_add_func ("/sim/runner/tp-userbuffers", test_tp_userbuffers);
  g_test_add_func ("/sim/runner/fp8-amax-reduction", test_fp8_amax_reduction);
  g_test_add_func ("/sim/runner/fp8-amax-group", test_fp8_amax_group);
  g_test_add_func ("/sim/runner/nccl-ctas", test_nccl_ctas);
  g_test_add_func ("/sim/runner/moe-dispatcher", test_moe_dispatcher);
  g_test_add_func ("/sim/runner/pp-sends", test_pp_sends);
  g_test_add_func ("/sim/runner/grad-accum", test_grad_accum);
  g_test_add_func ("/sim/runner/dp", test_dp);
  g_test_add_func ("/sim/runner/zero3", test_zero3);
  g_test_add_func ("/sim/runner/zero3-prefetch", test_zero3_prefetch);
  g_test_add_func ("/sim/runner/plan-combinations", test_plan_combinations);
  g_test_add_func ("/sim/runner/overlap-param-gather", test_overlap_param_gather);
  g_test_add_func ("/sim/runner/fp8-param-gather", test_fp8_param_gather);
  g_test_add_func ("/sim/runner/dualpipe", test_dualpipe);
  g_test_add_func ("/sim/runner/invalid", test_invalid);
  g_test_add_func ("/sim/runner/memory", test_memory);
  g_test_add_func ("/sim/runner/framework", test_framework);
  g_test_add_func ("/sim/runner/framework-pipelined", test_framework_pipelined);
  g_test_add_func ("/sim/runner/sensitivities", test_sensitivities);
  return g_test_run ();
}
