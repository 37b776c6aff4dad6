/* Heap policy. A step allocates tens to hundreds of MiB of rank state, queue nodes and flow tables
 * and touches them in event order, not address order. glibc's glibc.malloc.hugetlb=1 tunable has
 * malloc advise every heap extension and mapped chunk MADV_HUGEPAGE, so the kernel backs them
 * with 2 MiB pages where its THP mode is "madvise" (under "always" it does so anyway; under "never"
 * it cannot): 512 times fewer page faults and TLB entries. Measured on a 2-core AMD EPYC VM
 * (2026-11-27, THP mode madvise, bench/step, four interleaved runs each): the 10,752-GPU default
 * step 0.043-0.056 s with huge pages, 0.058-0.071 s without, mostly the faults of its fresh pages;
 * 131,072 and 32,768 GPUs --full showed no difference above that machine's noise. glibc reads
 * tunables only at start-up, hence the re-exec. */
#include "config.h"
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "sim/des/heap.h"

#define HUGETLB_KEY "glibc.malloc.hugetlb"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED_ALLOCATOR 1
#endif
#endif
/* glibc's tunables reach malloc (a sanitizer brings its own allocator). */
#if defined(__GLIBC__) && !defined(SANITIZED_ALLOCATOR)
#define GLIBC_MALLOC 1
#endif

gboolean
sim_heap_huge_pages (void)
{
  const char *t = g_getenv ("GLIBC_TUNABLES");
  if (t == NULL)
    return FALSE;
  g_auto (GStrv) settings = g_strsplit (t, ":", -1);
  return g_strv_contains ((const char *const *) settings, HUGETLB_KEY "=1");
}

const char *
sim_heap_describe (void)
{
  return sim_heap_huge_pages () ? "2 MiB transparent huge pages (glibc.malloc.hugetlb=1)" : "small pages";
}

gboolean
sim_heap_can_request (void)
{
#ifdef GLIBC_MALLOC
  /* The kernel grants huge pages on request only in mode "madvise". */
  g_autofree char *mode = NULL;
  if (!g_file_get_contents ("/sys/kernel/mm/transparent_hugepage/enabled", &mode, NULL, NULL))
    return FALSE;
  return strstr (mode, "[madvise]") != NULL;
#else
  return FALSE;
#endif
}

#ifdef GLIBC_MALLOC
static void
reexec_huge (char **argv)
{
  const char *t = g_getenv ("GLIBC_TUNABLES");
  if ((t != NULL && strstr (t, HUGETLB_KEY) != NULL) || g_strcmp0 (g_getenv ("TRAINSIM_HUGEPAGES"), "0") == 0
      || argv == NULL || argv[0] == NULL || !sim_heap_can_request ())
    return;
  g_autofree char *value = t != NULL && *t ? g_strconcat (t, ":" HUGETLB_KEY "=1", NULL) : g_strdup (HUGETLB_KEY "=1");
  g_autofree char *saved = g_strdup (t);
  if (!g_setenv ("GLIBC_TUNABLES", value, TRUE))
    return;
  /* The binary's own path, not /proc/self/exe: the process keeps its name (ps, top, pgrep). */
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  if (self != NULL)
    execv (self, argv);
  /* Still here: no /proc, or the binary is gone. Go on with small pages, the environment as it was. */
  if (saved != NULL)
    g_setenv ("GLIBC_TUNABLES", saved, TRUE);
  else
    g_unsetenv ("GLIBC_TUNABLES");
}
#endif

void
sim_heap_setup (char **argv)
{
  (void) argv; /* without glibc's malloc, nothing to re-execute for */
#ifdef GLIBC_MALLOC
  reexec_huge (argv);
#endif
#ifdef __GLIBC__
  /* A simulation allocates and frees its programs, counters and flow tables in blocks of tens of
   * MiB, row after row of a deck. glibc maps such blocks afresh each time (and trims the heap),
   * and the kernel zeroes every page again: `trainsim validate` of the deck spent 1.2 s of 22 s
   * CPU in the kernel, 0.5 s with the blocks kept in the heap (2026-11-27). */
  mallopt (M_MMAP_THRESHOLD, 256 << 20);
  mallopt (M_TRIM_THRESHOLD, 512 << 20);
  mallopt (M_TOP_PAD, 64 << 20);
#endif
}
