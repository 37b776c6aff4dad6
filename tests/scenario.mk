# Scenario loader, scenario files, README key tables and `trainsim run`.
check_PROGRAMS += tests/test-scenario tests/test-scenario-errors
TESTS += tests/test-scenario tests/test-scenario-errors
tests_test_scenario_SOURCES = tests/test-scenario.c
tests_test_scenario_LDADD = $(TEST_LIBS)
tests_test_scenario_errors_SOURCES = tests/test-scenario-errors.c
tests_test_scenario_errors_LDADD = $(TEST_LIBS)
# The hardware profiles of DECK.md's a100-sxm-40g and h100-sxm-hbm2e-96g and of H800: run, sources, validate rows.
TESTS += tests/hardware-profiles.sh
dist_noinst_SCRIPTS += tests/hardware-profiles.sh
# The memory model against published per-GPU peaks (tests/data/published-memory.tsv, with sources).
TESTS += tests/published-memory.sh
dist_noinst_SCRIPTS += tests/published-memory.sh
EXTRA_DIST += tests/data/published-memory.tsv
# The model families' run scenarios: parameters as the model cards count them, a step time each.
TESTS += tests/family-runs.sh
dist_noinst_SCRIPTS += tests/family-runs.sh
