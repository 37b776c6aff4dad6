# plots/: gnuplot scripts, `gnuplot -c plots/x.gp IN OUT`.
