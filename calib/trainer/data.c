/* Corpus loading, byte tokenizer and batch sampling (see data.h). */
#include "calib/trainer/data.h"
#include "calib/trainer/shape.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


/* Appends FILE to *buf, dropping fortune's `%` separator lines. */
static int
append_file (const char *path, unsigned char **buf, size_t *len, size_t *cap, char *err, size_t err_len)
{
  FILE *f = fopen (path, "rb");
  if (!f)
    return trainer_fail (err, err_len, "%s: cannot open: %s", path, strerror (errno));
  char line[4096];
  while (fgets (line, sizeof line, f))
    {
      if (!strcmp (line, "%\n") || !strcmp (line, "%"))
        continue;
      size_t n = strlen (line);
      if (*len + n > *cap)
        {
          size_t nc = *cap ? *cap * 2 : 1 << 20;
          while (nc < *len + n)
            nc *= 2;
          unsigned char *nb = realloc (*buf, nc);
          if (!nb)
            {
              fclose (f);
              return trainer_fail (err, err_len, "%s: out of memory", path);
            }
          *buf = nb;
          *cap = nc;
        }
      memcpy (*buf + *len, line, n);
      *len += n;
    }
  fclose (f);
  return 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static int
finish (TrainerData *d, double holdout, char *err, size_t err_len)
{
  if (!(holdout > 0 && holdout < 1))
    return trainer_fail (err, err_len, "held-out fraction %g must lie in (0, 1)", holdout);
  d->train_len = (size_t) ((double) d->len * (1.0 - holdout));
  return 0;
}

int
trainer_data_load (TrainerData *d, const char *path, double holdout, char *err, size_t err_len)
{
  memset (d, 0, sizeof *d);
  struct stat st;
  if (stat (path, &st) != 0)
    return trainer_fail (err, err_len, "%s: %s (the default corpus comes with the Debian package fortunes: "
                 "apt-get install fortunes)", path, strerror (errno));
  size_t cap = 0;
  if (!S_ISDIR (st.st_mode))
    {
      if (append_file (path, &d->text, &d->len, &cap, err, err_len) != 0)
        return -1;
      d->files = 1;
    }
  else
    {
      DIR *dir = opendir (path);
      if (!dir)
        return trainer_fail (err, err_len, "%s: cannot list: %s", path, strerror (errno));
      char **names = NULL;
      size_t n = 0;
      struct dirent *e;
      while ((e = readdir (dir)))
        {
          size_t l = strlen (e->d_name);
          if (e->d_name[0] == '.' || (l > 4 && !strcmp (e->d_name + l - 4, ".dat")))
            continue;
          char full[4096];
          snprintf (full, sizeof full, "%s/%s", path, e->d_name);
          struct stat fs;
          if (lstat (full, &fs) != 0 || !S_ISREG (fs.st_mode))
            continue; /* the .u8 symlinks repeat the plain files */
          char **nn = realloc (names, (n + 1) * sizeof *names);
          if (!nn)
            break;
          names = nn;
          names[n++] = strdup (full);
        }
      closedir (dir);
      qsort (names, n, sizeof *names, cmp_str);
      int rc = 0;
      for (size_t i = 0; i < n; i++)
        {
          if (rc == 0)
            rc = append_file (names[i], &d->text, &d->len, &cap, err, err_len);
          free (names[i]);
        }
      free (names);
      d->files = (int) n;
      if (rc != 0)
        {
          trainer_data_clear (d);
          return -1;
        }
    }
  if (d->len < 1024)
    {
      trainer_data_clear (d);
      return trainer_fail (err, err_len, "%s: corpus has under 1024 bytes: give a larger text", path);
    }
  return finish (d, holdout, err, err_len);
}

int
trainer_data_from_text (TrainerData *d, const char *text, size_t len, double holdout, char *err, size_t err_len)
{
  memset (d, 0, sizeof *d);
  d->text = malloc (len ? len : 1);
  memcpy (d->text, text, len);
  d->len = len;
  d->files = 1;
  return finish (d, holdout, err, err_len);
}

void
trainer_data_clear (TrainerData *d)
{
  free (d->text);
  memset (d, 0, sizeof *d);
}

static uint64_t
mix (uint64_t z)
{
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void
trainer_data_batch (const TrainerData *d, int heldout, uint64_t seed, uint64_t stream, int batch, int T,
                    int *tokens, int *targets)
{
  size_t lo = heldout ? d->train_len : 0, hi = heldout ? d->len : d->train_len;
  size_t span = hi - lo > (size_t) T + 1 ? hi - lo - (size_t) T - 1 : 1;
  uint64_t state = mix (seed ^ mix (stream));
  for (int b = 0; b < batch; b++)
    {
      state = mix (state);
      size_t off = lo + (size_t) (state % span);
      for (int t = 0; t < T; t++)
        {
          size_t i = off + (size_t) t;
          tokens[(size_t) b * T + t] = i < d->len ? d->text[i] : ' ';
          targets[(size_t) b * T + t] = i + 1 < d->len ? d->text[i + 1] : ' ';
        }
    }
}
