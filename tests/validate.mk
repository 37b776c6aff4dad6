# trainsim validate: deck parser, statistics, fixture deck end to end.
check_PROGRAMS += tests/test-validate
TESTS += tests/test-validate tests/validate-cli.sh tests/fit-runs-cli.sh tests/determinism.sh
# Every row of the shared deck runs, none refused (skipped without ../shared beside the tree).
TESTS += tests/deck-never-refused.sh
tests_test_validate_SOURCES = tests/test-validate.c
tests_test_validate_LDADD = $(TEST_LIBS)
dist_noinst_SCRIPTS += tests/validate-cli.sh tests/fit-runs-cli.sh tests/determinism.sh tests/deck-never-refused.sh
dist_noinst_DATA += tests/data/validate-deck.csv tests/data/fit-runs-template.csv
# trainsim sensitivity: elasticities against direct runs; the command's formats and exit codes.
check_PROGRAMS += tests/test-sensitivity
TESTS += tests/test-sensitivity tests/sensitivity-cli.sh
tests_test_sensitivity_SOURCES = tests/test-sensitivity.c
tests_test_sensitivity_LDADD = $(TEST_LIBS)
dist_noinst_SCRIPTS += tests/sensitivity-cli.sh
# The per-generation calibration: its linear step and a fit on a deck drawn from the simulator.
check_PROGRAMS += tests/test-calibration
TESTS += tests/test-calibration
tests_test_calibration_SOURCES = tests/test-calibration.c
tests_test_calibration_LDADD = $(TEST_LIBS)
