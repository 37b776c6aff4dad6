# Tests of model/: parameter counts, plan rules, op lists, FLOPs and memory.
check_PROGRAMS += tests/test-model-shape tests/test-model-plan tests/test-model-flops \
	tests/test-model-layer tests/test-model-memory
TESTS += tests/test-model-shape tests/test-model-plan tests/test-model-flops tests/test-model-layer \
	tests/test-model-memory
tests_test_model_shape_SOURCES = tests/test-model-shape.c tests/model-presets.h
tests_test_model_shape_LDADD = $(TEST_LIBS)
tests_test_model_plan_SOURCES = tests/test-model-plan.c tests/model-presets.h
tests_test_model_plan_LDADD = $(TEST_LIBS)
tests_test_model_flops_SOURCES = tests/test-model-flops.c tests/model-presets.h
tests_test_model_flops_LDADD = $(TEST_LIBS)
tests_test_model_layer_SOURCES = tests/test-model-layer.c tests/model-presets.h
tests_test_model_layer_LDADD = $(TEST_LIBS)
tests_test_model_memory_SOURCES = tests/test-model-memory.c tests/model-presets.h
tests_test_model_memory_LDADD = $(TEST_LIBS)
