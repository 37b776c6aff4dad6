/* Fuzzes the measurement reader, calib_measure_set_load_data: trainsim-bench TSVs and nccl-tests
 * output (the reader tells them apart by content, so one harness covers both). */
#include "fuzz/fuzz.h"
#include "calib/measure.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  /* The reader takes a NUL-terminated text, as calib_measure_set_load reads it from a file. */
  g_autofree char *text = g_strndup ((const char *) data, size);
  g_autoptr (CalibMeasureSet) set = calib_measure_set_new ();
  GError *error = NULL;
  calib_measure_set_load_data (set, "fuzz.txt", text, &error);
  g_clear_error (&error);
  return 0;
}
