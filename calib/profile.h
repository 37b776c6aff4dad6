/* Calibrated hardware profile: the fits of a measurement set, written as a scenario layer
 * ([hardware] group of a GLib key file) with every constant's 1σ, χ²/dof and source files. */
#pragma once
#include <glib.h>
#include "calib/fit.h"
#include "calib/measure.h"

/* α-β model of one collective at one scale: t = α + S·f(n)/busbw, f the nccl-tests bus factor. */
typedef struct {
  const char *collective;
  int nranks;
  int nodes;                /* hosts; 0 unknown */
  double alpha_us, sigma_alpha_us;
  double busbw_GBps, sigma_busbw_GBps;
  double chisq_dof;
  int dof;
  guint n_points;
  char *sources; /* comma-separated file names */
} CalibCollectiveFit;

/* Saturating curve of one series (GEMM dtype, attention pass, memory op): see calib_fit_saturating.
 * x is FLOPs (GEMM, attention) or bytes moved (memory); peak in TFLOP/s or GB/s. */
typedef struct {
  CalibKind kind;
  const char *series;
  CalibNlinFit fit;
  guint n_points;
  char *sources;
} CalibCurveFit;

typedef struct _CalibProfile CalibProfile;

/* Fits everything the set holds: one α-β line per (collective, nranks, nodes, dtype) and one
 * saturating curve per GEMM dtype, attention pass and memory op. A series with too few sizes to fit
 * (one size for a line, fewer than 4 for a curve) is not fitted and gets a note (notes below, and
 * in the profile); a fit that fails otherwise is an error naming the series. */
CalibProfile *calib_profile_fit (const CalibMeasureSet *set, GError **error);
void calib_profile_free (CalibProfile *profile);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CalibProfile, calib_profile_free)

guint calib_profile_n_collectives (const CalibProfile *profile);
const CalibCollectiveFit *calib_profile_collective (const CalibProfile *profile, guint i);
guint calib_profile_n_curves (const CalibProfile *profile);
/* Series that were not fitted, each with the reason. */
guint calib_profile_n_notes (const CalibProfile *profile);
const char *calib_profile_note (const CalibProfile *profile, guint i);
const CalibCurveFit *calib_profile_curve (const CalibProfile *profile, guint i);

/* The profile as key-file text: a [hardware] layer whose keys are listed in scenarios/README.md
 * (nccl_*, gemm_*, attention_*, memory_*), comments carrying 1σ, χ²/dof, points and files.
 * With `hardware` (the [hardware] group of the machine's datasheet profile, named `hardware_name`)
 * the efficiencies the simulator reads are written too, each with its KEY.source:
 *   gemm_eff_max_<dtype> and gemm_eff_half_GFLOP_<dtype>, for every fitted GEMM dtype: the two
 *     constants of the simulator's own curve, rate = peak_<dtype>_TFLOPS · e_max · G/(G + G½) ·
 *     waves(M, N) on the datasheet's sm_count (sim/gpu/gpu.h), fitted to the same points (without a
 *     datasheet peak: G½ from the γ curve's x½ only),
 *   mem_eff = fitted copy (else read) peak / hbm_TBps,
 *   nvlink_eff = single-node ring busbw (all_gather, else reduce_scatter, most ranks) / nvlink_unidir_GBps.
 * attn_eff is not written: the attention bench is unfused, attn_eff means a fused kernel. */
char *calib_profile_to_data (const CalibProfile *profile, const char *command_line, GKeyFile *hardware,
                             const char *hardware_name);

/* Writes DIR/calib-<kind>.tsv (gnuplot datasets: measured points, then the fitted curve, per
 * series) for plots/calib-fit.gp; returns the written paths in *paths (NULL-terminated). */
gboolean calib_profile_write_plot_data (const CalibProfile *profile, const char *dir, GStrv *paths, GError **error);
