# sim/gpu: one GPU type's hardware profile, its streams and kernel times.
libtrainsim_a_SOURCES += sim/gpu/gpu.h sim/gpu/gpu.c
