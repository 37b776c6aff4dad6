# bench/search: configurations per second of the search's closed-form stage (Llama 3.1 405B / 8,192 GB200).
EXTRA_PROGRAMS += bench/search
bench_targets += bench/search
bench_search_SOURCES = bench/search.c
bench_search_LDADD = $(TRAINSIM_LIBS)
bench_search_LDFLAGS = $(LTO_LINK_FLAGS)
