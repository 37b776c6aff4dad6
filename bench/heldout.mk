# bench/heldout: the error outside the calibration deck (every run scenario with a published step).
EXTRA_PROGRAMS += bench/heldout
bench_targets += bench/heldout
bench_heldout_SOURCES = bench/heldout.c
bench_heldout_LDADD = $(TRAINSIM_LIBS)
bench_heldout_LDFLAGS = $(LTO_LINK_FLAGS)
