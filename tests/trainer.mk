# tests/: validation trainer (calib/trainer/). The host parts are plain C and always tested; the
# CUDA check against the reference is built with CUDA + NCCL and skips without a GPU.
check_PROGRAMS += tests/test-trainer-ref
TESTS += tests/test-trainer-ref
tests_test_trainer_ref_SOURCES = tests/test-trainer-ref.c $(trainer_host_sources)
tests_test_trainer_ref_LDADD = $(TEST_LIBS)
