/* Renders the gnuplot scripts of plots/ (`gnuplot -c plots/NAME.gp IN OUT`, the output format from
 * OUT's extension) for `--plots DIR`: each plot as DIR/BASE.png (pngcairo) and DIR/BASE.svg.
 * Scripts are looked up in $TRAINSIM_PLOTS_DIR, then the source tree the binary was built from,
 * then the installed data directory. */
#pragma once
#include <glib.h>
#include "sim/step/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/report/trace.h"

/* Creates `dir` if needed. */
gboolean sim_plots_prepare_dir (const char *dir, GError **error);
/* Runs `gnuplot -c script_path in out [extra]` (extra NULL: none); gnuplot's stderr goes into the
 * error. Fails with a clear message when configure found no gnuplot. */
gboolean sim_plots_gnuplot (const char *script_path, const char *in, const char *out, const char *extra,
                            GError **error);
/* Renders plots/<script>.gp on `in_tsv` into dir/base.png and dir/base.svg. */
gboolean sim_plots_render (const char *script, const char *in_tsv, const char *dir, const char *base,
                           GError **error);

/* The same with a third script argument (e.g. measured points); extra NULL: none. */
gboolean sim_plots_render_with (const char *script, const char *in_tsv, const char *extra, const char *dir,
                                const char *base, GError **error);

/* `trainsim run --plots DIR`: run-breakdown (the simulated step's parts; skipped without a
 * prediction), run-memory (memory per GPU of every pipeline stage, at most 16 shown) and, with a
 * trace, run-timeline (the first 4 simulated ranks' streams). */
gboolean sim_plots_run (const char *dir, const SimScenario *sc, const SimRunnerPrediction *pred,
                        const SimTrace *trace, GError **error);
