/* What every harness shares: libFuzzer's entry point (declared here for -Wmissing-prototypes) and
 * the set-up each calls first. fuzz/README.md says what each harness covers. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A warning or critical from GLib or the code under test (a g_return_if_fail that failed) is a
 * bug the fuzzer should report as a crash, not a line it prints and goes on past. */
static inline void
fuzz_init (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
      g_once_init_leave (&once, 1);
    }
}
