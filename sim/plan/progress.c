/* Terminal progress line; see sim/plan/progress.h. */
#include "config.h"
#include <stdio.h>
#include <unistd.h>
#include "sim/plan/progress.h"

struct SimProgress {
  char *what;
  guint64 total, done;
  gint64 start_us, last_draw_us, after_us;
  gboolean tty, drawn;
};

SimProgress *
sim_progress_new (const char *what, guint64 total, gboolean enabled)
{
  SimProgress *p = g_new0 (SimProgress, 1);
  p->what = g_strdup (what);
  p->total = total;
  p->start_us = g_get_monotonic_time ();
  p->tty = enabled && isatty (fileno (stderr)) && g_getenv ("TRAINSIM_NO_PROGRESS") == NULL;
  /* TRAINSIM_PROGRESS_AFTER_MS: how long work runs before the line appears (default 1000 ms). */
  const char *after = g_getenv ("TRAINSIM_PROGRESS_AFTER_MS");
  p->after_us = after ? (gint64) g_ascii_strtoll (after, NULL, 10) * 1000 : G_USEC_PER_SEC;
  return p;
}

char *
sim_progress_format (const char *what, guint64 done, guint64 total, double elapsed_s)
{
  double rate = elapsed_s > 0 ? done / elapsed_s : 0.0;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " %s", done, total, what);
  if (total > 0)
    g_string_append_printf (s, " (%.0f%%)", 100.0 * done / total);
  g_string_append_printf (s, ", %.1f/s", rate);
  if (rate > 0 && done < total)
    {
      double eta = (total - done) / rate;
      if (eta >= 3600)
        g_string_append_printf (s, ", ETA %dh%02dm", (int) (eta / 3600), (int) (eta / 60) % 60);
      else
        g_string_append_printf (s, ", ETA %dm%02ds", (int) (eta / 60), (int) eta % 60);
    }
  return g_string_free (s, FALSE);
}

void
sim_progress_update (SimProgress *p, guint64 done)
{
  if (!p)
    return;
  p->done = done;
  if (!p->tty)
    return;
  gint64 now = g_get_monotonic_time ();
  if (now - p->start_us < p->after_us || now - p->last_draw_us < G_USEC_PER_SEC / 10)
    return;
  p->last_draw_us = now;
  g_autofree char *line = sim_progress_format (p->what, done, p->total, (now - p->start_us) / 1e6);
  fprintf (stderr, "\r\033[K%s", line);
  fflush (stderr);
  p->drawn = TRUE;
}

void
sim_progress_free (SimProgress *p)
{
  if (!p)
    return;
  if (p->drawn)
    {
      fprintf (stderr, "\r\033[K");
      fflush (stderr);
    }
  g_free (p->what);
  g_free (p);
}
