# Validation against published runs: the deck format, one scenario per row, statistics.
libtrainsim_a_SOURCES += sim/validate.c sim/validate.h sim/fitruns.c sim/fitruns.h
trainsim_SOURCES += sim/cmd_validate.c
dist_noinst_DATA += plots/validate.gp
