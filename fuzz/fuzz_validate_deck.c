/* Fuzzes the validation deck reader, sim_validate_deck_parse, on the input bytes as they are: the
 * reader takes a length and the buffer has no terminating NUL, so ASan also sees it stay within. */
#include "fuzz/fuzz.h"
#include "sim/calibrate/validate.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  GError *error = NULL;
  SimValidateDeck *deck = sim_validate_deck_parse (size ? (const char *) data : "", size, "fuzz.csv", &error);
  sim_validate_deck_free (deck);
  g_clear_error (&error);
  return 0;
}
