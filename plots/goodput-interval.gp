# Goodput against the checkpoint interval (`trainsim goodput … --sweep-interval --format tsv`):
# Monte Carlo mean with its 95% confidence interval, the analytic model, and Daly's optimum.
# Usage: gnuplot -c plots/goodput-interval.gp IN.tsv OUT.png
if (ARGC < 2) { print "usage: gnuplot -c plots/goodput-interval.gp IN.tsv OUT.png"; exit 1 }
set terminal pngcairo size 900,560 font ",11"
set output ARG2
set datafile separator "\t"
set datafile commentschars "#"
set key autotitle columnhead bottom center
set logscale x 2
set xlabel "training time between checkpoints (min)"
set ylabel "goodput (time without failures / expected time)"
set grid
stats ARG1 using 11 nooutput
daly = STATS_max
set arrow from daly, graph 0 to daly, graph 1 nohead dashtype 2 lc rgb "gray40"
set label sprintf("Daly's optimum %.1f min", daly) at daly, graph 0.95 offset 1,0
set title "Goodput vs checkpoint interval"
plot ARG1 using 12:19:20:21 skip 1 with yerrorbars lc rgb "#1f77b4" pt 7 ps 0.7 title "Monte Carlo (95% CI)", \
     ARG1 using 12:14 skip 1 with lines lw 2 lc rgb "#d62728" title "analytic (Daly)"
