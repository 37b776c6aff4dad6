# sim/net: links and the cluster topology (NVLink domains + scale-out fat trees), max-min fair
# sharing, flows on the engine, and collectives (closed-form alpha-beta and phases of flows).
libtrainsim_a_SOURCES += sim/net/link.h sim/net/link.c sim/net/topology.h sim/net/topology.c \
	sim/net/maxmin.h sim/net/maxmin.c sim/net/flow.h sim/net/flow.c \
	sim/net/alphabeta.c sim/net/alphabeta.h sim/net/collective.c sim/net/collective.h
