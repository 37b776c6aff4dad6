/* trainsim import's readers through their API: Megatron-LM arguments and NeMo configs give the
 * keys their sources define (each expectation cites the default or rule of Megatron-LM core_v0.15.0
 * megatron/training/arguments.py or NeMo's megatron_gpt_model.py it checks), every input is either
 * mapped or listed, bad values fail naming the input, and the flag table is well formed. The
 * round trips of whole MLPerf scenarios are in import-cmd.sh. */
#include <string.h>
#include <glib.h>
#include "sim/scenario/import.h"
#include "sim/scenario/import-megatron.h"
#include "sim/scenario/import-megatron-flags.h"
#include "sim/scenario/import-nemo.h"
#include "sim/scenario/yaml-lite.h"

static SimImport *
megatron_ok (const char *cmdline, int gpus)
{
  g_auto (GStrv) words = NULL;
  g_assert_true (g_shell_parse_argv (cmdline, NULL, &words, NULL));
  SimImport *imp = sim_import_new ("test");
  SimImportOptions o = { NULL, NULL, gpus, 0 };
  GError *error = NULL;
  g_assert_true (sim_import_megatron (imp, (const char *const *) words, &o, &error));
  g_assert_no_error (error);
  return imp;
}

static GError *
megatron_fails (const char *cmdline)
{
  g_auto (GStrv) words = NULL;
  g_assert_true (g_shell_parse_argv (cmdline, NULL, &words, NULL));
  g_autoptr (SimImport) imp = sim_import_new ("test");
  GError *error = NULL;
  g_assert_false (sim_import_megatron (imp, (const char *const *) words, NULL, &error));
  g_assert_nonnull (error);
  return error;
}

static gboolean
has_line (const SimImport *imp, const char *prefix)
{
  for (guint i = 0; i < sim_import_n_lines (imp); i++)
    if (g_str_has_prefix (sim_import_line (imp, i), prefix))
      return TRUE;
  return FALSE;
}

#define KEY(imp, g, k) sim_import_get (imp, g, k)

static void
test_megatron_defaults (void)
{
  /* A bare GPT: Megatron's defaults (arguments.py) fill the rest. */
  g_autoptr (SimImport) imp = megatron_ok ("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
                                           "--seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 4 "
                                           "--tokenizer-type GPT2BPETokenizer", 0);
  g_assert_cmpstr (KEY (imp, "model", "ffn_hidden"), ==, "8192");         /* 4 x hidden */
  g_assert_cmpstr (KEY (imp, "model", "kv_heads"), ==, "16");             /* no GQA */
  g_assert_cmpstr (KEY (imp, "model", "vocab"), ==, "50257");             /* GPT-2 BPE */
  g_assert_cmpstr (KEY (imp, "model", "vocab_multiple"), ==, "128");
  g_assert_cmpstr (KEY (imp, "model", "activation"), ==, "gelu");
  g_assert_cmpstr (KEY (imp, "model", "norm"), ==, "layernorm");
  g_assert_cmpstr (KEY (imp, "model", "position"), ==, "learned");
  g_assert_cmpstr (KEY (imp, "model", "max_positions"), ==, "2048");
  g_assert_cmpstr (KEY (imp, "model", "tied_embeddings"), ==, "true");
  g_assert_cmpstr (KEY (imp, "model", "bias"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "tp"), ==, "1");
  g_assert_cmpstr (KEY (imp, "parallel", "zero"), ==, "0");
  g_assert_cmpstr (KEY (imp, "parallel", "dropout"), ==, "true");         /* 0.1 by default */
  g_assert_cmpstr (KEY (imp, "parallel", "param_dtype"), ==, "fp32");     /* no --bf16 / --fp16 */
  g_assert_cmpstr (KEY (imp, "parallel", "matmul_dtype"), ==, "fp32");
  g_assert_cmpstr (KEY (imp, "parallel", "global_batch_per_dp"), ==, "4"); /* mbs x dp */
  g_assert_null (KEY (imp, "parallel", "global_batch"));
  g_assert_null (KEY (imp, "cluster", "gpus"));
  g_assert_true (has_line (imp, "note: [cluster] gpus"));
  g_assert_null (KEY (imp, "parallel", "pp_blocking"));                   /* pp 1 */
}

static void
test_megatron_llama_style (void)
{
  g_autoptr (SimImport) imp = megatron_ok (
    "--num-layers=80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
    "--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
    "--disable-bias-linear --attention-dropout 0 --hidden-dropout 0 --seq-length 8192 --max-position-embeddings 8192 "
    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 5 "
    "--context-parallel-size 2 --sequence-parallel --micro-batch-size 1 --global-batch-size 512 "
    "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --bf16 --fp8-format hybrid "
    "--fp8-recipe tensorwise --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
    "--tokenizer-type NullTokenizer --vocab-size 128255 --use-tp-pp-dp-mapping --train-samples 1000 "
    "--eval-interval 100 --eval-iters 2", 512);
  g_assert_cmpstr (KEY (imp, "model", "layers"), ==, "80");               /* --flag=value */
  g_assert_cmpstr (KEY (imp, "model", "kv_heads"), ==, "8");
  g_assert_cmpstr (KEY (imp, "model", "ffn_hidden"), ==, "21824");        /* int(4h 2/3 / 64) 64 */
  g_assert_cmpstr (KEY (imp, "model", "vocab"), ==, "128256");            /* NullTokenizer adds EOD */
  g_assert_cmpstr (KEY (imp, "model", "activation"), ==, "swiglu");
  g_assert_cmpstr (KEY (imp, "model", "norm"), ==, "rmsnorm");
  g_assert_cmpstr (KEY (imp, "model", "position"), ==, "rope");
  g_assert_null (KEY (imp, "model", "max_positions"));
  g_assert_cmpstr (KEY (imp, "model", "tied_embeddings"), ==, "false");
  g_assert_cmpstr (KEY (imp, "model", "bias"), ==, "false");
  g_assert_cmpstr (KEY (imp, "parallel", "vpp"), ==, "4");                /* 80 / 4 / 5 */
  g_assert_cmpstr (KEY (imp, "parallel", "pp_blocking"), ==, "false");    /* interleaved, overlapped */
  g_assert_cmpstr (KEY (imp, "parallel", "cp"), ==, "2");
  g_assert_cmpstr (KEY (imp, "parallel", "sp"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "zero"), ==, "1");
  g_assert_cmpstr (KEY (imp, "parallel", "dp_overlap"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "matmul_dtype"), ==, "fp8");
  g_assert_cmpstr (KEY (imp, "parallel", "fp8_scaling"), ==, "current");
  g_assert_cmpstr (KEY (imp, "parallel", "recompute"), ==, "full");
  g_assert_cmpstr (KEY (imp, "parallel", "dropout"), ==, "false");
  g_assert_cmpstr (KEY (imp, "parallel", "grad_dtype"), ==, "fp32");     /* bf16: fp32 main grads */
  g_assert_cmpstr (KEY (imp, "parallel", "order"), ==, "tp,cp,ep,pp,dp");
  g_assert_cmpstr (KEY (imp, "cluster", "gpus"), ==, "512");
  g_assert_cmpstr (KEY (imp, "training", "tokens"), ==, "8192000");       /* samples x seq */
  g_assert_cmpstr (KEY (imp, "training", "eval_interval_seqs"), ==, "51200");
  g_assert_cmpstr (KEY (imp, "training", "eval_seqs"), ==, "1024");
  /* With rope the position limit has no table: listed, and the only leftover. */
  g_assert_cmpuint (sim_import_n_lines (imp), ==, 1);
  g_assert_true (has_line (imp, "ignored: --max-position-embeddings 8192 (no trainsim equivalent)"));
}

static void
test_megatron_pipeline_rules (void)
{
  /* Embedding and loss counted as layers: (126 + 2) / 8 / 2 = 8 virtual stages. */
  g_autoptr (SimImport) a = megatron_ok ("--num-layers 126 --hidden-size 1024 --num-attention-heads 8 "
                                         "--pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 2 "
                                         "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split", 0);
  g_assert_cmpstr (KEY (a, "parallel", "vpp"), ==, "8");
  g_assert_cmpstr (KEY (a, "parallel", "pp_embed_loss_layers"), ==, "true");
  /* Uneven first and last stages (DeepSeek-V3's 61 layers as 3 + 14·4 + 2): the stated counts. */
  g_autoptr (SimImport) u = megatron_ok ("--num-layers 61 --hidden-size 1024 --num-attention-heads 8 "
                                         "--pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 3 "
                                         "--decoder-last-pipeline-num-layers 2", 0);
  g_assert_cmpstr (KEY (u, "parallel", "pp_first_stage_layers"), ==, "3");
  g_assert_cmpstr (KEY (u, "parallel", "pp_last_stage_layers"), ==, "2");
  g_assert_false (has_line (u, "unknown: --decoder-first-pipeline-num-layers"));
  /* A layer-by-layer layout: its string as [parallel] pp_layout, the flag no longer unknown. */
  g_autoptr (SimImport) lay = megatron_ok ("--num-layers 126 --hidden-size 1024 --num-attention-heads 8 "
                                           "--pipeline-model-parallel-size 8 "
                                           "--pipeline-model-parallel-layout Et*7|(t*8|)*14t*7L", 0);
  g_assert_cmpstr (KEY (lay, "parallel", "pp_layout"), ==, "Et*7|(t*8|)*14t*7L");
  g_assert_false (has_line (lay, "unknown: --pipeline-model-parallel-layout"));
  /* A micro-batch group other than pp is the interleaved table's. */
  g_autoptr (SimImport) grp = megatron_ok ("--num-layers 8 --pipeline-model-parallel-size 2 "
                                           "--num-virtual-stages-per-pipeline-rank 2 "
                                           "--microbatch-group-size-per-virtual-pipeline-stage 3", 0);
  g_assert_cmpstr (KEY (grp, "parallel", "microbatch_group_size"), ==, "3");
  /* Without interleaving, sends are batched then synchronized: blocking (p2p_communication.py). */
  g_autoptr (SimImport) b = megatron_ok ("--pipeline-model-parallel-size 4", 0);
  g_assert_cmpstr (KEY (b, "parallel", "pp_blocking"), ==, "true");
  g_autoptr (SimImport) c = megatron_ok ("--num-layers 8 --pipeline-model-parallel-size 2 "
                                         "--num-virtual-stages-per-pipeline-rank 2 --no-overlap-p2p-communication", 0);
  g_assert_cmpstr (KEY (c, "parallel", "vpp"), ==, "2");
  g_assert_cmpstr (KEY (c, "parallel", "pp_blocking"), ==, "true");
  /* Sequence parallelism is off at TP 1. */
  g_autoptr (SimImport) d = megatron_ok ("--sequence-parallel", 0);
  g_assert_cmpstr (KEY (d, "parallel", "sp"), ==, "false");
  /* No model arguments: no [model] keys, a note. */
  g_assert_null (KEY (d, "model", "activation"));
  g_assert_true (has_line (d, "note: no --num-layers"));
}

static void
test_megatron_listed (void)
{
  g_autoptr (SimImport) imp = megatron_ok (
    "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --lr 1e-4 --data-path a b c --save /x "
    "--tp-comm-overlap-cfg ub.yaml --no-such-flag 3 --window-size 128,0 --num-experts 4 --moe-router-topk 1 "
    "--moe-grouped-gemm --moe-token-dispatcher-type alltoall --squared-relu", 0);
  g_assert_true (has_line (imp, "ignored: --lr 1e-4 (no trainsim equivalent)"));
  g_assert_true (has_line (imp, "ignored: --data-path a b c (no trainsim equivalent)"));
  g_assert_true (has_line (imp, "ignored: --save /x"));
  g_assert_true (has_line (imp, "unknown: --tp-comm-overlap-cfg ub.yaml ("));
  g_assert_true (has_line (imp, "unknown: --no-such-flag 3 (not an argument"));
  g_assert_false (has_line (imp, "unknown: --window-size"));
  g_assert_cmpstr (KEY (imp, "model", "attention_window"), ==, "129"); /* TE: left + 1 keys */
  g_assert_true (has_line (imp, "unknown: --squared-relu"));
  g_assert_false (has_line (imp, "unknown: --moe-grouped-gemm"));
  g_assert_cmpstr (KEY (imp, "model", "moe_experts"), ==, "4");
  g_assert_cmpstr (KEY (imp, "model", "moe_top_k"), ==, "1");
  g_assert_cmpstr (KEY (imp, "model", "moe_ffn_hidden"), ==, "256");      /* the dense width */
  /* MoE with Megatron's defaults: per-expert GEMMs and the all-gather dispatcher are not modelled. */
  g_autoptr (SimImport) moe = megatron_ok ("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --num-experts 8", 0);
  g_assert_true (has_line (moe, "unknown: --moe-grouped-gemm (absent)"));
  g_assert_true (has_line (moe, "unknown: --moe-token-dispatcher-type allgather"));
  g_assert_cmpstr (KEY (moe, "model", "moe_top_k"), ==, "2");
  /* The flex dispatcher with DeepEP: one copy per target node; DeepEP alone is ignored. */
  g_autoptr (SimImport) ep = megatron_ok ("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --num-experts 8 "
                                          "--moe-grouped-gemm --moe-token-dispatcher-type flex --moe-enable-deepep", 0);
  g_assert_cmpstr (KEY (ep, "parallel", "moe_dispatcher"), ==, "deepep");
  g_autoptr (SimImport) ep2 = megatron_ok ("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --num-experts 8 "
                                           "--moe-grouped-gemm --moe-token-dispatcher-type alltoall --moe-enable-deepep", 0);
  g_assert_null (KEY (ep2, "parallel", "moe_dispatcher"));
  g_assert_true (has_line (ep2, "ignored: --moe-enable-deepep"));
  /* MoE options without --num-experts are listed, not dropped. */
  g_autoptr (SimImport) lone = megatron_ok ("--moe-router-topk 2", 0);
  g_assert_true (has_line (lone, "unknown: --moe-router-topk 2 (read only with"));
}

static void
test_megatron_bad_values (void)
{
  static const struct {
    const char *cmdline;
    const char *needle;
    int code;
  } cases[] = {
    { "--num-layers many", "--num-layers 'many': not an integer", SIM_IMPORT_ERROR_VALUE },
    { "--hidden-dropout high", "--hidden-dropout 'high': not a number", SIM_IMPORT_ERROR_VALUE },
    { "--tensor-model-parallel-size 0", "--tensor-model-parallel-size 0: must be at least 1", SIM_IMPORT_ERROR_VALUE },
    { "--num-layers 2 --normalization BatchNorm", "--normalization 'BatchNorm'", SIM_IMPORT_ERROR_VALUE },
    { "--lr fast", "--lr 'fast': not a number", SIM_IMPORT_ERROR_VALUE },
    { "--seed 1.5", "--seed '1.5': not an integer", SIM_IMPORT_ERROR_VALUE },
    { "--moe-aux-loss-coeff 0.1 x", "--moe-aux-loss-coeff 'x': not a number", SIM_IMPORT_ERROR_VALUE },
    { "--num-layers 10 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2",
      "--num-layers-per-virtual-pipeline-stage 2: does not divide", SIM_IMPORT_ERROR_VALUE },
    { "--num-layers 10 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 1 "
      "--decoder-first-pipeline-num-layers 4", "--num-virtual-stages-per-pipeline-rank there", SIM_IMPORT_ERROR_VALUE },
    { "--recompute-granularity full", "needs --recompute-method", SIM_IMPORT_ERROR_VALUE },
    { "--overlap-param-gather", "--overlap-grad-reduce", SIM_IMPORT_ERROR_VALUE },
    { "--bf16 --fp16", "--bf16 and --fp16", SIM_IMPORT_ERROR_VALUE },
    { "--sequence-parallel yes", "--sequence-parallel takes no value", SIM_IMPORT_ERROR_SYNTAX },
    { "--num-layers", "--num-layers takes one value", SIM_IMPORT_ERROR_SYNTAX },
    { "--num-layers 1 2", "--num-layers takes one value", SIM_IMPORT_ERROR_SYNTAX },
    { "num-layers 1", "'num-layers': not an option", SIM_IMPORT_ERROR_SYNTAX },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GError *error = megatron_fails (cases[i].cmdline);
      if (!strstr (error->message, cases[i].needle) || error->code != cases[i].code)
        g_error ("%s: '%s' lacks '%s'", cases[i].cmdline, error->message, cases[i].needle);
      g_error_free (error);
    }
}

/* The table holds each argument once, each named --x, with a reason for every unknown one. */
static void
test_flag_table (void)
{
  guint n = 0;
  const SimMegatronFlag *flags = sim_megatron_flags (&n);
  g_assert_cmpuint (n, >, 500);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (g_str_has_prefix (flags[i].name, "--"));
      g_assert_null (strchr (flags[i].name, '='));
      g_assert_true (g_hash_table_add (seen, (gpointer) flags[i].name));
      g_assert_true ((flags[i].cls == SIM_MEGATRON_UNKNOWN) == (flags[i].why != NULL));
      g_assert_true (sim_megatron_flag (flags[i].name) == &flags[i]);
    }
  g_assert_null (sim_megatron_flag ("--not-a-megatron-flag"));
}

/* Layer CUDA graphs from either generation of Megatron's flags. */
static void
test_megatron_cuda_graphs (void)
{
  static const struct { const char *flags, *want; } cases[] = {
    { "--cuda-graph-impl transformer_engine", "true" }, { "--cuda-graph-impl local", "true" },
    { "--enable-cuda-graph", "true" }, { "--external-cuda-graph", "true" }, { "--cuda-graph-impl none", NULL },
    { "", NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *cmd = g_strdup_printf ("--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                                              "--seq-length 128 --max-position-embeddings 128 "
                                              "--tokenizer-type GPT2BPETokenizer %s", cases[i].flags);
      g_autoptr (SimImport) imp = megatron_ok (cmd, 8);
      g_assert_cmpstr (KEY (imp, "parallel", "cuda_graphs"), ==, cases[i].want);
    }
}

/* Multi-latent attention with Megatron's defaults for what is not given, multi-token prediction,
 * and sliding windows on every other layer (--window-attn-skip-freq 2); a window reaching later
 * tokens or a sparser pattern is listed. */
static void
test_megatron_attention_variants (void)
{
  g_autoptr (SimImport) mla = megatron_ok ("--num-layers 4 --hidden-size 256 --num-attention-heads 8 "
                                           "--multi-latent-attention --q-lora-rank 96 --kv-lora-rank 64 "
                                           "--mtp-num-layers 1", 0);
  g_assert_cmpstr (KEY (mla, "model", "q_lora_rank"), ==, "96");
  g_assert_cmpstr (KEY (mla, "model", "kv_lora_rank"), ==, "64");
  g_assert_cmpstr (KEY (mla, "model", "qk_nope_head_dim"), ==, "128");
  g_assert_cmpstr (KEY (mla, "model", "qk_rope_head_dim"), ==, "64");
  g_assert_cmpstr (KEY (mla, "model", "v_head_dim"), ==, "128");
  g_assert_cmpstr (KEY (mla, "model", "mtp_depth"), ==, "1");
  g_autoptr (SimImport) plain = megatron_ok ("--num-layers 4 --hidden-size 256 --num-attention-heads 8 --kv-lora-rank 64", 0);
  g_assert_null (KEY (plain, "model", "kv_lora_rank"));
  g_assert_true (has_line (plain, "ignored: --kv-lora-rank 64"));
  g_autoptr (SimImport) swa = megatron_ok ("--num-layers 4 --hidden-size 256 --num-attention-heads 8 "
                                           "--window-size \"(127, 0)\" --window-attn-skip-freq 2", 0);
  g_assert_cmpstr (KEY (swa, "model", "attention_window"), ==, "128");
  g_assert_cmpstr (KEY (swa, "model", "window_layer_freq"), ==, "2");
  g_autoptr (SimImport) wide = megatron_ok ("--num-layers 4 --hidden-size 256 --num-attention-heads 8 "
                                            "--window-size 64,64", 0);
  g_assert_null (KEY (wide, "model", "attention_window"));
  g_assert_true (has_line (wide, "unknown: --window-size 64,64"));
  g_autoptr (SimImport) sparse = megatron_ok ("--num-layers 4 --hidden-size 256 --num-attention-heads 8 "
                                              "--window-size 128,0 --window-attn-skip-freq 4", 0);
  g_assert_cmpstr (KEY (sparse, "model", "attention_window"), ==, "129");
  g_assert_null (KEY (sparse, "model", "window_layer_freq"));
  g_assert_true (has_line (sparse, "unknown: --window-attn-skip-freq 4"));
}

/* The precision-aware optimizer's state dtypes: bf16 weights get TE's remainder masters, equal
 * moment dtypes become moment_dtype; without the flag the dtypes are ignored; what trainsim cannot
 * hold (fp16 masters, fp8 or mixed moments) is listed as unknown. */
static void
test_megatron_optimizer_state (void)
{
  const char *base = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
                     "--max-position-embeddings 128 --tokenizer-type GPT2BPETokenizer --bf16 ";
  g_autofree char *aware = g_strconcat (base, "--use-precision-aware-optimizer --exp-avg-dtype bf16 "
                                              "--exp-avg-sq-dtype bf16", NULL);
  g_autoptr (SimImport) a = megatron_ok (aware, 8);
  g_assert_cmpstr (KEY (a, "parallel", "master_weights"), ==, "remainder");
  g_assert_cmpstr (KEY (a, "parallel", "moment_dtype"), ==, "bf16");
  g_autofree char *plain = g_strconcat (base, "--exp-avg-dtype bf16", NULL);
  g_autoptr (SimImport) p = megatron_ok (plain, 8);
  g_assert_null (KEY (p, "parallel", "master_weights"));
  g_assert_null (KEY (p, "parallel", "moment_dtype"));
  g_assert_true (has_line (p, "ignored: --exp-avg-dtype bf16"));
  g_autofree char *odd = g_strconcat (base, "--use-precision-aware-optimizer --main-params-dtype fp16 "
                                            "--exp-avg-dtype fp8", NULL);
  g_autoptr (SimImport) o = megatron_ok (odd, 8);
  g_assert_null (KEY (o, "parallel", "master_weights"));
  g_assert_null (KEY (o, "parallel", "moment_dtype"));
  g_assert_true (has_line (o, "unknown: --main-params-dtype fp16"));
  g_assert_true (has_line (o, "unknown: --exp-avg-dtype fp8 --exp-avg-sq-dtype fp32"));
}

static SimImport *
nemo_ok (const char *yaml, int gpus)
{
  GError *error = NULL;
  g_autoptr (SimYamlNode) root = sim_yaml_parse (yaml, -1, "c.yaml", &error);
  g_assert_no_error (error);
  SimImport *imp = sim_import_new ("test");
  SimImportOptions o = { NULL, NULL, gpus, 0 };
  g_assert_true (sim_import_nemo (imp, root, "c.yaml", &o, &error));
  g_assert_no_error (error);
  return imp;
}

/* NeMo 1.x's Apex optimizer state: fp32 state over bf16 weights keeps bf16 remainders, bf16 state no
 * master and bf16 moments; fused_adam keeps Megatron's fp32 masters. */
static void
test_nemo_optimizer_state (void)
{
  static const struct { const char *optim, *master, *moments; } cases[] = {
    { "    name: distributed_fused_adam\n", "remainder", NULL },
    { "    name: distributed_fused_adam\n    dtype: bf16\n", "none", "bf16" },
    { "    name: fused_adam\n", NULL, NULL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *yaml = g_strdup_printf (
        "trainer:\n  devices: 8\n  num_nodes: 1\n  precision: bf16\n  max_steps: -1\n"
        "model:\n  mcore_gpt: True\n  micro_batch_size: 1\n  global_batch_size: 8\n  encoder_seq_length: 512\n"
        "  max_position_embeddings: 512\n  num_layers: 2\n  hidden_size: 64\n  num_attention_heads: 4\n"
        "  megatron_amp_O2: True\n  tokenizer:\n    library: 'megatron'\n    type: 'GPT2BPETokenizer'\n"
        "  optim:\n%s", cases[i].optim);
      g_autoptr (SimImport) imp = nemo_ok (yaml, 0);
      g_assert_cmpstr (KEY (imp, "parallel", "master_weights"), ==, cases[i].master);
      g_assert_cmpstr (KEY (imp, "parallel", "moment_dtype"), ==, cases[i].moments);
    }
}

/* NeMo's flex dispatcher with DeepEP becomes DeepEP's dispatch. */
static void
test_nemo_deepep (void)
{
  const char *yaml =
    "trainer:\n  devices: 8\n  num_nodes: 1\n  precision: bf16\n  max_steps: -1\n"
    "model:\n  mcore_gpt: True\n  micro_batch_size: 1\n  global_batch_size: 8\n  encoder_seq_length: 512\n"
    "  max_position_embeddings: 512\n  num_layers: 2\n  hidden_size: 64\n  num_attention_heads: 4\n"
    "  megatron_amp_O2: True\n  num_moe_experts: 8\n  moe_router_topk: 2\n  moe_grouped_gemm: True\n"
    "  moe_token_dispatcher_type: flex\n  moe_enable_deepep: True\n"
    "  tokenizer:\n    library: 'megatron'\n    type: 'GPT2BPETokenizer'\n";
  g_autoptr (SimImport) imp = nemo_ok (yaml, 0);
  g_assert_cmpstr (KEY (imp, "parallel", "moe_dispatcher"), ==, "deepep");
}

/* Megatron-Core's uneven first and last stages and its layout string, as NeMo 2's
 * TransformerConfig names them (one model, two pipeline settings). */
static void
test_nemo_uneven_pipeline (void)
{
#define NEMO_PP4_HEAD                                                                                           \
  "trainer:\n  devices: 8\n  num_nodes: 2\n  precision: bf16\n  max_steps: -1\n"                             \
  "model:\n  mcore_gpt: True\n  micro_batch_size: 1\n  global_batch_size: 16\n  encoder_seq_length: 512\n"   \
  "  max_position_embeddings: 512\n  num_layers: 30\n  hidden_size: 64\n  num_attention_heads: 4\n"          \
  "  pipeline_model_parallel_size: 4\n  megatron_amp_O2: True\n"                                             \
  "  tokenizer:\n    library: 'megatron'\n    type: 'GPT2BPETokenizer'\n"
  g_autoptr (SimImport) imp = nemo_ok (NEMO_PP4_HEAD "  num_layers_in_first_pipeline_stage: 6\n"
                                       "  num_layers_in_last_pipeline_stage: 8\n"
                                       "  microbatch_group_size_per_vp_stage: 4\n", 0);
  g_assert_cmpstr (KEY (imp, "parallel", "pp_first_stage_layers"), ==, "6");
  g_assert_cmpstr (KEY (imp, "parallel", "pp_last_stage_layers"), ==, "8");
  g_assert_cmpstr (KEY (imp, "parallel", "microbatch_group_size"), ==, "4");
  g_autoptr (SimImport) lay = nemo_ok (NEMO_PP4_HEAD "  pipeline_model_parallel_layout: 'Et*6|t*8|t*8|t*8L'\n", 0);
  g_assert_cmpstr (KEY (lay, "parallel", "pp_layout"), ==, "Et*6|t*8|t*8|t*8L");
#undef NEMO_PP4_HEAD
}

static void
test_nemo_defaults (void)
{
  /* megatron_gpt_config.yaml's shape keys with NeMo's code defaults for the rest. */
  g_autoptr (SimImport) imp = nemo_ok ("trainer:\n  devices: 8\n  num_nodes: 2\n  precision: bf16\n  max_steps: -1\n"
                                       "model:\n  mcore_gpt: True\n  transformer_engine: True\n  micro_batch_size: 4\n"
                                       "  global_batch_size: 64\n  encoder_seq_length: 512\n  max_position_embeddings: 512\n"
                                       "  num_layers: 12\n  hidden_size: 768\n  ffn_hidden_size: 3072\n"
                                       "  num_attention_heads: 12\n  megatron_amp_O2: True\n"
                                       "  tokenizer:\n    library: 'megatron'\n    type: 'GPT2BPETokenizer'\n"
                                       "  optim:\n    name: distributed_fused_adam\n    lr: 2e-4\n", 0);
  g_assert_cmpstr (KEY (imp, "cluster", "gpus"), ==, "16");
  g_assert_cmpstr (KEY (imp, "model", "vocab"), ==, "50257");
  g_assert_cmpstr (KEY (imp, "model", "kv_heads"), ==, "12");
  g_assert_cmpstr (KEY (imp, "model", "activation"), ==, "gelu");
  g_assert_cmpstr (KEY (imp, "model", "position"), ==, "learned");
  g_assert_cmpstr (KEY (imp, "model", "max_positions"), ==, "512");
  g_assert_cmpstr (KEY (imp, "model", "tied_embeddings"), ==, "true");
  g_assert_cmpstr (KEY (imp, "model", "bias"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "zero"), ==, "1");
  g_assert_cmpstr (KEY (imp, "parallel", "dp_overlap"), ==, "true");     /* Apex overlaps by default */
  g_assert_cmpstr (KEY (imp, "parallel", "dropout"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "grad_accum"), ==, "add");      /* fusion off by default */
  g_assert_cmpstr (KEY (imp, "parallel", "param_dtype"), ==, "bf16");
  g_assert_cmpstr (KEY (imp, "parallel", "global_batch"), ==, "64");
  g_assert_null (KEY (imp, "training", "steps"));
  g_assert_true (has_line (imp, "ignored: model.optim.lr: 2e-4 (line 23) (no trainsim equivalent)"));
  g_assert_true (has_line (imp, "unknown: model.optim.overlap_param_sync (absent: False)"));
}

/* NeMo's FP8 attention, TP-only amax reduction and layer CUDA graphs become their keys. */
static void
test_nemo_fp8 (void)
{
  g_autoptr (SimImport) imp = nemo_ok ("trainer:\n  devices: 8\n  precision: bf16\nmodel:\n  num_layers: 2\n"
                                       "  hidden_size: 64\n  num_attention_heads: 4\n  ffn_hidden_size: 256\n"
                                       "  fp8: True\n  fp8_dot_product_attention: True\n  tp_only_amax_red: True\n"
                                       "  enable_cuda_graph: True\n",
                                       0);
  g_assert_cmpstr (KEY (imp, "parallel", "cuda_graphs"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "matmul_dtype"), ==, "fp8");
  g_assert_cmpstr (KEY (imp, "parallel", "fp8_attention"), ==, "true");
  g_assert_cmpstr (KEY (imp, "parallel", "fp8_amax_tp_only"), ==, "true");
}

static void
test_nemo_listed_and_unresolved (void)
{
  g_autoptr (SimImport) imp = nemo_ok ("model:\n  num_layers: ${oc.env:LAYERS}\n  hidden_size: 64\n"
                                       "  num_attention_heads: 4\n  ffn_hidden_size: 256\n  mystery_knob: 3\n"
                                       "  activation: geglu\n  ub_tp_comm_overlap_cfg: ub.yaml\n"
                                       "  cpu_offloading: True\nexp_manager:\n  name: x\n  resume: true\n", 8);
  g_assert_true (has_line (imp, "unknown: model.num_layers: ${oc.env:LAYERS} (line 2) (unresolved"));
  g_assert_null (KEY (imp, "model", "layers"));
  g_assert_true (has_line (imp, "unknown: model.mystery_knob: 3 (line 6) (not a key"));
  g_assert_true (has_line (imp, "unknown: model.activation: geglu (line 7) (a gated"));
  g_assert_cmpstr (KEY (imp, "model", "activation"), ==, "swiglu");
  g_assert_true (has_line (imp, "unknown: model.ub_tp_comm_overlap_cfg: ub.yaml"));
  g_assert_true (has_line (imp, "unknown: model.cpu_offloading: True"));
  g_assert_true (has_line (imp, "ignored: exp_manager.* (2 keys)"));
  g_assert_true (has_line (imp, "unknown: model.mcore_gpt (absent: False)"));
  g_assert_cmpstr (KEY (imp, "cluster", "gpus"), ==, "8");
}

static void
test_nemo_bad_values (void)
{
  static const struct {
    const char *yaml;
    const char *needle;
  } cases[] = {
    { "model:\n  num_layers: many\n", "c.yaml:2: model.num_layers: 'many': not an integer" },
    { "model:\n  sequence_parallel: maybe\n", "c.yaml:2: model.sequence_parallel: 'maybe': not a boolean" },
    { "model:\n  hidden_dropout: lots\n", "c.yaml:2: model.hidden_dropout: 'lots': not a number" },
    { "model:\n  tensor_model_parallel_size:\n    a: 1\n", "c.yaml:2: model.tensor_model_parallel_size: a mapping" },
    { "trainer:\n  precision: 8\n", "c.yaml:2: trainer.precision: '8'" },
    { "model:\n  activations_checkpoint_granularity: full\n", "needs a method" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GError *error = NULL;
      g_autoptr (SimYamlNode) root = sim_yaml_parse (cases[i].yaml, -1, "c.yaml", &error);
      g_assert_no_error (error);
      g_autoptr (SimImport) imp = sim_import_new ("test");
      g_assert_false (sim_import_nemo (imp, root, "c.yaml", NULL, &error));
      g_assert_error (error, SIM_IMPORT_ERROR, SIM_IMPORT_ERROR_VALUE);
      if (!strstr (error->message, cases[i].needle))
        g_error ("case %" G_GSIZE_FORMAT ": '%s' lacks '%s'", i, error->message, cases[i].needle);
      g_error_free (error);
    }
}

/* The written file: includes as embedded names or absolute paths, each key under its comment. */
static void
test_write (void)
{
  g_autoptr (SimImport) imp = megatron_ok ("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --lr 1", 16);
  SimImportOptions o = { "h100-sxm", "fabrics/x.ini", 16, 0 };
  g_autofree char *text = sim_import_write (imp, &o, "the command line");
  g_assert_nonnull (strstr (text, "\n[scenario]\n# trainsim import --hardware/--fabric\ninclude = "
                                  "embedded:hardware/h100-sxm.ini;/"));
  g_assert_nonnull (strstr (text, "/fabrics/x.ini\n"));
  g_assert_nonnull (strstr (text, "[cluster]\n# trainsim import --gpus 16\ngpus = 16\n"));
  g_assert_nonnull (strstr (text, "# --num-layers 2\nlayers = 2\n"));
  g_assert_null (strstr (text, "--lr"));          /* ignored inputs stay on stderr */
  GError *error = NULL;
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_assert_true (g_key_file_load_from_data (kf, text, (gsize) -1, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  g_autoptr (SimImport) none = megatron_ok ("--num-layers 2", 0);
  g_autofree char *bare = sim_import_write (none, NULL, "x");
  g_assert_nonnull (strstr (bare, "# No hardware or fabric"));
  g_assert_nonnull (strstr (bare, "# [cluster] gpus is not in the input"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scenario/import/megatron-defaults", test_megatron_defaults);
  g_test_add_func ("/scenario/import/megatron-llama-style", test_megatron_llama_style);
  g_test_add_func ("/scenario/import/megatron-pipeline-rules", test_megatron_pipeline_rules);
  g_test_add_func ("/scenario/import/megatron-listed", test_megatron_listed);
  g_test_add_func ("/scenario/import/megatron-bad-values", test_megatron_bad_values);
  g_test_add_func ("/scenario/import/flag-table", test_flag_table);
  g_test_add_func ("/scenario/import/nemo-defaults", test_nemo_defaults);
  g_test_add_func ("/scenario/import/megatron-cuda-graphs", test_megatron_cuda_graphs);
  g_test_add_func ("/scenario/import/megatron-optimizer-state", test_megatron_optimizer_state);
  g_test_add_func ("/scenario/import/megatron-attention-variants", test_megatron_attention_variants);
  g_test_add_func ("/scenario/import/nemo-optimizer-state", test_nemo_optimizer_state);
  g_test_add_func ("/scenario/import/nemo-deepep", test_nemo_deepep);
  g_test_add_func ("/scenario/import/nemo-uneven-pipeline", test_nemo_uneven_pipeline);
  g_test_add_func ("/scenario/import/nemo-fp8", test_nemo_fp8);
  g_test_add_func ("/scenario/import/nemo-listed-and-unresolved", test_nemo_listed_and_unresolved);
  g_test_add_func ("/scenario/import/nemo-bad-values", test_nemo_bad_values);
  g_test_add_func ("/scenario/import/write", test_write);
  return g_test_run ();
}
