# Collectives: closed-form alpha-beta times and the flow model (phases of flows on SimFlowNet).
libtrainsim_a_SOURCES += sim/alphabeta.c sim/alphabeta.h sim/collective.c sim/collective.h
trainsim_SOURCES += sim/cmd_collective.c
