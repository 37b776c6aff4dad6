/* Userbuffers TP-overlap execution of a layer's GEMMs (see tpoverlap.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "model/tpoverlap.h"
#include "model/plan.h"

static const char *const gemm_names[MODEL_UB_COUNT] = {
  "qkv_fprop", "proj_fprop", "fc1_fprop", "fc2_fprop", "qkv_dgrad",
  "qkv_wgrad", "proj_dgrad", "fc1_dgrad", "fc1_wgrad", "fc2_dgrad",
};
/* model/layer.c's op names of the same GEMMs (forward ops carry the bare linear name). */
static const char *const op_names[MODEL_UB_COUNT] = {
  "qkv", "proj", "fc1", "fc2", "qkv_dgrad", "qkv_wgrad", "proj_dgrad", "fc1_dgrad", "fc1_wgrad", "fc2_dgrad",
};

const char *
model_ub_gemm_name (ModelUbGemm g)
{
  g_return_val_if_fail (g >= 0 && g < MODEL_UB_COUNT, "?");
  return gemm_names[g];
}

int
model_ub_gemm_of_op (const char *op_name)
{
  if (op_name == NULL)
    return -1;
  for (int g = 0; g < MODEL_UB_COUNT; g++)
    if (strcmp (op_name, op_names[g]) == 0)
      return g;
  return -1;
}

static gboolean
parse_count (const char *word, const char *prefix, int lo, int hi, int *out, GError **error)
{
  const char *v = word + strlen (prefix);
  char *end = NULL;
  long n = strtol (v, &end, 10);
  if (*v == '\0' || *end != '\0' || n < lo || n > hi)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "'%s': %s needs an integer in %d..%d", word, prefix, lo, hi);
      return FALSE;
    }
  *out = (int) n;
  return TRUE;
}

gboolean
model_ub_parse (const char *text, ModelUbConfig *out, GError **error)
{
  g_auto (GStrv) words = g_strsplit_set (text, " \t", -1);
  ModelUbConfig c = { 0 };
  int splits = 0, sm = -1;
  for (int i = 0; words[i]; i++)
    {
      const char *w = words[i];
      if (*w == '\0')
        continue;
      if (c.method == MODEL_UB_DEFAULT)
        {
          if (strcmp (w, "ring_exchange") == 0)
            c.method = MODEL_UB_RING_EXCHANGE;
          else if (strcmp (w, "pipeline") == 0)
            c.method = MODEL_UB_PIPELINE;
          else if (strcmp (w, "bulk") == 0)
            c.method = MODEL_UB_BULK;
          else
            {
              g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                           "'%s' is not a method: ring_exchange, pipeline or bulk first", w);
              return FALSE;
            }
        }
      else if (g_str_has_prefix (w, "splits="))
        {
          if (!parse_count (w, "splits=", 1, 64, &splits, error))
            return FALSE;
        }
      else if (g_str_has_prefix (w, "sm="))
        {
          if (!parse_count (w, "sm=", 0, 1024, &sm, error))
            return FALSE;
        }
      else if (strcmp (w, "margin") == 0)
        c.sm_margin = 1;
      else if (strcmp (w, "aggregate") == 0)
        c.aggregate = 1;
      else
        {
          g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN,
                       "'%s' is not understood: METHOD [splits=N] [sm=N] [margin] [aggregate]", w);
          return FALSE;
        }
    }
  if (c.method == MODEL_UB_DEFAULT)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "empty: METHOD [splits=N] [sm=N] [margin] [aggregate]");
      return FALSE;
    }
  /* Ring exchange always takes tp steps (its splits are the ring); chunking and aggregation belong
   * to one method each, as in TE. */
  if (splits > 0 && c.method != MODEL_UB_PIPELINE)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "splits= applies to pipeline only (ring_exchange runs tp steps)");
      return FALSE;
    }
  if (c.aggregate && c.method != MODEL_UB_RING_EXCHANGE)
    {
      g_set_error (error, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "aggregate applies to ring_exchange only");
      return FALSE;
    }
  c.splits = (guint8) (c.method == MODEL_UB_PIPELINE ? (splits > 0 ? splits : 4) : 1);
  c.num_sm = (guint16) (sm >= 0 ? sm : c.method == MODEL_UB_RING_EXCHANGE ? 1 : 16);
  *out = c;
  return TRUE;
}

ModelUbConfig
model_ub_resolve (ModelUbConfig cfg, ModelUbGemm g, ModelUbDefaults defaults)
{
  if (cfg.method != MODEL_UB_DEFAULT)
    return cfg;
  /* get_default_config: num_sm 1 for ring_exchange else 16, num_splits tp for ring_exchange else
   * 4, aggregate off; set_sm_margin for all but ring_exchange from TE 2.0 on, for none before. */
  ModelUbConfig d = { 0 };
  switch (g)
    {
    case MODEL_UB_QKV_FPROP: case MODEL_UB_FC1_FPROP: case MODEL_UB_PROJ_DGRAD: case MODEL_UB_FC2_DGRAD:
      d.method = MODEL_UB_RING_EXCHANGE;
      d.splits = 1;
      d.num_sm = 1;
      break;
    case MODEL_UB_PROJ_FPROP: case MODEL_UB_FC2_FPROP:
      d.method = MODEL_UB_PIPELINE;
      d.splits = 4;
      d.num_sm = 16;
      d.sm_margin = defaults == MODEL_UB_DEFAULTS_TE2;
      break;
    default:
      d.method = MODEL_UB_BULK;
      d.splits = 1;
      d.num_sm = 16;
      d.sm_margin = defaults == MODEL_UB_DEFAULTS_TE2;
      break;
    }
  return d;
}

gboolean
model_ub_shares_sms (const ModelUbConfig *cfg, ModelUbGemm g, ModelUbDefaults defaults)
{
  ModelUbConfig c = model_ub_resolve (*cfg, g, defaults);
  return c.method != MODEL_UB_RING_EXCHANGE && !c.sm_margin;
}

void
model_ub_execution (const ModelUbConfig *cfg, ModelUbGemm g, ModelUbDefaults defaults, int tp, int *pieces,
                    int *withheld_sms)
{
  ModelUbConfig c = model_ub_resolve (*cfg, g, defaults);
  int n = 1;
  if (c.method == MODEL_UB_RING_EXCHANGE)
    n = c.aggregate ? MAX (tp / 2, 1) : MAX (tp, 1);
  else if (c.method == MODEL_UB_PIPELINE)
    n = MAX (c.splits, 1);
  *pieces = n;
  *withheld_sms = c.sm_margin ? c.num_sm : 0;
}
