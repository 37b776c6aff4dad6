/* `trainsim compare`: trainer-log medians, input errors, and the command's figures agreeing with
 * `trainsim run` on the same scenario. The TSV fixture is synthetic (hand-written): what is checked
 * is the arithmetic, not the accuracy of a prediction. */
#include <math.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "sim/calibrate/compare.h"

static char *
fixture (const char *name)
{
  return g_test_build_filename (G_TEST_DIST, "data", name, NULL);
}

/* Steps 6..8 after skipping 5: step_ms 100, 110, 105 -> median 105 ms; forward 30, 32, 31 -> 31;
 * backward 60, 66, 63 -> 63; optimizer 6, 7, 8 -> 7; exposed comm 4, 5, 3 -> 4. */
static void
test_medians (void)
{
  g_autofree char *path = fixture ("compare-trainer-synthetic.tsv");
  SimTrainerLog log;
  GError *error = NULL;
  g_assert_true (sim_trainer_log_read (path, 5, &log, &error));
  g_assert_no_error (error);
  g_assert_cmpint (log.rows, ==, 8);
  g_assert_cmpint (log.used, ==, 3);
  g_assert_cmpfloat_with_epsilon (log.median_s[SIM_PHASE_STEP], 0.105, 1e-12);
  g_assert_cmpfloat_with_epsilon (log.median_s[SIM_PHASE_FORWARD], 0.031, 1e-12);
  g_assert_cmpfloat_with_epsilon (log.median_s[SIM_PHASE_BACKWARD], 0.063, 1e-12);
  g_assert_cmpfloat_with_epsilon (log.median_s[SIM_PHASE_OPTIMIZER], 0.007, 1e-12);
  g_assert_cmpfloat_with_epsilon (log.median_s[SIM_PHASE_COMM_EXPOSED], 0.004, 1e-12);
  g_assert_cmpuint (log.provenance->len, ==, 3);
  sim_trainer_log_clear (&log);
  /* No skip: 8 values, median = mean of the 4th and 5th smallest step times (150, 200) = 175 ms. */
  g_assert_true (sim_trainer_log_read (path, 0, &log, NULL));
  g_assert_cmpfloat_with_epsilon (log.median_s[SIM_PHASE_STEP], 0.175, 1e-12);
  sim_trainer_log_clear (&log);
}

static void
expect_error (const char *text, int skip, const char *fragment)
{
  g_autofree char *dir = g_dir_make_tmp ("trainsim-compare-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "log.tsv", NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  SimTrainerLog log;
  GError *error = NULL;
  g_assert_false (sim_trainer_log_read (path, skip, &log, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, path));
  g_assert_nonnull (strstr (error->message, fragment));
  g_error_free (error);
  sim_trainer_log_clear (&log);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_bad_logs (void)
{
  expect_error ("# only provenance\n", 0, ":1: no header row");
  expect_error ("step\tloss\n1\t2\n", 0, ":1: header row has no `step` and `step_ms`");
  expect_error ("step\tstep_ms\n1\t100\n2\n", 0, ":3: 1 fields where the header has 2");
  expect_error ("step\tstep_ms\n1\tfast\n", 0, ":2: column step_ms: 'fast' is not a finite");
  expect_error ("step\tstep_ms\n1\tnan\n", 0, ":2: column step_ms: 'nan'");
  expect_error ("step\tstep_ms\n1\t-3\n", 0, ":2: column step_ms: '-3'");
  expect_error ("step\tstep_ms\n1\t100\n2\t100\n", 2, "all within the 2 skipped warm-up steps");
}

static JsonObject *
run_json (char **argv, JsonParser *parser)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;
  GError *error = NULL;
  g_assert_true (g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", argv[1], err);
  g_assert_true (json_parser_load_from_data (parser, out, -1, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

/* compare's prediction is the one `trainsim run` makes for the same scenario; the measured step is
 * the 105 ms median above; the error is 100 (p - m) / m. */
static void
test_cli_agrees_with_run (void)
{
  const char *bin = g_getenv ("TRAINSIM");
  if (!bin)
    {
      g_test_skip ("TRAINSIM is not set (run through make check)");
      return;
    }
  g_autofree char *log = fixture ("compare-trainer-synthetic.tsv");
  g_autofree char *sc = fixture ("compare-gpt2-2gpu.ini");
  char *run_argv[] = { (char *) bin, (char *) "run", sc, (char *) "--format", (char *) "json", NULL };
  char *cmp_argv[] = { (char *) bin, (char *) "compare", log, sc, (char *) "--format", (char *) "json", NULL };
  g_autoptr (JsonParser) p1 = json_parser_new ();
  g_autoptr (JsonParser) p2 = json_parser_new ();
  JsonObject *run = run_json (run_argv, p1);
  JsonObject *cmp = run_json (cmp_argv, p2);
  double predicted = json_object_get_double_member (run, "step_time_s");
  g_assert_cmpfloat (predicted, >, 0);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (cmp, "predicted_step_s"), predicted,
                                  1e-12 * predicted);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (cmp, "measured_step_s"), 0.105, 1e-12);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (cmp, "error_pct"),
                                  100.0 * (predicted - 0.105) / 0.105, 1e-9);
  JsonArray *phases = json_object_get_array_member (cmp, "phases");
  g_assert_cmpuint (json_array_get_length (phases), ==, SIM_PHASE_COUNT);
  /* Forward + backward + optimizer + exposed comm cannot exceed the step they are part of. */
  double sum = 0;
  for (guint i = 1; i < SIM_PHASE_COUNT; i++)
    {
      double v = json_object_get_double_member (json_array_get_object_element (phases, i), "predicted_s");
      g_assert_cmpfloat (v, >=, 0);
      sum += v;
    }
  g_assert_cmpfloat (sum, <=, predicted * (1 + 1e-9));
}

static void
test_cli_usage (void)
{
  const char *bin = g_getenv ("TRAINSIM");
  if (!bin)
    {
      g_test_skip ("TRAINSIM is not set (run through make check)");
      return;
    }
  g_autofree char *log = fixture ("compare-trainer-synthetic.tsv");
  char *argv1[] = { (char *) bin, (char *) "compare", log, NULL };
  char *argv2[] = { (char *) bin, (char *) "compare", (char *) "/nonexistent.tsv", (char *) "x.ini", NULL };
  char **cases[] = { argv1, argv2 };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      int status = 0;
      g_autofree char *err = NULL;
      g_assert_true (g_spawn_sync (NULL, cases[i], NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                                   &status, NULL));
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 2);
      g_assert_true (g_str_has_prefix (err, "trainsim compare: "));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/compare/log/medians", test_medians);
  g_test_add_func ("/compare/log/bad-input", test_bad_logs);
  g_test_add_func ("/compare/cli/agrees-with-run", test_cli_agrees_with_run);
  g_test_add_func ("/compare/cli/usage", test_cli_usage);
  return g_test_run ();
}
