# bench/: speed and memory benchmarks, built by `make bench`, never run by `make check`.
# Each fragment appends its programs to EXTRA_PROGRAMS and to bench_targets.
bench_targets =
include bench/engine.mk
include bench/collective.mk
include bench/step.mk
include bench/scale.mk
bench: $(bench_targets)
.PHONY: bench
include bench/search.mk
include bench/calibration.mk
include bench/heldout.mk
