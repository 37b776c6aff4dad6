/* Where each parameter tensor lives in the trainer's flat parameter vector, how it is initialised,
 * and the model FLOPs per token used for MFU. Shared by the CPU reference and the GPU trainer so
 * both see byte-identical layouts and initial weights. Plain C.
 *
 * Order: [wte][wpe] [layer 0] … [layer L-1] [lnf_w][lnf_b][head]. Backward finishes the head first
 * and layer 0 last, so gradients become ready from the end of the vector towards its start: DP
 * buckets are contiguous suffixes (see train.cu). Linear weights are [out, in] row-major. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "calib/trainer/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TRAINER_WTE, TRAINER_WPE,
  TRAINER_LN1_W, TRAINER_LN1_B, TRAINER_QKV_W, TRAINER_QKV_B, TRAINER_O_W, TRAINER_O_B,
  TRAINER_LN2_W, TRAINER_LN2_B, TRAINER_FC_W, TRAINER_FC_B, TRAINER_PROJ_W, TRAINER_PROJ_B,
  TRAINER_LNF_W, TRAINER_LNF_B, TRAINER_HEAD,
  TRAINER_TENSOR_COUNT
} TrainerTensor;

#define TRAINER_FIRST_LAYER_TENSOR TRAINER_LN1_W
#define TRAINER_LAST_LAYER_TENSOR TRAINER_PROJ_B

typedef struct {
  size_t size[TRAINER_TENSOR_COUNT]; /* elements; 0 when the tensor is absent */
  size_t off[TRAINER_TENSOR_COUNT];  /* per-layer tensors: offset within layer 0 */
  size_t layer_start, layer_stride;  /* layer l's block starts at layer_start + l * layer_stride */
  size_t total;
  int fc_out;                        /* ffn_hidden, or 2 * ffn_hidden for SwiGLU (gate | up) */
  int layers;
} TrainerLayout;

void trainer_layout_init (TrainerLayout *layout, const TrainerShape *shape);
/* Offset of tensor T of layer L (L ignored for global tensors); the head is wte when tied. */
size_t trainer_layout_offset (const TrainerLayout *layout, TrainerTensor t, int layer);
const char *trainer_layout_tensor_name (TrainerTensor t);
/* Whether AdamW decays the tensor: matrices yes, norms and biases no (GPT-2/Llama practice). */
int trainer_layout_decays (TrainerTensor t);
/* Which tensor holds flat index I (for per-element masks). */
TrainerTensor trainer_layout_tensor_at (const TrainerLayout *layout, size_t i);
/* Deterministic initial weights (GPT-2 scheme: N(0, 0.02), residual outputs scaled by
 * 1/sqrt(2 layers), norm gains 1, biases 0) from SEED; identical on every rank. */
void trainer_layout_init_params (const TrainerLayout *layout, const TrainerShape *shape, uint64_t seed,
                                 float *params);
/* Model FLOPs per trained token (forward + backward): 6 × matmul weights (the LM head included,
 * embeddings lookups excluded) + 12 × layers × seq_len × heads × head_dim for attention scores
 * and values (the PaLM appendix-B convention, causal masking not discounted). */
double trainer_layout_flops_per_token (const TrainerLayout *layout, const TrainerShape *shape);

#ifdef __cplusplus
}
#endif
