# trainsim import: the YAML subset reader, the Megatron-LM and NeMo readers, and the command's round trips.
check_PROGRAMS += tests/test-yaml-lite tests/test-import
TESTS += tests/test-yaml-lite tests/test-import tests/import-cmd.sh
tests_test_yaml_lite_SOURCES = tests/test-yaml-lite.c
tests_test_yaml_lite_LDADD = $(TEST_LIBS)
tests_test_import_SOURCES = tests/test-import.c
tests_test_import_LDADD = $(TEST_LIBS)
dist_noinst_SCRIPTS += tests/import-cmd.sh
dist_noinst_DATA += tests/data/import/gpt3-175b-mlperf-v3.1.args tests/data/import/llama31-405b-mlperf-v6.0.yaml
