# bench/step: one simulated training step of the GPT-3 175B case, default and --full.
EXTRA_PROGRAMS += bench/step
bench_targets += bench/step
bench_step_SOURCES = bench/step.c
bench_step_LDADD = $(TRAINSIM_LIBS)
bench_step_LDFLAGS = $(LTO_LINK_FLAGS)
