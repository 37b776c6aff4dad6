check_PROGRAMS += tests/test-compare
TESTS += tests/test-compare
tests_test_compare_SOURCES = tests/test-compare.c
tests_test_compare_LDADD = $(TEST_LIBS)
dist_noinst_DATA += tests/data/compare-trainer-synthetic.tsv tests/data/compare-gpt2-2gpu.ini
