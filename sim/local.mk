# The trainsim binary. Library modules come from the per-area fragments below.
bin_PROGRAMS += trainsim
trainsim_SOURCES = sim/main.c sim/cmd.h sim/cmd_run.c sim/cmd_fit.c sim/cmd_calib_plan.c
trainsim_LDADD = $(TRAINSIM_LIBS)
libtrainsim_a_SOURCES += sim/gpu.h sim/link.h sim/topology.h sim/engine.h sim/flow.h

include sim/scenario.mk
include sim/engine.mk
include sim/net.mk
include sim/collective.mk
include sim/runner.mk
include sim/goodput.mk
include sim/compare.mk
include sim/planning.mk
include sim/validate.mk
