/* Validation against published runs: the deck format (../shared/validation/DECK.md), one scenario
 * per row, one simulated step per row, and the error statistics of predicted against measured.
 *
 * Deck format: RFC 4180 CSV (CRLF or LF line ends), one header row naming the 37 required columns of
 * DECK.md and optionally `framework` and `arch`, found by name in any order; quoted fields may hold
 * commas, doubled quotes and line breaks. Every error names FILE:LINE, the column (number and name)
 * and what is wrong. Every step_time_basis of DECK.md is read (the step time is given in every row;
 * the basis says how the source's figure became it).
 *
 * Row → scenario (sim_validate_row_scenario): the hardware profile of the `gpu` token
 * (scenarios/hardware/<gpu>.ini, the same embedded profiles as the seed records), the fabric the GPU
 * type ships with (scenarios/fabrics/: A100 → HDR 200G, H100/H200/B200 → NDR 400G, GB200/GB300 →
 * NVL72 with 800G NICs) for what the row leaves out (switch radix, tiers, NIC efficiency), then the
 * row's own cluster, model, parallelism and precision as `--set` layers, then the caller's layers.
 * Architecture per family (the deck gives only the sizes):
 *   gpt:     GeLU two-matrix MLP, LayerNorm, learned positions, linear/norm biases, tied embeddings
 *            (untied where the notes say "untied"), as GPT-2/3 and Megatron's GPT;
 *   llama:   SwiGLU, RMSNorm, RoPE, no biases, untied embeddings (Llama 2/3/3.1);
 *   mixtral: llama's layer with the row's routed experts;
 *   deepseek: DeepSeek-V3 (RMSNorm, RoPE, untied): MLA with its config's ranks and head widths, one
 *            shared expert, three leading dense layers, unless the arch column says otherwise; an MTP
 *            module only where the arch column states mtp_depth;
 *   other:   a decoder of today's default kind (RMSNorm, RoPE, no biases, untied) where the arch
 *            column does not state norm and position.
 * The arch column then refines each: attention (mla with its ranks; swa:W on every layer), position
 * (alibi: no rotary), norm, mlp_act (geglu gated, squared_relu two-matrix), shared experts, leading
 * dense layers, MoE layer frequency, MTP depth, encoder (bidirectional attention; the masked-LM head
 * on 15% of the tokens) and tied embeddings; moe_node_limit sets model.moe_node_limit with DeepEP's
 * deduplicating dispatcher (parallel.moe_dispatcher deepep). The framework column
 * sets parallel.framework (model/framework.c; empty: megatron).
 * Configuration the deck has no column for:
 *   dp_overlap      = zero >= 1: distributed optimizer / ZeRO implementations overlap the gradient
 *                     reduce-scatter and parameter all-gather with compute; plain DDP (zero 0, the
 *                     2021 Megatron of Narayanan et al.) all-reduces after the backward pass;
 *   tp_comm_overlap = sequence_parallel, unless the notes say "TP comm overlap off";
 *   pp_embed_loss_layers when pp·vpp does not divide layers but divides layers + 2 (+ mtp_depth:
 *                     MLPerf Llama, DeepSeek-V3's 61 + 3 over 16); where neither divides, uneven
 *                     first and last pipeline ranks (pp_first/last_stage_layers, Megatron-Core's
 *                     --decoder-first/last-pipeline-num-layers): the other ranks hold the fewest
 *                     layers, a multiple of vpp, that fit, and the last rank (with the output
 *                     layer and loss) the lighter half of the rest (ASSUMPTION: the deck has no
 *                     column for the split);
 *   microbatch_group_size where vpp > 1 and pp does not divide the micro-batches per replica: the
 *                     smallest group Megatron-Core accepts (pp <= g <= m, m mod g = 0 or >= pp;
 *                     ASSUMPTION: the deck has no column for it);
 *   gpus_per_domain_used = the largest divisor of gpus that is ≤ nvlink_domain and a multiple of
 *                     gpus_per_node (64 of an NVL72 rack for power-of-two jobs);
 *   param_dtype = fp16 for fp16 rows, else bf16; vocab padded as Megatron does (128·tp).
 *   unfused_attention, dropout = true for the Narayanan et al. SC21 rows (2021 Megatron-LM:
 *                     no flash attention yet, attention/hidden dropout 0.1 by default; sources
 *                     in sim/calibrate/validate.c), and pp_blocking (its p2p synchronized the device);
 *                     zero3_blocking for that table's ZeRO-3 rows (DeepSpeed <= 0.3.16);
 *                     grad_dtype fp16 (--fp16 without fp32 gradient accumulation); grad_accum
 *                     autograd for PP = 1 (DDP=torch, whose all-reduce overlaps the last backward:
 *                     dp_overlap) and the ZeRO-3 rows, add for the others (DDP=local);
 *   [tp_overlap]    = tp-overlap/h100-tp4-pp8-mbs1.ini for the MLPerf v3.1 GPT-3 rows with H100,
 *                     TP4, PP8, mbs 1 (the submission's own selection rule); defaults = te1 for the
 *                     Megatron-LM README rows (Megatron-Core r0.8.0, before TE 2.0); else TE 2's;
 *   hardware.nvls   = false for Azure's MLPerf v6.0 405B row (its config: NCCL_NVLS_ENABLE=0);
 *   micro_batch     = where the notes say "micro_batch not stated" (the Megatron-LM README rows), the
 *                     fastest micro-batch that fits, simulated uncalibrated (sim_validate_deck_resolve);
 *   vpp             = layers / pp for the Megatron-LM README rows with PP > 1 whose notes call vpp = 1
 *                     a placeholder: their README overlapped pipeline communication, which
 *                     Megatron-Core r0.8 does only interleaved (one layer per virtual stage assumed).
 * Software-era settings come from the code the source ran (cited in sim/calibrate/validate.c), never from its
 * measurement: no figure of the row's measurement is read into the scenario. `trainsim validate
 * --row ID` prints a row's scenario as a `trainsim run` command. */
#pragma once
#include <stdio.h>
#include <glib.h>
#include "sim/scenario/scenario.h"
#include "sim/step/runner.h"

#define SIM_VALIDATE_ERROR (sim_validate_error_quark ())
GQuark sim_validate_error_quark (void);
typedef enum {
  SIM_VALIDATE_ERROR_IO,
  SIM_VALIDATE_ERROR_PARSE,        /* malformed CSV or a bad value: FILE:LINE: column … */
  SIM_VALIDATE_ERROR_UNSUPPORTED,  /* a row trainsim cannot model yet (listed as skipped) */
} SimValidateError;

#define SIM_VALIDATE_N_COLUMNS 37      /* required */
#define SIM_VALIDATE_N_ALL_COLUMNS 39  /* with the optional framework and arch */

/* The deck's `arch` column (DECK.md "Optional columns"): -1 / NULL where not stated. */
typedef struct {
  const char *attention;       /* mha, gqa, mla, swa */
  int swa_window;
  int q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim;
  const char *position;        /* rope, alibi, learned */
  const char *norm;            /* layernorm, rmsnorm */
  const char *mlp_act;         /* gelu, squared_relu, swiglu, geglu */
  int moe_shared_experts, moe_dense_layers, moe_layer_freq, moe_node_limit, mtp_depth;
  int encoder, tied_embeddings; /* 0/1 */
} SimValidateArch;

/* Parses `key=value;…` (empty: nothing stated) into *out (strings static). Unknown keys and bad
 * values are errors naming the key. */
gboolean sim_validate_arch_parse (const char *text, SimValidateArch *out, GError **error);

/* One deck row, typed. Strings are owned by the deck. */
typedef struct {
  int line;                      /* first line of the row in the file */
  const char *id, *source, *model, *family;
  int layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len;
  const char *activation;
  int moe_experts, moe_top_k, moe_ffn_hidden;
  int global_batch_seqs, micro_batch, gpus; /* micro_batch: what runs (sim_validate_deck_resolve) */
  int micro_batch_deck;          /* as the deck states it */
  const char *gpu;
  int gpus_per_node, nvlink_domain;
  double nic_gbps_per_gpu;       /* 0: unknown (empty) */
  int tp, pp, vpp, cp, dp, ep;
  gboolean sequence_parallel;
  int zero;
  gboolean fsdp;
  const char *recompute, *precision;
  double step_time_s;
  const char *step_time_basis, *confidence, *notes;
  const char *framework;         /* "" when not stated: megatron */
  SimValidateArch arch;
} SimValidateRow;

typedef struct SimValidateDeck SimValidateDeck;

/* Parses deck text; `name` is the file name used in messages. */
SimValidateDeck *sim_validate_deck_parse (const char *text, gsize length, const char *name, GError **error);
SimValidateDeck *sim_validate_deck_load (const char *path, GError **error);
void sim_validate_deck_free (SimValidateDeck *deck);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimValidateDeck, sim_validate_deck_free)
guint sim_validate_deck_n_rows (const SimValidateDeck *deck);
const SimValidateRow *sim_validate_deck_row (const SimValidateDeck *deck, guint i);
const char *sim_validate_deck_name (const SimValidateDeck *deck);
/* Sets the micro-batch row i runs (micro_batch_deck keeps the deck's). */
void sim_validate_deck_set_micro_batch (SimValidateDeck *deck, guint i, int micro_batch);
/* Resolves the micro-batch of every row whose notes say "micro_batch not stated" (the deck's value is
 * a placeholder): the fastest of those dividing the replica's batch whose memory fits, simulated
 * uncalibrated so that no measured step time enters the choice (sim/calibrate/validate.c). `validate`
 * and `fit` call it after loading a deck. */
void sim_validate_deck_resolve (SimValidateDeck *deck, int threads);

typedef struct {
  const char *const *layers;  /* scenario files applied after the row's profile and settings (NULL-terminated) */
  const char *const *sets;    /* group.key=value after everything (NULL-terminated) */
  int threads;                /* worker threads; 0: one per processor */
  gboolean full;              /* simulate every rank */
  gboolean progress;          /* one line per finished row on stderr */
  gboolean uncalibrated;      /* neutralize the profile's calibration layer (sim_validate_uncalibrated_sets) */
  double band_level;          /* central probability of each row's band; 0: 0.9 */
  gboolean sensitivities;     /* also SimValidateResult.sens (SimRunnerOptions.sensitivities) */
} SimValidateOptions;

/* The settings that neutralize a profile's calibration layer (the in-situ scales 1, no launch gap,
 * no band): applied after a row's settings when SimValidateOptions.uncalibrated. */
extern const char *const sim_validate_uncalibrated_sets[];
/* The GPU generation of a deck gpu token (ampere, hopper, blackwell; its calibration layer is
 * scenarios/calibration/<generation>.ini), or NULL. */
const char *sim_validate_gpu_generation (const char *gpu);
/* The row's scenario as a `trainsim run` command line (its files, then one --set per setting), or
 * NULL with the reason for a row that cannot be modelled. Owned by the caller. */
char *sim_validate_row_command (const SimValidateRow *row, GError **error);
/* The scenario of one row, resolved. Rows trainsim cannot model fail with
 * SIM_VALIDATE_ERROR_UNSUPPORTED and the reason. */
SimScenario *sim_validate_row_scenario (const SimValidateRow *row, const SimValidateOptions *options,
                                        GError **error);

typedef enum { SIM_VALIDATE_OK, SIM_VALIDATE_SKIPPED } SimValidateStatus;

typedef struct {
  SimValidateStatus status;
  char *reason;               /* skipped: why (owned) */
  double predicted_s;
  double measured_s;
  double error_pct;           /* 100 · (predicted − measured) / measured */
  double breakdown_s[SIM_BD_COUNT];
  double comm_busy_s[SIM_BD_COUNT]; /* communication streams busy per dimension, overlapped or not */
  double mfu;
  double band_lo_s, band_hi_s; /* the calibration's band (sim_runner_band); 0: uncalibrated */
  double loso_pct;            /* error of the leave-one-source-out prediction (NAN: not cross-validated) */
  double memory_gib;          /* predicted peak of the fullest stage */
  gboolean memory_over;       /* that peak exceeds the GPU's memory although the run ran */
  double wall_s;              /* time this row took to simulate */
  double sens[SIM_GPU_N_SENS]; /* with options->sensitivities: ∂predicted_s/∂ each constant of
                                * sim_gpu_op_ns_sens (s per unit) */
} SimValidateResult;

/* Simulates every row (in parallel over options->threads): results[i] for row i. Never fails: a
 * row that cannot be modelled or simulated is SKIPPED with the reason. */
void sim_validate_run (const SimValidateDeck *deck, const SimValidateOptions *options, SimValidateResult *results);
/* The same on a deck not yet resolved: each row whose micro-batch is unstated is resolved (as
 * sim_validate_deck_resolve does) by the thread that then simulates it, so that the resolution
 * runs beside the other rows instead of before them. */
void sim_validate_resolve_and_run (SimValidateDeck *deck, const SimValidateOptions *options,
                                   SimValidateResult *results);
/* One row (what sim_validate_run does per row). */
void sim_validate_run_row (const SimValidateRow *row, const SimValidateOptions *options, SimValidateResult *result);
void sim_validate_result_clear (SimValidateResult *result);

/* Error statistics over absolute percentage errors. */
typedef struct {
  guint n;
  double mape_pct;            /* mean of |error| */
  double median_abs_pct;      /* median of |error| (mean of the middle two for even n) */
  double max_abs_pct;
  int max_index;              /* index into the values of the largest |error|; -1 if n = 0 */
} SimValidateStats;

void sim_validate_stats (const double *abs_error_pct, guint n, SimValidateStats *out);

typedef enum { SIM_VALIDATE_TEXT, SIM_VALIDATE_TSV, SIM_VALIDATE_JSON } SimValidateFormat;

/* The report: per row (id, predicted, measured, error, status, main breakdown), then the statistics
 * overall, per source and per GPU type, and coverage. */
void sim_validate_write (FILE *out, const SimValidateDeck *deck, const SimValidateResult *results,
                         SimValidateFormat format, const char *argv_text);

/* Predicted against measured as a log-log scatter with the ±10% band, drawn by gnuplot with
 * plots/validate.gp (`script`) into `png`. */
gboolean sim_validate_plot (const SimValidateDeck *deck, const SimValidateResult *results, const char *script,
                            const char *png, GError **error);
