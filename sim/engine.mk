# Discrete-event core: event queue, engine, max-min fair sharing, flows (owner: engine).
libtrainsim_a_SOURCES += sim/queue.h sim/queue-private.h sim/queue.c sim/engine.c sim/maxmin.h sim/maxmin.c sim/flow.c
