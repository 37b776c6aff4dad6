/* Numeric formats: bytes per element and names.
 *
 * Sizes are the storage width of one element: FP32/TF32 4 bytes (TF32 is a tensor-core input mode of
 * FP32 storage), FP16/BF16 2, FP8 (E4M3/E5M2) 1, FP4 (NVFP4 E2M1) 0.5 (two elements per byte). Block
 * scale factors of MXFP8/NVFP4 (one 8-bit scale per 32 or 16 elements) are not counted: at most 1/16
 * extra, below the accuracy of the memory model. */
#include "model/dtype.h"

static const struct {
  const char *name;
  double bytes;
} dtypes[MODEL_DTYPE_COUNT] = {
  [MODEL_DTYPE_FP32] = { "fp32", 4.0 },
  [MODEL_DTYPE_TF32] = { "tf32", 4.0 },
  [MODEL_DTYPE_FP16] = { "fp16", 2.0 },
  [MODEL_DTYPE_BF16] = { "bf16", 2.0 },
  [MODEL_DTYPE_FP8] = { "fp8", 1.0 },
  [MODEL_DTYPE_FP4] = { "fp4", 0.5 },
};

double
model_dtype_bytes (ModelDtype d)
{
  g_return_val_if_fail ((int) d >= 0 && d < MODEL_DTYPE_COUNT, 0.0);
  return dtypes[d].bytes;
}

const char *
model_dtype_name (ModelDtype d)
{
  g_return_val_if_fail ((int) d >= 0 && d < MODEL_DTYPE_COUNT, "invalid");
  return dtypes[d].name;
}

gboolean
model_dtype_parse (const char *s, ModelDtype *out)
{
  if (s == NULL)
    return FALSE;
  for (int i = 0; i < MODEL_DTYPE_COUNT; i++)
    if (g_ascii_strcasecmp (s, dtypes[i].name) == 0)
      {
        if (out)
          *out = (ModelDtype) i;
        return TRUE;
      }
  return FALSE;
}
