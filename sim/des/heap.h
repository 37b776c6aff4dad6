/* The process heap the simulator runs on: glibc's allocator tuned for its working set. Call
 * sim_heap_setup first thing in main, before any allocation that matters and before any thread or
 * MPI start: it may re-execute the process. */
#pragma once
#include <glib.h>

/* Backs the heap with transparent huge pages where the kernel grants them on request (it
 * re-executes the process once with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES), then keeps
 * large blocks in the heap (mallopt). argv is main's, NULL-terminated. Returns only in the
 * process that goes on: without glibc, under a sanitizer's allocator, with the kernel's THP mode
 * not "madvise", with glibc.malloc.hugetlb already in GLIBC_TUNABLES, with TRAINSIM_HUGEPAGES=0,
 * or when the exec fails. */
void sim_heap_setup (char **argv);

/* Whether sim_heap_setup asks for huge pages in this build on this kernel (whatever the
 * environment says): glibc, no sanitizer's allocator, the kernel's THP mode "madvise". */
gboolean sim_heap_can_request (void);

/* Whether this process's glibc heap asks for huge pages (glibc.malloc.hugetlb=1 in its
 * GLIBC_TUNABLES). */
gboolean sim_heap_huge_pages (void);
/* The heap's pages in words, for a benchmark's header: huge or small. */
const char *sim_heap_describe (void);
