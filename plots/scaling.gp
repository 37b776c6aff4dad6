# Scaling efficiency against GPU count, with the ideal line, the predicted step time on the right
# axis, and measured points when a third file is given.
# gnuplot -c plots/scaling.gp IN OUT [MEASURED]
# IN: TSV with a '# scaling: weak|strong' comment and columns gpus, step_s, efficiency (fraction)
#     (trainsim sweep --plots: sweep-scaling.tsv).
# MEASURED (optional): TSV with columns gpus, efficiency (fraction), e.g. from a validation deck.
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
kind = system(sprintf("awk -F'\t' '/^# scaling:/ {print $2; exit}' '%s'", IN))
if (kind eq "") { kind = "weak" }
stats IN using 1:2 nooutput
gmin = STATS_min_x; gmax = STATS_max_x; smax = STATS_max_y
set title sprintf("%s scaling efficiency (base: the smallest scale)", kind eq "strong" ? "Strong" : "Weak")
set xlabel "GPUs"
set ylabel "scaling efficiency vs base (%)"
set y2label "predicted step time (s)"
set logscale x 2
set format x "%.0f"
set xrange [gmin / 1.3 : gmax * 1.3]
set yrange [0:110]
set y2range [0:smax * 1.8]
set ytics nomirror
set y2tics
set key bottom left box opaque
curves = "100 with lines lw 2 dt 2 lc rgb '#808080' title 'ideal (100%)', " . \
  "IN using 1:($3 * 100) with linespoints lw 3 pt 7 ps 1.5 lc rgb '#4c72b0' title 'predicted efficiency', " . \
  "IN using 1:2 axes x1y2 with linespoints lw 2 pt 5 ps 1.2 lc rgb '#dd8452' title 'predicted step time (right axis)'"
if (ARGC >= 3) {
  curves = curves . ", ARG3 using 1:($2 * 100) with points pt 9 ps 2.5 lc rgb '#c44e52' title 'measured (base: its smallest scale)'"
}
plot @curves
