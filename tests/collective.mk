# Collective tests: closed forms against hand derivations and published busbw; flow model against
# the closed forms.
check_PROGRAMS += tests/test-alphabeta
TESTS += tests/test-alphabeta
tests_test_alphabeta_SOURCES = tests/test-alphabeta.c tests/coll-profile.h
tests_test_alphabeta_LDADD = $(TEST_LIBS)
dist_noinst_DATA += tests/data/nccl-busbw.tsv
