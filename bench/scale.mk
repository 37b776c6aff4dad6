# bench/scale: one step from 8 to 1,048,576 GPUs, default and --full: wall, peak RSS, events (table,
# TSV, plots/bench-scale.gp).
EXTRA_PROGRAMS += bench/scale
bench_targets += bench/scale
bench_scale_SOURCES = bench/scale.c
bench_scale_LDADD = $(TRAINSIM_LIBS)
bench_scale_LDFLAGS = $(LTO_LINK_FLAGS)
