# sim/step: the training-step runner (joins model/, the GPUs and the fabric on the engine) and
# stragglers.
libtrainsim_a_SOURCES += sim/step/runner.c sim/step/runner.h sim/step/runner-private.h sim/step/program.c sim/step/straggler.c sim/step/straggler.h
