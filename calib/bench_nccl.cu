/* trainsim-bench-nccl: NCCL collective bandwidth with nccl-tests' conventions, over sizes
 * 8 B … 16 GiB. One process drives every local GPU (ncclCommInitAll), or, built with Open MPI
 * and launched by mpirun with more than one rank, one process per GPU across nodes (unique id
 * broadcast over MPI_COMM_WORLD, GPU = local rank).
 *
 * Size S and bus bandwidth follow nccl-tests (doc/PERFORMANCE.md there): algbw = S / t and
 *   all_reduce     S = buffer bytes               busbw = algbw · 2(n−1)/n
 *   all_gather     S = total gathered bytes       busbw = algbw · (n−1)/n
 *   reduce_scatter S = total input bytes          busbw = algbw · (n−1)/n
 *   alltoall       S = bytes each rank sends      busbw = algbw · (n−1)/n
 *   broadcast      S = buffer bytes (root 0)      busbw = algbw
 *   sendrecv       S = bytes each rank sends to rank+1, receives from rank−1; busbw = algbw
 * all-to-all is grouped ncclSend/ncclRecv (as nccl-tests does), so older NCCL works too.
 * Each sample is `-b` back-to-back operations timed with CUDA events on every GPU's stream; the
 * sample is the slowest GPU's (and, under MPI, the slowest rank's) elapsed time / b.
 * Correctness is checked apart from timing: inputs are small integers (rank+1 + i mod 17) whose
 * sums are exact in float, and every output element is compared with its closed form. */
#include "calib/bench.h"

#include <cuda_bf16.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef TRAINSIM_HAVE_MPI
#define OMPI_SKIP_MPICXX 1 /* C API only: the C++ bindings do not build warning-free */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#define TOOL "trainsim-bench-nccl"
#define MAX_LOCAL 64

static void
check_nccl (ncclResult_t r, const char *what, int line)
{
  if (r == ncclSuccess)
    return;
  fprintf (stderr, "%s:%d: %s failed: %s\n", __FILE__, line, what, ncclGetErrorString (r));
  exit (1);
}
#define NCCL(call) check_nccl ((call), #call, __LINE__)

typedef enum { C_ALL_REDUCE, C_ALL_GATHER, C_REDUCE_SCATTER, C_ALLTOALL, C_BROADCAST, C_SENDRECV, C_N } Coll;
static const char *coll_names[C_N] = { "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                                       "sendrecv" };

typedef struct {
  int nranks;          /* global */
  int nlocal;          /* GPUs this process drives */
  int rank0;           /* global rank of local GPU 0 */
  int devs[MAX_LOCAL];
  ncclComm_t comms[MAX_LOCAL];
  cudaStream_t streams[MAX_LOCAL];
  cudaEvent_t ev0[MAX_LOCAL], ev1[MAX_LOCAL];
  void *send[MAX_LOCAL], *recv[MAX_LOCAL];
  int *d_wrong[MAX_LOCAL];
  ncclDataType_t dt;
  size_t wsize;
  int mpi;
} Ctx;

static double
bus_factor (Coll c, int n)
{
  switch (c)
    {
    case C_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case C_ALL_GATHER:
    case C_REDUCE_SCATTER:
    case C_ALLTOALL: return (double) (n - 1) / n;
    default: return 1.0;
    }
}

/* Elements per rank in the operation's count argument, and send/recv buffer elements. */
static void
counts (Coll c, size_t S, size_t ws, int n, size_t *count, size_t *send_el, size_t *recv_el)
{
  size_t total = S / ws;
  switch (c)
    {
    case C_ALL_GATHER:
      *count = total / n, *send_el = *count, *recv_el = *count * n;
      break;
    case C_REDUCE_SCATTER:
      *count = total / n, *send_el = *count * n, *recv_el = *count;
      break;
    case C_ALLTOALL:
      *count = total / n, *send_el = *count * n, *recv_el = *count * n;
      break;
    default:
      *count = total, *send_el = total, *recv_el = total;
      break;
    }
}

__device__ static float
ld (const void *p, size_t i, int bf)
{
  return bf ? __bfloat162float (((const __nv_bfloat16 *) p)[i]) : ((const float *) p)[i];
}

__global__ static void
init_kernel (void *p, size_t n, int rank, int bf)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      float v = (float) (rank + 1) + (float) (i % 17);
      if (bf)
        ((__nv_bfloat16 *) p)[i] = __float2bfloat16 (v);
      else
        ((float *) p)[i] = v;
    }
}

/* Expected value of output element i on `rank`, from the input rule in_q[i] = q+1 + i mod 17. */
__global__ static void
verify_kernel (const void *out, size_t n, size_t count, int coll, int rank, int nranks, int bf, int *wrong)
{
  int local = 0;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      double want;
      double sum_r = nranks * (nranks + 1) / 2.0;
      switch (coll)
        {
        case C_ALL_REDUCE: want = sum_r + (double) nranks * (double) (i % 17); break;
        case C_ALL_GATHER: want = (double) (i / count + 1) + (double) ((i % count) % 17); break;
        case C_REDUCE_SCATTER: want = sum_r + (double) nranks * (double) (((size_t) rank * count + i) % 17); break;
        case C_ALLTOALL: want = (double) (i / count + 1) + (double) (((size_t) rank * count + i % count) % 17); break;
        case C_BROADCAST: want = 1.0 + (double) (i % 17); break;
        default: want = (double) ((rank + nranks - 1) % nranks + 1) + (double) (i % 17); break;
        }
      double got = ld (out, i, bf);
      double tol = bf ? want * nranks / 256.0 : 0.0; /* float sums of small integers are exact */
      if (!(fabs (got - want) <= tol))
        local++;
    }
  if (local)
    atomicAdd (wrong, local);
}

static void
launch_one (Ctx *c, Coll coll, int l, size_t count)
{
  int rank = c->rank0 + l, n = c->nranks;
  ncclComm_t comm = c->comms[l];
  cudaStream_t s = c->streams[l];
  switch (coll)
    {
    case C_ALL_REDUCE: NCCL (ncclAllReduce (c->send[l], c->recv[l], count, c->dt, ncclSum, comm, s)); break;
    case C_ALL_GATHER: NCCL (ncclAllGather (c->send[l], c->recv[l], count, c->dt, comm, s)); break;
    case C_REDUCE_SCATTER: NCCL (ncclReduceScatter (c->send[l], c->recv[l], count, c->dt, ncclSum, comm, s)); break;
    case C_ALLTOALL:
      for (int p = 0; p < n; p++)
        {
          NCCL (ncclSend ((char *) c->send[l] + (size_t) p * count * c->wsize, count, c->dt, p, comm, s));
          NCCL (ncclRecv ((char *) c->recv[l] + (size_t) p * count * c->wsize, count, c->dt, p, comm, s));
        }
      break;
    case C_BROADCAST: NCCL (ncclBroadcast (c->send[l], c->recv[l], count, c->dt, 0, comm, s)); break;
    default:
      NCCL (ncclSend (c->send[l], count, c->dt, (rank + 1) % n, comm, s));
      NCCL (ncclRecv (c->recv[l], count, c->dt, (rank + n - 1) % n, comm, s));
      break;
    }
}

static void
launch_all (Ctx *c, Coll coll, size_t count)
{
  NCCL (ncclGroupStart ());
  for (int l = 0; l < c->nlocal; l++)
    launch_one (c, coll, l, count);
  NCCL (ncclGroupEnd ());
}

static void
sync_all (Ctx *c)
{
  for (int l = 0; l < c->nlocal; l++)
    {
      CALIB_CUDA (cudaSetDevice (c->devs[l]));
      CALIB_CUDA (cudaStreamSynchronize (c->streams[l]));
    }
}

static double
reduce_max (Ctx *c, double v)
{
#ifdef TRAINSIM_HAVE_MPI
  if (c->mpi)
    {
      double r;
      MPI_Allreduce (&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      return r;
    }
#endif
  (void) c;
  return v;
}

static long long
reduce_sum_ll (Ctx *c, long long v)
{
#ifdef TRAINSIM_HAVE_MPI
  if (c->mpi)
    {
      long long r;
      MPI_Allreduce (&v, &r, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      return r;
    }
#endif
  (void) c;
  return v;
}

static void
usage (FILE *out)
{
  fprintf (out, "Usage: " TOOL " [OPTION…]\n"
                "NCCL collectives, nccl-tests conventions (algbw, busbw); one TSV row per (op, size).\n"
                "  -s SWEEP    sizes in bytes, a:b:factor or a,b,c (default 8:17179869184:2)\n"
                "  -O LIST     ops among all_reduce,all_gather,reduce_scatter,alltoall,broadcast,sendrecv (default all)\n"
                "  -d TYPE     float or bf16 (default float)\n"
                "  -G N        local GPUs to drive in single-process mode (default all)\n"
                "  --shapes F  instead of the sweep, the `nccl OP NRANKS BYTES` lines of F whose NRANKS match\n"
                "Multi-node: mpirun -n RANKS --map-by ppr:GPUS:node " TOOL " … (one GPU per rank).\n"
                "-b is the number of operations per timed sample (default 1); -F is ignored.\n");
  calib_bench_usage_common (out);
}

int
main (int argc, char **argv)
{
  int argc0 = argc;
  char **argv0 = (char **) malloc (sizeof (char *) * (size_t) (argc + 1));
  memcpy (argv0, argv, sizeof (char *) * (size_t) (argc + 1));
  Ctx c;
  memset (&c, 0, sizeof c);
  int world = 1, wrank = 0, nodes = 1;
#ifdef TRAINSIM_HAVE_MPI
  /* Only join MPI when launched by mpirun: a plain run stays a single process. */
  if (getenv ("OMPI_COMM_WORLD_SIZE") || getenv ("PMI_SIZE") || getenv ("PMIX_RANK"))
    {
      MPI_Init (&argc, &argv);
      MPI_Comm_size (MPI_COMM_WORLD, &world);
      MPI_Comm_rank (MPI_COMM_WORLD, &wrank);
      c.mpi = world > 1;
      if (world == 1)
        {
          MPI_Finalize ();
        }
    }
#endif
  CalibBenchOpts opts;
  if (calib_bench_parse_common (&argc, argv, &opts) != 0)
    return 2;
  const char *ss = "8:17179869184:2", *ops_s = NULL, *dts = "float";
  int want_gpus = 0;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
        {
          if (wrank == 0)
            usage (stdout);
          return 0;
        }
      if (i + 1 < argc && strcmp (argv[i], "-s") == 0) ss = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-O") == 0) ops_s = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-d") == 0) dts = argv[++i];
      else if (i + 1 < argc && strcmp (argv[i], "-G") == 0) want_gpus = atoi (argv[++i]);
      else
        {
          fprintf (stderr, TOOL ": unknown option '%s'\n", argv[i]);
          usage (stderr);
          return 2;
        }
    }
  long long sizes[64];
  int nsizes = calib_bench_parse_sweep (ss, sizes, 64);
  int bf = strcmp (dts, "bf16") == 0;
  if (nsizes <= 0 || (!bf && strcmp (dts, "float") != 0) || want_gpus < 0)
    {
      fprintf (stderr, TOOL ": bad -s, -d (float|bf16) or -G\n");
      return 2;
    }
  c.dt = bf ? ncclBfloat16 : ncclFloat;
  c.wsize = bf ? 2 : 4;
#ifdef TRAINSIM_HAVE_MPI
  {
    int ngpu = 0;
    if (c.mpi && (cudaGetDeviceCount (&ngpu) != cudaSuccess || ngpu == 0))
      MPI_Finalize (); /* leave MPI cleanly before the skip below exits */
  }
#endif
  calib_bench_require_gpu (TOOL);
  int ndev = 0;
  CALIB_CUDA (cudaGetDeviceCount (&ndev));
  if (c.mpi)
    {
#ifdef TRAINSIM_HAVE_MPI
      MPI_Comm node;
      int lrank;
      MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &node);
      MPI_Comm_rank (node, &lrank);
      int leader = lrank == 0;
      MPI_Allreduce (&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      c.nranks = world;
      c.nlocal = 1;
      c.rank0 = wrank;
      c.devs[0] = lrank % ndev;
      ncclUniqueId id;
      if (wrank == 0)
        NCCL (ncclGetUniqueId (&id));
      MPI_Bcast (&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
      CALIB_CUDA (cudaSetDevice (c.devs[0]));
      NCCL (ncclCommInitRank (&c.comms[0], world, id, wrank));
#endif
    }
  else
    {
      c.nlocal = want_gpus > 0 && want_gpus < ndev ? want_gpus : ndev;
      if (c.nlocal > MAX_LOCAL)
        c.nlocal = MAX_LOCAL;
      c.nranks = c.nlocal;
      for (int l = 0; l < c.nlocal; l++)
        c.devs[l] = l;
      NCCL (ncclCommInitAll (c.comms, c.nlocal, c.devs));
    }
  size_t min_free = (size_t) -1;
  for (int l = 0; l < c.nlocal; l++)
    {
      CALIB_CUDA (cudaSetDevice (c.devs[l]));
      CALIB_CUDA (cudaStreamCreateWithFlags (&c.streams[l], cudaStreamNonBlocking));
      CALIB_CUDA (cudaEventCreate (&c.ev0[l]));
      CALIB_CUDA (cudaEventCreate (&c.ev1[l]));
      CALIB_CUDA (cudaMalloc (&c.d_wrong[l], sizeof (int)));
      size_t fr, tot;
      CALIB_CUDA (cudaMemGetInfo (&fr, &tot));
      if (fr < min_free)
        min_free = fr;
    }
  min_free = (size_t) -reduce_max (&c, -(double) min_free); /* the smallest over ranks: same sizes everywhere */
  /* Send and receive buffers for the largest size that fits in 85% of free memory. */
  size_t cap = 0;
  for (int i = 0; i < nsizes; i++)
    if ((size_t) sizes[i] > cap && 2 * (size_t) sizes[i] <= min_free / 100 * 85)
      cap = (size_t) sizes[i];
  for (int l = 0; l < c.nlocal; l++)
    {
      CALIB_CUDA (cudaSetDevice (c.devs[l]));
      CALIB_CUDA (cudaMalloc (&c.send[l], cap > 0 ? cap : 16));
      CALIB_CUDA (cudaMalloc (&c.recv[l], cap > 0 ? cap : 16));
    }
  FILE *out = NULL;
  if (wrank == 0)
    {
      out = stdout;
      if (opts.out_path && (out = fopen (opts.out_path, "w")) == NULL)
        {
          fprintf (stderr, TOOL ": cannot write %s\n", opts.out_path);
          return 2;
        }
      calib_bench_provenance (out, TOOL, c.devs[0], argc0, argv0);
      int v = 0;
      ncclGetVersion (&v);
      fprintf (out, "# nccl\t%d.%d.%d\n", v / 10000, (v / 100) % 100, v % 100);
      fprintf (out, "# nranks\t%d\n# nodes\t%d\n# processes\t%d\n# mode\t%s\n", c.nranks, nodes, world,
               c.mpi ? "mpi, one GPU per rank" : "single process, all local GPUs");
      char host[256] = "";
      gethostname (host, sizeof host - 1);
      for (int l = 0; l < c.nlocal; l++)
        {
          cudaDeviceProp p;
          CALIB_CUDA (cudaGetDeviceProperties (&p, c.devs[l]));
          fprintf (out, "#  Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\n", c.rank0 + l, (int) getpid (), host,
                   c.devs[l], p.pciBusID, p.name);
        }
      fprintf (out, "# conventions\tnccl-tests: algbw = size/time, busbw = algbw * factor; GB/s = 1e9 B/s\n");
      fprintf (out, "# timing\twarmup %d, %d samples of %d operations, max over GPUs\n", opts.warmup, opts.reps,
               opts.batch);
      fprintf (out, "bench\top\tdtype\tnranks\tsize_bytes\tcount\ttime_us_median\ttime_us_p10\ttime_us_p90\t"
                    "algbw_GBps\tbusbw_GBps\tbusbw_GBps_p10\tbusbw_GBps_p90\twrong\n");
    }
  FILE *shapes = NULL;
  if (opts.shapes_path && (shapes = fopen (opts.shapes_path, "r")) == NULL)
    {
      fprintf (stderr, TOOL ": cannot open shapes file %s\n", opts.shapes_path);
      return 2;
    }
  long long wrong_total = 0;
  int rows = 0;
  double busbw_sum = 0;
  double *samples = (double *) malloc (sizeof (double) * (size_t) opts.reps);
  for (int o = 0; o < C_N; o++)
    {
      if (ops_s && !strstr (ops_s, coll_names[o]))
        continue;
      Coll coll = (Coll) o;
      char line[1024];
      char *f[8];
      if (shapes)
        rewind (shapes);
      for (int si = 0;; si++)
        {
          size_t S;
          if (shapes)
            {
              int nf = calib_bench_plan_next (shapes, "nccl", line, sizeof line, f, 8);
              if (nf < 0)
                break;
              if (nf < 4 || strcmp (f[1], coll_names[o]) != 0 || atoi (f[2]) != c.nranks)
                continue;
              S = (size_t) atoll (f[3]);
            }
          else if (si >= nsizes)
            break;
          else
            S = (size_t) sizes[si];
          size_t count, send_el, recv_el;
          counts (coll, S, c.wsize, c.nranks, &count, &send_el, &recv_el);
          if (count == 0)
            continue; /* below one element per rank */
          if (send_el * c.wsize > cap || recv_el * c.wsize > cap)
            {
              if (out)
                fprintf (out, "# skipped\t%s %zu B: buffers beyond the %zu B that fit\n", coll_names[o], S, cap);
              continue;
            }
          long long wrong = 0;
          if (opts.check)
            {
              for (int l = 0; l < c.nlocal; l++)
                {
                  CALIB_CUDA (cudaSetDevice (c.devs[l]));
                  init_kernel<<<1024, 256, 0, c.streams[l]>>> (c.send[l], send_el, c.rank0 + l, bf);
                  CALIB_CUDA (cudaMemsetAsync (c.recv[l], 0xff, recv_el * c.wsize, c.streams[l]));
                  CALIB_CUDA (cudaMemsetAsync (c.d_wrong[l], 0, sizeof (int), c.streams[l]));
                }
              launch_all (&c, coll, count);
              for (int l = 0; l < c.nlocal; l++)
                {
                  CALIB_CUDA (cudaSetDevice (c.devs[l]));
                  verify_kernel<<<1024, 256, 0, c.streams[l]>>> (c.recv[l], recv_el, count, o, c.rank0 + l, c.nranks,
                                                                bf, c.d_wrong[l]);
                  int w = 0;
                  CALIB_CUDA (cudaMemcpyAsync (&w, c.d_wrong[l], sizeof w, cudaMemcpyDeviceToHost, c.streams[l]));
                  CALIB_CUDA (cudaStreamSynchronize (c.streams[l]));
                  wrong += w;
                }
              wrong = reduce_sum_ll (&c, wrong);
            }
          for (int w = 0; w < opts.warmup; w++)
            launch_all (&c, coll, count);
          sync_all (&c);
          for (int r = 0; r < opts.reps; r++)
            {
              for (int l = 0; l < c.nlocal; l++)
                {
                  CALIB_CUDA (cudaSetDevice (c.devs[l]));
                  CALIB_CUDA (cudaEventRecord (c.ev0[l], c.streams[l]));
                }
              for (int b = 0; b < opts.batch; b++)
                launch_all (&c, coll, count);
              double worst = 0;
              for (int l = 0; l < c.nlocal; l++)
                {
                  CALIB_CUDA (cudaSetDevice (c.devs[l]));
                  CALIB_CUDA (cudaEventRecord (c.ev1[l], c.streams[l]));
                }
              for (int l = 0; l < c.nlocal; l++)
                {
                  float ms;
                  CALIB_CUDA (cudaEventSynchronize (c.ev1[l]));
                  CALIB_CUDA (cudaEventElapsedTime (&ms, c.ev0[l], c.ev1[l]));
                  if (ms > worst)
                    worst = ms;
                }
              samples[r] = reduce_max (&c, 1000.0 * worst / opts.batch);
            }
          CalibBenchStats st = calib_bench_stats (samples, opts.reps);
          double fac = bus_factor (coll, c.nranks);
          double algbw = (double) S / st.median_us / 1e3;
          if (out)
            {
              char wbuf[24];
              snprintf (wbuf, sizeof wbuf, "%lld", wrong);
              fprintf (out, "nccl\t%s\t%s\t%d\t%zu\t%zu\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", coll_names[o],
                       dts, c.nranks, S, count, st.median_us, st.p10_us, st.p90_us, algbw, algbw * fac,
                       (double) S / st.p90_us / 1e3 * fac, (double) S / st.p10_us / 1e3 * fac,
                       opts.check ? wbuf : "N/A");
              fflush (out);
            }
          busbw_sum += algbw * fac;
          rows++;
          wrong_total += wrong;
        }
    }
  if (out)
    {
      fprintf (out, "# Out of bounds values : %lld %s\n", wrong_total, wrong_total ? "FAILED" : "OK");
      fprintf (out, "# Avg bus bandwidth    : %g\n", rows ? busbw_sum / rows : 0.0);
      fprintf (out, "# rows_measured\t%d\n# wrong_total\t%lld\n# result\t%s\n", rows, wrong_total,
               wrong_total ? "FAIL" : "PASS");
      if (out != stdout)
        fclose (out);
    }
  for (int l = 0; l < c.nlocal; l++)
    {
      cudaSetDevice (c.devs[l]);
      cudaFree (c.send[l]);
      cudaFree (c.recv[l]);
      ncclCommDestroy (c.comms[l]);
    }
  free (samples);
  free (argv0);
#ifdef TRAINSIM_HAVE_MPI
  if (c.mpi)
    MPI_Finalize ();
#endif
  return wrong_total ? 1 : 0;
}
