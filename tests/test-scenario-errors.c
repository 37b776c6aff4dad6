/* Bad scenario input through the real binary ($TRAINSIM): one test per kind of error, each checking
 * exit status 2 and the exact `FILE:LINE: [group] key:` prefix of the message. The scenarios are
 * written to a temporary directory; they include the embedded hardware, fabric and model files, so
 * only the lines under test live in the temporary file and their line numbers are known here. */
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>

static char *tmpdir;

/* A valid small plan on embedded pieces: GPT-3 175B, 64 H100, TP8 PP8, 64 sequences per step. */
static const char *const base =
  "[scenario]\n"                                                                       /* 1 */
  "include = embedded:hardware/h100-sxm.ini;embedded:fabrics/ndr400-rail-optimized.ini;" /* 2 */
  "embedded:models/gpt3-175b.ini\n"
  "[cluster]\n"                                                                        /* 3 */
  "gpus = 64\n"                                                                        /* 4 */
  "[parallel]\n"                                                                       /* 5 */
  "tp = 8\n"                                                                           /* 6 */
  "pp = 8\n"                                                                           /* 7 */
  "micro_batch = 1\n"                                                                  /* 8 */
  "global_batch = 64\n"                                                                /* 9 */
  "[training]\n"                                                                       /* 10 */
  "seq_len = 2048\n";                                                                  /* 11 */

static char *
write_file (const char *name, const char *text)
{
  char *path = g_build_filename (tmpdir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

/* Runs trainsim with argv (NULL-terminated, without the program); returns the exit status. */
static int
run_trainsim (const char *const *args, char **out, char **err)
{
  const char *bin = g_getenv ("TRAINSIM");
  g_assert_nonnull (bin);
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) bin);
  for (int i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  int status = 0;
  GError *error = NULL;
  gboolean ok = g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_ptr_array_free (argv, TRUE);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return -1;
}

/* Expects `trainsim run FILE [extra…]` to fail with status 2 and stderr starting with `prefix`
 * (an @ in prefix stands for FILE's path). */
static void
expect_error_args (const char *text, const char *prefix_fmt, const char *const *extra)
{
  g_autofree char *path = write_file ("bad.ini", text);
  const char *args[16] = { "run", path, NULL };
  for (int i = 0; extra && extra[i]; i++)
    {
      g_assert_cmpint (i, <, 13);
      args[i + 2] = extra[i];
    }
  g_autofree char *out = NULL, *err = NULL;
  int rc = run_trainsim (args, &out, &err);
  g_auto (GStrv) parts = g_strsplit (prefix_fmt, "@", -1);
  g_autofree char *prefix = g_strjoinv (path, parts);
  if (!g_str_has_prefix (err, prefix))
    g_error ("expected stderr to start with\n  %s\ngot\n  %s", prefix, err);
  g_assert_cmpint (rc, ==, 2);
  g_assert_cmpstr (out, ==, "");
}

static void
expect_error (const char *text, const char *prefix_fmt, const char *extra1, const char *extra2)
{
  const char *extra[] = { extra1, extra2, NULL };
  expect_error_args (text, prefix_fmt, extra);
}

/* The base with one line replaced (same line number). */
static char *
base_replace (const char *old, const char *new)
{
  const char *p = strstr (base, old);
  g_assert_nonnull (p);
  return g_strdup_printf ("%.*s%s%s", (int) (p - base), base, new, p + strlen (old));
}

static char *
base_with (const char *extra)
{
  return g_strconcat (base, extra, NULL);
}

static void
test_valid_base (void)
{
  /* The base itself is valid: the error tests below fail only because of their one bad line. */
  g_autofree char *path = write_file ("good.ini", base);
  const char *args[] = { "run", path, "--format", "tsv", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (run_trainsim (args, &out, &err), ==, 0);
  g_assert_true (g_str_has_prefix (out, "# tool: trainsim run\n"));
}

static void
test_unknown_group (void)
{
  g_autofree char *t = base_with ("[modle]\n" "layers = 3\n"); /* line 12 */
  expect_error (t, "@:12: [modle]: unknown group", NULL, NULL);
}

static void
test_unknown_key (void)
{
  g_autofree char *t = base_with ("[model]\n" "layer = 3\n"); /* line 13 */
  expect_error (t, "@:13: [model] layer: unknown key", NULL, NULL);
}

static void
test_missing_required (void)
{
  /* No micro_batch: reported at the [parallel] header of the last file that has the group (line 5). */
  g_autofree char *t = base_replace ("micro_batch = 1\n", "# no micro_batch\n");
  expect_error (t, "@:5: [parallel] micro_batch: required key missing", NULL, NULL);
}

static void
test_wrong_type (void)
{
  g_autofree char *t = base_with ("[model]\n" "layers = ninety-six\n");
  expect_error (t, "@:13: [model] layers: 'ninety-six' is not an integer", NULL, NULL);
}

static void
test_not_finite (void)
{
  g_autofree char *t = base_with ("[cluster]\n" "nic_Gbps = nan\n");
  expect_error (t, "@:13: [cluster] nic_Gbps: nan is not finite", NULL, NULL);
  g_autofree char *t2 = base_with ("[cluster]\n" "nic_Gbps = inf\n");
  expect_error (t2, "@:13: [cluster] nic_Gbps: inf is not finite", NULL, NULL);
}

static void
test_negative (void)
{
  g_autofree char *t = base_with ("[parallel]\n" "vpp = -2\n");
  expect_error (t, "@:13: [parallel] vpp: -2 is negative", NULL, NULL);
}

static void
test_out_of_range (void)
{
  /* 10^12 GPUs: far beyond any cluster (the table's sane maximum is 2^22). */
  g_autofree char *t = base_replace ("gpus = 64\n", "gpus = 1000000000000\n");
  expect_error (t, "@:4: [cluster] gpus: 1000000000000 is out of the sane range", NULL, NULL);
}

static void
test_bad_enum (void)
{
  g_autofree char *t = base_with ("[model]\n" "activation = relu\n");
  expect_error (t, "@:13: [model] activation: 'relu' is not one of: gelu, swiglu", NULL, NULL);
}

/* parallel.framework names one of the frameworks model/framework.c describes. */
static void
test_bad_framework (void)
{
  g_autofree char *t = base_with ("[parallel]\n" "framework = megatron-lm\n");
  expect_error (t, "@:13: [parallel] framework: 'megatron-lm' is not one of: megatron, nemo, deepspeed, fsdp2, "
                "composer", NULL, NULL);
}

/* A plan the framework does not offer (FSDP2 has no optimizer-only sharding): the framework's line. */
static void
test_framework_rule (void)
{
  g_autofree char *t = base_with ("[parallel]\n" "framework = fsdp2\n" "zero = 1\n");
  expect_error (t, "@:13: [parallel] framework: framework fsdp2 has no optimizer-only sharding (zero 1)", NULL, NULL);
}

/* A [tp_overlap] value the userbuffers syntax refuses: the reason after the key's place. */
static void
test_bad_tp_overlap (void)
{
  g_autofree char *t = base_with ("[tp_overlap]\n" "proj_fprop = pipeline splits=0\n");
  expect_error (t, "@:13: [tp_overlap] proj_fprop: 'splits=0': splits= needs an integer in 1..64", NULL, NULL);
}

static void
test_missing_include (void)
{
  g_autofree char *t = g_strdup ("[scenario]\ninclude = no-such-file.ini\n");
  expect_error (t, "@:2: [scenario] include: cannot read", NULL, NULL);
}

static void
test_include_cycle (void)
{
  g_autofree char *a = write_file ("cycle-a.ini", "[scenario]\ninclude = bad.ini\n");
  g_autofree char *t = g_strdup ("# a cycle through cycle-a.ini\n[scenario]\ninclude = cycle-a.ini\n");
  /* bad.ini includes cycle-a.ini, whose line 2 includes bad.ini again. */
  g_autofree char *prefix = g_strdup_printf ("%s:2: [scenario] include: '", a);
  g_autofree char *path = write_file ("bad.ini", t);
  const char *args[] = { "run", path, NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (run_trainsim (args, &out, &err), ==, 2);
  g_assert_true (g_str_has_prefix (err, prefix));
  g_assert_nonnull (strstr (err, "cycle"));
}

static void
test_bad_set (void)
{
  expect_error (base, "--set:1: 'tp=4': expected group.key=value", "--set", "tp=4");
  expect_error (base, "--set:1: [parallel] tpp: unknown key", "--set", "parallel.tpp=4");
  expect_error (base, "--set:1: [parallel] tp: 'four' is not an integer", "--set", "parallel.tp=four");
}

static void
test_hardware_without_source (void)
{
  g_autofree char *t = base_with ("[hardware]\n" "hbm_TBps = 3.35\n");
  expect_error (t, "@:13: [hardware] hbm_TBps: a hardware figure without a source", NULL, NULL);
}

static void
test_duplicate_key (void)
{
  g_autofree char *t = base_with ("[parallel]\n" "vpp = 2\n" "vpp = 3\n");
  expect_error (t, "@:14: [parallel] vpp: set twice in one file (first at line 13)", NULL, NULL);
}

static void
test_both_alternatives (void)
{
  g_autofree char *t = base_with ("[parallel]\n" "global_batch_per_dp = 64\n");
  expect_error (t, "@:13: [parallel] global_batch_per_dp: given together with global_batch (line 9)", NULL, NULL);
}

static void
test_gpus_not_divisible (void)
{
  /* 72 GPUs over tp8·pp8 = 64: dp would be 1.125. */
  g_autofree char *t = base_replace ("gpus = 64\n", "gpus = 72\n");
  expect_error (t, "@:4: [cluster] gpus: 72 GPUs is not a multiple of tp·cp·pp", NULL, NULL);
}

static void
test_plan_rule (void)
{
  /* GPT-3's 96 heads do not split over tp 5 (a model/plan.c rule, mapped to the [parallel] key). */
  const char *extra[] = { "--set", "cluster.gpus=40", "--set", "parallel.tp=5", "--set", "parallel.global_batch=8", NULL };
  expect_error_args (base, "--set:2: [parallel] tp: heads 96 is not divisible by tp 5", extra);
}

static void
test_shape_rule (void)
{
  /* 96 query heads cannot be grouped over 7 KV heads (model/shape.c rule). */
  g_autofree char *t = base_with ("[model]\n" "kv_heads = 7\n");
  expect_error (t, "@:13: [model] kv_heads: 96 query heads cannot be grouped over 7", NULL, NULL);
}

static void
test_binary_file (void)
{
  /* Not text: refused at the first NUL or non-UTF-8 byte, by line and column (a file of NULs once
   * loaded as an empty key file and failed only later, on a missing [model] key). */
  static const struct { const char *bytes; gsize len; const char *prefix; } cases[] = {
    { "\0\0\0\0", 4, "@:1: column 1: a NUL byte: this is not a text file" },
    { "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16, "@:1: column 1: byte 0x89 is not UTF-8 text" },
    { "[scenario]\nname = x\0y\n", 22, "@:2: column 9: a NUL byte" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_build_filename (tmpdir, "binary.ini", NULL);
      g_assert_true (g_file_set_contents (path, cases[i].bytes, (gssize) cases[i].len, NULL));
      const char *args[] = { "run", path, NULL };
      g_autofree char *out = NULL, *err = NULL;
      int rc = run_trainsim (args, &out, &err);
      g_auto (GStrv) parts = g_strsplit (cases[i].prefix, "@", -1);
      g_autofree char *prefix = g_strjoinv (path, parts);
      if (!g_str_has_prefix (err, prefix))
        g_error ("expected stderr to start with\n  %s\ngot\n  %s", prefix, err);
      g_assert_cmpint (rc, ==, 2);
      g_assert_cmpstr (out, ==, "");
    }
}

static void
test_bad_format (void)
{
  g_autofree char *path = write_file ("good.ini", base);
  const char *args[] = { "run", path, "--format", "xml", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (run_trainsim (args, &out, &err), ==, 2);
  g_assert_true (g_str_has_prefix (err, "trainsim run: --format xml: unknown format"));
}

/* DualPipe's conditions (model/schedule.h), each named at the line that set it: an odd pp, and too
 * few micro-batches (8 where 2·pp = 16 are needed). */
static void
test_dualpipe (void)
{
  g_autofree char *odd = base_with ("[parallel]\n" "schedule = dualpipe\n");
  const char *extra[] = { "--set", "parallel.pp=3", "--set", "cluster.gpus=48", "--set", "parallel.global_batch=48", NULL };
  expect_error_args (odd, "--set:1: [parallel] pp: DualPipe runs two copies of an even number of pipeline stages", extra);
  g_autofree char *few = base_replace ("global_batch = 64\n", "global_batch = 8\n");
  g_autofree char *t = g_strconcat (few, "[parallel]\n" "schedule = dualpipe\n", NULL);
  expect_error (t, "@:7: [parallel] pp: DualPipe needs vpp = 2 (the two pipeline copies), an even pp (at most 128) and an even "
                "micro-batch count of at least 2*pp (got pp=8, vpp=2, micro-batches=8)", NULL, NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp ("trainsim-scenario-XXXXXX", NULL);
  g_assert_nonnull (tmpdir);
  g_test_add_func ("/scenario/errors/valid-base", test_valid_base);
  g_test_add_func ("/scenario/errors/unknown-group", test_unknown_group);
  g_test_add_func ("/scenario/errors/unknown-key", test_unknown_key);
  g_test_add_func ("/scenario/errors/missing-required", test_missing_required);
  g_test_add_func ("/scenario/errors/wrong-type", test_wrong_type);
  g_test_add_func ("/scenario/errors/not-finite", test_not_finite);
  g_test_add_func ("/scenario/errors/negative", test_negative);
  g_test_add_func ("/scenario/errors/out-of-range", test_out_of_range);
  g_test_add_func ("/scenario/errors/bad-enum", test_bad_enum);
  g_test_add_func ("/scenario/errors/bad-framework", test_bad_framework);
  g_test_add_func ("/scenario/errors/dualpipe", test_dualpipe);
  g_test_add_func ("/scenario/errors/framework-rule", test_framework_rule);
  g_test_add_func ("/scenario/errors/bad-tp-overlap", test_bad_tp_overlap);
  g_test_add_func ("/scenario/errors/missing-include", test_missing_include);
  g_test_add_func ("/scenario/errors/include-cycle", test_include_cycle);
  g_test_add_func ("/scenario/errors/bad-set", test_bad_set);
  g_test_add_func ("/scenario/errors/hardware-without-source", test_hardware_without_source);
  g_test_add_func ("/scenario/errors/duplicate-key", test_duplicate_key);
  g_test_add_func ("/scenario/errors/both-alternatives", test_both_alternatives);
  g_test_add_func ("/scenario/errors/gpus-not-divisible", test_gpus_not_divisible);
  g_test_add_func ("/scenario/errors/plan-rule", test_plan_rule);
  g_test_add_func ("/scenario/errors/shape-rule", test_shape_rule);
  g_test_add_func ("/scenario/errors/bad-format", test_bad_format);
  g_test_add_func ("/scenario/errors/binary-file", test_binary_file);
  int rc = g_test_run ();
  /* Clean up the temporary files. */
  GDir *dir = g_dir_open (tmpdir, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *p = g_build_filename (tmpdir, name, NULL);
      g_unlink (p);
    }
  if (dir)
    g_dir_close (dir);
  g_rmdir (tmpdir);
  g_free (tmpdir);
  return rc;
}
