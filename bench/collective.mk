# bench/collective: 2 GiB all-reduce over the 32 DP groups of the 10,752-GPU H100 cluster at once.
# (Added to the build once sim/flow lands.)
