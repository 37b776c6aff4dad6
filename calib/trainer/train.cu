/* trainsim-trainer: a small real GPT trainer whose measured step time trainsim must predict.
 *
 * One process per GPU. Data parallel over NCCL: gradients are averaged in buckets of
 * --dp-bucket-MiB, launched on a communication stream as backward makes them final (overlap on by
 * default), either all-reduced (zero 0) or reduce-scattered with the optimizer run on each rank's
 * shard and the bf16 weights all-gathered (zero 1, the distributed optimizer). Processes come from
 * `mpirun` (MPI bootstraps NCCL; every node, every GPU) or, without MPI, from --gpus N on one node
 * (the trainer forks one process per GPU and passes the NCCL id through pipes). --attention picks the
 * cuBLASLt GEMM attention (default) or the flash-style kernel (gpt.h).
 *
 * Output: one TSV row per step (# provenance lines first) with the loss, held-out loss, step time
 * and its phases from CUDA events on the compute stream (forward, backward, optimizer, exposed
 * communication = time the compute stream waits for DP collectives), tokens/s, TFLOP/s per GPU and
 * MFU (model FLOPs: layout.h's 6N + attention convention; peak: dense BF16 datasheet figure).
 * --emit-scenario FILE writes the trainsim scenario of exactly this run. */
#include "config.h"

#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef HAVE_MPI
#define OMPI_SKIP_MPICXX 1 /* the C API only */
#include <mpi.h>
#endif

#include "calib/trainer/data.h"
#include "calib/trainer/emit.h"
#include "calib/trainer/gpt.h"
#include "calib/trainer/layout.h"
#include "calib/trainer/shape.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf (stderr, "trainsim-trainer: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString (e_)); exit (1); } } while (0)
#define NK(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
  fprintf (stderr, "trainsim-trainer: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString (r_)); exit (1); } } while (0)

typedef struct {
  const char *model, *data, *out, *emit, *hardware, *fabric;
  int seq_len, micro_batch, global_batch, steps, warmup, eval_every, eval_batches, zero, bucket_mib, overlap;
  int recompute, flash, gpus, gpus_per_node, seed, dry_run;
  double lr, min_lr_frac, wd, clip, beta1, beta2, eps, holdout, peak_tflops;
} Options;

static void
usage (FILE *f)
{
  fprintf (f,
    "usage: trainsim-trainer --model FILE [options]\n"
    "Trains a GPT-2 or Llama style transformer on GPUs (cuBLASLt, NCCL) and times every step.\n"
    "With --emit-scenario it also writes the trainsim scenario of the run, so that `trainsim compare`\n"
    "holds the measured steps against trainsim's prediction.\n"
    "  --model FILE          trainsim model file (scenarios/models/NAME.ini): the [model] group\n"
    "  --seq-len N           tokens per sequence (default: [training] seq_len of the file, else 1024)\n"
    "  --micro-batch N       sequences per micro-batch per GPU (default 8)\n"
    "  --global-batch N      sequences per optimizer step (default micro-batch x GPUs)\n"
    "  --steps N             optimizer steps (default 300)\n"
    "  --zero 0|1            0: all-reduce gradients; 1: distributed optimizer (default 0)\n"
    "  --dp-bucket-MiB N     gradient bucket size (default 40)\n"
    "  --dp-overlap 0|1      launch buckets during backward (default 1)\n"
    "  --recompute none|full  activation recomputation (default none)\n"
    "  --attention gemm|flash  cuBLASLt GEMMs + fused softmax, or the flash-style kernel (default gemm)\n"
    "  --gpus N              without mpirun: processes (GPUs) on this node; 0: all (default 1)\n"
    "  --lr X --min-lr-frac X --warmup N --weight-decay X --clip X --beta1 X --beta2 X --eps X\n"
    "                        AdamW with linear warmup and cosine decay (6e-4, 0.1, 20, 0.1, 1.0, 0.9, 0.95, 1e-8)\n"
    "  --data PATH           corpus file or directory (default %s)\n"
    "  --holdout X           held-out fraction (default 0.1)\n"
    "  --eval-every N        held-out loss every N steps and at the end (default 50; 0: only at the end)\n"
    "  --eval-batches N      held-out micro-batches per evaluation (default 4)\n"
    "  --seed N              weights and data order (default 1234)\n"
    "  --out FILE            per-step TSV (default stdout)\n"
    "  --emit-scenario FILE  write the trainsim scenario of this run\n"
    "  --hardware NAME       trainsim hardware profile (default from the device name)\n"
    "  --fabric NAME         trainsim fabric profile (default from the hardware)\n"
    "  --peak-tflops X       dense BF16 peak for MFU (default from the hardware table)\n"
    "  --dry-run             no GPU needed: check the plan, print it, write --emit-scenario, exit\n"
    "                        (with --hardware NAME, --gpus N and --gpus-per-node M, default min(N, 8))\n"
    "Exit status: 0 trained, 1 failed, 2 bad usage, 77 no usable CUDA device (automake's SKIP).\n",
    TRAINER_DATA_DEFAULT_DIR);
}

static int
parse_args (int argc, char **argv, Options *o)
{
  memset (o, 0, sizeof *o);
  o->data = TRAINER_DATA_DEFAULT_DIR;
  o->micro_batch = 8; o->steps = 300; o->warmup = 20; o->eval_every = 50; o->eval_batches = 4;
  o->bucket_mib = 40; o->overlap = 1; o->gpus = 1; o->seed = 1234;
  o->lr = 6e-4; o->min_lr_frac = 0.1; o->wd = 0.1; o->clip = 1.0; o->beta1 = 0.9; o->beta2 = 0.95; o->eps = 1e-8;
  o->holdout = 0.1;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      if (!strcmp (a, "--help") || !strcmp (a, "-h"))
        {
          usage (stdout);
          exit (0);
        }
      if (!strcmp (a, "--dry-run"))
        {
          o->dry_run = 1;
          continue;
        }
      if (i + 1 >= argc)
        {
          fprintf (stderr, "trainsim-trainer: %s needs a value (see --help)\n", a);
          return -1;
        }
      const char *v = argv[++i];
      char *end = NULL;
      double d = strtod (v, &end);
      int numeric = end && end != v && *end == '\0';
#define STR(name, field) if (!strcmp (a, name)) { o->field = v; continue; }
#define NUM(name, field) if (!strcmp (a, name)) { if (!numeric) goto bad; o->field = d; continue; }
#define INT(name, field) if (!strcmp (a, name)) { if (!numeric || d != (int) d) goto bad; o->field = (int) d; continue; }
      STR ("--model", model) STR ("--data", data) STR ("--out", out) STR ("--emit-scenario", emit)
      STR ("--hardware", hardware) STR ("--fabric", fabric)
      INT ("--seq-len", seq_len) INT ("--micro-batch", micro_batch) INT ("--global-batch", global_batch)
      INT ("--steps", steps) INT ("--warmup", warmup) INT ("--eval-every", eval_every)
      INT ("--eval-batches", eval_batches) INT ("--zero", zero) INT ("--dp-bucket-MiB", bucket_mib)
      INT ("--dp-overlap", overlap) INT ("--gpus", gpus) INT ("--seed", seed)
      INT ("--gpus-per-node", gpus_per_node)
      NUM ("--lr", lr) NUM ("--min-lr-frac", min_lr_frac) NUM ("--weight-decay", wd) NUM ("--clip", clip)
      NUM ("--beta1", beta1) NUM ("--beta2", beta2) NUM ("--eps", eps) NUM ("--holdout", holdout)
      NUM ("--peak-tflops", peak_tflops)
      if (!strcmp (a, "--attention"))
        {
          if (!strcmp (v, "gemm")) o->flash = 0;
          else if (!strcmp (v, "flash")) o->flash = 1;
          else goto bad;
          continue;
        }
      if (!strcmp (a, "--recompute"))
        {
          if (!strcmp (v, "none")) o->recompute = 0;
          else if (!strcmp (v, "full")) o->recompute = 1;
          else goto bad;
          continue;
        }
#undef STR
#undef NUM
#undef INT
      fprintf (stderr, "trainsim-trainer: unknown option %s (see --help)\n", a);
      return -1;
    bad:
      fprintf (stderr, "trainsim-trainer: %s %s: bad value (see --help)\n", a, v);
      return -1;
    }
  if (!o->model)
    {
      fprintf (stderr, "trainsim-trainer: give --model FILE (a trainsim model file, e.g. scenarios/models/NAME.ini)\n");
      return -1;
    }
  if (o->micro_batch < 1 || o->steps < 1 || o->zero < 0 || o->zero > 1 || o->bucket_mib < 1 || o->gpus < 0
      || o->eval_batches < 1 || o->eval_every < 0 || o->warmup < 0)
    {
      fprintf (stderr, "trainsim-trainer: micro-batch, steps, eval-batches and dp-bucket-MiB must be positive, "
                       "zero 0 or 1, gpus, warmup and eval-every not negative\n");
      return -1;
    }
  return 0;
}

/* ------------------------------------------------------------------ hardware table */

/* Dense BF16 peaks from /work/shared/reference/hardware.md (datasheet figures via
 * torchtitan/tools/utils.py); names of trainsim's scenarios/hardware and scenarios/fabrics profiles. */
typedef struct { const char *match, *profile, *fabric; double bf16_tflops; } Hardware;
static const Hardware hardware_table[] = {
  { "GB200", "gb200", "gb200-nvl72-eth800", 2500.0 },
  { "B200", "b200", "ndr400-rail-optimized", 2250.0 },
  { "H200", "h200-sxm", "ndr400-rail-optimized", 989.0 },
  { "H100", "h100-sxm", "ndr400-rail-optimized", 989.0 },
  { "A100", "a100-sxm-80g", "hdr200-rail-optimized", 312.0 },
};

static const Hardware *
hardware_for (const char *device, const char *profile)
{
  for (size_t i = 0; i < sizeof hardware_table / sizeof hardware_table[0]; i++)
    if (profile ? !strcmp (profile, hardware_table[i].profile)
                : device && strstr (device, hardware_table[i].match) != NULL)
      return &hardware_table[i];
  return NULL;
}

/* ------------------------------------------------------------------ processes and NCCL */

typedef struct {
  int rank, size, local_rank, local_size, nodes, mpi;
  pid_t *children;
  int nchildren;
} Procs;

/* "Cannot run here": automake's SKIP status, so a CPU-only CI tells a skip from a failure. */
#define EXIT_NO_GPU 77

/* Number of CUDA devices, asked in a child so this process has no CUDA context before fork. */
static int
probe_devices (void)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      int n = 0;
      if (cudaGetDeviceCount (&n) != cudaSuccess)
        n = 0;
      _exit (n > 250 ? 250 : n);
    }
  int status = 0;
  if (pid < 0 || waitpid (pid, &status, 0) < 0 || !WIFEXITED (status))
    return 0;
  return WEXITSTATUS (status);
}

static void
read_all (int fd, void *buf, size_t n)
{
  size_t got = 0;
  while (got < n)
    {
      ssize_t r = read (fd, (char *) buf + got, n - got);
      if (r <= 0)
        {
          fprintf (stderr, "trainsim-trainer: reading the NCCL id from the parent failed\n");
          exit (1);
        }
      got += (size_t) r;
    }
}

/* Sets up ranks; returns the NCCL unique id every rank shares. */
static ncclUniqueId
setup_procs (int *argc, char ***argv, Options *o, Procs *p)
{
  memset (p, 0, sizeof *p);
#ifndef HAVE_MPI
  (void) argc; /* only MPI_Init reads them */
  (void) argv;
#endif
  ncclUniqueId id;
  memset (&id, 0, sizeof id);
  const char *world = getenv ("OMPI_COMM_WORLD_SIZE");
  if (world && atoi (world) > 1)
    {
#ifdef HAVE_MPI
      MPI_Init (argc, argv);
      MPI_Comm_rank (MPI_COMM_WORLD, &p->rank);
      MPI_Comm_size (MPI_COMM_WORLD, &p->size);
      MPI_Comm local;
      MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p->rank, MPI_INFO_NULL, &local);
      MPI_Comm_rank (local, &p->local_rank);
      MPI_Comm_size (local, &p->local_size);
      MPI_Comm_free (&local);
      p->nodes = p->size / p->local_size;
      p->mpi = 1;
      if (p->rank == 0)
        NK (ncclGetUniqueId (&id));
      MPI_Bcast (&id, (int) sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
      return id;
#else
      fprintf (stderr, "trainsim-trainer: started by mpirun with %s ranks, but built without MPI: "
                       "reconfigure with Open MPI (libopenmpi-dev) installed\n", world);
      exit (1);
#endif
    }
  int n = o->gpus;
  if (n == 0)
    n = probe_devices ();
  if (n < 1)
    {
      fprintf (stderr, "trainsim-trainer: skipped: no CUDA device found\n");
      exit (EXIT_NO_GPU);
    }
  p->size = p->local_size = n;
  p->nodes = 1;
  if (n == 1)
    return id;
  int (*pipes)[2] = (int (*)[2]) calloc ((size_t) n, sizeof *pipes);
  p->children = (pid_t *) calloc ((size_t) n, sizeof (pid_t));
  for (int r = 1; r < n; r++)
    {
      if (pipe (pipes[r]) != 0)
        {
          perror ("trainsim-trainer: pipe");
          exit (1);
        }
      pid_t pid = fork ();
      if (pid < 0)
        {
          perror ("trainsim-trainer: fork");
          exit (1);
        }
      if (pid == 0)
        {
          close (pipes[r][1]);
          read_all (pipes[r][0], &id, sizeof id);
          close (pipes[r][0]);
          p->rank = p->local_rank = r;
          free (p->children);
          p->children = NULL;
          free (pipes);
          return id;
        }
      close (pipes[r][0]);
      p->children[p->nchildren++] = pid;
    }
  NK (ncclGetUniqueId (&id));
  for (int r = 1; r < n; r++)
    {
      if (write (pipes[r][1], &id, sizeof id) != (ssize_t) sizeof id)
        {
          perror ("trainsim-trainer: passing the NCCL id");
          exit (1);
        }
      close (pipes[r][1]);
    }
  free (pipes);
  return id;
}

static int
finish_procs (Procs *p, int rc)
{
  for (int i = 0; i < p->nchildren; i++)
    {
      int status = 0;
      if (waitpid (p->children[i], &status, 0) < 0 || !WIFEXITED (status))
        rc = 1;
      else if (WEXITSTATUS (status) != 0 && !(rc == EXIT_NO_GPU && WEXITSTATUS (status) == EXIT_NO_GPU))
        rc = 1;
    }
  free (p->children);
#ifdef HAVE_MPI
  if (p->mpi)
    MPI_Finalize ();
#endif
  return rc;
}

/* ------------------------------------------------------------------ gradient buckets */

typedef struct { size_t start, end; } Bucket;

typedef struct {
  Bucket *b;
  int n, next;        /* buckets in launch order (from the end of the vector); next to launch */
  int dp, rank, zero, overlap;
  ncclComm_t comm;
  cudaStream_t comm_stream;
  cudaEvent_t *ready;  /* one per bucket: grads final on the compute stream */
  cudaEvent_t done;
  float *grads;
} Dp;

/* Buckets follow the order in which backward finishes gradients (gpt.h): a bucket closes at the first
 * ready point where it holds at least BUCKET_BYTES, and at the vector's start. */
static void
dp_plan (Dp *dp, const TrainerLayout *L, size_t bucket_bytes)
{
  size_t points[1 + 4096 + 1];
  int np = 0;
  points[np++] = L->off[TRAINER_LNF_W];
  for (int l = L->layers - 1; l >= 0 && np < 4096; l--)
    points[np++] = trainer_layout_offset (L, TRAINER_FIRST_LAYER_TENSOR, l);
  points[np++] = 0;
  dp->b = (Bucket *) calloc ((size_t) np, sizeof (Bucket));
  size_t end = L->total;
  for (int i = 0; i < np; i++)
    if ((end - points[i]) * sizeof (float) >= bucket_bytes || points[i] == 0)
      {
        if (end > points[i])
          dp->b[dp->n++] = (Bucket) { points[i], end };
        end = points[i];
      }
  dp->ready = (cudaEvent_t *) calloc ((size_t) dp->n, sizeof (cudaEvent_t));
  for (int i = 0; i < dp->n; i++)
    CK (cudaEventCreateWithFlags (&dp->ready[i], cudaEventDisableTiming));
  CK (cudaEventCreateWithFlags (&dp->done, cudaEventDisableTiming));
}

/* The main part of a bucket split evenly over ranks, and the < dp remainder all ranks keep. */
static void
bucket_shard (const Dp *dp, const Bucket *b, size_t *q, size_t *rem_start)
{
  size_t n = b->end - b->start;
  *q = n / (size_t) dp->dp;
  *rem_start = b->start + *q * (size_t) dp->dp;
}

static void
dp_launch (Dp *dp, int i, cudaStream_t compute)
{
  const Bucket *b = &dp->b[i];
  CK (cudaEventRecord (dp->ready[i], compute));
  CK (cudaStreamWaitEvent (dp->comm_stream, dp->ready[i], 0));
  if (!dp->zero)
    {
      NK (ncclAllReduce (dp->grads + b->start, dp->grads + b->start, b->end - b->start, ncclFloat, ncclAvg, dp->comm,
                         dp->comm_stream));
      return;
    }
  size_t q, rem;
  bucket_shard (dp, b, &q, &rem);
  if (q)
    NK (ncclReduceScatter (dp->grads + b->start, dp->grads + b->start + (size_t) dp->rank * q, q, ncclFloat, ncclAvg,
                           dp->comm, dp->comm_stream));
  if (rem < b->end)
    NK (ncclAllReduce (dp->grads + rem, dp->grads + rem, b->end - rem, ncclFloat, ncclAvg, dp->comm, dp->comm_stream));
}

static void
dp_on_ready (void *user, size_t ready_from, cudaStream_t compute)
{
  Dp *dp = (Dp *) user;
  if (!dp->overlap && ready_from != 0)
    return;
  while (dp->next < dp->n && dp->b[dp->next].start >= ready_from)
    dp_launch (dp, dp->next++, compute);
}

/* ------------------------------------------------------------------ output */

/* --dry-run: the plan and the scenario of a run, without a GPU. */
static int
dry_run (const Options *o, const TrainerShape *s)
{
  const Hardware *hw = o->hardware ? hardware_for (NULL, o->hardware) : NULL;
  if (!hw)
    {
      fprintf (stderr, "trainsim-trainer: --dry-run needs --hardware with one of:");
      for (size_t i = 0; i < sizeof hardware_table / sizeof hardware_table[0]; i++)
        fprintf (stderr, " %s", hardware_table[i].profile);
      fprintf (stderr, "\n");
      return 2;
    }
  int gpus = o->gpus > 0 ? o->gpus : 1;
  int per_node = o->gpus_per_node > 0 ? o->gpus_per_node : (gpus < 8 ? gpus : 8);
  int global_batch = o->global_batch ? o->global_batch : o->micro_batch * gpus;
  if (gpus % per_node || global_batch % (o->micro_batch * gpus))
    {
      fprintf (stderr, "trainsim-trainer: --gpus %d must be a multiple of --gpus-per-node %d, and the global batch %d "
                       "a multiple of micro-batch %d x %d GPUs\n", gpus, per_node, global_batch, o->micro_batch, gpus);
      return 2;
    }
  TrainerLayout L;
  trainer_layout_init (&L, s);
  printf ("model %s: %zu parameters, %.6g model FLOPs per token\n", s->name, L.total,
          trainer_layout_flops_per_token (&L, s));
  printf ("plan: %d GPU(s) (%d per node) on %s, dp %d, zero %d, micro-batch %d, global batch %d (%d accumulation "
          "steps), seq_len %d, recompute %s, attention %s\n", gpus, per_node, hw->profile, gpus, o->zero,
          o->micro_batch, global_batch, global_batch / (o->micro_batch * gpus), s->seq_len,
          o->recompute ? "full" : "none", o->flash ? "flash" : "gemm");
  if (o->emit)
    {
      TrainerRun run = { s, hw->profile, o->fabric ? o->fabric : hw->fabric, "(dry run)", o->model, gpus, per_node,
                         o->zero, o->micro_batch, global_batch, o->recompute, o->overlap, o->bucket_mib, o->steps,
                         o->flash };
      FILE *f = fopen (o->emit, "w");
      if (!f || trainer_emit_scenario (f, &run) != 0 || fclose (f) != 0)
        {
          fprintf (stderr, "trainsim-trainer: cannot write %s: %s\n", o->emit, strerror (errno));
          return 1;
        }
      printf ("scenario: %s\n", o->emit);
    }
  return 0;
}

static double
lr_at (const Options *o, int step)
{
  if (step < o->warmup)
    return o->lr * (step + 1) / o->warmup;
  double t = o->steps > o->warmup ? (double) (step - o->warmup) / (o->steps - o->warmup) : 1.0;
  double floor_lr = o->lr * o->min_lr_frac;
  return floor_lr + 0.5 * (o->lr - floor_lr) * (1.0 + cos (M_PI * t));
}

static float
elapsed_ms (cudaEvent_t a, cudaEvent_t b)
{
  float ms = 0.0f;
  CK (cudaEventElapsedTime (&ms, a, b));
  return ms;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

int
main (int argc, char **argv)
{
  Options o;
  if (parse_args (argc, argv, &o) != 0)
    return 2;
  TrainerShape s;
  char err[512];
  if (trainer_shape_load (o.model, o.seq_len, &s, err, sizeof err) != 0)
    {
      /* a model file carries no sequence length: fall back to 1024 */
      if (o.seq_len == 0 && strstr (err, "no sequence length"))
        o.seq_len = 1024;
      if (o.seq_len == 0 || trainer_shape_load (o.model, o.seq_len, &s, err, sizeof err) != 0)
        {
          fprintf (stderr, "trainsim-trainer: %s\n", err);
          return 2;
        }
    }
  if (s.vocab < TRAINER_DATA_VOCAB)
    {
      fprintf (stderr, "trainsim-trainer: %s: vocab = %d is below the byte tokenizer's %d tokens\n", o.model, s.vocab,
               TRAINER_DATA_VOCAB);
      return 2;
    }
  if (o.dry_run)
    return dry_run (&o, &s);
  Procs p;
  ncclUniqueId id = setup_procs (&argc, &argv, &o, &p);
  int ndev = 0;
  cudaError_t ce = cudaGetDeviceCount (&ndev);
  if (ce != cudaSuccess || ndev < 1)
    {
      fprintf (stderr, "trainsim-trainer: skipped: no usable CUDA device (%s): run it on a GPU machine\n",
               ce != cudaSuccess ? cudaGetErrorString (ce) : "none found");
      return finish_procs (&p, EXIT_NO_GPU);
    }
  CK (cudaSetDevice (p.local_rank % ndev));
  cudaDeviceProp prop;
  CK (cudaGetDeviceProperties (&prop, p.local_rank % ndev));
  const Hardware *hw = hardware_for (prop.name, o.hardware);
  if (!hw && (o.emit || o.peak_tflops <= 0))
    fprintf (stderr, "trainsim-trainer: %s: no trainsim hardware profile matches %s; give --hardware and "
                     "--peak-tflops (MFU shows nan)\n", prop.name, o.hardware ? o.hardware : "the device name");
  double peak = o.peak_tflops > 0 ? o.peak_tflops : hw ? hw->bf16_tflops : NAN;

  int dpn = p.size;
  int global_batch = o.global_batch ? o.global_batch : o.micro_batch * dpn;
  if (global_batch % (o.micro_batch * dpn))
    {
      fprintf (stderr, "trainsim-trainer: global batch %d is not a multiple of micro-batch %d x %d GPUs\n",
               global_batch, o.micro_batch, dpn);
      return finish_procs (&p, 2);
    }
  int accum = global_batch / (o.micro_batch * dpn);

  TrainerData data;
  if (trainer_data_load (&data, o.data, o.holdout, err, sizeof err) != 0)
    {
      fprintf (stderr, "trainsim-trainer: %s\n", err);
      return finish_procs (&p, 2);
    }

  cudaStream_t stream, comm_stream;
  CK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  CK (cudaStreamCreateWithFlags (&comm_stream, cudaStreamNonBlocking));
  TrainerGpt *gpt = trainer_gpt_new (&s, o.micro_batch, o.recompute, o.flash, stream, err, sizeof err);
  if (!gpt)
    {
      fprintf (stderr, "trainsim-trainer: %s\n", err);
      return finish_procs (&p, 2);
    }
  const TrainerLayout *L = trainer_gpt_layout (gpt);
  size_t P = L->total;

  /* identical initial weights on every rank: same seed, host init, copy */
  float *host = (float *) malloc (P * sizeof (float));
  unsigned char *decay = (unsigned char *) malloc (P);
  trainer_layout_init_params (L, &s, (uint64_t) o.seed, host);
  for (size_t i = 0; i < P; i++)
    decay[i] = (unsigned char) trainer_layout_decays (trainer_layout_tensor_at (L, i));
  float *master = trainer_gpt_master (gpt), *grads = trainer_gpt_grads (gpt), *m, *v, *scalars;
  unsigned char *d_decay;
  CK (cudaMemcpy (master, host, P * sizeof (float), cudaMemcpyHostToDevice));
  free (host);
  CK (cudaMalloc (&m, P * sizeof (float)));
  CK (cudaMalloc (&v, P * sizeof (float)));
  CK (cudaMemset (m, 0, P * sizeof (float)));
  CK (cudaMemset (v, 0, P * sizeof (float)));
  CK (cudaMalloc (&d_decay, P));
  CK (cudaMemcpy (d_decay, decay, P, cudaMemcpyHostToDevice));
  free (decay);
  CK (cudaMalloc (&scalars, 4 * sizeof (float))); /* loss sum, grad norm², eval loss sum */
  trainer_gpt_sync_bf16 (gpt);
  /* the copies above ran on the legacy stream, which does not order the non-blocking ones */
  CK (cudaDeviceSynchronize ());
  void *p16 = trainer_gpt_params_bf16 (gpt);

  Dp dp;
  memset (&dp, 0, sizeof dp);
  dp.dp = dpn;
  dp.rank = p.rank;
  dp.zero = o.zero;
  dp.overlap = o.overlap;
  dp.comm_stream = comm_stream;
  dp.grads = grads;
  dp_plan (&dp, L, (size_t) o.bucket_mib << 20);
  if (dpn > 1)
    NK (ncclCommInitRank (&dp.comm, dpn, id, p.rank));

  /* token buffers: one pinned/device pair per micro-batch, so copies never race the host */
  int N = o.micro_batch * s.seq_len;
  int *h_tok, *d_tok;
  int nbuf = accum > o.eval_batches ? accum : o.eval_batches;
  CK (cudaMallocHost (&h_tok, (size_t) nbuf * 2 * N * sizeof (int)));
  CK (cudaMalloc (&d_tok, (size_t) nbuf * 2 * N * sizeof (int)));

  int nev = 4 + 3 * accum;
  cudaEvent_t *ev = (cudaEvent_t *) calloc ((size_t) nev, sizeof (cudaEvent_t));
  for (int i = 0; i < nev; i++)
    CK (cudaEventCreate (&ev[i]));
  cudaEvent_t ev_start = ev[0], ev_comm = ev[1], ev_opt = ev[2], ev_end = ev[3];
  cudaEvent_t *ev_f0 = ev + 4, *ev_f1 = ev + 4 + accum, *ev_b1 = ev + 4 + 2 * accum;

  FILE *out = stdout;
  if (p.rank == 0 && o.out && !(out = fopen (o.out, "w")))
    {
      fprintf (stderr, "trainsim-trainer: cannot write %s: %s\n", o.out, strerror (errno));
      return finish_procs (&p, 1);
    }
  double flops_token = trainer_layout_flops_per_token (L, &s);
  double tokens_step = (double) global_batch * s.seq_len;
  if (p.rank == 0)
    {
      int ncclv = 0;
      ncclGetVersion (&ncclv);
      fprintf (out, "# tool: trainsim-trainer %s (%s)\n", PACKAGE_VERSION, TRAINSIM_GIT_REV);
      fprintf (out, "# device: %s x %d (%d node(s) x %d GPUs), CUDA runtime %d, NCCL %d\n", prop.name, p.size, p.nodes,
               p.local_size, CUDART_VERSION, ncclv);
      fprintf (out, "# model: %s (%s): layers %d hidden %d heads %d kv_heads %d head_dim %d ffn %d vocab %d (padded %d) "
                    "%s %s %s tied %d bias %d; %zu parameters\n",
               o.model, s.name, s.layers, s.hidden, s.heads, s.kv_heads, s.head_dim, s.ffn_hidden, s.vocab,
               s.vocab_padded, s.swiglu ? "swiglu" : "gelu", s.rmsnorm ? "rmsnorm" : "layernorm",
               s.rope ? "rope" : "learned", s.tied_embeddings, s.bias, P);
      fprintf (out, "# plan: dp %d zero %d dp_bucket_MiB %d (%d buckets) dp_overlap %d recompute %s micro_batch %d "
                    "global_batch %d accumulation %d seq_len %d attention %s; bf16 matmuls, fp32 master weights and gradients\n",
               dpn, o.zero, o.bucket_mib, dp.n, o.overlap, o.recompute ? "full" : "none", o.micro_batch, global_batch,
               accum, s.seq_len, o.flash ? "flash" : "gemm");
      fprintf (out, "# optimizer: AdamW lr %g (warmup %d, cosine to %g x), betas %g %g, eps %g, weight decay %g, clip %g\n",
               o.lr, o.warmup, o.min_lr_frac, o.beta1, o.beta2, o.eps, o.wd, o.clip);
      fprintf (out, "# data: %s (%zu bytes in %d file(s), byte tokenizer), held out: last %g; seed %d\n", o.data,
               data.len, data.files, o.holdout, o.seed);
      fprintf (out, "# flops: %.6g model FLOPs per token (6 x matmul weights + 12 x layers x seq_len x heads x head_dim);"
                    " MFU against %g dense BF16 TFLOP/s per GPU\n", flops_token, peak);
      fprintf (out, "# phases from CUDA events on the compute stream; comm_exposed = waiting for DP collectives\n");
      fprintf (out, "step\tloss_nats\tval_loss_nats\tlr\tgrad_norm\tstep_ms\tforward_ms\tbackward_ms\toptimizer_ms\t"
                    "comm_exposed_ms\ttokens_per_s\ttflops_per_gpu\tmfu_pct\n");
      fflush (out);
    }
  if (p.rank == 0 && o.emit)
    {
      if (!hw)
        fprintf (stderr, "trainsim-trainer: --emit-scenario skipped: no hardware profile (give --hardware)\n");
      else
        {
          TrainerRun run = { &s, hw->profile, o.fabric ? o.fabric : hw->fabric, prop.name, o.model, p.size,
                             p.local_size, o.zero, o.micro_batch, global_batch, o.recompute, o.overlap, o.bucket_mib,
                             o.steps, o.flash };
          FILE *f = fopen (o.emit, "w");
          if (!f || trainer_emit_scenario (f, &run) != 0 || fclose (f) != 0)
            {
              fprintf (stderr, "trainsim-trainer: cannot write %s: %s\n", o.emit, strerror (errno));
              return finish_procs (&p, 1);
            }
        }
    }
  double *step_ms_all = (double *) calloc ((size_t) o.steps, sizeof (double));
  float grad_scale = 1.0f / ((float) N * accum);
  for (int step = 0; step < o.steps; step++)
    {
      /* host: this rank's batches for the step (stream = global micro-batch index) */
      for (int a = 0; a < accum; a++)
        trainer_data_batch (&data, 0, (uint64_t) o.seed, ((uint64_t) step * dpn + p.rank) * accum + a, o.micro_batch,
                            s.seq_len, h_tok + (size_t) a * 2 * N, h_tok + (size_t) a * 2 * N + N);
      CK (cudaEventRecord (ev_start, stream));
      CK (cudaMemsetAsync (grads, 0, P * sizeof (float), stream));
      CK (cudaMemsetAsync (scalars, 0, 4 * sizeof (float), stream));
      dp.next = 0;
      for (int a = 0; a < accum; a++)
        {
          int *dt = d_tok + (size_t) a * 2 * N;
          CK (cudaMemcpyAsync (dt, h_tok + (size_t) a * 2 * N, 2 * (size_t) N * sizeof (int), cudaMemcpyHostToDevice,
                               stream));
          CK (cudaEventRecord (ev_f0[a], stream));
          trainer_gpt_forward (gpt, dt, dt + N, scalars, grad_scale);
          CK (cudaEventRecord (ev_f1[a], stream));
          trainer_gpt_backward (gpt, dpn > 1 && a == accum - 1 ? dp_on_ready : NULL, &dp);
          CK (cudaEventRecord (ev_b1[a], stream));
        }
      if (dpn > 1)
        {
          CK (cudaEventRecord (dp.done, comm_stream));
          CK (cudaStreamWaitEvent (stream, dp.done, 0));
        }
      CK (cudaEventRecord (ev_comm, stream));
      /* gradient norm over what this rank owns, then AdamW on it */
      if (dpn > 1 && o.zero)
        {
          for (int i = 0; i < dp.n; i++)
            {
              size_t q, rem;
              bucket_shard (&dp, &dp.b[i], &q, &rem);
              trainer_grad_sumsq (grads + dp.b[i].start + (size_t) p.rank * q, q, scalars + 1, stream);
              if (p.rank == 0)
                trainer_grad_sumsq (grads + rem, dp.b[i].end - rem, scalars + 1, stream);
            }
          NK (ncclAllReduce (scalars + 1, scalars + 1, 1, ncclFloat, ncclSum, dp.comm, stream));
        }
      else
        trainer_grad_sumsq (grads, P, scalars + 1, stream);
      float lr = (float) lr_at (&o, step);
      if (dpn > 1 && o.zero)
        for (int i = 0; i < dp.n; i++)
          {
            size_t q, rem, a0;
            bucket_shard (&dp, &dp.b[i], &q, &rem);
            a0 = dp.b[i].start + (size_t) p.rank * q;
            trainer_adamw (master + a0, (char *) p16 + a0 * 2, grads + a0, m + a0, v + a0, d_decay + a0, q, scalars + 1,
                           (float) o.clip, lr, (float) o.beta1, (float) o.beta2, (float) o.eps, (float) o.wd, step + 1,
                           stream);
            trainer_adamw (master + rem, (char *) p16 + rem * 2, grads + rem, m + rem, v + rem, d_decay + rem,
                           dp.b[i].end - rem, scalars + 1, (float) o.clip, lr, (float) o.beta1, (float) o.beta2,
                           (float) o.eps, (float) o.wd, step + 1, stream);
          }
      else
        trainer_adamw (master, p16, grads, m, v, d_decay, P, scalars + 1, (float) o.clip, lr, (float) o.beta1,
                       (float) o.beta2, (float) o.eps, (float) o.wd, step + 1, stream);
      CK (cudaEventRecord (ev_opt, stream));
      if (dpn > 1 && o.zero)
        {
          NK (ncclGroupStart ());
          for (int i = 0; i < dp.n; i++)
            {
              size_t q, rem;
              bucket_shard (&dp, &dp.b[i], &q, &rem);
              if (q)
                NK (ncclAllGather ((char *) p16 + (dp.b[i].start + (size_t) p.rank * q) * 2,
                                   (char *) p16 + dp.b[i].start * 2, q, ncclBfloat16, dp.comm, stream));
            }
          NK (ncclGroupEnd ());
        }
      CK (cudaEventRecord (ev_end, stream));
      /* untimed: the loss averaged over ranks */
      if (dpn > 1)
        NK (ncclAllReduce (scalars, scalars, 1, ncclFloat, ncclSum, dp.comm, stream));
      float hs[4];
      CK (cudaMemcpyAsync (hs, scalars, sizeof hs, cudaMemcpyDeviceToHost, stream));
      CK (cudaStreamSynchronize (stream));

      double fwd = 0, bwd = 0;
      for (int a = 0; a < accum; a++)
        {
          fwd += elapsed_ms (ev_f0[a], ev_f1[a]);
          bwd += elapsed_ms (ev_f1[a], ev_b1[a]);
        }
      double step_ms = elapsed_ms (ev_start, ev_end);
      double comm_ms = elapsed_ms (ev_b1[accum - 1], ev_comm) + elapsed_ms (ev_opt, ev_end);
      double opt_ms = elapsed_ms (ev_comm, ev_opt);
      step_ms_all[step] = step_ms;
      double loss = hs[0] / ((double) N * accum * dpn), gnorm = sqrt (hs[1]);

      double val = NAN;
      if ((o.eval_every && (step + 1) % o.eval_every == 0) || step + 1 == o.steps)
        {
          for (int a = 0; a < o.eval_batches; a++)
            {
              int *ht = h_tok + (size_t) a * 2 * N, *dt = d_tok + (size_t) a * 2 * N;
              trainer_data_batch (&data, 1, (uint64_t) o.seed, (uint64_t) p.rank * o.eval_batches + a, o.micro_batch,
                                  s.seq_len, ht, ht + N);
              CK (cudaMemcpyAsync (dt, ht, 2 * (size_t) N * sizeof (int), cudaMemcpyHostToDevice, stream));
              trainer_gpt_forward (gpt, dt, dt + N, scalars + 2, 0.0f);
            }
          if (dpn > 1)
            NK (ncclAllReduce (scalars + 2, scalars + 2, 1, ncclFloat, ncclSum, dp.comm, stream));
          CK (cudaMemcpyAsync (hs, scalars, sizeof hs, cudaMemcpyDeviceToHost, stream));
          CK (cudaStreamSynchronize (stream));
          val = hs[2] / ((double) N * o.eval_batches * dpn);
        }
      if (p.rank == 0)
        {
          double tps = tokens_step / (step_ms * 1e-3);
          double tflops = tps * flops_token / dpn * 1e-12;
          fprintf (out, "%d\t%.5f\t%.5f\t%.4g\t%.4f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t%.2f\t%.2f\n", step + 1, loss,
                   val, lr, gnorm, step_ms, fwd, bwd, opt_ms, comm_ms, tps, tflops, 100.0 * tflops / peak);
          fflush (out);
        }
      if (!isfinite (loss))
        {
          fprintf (stderr, "trainsim-trainer: rank %d: loss is %g at step %d: stopping\n", p.rank, loss, step + 1);
          return finish_procs (&p, 1);
        }
    }
  if (p.rank == 0)
    {
      /* summary: median step time over steps after the first 10% (warm-up, allocator, autotuning) */
      int skip = o.steps / 10, n = o.steps - skip;
      qsort (step_ms_all + skip, (size_t) n, sizeof (double), cmp_double);
      double med = step_ms_all[skip + n / 2];
      fprintf (stderr, "trainsim-trainer: %d steps on %d GPU(s): median step %.3f ms, %.0f tokens/s, %.1f TFLOP/s per GPU"
                       ", MFU %.1f%%; activations %.2f GiB per GPU\n",
               o.steps, dpn, med, tokens_step / (med * 1e-3), tokens_step / (med * 1e-3) * flops_token / dpn * 1e-12,
               100.0 * tokens_step / (med * 1e-3) * flops_token / dpn * 1e-12 / peak,
               trainer_gpt_activation_bytes (gpt) / 1073741824.0);
      fprintf (out, "# median_step_ms=%.3f tokens_per_s=%.0f\n", med, tokens_step / (med * 1e-3));
      if (out != stdout)
        fclose (out);
    }
  if (dpn > 1)
    ncclCommDestroy (dp.comm);
  trainer_gpt_free (gpt);
  trainer_data_clear (&data);
  return finish_procs (&p, 0);
}
