/* Work spread over Open MPI ranks for `trainsim sweep` and `trainsim search`.
 *
 * Linked only into the trainsim binary (never into libtrainsim.a), so the library and its tests do
 * not depend on MPI. Without MPI support, or when the process was not started by mpirun, there is
 * one rank and every call is a local no-op. The protocol is lines of text: ranks evaluate their
 * share and ship rows to rank 0 in the same serialized form the --out file uses, so results are
 * identical, byte for byte, to a serial run. */
#pragma once
#include <glib.h>

/* Starts MPI if the process runs under mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE set). */
void sim_dist_init (int *argc, char ***argv);
void sim_dist_finalize (void);
int sim_dist_rank (void);
int sim_dist_size (void);

/* Every rank passes its lines; rank 0 gets all of them in rank order appended to `all` (other
 * ranks: `all` untouched). Collective: every rank must call it. */
void sim_dist_gather_lines (GPtrArray *mine, GPtrArray *all);
/* Rank 0's string to every rank (caller frees the result). */
char *sim_dist_bcast_string (const char *s);
/* Rank 0's integer to every rank. */
int sim_dist_bcast_int (int v);
/* Sum of a double array over ranks, on every rank. */
void sim_dist_allreduce_sum (double *v, int n);
