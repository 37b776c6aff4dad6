# tests/: validation trainer (calib/trainer/). The host parts are plain C and always tested; the
# CUDA model is checked against the reference by test-trainer-gpu, built with CUDA + NCCL, which
# exits 77 without a GPU; trainer-gpu.sh turns that into a TAP skip.
if SIMULATOR
check_PROGRAMS += tests/test-trainer-ref
TESTS += tests/test-trainer-ref
tests_test_trainer_ref_SOURCES = tests/test-trainer-ref.c $(trainer_host_sources)
tests_test_trainer_ref_LDADD = $(TEST_LIBS)
endif
dist_noinst_SCRIPTS += tests/trainer-gpu.sh tests/trainer-cli.sh
EXTRA_DIST += tests/test-trainer-gpu.cu

if HAVE_CUDA
if HAVE_NCCL
tests/test_trainer_gpu_cu.o: tests/test-trainer-gpu.cu $(trainer_cu_deps)
	@$(MKDIR_P) tests
	$(AM_V_GEN)$(NVCC) $(TRAINER_NVCCFLAGS) -c -o $@ $(srcdir)/tests/test-trainer-gpu.cu
CLEANFILES += tests/test_trainer_gpu_cu.o
check_PROGRAMS += tests/test-trainer-gpu
if SIMULATOR
TESTS += tests/trainer-gpu.sh tests/trainer-cli.sh
endif
tests_test_trainer_gpu_SOURCES = calib/trainer/shape.c calib/trainer/layout.c calib/trainer/ref.c
tests_test_trainer_gpu_CFLAGS = $(WARN_CFLAGS)
tests_test_trainer_gpu_LDFLAGS = $(TRAINER_LINKFLAGS)
tests_test_trainer_gpu_LDADD = tests/test_trainer_gpu_cu.o calib/trainer/gpt_cu.o $(TRAINER_CUDA_LIBS)
endif
endif
