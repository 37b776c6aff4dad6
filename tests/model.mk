# Tests of model/: parameter counts, plan rules, op lists, FLOPs and memory.
check_PROGRAMS += tests/test-model-shape tests/test-model-plan
TESTS += tests/test-model-shape tests/test-model-plan
tests_test_model_shape_SOURCES = tests/test-model-shape.c
tests_test_model_shape_LDADD = $(TEST_LIBS)
tests_test_model_plan_SOURCES = tests/test-model-plan.c
tests_test_model_plan_LDADD = $(TEST_LIBS)
