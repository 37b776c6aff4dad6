/* Plain-C, double-precision reference of the trainer's model: forward, loss and backward for a
 * batch, written as directly as possible (loops, no tiling, attention probabilities kept whole),
 * so it can be checked by finite differences and used as the oracle for the CUDA kernels.
 * Same equations as train.cu: see the comments of ref.c. Meant for tiny models only. */
#pragma once
#include "calib/trainer/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TrainerRef TrainerRef;

/* A reference for BATCH sequences of shape->seq_len tokens. */
TrainerRef *trainer_ref_new (const TrainerShape *shape, int batch);
void trainer_ref_free (TrainerRef *ref);
const TrainerLayout *trainer_ref_layout (const TrainerRef *ref);
/* Mean cross-entropy over batch × seq_len positions; keeps what backward needs. */
double trainer_ref_forward (TrainerRef *ref, const double *params, const int *tokens, const int *targets);
/* GRADS (layout->total) = d(mean loss)/d(params) of the last forward. */
void trainer_ref_backward (TrainerRef *ref, const double *params, double *grads);
/* The logits [batch × seq_len, vocab_padded] of the last forward (for kernel checks). */
const double *trainer_ref_logits (const TrainerRef *ref);

#ifdef __cplusplus
}
#endif
