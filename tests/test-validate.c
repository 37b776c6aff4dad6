/* sim/validate: the deck parser (RFC 4180, CRLF, errors naming file, line and column), the
 * statistics, and the per-row results on the fixture deck tests/data/validate-deck.csv (synthetic
 * step times: only the arithmetic of the report is checked, not the accuracy of the model). */
#include "config.h"
#include <math.h>
#include <string.h>
#include <glib.h>
#include "sim/calibrate/validate.h"

static const char *header =
  "id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,moe_experts,"
  "moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,nvlink_domain,nic_gbps_per_gpu,"
  "tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,step_time_s,step_time_basis,confidence,"
  "notes\r\n";
/* A valid row after its id (tp·pp·cp·dp = 1·1·1·8 = gpus 8; GBS 64 divisible by dp 8 · mbs 4). */
static const char *row_tail =
  ",\"S, \"\"quoted\"\"\",GPT,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,4,8,a100-sxm-80g,8,8,,1,1,1,1,8,1,0,"
  "0,0,none,bf16,0.5,log,low,\"multi\r\nline note\"\r\n";

static char *
fixture_path (void)
{
  return g_test_build_filename (G_TEST_DIST, "data", "validate-deck.csv", NULL);
}

static void
test_parse (void)
{
  g_autofree char *text = g_strconcat (header, "r1", row_tail, "r2", row_tail, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sim_validate_deck_n_rows (deck), ==, 2);
  const SimValidateRow *r = sim_validate_deck_row (deck, 1);
  g_assert_cmpstr (r->id, ==, "r2");
  g_assert_cmpstr (r->source, ==, "S, \"quoted\"");          /* comma kept, "" → " */
  g_assert_cmpstr (r->notes, ==, "multi\r\nline note");       /* line break inside quotes */
  g_assert_cmpint (r->line, ==, 4);                           /* header 1, r1 2–3, r2 4–5 */
  g_assert_cmpint (r->hidden, ==, 768);
  g_assert_cmpfloat (r->nic_gbps_per_gpu, ==, 0);             /* empty: unknown */
  g_assert_cmpfloat (r->step_time_s, ==, 0.5);
}

/* Each malformed deck must fail with FILE:LINE and the column. */
static void
expect_error (const char *text, const char *fragment)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "bad.csv", &error);
  g_assert_null (deck);
  g_assert_error (error, SIM_VALIDATE_ERROR, SIM_VALIDATE_ERROR_PARSE);
  if (!strstr (error->message, fragment))
    g_error ("message '%s' lacks '%s'", error->message, fragment);
}

static void
test_malformed (void)
{
  g_autofree char *t1 = g_strconcat (header, "r1", row_tail, "r2,\"unclosed", NULL);
  expect_error (t1, "bad.csv:4: column 2: quoted field not closed");
  g_autofree char *t2 = g_strconcat (header, "r\"1", row_tail, NULL);
  expect_error (t2, "bad.csv:2: column 1: a quote inside an unquoted field");
  g_autofree char *tail3 = g_strdup (row_tail);
  char *p = strstr (tail3, ",768,");
  p[1] = 'x'; /* hidden = x68 */
  g_autofree char *t3 = g_strconcat (header, "r1", tail3, NULL);
  expect_error (t3, "bad.csv:2: column 6 (hidden): 'x68': expected an integer");
  g_autofree char *t4 = g_strconcat (header, "r1,only,three\r\n", NULL);
  expect_error (t4, "bad.csv:2: column 4: the row has 3 fields");
  g_autofree char *t5 = g_strconcat (header, "r1", row_tail, "r1", row_tail, NULL);
  expect_error (t5, "bad.csv:4: column 1 (id): 'r1' repeats");
  expect_error ("id,source\r\n", "bad.csv:1: the header lacks the required column 'model'");
  g_autofree char *t8 = g_strconcat ("color,", header, NULL);
  expect_error (t8, "bad.csv:1: column 1 of the header is 'color', not a deck column");
  g_autofree char *t9 = g_strconcat ("id,", header, NULL);
  expect_error (t9, "bad.csv:1: column 2 of the header repeats 'id' (column 1)");
  g_autofree char *tail6 = g_strdup (row_tail);
  p = strstr (tail6, ",8,1,0,");
  p[1] = '7'; /* dp 7: tp·pp·cp·dp ≠ gpus */
  g_autofree char *t6 = g_strconcat (header, "r1", tail6, NULL);
  expect_error (t6, "bad.csv:2: tp·pp·cp·dp differs from gpus");
  /* x"S, ... : a quote inside an unquoted field (row_tail + 1 drops its leading comma). */
  g_autofree char *t7 = g_strconcat (header, "r1,x", row_tail + 1, NULL);
  expect_error (t7, "column 2: a quote inside an unquoted field");
}

/* Columns by name: reordered, with and without the optional framework and arch columns; every
 * step_time_basis of DECK.md; arch keys checked by name. */
static void
test_columns_by_name (void)
{
  /* header with notes first and the optional columns at the end; the row reordered alike */
  const char *h = "notes,id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,"
                  "moe_experts,moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,"
                  "nvlink_domain,nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,"
                  "step_time_s,step_time_basis,confidence,framework,arch\n";
  const char *r = "a note,r1,S,GPT,other,12,768,12,4,3072,50257,1024,gelu,0,0,0,64,4,8,h100-sxm,8,8,,1,1,1,1,8,1,0,0,"
                  "0,none,bf16,0.5,tokens_per_s,low,nemo,mlp_act=squared_relu;norm=layernorm;position=rope\n";
  g_autofree char *text = g_strconcat (h, r, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
  g_assert_no_error (error);
  const SimValidateRow *row = sim_validate_deck_row (deck, 0);
  g_assert_cmpstr (row->notes, ==, "a note");
  g_assert_cmpstr (row->id, ==, "r1");
  g_assert_cmpint (row->kv_heads, ==, 4);
  g_assert_cmpstr (row->step_time_basis, ==, "tokens_per_s");
  g_assert_cmpstr (row->framework, ==, "nemo");
  g_assert_cmpstr (row->arch.mlp_act, ==, "squared_relu");
  g_assert_cmpstr (row->arch.position, ==, "rope");
  g_assert_cmpint (row->arch.moe_shared_experts, ==, -1);
  /* family 'other' with its arch stated is modelled (Nemotron-style: GQA, LayerNorm, RoPE) */
  SimValidateOptions o = { NULL, NULL, 1, FALSE, FALSE, TRUE, 0 };
  g_autoptr (SimScenario) sc = sim_validate_row_scenario (row, &o, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sc);
  /* the arch column's errors name the key */
  g_autofree char *bad = g_strconcat (h, "a note,r1,S,GPT,other,12,768,12,4,3072,50257,1024,gelu,0,0,0,64,4,8,"
                                      "h100-sxm,8,8,,1,1,1,1,8,1,0,0,0,none,bf16,0.5,log,low,,colour=red\n", NULL);
  expect_error (bad, "bad.csv:2: column 39 (arch): 'colour=red': unknown arch key 'colour'");
  g_autofree char *bad2 = g_strconcat (h, "a note,r1,S,GPT,other,12,768,12,4,3072,50257,1024,gelu,0,0,0,64,4,8,"
                                       "h100-sxm,8,8,,1,1,1,1,8,1,0,0,0,none,bf16,0.5,log,low,,attention=swa:x\n",
                                       NULL);
  expect_error (bad2, "arch key 'attention': bad value 'swa:x'");
  /* MLA's ranks are read (and modelled: /sim/validate/arch-modelled) */
  SimValidateArch a;
  g_assert_true (sim_validate_arch_parse ("attention=mla;kv_lora_rank=512", &a, NULL));
  g_assert_cmpstr (a.attention, ==, "mla");
  g_assert_cmpint (a.kv_lora_rank, ==, 512);
}

/* The framework column picks parallel.framework (model/framework.c); empty and "other" run
 * Megatron's schedule, the deck's default. */
static void
test_framework_column (void)
{
  static const struct { const char *column, *want; } cases[] = {
    { "", "parallel.framework=megatron" },          { "nemo", "parallel.framework=nemo" },
    { "deepspeed", "parallel.framework=deepspeed" }, { "fsdp2", "parallel.framework=fsdp2" },
    { "composer", "parallel.framework=composer" },   { "other", "parallel.framework=megatron" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,moe_experts,"
        "moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,nvlink_domain,"
        "nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,step_time_s,"
        "step_time_basis,confidence,notes,framework\n"
        "r1,S,GPT,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,4,8,h100-sxm,8,8,,1,1,1,1,8,1,0,0,0,none,bf16,"
        "0.5,log,low,x,%s\n", cases[i].column);
      g_autoptr (GError) error = NULL;
      g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
      g_assert_no_error (error);
      g_autofree char *cmd = sim_validate_row_command (sim_validate_deck_row (deck, 0), &error);
      g_assert_no_error (error);
      g_autofree char *quoted = g_strdup_printf ("'%s'", cases[i].want);
      if (!strstr (cmd, quoted))
        g_error ("framework '%s': no %s in\n%s", cases[i].column, quoted, cmd);
    }
}

/* Facts a row states become settings: "FP8 params" (with fp8 and the distributed optimizer) and
 * "CUDA graphs" in the notes; an MLPerf row runs NVIDIA's code with bf16 gradient buffers, a NeMo
 * 24.07 table row NeMo's launcher settings; other rows keep the defaults. */
static void
test_row_facts (void)
{
  static const struct { const char *id, *source, *model, *precision, *notes, *want, *unwanted; } cases[] = {
    { "mlperf_x", "MLPerf Training v4.0 results", "GPT", "fp8", "FP8 params; layer CUDA graphs",
      "'parallel.fp8_param_gather=true'", NULL },
    { "mlperf_x", "MLPerf Training v4.0 results", "GPT", "fp8", "FP8 params; layer CUDA graphs",
      "'parallel.cuda_graphs=true'", NULL },
    { "mlperf_x", "MLPerf Training v4.0 results", "GPT", "fp8", "x", "'parallel.grad_dtype=bf16'", "fp8_param_gather" },
    { "r1", "Some paper", "GPT", "bf16", "FP8 params", NULL, "fp8_param_gather" },
    { "r1", "Some paper", "GPT", "fp8", "x", NULL, "grad_dtype" },
    { "r1", "Some paper", "GPT", "fp8", "x", NULL, "cuda_graphs" },
    /* FP8 amax reduction and scaling as the submissions' files set them */
    { "mlperf_x", "MLPerf Training v3.1 results", "GPT-3 175B", "fp8", "x", "'parallel.fp8_amax_tp_only=true'", NULL },
    { "mlperf_x", "MLPerf Training v3.1 results", "GPT-3 175B", "fp8", "x", "'parallel.fp8_amax_async=true'", NULL },
    { "mlperf_x", "MLPerf Training v3.0 results", "GPT-3 175B", "fp8", "x", NULL, "fp8_amax" },
    { "mlperf_x", "MLPerf Training v3.1 results", "GPT-3 175B", "bf16", "x", NULL, "fp8_amax" },
    { "mlperf_x", "MLPerf Training v5.0 results", "Llama 3.1 405B", "fp8", "x", "'parallel.fp8_amax_tp_only=true'",
      "fp8_amax_async" },
    { "mlperf_x", "MLPerf Training v5.1 results", "Llama 3.1 8B", "fp8", "x", "'parallel.fp8_scaling=current'", NULL },
    { "mlperf_x", "MLPerf Training v5.0 results", "Llama 3.1 8B", "fp8", "x", NULL, "fp8_scaling" },
    { "r1", "Some paper", "Llama 3.1 8B", "fp8", "x", NULL, "fp8_amax" },
    { "r1", "Some paper", "Llama 3.1 8B", "fp4", "FP8 attention (config_common_fp8attn.sh)",
      "'parallel.fp8_attention=true'", NULL },
    { "r1", "Some paper", "Llama 3.1 8B", "fp4", "FP8 attention recipe F16", NULL, "fp8_attention" },
    { "r1", "Some paper", "Llama 3.1 8B", "bf16", "FP8 attention", NULL, "fp8_attention" },
    /* NCCL CTA caps */
    { "mlperf_x", "MLPerf Training v3.1 results", "GPT-3 175B", "fp8", "x", "'parallel.nccl_ctas_pp=2'", "nccl_ctas_dp" },
    { "mlperf_x", "MLPerf Training v5.0 results", "Llama 3.1 405B", "fp8", "x", "'parallel.nccl_ctas_dp=8'", NULL },
    { "mlperf_x_oracle", "MLPerf Training v4.1 results", "GPT-3 175B", "fp8", "x", NULL, "nccl_ctas" },
    { "mlperf_x", "MLPerf Training v3.0 results", "GPT-3 175B", "fp8", "x", NULL, "nccl_ctas" },
    /* fused cross entropy where the code's conf/custom.yaml defaults it on */
    { "mlperf_x", "MLPerf Training v4.1 results", "GPT-3 175B", "fp8", "x", "'parallel.loss_fusion=true'", NULL },
    { "mlperf_x", "MLPerf Training v5.1 results", "Llama 3.1 8B", "fp4", "x", "'parallel.loss_fusion=true'", NULL },
    { "mlperf_x_oracle", "MLPerf Training v4.1 results", "GPT-3 175B", "fp8", "x", NULL, "loss_fusion" },
    { "mlperf_x", "MLPerf Training v4.0 results", "GPT-3 175B", "fp8", "x", NULL, "loss_fusion" },
    { "r1", "Some paper", "Llama 3.1 8B", "fp8", "x", NULL, "loss_fusion" },
    /* NeMo 24.07's launcher: bf16 gradients, Apex's optimizer state; Llama 3 yamls fuse the loss */
    { "n1", "NVIDIA NeMo performance summary", "LLAMA3-8B", "fp8", "x", "'parallel.loss_fusion=true'", NULL },
    { "n1", "NVIDIA NeMo performance summary", "LLAMA3-8B", "fp8", "x", "'parallel.grad_dtype=bf16'", NULL },
    { "n1", "NVIDIA NeMo performance summary", "GPT3-5B", "fp8", "x", "'parallel.master_weights=remainder'",
      "loss_fusion" },
    { "n1", "NVIDIA NeMo performance summary", "Nemotron-340B", "fp8", "x", "'parallel.master_weights=none'", NULL },
    { "n1", "NVIDIA NeMo performance summary", "Nemotron-340B", "fp8", "x", "'parallel.moment_dtype=bf16'", NULL },
    { "r1", "Some paper", "GPT3-5B", "fp8", "x", NULL, "master_weights" },
    { "mlperf_x", "MLPerf Training v3.1 results", "GPT-3 175B", "fp8", "x", "'parallel.master_weights=remainder'", NULL },
    { "mlperf_x", "MLPerf Training v4.1 results", "GPT-3 175B", "fp8", "FP8 params", NULL, "master_weights" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "%s%s,%s,%s,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,4,8,h100-sxm,8,8,,1,1,1,1,8,1,0,1,0,none,%s,"
        "0.5,log,low,%s\n", header, cases[i].id, cases[i].source, cases[i].model, cases[i].precision, cases[i].notes);
      g_autoptr (GError) error = NULL;
      g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
      g_assert_no_error (error);
      g_autofree char *cmd = sim_validate_row_command (sim_validate_deck_row (deck, 0), &error);
      g_assert_no_error (error);
      if (cases[i].want && !strstr (cmd, cases[i].want))
        g_error ("case %" G_GSIZE_FORMAT ": no %s in\n%s", i, cases[i].want, cmd);
      if (cases[i].unwanted && strstr (cmd, cases[i].unwanted))
        g_error ("case %" G_GSIZE_FORMAT ": %s in\n%s", i, cases[i].unwanted, cmd);
    }
}

/* Blackwell rows of rounds that ran Transformer Engine 1.x keep its transposed FP8 copies. */
static void
test_row_te1_layouts (void)
{
  static const struct { const char *source, *gpu, *precision; gboolean want; } cases[] = {
    { "MLPerf Training v4.1 results", "b200", "fp8", TRUE },
    { "MLPerf Training v5.1 results", "b200", "fp8", FALSE },
    { "MLPerf Training v4.1 results", "h100-sxm", "fp8", FALSE },
    { "MLPerf Training v4.1 results", "b200", "bf16", FALSE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "%smlperf_x,%s,GPT-3 175B,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,4,8,%s,8,8,,1,1,1,1,8,1,0,1,0,none,%s,"
        "0.5,log,low,x\n", header, cases[i].source, cases[i].gpu, cases[i].precision);
      g_autoptr (GError) error = NULL;
      g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
      g_assert_no_error (error);
      g_autofree char *cmd = sim_validate_row_command (sim_validate_deck_row (deck, 0), &error);
      g_assert_no_error (error);
      g_assert_cmpint (strstr (cmd, "'hardware.fp8_any_layout=false'") != NULL, ==, cases[i].want);
    }
}

/* The Megatron README rows' vpp = 1 placeholder runs interleaved at one layer per virtual stage
 * (sim/calibrate/validate.c row_vpp); the same row from another source, or not called a
 * placeholder, keeps its vpp. */
static void
test_readme_interleaved (void)
{
  static const struct { const char *source, *notes, *want; } cases[] = {
    { "NVIDIA/Megatron-LM README (Megatron-Core r0.8.0 scaling, Jul 2024)", "vpp=1 is a placeholder",
      "'parallel.vpp=6'" },
    { "Some paper", "vpp=1 is a placeholder", "'parallel.vpp=1'" },
    { "NVIDIA/Megatron-LM README (Megatron-Core r0.8.0 scaling, Jul 2024)", "x", "'parallel.vpp=1'" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "%sr,\"%s\",GPT,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,4,16,h100-sxm,8,8,,1,2,1,1,8,1,0,1,0,none,bf16,"
        "0.5,tflops_eq7,low,\"%s\"\n", header, cases[i].source, cases[i].notes);
      g_autoptr (GError) error = NULL;
      g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
      g_assert_no_error (error);
      g_autofree char *cmd = sim_validate_row_command (sim_validate_deck_row (deck, 0), &error);
      g_assert_no_error (error);
      if (!strstr (cmd, cases[i].want))
        g_error ("case %" G_GSIZE_FORMAT ": no %s in\n%s", i, cases[i].want, cmd);
    }
}

/* A micro-batch the notes call not stated is resolved to the fastest candidate that fits, simulated
 * uncalibrated; every faster candidate must be over memory. A row that states its micro-batch keeps
 * it. Row "mem": GPT 6.7B with a distributed optimizer on 8 H100, 8 sequences per replica: the fastest micro-batch is
 * over 80 GB, so memory decides. */
static void
test_unstated_micro_batch (void)
{
  const char *rows[] = {
    "small,S,GPT,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,1,16,h100-sxm,8,8,,1,1,1,1,16,1,0,1,0,none,bf16,"
    "0.5,log,low,\"micro_batch not stated: 1 assumed\"\n",
    "stated,S,GPT,gpt,12,768,12,12,3072,50257,1024,gelu,0,0,0,64,1,16,h100-sxm,8,8,,1,1,1,1,16,1,0,1,0,none,bf16,"
    "0.5,log,low,x\n",
    "mem,S,GPT,gpt,32,4096,32,32,16384,50257,2048,gelu,0,0,0,64,1,8,h100-sxm,8,8,,1,1,1,1,8,1,0,1,0,none,bf16,"
    "0.5,log,low,\"micro_batch not stated: 1 assumed\"\n",
  };
  g_autofree char *text = g_strconcat (header, rows[0], rows[1], rows[2], NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
  g_assert_no_error (error);
  sim_validate_deck_resolve (deck, 2);
  g_assert_cmpint (sim_validate_deck_row (deck, 1)->micro_batch, ==, 1);
  gboolean memory_decided = FALSE;
  for (guint i = 0; i < 3; i += 2)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      g_assert_cmpint (r->micro_batch_deck, ==, 1);
      SimValidateOptions o = { NULL, NULL, 1, FALSE, FALSE, TRUE, 0 };
      SimValidateRow c = *r;
      SimValidateResult res;
      sim_validate_run_row (&c, &o, &res);
      g_assert_cmpint (res.status, ==, SIM_VALIDATE_OK);
      g_assert_false (res.memory_over);
      double chosen = res.predicted_s;
      sim_validate_result_clear (&res);
      for (int m = 1; m <= r->global_batch_seqs / r->dp; m *= 2)
        {
          c.micro_batch = m;
          sim_validate_run_row (&c, &o, &res);
          g_assert_cmpint (res.status, ==, SIM_VALIDATE_OK);
          if (res.predicted_s < chosen)
            g_assert_true (res.memory_over);
          memory_decided |= res.predicted_s < chosen;
          sim_validate_result_clear (&res);
        }
    }
  g_assert_cmpint (sim_validate_deck_row (deck, 0)->micro_batch, >, 1);
  g_assert_true (memory_decided);
  g_autofree char *cmd = sim_validate_row_command (sim_validate_deck_row (deck, 0), &error);
  g_assert_no_error (error);
  g_autofree char *want = g_strdup_printf ("'parallel.micro_batch=%d'", sim_validate_deck_row (deck, 0)->micro_batch);
  g_assert_nonnull (strstr (cmd, want));
  /* Resolved by the threads that run the rows: the same micro-batches and predictions as resolved
   * first, then run. */
  g_autoptr (SimValidateDeck) lazy = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
  g_assert_no_error (error);
  SimValidateOptions o = { NULL, NULL, 2, FALSE, FALSE, FALSE, 0.9 };
  SimValidateResult a[3], b[3];
  sim_validate_run (deck, &o, a);
  sim_validate_resolve_and_run (lazy, &o, b);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpint (sim_validate_deck_row (lazy, i)->micro_batch, ==, sim_validate_deck_row (deck, i)->micro_batch);
      g_assert_cmpint (a[i].status, ==, b[i].status);
      g_assert_cmpfloat (a[i].predicted_s, ==, b[i].predicted_s);
      sim_validate_result_clear (&a[i]);
      sim_validate_result_clear (&b[i]);
    }
}

/* Validates one row (after the shared header) into *res, single-threaded. */
static void
run_row (const char *row, SimValidateResult *res)
{
  g_autofree char *text = g_strconcat (header, row, NULL);
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", NULL);
  g_assert_nonnull (deck);
  SimValidateOptions o = { NULL, NULL, 1, FALSE, FALSE, TRUE, 0 };
  sim_validate_run_row (sim_validate_deck_row (deck, 0), &o, res);
}

/* A run that ran is never refused for memory: the row is simulated and flagged. */
static void
test_memory_never_refuses (void)
{
  /* GPT 175B on 8 H100 with DDP: far over 80 GB, yet simulated */
  SimValidateResult res;
  run_row ("big,S,GPT,gpt,96,12288,96,96,49152,50257,2048,gelu,0,0,0,8,1,8,h100-sxm,8,8,,8,1,1,1,1,1,1,0,0,"
           "none,bf16,100,log,low,x\n", &res);
  g_assert_cmpint (res.status, ==, SIM_VALIDATE_OK);
  g_assert_true (res.memory_over);
  g_assert_cmpfloat (res.memory_gib, >, 80);
  g_assert_cmpfloat (res.predicted_s, >, 0);
  sim_validate_result_clear (&res);
}

/* A precision the GPU does not have did not run as stated: skipped, saying so (it was simulated as
 * bf16 before). */
static void
test_precision_unsupported (void)
{
  SimValidateResult res;
  run_row ("f8,S,Llama,llama,4,1024,16,8,4096,32000,512,swiglu,0,0,0,8,1,8,a100-sxm-80g,8,8,,1,1,1,1,8,1,0,1,0,"
           "none,fp8,1,log,low,x\n", &res);
  g_assert_cmpint (res.status, ==, SIM_VALIDATE_SKIPPED);
  g_assert_nonnull (strstr (res.reason, "precision fp8 on gpu 'a100-sxm-80g'"));
  g_assert_nonnull (strstr (res.reason, "no peak_fp8_TFLOPS"));
  sim_validate_result_clear (&res);
}

static void
test_stats (void)
{
  /* |e| = 1, 2, 3, 10: mean 16/4 = 4, median (2+3)/2 = 2.5, max 10 at index 3. */
  const double v[] = { 3, 10, 1, 2 };
  SimValidateStats s;
  sim_validate_stats (v, 4, &s);
  g_assert_cmpuint (s.n, ==, 4);
  g_assert_cmpfloat_with_epsilon (s.mape_pct, 4.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (s.median_abs_pct, 2.5, 1e-12);
  g_assert_cmpfloat (s.max_abs_pct, ==, 10);
  g_assert_cmpint (s.max_index, ==, 1);
  sim_validate_stats (v, 3, &s); /* 3, 10, 1: median 3 */
  g_assert_cmpfloat (s.median_abs_pct, ==, 3);
  sim_validate_stats (v, 0, &s);
  g_assert_true (isnan (s.mape_pct));
  g_assert_cmpint (s.max_index, ==, -1);
}

/* The fixture: three modelled rows and one gpu token without a profile, which is skipped with the
 * reason (never dropped). Per-row error = 100·(predicted − measured)/measured; threads do not change
 * the result (one simulation per row, no shared state). */
static void
test_fixture_rows (void)
{
  g_autofree char *path = fixture_path ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_load (path, &error);
  g_assert_no_error (error);
  guint n = sim_validate_deck_n_rows (deck);
  g_assert_cmpuint (n, ==, 4);
  SimValidateOptions serial = { NULL, NULL, 1, FALSE, FALSE, FALSE, 0 }, parallel = { NULL, NULL, 2, FALSE, FALSE, FALSE, 0 };
  g_autofree SimValidateResult *a = g_new0 (SimValidateResult, n);
  g_autofree SimValidateResult *b = g_new0 (SimValidateResult, n);
  sim_validate_run (deck, &serial, a);
  sim_validate_run (deck, &parallel, b);
  for (guint i = 0; i < n; i++)
    {
      const SimValidateRow *r = sim_validate_deck_row (deck, i);
      g_assert_cmpint (a[i].status, ==, b[i].status);
      g_assert_cmpfloat (a[i].measured_s, ==, r->step_time_s);
      if (strcmp (r->gpu, "v100-sxm-32g") == 0)
        {
          g_assert_cmpint (a[i].status, ==, SIM_VALIDATE_SKIPPED);
          g_assert_nonnull (strstr (a[i].reason, "v100-sxm-32g"));
          continue;
        }
      g_assert_cmpint (a[i].status, ==, SIM_VALIDATE_OK);
      g_assert_cmpfloat (a[i].predicted_s, ==, b[i].predicted_s);
      g_assert_cmpfloat (a[i].predicted_s, >, 0);
      g_assert_cmpfloat_with_epsilon (a[i].error_pct, 100 * (a[i].predicted_s - r->step_time_s) / r->step_time_s,
                                      1e-9);
      double sum = 0;
      for (int k = 0; k < SIM_BD_COUNT; k++)
        sum += a[i].breakdown_s[k];
      /* The breakdown sums to the simulated step (sim/step/runner.h). */
      g_assert_cmpfloat_with_epsilon (sum, a[i].predicted_s, 1e-6 * a[i].predicted_s + 1e-9);
    }
  for (guint i = 0; i < n; i++)
    {
      sim_validate_result_clear (&a[i]);
      sim_validate_result_clear (&b[i]);
    }
}

/* Two rows with the same configuration but other ids, sources and measurements are one simulation:
 * the same prediction, each with its own measured time and error. */
static void
test_duplicate_rows (void)
{
  g_autofree char *tail2 = g_strdup (row_tail);
  char *p = strstr (tail2, ",0.5,log,");
  memcpy (p, ",0.2,log,", 9);
  g_autofree char *text = g_strconcat (header, "r1", row_tail, "r2", tail2, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "dup.csv", &error);
  g_assert_no_error (error);
  SimValidateResult res[2];
  SimValidateOptions o = { NULL, NULL, 2, FALSE, FALSE };
  sim_validate_run (deck, &o, res);
  g_assert_cmpint (res[0].status, ==, SIM_VALIDATE_OK);
  g_assert_cmpint (res[1].status, ==, SIM_VALIDATE_OK);
  g_assert_cmpfloat (res[0].predicted_s, ==, res[1].predicted_s);
  g_assert_cmpfloat (res[1].measured_s, ==, 0.2);
  g_assert_cmpfloat_with_epsilon (res[1].error_pct, 100 * (res[1].predicted_s - 0.2) / 0.2, 1e-9);
  g_assert_cmpfloat (res[1].wall_s, ==, 0); /* not simulated again */
  sim_validate_result_clear (&res[0]);
  sim_validate_result_clear (&res[1]);
}

/* Every arch key DECK.md lists reaches the scenario: DeepSeek-V3's defaults for family deepseek,
 * today's default decoder for a silent 'other', ALiBi, sliding windows, encoders, GeGLU. */
/* The scenario validate builds for the first row of a deck given as text. */
static SimScenario *
first_row_scenario (const char *text)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SimValidateDeck) deck = sim_validate_deck_parse (text, strlen (text), "t.csv", &error);
  g_assert_no_error (error);
  SimValidateOptions o = { NULL, NULL, 1, FALSE, FALSE, TRUE, 0 };
  SimScenario *sc = sim_validate_row_scenario (sim_validate_deck_row (deck, 0), &o, &error);
  g_assert_no_error (error);
  return sc;
}

static void
test_arch_modelled (void)
{
  const char *h = "notes,id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,"
                  "moe_experts,moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,"
                  "nvlink_domain,nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,"
                  "step_time_s,step_time_basis,confidence,framework,arch\n";
  const struct { const char *family, *moe, *arch; } rows[] = {
    { "deepseek", "64,8,1024", "" },
    { "other", "0,0,0", "" },
    { "other", "0,0,0", "position=alibi;norm=layernorm;mlp_act=geglu" },
    { "other", "0,0,0", "attention=swa:128" },
    { "gpt", "0,0,0", "encoder=1" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *text = g_strdup_printf ("%sn,r%zu,S,M,%s,4,1024,16,16,4096,32000,512,swiglu,%s,64,4,8,"
                                               "h100-sxm,8,8,,1,1,1,1,8,%d,0,1,0,none,bf16,0.5,log,low,,%s\n",
                                               h, i, rows[i].family, rows[i].moe, i == 0 ? 8 : 1, rows[i].arch);
      g_autoptr (SimScenario) sc = first_row_scenario (text);
      const ModelShape *m = sim_scenario_shape (sc);
      switch (i)
        {
        case 0:
          g_assert_cmpint (m->kv_lora_rank, ==, 512);
          g_assert_cmpint (m->q_lora_rank, ==, 1536);
          g_assert_cmpint (m->moe_shared_experts, ==, 1);
          g_assert_cmpint (m->moe_dense_layers, ==, 3);
          g_assert_cmpint (m->mtp_depth, ==, 0);
          break;
        case 1:
          g_assert_cmpint (m->norm, ==, MODEL_NORM_RMSNORM);
          g_assert_cmpint (m->position, ==, MODEL_POS_ROPE);
          break;
        case 2:
          g_assert_cmpint (m->position, ==, MODEL_POS_ALIBI);
          g_assert_cmpint (m->norm, ==, MODEL_NORM_LAYERNORM);
          g_assert_cmpint (m->activation, ==, MODEL_ACT_GEGLU);
          break;
        case 3: g_assert_cmpint (m->attention_window, ==, 128); break;
        default:
          g_assert_true (m->encoder);
          g_assert_cmpfloat (m->mlm_fraction, ==, 0.15);
          break;
        }
    }
}

/* Rows whose layers pp·vpp does not divide still run: the embedding and loss (and MTP) as layers
 * where that divides, else uneven first and last ranks with the lighter last (validate.h). */
static void
test_pipeline_split (void)
{
  const char *h = "id,source,model,family,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,activation,"
                  "moe_experts,moe_top_k,moe_ffn_hidden,global_batch_seqs,micro_batch,gpus,gpu,gpus_per_node,"
                  "nvlink_domain,nic_gbps_per_gpu,tp,pp,vpp,cp,dp,ep,sequence_parallel,zero,fsdp,recompute,precision,"
                  "step_time_s,step_time_basis,confidence,notes,framework,arch\n";
  const struct { int layers, pp, vpp; const char *arch; gboolean embed; int first, last; } rows[] = {
    { 61, 16, 1, "", FALSE, 3, 2 },              /* 3 + 14·4 + 2 */
    { 61, 16, 1, "mtp_depth=1", TRUE, 0, 0 },    /* 61 + 2 + 1 = 64 */
    { 34, 4, 2, "", FALSE, 8, 6 },               /* 8 + 2·10 + 6, each a multiple of vpp */
    { 7, 4, 1, "", FALSE, 2, 1 },                /* 2 + 2·2 + 1 */
    { 126, 8, 1, "", TRUE, 0, 0 },               /* 126 + 2 = 128 */
    { 32, 4, 1, "", FALSE, 0, 0 },               /* even */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *text = g_strdup_printf ("%sr%zu,S,M,llama,%d,1024,16,8,4096,32000,512,swiglu,0,0,0,64,1,%d,"
                                               "h100-sxm,8,8,400,1,%d,%d,1,2,1,0,1,0,none,bf16,0.5,log,low,n,,%s\n",
                                               h, i, rows[i].layers, 2 * rows[i].pp, rows[i].pp, rows[i].vpp, rows[i].arch);
      g_autoptr (SimScenario) sc = first_row_scenario (text);
      const ModelPlan *p = sim_scenario_plan (sc);
      g_assert_cmpint (p->pp_embed_loss_layers, ==, rows[i].embed);
      g_assert_cmpint (p->pp_first_layers, ==, rows[i].first);
      g_assert_cmpint (p->pp_last_layers, ==, rows[i].last);
    }
  /* 96 sequences over dp 16: 6 interleaved micro-batches per replica on pp 4, which Megatron-Core
   * runs with a micro-batch group of 6 (6 mod 5 = 1 < pp). */
  g_autofree char *text = g_strdup_printf ("%sg6,S,M,llama,32,1024,16,8,4096,32000,512,swiglu,0,0,0,96,1,128,"
                                           "h100-sxm,8,8,400,2,4,2,1,16,1,1,1,0,none,bf16,0.5,log,low,n,,\n", h);
  g_autoptr (SimScenario) sc = first_row_scenario (text);
  g_assert_cmpint (sim_scenario_plan (sc)->mb_group, ==, 6);
  /* An fsdp2 row is split as torchtitan splits it: 126 layers over 8 stages 15, 16 x 6, 15 (where
   * Megatron's rule counts the embedding and the loss as layers). */
  g_autofree char *tt = g_strdup_printf ("%stt,S,M,llama,126,1024,16,8,4096,32000,512,swiglu,0,0,0,64,1,16,"
                                         "h100-sxm,8,8,400,1,8,1,1,2,1,0,2,1,none,bf16,0.5,log,low,n,fsdp2,\n", h);
  g_autoptr (SimScenario) st = first_row_scenario (tt);
  const ModelPlan *tp = sim_scenario_plan (st);
  g_assert_false (tp->pp_embed_loss_layers);
  g_assert_nonnull (tp->pp_layout);
  g_assert_cmpint (tp->pp_layout[1], ==, 15);
  g_assert_cmpint (tp->pp_layout[2], ==, 16);
  g_assert_cmpint (tp->pp_layout[8], ==, 15);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/validate/parse", test_parse);
  g_test_add_func ("/sim/validate/arch-modelled", test_arch_modelled);
  g_test_add_func ("/sim/validate/pipeline-split", test_pipeline_split);
  g_test_add_func ("/sim/validate/malformed", test_malformed);
  g_test_add_func ("/sim/validate/columns-by-name", test_columns_by_name);
  g_test_add_func ("/sim/validate/framework-column", test_framework_column);
  g_test_add_func ("/sim/validate/row-facts", test_row_facts);
  g_test_add_func ("/sim/validate/row-te1-layouts", test_row_te1_layouts);
  g_test_add_func ("/sim/validate/readme-interleaved", test_readme_interleaved);
  g_test_add_func ("/sim/validate/memory-never-refuses", test_memory_never_refuses);
  g_test_add_func ("/sim/validate/precision-unsupported", test_precision_unsupported);
  g_test_add_func ("/sim/validate/unstated-micro-batch", test_unstated_micro_batch);
  g_test_add_func ("/sim/validate/stats", test_stats);
  g_test_add_func ("/sim/validate/fixture-rows", test_fixture_rows);
  g_test_add_func ("/sim/validate/duplicate-rows", test_duplicate_rows);
  return g_test_run ();
}
