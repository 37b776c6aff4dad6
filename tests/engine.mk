# Tests of the discrete-event core (owner: engine).
check_PROGRAMS += tests/test-queue tests/test-engine
TESTS += tests/test-queue tests/test-engine
tests_test_queue_SOURCES = tests/test-queue.c
tests_test_queue_LDADD = $(TEST_LIBS)
tests_test_engine_SOURCES = tests/test-engine.c
tests_test_engine_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/test-maxmin
TESTS += tests/test-maxmin
tests_test_maxmin_SOURCES = tests/test-maxmin.c
tests_test_maxmin_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/test-flow
TESTS += tests/test-flow
tests_test_flow_SOURCES = tests/test-flow.c
tests_test_flow_LDADD = $(TEST_LIBS)
