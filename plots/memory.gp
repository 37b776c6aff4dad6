# Memory per GPU of the fullest pipeline stage, stacked by kind, with the GPU's capacity.
# gnuplot -c plots/memory.gp IN OUT
# IN: TSV, header row, then: label, weights, grads, optimizer, activations, other (ZeRO-3 gather,
# embedding/head buffers, framework overhead), capacity, all GiB (trainsim sweep --plots: sweep-memory.tsv).
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
# The x label is the first column's name (the swept keys, or the plan fields).
xl = system(sprintf("awk -F'\t' '!/^#/ {print $1; exit}' '%s'", IN))
set title "Memory per GPU, by kind"
set ylabel "memory per GPU (GiB)"
set xlabel xl
set style data histograms
set style histogram rowstacked gap 1
set style fill solid 0.9 border rgb "#404040"
set boxwidth 0.7
set key outside right top vertical Left reverse
set xtics rotate by -45 left nomirror font ",12"
# Room under the plot for the rotated labels (about 0.3 character heights per character at -45°).
maxlen = int(system(sprintf("awk -F'\t' '!/^#/ && n++ {if (length($1) > m) m = length($1)} END {print m + 0}' '%s'", IN)))
set bmargin (5 + 0.33 * maxlen)
stats IN using 2 nooutput
if (STATS_records <= 4) { set xtics norotate center; set bmargin 5 }
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
array memcolor[5] = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#bdbdbd"]
array memname[5] = ["weights", "gradients", "optimizer states", "activations", "other (buffers, overhead)"]
plot for [i=2:6] IN using i:xtic(1) title memname[i-1] lc rgb memcolor[i-1], \
     IN using 0:7 with linespoints lw 3 pt 7 ps 1.2 lc rgb "#000000" dt 2 title "GPU capacity"
