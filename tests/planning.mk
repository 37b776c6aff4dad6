# Planning tools: closed-form estimate, sweep rows, progress, search; the sweep and search commands.
check_PROGRAMS += tests/test-planning
TESTS += tests/test-planning
tests_test_planning_SOURCES = tests/test-planning.c
tests_test_planning_LDADD = $(TEST_LIBS)
TESTS += tests/sweep-cmd.sh
dist_noinst_SCRIPTS += tests/sweep-cmd.sh
TESTS += tests/search-cmd.sh
dist_noinst_SCRIPTS += tests/search-cmd.sh
TESTS += tests/trace-cmd.sh
dist_noinst_SCRIPTS += tests/trace-cmd.sh
check_PROGRAMS += tests/test-search-sim
TESTS += tests/test-search-sim
tests_test_search_sim_SOURCES = tests/test-search-sim.c
tests_test_search_sim_LDADD = $(TEST_LIBS)
