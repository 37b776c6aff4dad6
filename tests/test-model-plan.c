/* Plan validation (one case per rule, checking the message names the problem), micro-batches,
 * order parsing, rank mapping and the pipeline layer split. */
#include "model/plan.h"
#include "tests/model-presets.h"

/* MLPerf Training v3.1 GPT-3 175B on NVIDIA Eos (DESIGN.md §2 and reference/mlperf.md):
 * TP4 PP8 VPP12 DP336 = 10,752 GPUs, mbs 1, GBS 2,688, FP8, sequence parallelism. */
static void
gpt3_case (ModelShape *s, ModelPlan *p)
{
  *s = preset_gpt3_175b ();
  g_assert_true (model_shape_finish (s, NULL));
  model_plan_init (p);
  p->tp = 4, p->pp = 8, p->vpp = 12, p->dp = 336, p->gpus = 10752;
  p->sp = TRUE;
  p->schedule = MODEL_SCHED_INTERLEAVED;
  p->global_batch = 2688;
  p->zero = 1;
  p->matmul_dtype = MODEL_DTYPE_FP8;
}

/* MLPerf Training v6.0 Llama 3.1 405B (Azure, 8,192 GB200): TP4 PP8 VPP8 CP2 DP128, GBS 1,024,
 * seq 8,192, Mixtral tokenizer (vocab 32000), NVFP4, embedding and loss as pipeline layers. */
static void
llama_case (ModelShape *s, ModelPlan *p)
{
  *s = preset_llama_405b ();
  s->vocab = 32000;
  g_assert_true (model_shape_finish (s, NULL));
  model_plan_init (p);
  p->tp = 4, p->pp = 8, p->vpp = 8, p->cp = 2, p->dp = 128, p->gpus = 8192;
  p->sp = TRUE;
  p->schedule = MODEL_SCHED_INTERLEAVED;
  p->global_batch = 1024;
  p->zero = 1;
  p->matmul_dtype = MODEL_DTYPE_FP4;
  p->pp_embed_loss_layers = TRUE;
}

/* Mixtral 8x7B on 64 GPUs: TP2 EP8 DP32 with SP. */
static void
mixtral_case (ModelShape *s, ModelPlan *p)
{
  *s = preset_mixtral_8x7b ();
  g_assert_true (model_shape_finish (s, NULL));
  model_plan_init (p);
  p->tp = 2, p->dp = 32, p->ep = 8, p->gpus = 64;
  p->sp = TRUE;
  p->global_batch = 256;
  p->zero = 1;
}

static void
expect_valid (const ModelPlan *p, const ModelShape *s)
{
  g_autoptr (GError) error = NULL;
  gboolean ok = model_plan_validate (p, s, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
}

/* The error must be INVALID_PLAN and contain every fragment (the problem and the remedy). */
static void
expect_invalid (const ModelPlan *p, const ModelShape *s, const char *frag1, const char *frag2)
{
  g_autoptr (GError) error = NULL;
  g_assert_false (model_plan_validate (p, s, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  if (!strstr (error->message, frag1) || (frag2 && !strstr (error->message, frag2)))
    g_error ("error lacks '%s'/'%s': %s", frag1, frag2 ? frag2 : "", error->message);
  g_test_message ("%s", error->message);
}

static void
test_reference_cases_valid (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  expect_valid (&p, &s);
  g_assert_cmpint (model_plan_microbatches (&p), ==, 8); /* 2688 / (336 * 1) */
  llama_case (&s, &p);
  expect_valid (&p, &s);
  g_assert_cmpint (model_plan_microbatches (&p), ==, 8); /* 1024 / 128 */
  mixtral_case (&s, &p);
  expect_valid (&p, &s);
  model_plan_init (&p); /* the 1-GPU default is valid */
  expect_valid (&p, &s);
}

static void
test_rule_positive (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.micro_batch = 0;
  expect_invalid (&p, &s, "micro_batch must be a positive", NULL);
}

static void
test_rule_gpus (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.gpus = 10000;
  expect_invalid (&p, &s, "tp*cp*dp*pp = 4*1*336*8 = 10752 but gpus = 10000", "set dp");
}

static void
test_rule_heads (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.tp = 5, p.dp = 336, p.gpus = 5 * 336 * 8;
  expect_invalid (&p, &s, "heads 96 is not divisible by tp 5", "pick tp");
}

static void
test_rule_kv_heads (void)
{
  ModelShape s;
  ModelPlan p;
  llama_case (&s, &p);
  p.tp = 16, p.dp = 32;
  expect_invalid (&p, &s, "kv_heads 8 is not divisible by tp 16", "does not replicate");
}

static void
test_rule_layers (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.vpp = 5;
  p.global_batch = 2688;
  expect_invalid (&p, &s, "layers 96 is not divisible by pp*vpp = 8*5 = 40", NULL);
  /* 126 layers over pp8 vpp8 without the embedding/loss option: the error offers it. */
  llama_case (&s, &p);
  p.pp_embed_loss_layers = FALSE;
  expect_invalid (&p, &s, "layers 126 is not divisible by pp*vpp = 8*8 = 64", "pp_embed_loss_layers");
  /* With the option, 128 pipeline layers must still divide. */
  p.pp_embed_loss_layers = TRUE;
  p.vpp = 3;
  expect_invalid (&p, &s, "layers + 2 = 128", "change pp or vpp");
}

static void
test_rule_vpp_needs_pp (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.pp = 1, p.dp = 2688, p.gpus = 4 * 2688;
  expect_invalid (&p, &s, "vpp 12 needs pp > 1", NULL);
}

static void
test_rule_schedule (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.schedule = MODEL_SCHED_1F1B;
  expect_invalid (&p, &s, "vpp 12 needs the interleaved schedule", NULL);
  gpt3_case (&s, &p);
  p.vpp = 1;
  expect_invalid (&p, &s, "interleaved schedule needs vpp >= 2", NULL);
}

static void
test_rule_global_batch (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.global_batch = 2700;
  expect_invalid (&p, &s, "global_batch 2700 is not divisible by dp*micro_batch = 336*1 = 336",
                  "multiple of 336");
}

static void
test_rule_interleaved_microbatches (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.global_batch = 336 * 4; /* 4 micro-batches over pp 8 */
  expect_invalid (&p, &s, "4 micro-batches per step is not divisible by pp 8", NULL);
  p.schedule = MODEL_SCHED_1F1B, p.vpp = 1; /* 1F1B takes any count */
  expect_valid (&p, &s);
}

static void
test_rule_sp_needs_tp (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.tp = 1, p.dp = 1344;
  p.global_batch = 1344 * 8;
  expect_invalid (&p, &s, "sequence parallelism", "needs tp > 1");
}

static void
test_rule_cp_seq (void)
{
  ModelShape s;
  ModelPlan p;
  llama_case (&s, &p);
  s.seq_len = 8190;
  expect_invalid (&p, &s, "seq_len 8190 is not divisible by 2*cp = 4", "ring attention");
}

static void
test_rule_sp_seq (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  s.seq_len = 2046;
  s.max_positions = 2048;
  expect_invalid (&p, &s, "2046 tokens per context-parallel rank over tp 4", NULL);
}

static void
test_rule_ep (void)
{
  ModelShape s;
  ModelPlan p;
  mixtral_case (&s, &p);
  p.ep = 3;
  expect_invalid (&p, &s, "moe_experts 8 is not divisible by ep 3", NULL);
  mixtral_case (&s, &p);
  p.dp = 2, p.gpus = 4, p.global_batch = 2; /* tp*cp*dp = 4 < etp*ep = 16 */
  expect_invalid (&p, &s, "etp*ep = 2*8 does not divide tp*cp*dp = 4", NULL);
  p.etp = 1, p.ep = 4; /* expert TP 1: EP spans the TP ranks (ep 4 divides 4) */
  expect_valid (&p, &s);
  mixtral_case (&s, &p);
  p.sp = FALSE;
  expect_invalid (&p, &s, "needs sequence parallelism", NULL);
  gpt3_case (&s, &p);
  p.ep = 2;
  expect_invalid (&p, &s, "ep 2 given for a dense model", NULL);
}

static void
test_rule_zero (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  p.zero = 4;
  expect_invalid (&p, &s, "zero must be 0", "got 4");
  p.zero = 1, p.fsdp = TRUE;
  expect_invalid (&p, &s, "fsdp", "needs zero >= 2");
  p.zero = 3;
  expect_valid (&p, &s);
}

static void
test_rule_low_precision (void)
{
  ModelShape s;
  ModelPlan p;
  gpt3_case (&s, &p);
  s.ffn_hidden = 4 * 12288 + 40; /* /tp 4 = 12298, not a multiple of 16 */
  expect_invalid (&p, &s, "fp8 GEMMs need dimensions that are multiples of 16", "ffn_hidden/tp");
  p.matmul_dtype = MODEL_DTYPE_BF16;
  expect_valid (&p, &s);
  gpt3_case (&s, &p);
  p.param_dtype = MODEL_DTYPE_FP8;
  expect_invalid (&p, &s, "param_dtype fp8 cannot hold trained weights", NULL);
  gpt3_case (&s, &p); /* remainders complete a bf16 weight only */
  p.master_weights = MODEL_MASTER_REMAINDER;
  expect_valid (&p, &s);
  p.param_dtype = MODEL_DTYPE_FP16;
  expect_invalid (&p, &s, "master_weights = remainder rebuilds fp32 from bf16 weights; param_dtype is fp16", NULL);
  llama_case (&s, &p); /* fp4: 32-alignment of the TP shards */
  s.ffn_hidden = 53248 + 64; /* /4 = 13328 = 32*416.5 */
  expect_invalid (&p, &s, "fp4 GEMMs need dimensions that are multiples of 32", NULL);
}

static void
test_parse_order (void)
{
  ModelDim o[MODEL_DIM_COUNT];
  g_autoptr (GError) error = NULL;
  g_assert_true (model_plan_parse_order ("tp,cp,ep,dp,pp", o, &error));
  g_assert_cmpint (o[0], ==, MODEL_DIM_TP);
  g_assert_cmpint (o[4], ==, MODEL_DIM_PP);
  g_assert_true (model_plan_parse_order (" pp , dp", o, &error));
  g_assert_no_error (error);
  ModelDim want[] = { MODEL_DIM_PP, MODEL_DIM_DP, MODEL_DIM_TP, MODEL_DIM_CP, MODEL_DIM_EP };
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    g_assert_cmpint (o[i], ==, want[i]);
  g_assert_false (model_plan_parse_order ("tp,xx", o, &error));
  g_assert_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
  g_assert_nonnull (strstr (error->message, "unknown dimension 'xx'"));
  g_clear_error (&error);
  g_assert_false (model_plan_parse_order ("tp,dp,tp", o, &error));
  g_assert_nonnull (strstr (error->message, "'tp' appears twice"));
}

static void
assert_group (const ModelPlan *p, int rank, guint mask, gboolean expert, const int *want, int n)
{
  int got[64];
  g_assert_cmpint (model_plan_group_ranks (p, rank, mask, expert, got), ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint (got[i], ==, want[i]);
}

/* tp2 cp2 dp2 pp2, order tp,cp,ep,dp,pp: rank = tp + 2*cp + 4*dp + 8*pp. */
static void
test_rank_mapping (void)
{
  ModelPlan p;
  model_plan_init (&p);
  p.tp = p.cp = p.dp = p.pp = 2;
  p.gpus = 16;
  int c[MODEL_DIM_COUNT];
  model_plan_rank_coords (&p, 5, c);
  g_assert_cmpint (c[MODEL_DIM_TP], ==, 1);
  g_assert_cmpint (c[MODEL_DIM_CP], ==, 0);
  g_assert_cmpint (c[MODEL_DIM_DP], ==, 1);
  g_assert_cmpint (c[MODEL_DIM_PP], ==, 0);
  for (int r = 0; r < 16; r++)
    {
      model_plan_rank_coords (&p, r, c);
      g_assert_cmpint (model_plan_rank_of (&p, c), ==, r);
    }
  int ranks[16];
  g_assert_cmpint (model_plan_group (&p, 5, MODEL_DIM_TP, ranks), ==, 2);
  assert_group (&p, 5, 1u << MODEL_DIM_TP, FALSE, (int[]){ 4, 5 }, 2);
  assert_group (&p, 5, 1u << MODEL_DIM_CP, FALSE, (int[]){ 5, 7 }, 2);
  assert_group (&p, 5, 1u << MODEL_DIM_DP, FALSE, (int[]){ 1, 5 }, 2);
  assert_group (&p, 5, 1u << MODEL_DIM_PP, FALSE, (int[]){ 5, 13 }, 2);
  assert_group (&p, 5, (1u << MODEL_DIM_DP) | (1u << MODEL_DIM_CP), FALSE, (int[]){ 1, 3, 5, 7 }, 4);
  /* Order dp,tp,...: rank = dp + 2*tp + 4*cp + 8*pp, so DP peers are neighbours. */
  g_assert_true (model_plan_parse_order ("dp,tp", p.order, NULL));
  assert_group (&p, 5, 1u << MODEL_DIM_DP, FALSE, (int[]){ 4, 5 }, 2);
  assert_group (&p, 5, 1u << MODEL_DIM_TP, FALSE, (int[]){ 5, 7 }, 2);
}

/* Expert view (Megatron-Core): tp2 dp4 ep4 on 8 GPUs. With etp = tp = 2 the expert view is
 * etp2 x ep4 (edp 1), so EP peers of rank 3 are 1,3,5,7 (the same as its DP peers). With etp = 1
 * the view is ep4 x edp2: EP groups are 0-3 and 4-7, expert-DP pairs {r, r+4}. */
static void
test_expert_mapping (void)
{
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.dp = 4, p.ep = 4, p.gpus = 8;
  g_assert_cmpint (model_plan_expert_dp (&p), ==, 1);
  assert_group (&p, 3, 1u << MODEL_DIM_EP, TRUE, (int[]){ 1, 3, 5, 7 }, 4);
  int c[MODEL_DIM_COUNT];
  model_plan_rank_coords (&p, 3, c);
  g_assert_cmpint (c[MODEL_DIM_EP], ==, 1);
  p.etp = 1;
  g_assert_cmpint (model_plan_expert_dp (&p), ==, 2);
  assert_group (&p, 5, 1u << MODEL_DIM_EP, TRUE, (int[]){ 4, 5, 6, 7 }, 4);
  assert_group (&p, 5, 1u << MODEL_DIM_DP, TRUE, (int[]){ 1, 5 }, 2);
}

/* model_plan_group_partition gives every rank the group model_plan_group_ranks lists, with its
 * members in the same order, groups numbered as their smallest ranks ascend: every mask, both
 * views, two dimension orders. */
static void
check_partition (const ModelPlan *p, gboolean expert)
{
  int group_of[96], members[96], want[96], first[96];
  for (guint mask = 1; mask < (1u << MODEL_DIM_COUNT); mask++)
    {
      int n = model_plan_group_partition (p, mask, expert, group_of, members);
      int size = model_plan_group_ranks (p, 0, mask, expert, want);
      g_assert_cmpint (n * size, ==, p->gpus);
      int seen = 0;
      for (int r = 0; r < p->gpus; r++)
        {
          int k = model_plan_group_ranks (p, r, mask, expert, want);
          int g = group_of[r];
          g_assert_cmpint (k, ==, size);
          g_assert_true (g >= 0 && g < n);
          if (g == seen)
            first[seen++] = r;  /* a new group opens at its smallest rank */
          g_assert_cmpint (g, <, seen);
          g_assert_cmpint (first[g], ==, want[0]);
          for (int i = 0; i < k; i++)
            g_assert_cmpint (members[g * size + i], ==, want[i]);
        }
      g_assert_cmpint (seen, ==, n);
    }
}

static void
test_group_partition (void)
{
  ModelPlan p;
  model_plan_init (&p);
  p.tp = 2, p.cp = 2, p.dp = 3, p.pp = 2, p.gpus = 24;
  check_partition (&p, FALSE);
  g_assert_true (model_plan_parse_order ("dp,pp,tp,cp,ep", p.order, NULL));
  check_partition (&p, FALSE);
  model_plan_init (&p);
  p.tp = 2, p.dp = 4, p.ep = 4, p.pp = 3, p.etp = 1, p.gpus = 24;
  check_partition (&p, TRUE);
  check_partition (&p, FALSE);
}

/* Llama 3.1 405B, pp8 vpp8 with embedding and loss as pipeline layers: 128 pipeline layers, 2 per
 * virtual stage; stage 0 and 63 hold 1 transformer layer, the others 2 (1 + 62*2 + 1 = 126). */
static void
test_pipeline_split (void)
{
  ModelShape s;
  ModelPlan p;
  llama_case (&s, &p);
  int first = -1;
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 0, 0, &first), ==, 1);
  g_assert_cmpint (first, ==, 0);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 1, 0, &first), ==, 2);
  g_assert_cmpint (first, ==, 1);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 0, 1, &first), ==, 2); /* virtual stage 8 */
  g_assert_cmpint (first, ==, 15);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 7, 7, &first), ==, 1);
  g_assert_cmpint (first, ==, 125);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 0), ==, 15);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 3), ==, 16);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 7), ==, 15);
  int total = 0;
  for (int r = 0; r < 8; r++)
    total += model_plan_rank_layers (&p, &s, r);
  g_assert_cmpint (total, ==, 126);
  g_assert_true (model_plan_chunk_has_embedding (&p, 0, 0));
  g_assert_false (model_plan_chunk_has_embedding (&p, 0, 1));
  g_assert_true (model_plan_chunk_has_loss (&p, 7, 7));
  g_assert_false (model_plan_chunk_has_loss (&p, 7, 6));
  /* Even split: GPT-3 pp8 vpp12 → 1 layer per chunk, 12 per rank. */
  gpt3_case (&s, &p);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 2, 3, &first), ==, 1);
  g_assert_cmpint (first, ==, 3 * 8 + 2);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 5), ==, 12);
}

/* Uneven first and last ranks (Megatron-Core --decoder-first/last-pipeline-num-layers): the
 * stated counts over the rank's chunks, the rest split evenly, and Megatron-Core's checks. */
static void
test_pipeline_uneven (void)
{
  ModelShape s;
  ModelPlan p;
  /* 126 layers over pp8 vpp8 as 8 + 6·16 + ... does not divide; 14 + 6·16 + 16 = 126 does. */
  llama_case (&s, &p);
  p.pp_embed_loss_layers = FALSE;
  p.pp_first_layers = 16, p.pp_last_layers = 14;
  expect_invalid (&p, &s, "pipeline rank 7 would hold 14 transformer layers, not a positive multiple of vpp = 8",
                  "pp_last_stage_layers");
  p.vpp = 2, p.global_batch = 1024;
  expect_valid (&p, &s);
  int first = -1, total = 0;
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 0), ==, 16);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 4), ==, 16);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 7), ==, 14);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 7, 0, &first), ==, 7); /* virtual stage 7 */
  g_assert_cmpint (first, ==, 7 * 8);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 0, 1, &first), ==, 8); /* virtual stage 8 */
  g_assert_cmpint (first, ==, 7 * 8 + 7);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 7, 1, &first), ==, 7); /* the last */
  g_assert_cmpint (first, ==, 126 - 7);
  for (int r = 0; r < 8; r++)
    total += model_plan_rank_layers (&p, &s, r);
  g_assert_cmpint (total, ==, 126);
  /* Only the last rank stated: the other seven split 126 - 14 = 112. */
  p.pp_first_layers = 0;
  expect_valid (&p, &s);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 0), ==, 16);
  p.pp_last_layers = 15;
  expect_invalid (&p, &s, "leaves 111 for the other 7 pipeline ranks", "must divide it evenly");
  p.pp_last_layers = 14, p.pp_embed_loss_layers = TRUE;
  expect_invalid (&p, &s, "exclude each other", NULL);
  /* DeepSeek-V3's layer count, 61, over pp16 as 3 + 14·4 + 2 (on a dense Llama-shaped layer). */
  ModelShape d = preset_llama (61, 4096, 14336, 32);
  g_assert_true (model_shape_finish (&d, NULL));
  model_plan_init (&p);
  p.pp = 16, p.dp = 8, p.gpus = 128, p.global_batch = 128;
  p.pp_first_layers = 3, p.pp_last_layers = 2;
  expect_valid (&p, &d);
  g_assert_cmpint (model_plan_rank_layers (&p, &d, 0), ==, 3);
  g_assert_cmpint (model_plan_rank_layers (&p, &d, 9), ==, 4);
  g_assert_cmpint (model_plan_chunk_layers (&p, &d, 15, 0, &first), ==, 2);
  g_assert_cmpint (first, ==, 59);
}

/* Megatron-Core's pipeline layout string (model_plan_parse_pp_layout): unrolled as Megatron-Core
 * unrolls it, every stage's count in virtual-stage order, vpp from the stage count, interned, and
 * each of Megatron-Core's checks and the simulator's own with its message. */
static void
test_pipeline_layout (void)
{
  ModelShape s;
  ModelPlan p;
  llama_case (&s, &p); /* 126 layers */
  p.pp_embed_loss_layers = FALSE;
  /* torchtitan's split of 126 layers over 8 stages (generate_split_points): 15, 16 x 6, 15. */
  const int *layout = NULL, *again = NULL;
  int vpp = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (model_plan_parse_pp_layout ("Et*15|(t*16|)*6t*15L", 8, 126, 0, &layout, &vpp, &error));
  g_assert_no_error (error);
  g_assert_cmpint (vpp, ==, 1);
  g_assert_cmpint (layout[0], ==, 8);
  g_assert_cmpint (layout[1], ==, 15);
  g_assert_cmpint (layout[4], ==, 16);
  g_assert_cmpint (layout[8], ==, 15);
  /* Commas, blanks and 'x*0' are cosmetic; the same counts intern to the same array. */
  g_assert_true (model_plan_parse_pp_layout ("E t*15, |(t*16|)*6 t*15 t*0 L", 8, 126, 0, &again, &vpp, NULL));
  g_assert_true (again == layout);
  /* As a plan: the same chunks as pp_first/last_stage_layers 15 and 15. */
  ModelPlan q = p;
  p.vpp = 1, p.schedule = MODEL_SCHED_1F1B, p.pp_layout = layout;
  q.vpp = 1, q.schedule = MODEL_SCHED_1F1B, q.pp_first_layers = 15, q.pp_last_layers = 15;
  expect_valid (&p, &s);
  expect_valid (&q, &s);
  for (int r = 0; r < 8; r++)
    {
      int f1 = -1, f2 = -2;
      g_assert_cmpint (model_plan_chunk_layers (&p, &s, r, 0, &f1), ==, model_plan_chunk_layers (&q, &s, r, 0, &f2));
      g_assert_cmpint (f1, ==, f2);
    }
  /* Interleaved: 16 stages of 7, 8 x 14, 7; rank 0 holds stages 0 and 8, rank 7 stages 7 and 15. */
  g_assert_true (model_plan_parse_pp_layout ("Et*7|(t*8|)*14t*7L", 8, 126, 0, &layout, &vpp, NULL));
  g_assert_cmpint (vpp, ==, 2);
  p.vpp = 2, p.schedule = MODEL_SCHED_INTERLEAVED, p.pp_layout = layout;
  expect_valid (&p, &s);
  int first = -1;
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 0), ==, 15);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 3), ==, 16);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 7, 1, &first), ==, 7);
  g_assert_cmpint (first, ==, 119);
  /* Stages without a transformer layer: the embedding alone (rank 0), nothing (rank 6). */
  g_assert_true (model_plan_parse_pp_layout ("E|(t*21|)*5|t*21L", 8, 126, 0, &layout, &vpp, NULL));
  p.vpp = 1, p.schedule = MODEL_SCHED_1F1B, p.pp_layout = layout;
  expect_valid (&p, &s);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 0), ==, 0);
  g_assert_cmpint (model_plan_chunk_layers (&p, &s, 6, 0, &first), ==, 0);
  g_assert_cmpint (first, ==, 105);
  g_assert_cmpint (model_plan_rank_layers (&p, &s, 7), ==, 21);
  g_assert_true (model_plan_parse_pp_layout ("Et*7|(t*8|)*14t*7L", 8, 126, 0, &layout, &vpp, NULL));
  p.vpp = 2, p.schedule = MODEL_SCHED_INTERLEAVED, p.pp_layout = layout;
  /* Framework fsdp2 splits as torchtitan does (generate_split_points): 15, 16 x 6, 15 over 8
   * stages; 7, 8 x 14, 7 over 16; Megatron's rules give the other frameworks first/last ranks. */
  ModelPlan t = p;
  t.pp_layout = NULL, t.framework = MODEL_FW_FSDP2, t.vpp = 1, t.schedule = MODEL_SCHED_1F1B;
  g_assert_true (model_plan_fit_pipeline_split (&t, &s));
  g_assert_nonnull (t.pp_layout);
  g_assert_cmpint (t.pp_layout[1], ==, 15);
  g_assert_cmpint (t.pp_layout[2], ==, 16);
  g_assert_cmpint (t.pp_layout[8], ==, 15);
  t.pp_layout = NULL, t.vpp = 2, t.schedule = MODEL_SCHED_INTERLEAVED;
  g_assert_true (model_plan_fit_pipeline_split (&t, &s));
  g_assert_true (t.pp_layout == layout); /* Et*7|(t*8|)*14t*7L, interned once */
  t.pp_layout = NULL, t.framework = MODEL_FW_MEGATRON;
  g_assert_true (model_plan_fit_pipeline_split (&t, &s));
  g_assert_null (t.pp_layout);
  g_assert_true (t.pp_embed_loss_layers); /* 126 + 2 = 128 over 16 */
  /* A layout with other counts than the plan's stages or layers, or beside another split. */
  p.vpp = 4;
  expect_invalid (&p, &s, "pp_layout places 126 transformer layers in 16 stages", "pp*vpp = 32 stages");
  p.vpp = 2, p.pp_first_layers = 15;
  expect_invalid (&p, &s, "pp_layout excludes pp_first_stage_layers", NULL);
  /* Megatron-Core's checks, then the simulator's. DeepSeek-V3's example layout (61 layers and one
   * MTP layer over pp16 vpp2) puts the MTP layer alone in stage 30 and the loss alone in 31. */
  static const struct { const char *text; int pp, layers, mtp; const char *says; } bad[] = {
    { "Et*8|t*8|t*8|t*8L|", 4, 32, 0, "5 stages, not a multiple of pp = 4" },
    { "t*8|Et*8|t*8|t*8L", 4, 32, 0, "the embedding (E) must open stage 0" },
    { "Et*8|t*8|t*8|Lt*8", 4, 32, 0, "the loss (L) must close the last stage, 3" },
    { "Et*8|t*8|t*16|L||||", 8, 32, 0, "the loss (L) must close the last stage, 7, once (stage 3)" },
    { "Et*8|(t*8|)*2t*8", 4, 32, 0, "needs the embedding (E) first and the loss (L) last" },
    { "Et*8|t*8|t*8|t*7L", 4, 32, 0, "31 transformer layers (t) for a model of 32" },
    { "Et*8|t*8|t*8|t*8mL", 4, 32, 0, "1 MTP layers (m) for a model of mtp_depth 0" },
    { "Et*8|t*8|t*8|mt*8L", 4, 32, 1, "a transformer layer (t) after an MTP layer (m)" },
    { "Et*8x|t*8|t*8|t*8L", 4, 32, 0, "'x' in stage 0 is not a layer" },
    { "(Et*8|(t*8|)*2)*1t*8L", 4, 32, 0, "groups do not nest" },
    { "Et*8|t*8)|t*8|t*8L", 4, 32, 0, "')' without its '('" },
    { "Et*8|()*2|t*8|t*8L", 4, 32, 0, "a group must be '(…)*n'" },
    { "E*|t*8|t*8|t*8L", 4, 32, 0, "'*' must be followed by a count" },
    { "Et*3|(tt|)*29,m|L", 16, 61, 1, "an MTP layer (m) in stage 30" },
    { "Et*99999999|L", 2, 1, 0, "unrolls to more than" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) e = NULL;
      g_assert_false (model_plan_parse_pp_layout (bad[i].text, bad[i].pp, bad[i].layers, bad[i].mtp, &layout, &vpp, &e));
      g_assert_error (e, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN);
      g_test_message ("%s -> %s", bad[i].text, e->message);
      if (!strstr (e->message, bad[i].says))
        g_error ("'%s': error lacks '%s': %s", bad[i].text, bad[i].says, e->message);
    }
}

/* The split model_plan_fit_pipeline_split picks, and what it keeps. */
static void
test_pipeline_fit (void)
{
  ModelShape s = preset_llama (61, 4096, 14336, 32);
  g_assert_true (model_shape_finish (&s, NULL));
  ModelPlan p;
  model_plan_init (&p);
  p.pp = 16, p.dp = 8, p.gpus = 128, p.global_batch = 128;
  g_assert_true (model_plan_fit_pipeline_split (&p, &s));
  g_assert_false (p.pp_embed_loss_layers);
  g_assert_cmpint (p.pp_first_layers, ==, 3);
  g_assert_cmpint (p.pp_last_layers, ==, 2);
  expect_valid (&p, &s);
  /* A stated split is kept, even one that does not divide (validation reports it). */
  p.pp_first_layers = 5, p.pp_last_layers = 1;
  g_assert_true (model_plan_fit_pipeline_split (&p, &s));
  g_assert_cmpint (p.pp_first_layers, ==, 5);
  /* With MTP, 61 + 2 + 1 = 64 over 16: embedding, loss and MTP as layers. */
  s.mtp_depth = 1;
  p.pp_first_layers = p.pp_last_layers = 0;
  g_assert_true (model_plan_fit_pipeline_split (&p, &s));
  g_assert_true (p.pp_embed_loss_layers);
  g_assert_cmpint (p.pp_first_layers, ==, 0);
  /* pp_embed_loss_layers where it does not divide gives way: 64 layers over 16 split evenly. */
  ModelShape e = preset_llama (64, 4096, 14336, 32);
  g_assert_true (model_shape_finish (&e, NULL));
  g_assert_true (model_plan_fit_pipeline_split (&p, &e));
  g_assert_false (p.pp_embed_loss_layers);
  g_assert_cmpint (p.pp_first_layers + p.pp_last_layers, ==, 0);
  /* 96 layers over pp16 vpp5: no rank count is a multiple of 5 that sums to 96. */
  ModelShape g;
  gpt3_case (&g, &p);
  p.pp = 16, p.vpp = 5;
  g_assert_false (model_plan_fit_pipeline_split (&p, &g));
  /* Interleaved, 10 micro-batches over pp 4 run in groups of 5; a stated group stays; 3 over pp 4
   * have none. */
  gpt3_case (&g, &p);
  p.pp = 4, p.vpp = 2, p.dp = 4, p.gpus = 64, p.global_batch = 40;
  g_assert_true (model_plan_fit_microbatch_group (&p));
  g_assert_cmpint (p.mb_group, ==, 5);
  expect_valid (&p, &g);
  p.mb_group = 10;
  g_assert_true (model_plan_fit_microbatch_group (&p));
  g_assert_cmpint (p.mb_group, ==, 10);
  p.mb_group = 0, p.global_batch = 12;
  g_assert_false (model_plan_fit_microbatch_group (&p));
  /* DualPipe takes only even splits. */
  model_plan_init (&p);
  p.pp = 16, p.vpp = 2, p.dp = 8, p.gpus = 128, p.global_batch = 128, p.schedule = MODEL_SCHED_DUALPIPE;
  s.mtp_depth = 0;
  g_assert_false (model_plan_fit_pipeline_split (&p, &s));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model/plan/reference-cases-valid", test_reference_cases_valid);
  g_test_add_func ("/model/plan/rule/positive", test_rule_positive);
  g_test_add_func ("/model/plan/rule/gpus", test_rule_gpus);
  g_test_add_func ("/model/plan/rule/heads", test_rule_heads);
  g_test_add_func ("/model/plan/rule/kv-heads", test_rule_kv_heads);
  g_test_add_func ("/model/plan/rule/layers", test_rule_layers);
  g_test_add_func ("/model/plan/rule/vpp-needs-pp", test_rule_vpp_needs_pp);
  g_test_add_func ("/model/plan/rule/schedule", test_rule_schedule);
  g_test_add_func ("/model/plan/rule/global-batch", test_rule_global_batch);
  g_test_add_func ("/model/plan/rule/interleaved-microbatches", test_rule_interleaved_microbatches);
  g_test_add_func ("/model/plan/rule/sp-needs-tp", test_rule_sp_needs_tp);
  g_test_add_func ("/model/plan/rule/cp-seq", test_rule_cp_seq);
  g_test_add_func ("/model/plan/rule/sp-seq", test_rule_sp_seq);
  g_test_add_func ("/model/plan/rule/ep", test_rule_ep);
  g_test_add_func ("/model/plan/rule/zero", test_rule_zero);
  g_test_add_func ("/model/plan/rule/low-precision", test_rule_low_precision);
  g_test_add_func ("/model/plan/parse-order", test_parse_order);
  g_test_add_func ("/model/plan/rank-mapping", test_rank_mapping);
  g_test_add_func ("/model/plan/expert-mapping", test_expert_mapping);
  g_test_add_func ("/model/plan/group-partition", test_group_partition);
  g_test_add_func ("/model/plan/pipeline-split", test_pipeline_split);
  g_test_add_func ("/model/plan/pipeline-uneven", test_pipeline_uneven);
  g_test_add_func ("/model/plan/pipeline-fit", test_pipeline_fit);
  g_test_add_func ("/model/plan/pipeline-layout", test_pipeline_layout);
  return g_test_run ();
}
