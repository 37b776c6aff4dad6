# bench/scale: wall time and peak RSS of one simulated step against GPU count, default (one rank
# per pipeline stage) and --full, log-log.
# gnuplot -c plots/bench-scale.gp IN OUT
# IN: bench/scale --tsv output (columns case, gpus, mode, wall_s, peak_rss_mib, ...).
IN = ARG1; OUT = ARG2
load sprintf("%s/common.gp", system(sprintf("dirname '%s'", ARG0)))
set title "trainsim: one GPT-3 175B step, simulated (bench/scale)"
set xlabel "GPUs"
set ylabel "wall time (s)"
set y2label "peak RSS (MiB)"
set logscale x 2
set logscale y 10
set logscale y2 10
set format x "%.0f"
set xtics rotate by -30
set ytics nomirror
set y2tics
set key top left box opaque
# One curve per mode: a pipe keeps each mode's rows, so its points join into a line.
def = sprintf("< awk -F'\t' '/^#/ || $1 == \"case\" || ($1 == \"gpt3-175b\" && $3 == \"default\")' '%s'", IN)
ful = sprintf("< awk -F'\t' '/^#/ || $1 == \"case\" || ($1 == \"gpt3-175b\" && $3 == \"full\")' '%s'", IN)
plot def using 2:4 with linespoints lw 3 pt 7 ps 1.5 lc rgb '#4c72b0' title 'wall, default', \
     ful using 2:4 with linespoints lw 3 pt 5 ps 1.5 lc rgb '#c44e52' title 'wall, --full', \
     def using 2:5 axes x1y2 with linespoints lw 2 dt 2 pt 6 ps 1.2 lc rgb '#4c72b0' title 'peak RSS, default (right)', \
     ful using 2:5 axes x1y2 with linespoints lw 2 dt 2 pt 4 ps 1.2 lc rgb '#c44e52' title 'peak RSS, --full (right)'
