/* Parameter layout and initialisation (see layout.h). */
#include "calib/trainer/layout.h"

#include <math.h>
#include <string.h>

static const char *const names[TRAINER_TENSOR_COUNT] = {
  "wte", "wpe", "ln1_w", "ln1_b", "qkv_w", "qkv_b", "o_w", "o_b", "ln2_w", "ln2_b",
  "fc_w", "fc_b", "proj_w", "proj_b", "lnf_w", "lnf_b", "head",
};

const char *
trainer_layout_tensor_name (TrainerTensor t)
{
  return t < TRAINER_TENSOR_COUNT ? names[t] : "?";
}

static int
is_layer (TrainerTensor t)
{
  return t >= TRAINER_FIRST_LAYER_TENSOR && t <= TRAINER_LAST_LAYER_TENSOR;
}

void
trainer_layout_init (TrainerLayout *L, const TrainerShape *s)
{
  memset (L, 0, sizeof *L);
  size_t C = (size_t) s->hidden, Vp = (size_t) s->vocab_padded;
  size_t qkv = (size_t) s->q_dim + 2 * (size_t) s->kv_dim;
  int norm_bias = s->bias && !s->rmsnorm;
  L->layers = s->layers;
  L->fc_out = s->swiglu ? 2 * s->ffn_hidden : s->ffn_hidden;
  L->size[TRAINER_WTE] = Vp * C;
  L->size[TRAINER_WPE] = s->rope ? 0 : (size_t) s->max_positions * C;
  L->size[TRAINER_LN1_W] = C;
  L->size[TRAINER_LN1_B] = norm_bias ? C : 0;
  L->size[TRAINER_QKV_W] = qkv * C;
  L->size[TRAINER_QKV_B] = s->bias ? qkv : 0;
  L->size[TRAINER_O_W] = C * (size_t) s->q_dim;
  L->size[TRAINER_O_B] = s->bias ? C : 0;
  L->size[TRAINER_LN2_W] = C;
  L->size[TRAINER_LN2_B] = norm_bias ? C : 0;
  L->size[TRAINER_FC_W] = (size_t) L->fc_out * C;
  L->size[TRAINER_FC_B] = s->bias ? (size_t) L->fc_out : 0;
  L->size[TRAINER_PROJ_W] = C * (size_t) s->ffn_hidden;
  L->size[TRAINER_PROJ_B] = s->bias ? C : 0;
  L->size[TRAINER_LNF_W] = C;
  L->size[TRAINER_LNF_B] = norm_bias ? C : 0;
  L->size[TRAINER_HEAD] = s->tied_embeddings ? 0 : Vp * C;

  size_t o = 0;
  L->off[TRAINER_WTE] = o; o += L->size[TRAINER_WTE];
  L->off[TRAINER_WPE] = o; o += L->size[TRAINER_WPE];
  L->layer_start = o;
  size_t lo = 0;
  for (int t = TRAINER_FIRST_LAYER_TENSOR; t <= TRAINER_LAST_LAYER_TENSOR; t++)
    {
      L->off[t] = lo;
      lo += L->size[t];
    }
  L->layer_stride = lo;
  o += lo * (size_t) s->layers;
  for (int t = TRAINER_LNF_W; t <= TRAINER_HEAD; t++)
    {
      L->off[t] = o;
      o += L->size[t];
    }
  if (s->tied_embeddings)
    L->off[TRAINER_HEAD] = L->off[TRAINER_WTE];
  L->total = o;
}

size_t
trainer_layout_offset (const TrainerLayout *L, TrainerTensor t, int layer)
{
  if (is_layer (t))
    return L->layer_start + (size_t) layer * L->layer_stride + L->off[t];
  return L->off[t];
}

int
trainer_layout_decays (TrainerTensor t)
{
  switch (t)
    {
    case TRAINER_WTE: case TRAINER_WPE: case TRAINER_QKV_W: case TRAINER_O_W: case TRAINER_FC_W:
    case TRAINER_PROJ_W: case TRAINER_HEAD:
      return 1;
    default:
      return 0;
    }
}

TrainerTensor
trainer_layout_tensor_at (const TrainerLayout *L, size_t i)
{
  if (i < L->layer_start)
    return i < L->off[TRAINER_WPE] ? TRAINER_WTE : TRAINER_WPE;
  size_t layers_end = L->layer_start + L->layer_stride * (size_t) L->layers;
  if (i < layers_end)
    {
      size_t r = (i - L->layer_start) % L->layer_stride;
      for (int t = TRAINER_LAST_LAYER_TENSOR; t >= TRAINER_FIRST_LAYER_TENSOR; t--)
        if (L->size[t] && r >= L->off[t])
          return (TrainerTensor) t;
    }
  for (int t = TRAINER_HEAD; t >= TRAINER_LNF_W; t--)
    if (L->size[t] && i >= L->off[t])
      return (TrainerTensor) t;
  return TRAINER_LNF_W;
}

/* splitmix64: a small, well-mixed generator, so the reference and the trainer need no library. */
static uint64_t
next_u64 (uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static double
normal (uint64_t *state)
{
  /* Box-Muller; u1 in (0, 1] so the log is finite. */
  double u1 = ((double) (next_u64 (state) >> 11) + 1.0) / 9007199254740992.0;
  double u2 = (double) (next_u64 (state) >> 11) / 9007199254740992.0;
  return sqrt (-2.0 * log (u1)) * cos (6.283185307179586 * u2);
}

void
trainer_layout_init_params (const TrainerLayout *L, const TrainerShape *s, uint64_t seed, float *p)
{
  uint64_t state = seed;
  double resid_std = 0.02 / sqrt (2.0 * s->layers);
  for (size_t i = 0; i < L->total; i++)
    {
      TrainerTensor t = trainer_layout_tensor_at (L, i);
      switch (t)
        {
        case TRAINER_LN1_W: case TRAINER_LN2_W: case TRAINER_LNF_W:
          p[i] = 1.0f;
          break;
        case TRAINER_O_W: case TRAINER_PROJ_W:
          p[i] = (float) (resid_std * normal (&state));
          break;
        default:
          p[i] = trainer_layout_decays (t) ? (float) (0.02 * normal (&state)) : 0.0f;
          break;
        }
    }
}

double
trainer_layout_flops_per_token (const TrainerLayout *L, const TrainerShape *s)
{
  double per_layer = (double) (L->size[TRAINER_QKV_W] + L->size[TRAINER_O_W] + L->size[TRAINER_FC_W]
                               + L->size[TRAINER_PROJ_W]);
  double head = (double) s->vocab_padded * s->hidden;
  return 6.0 * (per_layer * s->layers + head) + 12.0 * s->layers * (double) s->seq_len * s->q_dim;
}
