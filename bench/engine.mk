# Engine benchmarks (owner: engine). Built by `make bench`.
EXTRA_PROGRAMS += bench/engine
bench_targets += bench/engine
bench_engine_SOURCES = bench/engine.c
bench_engine_LDADD = $(TRAINSIM_LIBS)
