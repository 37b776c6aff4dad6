/* `trainsim import megatron`: a Megatron-LM pretrain_gpt.py argument list (`--flag value` and
 * `--flag=value`) as trainsim [model], [parallel], [training] and [cluster] keys.
 *
 * Meanings follow Megatron-LM core_v0.15.0: megatron/training/arguments.py (each argument and the
 * defaults validate_args derives), megatron/core/transformer/transformer_config.py (recompute),
 * megatron/training/tokenizer/tokenizer.py (vocabulary), megatron/core/pipeline_parallel/
 * p2p_communication.py (blocking pipeline sends). Every argument of that release is in
 * import-megatron-flags.c; one it does not know is reported as unknown. */
#pragma once
#include <glib.h>
#include "sim/scenario/import.h"

/* Fills IMP from ARGS (NULL-terminated). Fails (SIM_IMPORT_ERROR_VALUE, naming the argument) on a
 * value that is not a number where one is needed, not one of the argument's choices, or a
 * combination Megatron-LM itself refuses; SIM_IMPORT_ERROR_SYNTAX on a word that is not an option
 * or a flag given a value. */
gboolean sim_import_megatron (SimImport *imp, const char *const *args, const SimImportOptions *opts, GError **error);

/* The words of an argument file as a launch script writes them: shell quoting, `#` comments to the
 * end of a line, backslash-newline continuations; a leading `python …pretrain_gpt.py` or
 * `torchrun … pretrain_gpt.py` is skipped. */
char **sim_import_megatron_read_args (const char *path, GError **error);
