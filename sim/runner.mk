# GPU streams and kernel time; the training-step runner (joins model/ and sim/).
libtrainsim_a_SOURCES += sim/gpu.c sim/runner.c sim/runner.h
