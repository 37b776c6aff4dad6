# Goodput against the GPU count (`trainsim goodput … --sweep-gpus N,N,… --format tsv`): Monte Carlo
# mean with its 95% confidence interval and the analytic model, at each scale's optimal interval.
# Usage: gnuplot -c plots/goodput-gpus.gp IN.tsv OUT.png
if (ARGC < 2) { print "usage: gnuplot -c plots/goodput-gpus.gp IN.tsv OUT.png"; exit 1 }
set terminal pngcairo size 900,560 font ",11"
set output ARG2
set datafile separator "\t"
set datafile commentschars "#"
set logscale x 2
set xlabel "GPUs"
set ylabel "goodput (time without failures / expected time)"
set y2label "job MTBF (h)"
set y2tics
set ytics nomirror
set grid
set key bottom left
set title "Goodput vs scale (same tokens, ideal per-GPU throughput)"
plot ARG1 using 1:19:20:21 skip 1 with yerrorbars lc rgb "#1f77b4" pt 7 ps 0.8 title "Monte Carlo (95% CI)", \
     ARG1 using 1:14 skip 1 with lines lw 2 lc rgb "#d62728" title "analytic (Daly)", \
     ARG1 using 1:6 skip 1 axes x1y2 with linespoints dashtype 2 lc rgb "gray40" title "job MTBF (right)"
