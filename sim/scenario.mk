# Scenario loader, report and the `run` command's workload summary.
libtrainsim_a_SOURCES += sim/scenario.c sim/scenario.h sim/report.c sim/report.h
