# tests/: calibration (calib/). The GPU programs run through a TAP script that accepts their
# skip (exit 77) on machines without a GPU, such as CI.
check_PROGRAMS += tests/test-calib-fit
TESTS += tests/test-calib-fit tests/calib-fit-cli.sh tests/calib-bench.sh tests/measured-runs.sh tests/calib-scripts.sh \
	tests/fit-attention.sh
tests_test_calib_fit_SOURCES = tests/test-calib-fit.c
tests_test_calib_fit_LDADD = $(TEST_LIBS)
dist_noinst_SCRIPTS += tests/calib-fit-cli.sh tests/calib-bench.sh tests/measured-runs.sh tests/calib-scripts.sh \
	tests/fit-attention.sh
dist_noinst_DATA += tests/data/nccl-tests-h200-all_reduce-8gpu.txt tests/data/nccl-tests-gb200-all_reduce-4gpu.txt \
	tests/data/nccl-tests-a100-all_reduce-8gpu.txt tests/data/synthetic-gemm.tsv
