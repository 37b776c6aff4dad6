# calib/trainer/: the validation trainer trainsim-trainer (CUDA, cuBLASLt, NCCL, optional MPI).
# Its host parts are plain C so the GPU program needs no GLib; tests/trainer.mk tests them.
# The .cu files are compiled by $(NVCC) with explicit rules below; the programs are linked by the C
# compiler without sanitizers (CUDA's runtime and ASan do not mix), only when configure found CUDA
# and NCCL. Override the GPU architectures with `make TRAINER_GENCODE=...`.
trainer_host_sources = calib/trainer/shape.c calib/trainer/shape.h calib/trainer/layout.c \
	calib/trainer/layout.h calib/trainer/ref.c calib/trainer/ref.h calib/trainer/data.c calib/trainer/data.h \
	calib/trainer/emit.c calib/trainer/emit.h
EXTRA_DIST += calib/trainer/gpt.cu calib/trainer/gpt.h calib/trainer/train.cu calib/trainer/models/gpt2-124m.ini \
	calib/trainer/models/tinyllama-1.1b.ini

if HAVE_CUDA
if HAVE_NCCL
# A100 (sm_80), H100/H200 (sm_90), and PTX for newer GPUs (Blackwell JIT-compiles it).
TRAINER_GENCODE = -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
TRAINER_NVCCFLAGS = -std=c++17 -O2 $(TRAINER_GENCODE) -I$(srcdir) -I$(builddir) -Xcompiler -Wall,-Wextra
TRAINER_LINKFLAGS = -L$(CUDA_DIR)/lib64 -L$(NCCL_DIR)/lib64 -Wl,-rpath,$(CUDA_DIR)/lib64 \
	-Wl,-rpath,$(NCCL_DIR)/lib64
TRAINER_CUDA_LIBS = -lnccl -lcublasLt -lcudart_static -lstdc++ -ldl -lrt -lpthread -lm
if HAVE_MPI
TRAINER_NVCCFLAGS += $(MPI_CFLAGS)
TRAINER_CUDA_LIBS += $(MPI_LIBS)
endif
trainer_cu_deps = calib/trainer/gpt.h calib/trainer/layout.h calib/trainer/shape.h calib/trainer/data.h \
	calib/trainer/emit.h \
	calib/trainer/ref.h config.h

calib/trainer/gpt_cu.o: calib/trainer/gpt.cu $(trainer_cu_deps)
	@$(MKDIR_P) calib/trainer
	$(AM_V_GEN)$(NVCC) $(TRAINER_NVCCFLAGS) -c -o $@ $(srcdir)/calib/trainer/gpt.cu
calib/trainer/train_cu.o: calib/trainer/train.cu $(trainer_cu_deps)
	@$(MKDIR_P) calib/trainer
	$(AM_V_GEN)$(NVCC) $(TRAINER_NVCCFLAGS) -c -o $@ $(srcdir)/calib/trainer/train.cu
CLEANFILES += calib/trainer/gpt_cu.o calib/trainer/train_cu.o

bin_PROGRAMS += calib/trainer/trainsim-trainer
calib_trainer_trainsim_trainer_SOURCES = $(trainer_host_sources)
calib_trainer_trainsim_trainer_CFLAGS = $(WARN_CFLAGS)
calib_trainer_trainsim_trainer_LDFLAGS = $(TRAINER_LINKFLAGS)
calib_trainer_trainsim_trainer_LDADD = calib/trainer/train_cu.o calib/trainer/gpt_cu.o $(TRAINER_CUDA_LIBS)
endif
endif
