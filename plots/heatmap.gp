# Search heat map: best predicted step time for each (TP, PP) over the plans that fit; empty
# cells have no valid plan that fits.
# gnuplot -c plots/heatmap.gp IN OUT
# IN: TSV, header row, then tp, pp, best_step_s (trainsim search --plots: search-heat.tsv).
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
set title "Best step time per tensor × pipeline parallel degree (closed-form estimate, plans that fit)"
set xlabel "tensor-parallel degree (TP)"
set ylabel "pipeline-parallel degree (PP)"
set cblabel "best step time (s)"
lg(x) = log(x) / log(2)
stats IN using (lg($1)):(lg($2)) nooutput
set xrange [STATS_min_x - 0.5 : STATS_max_x + 0.5]
set yrange [STATS_min_y - 0.5 : STATS_max_y + 0.5]
set xtics () ; set ytics ()
do for [i=0:16] { set xtics add (sprintf("%d", 2**i) i); set ytics add (sprintf("%d", 2**i) i) }
unset grid
set palette defined (0 "#1a9850", 1 "#fee08b", 2 "#d73027")
set logscale cb
set cbtics format "%.2g"
set key off
set size ratio -1
plot IN using (lg($1)):(lg($2)):(0.5):(0.5):3 with boxxyerror fs solid 1.0 border rgb "#ffffff" fc palette, \
     IN using (lg($1)):(lg($2)):(sprintf("%.3g", $3)) with labels font ",11" tc rgb "#000000"
