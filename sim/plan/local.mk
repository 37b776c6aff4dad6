# sim/plan: planning tools: closed-form estimate, sweeps, parallelism search, progress, goodput
# under failures, MPI distribution.
# The estimate, sweep and search live in the library (tests link them); the MPI module is
# compiled into the trainsim binary only, so libtrainsim.a never needs MPI (MPI_CFLAGS/MPI_LIBS
# are empty when configure found no Open MPI).
libtrainsim_a_SOURCES += sim/plan/estimate.c sim/plan/estimate.h sim/plan/sweep.c sim/plan/sweep.h \
	sim/plan/search.c sim/plan/search.h sim/plan/progress.c sim/plan/progress.h \
	sim/plan/goodput.c sim/plan/goodput.h
trainsim_SOURCES += sim/plan/dist.c sim/plan/dist.h
trainsim_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
trainsim_LDADD += $(MPI_LIBS)
dist_noinst_DATA += plots/goodput-interval.gp plots/goodput-gpus.gp plots/goodput-straggler.gp
