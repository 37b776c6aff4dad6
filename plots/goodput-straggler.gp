# Weak scaling with and without compute variation (`trainsim straggler … --sweep-gpus … --format tsv`):
# weak-scaling efficiency of the step without variation and of the p50 step with it, and the
# straggler efficiency (step without variation / p50 step) at each scale.
# Usage: gnuplot -c plots/goodput-straggler.gp IN.tsv OUT.png [TITLE]
if (ARGC < 2) { print "usage: gnuplot -c plots/goodput-straggler.gp IN.tsv OUT.png [TITLE]"; exit 1 }
set terminal pngcairo size 900,560 font ",11"
set output ARG2
set datafile separator "\t"
set datafile commentschars "#"
set logscale x 2
set xlabel "GPUs"
set ylabel "efficiency"
set grid
set key bottom left
set title (ARGC >= 3 ? ARG3 : "Weak scaling under stragglers")
plot ARG1 using 1:9 skip 1 with linespoints lw 2 pt 7 lc rgb "gray40" title "weak scaling, no variation", \
     ARG1 using 1:10 skip 1 with linespoints lw 2 pt 7 lc rgb "#d62728" title "weak scaling, p50 with variation", \
     ARG1 using 1:8 skip 1 with linespoints lw 2 pt 5 lc rgb "#1f77b4" title "straggler efficiency (no variation / p50)"
