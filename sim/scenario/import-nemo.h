/* `trainsim import nemo`: a NeMo Megatron GPT config (YAML, read by yaml-lite.h) as trainsim
 * [model], [parallel], [training] and [cluster] keys.
 *
 * Read: the `model:` section of NeMo 1.x (megatron_gpt_config.yaml's keys: num_layers, hidden_size,
 * encoder_seq_length, tensor_model_parallel_size, activations_checkpoint_*, fp8, fp8_hybrid,
 * ub_tp_comm_overlap, optim.name, ...), the Megatron-Core TransformerConfig names NeMo passes through
 * (num_moe_experts, moe_router_topk, account_for_*_in_pipeline_split, cross_entropy_loss_fusion, fp4,
 * ...), NeMo 2.x places where they differ (model.config.*, trainer.strategy.*, data.* for batch and
 * sequence, trainer.plugins.precision), and `trainer:` (num_nodes x devices GPUs, precision,
 * max_steps, val_check_interval, limit_val_batches). A key absent from the file takes NeMo's default
 * (megatron_gpt_model.py / megatron_base_model.py cfg.get defaults). `${...}` interpolations and
 * `???` are reported as unresolved and read as absent. */
#pragma once
#include <glib.h>
#include "sim/scenario/import.h"
#include "sim/scenario/yaml-lite.h"

/* Fills IMP from ROOT (the whole config). NAME is the file, for FILE:LINE in errors. Fails
 * (SIM_IMPORT_ERROR_VALUE, FILE:LINE and the key) on a value of the wrong type or not one of its
 * choices. */
gboolean sim_import_nemo (SimImport *imp, const SimYamlNode *root, const char *name, const SimImportOptions *opts,
                          GError **error);
