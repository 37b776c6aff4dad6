/* Fuzzes the scenario loader on one file: sim_scenario_add_file, then sim_scenario_resolve and the
 * checks a run makes next. The loader reads paths (includes resolve against the file's folder), so
 * each input is written to one file in a private folder under $TMPDIR, made once per process and
 * removed at exit (making and removing a folder per input costs more than loading it on some disks). */
#include "fuzz/fuzz.h"
#include <stdio.h>
#include <stdlib.h>
#include <glib/gstdio.h>
#include "sim/scenario/scenario.h"

static char *dir, *path;

static void
remove_file (void)
{
  g_unlink (path);
  g_rmdir (dir);
  g_clear_pointer (&path, g_free);
  g_clear_pointer (&dir, g_free);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  if (!path)
    {
      dir = g_dir_make_tmp ("trainsim-fuzz-XXXXXX", NULL);
      g_assert_nonnull (dir);
      path = g_build_filename (dir, "fuzz.ini", NULL);
      atexit (remove_file);
    }
  FILE *f = fopen (path, "wb");
  g_assert_nonnull (f);
  size_t written = fwrite (data, 1, size, f);
  int closed = fclose (f);
  g_assert_true (written == size && closed == 0);
  g_autoptr (SimScenario) sc = sim_scenario_new ();
  GError *error = NULL;
  SimCollectiveProfile coll;
  if (sim_scenario_add_file (sc, path, &error) && sim_scenario_resolve (sc, &error)
      && sim_scenario_check_compute (sc, &error))
    sim_scenario_collective_profile (sc, &coll, &error);
  g_clear_error (&error);
  return 0;
}
