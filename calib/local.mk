# calib/: CUDA/NCCL microbenchmarks (when configure finds CUDA) and host-side fits.
include calib/trainer/local.mk
