/* Scenario loading: layered GLib key files plus `--set group.key=value` overrides, checked against
 * one key table and converted once to the SI structs the model and simulator read.
 *
 * Layers are applied in order: each file (its `[scenario] include` list first, paths relative to
 * the including file), then every --set. A later layer replaces a key's value, and with it the
 * key's `KEY.source`. Files are read from disk, or from the scenarios embedded in the binary (a
 * GResource built from scenarios/) when no such file exists on disk.
 *
 * Every error is `FILE:LINE: [group] key: what is wrong`, then the remedy; FILE is `--set` for
 * command-line overrides. Nothing is defaulted silently: defaults are the ones in the key table
 * (printed by `trainsim run --keys`, documented in scenarios/README.md). */
#pragma once
#include <stdio.h>
#include <glib.h>
#include "model/shape.h"
#include "model/plan.h"
#include "sim/gpu/gpu.h"
#include "sim/net/topology.h"
#include "sim/net/collective.h"

#define SIM_SCENARIO_ERROR (sim_scenario_error_quark ())
GQuark sim_scenario_error_quark (void);
typedef enum {
  SIM_SCENARIO_ERROR_IO,        /* file or include not found, unreadable */
  SIM_SCENARIO_ERROR_SYNTAX,    /* not a key file; bad --set */
  SIM_SCENARIO_ERROR_UNKNOWN,   /* unknown group or key */
  SIM_SCENARIO_ERROR_MISSING,   /* required key absent */
  SIM_SCENARIO_ERROR_VALUE,     /* wrong type, non-finite, negative, out of range, bad enum */
  SIM_SCENARIO_ERROR_INVALID,   /* consistent values that do not make a valid model/plan/cluster */
} SimScenarioError;

/* The embedded default: MLPerf Training v3.1 GPT-3 175B on 10,752 H100. */
#define SIM_SCENARIO_DEFAULT "runs/gpt3-175b-mlperf-v3.1.ini"

/* Scenario-level facts that are neither the model, the plan nor the hardware. Strings are owned
 * by the SimScenario. Optional numbers are 0 when the scenario does not give them. */
#define SIM_SCENARIO_MAX_COV 8 /* constants of one generation's calibration */

typedef struct {
  const char *name;
  const char *description;
  double measured_step_time_s;      /* a published measurement of this exact case; 0: none */
  double measured_time_to_train_s;  /* published time to train (e.g. MLPerf score); 0: none */
  const char *measured_source;      /* required with either measurement */
  int measured_gpus;                /* the scale the measurements belong to; required with them */
  /* A measurement belongs to the case of the file that states it: where a later file or --set gives
   * another value to a key that defines the case (every [model], [parallel] and [tp_overlap] key,
   * [cluster] but its latencies, [hardware] and [fabric] name, [training] seq_len), the first such
   * key, as "[group] key", and its value there and here; NULL when the case is the stated one (or
   * the measurement itself came from --set). */
  const char *measured_changed;
  const char *measured_changed_was, *measured_changed_now;
  int base_gpus;                    /* scaling-efficiency base scale; 0: none */
  gboolean weak_scaling;            /* the base keeps the global batch per DP replica */
  /* [training] */
  gint64 steps;                     /* optimizer steps to train; 0: not given */
  double tokens;                    /* tokens to train (alternative to steps); 0: not given */
  double init_s;                    /* start-up before the first step */
  gint64 eval_interval_seqs;        /* an evaluation after every so many training sequences; 0: none */
  gint64 eval_seqs;                 /* sequences in one evaluation pass */
  int eval_skip;                    /* evaluations skipped at the start (MLPerf v6.0 Llama rule) */
  double memory_overhead_bytes;     /* per-GPU framework memory; < 0: model/memory.h's assumption */
  /* [cluster] facts the topology does not take */
  double virtualization_overhead;   /* fractional slowdown of a VM (e.g. Azure) against bare metal */
  /* [calibration] (scenarios/calibration/<generation>.ini, written by `trainsim fit --runs`) */
  const char *calibration;          /* the generation calibrated on the deck; NULL: uncalibrated */
  double band_log_sigma;            /* σ of ln(measured / predicted) out of sample; 0: no band */
  /* [calibration] covariance: the fitted constants' covariance in the fit's own coordinates φ
   * (1/scale for gemm_insitu_* and mem_insitu, µs for launch_us, ms for step_overhead_ms), and
   * each constant's SimRunnerResult.step_sens direction (-1: step_overhead_ms, which adds 1 ms of
   * step per ms); n_cov 0: none. */
  int n_cov;
  int cov_dir[SIM_SCENARIO_MAX_COV];
  double cov[SIM_SCENARIO_MAX_COV * SIM_SCENARIO_MAX_COV];
  /* Derived from [cluster] */
  int nodes;                        /* gpus / gpus_per_node */
  int domains;                      /* NVLink domains used: ceil(gpus / gpus_per_domain_used) */
  int global_batch_per_dp;          /* sequences per data-parallel replica per step */
} SimScenarioRun;

/* One key as resolved, for printing with its provenance. */
typedef struct {
  const char *group, *key;
  const char *value;        /* as written (or the default) */
  const char *file;         /* where the value came from: a path, `--set`, or `default` */
  int line;                 /* 0 for defaults */
  const char *source;       /* the KEY.source text, or NULL */
  const char *unit;         /* the unit (from the key name), "" if none */
  const char *meaning;
  gboolean is_default;
} SimScenarioValue;

/* The key table, for documentation and the README agreement test. */
typedef struct {
  const char *group, *key;
  const char *type;          /* int, double, bool, string, enum, list */
  const char *unit;          /* "" if dimensionless */
  const char *default_text;  /* "required", "optional", or the default value */
  const char *range;         /* sane values: "1..65536", "gelu|swiglu", "" */
  const char *meaning;
  const char *lands;         /* the struct field it fills */
} SimScenarioKeyInfo;

typedef struct SimScenario SimScenario;

SimScenario *sim_scenario_new (void);
void sim_scenario_free (SimScenario *sc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimScenario, sim_scenario_free)

/* Adds one file (with its includes) as the next layer. A path that exists on disk is read from
 * disk; otherwise it is looked up among the embedded scenarios (with or without a leading
 * `scenarios/`). */
gboolean sim_scenario_add_file (SimScenario *sc, const char *path, GError **error);
/* Adds `group.key=value` as the next layer. */
gboolean sim_scenario_add_set (SimScenario *sc, const char *assignment, GError **error);
/* Checks every key, applies defaults, converts to SI, derives and validates. Call once after
 * the layers; the accessors below are valid after it returns TRUE. */
gboolean sim_scenario_resolve (SimScenario *sc, GError **error);

/* Convenience: files (NULL or empty: the embedded default), then sets, then resolve. */
SimScenario *sim_scenario_load (const char *const *files, const char *const *sets, GError **error);

const ModelShape *sim_scenario_shape (const SimScenario *sc);
const ModelPlan *sim_scenario_plan (const SimScenario *sc);
const SimGpuSpec *sim_scenario_gpu (const SimScenario *sc);
const SimClusterSpec *sim_scenario_cluster (const SimScenario *sc);
const SimFabricSpec *sim_scenario_fabric (const SimScenario *sc);
const SimScenarioRun *sim_scenario_run (const SimScenario *sc);
/* Added by the collective module: the collective constants ([hardware] nvlink_eff, nvls_eff,
 * coll_*_latency_us, coll_chunk_KiB; [fabric] nic_eff, net_step_latency_us, coll_channels). Fails,
 * naming the key, when one the cluster needs is not set. */
gboolean sim_scenario_collective_profile (const SimScenario *sc, SimCollectiveProfile *out, GError **error);
/* Fails, naming FILE:LINE [hardware] key, when the profile lacks an efficiency the run's kernels
 * need: gemm_eff_max_<dtype> for the matmul and the param dtype (no other dtype's figure is
 * borrowed), attn_eff, mem_eff. Runs call it before simulating (sim_runner_predict, validate). */
gboolean sim_scenario_check_compute (const SimScenario *sc, GError **error);
/* Whether the run's published measurements describe this case at `gpus` GPUs: taken at that scale,
 * and no case key changed since the file that states them (SimScenarioRun.measured_changed). */
gboolean sim_scenario_measured_applies (const SimScenario *sc, int gpus);
/* The files read, in order (includes first), for provenance lines. */
const char *const *sim_scenario_files (const SimScenario *sc);

/* Resolved keys in key-table order (every known key that has a value or default). */
guint sim_scenario_n_values (const SimScenario *sc);
const SimScenarioValue *sim_scenario_value (const SimScenario *sc, guint i);
/* The value of one key, NULL if unset and without default. */
const SimScenarioValue *sim_scenario_lookup (const SimScenario *sc, const char *group, const char *key);

/* A numeric key's resolved value in SI units (the struct's unit: FLOP/s, bytes/s, bytes; `_us` keys
 * in ns), for modules whose structs the loader does not fill. FALSE if the key is unset and has no
 * default, or is not numeric. */
gboolean sim_scenario_get_number (const SimScenario *sc, const char *group, const char *key, double *out);

/* The key table. */
guint sim_scenario_n_keys (void);
const SimScenarioKeyInfo *sim_scenario_key (guint i);
/* Writes the key table as the markdown tables of scenarios/README.md (one per group). */
void sim_scenario_write_key_table (FILE *out);
