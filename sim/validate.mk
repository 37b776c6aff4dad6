# Validation against published runs: the deck format, one scenario per row, statistics; the
# sensitivity of a prediction to each profile constant.
libtrainsim_a_SOURCES += sim/validate.c sim/validate.h sim/fitruns.c sim/fitruns.h sim/sensitivity.c \
	sim/sensitivity.h
trainsim_SOURCES += sim/cmd_validate.c sim/cmd_sensitivity.c
dist_noinst_DATA += plots/validate.gp
