/* Cost and energy of a training run.
 *
 *   P_gpu   = idle + (busy − idle) × utilization         (W; busy defaults to the GPU's tdp_W)
 *   P_IT    = gpus × P_gpu + nodes × node_W + nics × nic_W + switches × switch_W
 *   E_step  = step_s × P_IT × PUE                          (facility energy, J → kWh)
 *   $/h     = gpus × usd_per_gpu_hour                       (cloud price: power included), or
 *             gpus × capex_usd_per_gpu / (amortization_years × 8766 h) + facility kW × usd_per_kWh
 *   run     = the expected wall time with failures (sim/plan/goodput.h), or the plain time to train:
 *             training (work) at P_IT, the rest (init, checkpoints, lost work's restarts, waits) at
 *             P_idle_IT (GPUs idle) — lost work that is redone counts as training.
 *   CO2e    = kWh × grid_kgCO2e_per_kWh.
 * Per million tokens: run figures / (tokens trained / 10⁶). Figures come from [cost] (every one a
 * user input; scenarios/README.md). 8766 h is the mean year (365.25 days). */
#pragma once
#include <stdio.h>
#include <glib.h>
#include "sim/scenario/scenario.h"

typedef struct {
  double gpus, nodes, nics, switches;
  double gpu_busy_w, gpu_idle_w, utilization;
  double node_w, nic_w, switch_w, pue;
  double usd_per_gpu_hour;            /* > 0: cloud price (power included) */
  double capex_usd_per_gpu, amortization_years, usd_per_kwh;
  double kg_co2e_per_kwh;
} SimCostParams;

typedef struct {
  double it_w, idle_it_w;             /* cluster IT power while training / while GPUs idle */
  double facility_w;                  /* it_w × PUE */
  double usd_per_hour;                /* whole job */
  double step_kwh, step_usd, step_kg_co2e;
  double run_hours, run_kwh, run_usd, run_kg_co2e;
  double mtok_kwh, mtok_usd, mtok_kg_co2e;  /* per million tokens */
} SimCost;

/* Reads [cost] and counts components; switches from the scenario's fabric when switch_W > 0.
 * FALSE if capex is given without amortization_years or the GPU power is not known. */
gboolean sim_cost_from_scenario (const SimScenario *sc, SimCostParams *out, GError **error);
/* True when any price or power figure is set (otherwise there is nothing to report). */
gboolean sim_cost_is_set (const SimCostParams *p);
/* train_s: time spent training (steps × step time); wall_s: the run's wall time (>= train_s). */
void sim_cost_compute (const SimCostParams *p, double step_s, double train_s, double wall_s, double tokens,
                       SimCost *out);
/* A short "cost" section for the run report (nothing when [cost] sets no price or power; an error
 * in [cost] is printed as the section). `what` says which step time it is at. */
void sim_cost_write_section (FILE *out, const SimScenario *sc, double step_s, double time_to_train_s,
                             const char *what);
