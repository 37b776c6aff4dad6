# sim/calibrate: validation against published runs (the deck format, one scenario per row,
# statistics), fitting from runs, trainer logs against predictions, and the sensitivity of a
# prediction to each profile constant.
libtrainsim_a_SOURCES += sim/calibrate/validate.c sim/calibrate/validate-deck.c sim/calibrate/validate-report.c sim/calibrate/validate.h sim/calibrate/fitruns.c \
	sim/calibrate/fitruns.h sim/calibrate/calibration.c sim/calibrate/calibration.h sim/calibrate/compare.c sim/calibrate/compare.h \
	sim/calibrate/sensitivity.c sim/calibrate/sensitivity.h
dist_noinst_DATA += plots/validate.gp
