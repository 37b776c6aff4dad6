# Goodput under failures, checkpoint intervals, cost and energy; `trainsim goodput`.
check_PROGRAMS += tests/test-goodput
TESTS += tests/test-goodput tests/goodput-cmd.sh
dist_noinst_SCRIPTS += tests/goodput-cmd.sh
tests_test_goodput_SOURCES = tests/test-goodput.c
tests_test_goodput_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/test-straggler
TESTS += tests/test-straggler
tests_test_straggler_SOURCES = tests/test-straggler.c
tests_test_straggler_LDADD = $(TEST_LIBS)
