# bench/collective: 2 GiB all-reduce over the 32 DP groups of the 10,752-GPU H100 cluster at once.
EXTRA_PROGRAMS += bench/collective
bench_targets += bench/collective
bench_collective_SOURCES = bench/collective.c
bench_collective_LDADD = $(TRAINSIM_LIBS)
bench_collective_LDFLAGS = $(LTO_LINK_FLAGS)
