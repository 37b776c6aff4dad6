/* sim_heap_setup: the process comes back with glibc.malloc.hugetlb=1 and its heap in huge pages
 * where the kernel grants them on request; TRAINSIM_HUGEPAGES=0 keeps small pages. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "sim/des/heap.h"

/* AnonHugePages of this process, in KiB (-1 when /proc cannot tell). */
static gint64
anon_huge_kib (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/smaps_rollup", &text, NULL, NULL))
    return -1;
  const char *line = strstr (text, "AnonHugePages:");
  return line != NULL ? g_ascii_strtoll (line + strlen ("AnonHugePages:"), NULL, 10) : -1;
}

static void
test_huge_pages (void)
{
  if (!sim_heap_can_request ())
    {
      g_test_skip ("no huge pages on request here (THP mode not madvise, a sanitizer's allocator, or no glibc)");
      return;
    }
  g_assert_true (sim_heap_huge_pages ());
  /* 64 MiB from the heap (below the mmap threshold sim_heap_setup sets), every page touched. */
  gsize n = (gsize) 64 << 20;
  char *block = g_malloc (n);
  memset (block, 1, n);
  gint64 kib = anon_huge_kib ();
  g_free (block);
  if (kib < 0)
    {
      g_test_skip ("/proc/self/smaps_rollup unreadable");
      return;
    }
  g_assert_cmpint (kib, >=, 2048);
}

static void
test_opt_out (void)
{
  if (!sim_heap_can_request ())
    {
      g_test_skip ("no huge pages on request here");
      return;
    }
  /* A child of this binary with the opt-out reports its tunables as it starts its tests. */
  char *argv[] = { (char *) "/proc/self/exe", (char *) "--report-tunables", NULL };
  g_auto (GStrv) env = g_get_environ ();
  env = g_environ_setenv (env, "TRAINSIM_HUGEPAGES", "0", TRUE);
  env = g_environ_unsetenv (env, "GLIBC_TUNABLES");
  g_autofree char *out = NULL;
  g_autoptr (GError) error = NULL;
  int status = 0;
  g_assert_true (g_spawn_sync (NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "hugetlb 0\n");
}

int
main (int argc, char **argv)
{
  sim_heap_setup (argv);
  if (argc == 2 && strcmp (argv[1], "--report-tunables") == 0)
    {
      printf ("hugetlb %d\n", sim_heap_huge_pages ());
      return 0;
    }
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sim/heap/huge-pages", test_huge_pages);
  g_test_add_func ("/sim/heap/opt-out", test_opt_out);
  return g_test_run ();
}
