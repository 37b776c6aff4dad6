# model/: pure workload maths (GLib only, no I/O).
libtrainsim_a_SOURCES += model/dtype.h model/shape.h model/plan.h \
	model/op.h model/tpoverlap.h model/layer.h model/flops.h model/memory.h model/framework.h \
	model/dtype.c model/shape.c model/plan.c model/op.c model/tpoverlap.c model/layer.c \
	model/flops.c model/memory.c model/framework.c
include model/schedule.mk
