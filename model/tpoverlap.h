/* How Transformer Engine's userbuffers overlap (tp_comm_overlap with sequence parallelism) executes
 * the ten TP-adjacent GEMMs of a dense transformer layer.
 *
 * The overlap is not free: the GEMM is cut into pieces so that communication of one piece runs
 * beside the math of another, and some methods take SMs away from the math for their
 * communication kernels. TE names the GEMMs and gives each a method
 * (transformer_engine/pytorch/module/base.py, initialize_ub):
 *   ring_exchange  qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: the all-gather as a ring of tp
 *                  point-to-point steps; step i multiplies the chunk that has arrived, so the
 *                  GEMM runs as tp GEMMs of M/tp rows (aggregate: tp/2 GEMMs of 2M/tp rows).
 *   pipeline       proj_fprop, fc2_fprop: the GEMM in num_splits row chunks, each chunk's output
 *                  reduce-scattered by a kernel on num_sm SMs while the next chunk computes.
 *   bulk           qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad: the whole collective beside the
 *                  whole GEMM, its kernel on num_sm SMs.
 * With set_sm_margin the GEMM is launched on (SMs - num_sm) SMs (cuBLASLt SM count target), so
 * the communication kernel has its SMs to itself. The profile's overlap_slowdown (compute sharing
 * SMs with NCCL kernels, Lee et al.) then does not apply to the GEMM for its own collective, nor
 * for ring exchange, whose copies run on copy engines (TE's use_ce, the default); it still does
 * for pipeline and bulk kernels without a margin, which take SMs from the running GEMM.
 *
 * Scenario syntax, one key per GEMM in [tp_overlap]:
 *   METHOD [splits=N] [sm=N] [margin] [aggregate]
 * e.g. "pipeline splits=4 sm=24 margin" (NVIDIA's MLPerf v3.1 GPT-3 proj_fprop). A GEMM left out
 * takes TE's default (get_default_config in initialize_ub): ring_exchange with tp steps, no
 * margin; pipeline 4 splits, 16 SMs; bulk 16 SMs; pipeline and bulk with margin from TE 2.0 on
 * ([tp_overlap] defaults = te2, the default), without before (te1). */
#pragma once
#include <glib.h>

typedef enum {
  MODEL_UB_DEFAULT,        /* TE's default method and settings for this GEMM */
  MODEL_UB_RING_EXCHANGE,
  MODEL_UB_PIPELINE,
  MODEL_UB_BULK
} ModelUbMethod;

typedef enum {
  MODEL_UB_QKV_FPROP, MODEL_UB_PROJ_FPROP, MODEL_UB_FC1_FPROP, MODEL_UB_FC2_FPROP,
  MODEL_UB_QKV_DGRAD, MODEL_UB_QKV_WGRAD, MODEL_UB_PROJ_DGRAD, MODEL_UB_FC1_DGRAD,
  MODEL_UB_FC1_WGRAD, MODEL_UB_FC2_DGRAD, MODEL_UB_COUNT
} ModelUbGemm;

/* Whose defaults a GEMM left out takes: TE 2.x (the zero value) or TE 1.x, whose
 * get_default_config set no SM margin for any method (TE 2.0 added it for pipeline and bulk). */
typedef enum { MODEL_UB_DEFAULTS_TE2, MODEL_UB_DEFAULTS_TE1 } ModelUbDefaults;

typedef struct {
  guint8 method;     /* ModelUbMethod */
  guint8 sm_margin;  /* GEMM launched on SMs - num_sm */
  guint8 aggregate;  /* ring_exchange: two chunks per GEMM */
  guint8 splits;     /* pipeline: row chunks (1..64) */
  guint16 num_sm;    /* SMs of the communication kernel */
} ModelUbConfig;

/* "qkv_fprop", …: TE's names, also the [tp_overlap] keys. */
const char *model_ub_gemm_name (ModelUbGemm g);
/* The GEMM a layer op of that name is (model/layer.c names: "qkv", "fc1_dgrad", …), or -1. */
int model_ub_gemm_of_op (const char *op_name);
/* Parses the scenario syntax above; errors name what is wrong, not where (the caller adds that). */
gboolean model_ub_parse (const char *text, ModelUbConfig *out, GError **error);
/* `cfg` with MODEL_UB_DEFAULT replaced by TE's default for GEMM g. */
ModelUbConfig model_ub_resolve (ModelUbConfig cfg, ModelUbGemm g, ModelUbDefaults defaults);
/* How a GEMM of a layer with TP degree tp runs under the overlap: the number of equal row
 * pieces it is cut into and the SMs withheld from it. */
void model_ub_execution (const ModelUbConfig *cfg, ModelUbGemm g, ModelUbDefaults defaults, int tp, int *pieces,
                         int *withheld_sms);
/* Whether the GEMM's communication competes with it for SMs while both run: pipeline and bulk
 * kernels without a margin do; with a margin they have SMs of their own, and ring exchange moves
 * data with copy engines (TE's use_ce, on by default), no kernel at all. */
gboolean model_ub_shares_sms (const ModelUbConfig *cfg, ModelUbGemm g, ModelUbDefaults defaults);
