# Step-time breakdown, one stacked bar per plan or sweep point.
# gnuplot -c plots/breakdown.gp IN OUT
# IN: TSV, '#' comments, a header row, then: label, then the seconds of compute, TP, CP, PP, DP, EP,
# bubble, optimizer, slowdown (trainsim sweep/search --plots: sweep-breakdown.tsv, search-top.tsv).
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
# The x label is the first column's name (the swept keys, or the plan fields).
xl = system(sprintf("awk -F'\t' '!/^#/ {print $1; exit}' '%s'", IN))
stats IN using 2 nooutput
n = STATS_records
set title "Predicted step time and where it goes"
set ylabel "time per step (s)"
set xlabel xl
set style data histograms
set style histogram rowstacked gap 1
set style fill solid 0.9 border rgb "#404040"
set boxwidth 0.7
set key outside right top vertical Left reverse noautotitle
set xtics rotate by -45 left nomirror font ",12"
# Room under the plot for the rotated labels (about 0.3 character heights per character at -45°).
maxlen = int(system(sprintf("awk -F'\t' '!/^#/ && n++ {if (length($1) > m) m = length($1)} END {print m + 0}' '%s'", IN)))
set bmargin (5 + 0.33 * maxlen)
stats IN using 2 nooutput
if (STATS_records <= 4) { set xtics norotate center; set bmargin 5 }
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
# Parts that are zero everywhere stay out of the legend.
array used[9]
do for [i=2:10] { stats IN using i nooutput; used[i-1] = (STATS_max > 0) }
plot for [i=2:10] IN using i:xtic(1) title (used[i-1] ? partname[i-1] : "") lc rgb partcolor[i-1]
