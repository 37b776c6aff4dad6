# sim/scenario: the scenario key table, loader and checks (joins model/ and the hardware).
libtrainsim_a_SOURCES += sim/scenario/scenario.c sim/scenario/scenario.h sim/scenario/scenario-private.h sim/scenario/keys.c
