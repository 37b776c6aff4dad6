# Predicted against measured step time: one point per case, the y = x line and a ±10% band.
# gnuplot -c plots/predicted.gp IN OUT
# IN: TSV, header row, then case, measured_s, predicted_s.
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
set title "Predicted vs measured step time"
set xlabel "measured step time (s)"
set ylabel "predicted step time (s)"
set logscale xy
stats IN using 2:3 nooutput
lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.5
hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.5
set xrange [lo:hi]
set yrange [lo:hi]
set size ratio -1
set grid xtics ytics mxtics mytics lc rgb "#e0e0e0"
set key top left box opaque
plot x with lines lw 2 lc rgb "#404040" title "prediction = measurement", \
     1.1 * x with lines lw 1 dt 2 lc rgb "#808080" title "±10%", \
     0.9 * x with lines lw 1 dt 2 lc rgb "#808080" notitle, \
     IN using 2:3 with points pt 7 ps 1.6 lc rgb "#4c72b0" title "case", \
     IN using 2:3:1 with labels offset 1,0.6 left font ",10" notitle
