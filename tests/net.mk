# Topology builders and routing.
check_PROGRAMS += tests/test-topology
TESTS += tests/test-topology
tests_test_topology_SOURCES = tests/test-topology.c
tests_test_topology_LDADD = $(TEST_LIBS)
# `trainsim topology` on the seed run scenarios.
TESTS += tests/topology-cmd.sh
dist_noinst_SCRIPTS += tests/topology-cmd.sh
