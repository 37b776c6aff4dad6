/* Scenario loader through its API: README/key-table agreement, the embedded files, merge order and
 * --set precedence, includes, weak-scaling rescale, and the seed scenarios' resolved values.
 * Expected values come from the scenario files' published sources (see each comment). */
#include <math.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include "sim/scenario/scenario.h"
#include "sim/report/report.h"
#include "sim/step/runner.h"
#include <gsl/gsl_cdf.h>
#include "model/memory.h"
#include "model/flops.h"
#include "model/layer.h"

static const char *
srcdir (void)
{
  const char *s = g_getenv ("TRAINSIM_SRCDIR");
  return s ? s : TRAINSIM_SRCDIR;
}

static char *
src_path (const char *rel)
{
  return g_build_filename (srcdir (), rel, NULL);
}

static SimScenario *
load_ok (const char *const *files, const char *const *sets)
{
  GError *error = NULL;
  SimScenario *sc = sim_scenario_load (files, sets, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sc);
  return sc;
}

static char *
cell (const char *s)
{
  char *c = g_strstrip (g_strdup (s));
  /* `key` -> key */
  if (c[0] == '`' && strlen (c) >= 2 && c[strlen (c) - 1] == '`')
    {
      char *t = g_strndup (c + 1, strlen (c) - 2);
      g_free (c);
      return t;
    }
  return c;
}

/* Parses the README's key tables (between the keys markers) into "group|key|type|unit|default|range|meaning"
 * rows, and the code's table into the same form; they must be identical, in the same order. */
static void
test_readme_agrees (void)
{
  g_autofree char *path = src_path ("scenarios/README.md");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  const char *begin = strstr (text, "<!-- keys:begin -->");
  const char *end = strstr (text, "<!-- keys:end -->");
  g_assert_nonnull (begin);
  g_assert_nonnull (end);
  g_autofree char *section = g_strndup (begin, end - begin);
  g_auto (GStrv) lines = g_strsplit (section, "\n", -1);
  GPtrArray *readme = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *group = NULL;
  for (int i = 0; lines[i]; i++)
    {
      const char *l = lines[i];
      if (g_str_has_prefix (l, "### ["))
        {
          g_free (group);
          group = g_strndup (l + 5, strcspn (l + 5, "]"));
          continue;
        }
      if (l[0] != '|' || g_str_has_prefix (l, "| key ") || g_str_has_prefix (l, "|---"))
        continue;
      g_assert_nonnull (group);
      g_auto (GStrv) cells = g_strsplit (l, "|", -1);
      /* "| a | b | … |" splits into "", a, b, …, "" */
      g_assert_cmpint (g_strv_length (cells), ==, 8);
      GString *row = g_string_new (group);
      for (int c = 1; c <= 6; c++)
        {
          g_autofree char *v = cell (cells[c]);
          g_string_append_printf (row, "|%s", v);
        }
      g_ptr_array_add (readme, g_string_free (row, FALSE));
    }
  g_assert_cmpuint (readme->len, ==, sim_scenario_n_keys ());
  for (guint i = 0; i < sim_scenario_n_keys (); i++)
    {
      const SimScenarioKeyInfo *k = sim_scenario_key (i);
      g_autofree char *row = g_strdup_printf ("%s|%s|%s|%s|%s|%s|%s", k->group, k->key, k->type, k->unit,
                                              k->default_text, k->range, k->meaning);
      g_assert_cmpstr (g_ptr_array_index (readme, i), ==, row);
    }
  g_ptr_array_unref (readme);
}

/* Every .ini under scenarios/ is listed in the GResource XML and in scenarios/local.mk, is embedded,
 * and its embedded copy is byte-identical to the file on disk. */
static void
collect_inis (const char *dir, const char *rel, GPtrArray *out)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  const char *name;
  while ((name = g_dir_read_name (d)))
    {
      g_autofree char *full = g_build_filename (dir, name, NULL);
      g_autofree char *r = *rel ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
      if (g_file_test (full, G_FILE_TEST_IS_DIR))
        collect_inis (full, r, out);
      else if (g_str_has_suffix (name, ".ini"))
        g_ptr_array_add (out, g_steal_pointer (&r));
    }
  g_dir_close (d);
}

static void
test_resources_complete (void)
{
  g_autofree char *dir = src_path ("scenarios");
  g_autoptr (GPtrArray) inis = g_ptr_array_new_with_free_func (g_free);
  collect_inis (dir, "", inis);
  g_assert_cmpuint (inis->len, >=, 20);
  g_autofree char *xml_path = src_path ("scenarios/scenarios.gresource.xml");
  g_autofree char *mk_path = src_path ("scenarios/local.mk");
  g_autofree char *xml = NULL, *mk = NULL;
  g_assert_true (g_file_get_contents (xml_path, &xml, NULL, NULL));
  g_assert_true (g_file_get_contents (mk_path, &mk, NULL, NULL));
  /* Loading anything registers the resources. */
  g_autoptr (SimScenario) sc = load_ok (NULL, NULL);
  for (guint i = 0; i < inis->len; i++)
    {
      const char *rel = g_ptr_array_index (inis, i);
      g_autofree char *entry = g_strdup_printf ("<file>%s</file>", rel);
      g_autofree char *mk_entry = g_strdup_printf ("\tscenarios/%s", rel);
      if (!strstr (xml, entry))
        g_error ("scenarios/%s is not listed in scenarios.gresource.xml", rel);
      const char *m = strstr (mk, mk_entry);
      if (m && !g_ascii_isspace (m[strlen (mk_entry)]))
        m = NULL;
      if (!m)
        g_error ("scenarios/%s is not listed in scenarios/local.mk", rel);
      g_autofree char *rpath = g_strconcat ("/trainsim/scenarios/", rel, NULL);
      g_autoptr (GBytes) bytes = g_resources_lookup_data (rpath, 0, NULL);
      g_assert_nonnull (bytes);
      g_autofree char *disk_path = g_build_filename (dir, rel, NULL);
      g_autofree char *disk = NULL;
      gsize len = 0;
      g_assert_true (g_file_get_contents (disk_path, &disk, &len, NULL));
      gsize rlen = 0;
      const char *rdata = g_bytes_get_data (bytes, &rlen);
      g_assert_cmpuint (rlen, ==, len);
      g_assert_true (memcmp (rdata, disk, len) == 0);
    }
  /* And nothing listed is missing on disk: count <file> entries. */
  guint n = 0;
  for (const char *p = strstr (xml, "<file>"); p; p = strstr (p + 1, "<file>"))
    n++;
  g_assert_cmpuint (n, ==, inis->len);
}

/* No file: the embedded MLPerf v3.1 GPT-3 case, read from resources (not from disk). */
static void
test_embedded_default (void)
{
  g_autoptr (SimScenario) sc = load_ok (NULL, NULL);
  const char *const *files = sim_scenario_files (sc);
  g_assert_cmpstr (files[0], ==, "embedded:calibration/hopper.ini"); /* included by the profile */
  g_assert_cmpstr (files[1], ==, "embedded:hardware/h100-sxm.ini");
  g_assert_cmpstr (files[4], ==, "embedded:tp-overlap/h100-tp4-pp8-mbs1.ini");
  g_assert_cmpstr (files[5], ==, "embedded:reliability/llama3-405b-h100.ini");
  g_assert_cmpstr (files[6], ==, "embedded:runs/gpt3-175b-mlperf-v3.1.ini");
  g_assert_null (files[7]);
  /* Shipped failure rates: goodput has something to say on the default scenario. */
  double gpu_rate = 0;
  g_assert_true (sim_scenario_get_number (sc, "reliability", "gpu_failures_per_day", &gpu_rate));
  g_assert_cmpfloat (gpu_rate, >, 0);
  /* 1,344 nodes × 8 H100, TP4 PP8 → DP 10752/32 = 336; GBS 2,688 = 336 × 8 (reference/mlperf.md). */
  const ModelPlan *plan = sim_scenario_plan (sc);
  g_assert_cmpint (plan->gpus, ==, 10752);
  g_assert_cmpint (plan->dp, ==, 336);
  g_assert_cmpint (plan->global_batch, ==, 2688);
  g_assert_cmpint (model_plan_microbatches (plan), ==, 8);
  g_assert_cmpint (plan->schedule, ==, MODEL_SCHED_INTERLEAVED); /* auto with vpp 12 */
  /* The submission's userbuffers settings (conf/tp_overlap/h100tp4pp8mbs1.yaml). */
  g_assert_cmpint (plan->ub[MODEL_UB_PROJ_FPROP].method, ==, MODEL_UB_PIPELINE);
  g_assert_cmpint (plan->ub[MODEL_UB_PROJ_FPROP].num_sm, ==, 24);
  g_assert_true (plan->ub[MODEL_UB_PROJ_FPROP].sm_margin);
  g_assert_true (plan->ub[MODEL_UB_FC2_DGRAD].aggregate);
  g_assert_cmpint (plan->matmul_dtype, ==, MODEL_DTYPE_FP8);
  g_assert_true (plan->tp_comm_overlap);
  g_assert_cmpint (plan->zero, ==, 1);
  const SimScenarioRun *run = sim_scenario_run (sc);
  g_assert_cmpfloat (run->measured_step_time_s, ==, 0.9296);
  g_assert_cmpint (run->steps, ==, 220);
  g_assert_cmpint (run->nodes, ==, 1344);
  /* Unit conversion: 989 TFLOP/s, 3.35 TB/s, 450 GB/s, 400 Gb/s = 50e9 B/s, 80 GB. */
  const SimGpuSpec *gpu = sim_scenario_gpu (sc);
  g_assert_cmpfloat (gpu->peak_flops[MODEL_DTYPE_BF16], ==, 989e12);
  g_assert_cmpfloat (gpu->peak_flops[MODEL_DTYPE_FP8], ==, 1979e12);
  g_assert_cmpfloat (fabs (gpu->hbm_bw_bytes_per_s - 3.35e12), <, 1);
  g_assert_cmpfloat (gpu->hbm_bytes, ==, 80e9);
  g_assert_cmpfloat (sim_scenario_cluster (sc)->nic_bw_bytes_per_s, ==, 50e9);
  g_assert_cmpfloat (sim_scenario_cluster (sc)->nvlink_bw_bytes_per_s, ==, 450e9);
  /* The generic accessor converts like the structs: 400 Gb/s → 50e9 B/s; unset → FALSE. */
  double x = 0;
  g_assert_true (sim_scenario_get_number (sc, "cluster", "nic_Gbps", &x));
  g_assert_cmpfloat (x, ==, 50e9);
  g_assert_true (sim_scenario_get_number (sc, "parallel", "dp_bucket_MiB", &x)); /* default 40 */
  g_assert_cmpfloat (x, ==, 40);
  g_assert_false (sim_scenario_get_number (sc, "fabric", "hop_latency_us", &x));
  g_assert_false (sim_scenario_get_number (sc, "model", "name", &x));
  /* Every hardware figure carries its source; the provenance points into the embedded file. */
  const SimScenarioValue *v = sim_scenario_lookup (sc, "hardware", "peak_bf16_TFLOPS");
  g_assert_nonnull (v);
  g_assert_cmpstr (v->file, ==, "embedded:hardware/h100-sxm.ini");
  g_assert_cmpint (v->line, ==, 10);
  g_assert_nonnull (strstr (v->source, "torchtitan"));
  for (guint i = 0; i < sim_scenario_n_values (sc); i++)
    {
      const SimScenarioValue *hv = sim_scenario_value (sc, i);
      if (strcmp (hv->group, "hardware") == 0 && strcmp (hv->key, "name") != 0 && !hv->is_default)
        g_assert_nonnull (hv->source);
    }
}

/* Every embedded userbuffers preset loads after a TP-overlap plan and names all ten GEMMs. */
static void
test_tp_overlap_presets (void)
{
  const char *const names[] = { "tp-overlap/h100-tp4-pp8-mbs1.ini", "tp-overlap/nemo-bf16-h100-h8192-tp4-mbs1-seq8192.ini",
                                "tp-overlap/nemo-fp8-h100-h8192-tp4-mbs1-seq8192.ini",
                                "tp-overlap/nemo-bf16-h100-h16384-tp8-cp2-mbs1-seq8192.ini",
                                "tp-overlap/nemo-fp8-h100-h16384-tp8-cp2-mbs1-seq8192.ini",
                                "tp-overlap/nemo-bf16-b200-h16384-tp4-cp2-mbs1-seq8192.ini",
                                "tp-overlap/nemo-fp8-b200-h16384-tp4-cp2-mbs1-seq8192.ini",
                                "tp-overlap/nemo-fp8-h100-h12288-tp4-mbs1-seq2048.ini" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const char *files[] = { "runs/gpt3-175b-mlperf-v3.1.ini", names[i], NULL };
      g_autoptr (SimScenario) sc = load_ok (files, NULL);
      const ModelPlan *plan = sim_scenario_plan (sc);
      for (int g = 0; g < MODEL_UB_COUNT; g++)
        g_assert_cmpint (plan->ub[g].method, !=, MODEL_UB_DEFAULT);
    }
}

/* The disk copy is used when it exists, and gives the same resolved plan. */
static void
test_disk_precedence (void)
{
  g_autofree char *path = src_path ("scenarios/runs/gpt3-175b-mlperf-v3.1.ini");
  const char *files[] = { path, NULL };
  g_autoptr (SimScenario) sc = load_ok (files, NULL);
  const char *const *f = sim_scenario_files (sc);
  g_assert_cmpstr (f[6], ==, path);
  g_assert_false (g_str_has_prefix (f[0], "embedded:"));
  g_assert_cmpint (sim_scenario_plan (sc)->dp, ==, 336);
}

static char *
write_tmp (const char *dir, const char *name, const char *text)
{
  char *p = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (p, text, -1, NULL));
  return p;
}

/* Later files override earlier ones, --set overrides files, the last --set wins, and provenance
 * follows the value that won. */
static void
test_merge_order (void)
{
  g_autofree char *dir = g_dir_make_tmp ("trainsim-merge-XXXXXX", NULL);
  g_autofree char *a = write_tmp (dir, "a.ini", "[parallel]\nvpp = 6\ndp_bucket_MiB = 80\n");
  g_autofree char *b = write_tmp (dir, "b.ini", "[parallel]\nvpp = 4\n");
  const char *files[] = { "runs/gpt3-175b-mlperf-v3.1.ini", a, b, NULL };
  {
    g_autoptr (SimScenario) sc = load_ok (files, NULL);
    g_assert_cmpint (sim_scenario_plan (sc)->vpp, ==, 4);          /* b after a */
    g_assert_cmpint (sim_scenario_plan (sc)->dp_bucket_mb, ==, 80); /* only a sets it */
    const SimScenarioValue *v = sim_scenario_lookup (sc, "parallel", "vpp");
    g_assert_cmpstr (v->file, ==, b);
    g_assert_cmpint (v->line, ==, 2);
  }
  {
    const char *sets[] = { "parallel.vpp=3", "parallel.vpp=2", NULL };
    g_autoptr (SimScenario) sc = load_ok (files, sets);
    g_assert_cmpint (sim_scenario_plan (sc)->vpp, ==, 2); /* the last --set wins */
    const SimScenarioValue *v = sim_scenario_lookup (sc, "parallel", "vpp");
    g_assert_cmpstr (v->file, ==, "--set");
    g_assert_cmpint (v->line, ==, 2);
  }
  {
    /* A hardware figure from --set is marked as such in its provenance. */
    /* A later layer's alternative key wins: the Llama run gives global_batch_per_dp; --set global_batch. */
    g_autofree char *llama = src_path ("scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini");
    const char *lfiles[] = { llama, NULL };
    const char *lsets[] = { "parallel.global_batch=2048", NULL };
    g_autoptr (SimScenario) l = load_ok (lfiles, lsets);
    g_assert_cmpint (sim_scenario_plan (l)->global_batch, ==, 2048);
    g_assert_cmpint (sim_scenario_run (l)->global_batch_per_dp, ==, 16);
  }
  {
    const char *sets[] = { "hardware.peak_fp8_TFLOPS=1000", NULL };
    g_autoptr (SimScenario) sc = load_ok (files, sets);
    g_assert_cmpfloat (sim_scenario_gpu (sc)->peak_flops[MODEL_DTYPE_FP8], ==, 1000e12);
    g_assert_nonnull (strstr (sim_scenario_lookup (sc, "hardware", "peak_fp8_TFLOPS")->source, "--set"));
  }
  g_unlink (a);
  g_unlink (b);
  g_rmdir (dir);
}

/* Includes: relative to the including file, nested, loaded before it (so it overrides them); a
 * later alternative key (global_batch_per_dp) overrides an included one (global_batch). */
static void
test_includes (void)
{
  g_autofree char *dir = g_dir_make_tmp ("trainsim-inc-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (dir, "sub", NULL);
  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  g_autofree char *hw = src_path ("scenarios/hardware/a100-sxm-80g.ini");
  g_autofree char *inner_text = g_strdup_printf ("[scenario]\ninclude = %s;embedded:fabrics/hdr200-rail-optimized.ini\n"
                                                 "[parallel]\ntp = 2\nglobal_batch = 512\n", hw);
  g_autofree char *inner = write_tmp (sub, "inner.ini", inner_text);
  g_autofree char *outer = write_tmp (dir, "outer.ini",
                                      "[scenario]\ninclude = sub/inner.ini;embedded:models/megatron-gpt-1.7b.ini\n"
                                      "[parallel]\ntp = 1\nglobal_batch_per_dp = 16\nmicro_batch = 16\n"
                                      "[cluster]\ngpus = 32\n[training]\nseq_len = 2048\n");
  const char *files[] = { outer, NULL };
  g_autoptr (SimScenario) sc = load_ok (files, NULL);
  const char *const *f = sim_scenario_files (sc);
  /* The profile's own include, "../calibration/ampere.ini": the loader resolves it canonically, and the
   * source path need not be canonical (distcheck's is _build/sub/../..). */
  g_autofree char *cal_path = src_path ("scenarios/calibration/ampere.ini");
  g_autofree char *cal = g_canonicalize_filename (cal_path, NULL);
  g_assert_cmpstr (f[0], ==, cal);
  g_assert_cmpstr (f[1], ==, hw);
  g_assert_cmpstr (f[2], ==, "embedded:fabrics/hdr200-rail-optimized.ini");
  g_assert_cmpstr (f[3], ==, inner);
  g_assert_cmpstr (f[4], ==, "embedded:models/megatron-gpt-1.7b.ini");
  g_assert_cmpstr (f[5], ==, outer);
  /* Narayanan et al. Table 1, first row: 1.7B on 32 A100, TP1, DP32, GBS 512 (deck row narayanan21_t1_1.7b). */
  const ModelPlan *plan = sim_scenario_plan (sc);
  g_assert_cmpint (plan->tp, ==, 1);
  g_assert_cmpint (plan->dp, ==, 32);
  g_assert_cmpint (plan->global_batch, ==, 512);
  g_assert_cmpstr (sim_scenario_gpu (sc)->name, ==, "A100 SXM4 80GB");
  g_assert_cmpfloat (sim_scenario_cluster (sc)->nic_bw_bytes_per_s, ==, 25e9); /* 200 Gb/s */
  g_unlink (inner);
  g_unlink (outer);
  g_rmdir (sub);
  g_rmdir (dir);
}

/* MLPerf v6.0 Llama 3.1 405B: 8,192 GB200 with TP4 CP2 PP8 → DP128, GBS 1,024 (8 per replica); at
 * 7,168 GPUs the same plan gives DP112 and GBS 896, as in Azure's 112-rack run (reference/mlperf.md). */
static void
test_llama_rescale (void)
{
  g_autofree char *path = src_path ("scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini");
  const char *files[] = { path, NULL };
  {
    g_autoptr (SimScenario) sc = load_ok (files, NULL);
    const ModelPlan *plan = sim_scenario_plan (sc);
    g_assert_cmpint (plan->dp, ==, 128);
    g_assert_cmpint (plan->global_batch, ==, 1024);
    g_assert_cmpint (plan->matmul_dtype, ==, MODEL_DTYPE_FP4);
    g_assert_true (plan->pp_embed_loss_layers);
    g_assert_cmpint (sim_scenario_shape (sc)->vocab, ==, 32000); /* the run overrides the model file */
    const SimScenarioRun *run = sim_scenario_run (sc);
    g_assert_cmpint (run->domains, ==, 128); /* 8,192 / 64 used per rack */
    g_assert_cmpint (run->nodes, ==, 2048);
    g_assert_cmpint (run->steps, ==, 324);   /* 331,776 sequences / 1,024 */
    SimReportWorkload w;
    g_assert_true (sim_report_workload (sc, &w, NULL));
    g_assert_cmpfloat (w.measured_step_s, ==, 1.2712);
    g_assert_cmpint (w.tokens_per_step, ==, 1024 * 8192);
  }
  {
    const char *sets[] = { "cluster.gpus=7168", NULL };
    g_autoptr (SimScenario) sc = load_ok (files, sets);
    const ModelPlan *plan = sim_scenario_plan (sc);
    g_assert_cmpint (plan->dp, ==, 112);
    g_assert_cmpint (plan->global_batch, ==, 896);
    g_assert_cmpint (model_plan_microbatches (plan), ==, 8);
    const SimScenarioRun *run = sim_scenario_run (sc);
    g_assert_cmpint (run->domains, ==, 112);
    g_assert_cmpint (run->steps, ==, 371);   /* ceil(331,776 / 896) */
    SimReportWorkload w;
    g_assert_true (sim_report_workload (sc, &w, NULL));
    g_assert_cmpfloat (w.measured_step_s, ==, 0); /* the measurement belongs to 8,192 GPUs */
  }
}

/* Every run file loads and validates; every model file validates under a small plan on every
 * hardware profile. */
static void
test_all_files_load (void)
{
  g_autofree char *dir = src_path ("scenarios");
  g_autoptr (GPtrArray) inis = g_ptr_array_new_with_free_func (g_free);
  collect_inis (dir, "", inis);
  g_autofree char *tmp = g_dir_make_tmp ("trainsim-all-XXXXXX", NULL);
  /* 8 GPUs, TP8 except where heads do not divide (then TP1 with DP8). */
  for (guint i = 0; i < inis->len; i++)
    {
      const char *rel = g_ptr_array_index (inis, i);
      g_autofree char *full = g_build_filename (dir, rel, NULL);
      if (g_str_has_prefix (rel, "runs/"))
        {
          const char *files[] = { full, NULL };
          g_autoptr (SimScenario) sc = load_ok (files, NULL);
          SimReportWorkload w;
          GError *error = NULL;
          g_assert_true (sim_report_workload (sc, &w, &error));
          g_assert_no_error (error);
          g_assert_cmpfloat (w.ideal_step_s, >, 0);
          /* A lower bound must not exceed the measurement. */
          if (w.measured_step_s > 0)
            g_assert_cmpfloat (w.ideal_step_s, <, w.measured_step_s);
        }
      else if (g_str_has_prefix (rel, "models/"))
        for (guint j = 0; j < inis->len; j++)
          {
            const char *hw = g_ptr_array_index (inis, j);
            if (!g_str_has_prefix (hw, "hardware/"))
              continue;
            g_autofree char *hw_full = g_build_filename (dir, hw, NULL);
            g_autofree char *fab = g_build_filename (dir, "fabrics/ndr400-rail-optimized.ini", NULL);
            g_autofree char *plan = write_tmp (tmp, "plan.ini",
                                               "[cluster]\ngpus = 8\n[parallel]\ntp = 1\nmicro_batch = 1\n"
                                               "global_batch = 8\n[training]\nseq_len = 2048\n");
            /* The model after the plan: a model file's own [training] seq_len (BERT's 512) wins. */
            const char *files[] = { hw_full, fab, plan, full, NULL };
            g_autoptr (SimScenario) sc = load_ok (files, NULL);
            g_assert_cmpint (sim_scenario_plan (sc)->dp, ==, 8);
            g_unlink (plan);
          }
    }
  g_rmdir (tmp);
}

static char *
report_text (const SimScenario *sc, SimReportFormat format)
{
  FILE *f = tmpfile ();
  g_assert_nonnull (f);
  GError *error = NULL;
  g_assert_true (sim_report_write (f, sc, format, "trainsim run test", &error));
  g_assert_no_error (error);
  long n = ftell (f);
  rewind (f);
  char *buf = g_malloc0 (n + 1);
  g_assert_cmpuint (fread (buf, 1, n, f), ==, (size_t) n);
  fclose (f);
  return buf;
}

/* The three formats of the default scenario: text labels the lower bound and shows the measurement;
 * TSV has provenance lines, then a header with units, then one row; JSON parses and carries the same
 * numbers. Both MLPerf cases must fit in memory (they ran). */
static void
test_report_formats (void)
{
  g_autoptr (SimScenario) sc = load_ok (NULL, NULL);
  SimReportWorkload w;
  g_assert_true (sim_report_workload (sc, &w, NULL));
  g_assert_true (w.memory_fits);
  /* Tokens per step: 2,688 × 2,048 = 5,505,024 (reference/mlperf.md: 220 steps = 1,211,105,280 tokens). */
  g_assert_cmpint (w.tokens_per_step * 220, ==, 1211105280);
  /* Lower bound ≈ 6·N·T / (gpus · peak): 6 × 1.746e11 × 5.505e6 / (10752 × 1.979e15) ≈ 0.271 s, plus
   * attention; it must lie between that and the measured 0.9296 s. */
  g_assert_cmpfloat (w.ideal_step_s, >, 0.27);
  g_assert_cmpfloat (w.ideal_step_s, <, 0.9296);

  /* MLPerf GPT-3: evaluation every 24,576 sequences, rounded up to whole steps of 2,688 = 10 steps,
   * so 220 steps hold 22 evaluations (reference/mlperf.md). */
  g_assert_cmpint (w.eval_interval_steps, ==, 10);
  g_assert_cmpint (w.evals, ==, 22);
  /* One evaluation: 5,662 forward passes ≈ 5,662/2,688 × (lower bound / 3) ≈ 0.19 s, the
   * lower bound taken at model FLOPs (the flash backward's recomputation is not in a forward). */
  double model_step_s = w.ideal_step_s * w.model_flops / w.hardware_flops;
  g_assert_cmpfloat (w.hardware_flops, >, w.model_flops);
  g_assert_cmpfloat (fabs (w.ideal_eval_s - model_step_s / 3 * 5662.0 / 2688.0), <, 1e-9);

  g_autofree char *text = report_text (sc, SIM_REPORT_TEXT);
  g_assert_nonnull (strstr (text, "LOWER BOUND (not a prediction)"));
  g_assert_nonnull (strstr (text, "measured:                       0.9296 s"));
  g_assert_nonnull (strstr (text, "source: NVIDIA H100 datasheet via pytorch/torchtitan"));

  g_autofree char *tsv = report_text (sc, SIM_REPORT_TSV);
  g_auto (GStrv) lines = g_strsplit (tsv, "\n", -1);
  g_assert_cmpstr (lines[0], ==, "# tool: trainsim run");
  g_assert_true (g_str_has_prefix (lines[1], "# version: "));
  int i = 0;
  while (lines[i] && lines[i][0] == '#')
    i++;
  g_assert_nonnull (lines[i]);
  g_assert_true (g_str_has_prefix (lines[i], "scenario\tgpu\tgpus\t"));
  g_assert_nonnull (strstr (lines[i], "\tideal_step_s\t"));
  g_auto (GStrv) header = g_strsplit (lines[i], "\t", -1);
  g_auto (GStrv) row = g_strsplit (lines[i + 1], "\t", -1);
  g_assert_cmpuint (g_strv_length (header), ==, g_strv_length (row));
  g_assert_cmpstr (row[0], ==, "gpt3-175b-mlperf-v3.1-eos");
  g_assert_cmpstr (row[2], ==, "10752");

  g_autofree char *json = report_text (sc, SIM_REPORT_JSON);
  g_autoptr (JsonParser) parser = json_parser_new ();
  GError *error = NULL;
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *wl = json_object_get_object_member (root, "workload");
  g_assert_cmpint (json_object_get_int_member (wl, "dp"), ==, 336);
  g_assert_cmpfloat (json_object_get_double_member (wl, "ideal_step_s_lower_bound"), ==, w.ideal_step_s);
  g_assert_true (json_object_get_boolean_member (wl, "memory_fits"));

  g_autofree char *path = src_path ("scenarios/runs/llama31-405b-gb200-mlperf-v6.0.ini");
  const char *files[] = { path, NULL };
  g_autoptr (SimScenario) llama = load_ok (files, NULL);
  g_assert_true (sim_report_workload (llama, &w, NULL));
  g_assert_true (w.memory_fits);
}

/* Per-precision GEMM efficiency (sim_scenario_check_compute). The embedded default (fp8 on H100)
 * has its fp8 figure and the bf16 one its LM head needs, distinct: 0.698 (Azure cuBLASLt FP8) and
 * 0.803 (MAMF BF16), as h100-sxm.ini gives them; its fp16 figure is the bf16 one, stated in the
 * profile (same tensor-core rate and operand size). A profile without gemm_eff_max_fp16 (the H100
 * file with those lines taken out) refuses fp16 matmuls naming FILE:LINE [hardware]
 * gemm_eff_max_fp16, never running with the bf16 or fp8 figure. */
static void
test_gemm_efficiency_per_dtype (void)
{
  g_autoptr (SimScenario) sc = load_ok (NULL, NULL);
  const SimGpuSpec *gpu = sim_scenario_gpu (sc);
  g_assert_cmpfloat (gpu->gemm_eff_max[MODEL_DTYPE_FP8], ==, 0.698);
  g_assert_cmpfloat (gpu->gemm_eff_max[MODEL_DTYPE_BF16], ==, 0.803);
  g_assert_cmpfloat (gpu->gemm_eff_max[MODEL_DTYPE_FP16], ==, 0.803);
  g_assert_cmpfloat (gpu->gemm_eff_half_gflop[MODEL_DTYPE_BF16], ==, 3.2);
  g_assert_cmpfloat (gpu->gemm_eff_half_gflop_any, ==, 7.5);
  GError *error = NULL;
  g_assert_true (sim_scenario_check_compute (sc, &error));
  g_assert_no_error (error);

  const char *fp16[] = { "parallel.matmul_dtype=fp16", NULL };
  g_autoptr (SimScenario) sc16 = load_ok (NULL, fp16);
  g_assert_true (sim_scenario_check_compute (sc16, &error));
  g_assert_no_error (error);

  g_autofree char *h100 = src_path ("scenarios/hardware/h100-sxm.ini");
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (h100, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  GString *kept = g_string_new (NULL);
  for (int i = 0; lines[i]; i++)
    if (!g_str_has_prefix (lines[i], "gemm_eff_max_fp16") && !g_str_has_prefix (lines[i], "include"))
      g_string_append_printf (kept, "%s\n", lines[i]);
  g_autofree char *dir = g_dir_make_tmp ("trainsim-fp16-XXXXXX", NULL);
  g_autofree char *hw = write_tmp (dir, "h100-no-fp16.ini", kept->str);
  g_string_free (kept, TRUE);
  g_autofree char *fab = src_path ("scenarios/fabrics/ndr400-rail-optimized.ini");
  g_autofree char *model = src_path ("scenarios/models/gpt3-175b.ini");
  const char *files[] = { hw, fab, model, NULL };
  const char *sets[] = { "parallel.matmul_dtype=fp16", "cluster.gpus=8", "parallel.micro_batch=1",
                         "parallel.global_batch=8", "training.seq_len=2048", NULL };
  g_autoptr (SimScenario) sc_no = load_ok (files, sets);
  g_assert_false (sim_scenario_check_compute (sc_no, &error));
  g_assert_nonnull (error);
  /* line 7: the profile's [hardware] header, one line up without the include */
  g_autofree char *want = g_strdup_printf ("%s:7: [hardware] gemm_eff_max_fp16: ", hw);
  g_assert_true (g_str_has_prefix (error->message, want));
  g_clear_error (&error);
  g_unlink (hw);
  g_rmdir (dir);
}

/* Parameter counts of the family presets against hand counts (the formulas below, evaluated
 * independently) and the model cards: DeepSeek-V3 671B total / 37B active (+ 14B MTP with its own
 * embedding and head copies); Qwen3-235B-A22B 235B / 22B; gpt-oss-120b 116.83B (active 5.13B
 * without the input embedding, 201,088 x 2,880); BLOOM 176,247,271,424 (ours lacks only its
 * embedding LayerNorm, 2 x 14,336); Nemotron-4 340B; BERT-large 340M (paper) / 336M with the
 * pretraining heads; MPT-70B 64.8B by llm-foundry's yaml.
 *   DeepSeek-V3 MoE layer: MLA 187,107,328 + norms 2h + router 256h + (256 + 1) x 3·h·2,048;
 *     dense layer: MLA + norms + 3·h·18,432; outer: 2 x 129,280h + h (h = 7,168).
 *   Qwen3: 94 x (h·(64 + 2·4)·128 + 64·128·h + 2h + 128h + 128 x 3·h·1,536) + 2 x 151,936h + h.
 *   gpt-oss: 36 x (attention with biases + 2h + 128h + 128 x (3·h·2,880 + 2·2,880 + h)) + 2Vh + h.
 *   BERT: 24 x (4h² + 4h + 8h² + 5h + 4h) + (30,522 + 512)h + 2h + 2h + 2(h² + h) + 2h + 30,522.
 *   Llama 4 (h = 5,120): 48 x (h·(40 + 2·8)·128 + 40·128·h + 2h); each MoE layer + E·h router
 *     + (1 shared + E) x 3·h·8,192 (Scout: 48 layers, E = 16; Maverick: 24, E = 128), each dense
 *     layer + 3·h·16,384 (Maverick: 24); 2 x 202,048h + h; active: top-1 + the shared expert. */
static void
test_family_params (void)
{
  const struct { const char *file; gint64 total, active, mtp; double card_total; } cases[] = {
    { "deepseek-v3", 671026404352, 37552282624, 11610067968, 671e9 },
    { "qwen3-235b-a22b", 235093610496, 22190739456, 0, 235e9 },
    /* Llama 4: the text decoder; the cards' 109B and 400B include the ~0.87B vision encoder. */
    { "llama4-scout", 107769861120, 17172894720, 0, 109e9 },
    { "llama4-maverick", 400711848960, 17184691200, 0, 400e9 },
    { "gpt-oss-120b", 116829149760, 5711976000, 0, 116.83e9 },
    { "bloom-176b", 176247242752, 176247242752, 0, 176247271424.0 },
    { "nemotron-4-340b", 341025638400, 341025638400, 0, 340e9 },
    { "bert-large", 336224058, 336224058, 0, 340e6 },
    { "mpt-70b", 64838443008, 64838443008, 0, 64.8e9 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *rel = g_strdup_printf ("scenarios/models/%s.ini", cases[i].file);
      g_autofree char *model = src_path (rel);
      g_autofree char *hw = src_path ("scenarios/hardware/h100-sxm.ini");
      g_autofree char *fab = src_path ("scenarios/fabrics/ndr400-rail-optimized.ini");
      const char *files[] = { hw, fab, model, NULL };
      const char *sets[] = { "cluster.gpus=8", "parallel.micro_batch=1", "parallel.global_batch=8",
                             strcmp (cases[i].file, "bert-large") == 0 ? "training.seq_len=512" : "training.seq_len=2048", NULL };
      g_autoptr (SimScenario) sc = load_ok (files, sets);
      const ModelShape *m = sim_scenario_shape (sc);
      ModelParams p;
      model_shape_params (m, m->vocab, &p);
      g_assert_cmpint (p.total, ==, cases[i].total);
      g_assert_cmpint (p.active, ==, cases[i].active);
      g_assert_cmpint (p.mtp, ==, cases[i].mtp);
      g_assert_cmpfloat (fabs ((double) p.total / cases[i].card_total - 1.0), <, 0.012);
    }
}

/* Selective recompute of Megatron-Core's modules on DeepSeek-V3 (MLA, MoE, FP8): each module drops
 * exactly what it produces from a MoE layer's saved activations (T = 4096 tokens, h = 7168, FP8 GEMM
 * inputs of 1 byte, bf16 elsewhere): layernorm the two norm outputs, 2·h·1·T; mla_up_proj Q, K, V,
 * 2·T·128·(192 + 192 + 128); moe_act the experts' activation output, 1·2048·(8·T); and replays its
 * ops in the backward, so the step's hardware FLOPs grow by the up-projection GEMMs (q_up, kv_up),
 * while the default selective (core_attn) is unchanged by naming it. Unknown modules and a model
 * without MLA are refused. */
static void
test_recompute_modules (void)
{
  g_autofree char *model = src_path ("scenarios/models/deepseek-v3.ini");
  g_autofree char *hw = src_path ("scenarios/hardware/h800-sxm.ini");
  g_autofree char *fab = src_path ("scenarios/fabrics/ndr400-rail-optimized.ini");
  const char *files[] = { hw, fab, model, NULL };
  const char *base[] = { "cluster.gpus=64", "parallel.ep=64", "parallel.micro_batch=1", "parallel.global_batch=64",
                         "parallel.matmul_dtype=fp8", "training.seq_len=4096", "parallel.recompute=selective", NULL, NULL };
  const struct { const char *modules; double saved; } cases[] = {
    { "layernorm", 2.0 * 7168 * 4096 },
    { "mla_up_proj", 2.0 * 4096 * 128 * (192 + 192 + 128) },
    { "moe_act", 2048.0 * 8 * 4096 },
  };
  g_autoptr (SimScenario) ref = load_ok (files, base);
  int moe_layer = 3; /* the first 3 are dense */
  double ref_act = model_memory_activation_layer (sim_scenario_shape (ref), sim_scenario_plan (ref), moe_layer);
  double ref_hw = model_flops_hardware_per_step (sim_scenario_shape (ref), sim_scenario_plan (ref));
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *set = g_strdup_printf ("parallel.recompute_modules=core_attn,%s", cases[i].modules);
      base[7] = set;
      g_autoptr (SimScenario) sc = load_ok (files, base);
      double act = model_memory_activation_layer (sim_scenario_shape (sc), sim_scenario_plan (sc), moe_layer);
      g_test_message ("%s: %.0f bytes fewer per MoE layer", cases[i].modules, ref_act - act);
      g_assert_cmpfloat (fabs ((ref_act - act) - cases[i].saved), <, 1.0);
      double hwf = model_flops_hardware_per_step (sim_scenario_shape (sc), sim_scenario_plan (sc));
      if (strcmp (cases[i].modules, "mla_up_proj") == 0)
        g_assert_cmpfloat (hwf, >, ref_hw * 1.001);
      else
        g_assert_cmpfloat (hwf, ==, ref_hw); /* norms and activations carry no matmul FLOPs */
      g_autoptr (GArray) ops = model_op_array_new ();
      model_layer_ops (sim_scenario_shape (sc), sim_scenario_plan (sc), moe_layer, MODEL_PASS_BACKWARD, ops);
      int replayed = 0;
      for (guint j = 0; j < ops->len; j++)
        replayed += g_array_index (ops, ModelOp, j).phase == MODEL_PHASE_RECOMPUTE;
      g_assert_cmpint (replayed, >, 1); /* the attention core and the module's ops */
    }
  base[7] = "parallel.recompute_modules=core_attn";
  g_autoptr (SimScenario) same = load_ok (files, base);
  g_assert_cmpfloat (model_memory_activation_layer (sim_scenario_shape (same), sim_scenario_plan (same), moe_layer), ==, ref_act);
  GError *error = NULL;
  base[7] = "parallel.recompute_modules=layernorm,attention";
  g_assert_null (sim_scenario_load (files, base, &error));
  g_assert_nonnull (strstr (error->message, "'attention' is not a module"));
  g_clear_error (&error);
  g_autofree char *gpt = src_path ("scenarios/models/gpt3-175b.ini");
  const char *gfiles[] = { hw, fab, gpt, NULL };
  const char *gsets[] = { "cluster.gpus=8", "parallel.tp=8", "parallel.micro_batch=1", "parallel.global_batch=8",
                          "training.seq_len=2048", "parallel.recompute=selective", "parallel.recompute_modules=mla_up_proj", NULL };
  g_assert_null (sim_scenario_load (gfiles, gsets, &error));
  g_assert_nonnull (strstr (error->message, "mla_up_proj needs multi-latent attention"));
  g_clear_error (&error);
}

/* [calibration] covariance: parsed with errors that name the key; and the band it adds to. With the
 * step overhead alone (its sensitivity is exact: 1 ms of step per ms) the band's σ² is
 * band_log_sigma² + (√C / step)², to the digit; with a GEMM scale, √C · ∂step/∂φ / step, the
 * derivative the same simulation's sensitivities give. */
static void
test_calibration_covariance (void)
{
  const char *files[] = { "runs/gpt3-175b-mlperf-v3.1.ini", NULL };
  static const struct { const char *value, *says; } bad[] = {
    { "mem_insitu 1", "no ':'" },
    { "foo: 1", "'foo' is not a fitted constant" },
    { "mem_insitu launch_us: 1 0 0", "3 numbers for 2 constants" },
    { "mem_insitu launch_us: 1 2 3 4", "not symmetric" },
    { "mem_insitu: -1", "the variance of 'mem_insitu' is negative" },
    { "mem_insitu mem_insitu: 1 0 0 1", "'mem_insitu' appears twice" },
    { "mem_insitu: nan", "'nan' is not a finite number" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *set = g_strdup_printf ("calibration.covariance=%s", bad[i].value);
      const char *sets[] = { set, NULL };
      g_autoptr (GError) error = NULL;
      g_autoptr (SimScenario) sc = sim_scenario_load (files, sets, &error);
      g_assert_null (sc);
      g_assert_nonnull (error);
      g_test_message ("%s -> %s", bad[i].value, error->message);
      g_assert_nonnull (strstr (error->message, "[calibration] covariance"));
      g_assert_nonnull (strstr (error->message, bad[i].says));
    }
  double z = gsl_cdf_ugaussian_Pinv (0.95);
  const char *sets_ms[] = { "calibration.band_log_sigma=0.05", "calibration.covariance=step_overhead_ms: 100", NULL };
  g_autoptr (SimScenario) sc = load_ok (files, sets_ms);
  g_assert_cmpint (sim_scenario_run (sc)->n_cov, ==, 1);
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  SimRunnerPrediction p;
  g_assert_true (sim_runner_predict (sc, &o, &p, NULL));
  double ps = 10e6 / (double) p.step.step_ns, sigma = sqrt (0.05 * 0.05 + ps * ps);
  g_test_message ("step %.6f s: parameter σ %.6f, band %.6f-%.6f", p.step_s, p.param_sigma, p.step_lo_s, p.step_hi_s);
  g_assert_cmpfloat (fabs (p.param_sigma - ps), <, 1e-12);
  g_assert_cmpfloat (fabs (p.step_hi_s - p.step_s * exp (z * sigma)), <, 1e-9 * p.step_s);
  g_assert_cmpfloat (fabs (p.step_lo_s - p.step_s * exp (-z * sigma)), <, 1e-9 * p.step_s);
  /* A GEMM scale's variance: √C · ∂step/∂φ / step, ∂step/∂φ from a simulation with sensitivities. */
  const char *sets_g[] = { "calibration.band_log_sigma=0.05", "calibration.covariance=gemm_insitu_fp8: 0.0004", NULL };
  g_autoptr (SimScenario) sg = load_ok (files, sets_g);
  g_assert_true (sim_runner_predict (sg, &o, &p, NULL));
  SimRunnerOptions ro;
  sim_runner_options_init (&ro);
  ro.sensitivities = TRUE;
  SimCollectiveProfile prof;
  g_assert_true (sim_scenario_collective_profile (sg, &prof, NULL));
  SimRunnerResult r;
  g_assert_true (sim_runner_run (sim_scenario_shape (sg), sim_scenario_plan (sg), sim_scenario_gpu (sg),
                                 sim_scenario_cluster (sg), sim_scenario_fabric (sg), &prof, &ro, &r, NULL));
  double want = 0.02 * fabs (r.step_sens[MODEL_DTYPE_FP8]) / (double) r.step_ns;
  g_test_message ("FP8 GEMM scale: parameter σ %.6f (∂step/∂φ %.4g ns)", p.param_sigma, r.step_sens[MODEL_DTYPE_FP8]);
  g_assert_cmpfloat (want, >, 0.005);
  g_assert_cmpfloat (fabs (p.param_sigma - want), <, 1e-9);
  /* A zero covariance: the band is band_log_sigma's alone. */
  const char *sets_none[] = { "calibration.band_log_sigma=0.05", "calibration.covariance=step_overhead_ms: 0", NULL };
  g_autoptr (SimScenario) sn = load_ok (files, sets_none);
  g_assert_true (sim_runner_predict (sn, &o, &p, NULL));
  g_assert_cmpfloat (p.param_sigma, ==, 0);
  g_assert_cmpfloat (fabs (p.step_hi_s - p.step_s * exp (z * 0.05)), <, 1e-9 * p.step_s);
  /* An assumed peak ([hardware] peak_log_sigma σ_P): σ_P times the GEMM and attention kernels'
   * compute-bound time, Σ_d φ_d ∂step/∂φ_d (φ_d = 1/gemm_insitu_d), over the step. */
  const char *sets_peak[] = { "calibration.band_log_sigma=0.05", "calibration.covariance=step_overhead_ms: 0",
                              "hardware.peak_log_sigma=0.05", NULL };
  g_autoptr (SimScenario) sp = load_ok (files, sets_peak);
  g_assert_true (sim_runner_predict (sp, &o, &p, NULL));
  const SimGpuSpec *gpu = sim_scenario_gpu (sp);
  double compute_ns = 0;
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
    compute_ns += r.step_sens[d] * (gpu->gemm_insitu[d] > 0 ? 1.0 / gpu->gemm_insitu[d] : 1.0);
  double share = compute_ns / (double) r.step_ns;
  g_test_message ("assumed peak: parameter σ %.6f, GEMM and attention share of the step %.3f", p.param_sigma, share);
  g_assert_cmpfloat (share, >, 0.3);
  g_assert_cmpfloat (share, <=, 1.0);
  g_assert_cmpfloat (fabs (p.param_sigma - 0.05 * share), <, 1e-9);
  g_assert_cmpfloat (fabs (p.step_hi_s - p.step_s * exp (z * sqrt (0.05 * 0.05 + p.param_sigma * p.param_sigma))), <,
                     1e-9 * p.step_s);
}

/* [parallel] pp_layout: its stages over pp set vpp; a vpp that disagrees, or a layout the
 * simulator cannot run, fails naming the key; a layout that gives the chunks of
 * pp_first/last_stage_layers simulates the same step, to the nanosecond. */
static void
test_pp_layout (void)
{
  const char *files[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "models/llama3.1-8b.ini", NULL };
  const char *common[] = { "cluster.gpus=8", "parallel.pp=4", "parallel.global_batch=16", "parallel.micro_batch=1",
                           "training.seq_len=4096" };
  const char *extra[][3] = {
    { "parallel.pp_layout=Et*4|(t*4|)*6t*4L", NULL },                                     /* vpp 2, even */
    { "parallel.vpp=2", NULL },
    { "parallel.pp_layout=Et*7|t*8|t*8|t*9L", NULL },
    { "parallel.pp_first_stage_layers=7", "parallel.pp_last_stage_layers=9", NULL },
  };
  gint64 step[4];
  for (int i = 0; i < 4; i++)
    {
      const char *sets[9] = { NULL };
      for (int k = 0; k < 5; k++)
        sets[k] = common[k];
      for (int k = 0; extra[i][k]; k++)
        sets[5 + k] = extra[i][k];
      g_autoptr (SimScenario) sc = load_ok (files, sets);
      if (i == 0)
        g_assert_cmpint (sim_scenario_plan (sc)->vpp, ==, 2);
      SimPredictOptions o = { 0 };
      sim_runner_options_init (&o.run);
      SimRunnerPrediction p;
      g_assert_true (sim_runner_predict (sc, &o, &p, NULL));
      step[i] = p.step.step_ns;
    }
  g_test_message ("steps: layout vpp 2 %" G_GINT64_FORMAT ", vpp 2 %" G_GINT64_FORMAT ", layout 7/8/8/9 %" G_GINT64_FORMAT
                  ", first 7 last 9 %" G_GINT64_FORMAT " ns", step[0], step[1], step[2], step[3]);
  g_assert_cmpint (step[0], ==, step[1]);
  g_assert_cmpint (step[2], ==, step[3]);
  g_assert_cmpint (step[2], !=, step[1]);
  /* Stages with no transformer layer (the embedding alone, nothing, the loss alone) run: every
   * rank ends its step, the empty ones passing activations on. */
  const char *sets_e[] = { common[0], common[1], common[2], common[3], common[4],
                           "parallel.pp_layout=E|t*16||t*16L", NULL };
  g_autoptr (SimScenario) se = load_ok (files, sets_e);
  SimPredictOptions oe = { 0 };
  sim_runner_options_init (&oe.run);
  oe.run.memory_advisory = TRUE; /* two ranks hold every layer's optimizer state: 86 GiB */
  SimRunnerPrediction pe;
  g_assert_true (sim_runner_predict (se, &oe, &pe, NULL));
  g_test_message ("E|t*16||t*16L: %" G_GINT64_FORMAT " ns", pe.step.step_ns);
  g_assert_cmpint (pe.step.step_ns, >, step[1]); /* two ranks carry the layers of four */
  /* torchtitan splits 32 layers over 3 stages itself (10, 11, 11); Megatron-LM refuses them. */
  const char *sets_t[] = { common[0], "parallel.pp=3", "cluster.gpus=24", common[3], common[4], "parallel.global_batch=24",
                           "parallel.framework=fsdp2", "parallel.zero=2", "parallel.fsdp=true", NULL };
  g_autoptr (SimScenario) st = load_ok (files, sets_t);
  const ModelPlan *tp = sim_scenario_plan (st);
  g_assert_nonnull (tp->pp_layout);
  g_assert_cmpint (tp->pp_layout[1], ==, 10);
  g_assert_cmpint (tp->pp_layout[2], ==, 11);
  g_assert_cmpint (tp->pp_layout[3], ==, 11);
  sets_t[6] = "parallel.framework=megatron", sets_t[7] = "parallel.zero=1", sets_t[8] = NULL;
  g_autoptr (GError) terr = NULL;
  g_autoptr (SimScenario) sm = sim_scenario_load (files, sets_t, &terr);
  g_assert_null (sm);
  g_assert_nonnull (strstr (terr->message, "is not divisible by pp*vpp"));
  static const struct { const char *a, *b, *says, *key; } bad[] = {
    { "parallel.pp_layout=Et*4|(t*4|)*6t*4L", "parallel.vpp=4", "make vpp 2, but vpp is set to 4", "pp_layout" },
    { "parallel.pp_layout=Et*16|t*16|L|", NULL, "the loss (L) must close the last stage", "pp_layout" },
    { "parallel.pp_layout=Et*8|t*8|t*8|t*8L", "parallel.pp_first_stage_layers=8", "pp_layout excludes",
      "pp_first_stage_layers" }, /* the plan's check names the key set last */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *sets[] = { common[0], common[1], common[2], common[3], common[4], bad[i].a, bad[i].b, NULL };
      g_autoptr (GError) error = NULL;
      g_autoptr (SimScenario) sc = sim_scenario_load (files, sets, &error);
      g_assert_null (sc);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, bad[i].says));
      g_autofree char *key = g_strdup_printf ("[parallel] %s:", bad[i].key);
      g_assert_nonnull (strstr (error->message, key));
    }
}

/* [fabric] sharp: BERT on 4,320 A100 (SBATCH_NETWORK=sharp) all-reduces its gradients through the
 * switches, so its step is shorter than without; a profile with no CollNet factor is refused, with the
 * key named. */
static void
test_sharp (void)
{
  const char *files[] = { "runs/bert-large-mlperf-v1.1-nvidia-4320.ini", NULL };
  const char *off[] = { "fabric.sharp=false", NULL };
  g_autoptr (SimScenario) on = load_ok (files, NULL);
  g_autoptr (SimScenario) plain = load_ok (files, off);
  g_assert_true (sim_scenario_fabric (on)->sharp);
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  SimRunnerPrediction a, b;
  g_assert_true (sim_runner_predict (on, &o, &a, NULL));
  g_assert_true (sim_runner_predict (plain, &o, &b, NULL));
  g_test_message ("BERT 4,320 A100: %.4f s with SHARP, %.4f s without", a.step_s, b.step_s);
  g_assert_cmpfloat (a.step_s, <, 0.97 * b.step_s);
  const char *sets[] = { "hardware.collnet_eff=0", NULL };
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load (files, sets, &error);
  g_assert_no_error (error);
  SimCollectiveProfile prof;
  g_assert_false (sim_scenario_collective_profile (sc, &prof, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "collnet_eff"));
  g_clear_error (&error);
}

/* [parallel] attention_kernel: MPT-70B on 512 H100 (FlashAttention-2, its llm-foundry yaml) is slower
 * than with the profile's cuDNN kernel and faster than with the Triton one; a profile without
 * FlashAttention-2's figures refuses fa2 and triton naming hardware attn_fa2_eff, and a fused kernel
 * with unfused_attention is refused naming the conflict. */
static void
test_attention_kernel (void)
{
  const char *files[] = { "runs/mpt-70b-h100-512.ini", NULL };
  const char *dflt[] = { "parallel.attention_kernel=default", NULL };
  const char *triton[] = { "parallel.attention_kernel=triton", NULL };
  g_autoptr (SimScenario) fa2 = load_ok (files, NULL);
  g_autoptr (SimScenario) cudnn = load_ok (files, dflt);
  g_autoptr (SimScenario) tri = load_ok (files, triton);
  g_assert_cmpint (sim_scenario_plan (fa2)->attention_kernel, ==, MODEL_ATTN_FA2);
  SimPredictOptions o = { 0 };
  sim_runner_options_init (&o.run);
  SimRunnerPrediction a, b, c;
  g_assert_true (sim_runner_predict (cudnn, &o, &a, NULL));
  g_assert_true (sim_runner_predict (fa2, &o, &b, NULL));
  g_assert_true (sim_runner_predict (tri, &o, &c, NULL));
  g_test_message ("MPT-70B on 512 H100: %.4f s cuDNN, %.4f s FA2, %.4f s Triton", a.step_s, b.step_s, c.step_s);
  g_assert_cmpfloat (a.step_s, <, b.step_s);
  g_assert_cmpfloat (b.step_s, <, c.step_s);
  const char *b200[] = { "hardware/b200.ini", "fabrics/ndr400-rail-optimized.ini", "models/mpt-70b.ini", NULL };
  const char *sets[] = { "parallel.attention_kernel=fa2", "cluster.gpus=64", "parallel.micro_batch=1",
                         "parallel.global_batch=64", "training.seq_len=2048", NULL };
  GError *error = NULL;
  g_autoptr (SimScenario) sc = sim_scenario_load (b200, sets, &error);
  g_assert_no_error (error);
  g_assert_false (sim_scenario_check_compute (sc, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "attn_fa2_eff"));
  g_clear_error (&error);
  const char *unfused[] = { "parallel.unfused_attention=true", NULL };
  g_autoptr (SimScenario) bad = sim_scenario_load (files, unfused, &error);
  g_assert_null (bad);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "attention_kernel"));
  g_clear_error (&error);
}

/* The GPU's FP8 operand layouts reach the plan: Blackwell (compute capability 10.x) takes FP8
 * operands in any layout, Hopper only TN; a set overrides the profile. */
static void
test_fp8_any_layout (void)
{
  const char *sets[] = { "cluster.gpus=64", "parallel.micro_batch=1", "parallel.global_batch=64",
                         "parallel.matmul_dtype=fp8", "training.seq_len=2048", NULL };
  const char *off[] = { "cluster.gpus=64", "parallel.micro_batch=1", "parallel.global_batch=64",
                        "parallel.matmul_dtype=fp8", "training.seq_len=2048", "hardware.fp8_any_layout=false", NULL };
  const char *b200[] = { "hardware/b200.ini", "fabrics/ndr400-rail-optimized.ini", "models/mpt-70b.ini", NULL };
  const char *h100[] = { "hardware/h100-sxm.ini", "fabrics/ndr400-rail-optimized.ini", "models/mpt-70b.ini", NULL };
  g_autoptr (SimScenario) b = load_ok (b200, sets);
  g_autoptr (SimScenario) bo = load_ok (b200, off);
  g_autoptr (SimScenario) h = load_ok (h100, sets);
  g_assert_true (sim_scenario_plan (b)->fp8_any_layout);
  g_assert_false (sim_scenario_plan (bo)->fp8_any_layout);
  g_assert_false (sim_scenario_plan (h)->fp8_any_layout);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scenario/sharp", test_sharp);
  g_test_add_func ("/scenario/attention-kernel", test_attention_kernel);
  g_test_add_func ("/scenario/fp8-any-layout", test_fp8_any_layout);
  g_test_add_func ("/scenario/readme-agrees", test_readme_agrees);
  g_test_add_func ("/scenario/calibration-covariance", test_calibration_covariance);
  g_test_add_func ("/scenario/pp-layout", test_pp_layout);
  g_test_add_func ("/scenario/tp-overlap-presets", test_tp_overlap_presets);
  g_test_add_func ("/scenario/resources-complete", test_resources_complete);
  g_test_add_func ("/scenario/embedded-default", test_embedded_default);
  g_test_add_func ("/scenario/disk-precedence", test_disk_precedence);
  g_test_add_func ("/scenario/merge-order", test_merge_order);
  g_test_add_func ("/scenario/includes", test_includes);
  g_test_add_func ("/scenario/llama-rescale", test_llama_rescale);
  g_test_add_func ("/scenario/all-files-load", test_all_files_load);
  g_test_add_func ("/scenario/report-formats", test_report_formats);
  g_test_add_func ("/scenario/gemm-efficiency-per-dtype", test_gemm_efficiency_per_dtype);
  g_test_add_func ("/scenario/family-params", test_family_params);
  g_test_add_func ("/scenario/recompute-modules", test_recompute_modules);
  return g_test_run ();
}
