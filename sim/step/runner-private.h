/* Internals shared by the step runner's two halves: program.c builds each pipeline stage's
 * program (ops, dependency edges, per-stream issue order) from the model's layer ops; runner.c
 * executes the programs on the engine and the fabric. Not for use outside sim/step/. */
#pragma once
#include "sim/step/runner.h"
#include "model/schedule.h"

/* ST_DPAG: ZeRO-3 parameter all-gathers on their own stream, as DeepSpeed (and PyTorch FSDP's
 * unshard stream) issue them apart from the gradient reduce-scatters, so a prefetch is not queued
 * behind a reduction. */
enum { ST_COMPUTE, ST_TP, ST_CP, ST_SEND_F, ST_SEND_B, ST_DP, ST_EP, ST_DPAG, N_STREAMS };
typedef enum { K_COMPUTE, K_COLL, K_RING, K_SEND } OpKind;
/* Communication groups. DPCP: dense gradients (Megatron's data-parallel group with CP); EDP:
 * expert gradients; EMB: first and last pipeline stage (tied word embeddings). */
typedef enum { G_TP, G_CP, G_DPCP, G_EP, G_EDP, G_EMB, G_ETP, G_AMAX, G_COUNT } GroupKind;

typedef struct {
  guint8 kind, stream, cat, group, coll;
  guint8 fwd;          /* K_SEND: 1 to the next virtual stage, 0 to the previous */
  guint8 ub_own_sms;   /* K_COMPUTE: a userbuffers GEMM whose TP communication does not share its
                        * SMs (see emit_ops): only other communication stretches it */
  guint16 n_deps;      /* dependency edges into it, PP receives included */
  guint32 seq;         /* K_COLL/K_RING: ordinal among this program's ops of the same group */
  guint16 mb;          /* K_SEND: micro-batch and virtual stage of the sending slot */
  guint16 vs;
  guint32 pos;         /* its place in its stream's issue order */
  union {
    gint64 dur_ns;     /* K_COMPUTE */
    double bytes;      /* the others */
  };
  guint32 succ_off, n_succ;
  gint32 recv_op;      /* K_SEND: op of the receiving stage's program that waits for it */
  gint32 ext;          /* a PP receive's slot in the rank's arrival counters, -1: none */
} TOp;                 /* 48 bytes: ranks stream through their stage's ops, one op an event */

typedef struct {
  TOp *ops;
  int n_ops;
  const char **names;  /* per op, for traces: the model op's (interned) name or a static label */
  /* succ: per op (succ_off, n_succ), the ops that depend on it; SUCC_QUIET marks all but the last
   * of repeated edges, which tell nothing. */
  guint32 *succ;
  /* Readiness without per-rank counters (sim_runner_program_seal): a stream runs its ops one at a
   * time in issue order, so an op's predecessors have all ended once, on each stream they lie on,
   * that many ops there have ended. need[need_off[i] .. need_off[i + 1]) holds op i's conditions,
   * (stream << NEED_SHIFT) | count, the largest count over its predecessors on that stream, and
   * for a PP receive (NEED_EXT << NEED_SHIFT) | e: its rank's counter e of sends still to arrive
   * (n_ext counters per rank, starting at ext_init). */
  guint32 *need_off, *need;
  int n_ext;
  guint16 *ext_init;
  guint32 *stream_ops[N_STREAMS];
  int stream_n[N_STREAMS];
  gint32 *entry;       /* [pass][mb][chunk] -> entry op */
  int end_op;
  double flops;        /* executed FLOPs of one rank of this stage */
  gint64 forward_ns;   /* compute of the forward slots of one micro-batch (all chunks) */
  double *sens;        /* with LayerCtx.sens: per op, SIM_GPU_N_SENS derivatives of dur_ns
                        * (sim_gpu_op_ns_sens); NULL otherwise */
} Program;

#define SUCC_QUIET (1u << 31)
#define NEED_SHIFT 24
#define NEED_COUNT ((1u << NEED_SHIFT) - 1)
#define NEED_EXT 0xffu

/* What the program builder needs to turn layer ops into program ops. */
typedef struct {
  const ModelShape *shape;
  const ModelPlan *plan;
  const SimGpuSpec *gpu;
  double grad_bytes;   /* bytes per gradient element as reduced */
  double param_bytes;  /* bytes per parameter element as gathered */
  double ep_a2a_scale; /* expert all-to-all bytes over those of one copy per selected expert
                        * (model_moe_dispatch_copies / moe_top_k) */
  GArray *scratch;     /* ModelOp */
  gboolean sens;       /* programs carry their ops' duration sensitivities */
  /* the last program's sizes, reserved for the next (a stage's program is its neighbour's size:
   * growing by doubling copied them and touched fresh pages, ~15% of a 1,120-micro-batch run) */
  guint last_ops, last_edges, last_stream[N_STREAMS];
} LayerCtx;

static inline int
entry_index (const ModelPlan *plan, int m, ModelPass pass, int mb, int chunk)
{
  return ((int) pass * m + mb) * plan->vpp + chunk;
}

/* Builds stage `stage`'s program for the data-parallel group size `dpcp` (program.c). */
void sim_runner_build_program (Program *p, LayerCtx *c, int stage, int dpcp);
/* Its readiness conditions (need), once the PP receives (ext) are known. */
void sim_runner_program_seal (Program *p);
void sim_runner_program_clear (Program *p);
