# Goodput under failures (analytic + Monte Carlo), cost and energy, and `trainsim goodput`.
libtrainsim_a_SOURCES += sim/goodput.c sim/goodput.h sim/cost.c sim/cost.h
trainsim_SOURCES += sim/cmd_goodput.c
dist_noinst_DATA += plots/goodput-interval.gp plots/goodput-gpus.gp
libtrainsim_a_SOURCES += sim/straggler.c sim/straggler.h
trainsim_SOURCES += sim/cmd_straggler.c
dist_noinst_DATA += plots/goodput-straggler.gp
