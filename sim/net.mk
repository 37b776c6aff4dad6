# sim/ network core: links and the cluster topology (NVLink domains + scale-out fat trees).
libtrainsim_a_SOURCES += sim/link.c sim/topology.c
trainsim_SOURCES += sim/cmd_topology.c
