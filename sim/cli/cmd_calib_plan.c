/* `trainsim calib-plan SCENARIO…`: the GEMM shapes, attention shapes and collective sizes one
 * rank of the scenario runs (every pipeline stage and model chunk, forward and backward of one
 * micro-batch, the data-parallel buckets, pipeline sends), each once, in the format the
 * trainsim-bench-* programs read with --shapes:
 *   gemm      NAME M N K BATCH DTYPE        (C[M×N] = A[M×K]·B[K×N], BATCH independent products)
 *   attention NAME B H Hkv S D              (S: local query length; causal)
 *   nccl      OP NRANKS BYTES NAME DIM      (nccl-tests size convention, model/op.h)
 * Fields after those a bench needs are informative. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "model/layer.h"
#include "model/op.h"
#include "sim/cli/cmd.h"
#include "sim/scenario/scenario.h"

/* The bench's name for a model collective; NULL for none. The CP ring exchange is a chain of
 * send/recv steps, one block each. */
static const char *
bench_collective (ModelCollective c)
{
  switch (c)
    {
    case MODEL_COLL_ALL_GATHER: return "all_gather";
    case MODEL_COLL_REDUCE_SCATTER: return "reduce_scatter";
    case MODEL_COLL_ALL_REDUCE: return "all_reduce";
    case MODEL_COLL_ALL_TO_ALL: return "alltoall";
    case MODEL_COLL_SEND_RECV:
    case MODEL_COLL_CP_KV_EXCHANGE: return "sendrecv";
    default: return NULL;
    }
}

/* All ops of one rank per pipeline stage: micro-batch forward+backward, DP buckets, PP sends. */
static GArray *
collect_ops (const ModelShape *shape, const ModelPlan *plan)
{
  GArray *ops = model_op_array_new ();
  for (int pp = 0; pp < plan->pp; pp++)
    {
      model_layer_rank_ops (shape, plan, pp, ops);
      for (int chunk = 0; chunk < plan->vpp; chunk++)
        model_layer_dp_ops (shape, plan, pp, chunk, ops);
    }
  if (plan->pp > 1)
    {
      ModelOp f = model_layer_pp_op (shape, plan, MODEL_PASS_FORWARD);
      ModelOp b = model_layer_pp_op (shape, plan, MODEL_PASS_BACKWARD);
      g_array_append_val (ops, f);
      g_array_append_val (ops, b);
    }
  return ops;
}

static void
calib_plan_write (FILE *out, const ModelShape *shape, const ModelPlan *plan)
{
  g_autoptr (GArray) ops = collect_ops (shape, plan);
  g_autoptr (GArray) gemms = model_op_array_new ();
  model_op_array_unique_gemms (ops, gemms);
  fprintf (out, "# kind\tname\tM\tN\tK\tbatch\tdtype\n");
  for (guint i = 0; i < gemms->len; i++)
    {
      const ModelOp *o = &g_array_index (gemms, ModelOp, i);
      fprintf (out, "gemm\t%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                    "\t%s\n",
               o->name, o->m, o->n, o->k, o->batch, model_dtype_name (o->dtype));
    }
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  fprintf (out, "# kind\tname\tB\tH\tHkv\tS\tD\n");
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *o = &g_array_index (ops, ModelOp, i);
      if (o->kind != MODEL_OP_ATTENTION)
        continue;
      g_autofree char *line = g_strdup_printf ("attention\t%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                                               "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT,
                                               "attn", o->seqs, o->heads, o->kv_heads, o->seq_q, o->head_dim);
      if (g_hash_table_add (seen, g_strdup (line)))
        fprintf (out, "%s\n", line);
    }
  fprintf (out, "# kind\top\tnranks\tbytes\tname\tdim\n");
  for (guint i = 0; i < ops->len; i++)
    {
      const ModelOp *o = &g_array_index (ops, ModelOp, i);
      const char *c = o->kind == MODEL_OP_COMM ? bench_collective (o->coll) : NULL;
      if (c == NULL || o->group_size < 2)
        continue;
      double bytes = o->comm_bytes;
      if (o->coll == MODEL_COLL_CP_KV_EXCHANGE)
        bytes /= o->group_size - 1; /* one ring step */
      g_autofree char *key = g_strdup_printf ("%s/%d/%.0f", c, o->group_size, bytes);
      if (!g_hash_table_add (seen, g_strdup (key)))
        continue;
      fprintf (out, "nccl\t%s\t%d\t%.0f\t%s\t%s\n", c, o->group_size, round (bytes), o->name,
               model_dim_name (o->dim));
    }
}

int
sim_cmd_calib_plan (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) files = NULL;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini…] - shapes and sizes to calibrate");
  g_option_context_set_summary (ctx,
    "Prints the distinct GEMM shapes, attention shapes and collective sizes one rank of the\n"
    "scenario runs, in the format trainsim-bench-gemm, -attention and -nccl read with --shapes:\n"
    "  trainsim calib-plan S.ini > plan.tsv; trainsim-bench-gemm --shapes plan.tsv …\n"
    "Without a file: the embedded default, " SIM_SCENARIO_DEFAULT ".");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim calib-plan: %s\n", error->message);
      g_error_free (error);
      return 2;
    }
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files, (const char *const *) sets, &error);
  if (!sc)
    {
      fprintf (stderr, "%s\n", error->message);
      g_error_free (error);
      return 2;
    }
  const ModelShape *shape = sim_scenario_shape (sc);
  const ModelPlan *plan = sim_scenario_plan (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  printf ("# trainsim calib-plan %s (git %s): %s\n", PACKAGE_VERSION, TRAINSIM_GIT_REV, argv_text);
  printf ("# scenario\t%s\n", run->name ? run->name : "");
  printf ("# plan\ttp %d pp %d vpp %d cp %d ep %d dp %d, micro-batch %d, seq %d; one rank, all stages, one "
          "micro-batch fwd+bwd, DP buckets, PP sends\n",
          plan->tp, plan->pp, plan->vpp, plan->cp, plan->ep, plan->dp, plan->micro_batch, shape->seq_len);
  printf ("# read by\ttrainsim-bench-gemm/-attention/-nccl --shapes FILE (each takes its own kind)\n");
  calib_plan_write (stdout, shape, plan);
  return 0;
}
