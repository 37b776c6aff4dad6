/* Step FLOPs summed from the op lists against closed forms.
 *
 * Exact (relative 1e-12) where the conventions agree. Narayanan et al. 2021 eq. 3 and
 * Megatron-LM's eq. 7 count non-causal attention (s^2 pairs per sequence and head) where the op
 * lists count the causal s(s+1)/2; they otherwise agree exactly (both ignore norms, biases,
 * softmax), so the tests add that documented difference back and then require equality. */
#include <math.h>
#include "model/flops.h"
#include "model/op.h"
#include "tests/model-presets.h"

static void
assert_rel (double got, double want, double tol)
{
  if (!(fabs (got - want) <= tol * fabs (want)))
    g_error ("got %.17g want %.17g (rel %.3g > %.3g)", got, want, fabs (got - want) / fabs (want), tol);
}

static ModelShape
finished (ModelShape s)
{
  g_assert_true (model_shape_finish (&s, NULL));
  return s;
}

/* Brute force: causal pairs per CP rank with the 2*cp-chunk load balance equal s(s+1)/(2cp). */
static void
test_causal_pairs (void)
{
  for (int cp = 1; cp <= 4; cp++)
    for (int s = 2 * cp; s <= 64; s += 2 * cp)
      {
        gint64 c = s / (2 * cp);
        for (int r = 0; r < cp; r++)
          {
            gint64 pairs = 0;
            for (int q = 0; q < s; q++)
              {
                gint64 chunk = q / c;
                if (cp == 1 || chunk == r || chunk == 2 * cp - 1 - r)
                  pairs += q + 1;
              }
            if (cp == 1)
              g_assert_cmpint (pairs, ==, (gint64) s * (s + 1) / 2);
            g_assert_cmpint (model_op_causal_pairs (s, cp), ==, pairs);
          }
      }
}

/* GPT-3 175B, MLPerf v3.1 layout (TP4 PP8 VPP12 DP336, GBS 2688, SP): model FLOPs per step from the
 * op lists equal tokens * (6N + 6*l*a*d*(s+1)) with the vocab padded to a multiple of 128*4:
 * 50257 -> 99*512 = 50688. */
static void
test_gpt3_closed_form (void)
{
  ModelShape s = finished (preset_gpt3_175b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 4, p.pp = 8, p.vpp = 12, p.dp = 336, p.gpus = 10752;
  p.sp = TRUE, p.schedule = MODEL_SCHED_INTERLEAVED, p.global_batch = 2688;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  g_assert_cmpint (model_shape_padded_vocab (&s, 4), ==, 50688);
  double tokens = 2688.0 * 2048;
  double want = model_flops_closed_form (&s, 50688, tokens);
  assert_rel (model_flops_model_per_step (&s, &p), want, 1e-12);
  /* No activation recompute: hardware - model = the flash backward's recomputed scores, half a
   * forward attention: tokens * l * a * d * (s+1) (a third of the 6*l*a*d*(s+1) term, halved). */
  assert_rel (model_flops_hardware_per_step (&s, &p) - want, tokens * 96 * 96 * 128 * 2049.0, 1e-9);
  /* Sanity of the closed form itself: 6*N*tokens dominates; N = 96*12h^2 + V*h = 174.6e9-ish. */
  double n = 96.0 * 12 * 12288.0 * 12288 + 50688.0 * 12288;
  double attn = 6.0 * 96 * 12288 * 2049;
  assert_rel (want, tokens * (6 * n + attn), 1e-12);
}

/* Narayanan et al. 2021 Table 1, GPT 1.7B row: l 24, h 2304, a 24, s 2048, V 51200, B 512,
 * 32 GPUs (dp 32), mbs 16, full recompute. eq. 3 counts 4 forward passes of the layers: our
 * hardware FLOPs with full recompute, plus the non-causal attention excess 16*B*l*s^2*h minus our
 * causal 8*B*l*s*(s+1)*h, equal it exactly. */
static void
test_narayanan_eq3 (void)
{
  ModelShape s = finished (preset_gpt (24, 2304, 24, 2048));
  ModelPlan p;
  model_plan_init (&p);
  p.dp = 32, p.gpus = 32, p.micro_batch = 16, p.global_batch = 512;
  p.recompute = MODEL_RECOMPUTE_FULL;
  p.param_dtype = p.matmul_dtype = MODEL_DTYPE_FP16;
  p.unfused_attention = TRUE; /* 2021 Megatron: scores stored, no flash recomputation */
  g_assert_true (model_plan_validate (&p, &s, NULL));
  double B = 512, sl = 2048, l = 24, h = 2304, V = 51200;
  double eq3 = model_flops_narayanan_eq3 (B, sl, l, h, V);
  double ours = model_flops_hardware_per_step (&s, &p);
  assert_rel (ours - 8 * B * l * sl * (sl + 1) * h + 16 * B * l * sl * sl * h, eq3, 1e-12);
  /* The causal halving is the only difference: about 6% here (s/(12h) of 1 + s/6h + V/16lh). */
  assert_rel (ours, eq3, 0.07);
  /* The same with TP 8 and PP 4 (different sharding, same totals): 51200 is a multiple of 1024. */
  ModelShape s2 = finished (preset_gpt (40, 6144, 48, 2048));
  p.tp = 8, p.pp = 4, p.dp = 8, p.gpus = 256, p.micro_batch = 8, p.global_batch = 1024;
  p.sp = TRUE;
  g_assert_true (model_plan_validate (&p, &s2, NULL));
  B = 1024, l = 40, h = 6144;
  eq3 = model_flops_narayanan_eq3 (B, sl, l, h, V);
  ours = model_flops_hardware_per_step (&s2, &p);
  assert_rel (ours - 8 * B * l * sl * (sl + 1) * h + 16 * B * l * sl * sl * h, eq3, 1e-12);
}

/* Megatron-LM eq. 7 (model FLOPs, 3 passes): 175B-like GPT, s 2048, V 51200, TP8 PP8, no SP. */
static void
test_megatron_eq7 (void)
{
  ModelShape s = finished (preset_gpt (96, 12288, 96, 2048));
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 8, p.pp = 8, p.dp = 4, p.gpus = 256, p.global_batch = 64;
  p.recompute = MODEL_RECOMPUTE_SELECTIVE; /* recompute must not change model FLOPs */
  g_assert_true (model_plan_validate (&p, &s, NULL));
  double B = 64, sl = 2048, l = 96, h = 12288, V = 51200;
  double eq7 = model_flops_megatron_eq7 (B, sl, l, h, V);
  double ours = model_flops_model_per_step (&s, &p);
  assert_rel (ours - 6 * B * l * sl * (sl + 1) * h + 12 * B * l * sl * sl * h, eq7, 1e-12);
  /* Selective recompute adds exactly one attention forward: 2*B*l*s*(s+1)*h; the flash backward's
   * recomputed scores half of one more: B*l*s*(s+1)*h. */
  assert_rel (model_flops_hardware_per_step (&s, &p) - ours, 3 * B * l * sl * (sl + 1) * h, 1e-9);
}

/* Llama 3.1 405B, MLPerf v6.0 layout (TP4 PP8 VPP8 CP2 DP128, uneven 126-layer split, vocab
 * 32000): GQA, SwiGLU, CP load balance and the asymmetric split all preserve the closed form. */
static void
test_llama_closed_form (void)
{
  ModelShape s = preset_llama_405b ();
  s.vocab = 32000;
  s = finished (s);
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 4, p.pp = 8, p.vpp = 8, p.cp = 2, p.dp = 128, p.gpus = 8192;
  p.sp = TRUE, p.schedule = MODEL_SCHED_INTERLEAVED, p.global_batch = 1024;
  p.pp_embed_loss_layers = TRUE;
  p.recompute = MODEL_RECOMPUTE_FULL;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  double tokens = 1024.0 * 8192;
  double model = model_flops_closed_form (&s, 32256, tokens); /* 32000 -> 63*512 = 32256 */
  g_assert_cmpint (model_shape_padded_vocab (&s, 4), ==, 32256);
  assert_rel (model_flops_model_per_step (&s, &p), model, 1e-12);
  /* Full recompute: + one forward of every layer (1/3 of the layer part, head excluded), + the
   * flash backward's recomputed scores: tokens * l * a * d * (s+1). */
  double head = 6.0 * 32256 * 16384 * tokens;
  double flash = tokens * 126 * 128 * 128 * 8193.0;
  assert_rel (model_flops_hardware_per_step (&s, &p), model + (model - head) / 3 + flash, 1e-12);
}

/* Mixtral 8x7B, TP2 EP8 DP32 with SP: the expert GEMMs of all ranks add up to top-2 of 8 experts
 * per token, so model FLOPs = tokens * (6 * active matmul params + attention). */
static void
test_mixtral_closed_form (void)
{
  ModelShape s = finished (preset_mixtral_8x7b ());
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.dp = 32, p.ep = 8, p.gpus = 64, p.sp = TRUE, p.global_batch = 256;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  double want = model_flops_closed_form (&s, 32000, 256.0 * 4096);
  assert_rel (model_flops_model_per_step (&s, &p), want, 1e-12);
  /* Expert TP 1 (EP over the TP ranks too) gives the same total. */
  p.etp = 1;
  g_assert_true (model_plan_validate (&p, &s, NULL));
  assert_rel (model_flops_model_per_step (&s, &p), want, 1e-12);
  /* 6N convention check: active matmul params per layer = attention + router + 2 experts. */
  ModelParams prm;
  model_shape_params (&s, s.vocab, &prm);
  g_assert_cmpint (model_shape_layer_matmul_params (&s, 0), ==,
                   prm.moe_layer_active - prm.norms);
}

static void
test_mfu (void)
{
  /* 1e18 FLOPs in 1 s on 1000 GPUs of 2e15 peak = 50%. */
  assert_rel (model_flops_mfu (1e18, 1.0, 1000, 2e15), 0.5, 1e-15);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/flops/causal-pairs", test_causal_pairs);
  g_test_add_func ("/model/flops/gpt3-closed-form", test_gpt3_closed_form);
  g_test_add_func ("/model/flops/narayanan-eq3", test_narayanan_eq3);
  g_test_add_func ("/model/flops/megatron-eq7", test_megatron_eq7);
  g_test_add_func ("/model/flops/llama405b-closed-form", test_llama_closed_form);
  g_test_add_func ("/model/flops/mixtral-closed-form", test_mixtral_closed_form);
  g_test_add_func ("/model/flops/mfu", test_mfu);
  return g_test_run ();
}
