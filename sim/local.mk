# The trainsim binary and libtrainsim.a, one fragment per layer (sim/README.md draws the layers).
# Lower layers first; sim/cli/local.mk sets trainsim_SOURCES, the others add to it.
bin_PROGRAMS += trainsim

include sim/cli/local.mk
include sim/des/local.mk
include sim/net/local.mk
include sim/gpu/local.mk
include sim/scenario/local.mk
include sim/step/local.mk
include sim/report/local.mk
include sim/plan/local.mk
include sim/calibrate/local.mk
EXTRA_DIST += sim/README.md
