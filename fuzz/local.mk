# fuzz/: libFuzzer harnesses (fuzz/README.md), one fuzz_NAME.c each. Every build links each with
# fuzz/replay.c into fuzz/replay_NAME, which tests/fuzz-replay.sh runs over the seed corpus and the
# regressions (under ASan/UBSan in the sanitizer build); with --enable-fuzzing (clang), `make fuzz`
# links them with libFuzzer into fuzz/fuzz_NAME instead.
FUZZ_COMMON = fuzz/fuzz.h
FUZZ_REPLAY = fuzz/replay.c $(FUZZ_COMMON)
FUZZ_TARGETS = fuzz/fuzz_scenario_file fuzz/fuzz_scenario_set fuzz/fuzz_validate_deck fuzz/fuzz_measure \
	fuzz/fuzz_trainer_log
check_PROGRAMS += fuzz/replay_scenario_file fuzz/replay_scenario_set fuzz/replay_validate_deck \
	fuzz/replay_measure fuzz/replay_trainer_log
EXTRA_PROGRAMS += $(FUZZ_TARGETS)

fuzz_replay_scenario_file_SOURCES = fuzz/fuzz_scenario_file.c $(FUZZ_REPLAY)
fuzz_replay_scenario_file_LDADD = $(TRAINSIM_LIBS)
fuzz_replay_scenario_set_SOURCES = fuzz/fuzz_scenario_set.c $(FUZZ_REPLAY)
fuzz_replay_scenario_set_LDADD = $(TRAINSIM_LIBS)
fuzz_replay_validate_deck_SOURCES = fuzz/fuzz_validate_deck.c $(FUZZ_REPLAY)
fuzz_replay_validate_deck_LDADD = $(TRAINSIM_LIBS)
fuzz_replay_measure_SOURCES = fuzz/fuzz_measure.c $(FUZZ_REPLAY)
fuzz_replay_measure_LDADD = $(TRAINSIM_LIBS)
fuzz_replay_trainer_log_SOURCES = fuzz/fuzz_trainer_log.c $(FUZZ_REPLAY)
fuzz_replay_trainer_log_LDADD = $(TRAINSIM_LIBS)

fuzz_fuzz_scenario_file_SOURCES = fuzz/fuzz_scenario_file.c $(FUZZ_COMMON)
fuzz_fuzz_scenario_file_LDADD = $(TRAINSIM_LIBS)
fuzz_fuzz_scenario_file_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
fuzz_fuzz_scenario_set_SOURCES = fuzz/fuzz_scenario_set.c $(FUZZ_COMMON)
fuzz_fuzz_scenario_set_LDADD = $(TRAINSIM_LIBS)
fuzz_fuzz_scenario_set_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
fuzz_fuzz_validate_deck_SOURCES = fuzz/fuzz_validate_deck.c $(FUZZ_COMMON)
fuzz_fuzz_validate_deck_LDADD = $(TRAINSIM_LIBS)
fuzz_fuzz_validate_deck_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
fuzz_fuzz_measure_SOURCES = fuzz/fuzz_measure.c $(FUZZ_COMMON)
fuzz_fuzz_measure_LDADD = $(TRAINSIM_LIBS)
fuzz_fuzz_measure_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
fuzz_fuzz_trainer_log_SOURCES = fuzz/fuzz_trainer_log.c $(FUZZ_COMMON)
fuzz_fuzz_trainer_log_LDADD = $(TRAINSIM_LIBS)
fuzz_fuzz_trainer_log_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)

.PHONY: fuzz
if ENABLE_FUZZING
fuzz: $(FUZZ_TARGETS:=$(EXEEXT))
else
fuzz:
	@echo "make fuzz: the libFuzzer harnesses need a build configured with clang and --enable-fuzzing," >&2; \
	echo "  e.g. mkdir build-fuzz && cd build-fuzz && ../configure CC=clang --enable-fuzzing && make fuzz" >&2; \
	echo "  (fuzz/run.sh does this and runs them; fuzz/README.md)" >&2; \
	exit 1
endif

TESTS += tests/fuzz-replay.sh
dist_noinst_SCRIPTS += fuzz/run.sh tests/fuzz-replay.sh
EXTRA_DIST += fuzz/README.md tests/fuzz-corpus tests/fuzz-regress
