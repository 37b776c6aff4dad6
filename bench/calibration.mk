# bench/calibration: the deck fit's cost, in-sample and leave-one-source-out error, band coverage, seed records.
EXTRA_PROGRAMS += bench/calibration
bench_targets += bench/calibration
bench_calibration_SOURCES = bench/calibration.c
bench_calibration_LDADD = $(TRAINSIM_LIBS)
bench_calibration_LDFLAGS = $(LTO_LINK_FLAGS)
