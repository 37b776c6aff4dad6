/* The trainer's transformer on one GPU: bf16 activations and weights for the matmuls (cuBLASLt,
 * fp32 accumulate), fp32 master weights and gradients, fused kernels for norms, activations,
 * RoPE, causal softmax and cross-entropy. The equations are those of ref.c.
 *
 * Attention, by default, is two cuBLASLt batched GEMMs per (sequence, kv head) group around a fused
 * causal softmax, the probabilities kept in bf16 for backward; it computes the full T×T score matrix,
 * so about 2× the causal FLOPs. The alternative is a flash-style kernel (online softmax over key
 * tiles, O(T) memory, CUDA cores). cuDNN is not used (configure does not look for it).
 * CUDA + cuBLASLt only (no GLib, no NCCL: data-parallel communication lives in train.cu). */
#pragma once
#include <cuda_runtime.h>
#include <stddef.h>
#include "calib/trainer/layout.h"

typedef struct TrainerGpt TrainerGpt;

/* Called during backward each time gradients become final: [ready_from, total) of the flat
 * gradient vector will not change any more once the work queued so far on STREAM completes. */
typedef void (*TrainerGradsReady) (void *user, size_t ready_from, cudaStream_t stream);

/* BATCH sequences of shape->seq_len per micro-batch; RECOMPUTE 1 keeps only each layer's input and
 * recomputes the layer in backward (full recompute); FLASH 1 selects the flash-style attention kernels
 * instead of the GEMM attention. Returns NULL with ERR set on failure. */
TrainerGpt *trainer_gpt_new (const TrainerShape *shape, int batch, int recompute, int flash, cudaStream_t stream,
                             char *err, size_t err_len);
void trainer_gpt_free (TrainerGpt *gpt);
const TrainerLayout *trainer_gpt_layout (const TrainerGpt *gpt);
/* Device buffers of layout->total elements. */
float *trainer_gpt_master (TrainerGpt *gpt);   /* fp32 master weights */
float *trainer_gpt_grads (TrainerGpt *gpt);    /* fp32 gradients, accumulated by backward */
void *trainer_gpt_params_bf16 (TrainerGpt *gpt); /* __nv_bfloat16 copy used by the matmuls */
/* Device bytes held for activations and scratch (weights, grads, optimizer state excluded). */
size_t trainer_gpt_activation_bytes (const TrainerGpt *gpt);
/* bf16 copy ← fp32 master (after loading or initialising the master). */
void trainer_gpt_sync_bf16 (TrainerGpt *gpt);
/* Forward and loss for device tokens/targets [batch × seq_len]; adds Σ loss over positions to the
 * device scalar *loss_sum; prepares d(loss)/d(logits) scaled by GRAD_SCALE (1 / positions averaged). */
void trainer_gpt_forward (TrainerGpt *gpt, const int *tokens, const int *targets, float *loss_sum, float grad_scale);
/* Backward of the last forward: grads += d(loss)/d(params). READY (may be NULL) is told as gradients
 * become final. */
void trainer_gpt_backward (TrainerGpt *gpt, TrainerGradsReady ready, void *user);
/* Copies the last forward's logits [batch × seq_len, vocab_padded] to host floats (tests). */
void trainer_gpt_logits (TrainerGpt *gpt, float *host);

/* Σ g² over grads[0, n) added to the device scalar *sum (fp32). */
void trainer_grad_sumsq (const float *grads, size_t n, float *sum, cudaStream_t stream);
/* AdamW over [0, n) of the given arrays, gradients scaled by min(1, clip / sqrt(*norm_sq)) (clip 0:
 * off); decay[i] says whether weight decay applies; writes the bf16 copy too. STEP counts from 1. */
void trainer_adamw (float *master, void *bf16, const float *grads, float *m, float *v, const unsigned char *decay,
                    size_t n, const float *norm_sq, float clip, float lr, float beta1, float beta2, float eps,
                    float weight_decay, int step, cudaStream_t stream);
