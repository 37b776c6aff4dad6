# plots/: gnuplot scripts, `gnuplot -c plots/x.gp IN OUT` (PNG through pngcairo, SVG when OUT ends
# in .svg). Installed for `--plots` of an installed trainsim; `make check-plots` renders every
# script on the fixtures in tests/data/ into plots-check/.
plotsdir = $(pkgdatadir)/plots
dist_plots_DATA = plots/common.gp plots/breakdown.gp plots/memory.gp plots/scaling.gp plots/heatmap.gp \
	plots/predicted.gp plots/timeline.gp
EXTRA_DIST += plots/bench-scale.gp tests/data/plot-bench-scale.tsv \
	tests/data/plot-breakdown.tsv tests/data/plot-search-top.tsv tests/data/plot-memory.tsv \
	tests/data/plot-scaling.tsv tests/data/plot-scaling-measured.tsv tests/data/plot-heat.tsv \
	tests/data/plot-predicted.tsv tests/data/plot-timeline.tsv

# script:fixture[:extra argument]
plot_checks = breakdown:plot-breakdown breakdown:plot-search-top memory:plot-memory \
	scaling:plot-scaling scaling:plot-scaling:plot-scaling-measured heatmap:plot-heat \
	predicted:plot-predicted timeline:plot-timeline bench-scale:plot-bench-scale

check-plots:
	@test -n "$(GNUPLOT)" || { echo "check-plots: gnuplot not found at configure time; install gnuplot-nox"; exit 1; }
	@mkdir -p plots-check; fail=0; \
	for c in $(plot_checks); do \
	  script=$${c%%:*}; rest=$${c#*:}; fixture=$${rest%%:*}; extra=""; \
	  case $$rest in *:*) extra="$(abs_srcdir)/tests/data/$${rest#*:}.tsv";; esac; \
	  name=$$fixture$${extra:+-measured}; \
	  for ext in png svg; do \
	    out=plots-check/$$name.$$ext; \
	    if $(GNUPLOT) -c $(srcdir)/plots/$$script.gp $(srcdir)/tests/data/$$fixture.tsv $$out $$extra 2>plots-check/$$name.log \
	       && test -s $$out && ! grep -qi 'warning\|error' plots-check/$$name.log; then \
	      echo "PASS: $$script.gp $$fixture -> $$out"; \
	    else echo "FAIL: $$script.gp $$fixture -> $$out"; sed 's/^/  /' plots-check/$$name.log; fail=1; fi; \
	  done; \
	done; exit $$fail
.PHONY: check-plots
