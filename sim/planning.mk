# Planning tools: sweeps, parallelism search, progress, plots, MPI distribution.
# The closed-form estimate, sweep and search live in the library (tests link them); the MPI
# module is compiled into the trainsim binary only, so libtrainsim.a never needs MPI
# (MPI_CFLAGS/MPI_LIBS are empty when configure found no Open MPI).
libtrainsim_a_SOURCES += sim/estimate.c sim/estimate.h sim/sweep.c sim/sweep.h sim/search.c sim/search.h sim/progress.c sim/progress.h \
	sim/plots.c sim/plots.h sim/trace.c sim/trace.h
trainsim_SOURCES += sim/cmd_sweep.c sim/cmd_search.c sim/dist.c sim/dist.h
trainsim_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
trainsim_LDADD += $(MPI_LIBS)
AM_CPPFLAGS += -DTRAINSIM_PLOTS_SRCDIR='"$(abs_top_srcdir)/plots"' -DTRAINSIM_PLOTS_DATADIR='"$(pkgdatadir)/plots"'
