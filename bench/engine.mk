# Engine benchmarks (owner: engine). Built by `make bench`.
EXTRA_PROGRAMS += bench/engine
bench_targets += bench/engine
bench_engine_SOURCES = bench/engine.c
bench_engine_LDADD = $(TRAINSIM_LIBS)
bench_engine_LDFLAGS = $(LTO_LINK_FLAGS)
EXTRA_PROGRAMS += bench/flow
bench_targets += bench/flow
bench_flow_SOURCES = bench/flow.c
bench_flow_LDADD = $(TRAINSIM_LIBS)
bench_flow_LDFLAGS = $(LTO_LINK_FLAGS)
