/* Progress of long work on a terminal: done/total, rate, ETA on one self-overwriting stderr line.
 * Silent when stderr is not a TTY (piped, in tests), with TRAINSIM_NO_PROGRESS set, or until the
 * work has run for a second (TRAINSIM_PROGRESS_AFTER_MS changes that), and redrawn at most 10 times
 * a second so it never costs measurable time. */
#pragma once
#include <glib.h>

typedef struct SimProgress SimProgress;

/* `what` names the items ("points", "plans"). `enabled` FALSE: never print (e.g. MPI ranks > 0). */
SimProgress *sim_progress_new (const char *what, guint64 total, gboolean enabled);
/* Sets the count of items done (monotone). */
void sim_progress_update (SimProgress *p, guint64 done);
/* Erases the line, if one was drawn. */
void sim_progress_free (SimProgress *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimProgress, sim_progress_free)

/* The line as it would be drawn (caller frees): for tests. */
char *sim_progress_format (const char *what, guint64 done, guint64 total, double elapsed_s);
