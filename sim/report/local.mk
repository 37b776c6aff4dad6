# sim/report: what a run prints: the workload report, cost and energy, the Chrome trace and
# merged timeline, the gnuplot driver for --plots.
libtrainsim_a_SOURCES += sim/report/report.c sim/report/report.h sim/report/cost.c sim/report/cost.h \
	sim/report/trace.c sim/report/trace.h sim/report/plots.c sim/report/plots.h
AM_CPPFLAGS += -DTRAINSIM_PLOTS_SRCDIR='"$(abs_top_srcdir)/plots"' -DTRAINSIM_PLOTS_DATADIR='"$(pkgdatadir)/plots"'
