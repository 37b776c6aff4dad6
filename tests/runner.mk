check_PROGRAMS += tests/test-gpu tests/test-runner
TESTS += tests/test-gpu tests/test-runner
tests_test_gpu_SOURCES = tests/test-gpu.c
tests_test_gpu_LDADD = $(TEST_LIBS)
tests_test_runner_SOURCES = tests/test-runner.c
tests_test_runner_LDADD = $(TEST_LIBS)
TESTS += tests/runner-cmd.sh
dist_noinst_SCRIPTS += tests/runner-cmd.sh
