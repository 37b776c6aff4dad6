# sim/des: the discrete-event kernel, event queue and engine (integer ns, knows no GPU).
libtrainsim_a_SOURCES += sim/des/queue.h sim/des/queue-private.h sim/des/queue.c sim/des/engine.h sim/des/engine.c \
	sim/des/heap.h sim/des/heap.c
