/* Parallelism search; see sim/plan/search.h for the space, the two stages and the pruning rule. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sim/plan/search.h"
#include "model/flops.h"
#include "model/memory.h"

void
sim_search_options_init (SimSearchOptions *o)
{
  memset (o, 0, sizeof *o);
  o->margin = 0.25;
  o->confirm = 8;
  o->max_micro_batch = 8;
  o->max_cp = 16;
  o->max_vpp = 16;
  o->rank = 0;
  o->size = 1;
}

/* Placement orders searched (innermost first): DP inside PP (Megatron's default) or PP inside DP. */
static const ModelDim orders[][MODEL_DIM_COUNT] = {
  { MODEL_DIM_TP, MODEL_DIM_CP, MODEL_DIM_EP, MODEL_DIM_DP, MODEL_DIM_PP },
  { MODEL_DIM_TP, MODEL_DIM_CP, MODEL_DIM_EP, MODEL_DIM_PP, MODEL_DIM_DP },
};

typedef struct {
  const SimScenario *sc;
  const ModelShape *shape;
  const SimSearchOptions *o;
  SimEstimateHw hw;
  GArray *out;
  SimSearchStats *st;
  double best;              /* best estimate seen by this worker */
  guint index;
  GHashTable *layers;       /* gint64 key -> SimEstimateLayer */
} Ctx;

/* The micro-batch work of a plan, cached: it depends on tp, cp, ep, micro-batch, recompute,
 * overlap and order only (sim/plan/estimate.h). */
static const SimEstimateLayer *
layer_of (Ctx *c, const ModelPlan *p, int order_index)
{
  gint64 key = ((((((gint64) p->tp * 4096 + p->cp) * 65536 + p->ep) * 4096 + p->micro_batch) * 4 + p->recompute) * 2
                + p->tp_comm_overlap) * 8 + order_index;
  SimEstimateLayer *ly = g_hash_table_lookup (c->layers, &key);
  if (!ly)
    {
      ly = g_new (SimEstimateLayer, 1);
      sim_estimate_layer (c->shape, p, &c->hw, ly);
      gint64 *k = g_new (gint64, 1);
      *k = key;
      g_hash_table_insert (c->layers, k, ly);
    }
  return ly;
}

static void
try_plan (Ctx *c, ModelPlan *p, int order_index, gboolean *mem_known, gboolean *mem_fits, double *mem_bytes)
{
  guint idx = c->index++;
  c->st->enumerated++;
  if ((int) (idx % (guint) c->o->size) != c->o->rank)
    return;
  if (!model_plan_validate (p, c->shape, NULL))
    return;
  c->st->valid++;
  const SimEstimateLayer *ly = layer_of (c, p, order_index);
  if (!c->o->exhaustive && c->best < INFINITY
      && sim_estimate_lower_bound (c->shape, p, &c->hw, ly) > c->best * (1.0 + c->o->margin))
    {
      c->st->bound_skipped++;
      return;
    }
  if (!*mem_known)
    {
      ModelMemory mem;
      *mem_fits = model_memory_check (c->shape, p, c->hw.hbm_bytes, c->hw.memory_overhead_bytes, &mem, NULL);
      *mem_bytes = mem.total_bytes;
      *mem_known = TRUE;
    }
  if (!*mem_fits)
    {
      c->st->no_fit++;
      return;
    }
  SimSearchCandidate cand = { 0 };
  cand.plan = *p;
  cand.index = idx;
  if (!sim_estimate_step_with (c->shape, p, &c->hw, ly, FALSE, &cand.estimate, NULL))
    return;
  c->st->estimated++;
  cand.estimate.memory_bytes = *mem_bytes;
  cand.estimate.fits = TRUE;
  cand.memory_bytes = *mem_bytes;
  cand.estimate_s = cand.estimate.step_s;
  cand.confirmed_s = cand.estimate_s;
  memcpy (cand.confirmed_part_s, cand.estimate.part_s, sizeof cand.confirmed_part_s);
  if (cand.estimate_s < c->best)
    c->best = cand.estimate_s;
  if (c->o->heat)
    {
      guint i = 0;
      for (; i < c->o->heat->len; i++)
        {
          SimSearchHeat *h = &g_array_index (c->o->heat, SimSearchHeat, i);
          if (h->tp == p->tp && h->pp == p->pp)
            {
              if (cand.estimate_s < h->best_s)
                h->best_s = cand.estimate_s;
              break;
            }
        }
      if (i == c->o->heat->len)
        {
          SimSearchHeat h = { p->tp, p->pp, cand.estimate_s };
          g_array_append_val (c->o->heat, h);
        }
    }
  if (c->o->exhaustive || cand.estimate_s <= c->best * (1.0 + c->o->margin))
    g_array_append_val (c->out, cand);
}

/* Divisors of n up to `max`, ascending. */
static int
divisors (int n, int max, int *out, int cap)
{
  int k = 0;
  for (int d = 1; d <= n && d <= max && k < cap; d++)
    if (n % d == 0)
      out[k++] = d;
  return k;
}

void
sim_search_stage1 (const SimScenario *sc, const SimSearchOptions *o, GArray *out, SimSearchStats *stats)
{
  Ctx c = { 0 };
  c.sc = sc;
  c.shape = sim_scenario_shape (sc);
  c.o = o;
  c.out = out;
  c.st = stats;
  c.best = INFINITY;
  memset (stats, 0, sizeof *stats);
  sim_estimate_hw_from_scenario (sc, &c.hw);
  const ModelPlan *base = sim_scenario_plan (sc);
  const ModelShape *s = c.shape;
  c.layers = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  const int gpus = base->gpus;
  const int gbs = base->global_batch;
  int tps[64], pps[64], cps[64], eps[64], mbss[64];
  int ntp = divisors (gpus, MIN (s->heads, 64), tps, 64);
  for (int a = 0; a < ntp; a++)
    {
      int tp = tps[a];
      int npp = divisors (gpus / tp, s->layers + 2, pps, 64);
      for (int b = 0; b < npp; b++)
        {
          int pp = pps[b];
          int ncp = divisors (gpus / (tp * pp), o->max_cp, cps, 64);
          for (int cc = 0; cc < ncp; cc++)
            {
              int cp = cps[cc];
              int dp = gpus / (tp * pp * cp);
              if (gbs % dp != 0)
                continue;
              /* vpp: chunks that split the layers, evenly, with the embedding and loss as layers,
               * or with uneven first and last ranks (model_plan_fit_pipeline_split; the base
               * plan's own split is kept at its pp and vpp). 1F1B or interleaved, and DualPipe
               * (two chunks per rank) where the base plan runs it. */
              int nvpp = 0, max_v = pp > 1 ? o->max_vpp : 1;
              ModelPlan splits[64];
              gboolean dual = base->schedule == MODEL_SCHED_DUALPIPE && pp >= 2 && pp % 2 == 0;
              for (int v = 1; v <= max_v + dual && nvpp < 64; v++)
                {
                  gboolean dualpipe = v == max_v + 1;
                  ModelPlan *q = &splits[nvpp];
                  *q = *base;
                  q->pp = pp, q->vpp = dualpipe ? 2 : v;
                  q->schedule = dualpipe ? MODEL_SCHED_DUALPIPE : v > 1 ? MODEL_SCHED_INTERLEAVED : MODEL_SCHED_1F1B;
                  if (pp != base->pp || q->vpp != base->vpp || q->schedule != base->schedule)
                    {
                      q->pp_first_layers = q->pp_last_layers = 0;
                      q->pp_layout = NULL;
                    }
                  if (model_plan_fit_pipeline_split (q, s))
                    nvpp++;
                }
              int nep = s->moe_experts > 0 ? divisors (s->moe_experts, tp * cp * dp, eps, 64) : (eps[0] = 1, 1);
              int nmbs = divisors (gbs / dp, o->max_micro_batch, mbss, 64);
              for (int v = 0; v < nvpp; v++)
                for (int e = 0; e < nep; e++)
                  for (int mb = 0; mb < nmbs; mb++)
                    for (int rc = 0; rc < 3; rc++)
                      for (int z = 0; z < 6; z++)
                        {
                          if (o->keep_zero && (z < 4 ? z : z - 2) != base->zero)
                            continue;
                          if (o->keep_zero && (z >= 4) != (base->fsdp != 0))
                            continue;
                          /* zero 0, 1, 2, 3, then 2 and 3 with FSDP collectives. */
                          ModelPlan p = *base;
                          p.tp = tp, p.pp = pp, p.cp = cp, p.dp = dp, p.vpp = splits[v].vpp, p.ep = eps[e];
                          p.schedule = splits[v].schedule;
                          p.pp_embed_loss_layers = splits[v].pp_embed_loss_layers;
                          p.pp_first_layers = splits[v].pp_first_layers;
                          p.pp_last_layers = splits[v].pp_last_layers;
                          p.pp_layout = splits[v].pp_layout;
                          p.micro_batch = mbss[mb];
                          /* An interleaved count pp does not divide runs in larger micro-batch groups
                           * (the base plan's own group is kept at its sizes); where none exists the
                           * plan stays invalid and try_plan counts it so. */
                          if (p.pp != base->pp || p.vpp != base->vpp || p.dp != base->dp
                              || p.micro_batch != base->micro_batch || p.schedule != base->schedule)
                            p.mb_group = 0;
                          model_plan_fit_microbatch_group (&p);
                          p.recompute = (ModelRecompute) rc;
                          p.zero = z < 4 ? z : z - 2;
                          p.fsdp = z >= 4;
                          p.sp = tp > 1;
                          if (p.etp > tp)
                            p.etp = 0;
                          gboolean mem_known = FALSE, mem_fits = FALSE;
                          double mem_bytes = 0;
                          for (int ov = 0; ov < (tp > 1 ? 2 : 1); ov++)
                            for (gsize od = 0; od < (o->keep_order ? 1 : G_N_ELEMENTS (orders)); od++)
                              {
                                p.tp_comm_overlap = ov == 1;
                                if (o->keep_order)
                                  memcpy (p.order, base->order, sizeof p.order);
                                else
                                  memcpy (p.order, orders[od], sizeof p.order);
                                try_plan (&c, &p, (int) od, &mem_known, &mem_fits, &mem_bytes);
                              }
                        }
            }
        }
    }
  g_hash_table_unref (c.layers);
}

static int
cmp_estimate (const void *a, const void *b)
{
  const SimSearchCandidate *x = a, *y = b;
  if (x->estimate_s != y->estimate_s)
    return x->estimate_s < y->estimate_s ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

static int
cmp_confirmed (const void *a, const void *b)
{
  const SimSearchCandidate *x = a, *y = b;
  if (x->confirmed_s != y->confirmed_s)
    return x->confirmed_s < y->confirmed_s ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

void
sim_search_select (GArray *cands, const SimSearchOptions *o)
{
  g_array_sort (cands, cmp_estimate);
  if (cands->len == 0)
    return;
  double best = g_array_index (cands, SimSearchCandidate, 0).estimate_s;
  guint keep = 0;
  for (guint i = 0; i < cands->len && keep < o->confirm; i++)
    {
      SimSearchCandidate *c = &g_array_index (cands, SimSearchCandidate, i);
      if (c->estimate_s > best * (1.0 + o->margin))
        break;
      /* Plans the closed form cannot tell apart (the same estimate: usually placement orders or
       * ZeRO stages that change nothing it models) are represented by the first enumerated. */
      if (keep > 0 && g_array_index (cands, SimSearchCandidate, keep - 1).estimate_s == c->estimate_s)
        continue;
      if (keep != i)
        g_array_index (cands, SimSearchCandidate, keep) = *c;
      keep++;
    }
  g_array_set_size (cands, keep);
}

void
sim_search_rank (GArray *cands)
{
  g_array_sort (cands, cmp_confirmed);
}

/* Plans travel as the fields the search changes; the rest comes from the scenario on each rank. */
char *
sim_search_candidate_to_line (const SimSearchCandidate *c)
{
  const ModelPlan *p = &c->plan;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%u %d %d %d %d %d %d %d %d %d %d %d %d %d", c->index, p->tp, p->pp, p->vpp, p->cp,
                          p->dp, p->ep, p->micro_batch, (int) p->recompute, p->zero, p->fsdp, p->tp_comm_overlap,
                          p->sp, (int) p->schedule);
  g_string_append_printf (s, " %d %d %d %d", p->pp_embed_loss_layers, p->pp_first_layers, p->pp_last_layers,
                          p->mb_group);
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    g_string_append_printf (s, " %d", (int) p->order[i]);
  g_string_append_printf (s, " %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g", p->etp, c->estimate_s, c->confirmed_s,
                          c->param_sigma, c->memory_bytes, c->estimate.mfu, c->estimate.tokens_per_s,
                          c->estimate.model_flops);
  for (int i = 0; i < SIM_EST_COUNT; i++)
    g_string_append_printf (s, " %.17g %.17g %.17g", c->estimate.part_s[i], c->estimate.comm_s[i],
                            c->confirmed_part_s[i]);
  return g_string_free (s, FALSE);
}

gboolean
sim_search_candidate_from_line (const char *line, SimSearchCandidate *c)
{
  g_auto (GStrv) f = g_strsplit (line, " ", -1);
  guint want = 18 + MODEL_DIM_COUNT + 8 + 3 * SIM_EST_COUNT;
  if (g_strv_length (f) != want)
    return FALSE;
  ModelPlan *p = &c->plan;
  int k = 0;
  c->index = (guint) g_ascii_strtoull (f[k++], NULL, 10);
  int *ints[] = { &p->tp, &p->pp, &p->vpp, &p->cp, &p->dp, &p->ep, &p->micro_batch };
  for (gsize i = 0; i < G_N_ELEMENTS (ints); i++)
    *ints[i] = atoi (f[k++]);
  p->recompute = (ModelRecompute) atoi (f[k++]);
  p->zero = atoi (f[k++]);
  p->fsdp = atoi (f[k++]);
  p->tp_comm_overlap = atoi (f[k++]);
  p->sp = atoi (f[k++]);
  p->schedule = (ModelSchedule) atoi (f[k++]);
  p->pp_embed_loss_layers = atoi (f[k++]);
  p->pp_first_layers = atoi (f[k++]);
  p->pp_last_layers = atoi (f[k++]);
  p->mb_group = atoi (f[k++]);
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    p->order[i] = (ModelDim) atoi (f[k++]);
  p->etp = atoi (f[k++]);
  c->estimate_s = g_ascii_strtod (f[k++], NULL);
  c->confirmed_s = g_ascii_strtod (f[k++], NULL);
  c->param_sigma = g_ascii_strtod (f[k++], NULL);
  c->memory_bytes = g_ascii_strtod (f[k++], NULL);
  c->estimate.mfu = g_ascii_strtod (f[k++], NULL);
  c->estimate.tokens_per_s = g_ascii_strtod (f[k++], NULL);
  c->estimate.model_flops = g_ascii_strtod (f[k++], NULL);
  for (int i = 0; i < SIM_EST_COUNT; i++)
    {
      c->estimate.part_s[i] = g_ascii_strtod (f[k++], NULL);
      c->estimate.comm_s[i] = g_ascii_strtod (f[k++], NULL);
      c->confirmed_part_s[i] = g_ascii_strtod (f[k++], NULL);
    }
  c->estimate.step_s = c->estimate_s;
  c->estimate.memory_bytes = c->memory_bytes;
  c->estimate.fits = TRUE;
  return TRUE;
}

void
sim_search_merge_plan (ModelPlan *plan, const ModelPlan *q)
{
  /* The scenario's pipeline layout holds at its own pp, vpp and schedule only (it never travels). */
  if (q->pp != plan->pp || q->vpp != plan->vpp || q->schedule != plan->schedule)
    plan->pp_layout = NULL;
  plan->tp = q->tp, plan->pp = q->pp, plan->vpp = q->vpp, plan->cp = q->cp, plan->dp = q->dp, plan->ep = q->ep;
  plan->micro_batch = q->micro_batch, plan->recompute = q->recompute, plan->zero = q->zero, plan->fsdp = q->fsdp;
  plan->tp_comm_overlap = q->tp_comm_overlap, plan->sp = q->sp, plan->schedule = q->schedule, plan->etp = q->etp;
  plan->pp_embed_loss_layers = q->pp_embed_loss_layers;
  plan->pp_first_layers = q->pp_first_layers, plan->pp_last_layers = q->pp_last_layers;
  plan->mb_group = q->mb_group;
  memcpy (plan->order, q->order, sizeof plan->order);
}

char *
sim_search_describe_plan (const ModelPlan *p)
{
  static const char *const rc[] = { "none", "selective", "full", "selective_op" };
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "tp%d pp%d vpp%d cp%d dp%d ep%d mbs%d recompute=%s zero%d%s%s", p->tp, p->pp,
                          p->vpp, p->cp, p->dp, p->ep, p->micro_batch, rc[p->recompute], p->zero,
                          p->fsdp ? " fsdp" : "", p->tp_comm_overlap ? " tp-overlap" : "");
  if (p->schedule == MODEL_SCHED_DUALPIPE)
    g_string_append (s, " dualpipe");
  if (p->pp_layout)
    g_string_append (s, " layout");
  if (p->pp_embed_loss_layers)
    g_string_append (s, " embed-loss-layers");
  if (p->pp_first_layers > 0)
    g_string_append_printf (s, " first=%d", p->pp_first_layers);
  if (p->pp_last_layers > 0)
    g_string_append_printf (s, " last=%d", p->pp_last_layers);
  if (p->mb_group > 0)
    g_string_append_printf (s, " group=%d", p->mb_group);
  g_string_append (s, " order=");
  for (int i = 0; i < MODEL_DIM_COUNT; i++)
    g_string_append_printf (s, "%s%s", i ? "," : "", model_dim_name (p->order[i]));
  return g_string_free (s, FALSE);
}
