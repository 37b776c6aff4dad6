# calib/: CUDA/NCCL microbenchmarks (when configure finds CUDA) and host-side fits.
#
# The GPU programs are CUDA C compiled by nvcc; they use only CUDA, cuBLAS(Lt), NCCL and optional
# Open MPI (never GLib), so they build and run on a bare GPU node. Machine code for Ampere (sm_80),
# Hopper (sm_90) and Blackwell (sm_100, CUDA >= 12.8), plus compute_100 PTX for later GPUs.
# This fragment owns the .cu suffix rule; other calib programs (calib/trainer) reuse it.

# Host side (GLib/GSL): measurement TSV reader, fits, profile writer.
if SIMULATOR
libtrainsim_a_SOURCES += calib/measure.c calib/measure.h calib/fit.c calib/fit.h calib/profile.c calib/profile.h
endif

SUFFIXES = .cu
CALIB_NVCC_ARCH = -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_100,code=sm_100 -gencode arch=compute_100,code=compute_100
# Warnings of the host compiler and of nvcc; --enable-werror (seen in WARN_CFLAGS) makes them errors.
CALIB_NVCCFLAGS = -O3 -std=c++17 $(CALIB_NVCC_ARCH) -I$(srcdir) -I$(builddir) \
	-Xcompiler -Wall,-Wextra,-Wshadow,-Wformat=2,-Wno-unused-parameter -DTRAINSIM_VERSION=\"$(PACKAGE_VERSION)\"
# cudart is linked statically (nvcc's default); cuBLAS(Lt) and NCCL are found through an rpath so
# the programs run on a bare GPU node without LD_LIBRARY_PATH.
CALIB_NVCC_LINK = $(NVCC) $(CALIB_NVCC_ARCH) -Xlinker -rpath -Xlinker $(CUDA_DIR)/lib64 -o $@
CALIB_CUDA_LIBS = -L$(CUDA_DIR)/lib64 -L$(CUDA_DIR)/lib

.cu.o:
	$(AM_V_GEN)w=; case ' $(WARN_CFLAGS) ' in *' -Werror '*) w='-Werror all-warnings -Xcompiler -Werror';; esac; \
	x=; case '$@' in *bench_nccl.o) x='$(CALIB_NCCL_MPI_FLAGS)';; esac; \
	$(NVCC) $(CALIB_NVCCFLAGS) $$x $$w $(NVCCFLAGS) -c -o $@ $<

CALIB_BENCH_COMMON = calib/bench.cu calib/bench.h

if HAVE_CUDA
bin_PROGRAMS += calib/trainsim-bench-gemm calib/trainsim-bench-memory calib/trainsim-bench-attention
if HAVE_NCCL
bin_PROGRAMS += calib/trainsim-bench-nccl
endif
endif

calib_trainsim_bench_gemm_SOURCES = calib/bench_gemm.cu $(CALIB_BENCH_COMMON)
calib_trainsim_bench_gemm_LINK = $(CALIB_NVCC_LINK)
calib_trainsim_bench_gemm_LDADD = $(CALIB_CUDA_LIBS) -lcublasLt

calib_trainsim_bench_memory_SOURCES = calib/bench_memory.cu $(CALIB_BENCH_COMMON)
calib_trainsim_bench_memory_LINK = $(CALIB_NVCC_LINK)
calib_trainsim_bench_memory_LDADD = $(CALIB_CUDA_LIBS)

calib_trainsim_bench_attention_SOURCES = calib/bench_attention.cu $(CALIB_BENCH_COMMON)
calib_trainsim_bench_attention_LINK = $(CALIB_NVCC_LINK)
calib_trainsim_bench_attention_LDADD = $(CALIB_CUDA_LIBS) -lcublas

calib_trainsim_bench_nccl_SOURCES = calib/bench_nccl.cu $(CALIB_BENCH_COMMON)
calib_trainsim_bench_nccl_LINK = $(CALIB_NVCC_LINK) -Xlinker -rpath -Xlinker $(NCCL_DIR)/lib64
calib_trainsim_bench_nccl_LDADD = $(CALIB_CUDA_LIBS) -L$(NCCL_DIR)/lib64 -L$(NCCL_DIR)/lib -lnccl
# Only the nccl program uses MPI (multi-node bootstrap); the suffix rule adds these to its object.
if HAVE_MPI
CALIB_NCCL_MPI_FLAGS = -DTRAINSIM_HAVE_MPI $(MPI_CFLAGS)
calib_trainsim_bench_nccl_LDADD += $(MPI_LIBS)
else
CALIB_NCCL_MPI_FLAGS =
endif

# One GPU node's calibration set in one go, and what it measured on the project's own GPUs.
dist_noinst_SCRIPTS += calib/calibrate-node.sh calib/torch-kernels.py calib/overlap.py calib/interleave.py calib/gpt-step.py calib/mlperf-steps.py calib/zero3-lists.py \
	calib/fit-attention.py
EXTRA_DIST += calib/results calib/cuda_timing.py

# The plot script `trainsim fit --plot` runs (kept here with its writer).
dist_noinst_DATA += plots/calib-fit.gp
include calib/trainer/local.mk
