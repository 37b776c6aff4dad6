# sim/scenario: the scenario key table, loader and checks (joins model/ and the hardware).
libtrainsim_a_SOURCES += sim/scenario/scenario.c sim/scenario/scenario.h sim/scenario/scenario-private.h sim/scenario/keys.c \
	sim/scenario/import.c sim/scenario/import.h sim/scenario/import-megatron.c sim/scenario/import-megatron.h \
	sim/scenario/import-megatron-flags.c sim/scenario/import-megatron-flags.h sim/scenario/import-nemo.c \
	sim/scenario/import-nemo.h sim/scenario/yaml-lite.c sim/scenario/yaml-lite.h
