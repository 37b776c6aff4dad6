# Scenario loader, scenario files, README key tables and `trainsim run`.
check_PROGRAMS += tests/test-scenario tests/test-scenario-errors
TESTS += tests/test-scenario tests/test-scenario-errors
tests_test_scenario_SOURCES = tests/test-scenario.c
tests_test_scenario_LDADD = $(TEST_LIBS)
tests_test_scenario_errors_SOURCES = tests/test-scenario-errors.c
tests_test_scenario_errors_LDADD = $(TEST_LIBS)
