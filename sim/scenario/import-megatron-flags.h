/* Every argument of Megatron-LM's pretrain_gpt.py (megatron/training/arguments.py at core_v0.15.0,
 * the last release that declares each one with add_argument), with what it takes and what
 * `trainsim import megatron` does with it. */
#pragma once
#include <glib.h>

typedef enum {
  SIM_MEGATRON_FLAG,          /* store_true / store_false: no value */
  SIM_MEGATRON_VALUE,         /* one value */
  SIM_MEGATRON_LIST,          /* nargs '*' or '+': the values up to the next --option */
} SimMegatronArity;

/* The argparse type of each value: a word that is not one fails as Megatron-LM's parser would. */
typedef enum {
  SIM_MEGATRON_TEXT,          /* str, a choice, or a custom parser */
  SIM_MEGATRON_INT,           /* type=int */
  SIM_MEGATRON_FLOAT,         /* type=float */
} SimMegatronType;

typedef enum {
  SIM_MEGATRON_MAPPED,        /* read by import-megatron.c (a trainsim key, or a check) */
  SIM_MEGATRON_IGNORED,       /* no bearing on a training step's time or memory */
  SIM_MEGATRON_UNKNOWN,       /* matters for performance, no trainsim key (why says what) */
} SimMegatronClass;

typedef struct {
  const char *name;           /* "--num-layers" */
  SimMegatronArity arity;
  SimMegatronType type;
  SimMegatronClass cls;
  const char *why;            /* SIM_MEGATRON_UNKNOWN: what trainsim does not model */
} SimMegatronFlag;

/* The argument named NAME ("--x", no "=value"), or NULL when Megatron-LM has no such argument. */
const SimMegatronFlag *sim_megatron_flag (const char *name);
/* The whole table, for tests. */
const SimMegatronFlag *sim_megatron_flags (guint *n);
