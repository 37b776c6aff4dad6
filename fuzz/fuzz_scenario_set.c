/* Fuzzes the scenario loader's `--set` parser: each input line is one `--set group.key=value`
 * layered on the embedded default scenario, as `trainsim run --set …` does, then the scenario is
 * resolved. As on the command line, the first refused line ends the input. */
#include "fuzz/fuzz.h"
#include "sim/scenario/scenario.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  /* A command-line argument ends at its first NUL, as these lines do. */
  g_autofree char *text = g_strndup ((const char *) data, size);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (SimScenario) sc = sim_scenario_new ();
  GError *error = NULL;
  gboolean ok = sim_scenario_add_file (sc, SIM_SCENARIO_DEFAULT, &error);
  g_assert_no_error (error);
  for (int i = 0; ok && lines[i]; i++)
    ok = sim_scenario_add_set (sc, lines[i], &error);
  SimCollectiveProfile coll;
  if (ok && sim_scenario_resolve (sc, &error) && sim_scenario_check_compute (sc, &error))
    sim_scenario_collective_profile (sc, &coll, &error);
  g_clear_error (&error);
  return 0;
}
