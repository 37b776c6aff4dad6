/* The trainsim scenario (GLib key file, the keys of sim/scenario/scenario.c) that describes one trainer run:
 * hardware and fabric profiles by inclusion of trainsim's embedded files, the model written out in
 * full (so the file stands alone and says exactly what ran), the cluster and the parallel plan.
 * Plain C (the trainer writes it on the GPU machine). */
#pragma once
#include <stdio.h>
#include "calib/trainer/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const TrainerShape *shape;
  const char *hardware;   /* scenarios/hardware/NAME.ini */
  const char *fabric;     /* scenarios/fabrics/NAME.ini */
  const char *device;     /* the device name, for the comment */
  const char *model_path; /* the model file the trainer read, for the comment */
  int gpus, gpus_per_node;
  int zero, micro_batch, global_batch, recompute, dp_overlap, dp_bucket_mib, steps;
  int flash; /* --attention flash (else the s×s scores are materialized: unfused_attention) */
} TrainerRun;

/* Returns 0, or -1 when writing failed. */
int trainer_emit_scenario (FILE *f, const TrainerRun *run);

#ifdef __cplusplus
}
#endif
