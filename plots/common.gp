# Shared terminal set-up for the trainsim plots: `load` it after setting OUT. Slide size (1280x720),
# 14 pt fonts; PNG through cairo, SVG when OUT ends in .svg.
if (strstrt(OUT, ".svg") > 0) {
  set terminal svg size 1280,720 dynamic font "Sans,14" background rgb "white"
} else {
  set terminal pngcairo size 1280,720 font "Sans,14" background rgb "white"
}
set output OUT
set datafile separator "\t"
set datafile commentschars "#"
set datafile columnheaders
set border lw 1.2
set grid ytics lc rgb "#d0d0d0" lw 1
# One colour per step part, in the order of the breakdown columns
# (compute, TP, CP, PP, DP, EP, bubble, optimizer, slowdown).
array partcolor[9] = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#bdbdbd", "#da8bc3", "#8c8c8c"]
array partname[9] = ["compute", "TP comm", "CP comm", "PP comm", "DP comm", "EP comm", "pipeline bubble", "optimizer", "comm slowdown"]
