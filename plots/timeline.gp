# Pipeline timeline of one step: a Gantt chart, one row per (rank, stream), forward, backward,
# communication and optimizer intervals coloured by kind; white gaps are bubbles.
# gnuplot -c plots/timeline.gp IN OUT
# IN: TSV, header row, then row (0-based lane), lane label, kind (forward | backward | compute |
# comm | optimizer), start_ms, end_ms, text (micro-batch number or collective; may be empty).
# trainsim run --plots writes it from the simulated step (compute not split into forward/backward).
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
set title "One training step: pipeline timeline (white = idle / bubble)"
set xlabel "time since step start (ms)"
set ylabel ""
stats IN using 1 nooutput
lanes = STATS_max + 1
stats IN using 5 nooutput
span = STATS_max
set yrange [lanes - 0.5 : -0.5]
set ytics () font ",12"
unset grid
set grid xtics lc rgb "#e0e0e0"
kindcolor(k) = (k eq "forward" || k eq "compute") ? 0x4c72b0 : k eq "backward" ? 0x55a868 : k eq "comm" ? 0xdd8452 : 0xda8bc3
split = int(system(sprintf("grep -c 'backward' '%s'", IN))) > 0
set style fill solid 1.0 noborder
set key outside top center horizontal
plot IN using (($4 + $5) / 2):1:(($5 - $4) / 2):(0.38):(kindcolor(strcol(3))):ytic(2) with boxxyerror lc rgb variable notitle, \
     IN using (($4 + $5) / 2):1:(($5 - $4) > 0.04 * span ? strcol(6) : "") with labels font ",9" tc rgb "#ffffff" notitle, \
     NaN with boxes lc rgb "#4c72b0" title (split ? "forward" : "compute"), NaN with boxes lc rgb "#55a868" title (split ? "backward" : ""), \
     NaN with boxes lc rgb "#dd8452" title "communication", NaN with boxes lc rgb "#da8bc3" title "optimizer"
