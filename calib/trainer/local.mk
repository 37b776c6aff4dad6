# calib/trainer/: the validation trainer trainsim-trainer (CUDA, cuBLASLt, NCCL, optional MPI).
# Its host parts are plain C so the GPU program needs no GLib; tests/trainer.mk tests them.
trainer_host_sources = calib/trainer/shape.c calib/trainer/shape.h calib/trainer/layout.c \
	calib/trainer/layout.h calib/trainer/ref.c calib/trainer/ref.h calib/trainer/data.c calib/trainer/data.h
