# model/schedule: pipeline schedules (GPipe, 1F1B, interleaved 1F1B).
libtrainsim_a_SOURCES += model/schedule.c model/schedule.h
