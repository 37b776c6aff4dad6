/* Writes the trainsim scenario of a trainer run (see emit.h). */
#include "config.h"
#include "calib/trainer/emit.h"

#include <ctype.h>

int
trainer_emit_scenario (FILE *f, const TrainerRun *r)
{
  const TrainerShape *s = r->shape;
  const char *name = s->name[0] ? s->name : "model";
  int nodes = (r->gpus + r->gpus_per_node - 1) / r->gpus_per_node;
  fprintf (f, "# trainsim scenario of a trainsim-trainer run (trainsim-trainer %s, %s).\n", PACKAGE_VERSION,
           TRAINSIM_GIT_REV);
  fprintf (f, "# Ran on %s x %d (%d node(s) x %d); model file %s. Predict with: trainsim run THIS_FILE\n",
           r->device ? r->device : "?", r->gpus, nodes, r->gpus_per_node, r->model_path ? r->model_path : "?");
  fprintf (f, "[scenario]\ninclude = resource:///trainsim/scenarios/hardware/%s.ini;"
              "resource:///trainsim/scenarios/fabrics/%s.ini\n", r->hardware, r->fabric);
  char slug[64];
  size_t n = 0;
  for (const char *c = name; *c && n + 1 < sizeof slug; c++)
    slug[n++] = isalnum ((unsigned char) *c) || *c == '.' ? (char) tolower ((unsigned char) *c) : '-';
  slug[n] = '\0';
  fprintf (f, "name = trainer-%s-%dgpu\n", slug, r->gpus);
  fprintf (f, "description = trainsim-trainer run of %s on %d GPU(s): data parallel%s, bf16 matmuls, fp32 master "
              "weights and gradients, micro-batch %d, global batch %d, recompute %s.\n\n",
           name, r->gpus, r->zero ? " with the distributed optimizer (ZeRO-1)" : "", r->micro_batch, r->global_batch,
           r->recompute ? "full" : "none");
  fprintf (f, "[model]\n");
  if (s->name[0])
    fprintf (f, "name = %s\n", s->name);
  fprintf (f, "layers = %d\nhidden = %d\nheads = %d\nkv_heads = %d\nhead_dim = %d\nffn_hidden = %d\nvocab = %d\n"
              "vocab_multiple = %d\nmax_positions = %d\nactivation = %s\nnorm = %s\nposition = %s\n"
              "tied_embeddings = %s\nbias = %s\n\n",
           s->layers, s->hidden, s->heads, s->kv_heads, s->head_dim, s->ffn_hidden, s->vocab, s->vocab_multiple,
           s->rope ? 0 : s->max_positions, s->swiglu ? "swiglu" : "gelu", s->rmsnorm ? "rmsnorm" : "layernorm",
           s->rope ? "rope" : "learned", s->tied_embeddings ? "true" : "false", s->bias ? "true" : "false");
  fprintf (f, "[cluster]\ngpus = %d\ngpus_per_node = %d\nnvlink_domain = %d\n\n", r->gpus, r->gpus_per_node,
           r->gpus_per_node);
  fprintf (f, "[parallel]\ntp = 1\npp = 1\ncp = 1\nzero = %d\nmicro_batch = %d\nglobal_batch = %d\nrecompute = %s\n"
              "matmul_dtype = bf16\nparam_dtype = bf16\ndp_overlap = %s\ndp_bucket_MiB = %d\nunfused_attention = %s\n\n",
           r->zero, r->micro_batch, r->global_batch, r->recompute ? "full" : "none", r->dp_overlap ? "true" : "false",
           r->dp_bucket_mib, r->flash ? "false" : "true");
  /* The profile's step_overhead_ms is fitted on Megatron/NeMo runs (their Python loop between
   * steps); the trainer is one C process whose step is its kernels back to back (measured on H100
   * and H200: step = forward + backward + optimizer within 0.3 ms, calib/results/). */
  fprintf (f, "[hardware]\nstep_overhead_ms = 0\nstep_overhead_ms.source = trainsim-trainer: one C process per GPU, no "
              "framework host loop between steps (the profile's figure is fitted on Megatron/NeMo runs); measured "
              "step = forward + backward + optimizer within 0.3 ms on H100 and H200 (calib/results/)\n\n");
  fprintf (f, "[training]\nseq_len = %d\nsteps = %d\n", s->seq_len, r->steps);
  return ferror (f) ? -1 : 0;
}
