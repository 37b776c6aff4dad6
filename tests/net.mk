# Topology builders and routing.
check_PROGRAMS += tests/test-topology
TESTS += tests/test-topology
tests_test_topology_SOURCES = tests/test-topology.c
tests_test_topology_LDADD = $(TEST_LIBS)
