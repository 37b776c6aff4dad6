# Measured points and fitted curves of `trainsim fit --plot DIR`:
#   gnuplot -c plots/calib-fit.gp DIR/calib-KIND.tsv OUT.png
# IN holds datasets separated by two blank lines, in pairs per series: the measured points, then
# the fitted curve; each dataset's first row is its title. '# xlabel' and '# ylabel' lines name
# the axes (bus bandwidth vs message size for collectives, TFLOP/s vs work for GEMM/attention).
if (ARGC < 2) { print "usage: gnuplot -c calib-fit.gp IN OUT.png"; exit 1 }
IN = ARG1
OUT = ARG2
xl = system(sprintf("sed -n 's/^# xlabel\t//p' '%s'", IN))
yl = system(sprintf("sed -n 's/^# yl\\?abel\t//p' '%s'", IN))
kind = system(sprintf("sed -n 's/^# trainsim fit plot data: //p' '%s'", IN))
# Datasets = blank-line pairs + 1; series = datasets / 2.
nsets = int(system(sprintf("awk 'BEGIN{n=0;b=0} /^$/{b++; if (b==2) n++; next} {b=0} END{print n}' '%s'", IN)))
nseries = nsets / 2

set terminal pngcairo size 1100,700 enhanced font "Sans,11"
set output OUT
set title sprintf("trainsim fit: %s (points measured, lines fitted)", kind)
set xlabel xl
set ylabel yl
set logscale x
set format x "10^{%L}"
set grid xtics ytics mxtics
set key outside right top
set yrange [0:*]
set datafile separator "\t"
plot for [i=0:nseries-1] IN index 2*i using 1:2 with points pt 7 ps 0.8 lc i+1 title columnheader(1) noenhanced, \
     for [i=0:nseries-1] IN index 2*i+1 using 1:2 with lines lw 2 lc i+1 notitle
