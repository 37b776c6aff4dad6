/* Workload report of `trainsim run`.
 *
 * FLOPs come from model/flops.c (matmul FLOPs of forward and backward, causal attention counted
 * exactly; hardware FLOPs add recomputation) and memory from model/memory.c (ZeRO model states,
 * Korthikanti activations under the pipeline schedule, a stated framework overhead).
 * The ideal step time = hardware FLOPs / (gpus × dense peak at the plan's matmul precision): every
 * GPU busy on matmuls at the datasheet peak with no communication, bubble or memory-bound work, so
 * a LOWER BOUND on the step time, never a prediction. */
#include "config.h"
#include <string.h>
#include <json-glib/json-glib.h>
#include "sim/report/report.h"
#include "sim/report/cost.h"
#include "model/dtype.h"
#include "model/flops.h"
#include "model/memory.h"
#include "model/schedule.h"

gboolean
sim_report_parse_format (const char *s, SimReportFormat *out)
{
  if (strcmp (s, "text") == 0)
    *out = SIM_REPORT_TEXT;
  else if (strcmp (s, "tsv") == 0)
    *out = SIM_REPORT_TSV;
  else if (strcmp (s, "json") == 0)
    *out = SIM_REPORT_JSON;
  else
    return FALSE;
  return TRUE;
}

gboolean
sim_report_workload (const SimScenario *sc, SimReportWorkload *w, GError **error)
{
  const ModelShape *shape = sim_scenario_shape (sc);
  const ModelPlan *plan = sim_scenario_plan (sc);
  const SimGpuSpec *gpu = sim_scenario_gpu (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  memset (w, 0, sizeof *w);

  ModelParams p;
  model_shape_params (shape, shape->vocab, &p);
  w->params_total = p.total;
  w->params_active = p.active;
  gint64 vpad = model_shape_padded_vocab (shape, plan->tp);
  model_shape_params (shape, vpad, &p);
  w->params_allocated = p.total;
  w->tokens_per_step = (gint64) plan->global_batch * shape->seq_len;
  w->dp = plan->dp;
  w->microbatches = model_plan_microbatches (plan);

  w->model_flops = model_flops_model_per_step (shape, plan);
  w->hardware_flops = model_flops_hardware_per_step (shape, plan);

  /* Memory: the fullest pipeline stage against the HBM capacity (OOM is reported, not an error). */
  GError *oom = NULL;
  w->memory_fits = model_memory_check (shape, plan, gpu->hbm_bytes, run->memory_overhead_bytes, &w->memory, &oom);
  g_clear_error (&oom);
  w->memory_capacity_bytes = gpu->hbm_bytes;

  w->peak_flops_per_gpu = gpu->peak_flops[plan->matmul_dtype];
  if (w->peak_flops_per_gpu <= 0)
    {
      const SimScenarioValue *v = sim_scenario_lookup (sc, "parallel", "matmul_dtype");
      g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_INVALID,
                   "%s:%d: [parallel] matmul_dtype: %s has no peak_%s_TFLOPS in the hardware profile of %s; "
                   "use a precision the GPU supports or add the figure with its source",
                   v ? v->file : "default", v ? v->line : 0, model_dtype_name (plan->matmul_dtype),
                   model_dtype_name (plan->matmul_dtype), gpu->name);
      return FALSE;
    }
  w->ideal_step_s = w->hardware_flops / ((double) plan->gpus * w->peak_flops_per_gpu);
  /* A measurement describes one case: none when --set or a later file changed the GPU count or
   * another key of the case. */
  w->measured_step_s = sim_scenario_measured_applies (sc, plan->gpus) ? run->measured_step_time_s : 0;
  if (w->measured_step_s > 0)
    w->measured_mfu = w->model_flops / ((double) plan->gpus * w->peak_flops_per_gpu * w->measured_step_s);
  /* Evaluation: forward passes only, one third of the model FLOPs per sequence (MLPerf evaluates
   * every eval_interval_seqs training sequences, rounded up to a multiple of the global batch). */
  if (run->eval_interval_seqs > 0 && run->steps > 0)
    {
      w->eval_interval_steps = (run->eval_interval_seqs + plan->global_batch - 1) / plan->global_batch;
      w->evals = MAX (0, run->steps / w->eval_interval_steps - run->eval_skip);
      double fwd_per_seq = w->model_flops / 3.0 / plan->global_batch;
      w->ideal_eval_s = fwd_per_seq * (double) run->eval_seqs / ((double) plan->gpus * w->peak_flops_per_gpu);
    }
  if (run->steps > 0)
    w->ideal_time_to_train_s = run->init_s + (double) run->steps * w->ideal_step_s + w->evals * w->ideal_eval_s;
  return TRUE;
}

/* ---------------------------------------------------------------------------------------------- */

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *const recompute_names[] = { "none", "selective", "full", "selective_op" };

static char *
human (double v, const char *unit)
{
  static const char *const prefix[] = { "", "k", "M", "G", "T", "P", "E", "Z" };
  int i = 0;
  while (v >= 1000 && i < 7)
    {
      v /= 1000;
      i++;
    }
  return g_strdup_printf ("%.4g %s%s", v, prefix[i], unit);
}

static char *
location (const SimScenarioValue *v)
{
  if (v->is_default)
    return g_strdup ("default");
  return g_strdup_printf ("%s:%d", v->file, v->line);
}

static void write_text_prediction (FILE *out, const SimScenario *sc, const SimReportWorkload *w,
                                   const SimRunnerPrediction *p);
static const char *const bd_text[SIM_BD_COUNT];
static int largest_loss (const SimRunnerResult *r);

/* A duration in the unit a planner reads it in. */
static char *
duration (double s)
{
  if (s < 120)
    return g_strdup_printf ("%.3g s", s);
  if (s < 2 * 3600)
    return g_strdup_printf ("%.3g min", s / 60);
  if (s < 2 * 86400)
    return g_strdup_printf ("%.3g h", s / 3600);
  return g_strdup_printf ("%.3g days", s / 86400);
}

/* The answer first: the step time with its band, throughput, memory fit, time to train and the
 * largest loss, each on one line; the sections below say how each was reached. */
static void
write_text_answer (FILE *out, const SimScenario *sc, const SimReportWorkload *w, const SimRunnerPrediction *p)
{
  const SimScenarioRun *run = sim_scenario_run (sc);
  fprintf (out, "\n== Answer ==\n");
  if (sim_scenario_gpu (sc)->announced)
    fprintf (out, "GPU                  %s: its figures are an announcement's, none measured\n",
             sim_scenario_gpu (sc)->name);
  if (p)
    {
      fprintf (out, "step time            %.4f s", p->step_s);
      if (p->step_hi_s > 0)
        fprintf (out, " (%.4f–%.4f, %.0f%%)", p->step_lo_s, p->step_hi_s, 100 * p->band_level);
      else
        fprintf (out, " (no band: profile not calibrated)");
      if (w->measured_step_s > 0)
        fprintf (out, "; measured %.4f s (%+.1f%%)", w->measured_step_s,
                 100.0 * (p->step_s - w->measured_step_s) / w->measured_step_s);
      fprintf (out, "\nthroughput           %.4g tokens/s, MFU %.1f%%\n", p->step.tokens_per_s, 100 * p->step.mfu);
    }
  else
    fprintf (out, "step time            not simulated; LOWER BOUND %.4f s (matmuls at peak, nothing else)\n",
             w->ideal_step_s);
  /* Over capacity is a finding, never a refusal: the step is simulated as if it fit (the memory
   * model may overstate a run that ran), with the largest item and the cheapest change that fits. */
  double margin = (w->memory_capacity_bytes - w->memory.total_bytes) / GIB;
  if (w->memory_fits)
    fprintf (out, "memory per GPU       %.2f GiB of %.2f GiB: fits (margin %.2f GiB)\n", w->memory.total_bytes / GIB,
             w->memory_capacity_bytes / GIB, margin);
  else
    {
      g_autofree char *fix = model_memory_fix (sim_scenario_shape (sc), sim_scenario_plan (sc),
                                               w->memory_capacity_bytes, run->memory_overhead_bytes);
      fprintf (out, "memory per GPU       %.2f GiB of %.2f GiB: DOES NOT FIT by %.2f GiB (%s)%s\n",
               w->memory.total_bytes / GIB, w->memory_capacity_bytes / GIB, -margin, fix ? fix : "",
               p ? "; step simulated as if it fit" : "");
    }
  if (p && p->time_to_train_s > 0)
    {
      g_autofree char *t = duration (p->time_to_train_s);
      fprintf (out, "time to train        %s (%.0f steps", t, p->steps);
      if (p->step_hi_s > 0)
        {
          g_autofree char *lo = duration (p->time_to_train_s - p->steps * (p->step_s - p->step_lo_s));
          g_autofree char *hi = duration (p->time_to_train_s + p->steps * (p->step_hi_s - p->step_s));
          fprintf (out, "; %s to %s with the band", lo, hi);
        }
      fprintf (out, ")\n");
    }
  else if (!p && run->steps > 0)
    {
      g_autofree char *t = duration (w->ideal_time_to_train_s);
      fprintf (out, "time to train        LOWER BOUND %s\n", t);
    }
  if (p)
    {
      const SimRunnerResult *r = &p->step;
      int worst = largest_loss (r);
      double sim_step = r->step_ns / 1e9;
      if (worst >= 0 && sim_step > 0)
        fprintf (out, "largest loss         %s, %.1f%% of the step\n", bd_text[worst],
                 100.0 * r->breakdown_s[worst] / sim_step);
    }
}

static void
write_text (FILE *out, const SimScenario *sc, const SimReportWorkload *w, const SimRunnerPrediction *pred,
            gboolean explain)
{
  const ModelShape *shape = sim_scenario_shape (sc);
  const ModelPlan *plan = sim_scenario_plan (sc);
  const SimGpuSpec *gpu = sim_scenario_gpu (sc);
  const SimClusterSpec *cl = sim_scenario_cluster (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);

  fprintf (out, "trainsim %s — scenario %s\n", PACKAGE_VERSION, run->name ? run->name : "(unnamed)");
  if (run->description)
    fprintf (out, "%s\n", run->description);
  fprintf (out, "files:");
  for (const char *const *f = sim_scenario_files (sc); *f; f++)
    fprintf (out, " %s", *f);
  fprintf (out, "\n");
  write_text_answer (out, sc, w, pred);
  if (!explain)
    fprintf (out, "\n(%u keys resolved from the files above: `--explain` prints each with its value, file:line "
                  "and source; `--format json` carries everything)\n", sim_scenario_n_values (sc));
  else
    fprintf (out, "\n== Scenario as resolved ==\n");
  const char *group = "";
  for (guint i = 0; explain && i < sim_scenario_n_values (sc); i++)
    {
      const SimScenarioValue *v = sim_scenario_value (sc, i);
      if (strcmp (v->group, "scenario") == 0 && (strcmp (v->key, "description") == 0 || strcmp (v->key, "include") == 0))
        continue;
      if (strcmp (v->group, group) != 0)
        {
          group = v->group;
          fprintf (out, "[%s]\n", group);
        }
      g_autofree char *loc = location (v);
      g_autofree char *val = g_strdup_printf ("%s%s%s", v->value, *v->unit ? " " : "", v->unit);
      fprintf (out, "  %-24s = %-24s (%s)\n", v->key, val, loc);
      if (v->source)
        fprintf (out, "  %-24s   source: %s\n", "", v->source);
    }

  g_autofree char *pt = human ((double) w->params_total, "");
  g_autofree char *pa = human ((double) w->params_active, "");
  g_autofree char *mf = human (w->model_flops, "FLOP");
  g_autofree char *hf = human (w->hardware_flops, "FLOP");
  g_autofree char *pk = human (w->peak_flops_per_gpu, "FLOP/s");
  fprintf (out, "\n== Workload ==\n");
  fprintf (out, "model                %s: %d layers, hidden %d, %d heads (%d KV), seq %d\n", shape->name,
           shape->layers, shape->hidden, shape->heads, shape->kv_heads, shape->seq_len);
  fprintf (out, "parameters           %" G_GINT64_FORMAT " total (%s), %" G_GINT64_FORMAT " active (%s); "
           "%" G_GINT64_FORMAT " with the padded vocab\n", w->params_total, pt, w->params_active, pa,
           w->params_allocated);
  /* Model cards count "active" differently: gpt-oss's and DeepSeek's leave the input embedding
   * (a lookup, not a matmul) out; multi-token-prediction modules are counted apart. */
  {
    ModelParams mp;
    model_shape_params (shape, shape->vocab, &mp);
    g_autofree char *pe = human ((double) (mp.active - mp.embedding), "");
    fprintf (out, "                     active without the input embedding %s", pe);
    if (mp.mtp > 0)
      {
        g_autofree char *pm = human ((double) mp.mtp, "");
        fprintf (out, "; MTP modules %s more", pm);
      }
    if (mp.encoder_extra > 0)
      fprintf (out, "; encoder heads and token types included");
    fprintf (out, "\n");
  }
  fprintf (out, "plan                 %d GPUs = tp %d × cp %d × pp %d × dp %d (vpp %d, ep %d), %s schedule, "
           "recompute %s, %s matmuls: VALID\n", plan->gpus, plan->tp, plan->cp, plan->pp, plan->dp, plan->vpp,
           plan->ep, model_schedule_name (plan->schedule), recompute_names[plan->recompute],
           model_dtype_name (plan->matmul_dtype));
  if (plan->pp > 1 && plan->schedule != MODEL_SCHED_DUALPIPE
      && (plan->pp_layout || plan->pp_first_layers > 0 || plan->pp_last_layers > 0 || plan->pp_embed_loss_layers))
    {
      /* An uneven split, stage by stage in virtual-stage order, runs of equal stages as n×count. */
      int stages = plan->pp * plan->vpp;
      GString *split = g_string_new (NULL);
      for (int v = 0; v < stages;)
        {
          int n = model_plan_chunk_layers (plan, shape, v % plan->pp, v / plan->pp, NULL), run_len = 1;
          while (v + run_len < stages
                 && model_plan_chunk_layers (plan, shape, (v + run_len) % plan->pp, (v + run_len) / plan->pp, NULL) == n)
            run_len++;
          if (run_len > 1)
            g_string_append_printf (split, "%s%d×%d", v ? ", " : "", run_len, n);
          else
            g_string_append_printf (split, "%s%d", v ? ", " : "", n);
          v += run_len;
        }
      fprintf (out, "pipeline split       transformer layers per virtual stage %s (%s)\n", split->str,
               plan->pp_layout                ? "parallel.pp_layout, or torchtitan's split for framework fsdp2"
               : plan->pp_embed_loss_layers ? "embedding and loss counted as layers"
                                            : "uneven first and last pipeline ranks");
      g_string_free (split, TRUE);
    }
  if (plan->attention_kernel != MODEL_ATTN_DEFAULT)
    fprintf (out, "attention            %s (parallel.attention_kernel), not the profile's fused kernel\n",
             plan->attention_kernel == MODEL_ATTN_FA2 ? "FlashAttention-2"
                                                      : "FlashAttention in Triton (2022), FlashAttention-2's rate / 1.4 "
                                                        "forward, / 2 backward");
  fprintf (out, "batch                %d sequences per step = dp %d × %d per replica; micro-batch %d, "
           "%d micro-batches per pipeline\n", plan->global_batch, plan->dp, run->global_batch_per_dp,
           plan->micro_batch, w->microbatches);
  fprintf (out, "cluster              %d nodes of %d GPUs, %d %s of %d, %d NIC(s) of %.0f Gb/s per GPU%s\n",
           run->nodes, cl->gpus_per_node, run->domains,
           cl->mesh ? "fully connected (mesh) domains" : "NVLink domains", cl->nvlink_domain, cl->nics_per_gpu,
           cl->nic_bw_bytes_per_s * 8 / 1e9,
           sim_scenario_fabric (sc)->sharp ? "; the switches reduce (SHARP)" : "");
  fprintf (out, "tokens per step      %" G_GINT64_FORMAT "\n", w->tokens_per_step);
  fprintf (out, "model FLOPs/step     %.6g (%s; matmuls of forward + backward, causal attention, no recompute)\n",
           w->model_flops, mf);
  fprintf (out, "hardware FLOPs/step  %.6g (%s; with recompute)\n", w->hardware_flops, hf);
  fprintf (out, "peak per GPU         %s dense %s (%s)\n", pk, model_dtype_name (plan->matmul_dtype), gpu->name);
  g_autofree char *mem = model_memory_describe (&w->memory);
  fprintf (out, "memory per GPU       %.2f GiB of %.2f GiB: %s (fullest stage: pp rank %d)\n",
           w->memory.total_bytes / GIB, w->memory_capacity_bytes / GIB, w->memory_fits ? "FITS" : "DOES NOT FIT",
           w->memory.pp_rank);
  fprintf (out, "                     %s%s\n", mem,
           run->memory_overhead_bytes < 0 ? " (overhead: CUDA context + NCCL per communicator, model/memory.h)" : "");
  fprintf (out, "\n== Step time ==\n");
  fprintf (out, "LOWER BOUND (not a prediction): %.4f s per step — every GPU doing only matmuls at the datasheet\n"
                "  peak, with no communication, pipeline bubble or memory-bound work\n", w->ideal_step_s);
  if (w->measured_step_s > 0)
    fprintf (out, "measured:                       %.4f s per step (%s)\n"
                  "  measured/lower bound = %.2f; MFU at the measured step time = %.1f%%\n",
             w->measured_step_s, run->measured_source, w->measured_step_s / w->ideal_step_s, 100 * w->measured_mfu);
  if (run->measured_gpus > 0 && run->measured_gpus != plan->gpus)
    fprintf (out, "measured:                       none at %d GPUs (the scenario's measurements are at %d)\n",
             plan->gpus, run->measured_gpus);
  else if (run->measured_changed)
    fprintf (out, "measured:                       none for this case (the scenario's measurements are of %s = %s; "
                  "here %s)\n", run->measured_changed, run->measured_changed_was, run->measured_changed_now);
  if (run->steps > 0)
    {
      fprintf (out, "training length      %" G_GINT64_FORMAT " steps (%.4g tokens)\n", run->steps,
               (double) run->steps * (double) w->tokens_per_step);
      if (w->evals > 0)
        fprintf (out, "evaluations          %" G_GINT64_FORMAT " (every %" G_GINT64_FORMAT " steps, %" G_GINT64_FORMAT
                 " sequences each; forward at peak %.3f s each, a LOWER BOUND)\n", w->evals, w->eval_interval_steps,
                 run->eval_seqs, w->ideal_eval_s);
      fprintf (out, "time to train, LOWER BOUND: %.1f s (init %.0f s + steps and evaluations at their lower bounds%s)\n",
               w->ideal_time_to_train_s, run->init_s, w->evals > 0 ? "" : "; no evaluations given");
    }
  if (run->measured_time_to_train_s > 0 && sim_scenario_measured_applies (sc, plan->gpus))
    fprintf (out, "time to train, measured:    %.1f s\n", run->measured_time_to_train_s);
  if (pred)
    write_text_prediction (out, sc, w, pred);
  /* [cost], when given: at the simulated step when there is one, else at the measured step time,
   * else at the lower bound. */
  gboolean measured = w->measured_step_s > 0;
  if (pred)
    sim_cost_write_section (out, sc, pred->step_s, pred->time_to_train_s,
                            "at the predicted step time and time to train");
  else
    sim_cost_write_section (out, sc, measured ? w->measured_step_s : w->ideal_step_s,
                            measured && run->measured_time_to_train_s > 0 ? run->measured_time_to_train_s
                                                                          : w->ideal_time_to_train_s,
                            measured ? "at the measured step time and time to train"
                                     : "at the LOWER BOUND step time");
}

/* One TSV row per scenario: `#` provenance lines, then a header with units in the names. */
static void
write_tsv (FILE *out, const SimScenario *sc, const SimReportWorkload *w, const char *argv_text,
           const SimRunnerPrediction *pred)
{
  const ModelPlan *plan = sim_scenario_plan (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  const SimGpuSpec *gpu = sim_scenario_gpu (sc);
  fprintf (out, "# tool: trainsim run\n# version: %s (git %s)\n", PACKAGE_VERSION, TRAINSIM_GIT_REV);
  if (argv_text)
    fprintf (out, "# command: %s\n", argv_text);
  fprintf (out, "# scenario: %s\n# files:", run->name ? run->name : "");
  for (const char *const *f = sim_scenario_files (sc); *f; f++)
    fprintf (out, " %s", *f);
  fprintf (out, "\n# ideal_step_s is a LOWER BOUND (hardware FLOPs at dense peak, nothing else), not a prediction\n");
  fprintf (out, "scenario\tgpu\tgpus\ttp\tcp\tpp\tvpp\tdp\tep\tmicro_batch\tglobal_batch_seqs\tmatmul_dtype\t"
                "params_total\tparams_active\ttokens_per_step\tmodel_flops_per_step\thardware_flops_per_step\t"
                "peak_flops_per_s_per_gpu\tideal_step_s\tmeasured_step_s\tmeasured_mfu\tmemory_per_gpu_GiB\tmemory_capacity_GiB\t"
                "memory_fits%s\n", pred ? "\tstep_time_s\tmfu\ttokens_per_s\tmodel_tflops_per_gpu\t"
                "breakdown_compute_s\tbreakdown_tp_s\tbreakdown_cp_s\tbreakdown_pp_s\tbreakdown_dp_s\t"
                "breakdown_ep_s\tbreakdown_bubble_s\tbreakdown_optimizer_s\tbreakdown_overlap_slowdown_s\t"
                "time_to_train_s\tscaling_efficiency" : "");
  fprintf (out, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%"
           G_GINT64_FORMAT "\t%.6e\t%.6e\t%.6e\t%.6f\t%.6f\t%.4f\t%.3f\t%.3f\t%d",
           run->name ? run->name : "", gpu->name, plan->gpus, plan->tp, plan->cp, plan->pp, plan->vpp, plan->dp,
           plan->ep, plan->micro_batch, plan->global_batch, model_dtype_name (plan->matmul_dtype), w->params_total,
           w->params_active, w->tokens_per_step, w->model_flops, w->hardware_flops, w->peak_flops_per_gpu,
           w->ideal_step_s, w->measured_step_s, w->measured_mfu, w->memory.total_bytes / GIB,
           w->memory_capacity_bytes / GIB, w->memory_fits ? 1 : 0);
  if (pred)
    {
      fprintf (out, "\t%.6f\t%.5f\t%.6e\t%.3f", pred->step_s, pred->step.mfu, pred->step.tokens_per_s,
               pred->step.model_tflops_per_gpu);
      for (int i = 0; i < SIM_BD_COUNT; i++)
        fprintf (out, "\t%.6f", pred->step.breakdown_s[i]);
      fprintf (out, "\t%.3f\t%.5f", pred->time_to_train_s, pred->scaling_efficiency);
    }
  fprintf (out, "\n");
}

static void json_prediction (JsonBuilder *b, const SimScenario *sc, const SimRunnerPrediction *p);

static void
write_json (FILE *out, const SimScenario *sc, const SimReportWorkload *w, const char *argv_text,
            const SimRunnerPrediction *pred)
{
  const SimScenarioRun *run = sim_scenario_run (sc);
  const ModelPlan *plan = sim_scenario_plan (sc);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "tool");
  json_builder_add_string_value (b, "trainsim run");
  json_builder_set_member_name (b, "version");
  json_builder_add_string_value (b, PACKAGE_VERSION " (git " TRAINSIM_GIT_REV ")");
  if (argv_text)
    {
      json_builder_set_member_name (b, "command");
      json_builder_add_string_value (b, argv_text);
    }
  if (pred)
    json_prediction (b, sc, pred);
  json_builder_set_member_name (b, "scenario");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, run->name ? run->name : "");
  json_builder_set_member_name (b, "files");
  json_builder_begin_array (b);
  for (const char *const *f = sim_scenario_files (sc); *f; f++)
    json_builder_add_string_value (b, *f);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "values");
  json_builder_begin_array (b);
  for (guint i = 0; i < sim_scenario_n_values (sc); i++)
    {
      const SimScenarioValue *v = sim_scenario_value (sc, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "group");
      json_builder_add_string_value (b, v->group);
      json_builder_set_member_name (b, "key");
      json_builder_add_string_value (b, v->key);
      json_builder_set_member_name (b, "value");
      json_builder_add_string_value (b, v->value);
      json_builder_set_member_name (b, "file");
      json_builder_add_string_value (b, v->file);
      json_builder_set_member_name (b, "line");
      json_builder_add_int_value (b, v->line);
      if (v->source)
        {
          json_builder_set_member_name (b, "source");
          json_builder_add_string_value (b, v->source);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "workload");
  json_builder_begin_object (b);
#define INT_MEMBER(name, v)                                                                        \
  do {                                                                                             \
    json_builder_set_member_name (b, name);                                                        \
    json_builder_add_int_value (b, v);                                                             \
  } while (0)
#define DBL_MEMBER(name, v)                                                                        \
  do {                                                                                             \
    json_builder_set_member_name (b, name);                                                        \
    json_builder_add_double_value (b, v);                                                          \
  } while (0)
  json_builder_set_member_name (b, "gpu");
  json_builder_add_string_value (b, sim_scenario_gpu (sc)->name);
  json_builder_set_member_name (b, "gpu_announced");
  json_builder_add_boolean_value (b, sim_scenario_gpu (sc)->announced);
  INT_MEMBER ("gpus", plan->gpus);
  INT_MEMBER ("tp", plan->tp);
  INT_MEMBER ("cp", plan->cp);
  INT_MEMBER ("pp", plan->pp);
  INT_MEMBER ("vpp", plan->vpp);
  INT_MEMBER ("dp", plan->dp);
  INT_MEMBER ("ep", plan->ep);
  INT_MEMBER ("micro_batch", plan->micro_batch);
  INT_MEMBER ("global_batch_seqs", plan->global_batch);
  INT_MEMBER ("microbatches", w->microbatches);
  INT_MEMBER ("params_total", w->params_total);
  INT_MEMBER ("params_active", w->params_active);
  INT_MEMBER ("params_allocated", w->params_allocated);
  INT_MEMBER ("tokens_per_step", w->tokens_per_step);
  DBL_MEMBER ("model_flops_per_step", w->model_flops);
  DBL_MEMBER ("hardware_flops_per_step", w->hardware_flops);
  DBL_MEMBER ("peak_flops_per_s_per_gpu", w->peak_flops_per_gpu);
  DBL_MEMBER ("memory_per_gpu_bytes", w->memory.total_bytes);
  DBL_MEMBER ("memory_capacity_bytes", w->memory_capacity_bytes);
  json_builder_set_member_name (b, "memory_fits");
  json_builder_add_boolean_value (b, w->memory_fits);
  INT_MEMBER ("memory_fullest_pp_rank", w->memory.pp_rank);
  DBL_MEMBER ("memory_weights_bytes", w->memory.weights_bytes);
  DBL_MEMBER ("memory_grads_bytes", w->memory.grads_bytes);
  DBL_MEMBER ("memory_optimizer_bytes", w->memory.optimizer_bytes);
  DBL_MEMBER ("memory_activations_bytes", w->memory.activations_bytes);
  DBL_MEMBER ("memory_overhead_bytes", w->memory.overhead_bytes);
  DBL_MEMBER ("ideal_step_s_lower_bound", w->ideal_step_s);
  if (w->measured_step_s > 0)
    {
      DBL_MEMBER ("measured_step_s", w->measured_step_s);
      DBL_MEMBER ("measured_mfu", w->measured_mfu);
    }
  else if ((run->measured_step_time_s > 0 || run->measured_time_to_train_s > 0)
           && !sim_scenario_measured_applies (sc, plan->gpus))
    {
      /* Why the scenario's measurement is not compared: the text report's "measured: none" line. */
      g_autofree char *why = run->measured_gpus != plan->gpus
                               ? g_strdup_printf ("measured at %d GPUs, not %d", run->measured_gpus, plan->gpus)
                               : g_strdup_printf ("measured with %s = %s, not %s", run->measured_changed,
                                                  run->measured_changed_was, run->measured_changed_now);
      json_builder_set_member_name (b, "measured_not_applicable");
      json_builder_add_string_value (b, why);
    }
  if (run->steps > 0)
    {
      INT_MEMBER ("steps", run->steps);
      INT_MEMBER ("evals", w->evals);
      DBL_MEMBER ("ideal_eval_s_lower_bound", w->ideal_eval_s);
      DBL_MEMBER ("ideal_time_to_train_s_lower_bound", w->ideal_time_to_train_s);
    }
#undef INT_MEMBER
#undef DBL_MEMBER
  json_builder_end_object (b);
  json_builder_end_object (b);

  sim_report_print_json (out, b);
}

void
sim_report_json_double_or_null (JsonBuilder *b, const char *name, gboolean known, double v)
{
  json_builder_set_member_name (b, name);
  if (known)
    json_builder_add_double_value (b, v);
  else
    json_builder_add_null_value (b);
}

void
sim_report_print_json (FILE *out, JsonBuilder *b)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  fprintf (out, "%s\n", text);
}

gboolean
sim_report_write (FILE *out, const SimScenario *sc, SimReportFormat format, const char *argv_text, GError **error)
{
  return sim_report_write_prediction (out, sc, format, argv_text, NULL, TRUE, error);
}

gboolean
sim_report_write_prediction (FILE *out, const SimScenario *sc, SimReportFormat format, const char *argv_text,
                             const SimRunnerPrediction *pred, gboolean explain, GError **error)
{
  SimReportWorkload w;
  if (!sim_report_workload (sc, &w, error))
    return FALSE;
  switch (format)
    {
    case SIM_REPORT_TEXT:
      write_text (out, sc, &w, pred, explain);
      break;
    case SIM_REPORT_TSV:
      write_tsv (out, sc, &w, argv_text, pred);
      break;
    case SIM_REPORT_JSON:
      write_json (out, sc, &w, argv_text, pred);
      break;
    }
  return TRUE;
}

/* ---------------------------------------------------------------------------------------------- */
/* The simulated prediction (sim/step/runner.h). */

/* The largest loss of a simulated step: the breakdown component other than compute and the
 * optimizer with the most seconds on the critical rank (a SimBreakdown). */
static int
largest_loss (const SimRunnerResult *r)
{
  int worst = -1;
  for (int i = SIM_BD_TP; i < SIM_BD_COUNT; i++)
    if (i != SIM_BD_OPTIMIZER && (worst < 0 || r->breakdown_s[i] > r->breakdown_s[worst]))
      worst = i;
  return worst;
}

static const char *const bd_text[SIM_BD_COUNT] = {
  "compute", "exposed TP comm", "exposed CP comm", "exposed PP comm", "exposed DP comm",
  "exposed EP comm", "pipeline bubble", "optimizer", "overlap slowdown",
};

static void
write_text_prediction (FILE *out, const SimScenario *sc, const SimReportWorkload *w, const SimRunnerPrediction *p)
{
  const ModelPlan *plan = sim_scenario_plan (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  const SimRunnerResult *r = &p->step;
  double step = p->step_s;
  fprintf (out, "\n== Prediction (simulated step) ==\n");
  fprintf (out, "step time            %.4f s", step);
  if (p->step_hi_s > 0)
    {
      /* A band-only layer (calibration/uncalibrated.ini) widens by what uncalibrated profiles missed. */
      gboolean unc = run->calibration && strcmp (run->calibration, "uncalibrated") == 0;
      fprintf (out, " (%.4f–%.4f, %.0f%%, %s%s)", p->step_lo_s, p->step_hi_s, 100 * p->band_level,
               unc ? "the deck error of uncalibrated profiles" : run->calibration ? run->calibration : "deck",
               unc ? "" : " calibration");
    }
  else
    fprintf (out, " (no band: profile not calibrated)");
  if (run->virtualization_overhead > 0)
    fprintf (out, " (simulated %.4f s × (1 + %.3g virtualization overhead))", r->step_ns / 1e9,
             run->virtualization_overhead);
  fprintf (out, "\n");
  if (w->measured_step_s > 0)
    fprintf (out, "measured             %.4f s: prediction %+.1f%%\n", w->measured_step_s,
             100.0 * (step - w->measured_step_s) / w->measured_step_s);
  fprintf (out, "breakdown            (critical rank %d, pipeline stage %d; sums to the step)\n", r->critical_rank,
           r->critical_stage);
  double sim_step = r->step_ns / 1e9;
  for (int i = 0; i < SIM_BD_COUNT; i++)
    fprintf (out, "  %-18s %9.4f s  %5.1f%%\n", bd_text[i], r->breakdown_s[i],
             sim_step > 0 ? 100.0 * r->breakdown_s[i] / sim_step : 0.0);
  fprintf (out, "communication busy   tp %.4f s, cp %.4f s, pp %.4f s, dp %.4f s, ep %.4f s (overlapped or not)\n",
           r->comm_busy_s[SIM_BD_TP], r->comm_busy_s[SIM_BD_CP], r->comm_busy_s[SIM_BD_PP],
           r->comm_busy_s[SIM_BD_DP], r->comm_busy_s[SIM_BD_EP]);
  int worst = largest_loss (r);
  fprintf (out, "critical path        rank %d (stage %d of %d) finishes last; compute %.1f%% of its step, "
           "largest loss: %s (%.1f%%)\n", r->critical_rank, r->critical_stage, plan->pp,
           100.0 * r->breakdown_s[SIM_BD_COMPUTE] / sim_step, bd_text[worst],
           100.0 * r->breakdown_s[worst] / sim_step);
  fprintf (out, "throughput           %.4g tokens/s; %.1f model TFLOP/s per GPU; MFU %.1f%%, HFU %.1f%% "
           "(of the %s peak)\n", r->tokens_per_s, r->model_tflops_per_gpu, 100 * r->mfu, 100 * r->hfu,
           model_dtype_name (plan->matmul_dtype));
  fprintf (out, "memory per GPU       %.2f GiB (stage %d)\n", r->memory_bytes / GIB, r->memory_stage);
  if (p->time_to_train_s > 0)
    {
      fprintf (out, "time to train        %.1f s = init %.0f s + %.0f steps × %.4f s + %.0f evaluations × %.3f s\n",
               p->time_to_train_s, run->init_s, p->steps, step, p->evals, p->eval_s);
      if (run->measured_time_to_train_s > 0 && sim_scenario_measured_applies (sc, plan->gpus))
        fprintf (out, "  measured %.1f s: prediction %+.1f%%\n", run->measured_time_to_train_s,
                 100.0 * (p->time_to_train_s - run->measured_time_to_train_s) / run->measured_time_to_train_s);
    }
  if (p->base_gpus > 0)
    fprintf (out, "scaling efficiency   %.2f%% (%s) against %d GPUs at %.4f s per step\n",
             100 * p->scaling_efficiency, p->weak ? "weak" : "strong", p->base_gpus, p->base_step_s);
  fprintf (out, "simulated            %d rank(s) (%s), %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT " ops\n",
           r->ranks_simulated,
           r->symmetric   ? "one per pipeline stage; every flow on the fabric"
           : r->tp_mirror ? "one per TP group, its TP positions mirrored; every flow on the fabric"
                          : "every rank",
           r->events, r->ops_executed);
}

static void
json_prediction (JsonBuilder *b, const SimScenario *sc, const SimRunnerPrediction *p)
{
  const SimRunnerResult *r = &p->step;
  json_builder_set_member_name (b, "step_time_s");
  json_builder_add_double_value (b, p->step_s);
  sim_report_json_double_or_null (b, "step_time_lo_s", p->step_hi_s > 0, p->step_lo_s);
  sim_report_json_double_or_null (b, "step_time_hi_s", p->step_hi_s > 0, p->step_hi_s);
  json_builder_set_member_name (b, "band_level");
  json_builder_add_double_value (b, p->band_level);
  /* the band's two relative σ: the calibration's out-of-sample scatter and the fitted constants' */
  sim_report_json_double_or_null (b, "band_log_sigma", p->step_hi_s > 0, sim_scenario_run (sc)->band_log_sigma);
  sim_report_json_double_or_null (b, "band_param_sigma", p->step_hi_s > 0, p->param_sigma);
  json_builder_set_member_name (b, "mfu");
  json_builder_add_double_value (b, r->mfu);
  json_builder_set_member_name (b, "tokens_per_s");
  json_builder_add_double_value (b, r->tokens_per_s);
  json_builder_set_member_name (b, "breakdown");
  json_builder_begin_object (b);
  for (int i = 0; i < SIM_BD_COUNT; i++)
    {
      g_autofree char *name = g_strdup_printf ("%s_s", sim_breakdown_name ((SimBreakdown) i));
      json_builder_set_member_name (b, name);
      json_builder_add_double_value (b, r->breakdown_s[i]);
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "prediction");
  json_builder_begin_object (b);
#define D(name, v)                                                                                 \
  do {                                                                                             \
    json_builder_set_member_name (b, name);                                                        \
    json_builder_add_double_value (b, v);                                                          \
  } while (0)
  D ("simulated_step_s", r->step_ns / 1e9);
  D ("hfu", r->hfu);
  D ("model_tflops_per_gpu", r->model_tflops_per_gpu);
  D ("model_flops_per_step", r->model_flops_per_step);
  D ("hardware_flops_per_step", r->hardware_flops_per_step);
  D ("memory_per_gpu_bytes", r->memory_bytes);
  D ("time_to_train_s", p->time_to_train_s);
  D ("steps", p->steps);
  D ("evals", p->evals);
  D ("eval_s", p->eval_s);
  if (p->base_gpus > 0)
    {
      D ("base_gpus", p->base_gpus);
      D ("base_step_s", p->base_step_s);
      D ("scaling_efficiency", p->scaling_efficiency);
    }
  json_builder_set_member_name (b, "comm_busy");
  json_builder_begin_object (b);
  for (int i = SIM_BD_TP; i <= SIM_BD_EP; i++)
    {
      g_autofree char *name = g_strdup_printf ("%s_s", sim_breakdown_name ((SimBreakdown) i));
      D (name, r->comm_busy_s[i]);
    }
  json_builder_end_object (b);
#undef D
  json_builder_set_member_name (b, "critical_rank");
  json_builder_add_int_value (b, r->critical_rank);
  json_builder_set_member_name (b, "critical_stage");
  json_builder_add_int_value (b, r->critical_stage);
  json_builder_set_member_name (b, "ranks_simulated");
  json_builder_add_int_value (b, r->ranks_simulated);
  json_builder_set_member_name (b, "symmetric");
  json_builder_add_boolean_value (b, r->symmetric);
  json_builder_set_member_name (b, "tp_mirror");
  json_builder_add_boolean_value (b, r->tp_mirror);
  json_builder_set_member_name (b, "events");
  json_builder_add_int_value (b, (gint64) r->events);
  json_builder_end_object (b);
}
