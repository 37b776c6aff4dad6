/* Internals shared by the scenario key table (keys.c) and the loader (scenario.c). Not for use
 * outside sim/scenario/. */
#pragma once
#include "sim/scenario/scenario.h"

typedef enum { T_INT, T_DOUBLE, T_BOOL, T_STRING, T_ENUM, T_LIST } KeyType;
typedef enum { TGT_NONE, TGT_SHAPE, TGT_PLAN, TGT_GPU, TGT_CLUSTER, TGT_FABRIC, TGT_RUN, TGT_COLL } Target;
/* How a checked value is stored: S_NONE keys are handled in resolve() by name. */
typedef enum { S_NONE, S_INT, S_I64, S_DOUBLE, S_NS, S_BOOL, S_ENUM, S_NAME64, S_STR } Store;

typedef struct {
  const char *group, *key;
  KeyType type;
  const char *unit;      /* for the README: the unit of the file value */
  double scale;          /* file value × scale = stored SI value */
  const char *def;       /* NULL: required; "": optional, no default; else the default as written */
  double min, max;       /* sane values, in file units (ints and doubles) */
  const char *enums;     /* "a, b, c": values in the order of the C enum */
  gboolean needs_source; /* a hardware figure: KEY.source required beside it */
  Store store;
  Target target;
  size_t offset;
  const char *lands;
  const char *meaning;
} Key;

#define REQ NULL
#define OPT ""

static const char *const dtype_enums = "fp32, tf32, fp16, bf16, fp8, fp4";

static inline const char *
key_enums (const Key *k)
{
  if (k->enums)
    return k->enums;
  return k->store == S_ENUM && k->type == T_ENUM ? dtype_enums : "";
}

/* keys.c: the table, in the order `trainsim run --keys` prints it. */
extern const Key sim_scenario_keys[];
extern const gsize sim_scenario_key_table_len;
