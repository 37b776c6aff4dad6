# Predicted vs measured step time of `trainsim validate --plot OUT.png`:
#   gnuplot -c plots/validate.gp IN.tsv OUT.png
# IN holds one dataset per GPU type (separated by two blank lines); each dataset's first row is its
# title, then rows of measured_s, predicted_s, id. Log-log with the y = x line and the ±10% band.
if (ARGC < 2) { print "usage: gnuplot -c validate.gp IN OUT.png"; exit 1 }
IN = ARG1
OUT = ARG2
nsets = int(system(sprintf("awk 'BEGIN{n=0;b=0} /^$/{b++; if (b==2) n++; next} {b=0} END{print n}' '%s'", IN)))

set terminal pngcairo size 900,800 enhanced font "Sans,11"
set output OUT
set title "trainsim validate: predicted vs measured step time"
set xlabel "measured step time (s)"
set ylabel "predicted step time (s)"
set logscale xy
set grid xtics ytics mxtics mytics
set key left top
set datafile separator "\t"
stats IN using 1:2 nooutput
lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.5
hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.5
set xrange [lo:hi]
set yrange [lo:hi]
set samples 200
plot '+' using 1:($1*0.9):($1*1.1) with filledcurves lc rgb "#d8e8d8" title "±10%", \
     x with lines lc rgb "#404040" dt 2 title "predicted = measured", \
     for [i=0:nsets-1] IN index i using 1:2 with points pt 7 ps 1.1 lc i+1 title columnheader(1) noenhanced
