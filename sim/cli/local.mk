# sim/cli: main and one thin file per subcommand, compiled into the trainsim binary only.
trainsim_SOURCES = sim/cli/main.c sim/cli/cmd.h sim/cli/cmd_run.c sim/cli/cmd_fit.c sim/cli/cmd_calib_plan.c \
	sim/cli/cmd_collective.c sim/cli/cmd_compare.c sim/cli/cmd_goodput.c sim/cli/cmd_straggler.c \
	sim/cli/cmd_topology.c sim/cli/cmd_sweep.c sim/cli/cmd_search.c sim/cli/cmd_validate.c \
	sim/cli/cmd_sensitivity.c sim/cli/cmd_import.c
trainsim_LDADD = $(TRAINSIM_LIBS)
trainsim_CFLAGS = $(AM_CFLAGS) $(LTO_CFLAGS)
trainsim_LDFLAGS = $(LTO_LINK_FLAGS)
