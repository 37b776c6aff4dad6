/* sim_heap_setup: the process comes back with glibc.malloc.hugetlb=1 and its heap advised for huge
 * pages where the kernel grants them on request; TRAINSIM_HUGEPAGES=0 keeps small pages. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "sim/des/heap.h"

/* The VmFlags of the mapping of /proc/self/smaps that holds addr (NULL when /proc cannot tell). */
static char *
vm_flags_at (const void *addr)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/smaps", &text, NULL, NULL))
    return NULL;
  guintptr a = (guintptr) addr;
  gboolean inside = FALSE;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i] != NULL; i++)
    {
      guint64 lo, hi;
      if (sscanf (lines[i], "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x ", &lo, &hi) == 2)
        inside = a >= lo && a < hi;
      else if (inside && g_str_has_prefix (lines[i], "VmFlags:"))
        return g_strdup (lines[i] + strlen ("VmFlags:"));
    }
  return NULL;
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
  /* 64 MiB from the heap (below the mmap threshold sim_heap_setup sets): glibc has advised its
   * mapping MADV_HUGEPAGE, which the kernel shows as the VmFlag "hg" (whether it then finds free
   * 2 MiB pages is the kernel's business, not asserted). */
  gsize n = (gsize) 64 << 20;
  char *block = g_malloc (n);
  memset (block, 1, n);
  g_autofree char *flags = vm_flags_at (block + n / 2);
  g_free (block);
  if (flags == NULL)
    {
      g_test_skip ("/proc/self/smaps unreadable");
      return;
    }
  g_auto (GStrv) words = g_strsplit_set (flags, " ", -1);
  g_assert_true (g_strv_contains ((const char *const *) words, "hg"));
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
