/* The transformer shape the validation trainer builds, read from the [model] group of a trainsim
 * model file (scenarios/models/NAME.ini), so the trainer and the simulator share one source of truth.
 *
 * Plain C (the trainer runs on bare GPU machines without GLib). The reader is deliberately strict,
 * like trainsim's scenario loader (sim/scenario/scenario.c; same keys, defaults and required keys): an unknown
 * key in [model], a malformed value or a missing required key is an error naming file, group and key.
 * The sequence length is [training] seq_len when the file has one (model files do not; the trainer
 * takes it from its command line). Other groups are skipped. */
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the printf-style message into err (err_len bytes, either may be 0) and returns -1: the
 * error convention of the trainer's plain-C readers. */
int trainer_fail (char *err, size_t err_len, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

typedef struct {
  char name[64];
  int layers;
  int hidden;         /* d_model */
  int heads;          /* query heads */
  int kv_heads;       /* == heads for MHA, fewer for GQA */
  int head_dim;       /* 0 in input: hidden / heads */
  int ffn_hidden;     /* MLP width (each of gate and up for SwiGLU) */
  int vocab;          /* tokenizer size, unpadded */
  int vocab_multiple; /* vocab is padded to a multiple of this (default 128) */
  int seq_len;        /* [training] seq_len, or set by the caller before trainer_shape_finish */
  int max_positions;  /* learned position table rows (0 in input: seq_len) */
  int swiglu;         /* activation = swiglu (else gelu, tanh approximation) */
  int rmsnorm;        /* norm = rmsnorm (else layernorm) */
  int rope;           /* position = rope (else learned) */
  int tied_embeddings;
  int bias;           /* linear and norm biases (GPT-2 style) */
  double rope_theta;  /* RoPE base: 10000 (not a scenario key; it does not change the step time) */
  int moe_experts;    /* read so MoE files are recognised; the trainer is dense only */
  const char *beyond; /* the first [model] setting outside the trainer's decoders (ALiBi, GeGLU,
                         squared ReLU, MLA, encoder, sliding window, MTP), refused by _finish */
  /* derived by trainer_shape_finish */
  int vocab_padded;
  int q_dim;          /* heads * head_dim */
  int kv_dim;         /* kv_heads * head_dim */
} TrainerShape;

/* Reads the [model] group of PATH into *shape (defaults first); then, when SEQ_LEN > 0 it overrides
 * the file's, and trainer_shape_finish runs. Returns 0 on success; on failure -1 with a message. */
int trainer_shape_load (const char *path, int seq_len, TrainerShape *shape, char *err, size_t err_len);
/* The same, from a string (NAME labels messages). */
int trainer_shape_parse (const char *text, const char *name, int seq_len, TrainerShape *shape, char *err,
                         size_t err_len);
/* Fills the defaults a model file may omit. */
void trainer_shape_defaults (TrainerShape *shape);
/* Derives head_dim, kv_heads, vocab_padded...; checks ranges and divisibility. */
int trainer_shape_finish (TrainerShape *shape, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
