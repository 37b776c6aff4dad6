# trainsim compare: trainer logs against predictions.
libtrainsim_a_SOURCES += sim/compare.c sim/compare.h
trainsim_SOURCES += sim/cmd_compare.c
