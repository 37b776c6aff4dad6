# Collective tests: closed forms against hand derivations and published busbw; flow model against
# the closed forms; the `trainsim collective` command on the seed scenario.
check_PROGRAMS += tests/test-alphabeta tests/test-collective
TESTS += tests/test-alphabeta tests/test-collective tests/test-cmd-collective.sh
tests_test_alphabeta_SOURCES = tests/test-alphabeta.c tests/coll-profile.h
tests_test_alphabeta_LDADD = $(TEST_LIBS)
tests_test_collective_SOURCES = tests/test-collective.c tests/coll-profile.h
tests_test_collective_LDADD = $(TEST_LIBS)
dist_noinst_SCRIPTS += tests/test-cmd-collective.sh
dist_noinst_DATA += tests/data/nccl-busbw.tsv
