/* Fuzzes the trainer-log reader of `trainsim compare`, sim_trainer_log_parse (the text behind
 * sim_trainer_log_read), with the first two steps skipped as warm-up. */
#include "fuzz/fuzz.h"
#include "sim/calibrate/compare.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  g_autofree char *text = g_strndup ((const char *) data, size);
  SimTrainerLog log;
  GError *error = NULL;
  sim_trainer_log_parse ("fuzz.tsv", text, 2, &log, &error);
  sim_trainer_log_clear (&log);
  g_clear_error (&error);
  return 0;
}
