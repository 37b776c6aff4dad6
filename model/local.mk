# model/: pure workload maths (GLib only, no I/O).
libtrainsim_a_SOURCES += model/dtype.h model/shape.h model/plan.h \
	model/dtype.c model/shape.c model/plan.c
