/* One GPU type's hardware profile: datasheet peaks plus achieved-efficiency constants.
 *
 * Filled by the scenario loader from the [hardware] group; every figure there carries a
 * `source`. Rates in SI units (FLOP/s, bytes/s), sizes in bytes, times in ns. */
#pragma once
#include <glib.h>
#include "model/dtype.h"

typedef struct {
  char name[64];
  double peak_flops[MODEL_DTYPE_COUNT]; /* dense tensor-core FLOP/s per precision; 0 = unsupported */
  double hbm_bytes;                     /* usable HBM capacity */
  double hbm_bw_bytes_per_s;            /* datasheet HBM bandwidth */
  int sm_count;
  double nvlink_bw_bytes_per_s;         /* per GPU, per direction */
  gboolean nvls;                        /* NVLink SHARP in-switch reduction */
  double tdp_w;
  /* Achieved efficiencies (fractions of the peaks above), from public microbenchmarks or calib/. */
  double gemm_eff_max;                  /* large-GEMM efficiency */
  double gemm_eff_half_gflop;           /* GEMM size (GFLOP) at which efficiency is half of max */
  double attn_eff;                      /* fused causal attention, fraction of peak */
  double mem_eff;                       /* memory-bound kernels, fraction of HBM bandwidth */
  double nvlink_eff;                    /* achieved NVLink bus bandwidth / line rate */
  gint64 launch_ns;                     /* per-kernel launch/tail overhead */
  double overlap_slowdown;              /* compute slowdown while communication kernels share SMs */
} SimGpuSpec;
