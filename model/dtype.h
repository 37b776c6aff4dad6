/* Numeric formats of matmuls and tensors, and their sizes. */
#pragma once
#include <glib.h>

typedef enum {
  MODEL_DTYPE_FP32,
  MODEL_DTYPE_TF32,
  MODEL_DTYPE_FP16,
  MODEL_DTYPE_BF16,
  MODEL_DTYPE_FP8,
  MODEL_DTYPE_FP4,
  MODEL_DTYPE_COUNT
} ModelDtype;

/* Bytes per element; FP4 packs two elements per byte (NVFP4 block scales are ignored: 1/16 extra). */
double model_dtype_bytes (ModelDtype d);
const char *model_dtype_name (ModelDtype d);
/* Parses "fp32", "tf32", "fp16", "bf16", "fp8", "fp4"; FALSE on anything else. */
gboolean model_dtype_parse (const char *s, ModelDtype *out);
