/* MPI distribution helpers; see sim/plan/dist.h. */
#include "config.h"
#include <string.h>
#include "sim/plan/dist.h"
#ifdef HAVE_MPI
#include <mpi.h>
#endif

static int dist_rank = 0, dist_size = 1;
static gboolean dist_mpi = FALSE;

void
sim_dist_init (int *argc, char ***argv)
{
#ifdef HAVE_MPI
  if (!g_getenv ("OMPI_COMM_WORLD_SIZE") && !g_getenv ("PMI_SIZE"))
    return;
  int inited = 0;
  MPI_Initialized (&inited);
  if (!inited)
    MPI_Init (argc, argv);
  MPI_Comm_rank (MPI_COMM_WORLD, &dist_rank);
  MPI_Comm_size (MPI_COMM_WORLD, &dist_size);
  dist_mpi = TRUE;
#else
  (void) argc, (void) argv;
#endif
}

void
sim_dist_finalize (void)
{
#ifdef HAVE_MPI
  if (dist_mpi)
    MPI_Finalize ();
#endif
  dist_mpi = FALSE;
  dist_rank = 0, dist_size = 1;
}

int
sim_dist_rank (void)
{
  return dist_rank;
}

int
sim_dist_size (void)
{
  return dist_size;
}

void
sim_dist_gather_lines (GPtrArray *mine, GPtrArray *all)
{
  if (!dist_mpi || dist_size == 1)
    {
      for (guint i = 0; i < mine->len; i++)
        g_ptr_array_add (all, g_strdup (mine->pdata[i]));
      return;
    }
#ifdef HAVE_MPI
  /* Lines joined by '\n' (they never hold one), gathered as bytes. */
  GString *blob = g_string_new (NULL);
  for (guint i = 0; i < mine->len; i++)
    g_string_append_printf (blob, "%s\n", (char *) mine->pdata[i]);
  int len = (int) blob->len;
  int *lens = NULL, *displs = NULL;
  char *buf = NULL;
  if (dist_rank == 0)
    lens = g_new0 (int, dist_size), displs = g_new0 (int, dist_size);
  MPI_Gather (&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  if (dist_rank == 0)
    {
      for (int r = 0; r < dist_size; r++)
        displs[r] = total, total += lens[r];
      buf = g_malloc (total + 1);
    }
  MPI_Gatherv (blob->str, len, MPI_CHAR, buf, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (dist_rank == 0)
    {
      buf[total] = '\0';
      char *p = buf;
      while (*p)
        {
          char *nl = strchr (p, '\n');
          g_ptr_array_add (all, g_strndup (p, nl - p));
          p = nl + 1;
        }
    }
  g_free (buf);
  g_free (lens);
  g_free (displs);
  g_string_free (blob, TRUE);
#endif
}

char *
sim_dist_bcast_string (const char *s)
{
  if (!dist_mpi || dist_size == 1)
    return g_strdup (s ? s : "");
#ifdef HAVE_MPI
  int len = dist_rank == 0 ? (int) strlen (s ? s : "") : 0;
  MPI_Bcast (&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char *buf = g_malloc (len + 1);
  if (dist_rank == 0)
    memcpy (buf, s ? s : "", len);
  MPI_Bcast (buf, len, MPI_CHAR, 0, MPI_COMM_WORLD);
  buf[len] = '\0';
  return buf;
#else
  return NULL;
#endif
}

int
sim_dist_bcast_int (int v)
{
#ifdef HAVE_MPI
  if (dist_mpi && dist_size > 1)
    MPI_Bcast (&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  return v;
}

void
sim_dist_allreduce_sum (double *v, int n)
{
#ifdef HAVE_MPI
  if (dist_mpi && dist_size > 1)
    MPI_Allreduce (MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#else
  (void) v, (void) n;
#endif
}
