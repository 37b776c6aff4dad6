check_PROGRAMS += tests/test-schedule
TESTS += tests/test-schedule
tests_test_schedule_SOURCES = tests/test-schedule.c
tests_test_schedule_LDADD = $(TEST_LIBS)
