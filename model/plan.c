/* Parallelism plan: validity rules, micro-batch count, rank mapping and the pipeline split.
 *
 * Rules follow Megatron-LM/Megatron-Core's argument checks (megatron/training/arguments.py,
 * core/parallel_state.py, core/transformer/transformer_config.py) unless stated:
 *   gpus = tp*cp*dp*pp;  heads % tp = 0 and kv_heads % tp = 0 (Megatron-Core divides the query
 *   groups over TP and never replicates KV heads in training);  layers % (pp*vpp) = 0, or
 *   (layers + 2) % (pp*vpp) = 0 with embedding and loss counted as pipeline layers (MLPerf's
 *   ASYM_PP_EMBED/LOSS);  global_batch % (dp*micro_batch) = 0;  interleaving needs pp > 1, vpp > 1
 *   and microbatches % pp = 0;  sp needs tp > 1;  MoE: experts % ep = 0, (tp*cp*dp) % (etp*ep) = 0,
 *   sp when tp > 1;  cp > 1: seq_len % (2*cp) = 0 (load-balanced causal ring attention
 *   splits each sequence into 2*cp chunks);  sp: (seq_len/cp) % tp = 0;  zero in 0..3;  fsdp needs
 *   zero >= 2;  FP8 GEMM dims multiples of 16 and FP4 of 32 (Transformer Engine's alignment
 *   checks for FP8 / NVFP4 GEMMs);  the framework's own limits (model/framework.c).
 * Rank mapping reproduces Megatron-Core's RankGenerator (order innermost first). */
#include <string.h>
#include "model/plan.h"
#include "model/framework.h"
#include "model/schedule.h"

G_DEFINE_QUARK (model-error-quark, model_error)

static const char *const dim_names[MODEL_DIM_COUNT] = { "tp", "cp", "ep", "dp", "pp" };
static const ModelDim default_order[MODEL_DIM_COUNT] = { MODEL_DIM_TP, MODEL_DIM_CP, MODEL_DIM_EP,
                                                         MODEL_DIM_DP, MODEL_DIM_PP };

const char *
model_dim_name (ModelDim d)
{
  g_return_val_if_fail ((unsigned) d < MODEL_DIM_COUNT, "invalid");
  return dim_names[d];
}

void
model_plan_init (ModelPlan *plan)
{
  g_return_if_fail (plan != NULL);
  memset (plan, 0, sizeof *plan);
  plan->gpus = plan->tp = plan->pp = plan->vpp = plan->cp = plan->dp = plan->ep = 1;
  plan->micro_batch = plan->global_batch = 1;
  plan->schedule = MODEL_SCHED_1F1B;
  plan->recompute = MODEL_RECOMPUTE_NONE;
  plan->matmul_dtype = MODEL_DTYPE_BF16;
  plan->param_dtype = MODEL_DTYPE_BF16;
  plan->grad_dtype = MODEL_DTYPE_FP32;
  plan->dp_bucket_mb = 40; /* Megatron DDP default bucket size */
  plan->fp8_reduce_amax = TRUE; /* TE DelayedScaling's reduce_amax default */
  plan->pp_scatter_gather = TRUE; /* Megatron's scatter_gather_tensors_in_pipeline default */
  memcpy (plan->order, default_order, sizeof default_order);
}

int
model_plan_microbatches (const ModelPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  int per = plan->dp * plan->micro_batch;
  return per > 0 ? plan->global_batch / per : 0;
}

gboolean
model_plan_parse_order (const char *s, ModelDim order[MODEL_DIM_COUNT], GError **error)
{
  g_return_val_if_fail (order != NULL, FALSE);
  gboolean seen[MODEL_DIM_COUNT] = { FALSE };
  ModelDim out[MODEL_DIM_COUNT];
  int n = 0;
  g_auto (GStrv) parts = g_strsplit (s ? s : "", ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      char *name = g_strstrip (parts[i]);
      if (*name == '\0' && parts[1] == NULL)
        break; /* empty string: all defaults */
      int d = -1;
      for (int j = 0; j < MODEL_DIM_COUNT; j++)
        if (g_ascii_strcasecmp (name, dim_names[j]) == 0)
          d = j;
      if (d < 0)
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "[parallel] order: unknown dimension '%s' in '%s'; use a comma-separated "
                       "list of tp, cp, ep, dp, pp (innermost first)",
                       name, s);
          return FALSE;
        }
      if (seen[d])
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "[parallel] order: dimension '%s' appears twice in '%s'; name each once",
                       name, s);
          return FALSE;
        }
      seen[d] = TRUE;
      out[n++] = (ModelDim) d;
    }
  for (int j = 0; j < MODEL_DIM_COUNT; j++)
    if (!seen[default_order[j]])
      out[n++] = default_order[j];
  memcpy (order, out, sizeof out);
  return TRUE;
}

int
model_plan_expert_tp (const ModelPlan *plan)
{
  return plan->etp > 0 ? plan->etp : plan->tp;
}

int
model_plan_expert_dp (const ModelPlan *plan)
{
  int denom = model_plan_expert_tp (plan) * plan->ep;
  return denom > 0 ? plan->tp * plan->cp * plan->dp / denom : 0;
}

double
model_plan_master_bytes (const ModelPlan *plan)
{
  if (plan->param_dtype == MODEL_DTYPE_FP32 || plan->master_weights == MODEL_MASTER_NONE)
    return 0.0;
  return plan->master_weights == MODEL_MASTER_REMAINDER ? 2.0 : 4.0;
}

int
model_plan_dim_size (const ModelPlan *plan, ModelDim dim)
{
  g_return_val_if_fail (plan != NULL && (unsigned) dim < MODEL_DIM_COUNT, 0);
  switch (dim)
    {
    case MODEL_DIM_TP: return plan->tp;
    case MODEL_DIM_CP: return plan->cp;
    case MODEL_DIM_EP: return plan->ep;
    case MODEL_DIM_DP: return plan->dp;
    case MODEL_DIM_PP: return plan->pp;
    case MODEL_DIM_COUNT: break;
    }
  return 0;
}

static void
view_sizes (const ModelPlan *plan, gboolean expert, int sizes[MODEL_DIM_COUNT])
{
  sizes[MODEL_DIM_PP] = plan->pp;
  if (expert)
    {
      sizes[MODEL_DIM_TP] = model_plan_expert_tp (plan);
      sizes[MODEL_DIM_CP] = 1;
      sizes[MODEL_DIM_EP] = plan->ep;
      sizes[MODEL_DIM_DP] = model_plan_expert_dp (plan);
    }
  else
    {
      sizes[MODEL_DIM_TP] = plan->tp;
      sizes[MODEL_DIM_CP] = plan->cp;
      sizes[MODEL_DIM_EP] = 1;
      sizes[MODEL_DIM_DP] = plan->dp;
    }
}

static void
decompose (const ModelPlan *plan, const int sizes[MODEL_DIM_COUNT], int rank,
           int coords[MODEL_DIM_COUNT])
{
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    {
      ModelDim d = plan->order[i];
      coords[d] = rank % sizes[d];
      rank /= sizes[d];
    }
}

static int
compose (const ModelPlan *plan, const int sizes[MODEL_DIM_COUNT], const int coords[MODEL_DIM_COUNT])
{
  int rank = 0;
  for (int i = MODEL_DIM_COUNT - 1; i >= 0; i--)
    {
      ModelDim d = plan->order[i];
      rank = rank * sizes[d] + coords[d];
    }
  return rank;
}

void
model_plan_rank_coords (const ModelPlan *plan, int rank, int coords[MODEL_DIM_COUNT])
{
  g_return_if_fail (plan != NULL && coords != NULL && rank >= 0 && rank < plan->gpus);
  int sizes[MODEL_DIM_COUNT], ec[MODEL_DIM_COUNT];
  view_sizes (plan, FALSE, sizes);
  decompose (plan, sizes, rank, coords);
  view_sizes (plan, TRUE, sizes);
  decompose (plan, sizes, rank, ec);
  coords[MODEL_DIM_EP] = ec[MODEL_DIM_EP];
}

int
model_plan_rank_of (const ModelPlan *plan, const int coords[MODEL_DIM_COUNT])
{
  g_return_val_if_fail (plan != NULL && coords != NULL, -1);
  int sizes[MODEL_DIM_COUNT], c[MODEL_DIM_COUNT];
  view_sizes (plan, FALSE, sizes);
  memcpy (c, coords, sizeof c);
  c[MODEL_DIM_EP] = 0;
  return compose (plan, sizes, c);
}

int
model_plan_group_ranks (const ModelPlan *plan, int rank, guint dim_mask, gboolean expert, int *ranks)
{
  g_return_val_if_fail (plan != NULL && ranks != NULL && rank >= 0 && rank < plan->gpus, 0);
  int sizes[MODEL_DIM_COUNT], base[MODEL_DIM_COUNT];
  view_sizes (plan, expert, sizes);
  decompose (plan, sizes, rank, base);
  /* Odometer over the masked dims, innermost (in `order`) fastest. */
  int n = 1;
  for (int d = 0; d < MODEL_DIM_COUNT; d++)
    if (dim_mask & (1u << d))
      n *= sizes[d];
  int c[MODEL_DIM_COUNT];
  memcpy (c, base, sizeof c);
  for (int d = 0; d < MODEL_DIM_COUNT; d++)
    if (dim_mask & (1u << d))
      c[d] = 0;
  for (int k = 0; k < n; k++)
    {
      ranks[k] = compose (plan, sizes, c);
      for (int i = 0; i < MODEL_DIM_COUNT; i++)
        {
          ModelDim d = plan->order[i];
          if (!(dim_mask & (1u << d)))
            continue;
          if (++c[d] < sizes[d])
            break;
          c[d] = 0;
        }
    }
  return n;
}

int
model_plan_group_partition (const ModelPlan *plan, guint dim_mask, gboolean expert, int *group_of, int *members)
{
  g_return_val_if_fail (plan != NULL && group_of != NULL && members != NULL, 0);
  int sizes[MODEL_DIM_COUNT], stride[MODEL_DIM_COUNT], mstride[MODEL_DIM_COUNT], c[MODEL_DIM_COUNT] = { 0 };
  view_sizes (plan, expert, sizes);
  int s = 1, ms = 1;
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    {
      ModelDim d = plan->order[i];
      stride[d] = s;
      s *= sizes[d];
      mstride[d] = dim_mask & (1u << d) ? ms : 0;
      ms *= dim_mask & (1u << d) ? sizes[d] : 1;
    }
  /* A group's first member (its masked coordinates 0) is its smallest rank, so groups are numbered
   * as ranks ascend, and a member's place is its masked coordinates in odometer order
   * (model_plan_group_ranks). group_of[] of a group's first member holds its number meanwhile. */
  int n_groups = 0;
  for (int rank = 0; rank < s; rank++)
    {
      int lead = rank, sub = 0;
      for (int d = 0; d < MODEL_DIM_COUNT; d++)
        {
          lead -= mstride[d] ? c[d] * stride[d] : 0;
          sub += c[d] * mstride[d];
        }
      int g = lead == rank ? n_groups++ : group_of[lead];
      group_of[rank] = g;
      members[(gsize) g * ms + sub] = rank;
      for (int i = 0; i < MODEL_DIM_COUNT; i++)
        {
          ModelDim d = plan->order[i];
          if (++c[d] < sizes[d])
            break;
          c[d] = 0;
        }
    }
  return n_groups;
}

int
model_plan_group (const ModelPlan *plan, int rank, ModelDim dim, int *ranks)
{
  return model_plan_group_ranks (plan, rank, 1u << dim, dim == MODEL_DIM_EP, ranks);
}

/* ---- pipeline split ---- */

static gboolean
invalid (GError **error, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* Transformer layers of pipeline rank p over all its chunks under an uneven first or last stage
 * (Megatron-Core core_v0.15.0 transformer_block.py get_num_layers_to_build: the ranks without a
 * stated count split what is left evenly). */
static int
uneven_rank_layers (const ModelPlan *plan, const ModelShape *shape, int p)
{
  if (p == 0 && plan->pp_first_layers > 0)
    return plan->pp_first_layers;
  if (p == plan->pp - 1 && plan->pp_last_layers > 0)
    return plan->pp_last_layers;
  int left = plan->pp - (plan->pp_first_layers > 0) - (plan->pp_last_layers > 0);
  return left > 0 ? (shape->layers - plan->pp_first_layers - plan->pp_last_layers) / left : 0;
}

/* Transformer layers in virtual stage v (0 .. stages-1). */
static int
vstage_layers (const ModelPlan *plan, const ModelShape *shape, int v)
{
  int stages = model_schedule_positions (plan->schedule, plan->pp, plan->vpp);
  if (plan->pp_layout)
    return v < plan->pp_layout[0] ? plan->pp_layout[1 + v] : 0;
  if (plan->pp_first_layers > 0 || plan->pp_last_layers > 0)
    {
      /* DualPipe's positions are the pipeline ranks' model parts; otherwise v = chunk·pp + rank
       * and a rank's layers split evenly over its chunks. */
      if (plan->schedule == MODEL_SCHED_DUALPIPE)
        return uneven_rank_layers (plan, shape, v);
      return uneven_rank_layers (plan, shape, v % plan->pp) / plan->vpp;
    }
  if (!plan->pp_embed_loss_layers)
    return shape->layers / stages;
  /* The embedding, the loss and each MTP module count as one layer (Megatron-Core's
   * account_for_embedding/loss_in_pipeline_split; its pipeline layouts place MTP on the last
   * stage as a layer, e.g. DeepSeek-V3's 61 + 3 = 64 over 16 stages). */
  int per = (shape->layers + 2 + shape->mtp_depth) / stages;
  return per - (v == 0) - (v == stages - 1) * (1 + shape->mtp_depth);
}

/* The interned layouts: per-stage counts that outlive every plan pointing at them. */
static GMutex layout_lock;
static GHashTable *layouts; /* GBytes of the counts -> the same counts */

static const int *
layout_intern (const int *counts, int n)
{
  g_autoptr (GBytes) key = g_bytes_new (counts, sizeof (int) * (gsize) n);
  g_mutex_lock (&layout_lock);
  if (layouts == NULL)
    layouts = g_hash_table_new (g_bytes_hash, g_bytes_equal);
  const int *found = g_hash_table_lookup (layouts, key);
  if (found == NULL)
    {
      GBytes *kept = g_bytes_ref (key);
      found = g_bytes_get_data (kept, NULL);
      g_hash_table_insert (layouts, kept, (gpointer) found);
    }
  g_mutex_unlock (&layout_lock);
  return found;
}

/* torchtitan's split of layers that its stages do not divide (@9dec370 torchtitan/parallelisms/
 * pipelining_utils.py generate_split_points, when no pipeline_parallel_split_points are given):
 * the first stage num_layers // stages, each middle one a layer more while the remainder lasts,
 * the last stage what is left; the embedding and the head count for nothing. */
static const int *
torchtitan_layout (int layers, int stages)
{
  g_autofree int *counts = g_new0 (int, stages + 1);
  int base = layers / stages, extra = layers % stages, used = 0;
  counts[0] = stages;
  for (int v = 0; v < stages - 1; v++)
    {
      counts[1 + v] = base + (v > 0 && extra > 0);
      extra -= v > 0 && extra > 0;
      used += counts[1 + v];
    }
  counts[stages] = layers - used;
  return layout_intern (counts, stages + 1);
}

gboolean
model_plan_fit_pipeline_split (ModelPlan *plan, const ModelShape *shape)
{
  g_return_val_if_fail (plan != NULL && shape != NULL, FALSE);
  int pp = plan->pp, vpp = MAX (plan->vpp, 1), stages = model_schedule_positions (plan->schedule, pp, vpp);
  int layers = shape->layers, counted = layers + 2 + shape->mtp_depth;
  gboolean embed_fits = stages >= 2 && counted % stages == 0 && counted / stages >= 2 + shape->mtp_depth;
  if (pp < 2 || plan->pp_layout || plan->pp_first_layers > 0 || plan->pp_last_layers > 0
      || (plan->pp_embed_loss_layers && embed_fits))
    return TRUE;
  plan->pp_embed_loss_layers = FALSE;
  if (plan->framework == MODEL_FW_FSDP2 && plan->schedule != MODEL_SCHED_DUALPIPE)
    {
      if (layers % stages != 0 && layers >= stages)
        plan->pp_layout = torchtitan_layout (layers, stages);
      return layers >= stages;
    }
  if (layers % stages == 0)
    return TRUE;
  if (embed_fits)
    return plan->pp_embed_loss_layers = TRUE;
  if (plan->schedule == MODEL_SCHED_DUALPIPE)
    return FALSE;
  int m = vpp * ((layers + stages - 1) / stages);
  for (; pp > 2 && m > vpp && layers - (pp - 2) * m < 2 * vpp; m -= vpp)
    ;
  int rest = layers - (pp - 2) * m;
  if (rest < 2 * vpp || rest % vpp != 0)
    return FALSE;
  plan->pp_last_layers = vpp * (rest / vpp / 2);
  plan->pp_first_layers = rest - plan->pp_last_layers;
  return TRUE;
}

/* Megatron-Core's unrolling (parse_str_to_list): commas out, then each "(X)*n" and each "x*n" as
 * n copies, one pass each. Blanks go too (Megatron-Core's would fail on them as unknown layers). */
#define PP_LAYOUT_MAX_CHARS (1 << 20)

static gboolean
layout_repeat (GString *out, const char *what, gsize len, const char *count, const char **end, GError **error)
{
  char *stop = NULL;
  guint64 n = g_ascii_strtoull (count, &stop, 10);
  if (stop == count)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "'*' must be followed by a count");
      return FALSE;
    }
  if (n > PP_LAYOUT_MAX_CHARS || out->len + n * len > PP_LAYOUT_MAX_CHARS)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "repeat count %" G_GUINT64_FORMAT " unrolls to more than %d characters", n, PP_LAYOUT_MAX_CHARS);
      return FALSE;
    }
  for (guint64 i = 0; i < n; i++)
    g_string_append_len (out, what, (gssize) len);
  *end = stop;
  return TRUE;
}

static char *
layout_unroll (const char *text, GError **error)
{
  g_autoptr (GString) a = g_string_new (NULL);
  for (const char *t = text; *t; t++)
    if (*t != ',' && !g_ascii_isspace (*t))
      g_string_append_c (a, *t);
  /* (X)*n: X holds no parenthesis (Megatron-Core's pattern takes none but the closing one). */
  g_autoptr (GString) b = g_string_new (NULL);
  for (const char *t = a->str; *t;)
    {
      if (*t == ')')
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "')' without its '('");
          return NULL;
        }
      if (*t != '(')
        {
          g_string_append_c (b, *t++);
          continue;
        }
      const char *close = strpbrk (t + 1, "()");
      if (close == NULL || *close == '(')
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "'(' without its ')' (groups do not nest)");
          return NULL;
        }
      if (close == t + 1 || close[1] != '*')
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "a group must be '(…)*n' with something inside");
          return NULL;
        }
      if (!layout_repeat (b, t + 1, (gsize) (close - t - 1), close + 2, &t, error))
        return NULL;
    }
  g_autoptr (GString) c = g_string_new (NULL);
  for (const char *t = b->str; *t;)
    {
      if (t[1] == '*')
        {
          if (!layout_repeat (c, t, 1, t + 2, &t, error))
            return NULL;
        }
      else if (*t == '*')
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "'*' must follow a layer or a group");
          return NULL;
        }
      else
        g_string_append_c (c, *t++);
    }
  return g_string_free (g_steal_pointer (&c), FALSE);
}

gboolean
model_plan_parse_pp_layout (const char *text, int pp, int layers, int mtp_depth, const int **layout, int *vpp,
                            GError **error)
{
  g_return_val_if_fail (text != NULL && layout != NULL && vpp != NULL, FALSE);
  g_autofree char *flat = layout_unroll (text, error);
  if (flat == NULL)
    return FALSE;
  g_auto (GStrv) stages = g_strsplit (flat, "|", -1);
  int n = (int) g_strv_length (stages);
  if (pp < 1 || n % pp != 0)
    return invalid (error, "%d stages, not a multiple of pp = %d (the stages are pp x vpp, in "
                    "virtual-stage order)", n, pp);
  g_autofree int *counts = g_new0 (int, n + 1);
  counts[0] = n;
  int e = 0, l = 0, t = 0, m = 0;
  for (int v = 0; v < n; v++)
    for (const char *ch = stages[v]; *ch; ch++)
      switch (*ch)
        {
        case 'E':
          if (v != 0 || ch != stages[0] || e++)
            return invalid (error, "the embedding (E) must open stage 0, once (stage %d): trainsim runs it on the "
                            "first virtual stage", v);
          break;
        case 'L':
          if (v != n - 1 || ch[1] != '\0' || l++)
            return invalid (error, "the loss (L) must close the last stage, %d, once (stage %d): trainsim runs it "
                            "on the last virtual stage", n - 1, v);
          break;
        case 't':
          if (m > 0)
            return invalid (error, "a transformer layer (t) after an MTP layer (m), stage %d: MTP comes last", v);
          counts[1 + v]++;
          t++;
          break;
        case 'm':
          if (v != n - 1)
            return invalid (error, "an MTP layer (m) in stage %d: trainsim runs the MTP modules in the last "
                            "stage, with the loss; Megatron-Core's standalone MTP stage is not modelled", v);
          m++;
          break;
        default:
          return invalid (error, "'%c' in stage %d is not a layer: E (embedding), t (transformer), "
                          "m (MTP), L (loss)", *ch, v);
        }
  if (e != 1 || l != 1)
    return invalid (error, "the layout needs the embedding (E) first and the loss (L) last");
  if (t != layers)
    return invalid (error, "%d transformer layers (t) for a model of %d", t, layers);
  if (m != mtp_depth)
    return invalid (error, "%d MTP layers (m) for a model of mtp_depth %d", m, mtp_depth);
  *layout = layout_intern (counts, n + 1);
  *vpp = n / pp;
  return TRUE;
}

gboolean
model_plan_fit_microbatch_group (ModelPlan *plan)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  int m = model_plan_microbatches (plan);
  if (plan->schedule != MODEL_SCHED_INTERLEAVED || plan->vpp < 2 || plan->mb_group > 0 || m % plan->pp == 0)
    return TRUE;
  for (int g = plan->pp; g <= m; g++)
    if (m % g == 0 || m % g >= plan->pp)
      {
        plan->mb_group = g;
        return TRUE;
      }
  return FALSE;
}

int
model_plan_chunk_layers (const ModelPlan *plan, const ModelShape *shape, int pp_rank, int chunk,
                         int *first_layer)
{
  g_return_val_if_fail (plan != NULL && shape != NULL, 0);
  g_return_val_if_fail (pp_rank >= 0 && pp_rank < plan->pp && chunk >= 0 && chunk < plan->vpp, 0);
  int v = model_schedule_position (plan->schedule, plan->pp, plan->vpp, pp_rank, chunk);
  if (first_layer)
    {
      int first = 0;
      for (int i = 0; i < v; i++)
        first += vstage_layers (plan, shape, i);
      *first_layer = first;
    }
  return vstage_layers (plan, shape, v);
}

int
model_plan_rank_layers (const ModelPlan *plan, const ModelShape *shape, int pp_rank)
{
  int n = 0;
  for (int c = 0; c < plan->vpp; c++)
    n += model_plan_chunk_layers (plan, shape, pp_rank, c, NULL);
  return n;
}

gboolean
model_plan_chunk_has_embedding (const ModelPlan *plan, int pp_rank, int chunk)
{
  return model_schedule_position (plan->schedule, plan->pp, plan->vpp, pp_rank, chunk) == 0;
}

gboolean
model_plan_chunk_has_loss (const ModelPlan *plan, int pp_rank, int chunk)
{
  return model_schedule_position (plan->schedule, plan->pp, plan->vpp, pp_rank, chunk)
         == model_schedule_positions (plan->schedule, plan->pp, plan->vpp) - 1;
}

/* ---- validation ---- */

static gboolean
invalid (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, msg);
  return FALSE;
}

/* FP8/FP4 GEMM operands need every dimension a multiple of `align`. */
static gboolean
check_align (GError **error, const char *dtype, int align, const char *what, gint64 value)
{
  if (value % align == 0)
    return TRUE;
  return invalid (error,
                  "%s GEMMs need dimensions that are multiples of %d, but %s is %" G_GINT64_FORMAT
                  "; use bf16 matmuls or a parallel split that keeps %s a multiple of %d",
                  dtype, align, what, value, what, align);
}

gboolean
model_plan_validate (const ModelPlan *plan, const ModelShape *shape, GError **error)
{
  g_return_val_if_fail (plan != NULL && shape != NULL, FALSE);
  const struct { const char *key; int v; } pos[] = {
    { "gpus", plan->gpus }, { "tp", plan->tp }, { "pp", plan->pp }, { "vpp", plan->vpp },
    { "cp", plan->cp }, { "dp", plan->dp }, { "ep", plan->ep },
    { "micro_batch", plan->micro_batch }, { "global_batch", plan->global_batch },
    { "dp_bucket_mb", plan->dp_bucket_mb },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS (pos); i++)
    if (pos[i].v <= 0)
      return invalid (error, "%s must be a positive integer (got %d)", pos[i].key, pos[i].v);
  if (plan->etp < 0)
    return invalid (error, "etp must be positive, or 0 for tp (got %d)", plan->etp);
  gboolean seen[MODEL_DIM_COUNT] = { FALSE };
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    {
      if ((unsigned) plan->order[i] >= MODEL_DIM_COUNT || seen[plan->order[i]])
        return invalid (error, "order must name each of tp, cp, ep, dp, pp exactly once");
      seen[plan->order[i]] = TRUE;
    }

  gint64 prod = (gint64) plan->tp * plan->cp * plan->dp * plan->pp;
  if (prod != plan->gpus)
    return invalid (error,
                    "tp*cp*dp*pp = %d*%d*%d*%d = %" G_GINT64_FORMAT " but gpus = %d; every GPU must "
                    "belong to exactly one model shard, so set dp = %d / (tp*cp*pp) or change gpus",
                    plan->tp, plan->cp, plan->dp, plan->pp, prod, plan->gpus, plan->gpus);

  if (shape->heads % plan->tp != 0)
    return invalid (error,
                    "heads %d is not divisible by tp %d; Megatron splits attention heads evenly over "
                    "the tensor-parallel ranks, so pick tp dividing %d",
                    shape->heads, plan->tp, shape->heads);
  if (shape->kv_heads % plan->tp != 0)
    return invalid (error,
                    "kv_heads %d is not divisible by tp %d; Megatron-Core splits the key/value head "
                    "groups over tensor-parallel ranks and does not replicate them, so use "
                    "tp <= kv_heads with tp dividing %d",
                    shape->kv_heads, plan->tp, shape->kv_heads);

  /* Pipeline. */
  if (plan->vpp > 1 && plan->pp == 1)
    return invalid (error, "vpp %d needs pp > 1: virtual pipeline stages interleave model chunks "
                    "over pipeline ranks; set vpp = 1 or pp > 1", plan->vpp);
  if ((unsigned) plan->schedule > MODEL_SCHED_DUALPIPE)
    return invalid (error, "unknown pipeline schedule %d", plan->schedule);
  if (plan->schedule == MODEL_SCHED_DUALPIPE && (plan->vpp != 2 || plan->pp % 2 != 0))
    return invalid (error, "DualPipe runs two copies of an even number of pipeline stages, one "
                    "chunk of each per rank: it needs an even pp (got %d) and vpp = 2 (got %d; "
                    "leave vpp unset or at 1, and the schedule sets it)", plan->pp, plan->vpp);
  if (plan->vpp > 1 && plan->schedule != MODEL_SCHED_INTERLEAVED && plan->schedule != MODEL_SCHED_DUALPIPE)
    return invalid (error, "vpp %d needs the interleaved schedule; set schedule = interleaved or "
                    "vpp = 1", plan->vpp);
  if (plan->schedule == MODEL_SCHED_INTERLEAVED && plan->vpp < 2)
    return invalid (error, "the interleaved schedule needs vpp >= 2 model chunks per pipeline rank "
                    "(got %d); set vpp or use schedule = 1f1b", plan->vpp);
  int stages = model_schedule_positions (plan->schedule, plan->pp, plan->vpp);
  if (plan->pp_layout)
    {
      if (plan->pp_first_layers > 0 || plan->pp_last_layers > 0 || plan->pp_embed_loss_layers)
        return invalid (error, "pp_layout excludes pp_first_stage_layers, pp_last_stage_layers and "
                        "pp_embed_loss_layers (the layout places every layer); keep one");
      if (plan->schedule == MODEL_SCHED_DUALPIPE)
        return invalid (error, "pp_layout with the DualPipe schedule is not modelled");
      int sum = 0;
      for (int v = 0; v < plan->pp_layout[0]; v++)
        sum += plan->pp_layout[1 + v];
      if (plan->pp_layout[0] != stages || sum != shape->layers)
        return invalid (error, "pp_layout places %d transformer layers in %d stages; the plan has %d layers in "
                        "pp*vpp = %d stages", sum, plan->pp_layout[0], shape->layers, stages);
    }
  else if (plan->pp_first_layers < 0 || plan->pp_last_layers < 0)
    return invalid (error, "pp_first_stage_layers and pp_last_stage_layers must be >= 0 (0: even split)");
  else if (plan->pp_first_layers > 0 || plan->pp_last_layers > 0)
    {
      /* Megatron-Core's checks (transformer_block.py get_num_layers_to_build), and a layer in every
       * model chunk, which the step needs. */
      if (plan->pp_embed_loss_layers)
        return invalid (error, "pp_first_stage_layers / pp_last_stage_layers and pp_embed_loss_layers "
                        "exclude each other (Megatron-Core: no embedding or loss stage with uneven pp); "
                        "keep one");
      if (plan->pp < 2)
        return invalid (error, "pp_first_stage_layers / pp_last_stage_layers need pp >= 2 (got %d)", plan->pp);
      int left = plan->pp - (plan->pp_first_layers > 0) - (plan->pp_last_layers > 0);
      int rest = shape->layers - plan->pp_first_layers - plan->pp_last_layers;
      if (rest < 0 || (left == 0 && rest != 0) || (left > 0 && rest % left != 0))
        return invalid (error,
                        "layers %d less pp_first_stage_layers %d and pp_last_stage_layers %d leaves %d "
                        "for the other %d pipeline ranks, which must divide it evenly; change the "
                        "first/last counts or pp",
                        shape->layers, plan->pp_first_layers, plan->pp_last_layers, rest, left);
      int per = plan->schedule == MODEL_SCHED_DUALPIPE ? 1 : plan->vpp;
      for (int p = 0; p < plan->pp; p++)
        {
          int n = uneven_rank_layers (plan, shape, p);
          if (n < per || n % per != 0)
            return invalid (error,
                            "pipeline rank %d would hold %d transformer layers, not a positive multiple "
                            "of vpp = %d; change pp_first_stage_layers, pp_last_stage_layers or vpp",
                            p, n, per);
        }
    }
  else if (plan->pp_embed_loss_layers)
    {
      if (stages < 2)
        return invalid (error, "pp_embed_loss_layers needs pp*vpp >= 2 pipeline stages "
                        "(got %d)", stages);
      int counted = shape->layers + 2 + shape->mtp_depth;
      if (counted % stages != 0 || counted / stages < 2 + shape->mtp_depth)
        return invalid (error,
                        "layers + 2%s = %d (%s counted as pipeline layers) is not a "
                        "multiple of pp*vpp = %d with a transformer layer on every stage; change pp or vpp",
                        shape->mtp_depth ? " + mtp_depth" : "", counted,
                        shape->mtp_depth ? "embedding, loss and MTP modules" : "embedding and loss", stages);
    }
  else if (shape->layers % stages != 0)
    {
      gboolean asym = (shape->layers + 2 + shape->mtp_depth) % stages == 0;
      return invalid (error,
                      "layers %d is not divisible by pp*vpp = %d*%d = %d; pick pp and vpp whose "
                      "product divides %d, set pp_first_stage_layers / pp_last_stage_layers (uneven "
                      "first and last pipeline ranks)%s",
                      shape->layers, plan->pp, plan->vpp, stages, shape->layers,
                      asym ? ", or set pp_embed_loss_layers so embedding and loss count as "
                             "pipeline layers (first and last stage get one layer fewer)" : "");
    }

  /* Megatron-Core's checks on --recompute-modules (transformer_config.py). */
  if ((plan->recompute_modules & MODEL_RC_MLA_UP_PROJ) && shape->kv_lora_rank == 0)
    return invalid (error, "[parallel] recompute_modules: mla_up_proj needs multi-latent attention "
                    "(model.kv_lora_rank > 0); drop it for this model");
  if ((plan->recompute_modules & MODEL_RC_MOE_ACT) && shape->moe_experts == 0)
    return invalid (error, "[parallel] recompute_modules: moe_act needs routed experts (model.moe_experts > 0); "
                    "drop it for this model");

  /* Batch. */
  if (plan->global_batch % (plan->dp * plan->micro_batch) != 0)
    return invalid (error,
                    "global_batch %d is not divisible by dp*micro_batch = %d*%d = %d; every "
                    "data-parallel replica must run a whole number of micro-batches, so make "
                    "global_batch a multiple of %d",
                    plan->global_batch, plan->dp, plan->micro_batch,
                    plan->dp * plan->micro_batch, plan->dp * plan->micro_batch);
  int m = model_plan_microbatches (plan);
  if (plan->schedule == MODEL_SCHED_DUALPIPE && !model_schedule_check (plan->schedule, plan->pp, plan->vpp, m, error))
    return FALSE;
  if (plan->mb_group < 0)
    return invalid (error, "microbatch_group_size must be >= 0 (0: pp)");
  if (plan->schedule == MODEL_SCHED_INTERLEAVED && plan->mb_group > 0)
    {
      if (!model_schedule_check_grouped (plan->schedule, plan->pp, plan->vpp, m, plan->mb_group, error))
        return FALSE;
    }
  else if (plan->schedule == MODEL_SCHED_INTERLEAVED && m % plan->pp != 0)
    return invalid (error,
                    "%d micro-batches per step is not divisible by pp %d; Megatron's interleaved "
                    "schedule runs micro-batches in groups of pp, so make "
                    "global_batch / (dp*micro_batch) a multiple of %d, or set microbatch_group_size "
                    "(between pp and the micro-batch count, leaving 0 or at least pp in the last group)",
                    m, plan->pp, plan->pp);

  /* Sequence and context parallelism. */
  if (plan->sp && plan->tp == 1)
    return invalid (error, "sequence parallelism splits activations over the tensor-parallel group "
                    "and needs tp > 1; set sp = false or tp > 1");
  if (plan->cp > 1 && shape->seq_len % (2 * plan->cp) != 0)
    return invalid (error,
                    "seq_len %d is not divisible by 2*cp = %d; load-balanced causal ring attention "
                    "cuts each sequence into 2*cp chunks, so pick cp with %d %% (2*cp) == 0",
                    shape->seq_len, 2 * plan->cp, shape->seq_len);
  if (plan->sp && (shape->seq_len / plan->cp) % plan->tp != 0)
    return invalid (error,
                    "sequence parallelism splits the %d tokens per context-parallel rank over tp %d, "
                    "which does not divide them; pick tp dividing seq_len/cp",
                    shape->seq_len / plan->cp, plan->tp);

  /* Experts. */
  if (shape->moe_experts == 0)
    {
      if (plan->ep != 1)
        return invalid (error, "ep %d given for a dense model; expert parallelism needs "
                        "moe_experts > 0, set ep = 1", plan->ep);
    }
  else
    {
      int etp = model_plan_expert_tp (plan);
      if (shape->moe_experts % plan->ep != 0)
        return invalid (error,
                        "moe_experts %d is not divisible by ep %d; each expert-parallel rank holds "
                        "the same number of experts, so pick ep dividing %d",
                        shape->moe_experts, plan->ep, shape->moe_experts);
      if ((plan->tp * plan->cp * plan->dp) % (etp * plan->ep) != 0)
        return invalid (error,
                        "etp*ep = %d*%d does not divide tp*cp*dp = %d; Megatron-Core carves the "
                        "expert-parallel group out of the tp*cp*dp ranks of a pipeline stage, so "
                        "pick ep (and etp) dividing %d",
                        etp, plan->ep, plan->tp * plan->cp * plan->dp,
                        plan->tp * plan->cp * plan->dp);
      if (shape->moe_ffn_hidden % etp != 0)
        return invalid (error, "moe_ffn_hidden %d is not divisible by the expert tensor-parallel "
                        "size %d; pick etp dividing it", shape->moe_ffn_hidden, etp);
      if (plan->tp > 1 && !plan->sp)
        return invalid (error, "MoE with tp %d needs sequence parallelism (Megatron-Core requires "
                        "it with expert parallelism, and the MoE op model routes the SP-local "
                        "tokens); set sp = true", plan->tp);
    }
  if (plan->etp > 0 && shape->moe_experts == 0 && plan->etp != plan->tp)
    return invalid (error, "etp %d given for a dense model; leave etp at 0", plan->etp);

  /* Widths split by TP. */
  if (shape->ffn_hidden % plan->tp != 0)
    return invalid (error, "ffn_hidden %d is not divisible by tp %d; the MLP is split column-wise "
                    "over tensor-parallel ranks, so pick tp dividing it",
                    shape->ffn_hidden, plan->tp);

  /* Optimizer sharding. */
  if (plan->zero < 0 || plan->zero > 3)
    return invalid (error, "zero must be 0 (DDP), 1 (optimizer), 2 (+gradients) or 3 "
                    "(+parameters); got %d", plan->zero);
  if (plan->fsdp && plan->zero < 2)
    return invalid (error, "fsdp shards gradients and parameters, so it needs zero >= 2 "
                    "(got %d); set zero = 2 or 3, or fsdp = false", plan->zero);
  /* What the framework offers (model/framework.c). */
  if (!model_framework_validate (plan, error))
    return FALSE;

  /* Precisions. */
  if ((unsigned) plan->recompute > MODEL_RECOMPUTE_SELECTIVE_OP)
    return invalid (error, "unknown recompute mode %d", plan->recompute);
  if ((unsigned) plan->matmul_dtype >= MODEL_DTYPE_COUNT
      || (unsigned) plan->param_dtype >= MODEL_DTYPE_COUNT
      || (unsigned) plan->grad_dtype >= MODEL_DTYPE_COUNT)
    return invalid (error, "unknown dtype in matmul_dtype, param_dtype or grad_dtype");
  if (model_dtype_bytes (plan->param_dtype) < 2)
    return invalid (error, "param_dtype %s cannot hold trained weights; use bf16, fp16 or fp32 "
                    "(fp8/fp4 are matmul formats: set matmul_dtype)",
                    model_dtype_name (plan->param_dtype));
  if (model_dtype_bytes (plan->grad_dtype) < 2)
    return invalid (error, "grad_dtype %s is too narrow to accumulate gradients; use fp32 or bf16",
                    model_dtype_name (plan->grad_dtype));
  if ((unsigned) plan->moment_dtype >= MODEL_DTYPE_COUNT || model_dtype_bytes (plan->moment_dtype) < 2)
    return invalid (error, "[parallel] moment_dtype: %s is too narrow for AdamW's moments; use fp32 or bf16",
                    (unsigned) plan->moment_dtype < MODEL_DTYPE_COUNT ? model_dtype_name (plan->moment_dtype) : "?");
  if ((unsigned) plan->master_weights > MODEL_MASTER_NONE)
    return invalid (error, "[parallel] master_weights: unknown value");
  if (plan->master_weights == MODEL_MASTER_REMAINDER && plan->param_dtype != MODEL_DTYPE_BF16)
    return invalid (error, "[parallel] master_weights = remainder rebuilds fp32 from bf16 weights; param_dtype is %s",
                    model_dtype_name (plan->param_dtype));
  if (plan->matmul_dtype == MODEL_DTYPE_FP8 || plan->matmul_dtype == MODEL_DTYPE_FP4)
    {
      const char *name = model_dtype_name (plan->matmul_dtype);
      int align = plan->matmul_dtype == MODEL_DTYPE_FP8 ? 16 : 32;
      if (!check_align (error, name, align, "hidden", shape->hidden)
          || !check_align (error, name, align, "heads*head_dim/tp",
                           (gint64) shape->heads * shape->head_dim / plan->tp)
          || !check_align (error, name, align, "kv_heads*head_dim/tp",
                           (gint64) shape->kv_heads * shape->head_dim / plan->tp)
          || !check_align (error, name, align, "ffn_hidden/tp", shape->ffn_hidden / plan->tp)
          || (shape->moe_experts > 0
              && !check_align (error, name, align, "moe_ffn_hidden/etp",
                               shape->moe_ffn_hidden / model_plan_expert_tp (plan))))
        return FALSE;
      if (plan->param_dtype == MODEL_DTYPE_FP32)
        return invalid (error, "%s matmuls with fp32 parameters are not a mixed-precision recipe "
                        "any framework runs; use param_dtype = bf16", name);
    }
  if (plan->fp8_param_gather && shape->moe_experts > 0)
    return invalid (error, "fp8_param_gather is modelled for dense models only (the expert weights' "
                    "shards and gathers follow the expert data-parallel group, which it does not split out)");
  if (plan->fp8_param_gather && (plan->matmul_dtype != MODEL_DTYPE_FP8 || plan->zero < 1 || plan->zero > 2))
    return invalid (error, "fp8_param_gather needs matmul_dtype = fp8 and the distributed optimizer (zero 1 "
                    "or 2); this plan has matmul_dtype %s and zero %d", model_dtype_name (plan->matmul_dtype),
                    plan->zero);
  if (plan->fp8_attention
      && ((plan->matmul_dtype != MODEL_DTYPE_FP8 && plan->matmul_dtype != MODEL_DTYPE_FP4) || plan->unfused_attention))
    return invalid (error, "fp8_attention needs matmul_dtype fp8 or fp4 and a fused attention kernel; this plan "
                    "has matmul_dtype %s%s", model_dtype_name (plan->matmul_dtype),
                    plan->unfused_attention ? " and unfused_attention" : "");
  if (plan->attention_kernel != MODEL_ATTN_DEFAULT && (plan->unfused_attention || plan->fp8_attention))
    return invalid (error, "attention_kernel %s is a fused BF16/FP16 kernel; this plan also has %s",
                    plan->attention_kernel == MODEL_ATTN_FA2 ? "fa2" : "triton",
                    plan->unfused_attention ? "unfused_attention" : "fp8_attention");
  if (plan->gemm_gelu_fusion
      && (plan->matmul_dtype != MODEL_DTYPE_FP8 || shape->activation != MODEL_ACT_GELU || shape->moe_experts > 0))
    return invalid (error, "gemm_gelu_fusion needs matmul_dtype fp8 and a dense GELU MLP (model.activation = gelu, "
                    "no experts); this plan has matmul_dtype %s, %s, %d experts",
                    model_dtype_name (plan->matmul_dtype),
                    shape->activation == MODEL_ACT_GELU ? "a GELU MLP" : "a non-GELU activation", shape->moe_experts);
  if (plan->bf16_layers_first < 0 || plan->bf16_layers_last < 0
      || plan->bf16_layers_first + plan->bf16_layers_last > shape->layers)
    return invalid (error, "bf16_layers_first (%d) + bf16_layers_last (%d) must be between 0 and the "
                    "model's %d layers", plan->bf16_layers_first, plan->bf16_layers_last, shape->layers);
  return TRUE;
}

gboolean
model_plan_recomputes (const ModelPlan *plan, ModelRecomputeModule module)
{
  if (plan->recompute != MODEL_RECOMPUTE_SELECTIVE)
    return FALSE;
  guint m = plan->recompute_modules ? plan->recompute_modules : MODEL_RC_CORE_ATTN;
  return (m & module) != 0;
}

gboolean
model_plan_parse_recompute_modules (const char *text, guint *out, GError **error)
{
  static const struct { const char *name; ModelRecomputeModule bit; } names[] = {
    { "core_attn", MODEL_RC_CORE_ATTN }, { "layernorm", MODEL_RC_LAYERNORM },
    { "mla_up_proj", MODEL_RC_MLA_UP_PROJ }, { "moe_act", MODEL_RC_MOE_ACT },
  };
  g_auto (GStrv) words = g_strsplit_set (text, ", \t", -1);
  guint bits = 0;
  for (int i = 0; words[i]; i++)
    {
      if (*words[i] == '\0')
        continue;
      gsize j = 0;
      while (j < G_N_ELEMENTS (names) && strcmp (words[i], names[j].name) != 0)
        j++;
      if (j == G_N_ELEMENTS (names))
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "'%s' is not a module trainsim recomputes: core_attn, layernorm, mla_up_proj, moe_act", words[i]);
          return FALSE;
        }
      bits |= names[j].bit;
    }
  if (bits == 0)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                   "empty: list some of core_attn, layernorm, mla_up_proj, moe_act");
      return FALSE;
    }
  *out = bits;
  return TRUE;
}
