/* Cost and energy of a training run; equations in sim/report/cost.h. */
#include "config.h"
#include <math.h>
#include "sim/report/cost.h"
#include "sim/net/topology.h"

#define HOURS_PER_YEAR 8766.0

static double
get (const SimScenario *sc, const char *key)
{
  double v = 0;
  if (!sim_scenario_get_number (sc, "cost", key, &v))
    return 0;
  return v;
}

gboolean
sim_cost_from_scenario (const SimScenario *sc, SimCostParams *out, GError **error)
{
  *out = (SimCostParams) { 0 };
  const SimClusterSpec *cl = sim_scenario_cluster (sc);
  out->gpus = cl->gpus;
  out->nodes = sim_scenario_run (sc)->nodes;
  out->nics = (double) cl->gpus * cl->nics_per_gpu;
  out->gpu_busy_w = get (sc, "gpu_busy_W");
  if (out->gpu_busy_w <= 0)
    out->gpu_busy_w = sim_scenario_gpu (sc)->tdp_w;
  out->gpu_idle_w = get (sc, "gpu_idle_W");
  out->utilization = get (sc, "gpu_utilization");
  out->node_w = get (sc, "node_W");
  out->nic_w = get (sc, "nic_W");
  out->switch_w = get (sc, "switch_W");
  out->pue = get (sc, "pue");
  out->usd_per_gpu_hour = get (sc, "usd_per_gpu_hour");
  out->capex_usd_per_gpu = get (sc, "capex_usd_per_gpu");
  out->amortization_years = get (sc, "amortization_years");
  out->usd_per_kwh = get (sc, "usd_per_kWh");
  out->kg_co2e_per_kwh = get (sc, "grid_kgCO2e_per_kWh");
  if (out->capex_usd_per_gpu > 0 && out->amortization_years <= 0)
    {
      g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_MISSING,
                   "[cost] amortization_years: capex_usd_per_gpu is set but not the years it is spread over; "
                   "set amortization_years");
      return FALSE;
    }
  if (out->gpu_idle_w > out->gpu_busy_w && out->gpu_busy_w > 0)
    {
      g_set_error (error, SIM_SCENARIO_ERROR, SIM_SCENARIO_ERROR_VALUE,
                   "[cost] gpu_idle_W: %g W idle is more than %g W busy; check both", out->gpu_idle_w,
                   out->gpu_busy_w);
      return FALSE;
    }
  if (out->switch_w > 0)
    {
      g_autoptr (SimTopology) topo = sim_topology_new (cl, sim_scenario_fabric (sc), error);
      if (!topo)
        return FALSE;
      SimTopologySummary sum;
      sim_topology_summarize (topo, &sum);
      out->switches = sum.switches[0] + sum.switches[1] + sum.switches[2];
    }
  return TRUE;
}

gboolean
sim_cost_is_set (const SimCostParams *p)
{
  return p->usd_per_gpu_hour > 0 || p->capex_usd_per_gpu > 0 || p->usd_per_kwh > 0 || p->kg_co2e_per_kwh > 0
         || p->node_w > 0 || p->nic_w > 0 || p->switch_w > 0;
}

void
sim_cost_compute (const SimCostParams *p, double step_s, double train_s, double wall_s, double tokens, SimCost *out)
{
  *out = (SimCost) { 0 };
  double gpu_w = p->gpu_idle_w + (p->gpu_busy_w - p->gpu_idle_w) * p->utilization;
  double rest_w = p->nodes * p->node_w + p->nics * p->nic_w + p->switches * p->switch_w;
  double pue = p->pue > 0 ? p->pue : 1;
  out->it_w = p->gpus * gpu_w + rest_w;
  out->idle_it_w = p->gpus * p->gpu_idle_w + rest_w;
  out->facility_w = out->it_w * pue;
  double kw_train = out->facility_w / 1000, kw_idle = out->idle_it_w * pue / 1000;
  /* Hourly price of the job while it holds the cluster; energy is priced only with capex. */
  double capex_per_hour = p->amortization_years > 0
                          ? p->gpus * p->capex_usd_per_gpu / (p->amortization_years * HOURS_PER_YEAR) : 0;
  gboolean cloud = p->usd_per_gpu_hour > 0;
  out->usd_per_hour = cloud ? p->gpus * p->usd_per_gpu_hour : capex_per_hour + kw_train * p->usd_per_kwh;

  double step_h = step_s / 3600;
  out->step_kwh = kw_train * step_h;
  out->step_usd = cloud ? p->gpus * p->usd_per_gpu_hour * step_h
                        : capex_per_hour * step_h + out->step_kwh * p->usd_per_kwh;
  out->step_kg_co2e = out->step_kwh * p->kg_co2e_per_kwh;

  double wall_h = MAX (wall_s, train_s) / 3600, train_h = train_s / 3600;
  out->run_hours = wall_h;
  out->run_kwh = kw_train * train_h + kw_idle * (wall_h - train_h);
  out->run_usd = cloud ? p->gpus * p->usd_per_gpu_hour * wall_h : capex_per_hour * wall_h + out->run_kwh * p->usd_per_kwh;
  out->run_kg_co2e = out->run_kwh * p->kg_co2e_per_kwh;
  if (tokens > 0)
    {
      double m = tokens / 1e6;
      out->mtok_kwh = out->run_kwh / m;
      out->mtok_usd = out->run_usd / m;
      out->mtok_kg_co2e = out->run_kg_co2e / m;
    }
}

void
sim_cost_write_section (FILE *out, const SimScenario *sc, double step_s, double time_to_train_s, const char *what)
{
  SimCostParams p;
  GError *error = NULL;
  if (!sim_cost_from_scenario (sc, &p, &error))
    {
      fprintf (out, "\n== Cost ==\nnot computed: %s\n", error->message);
      g_error_free (error);
      return;
    }
  if (!sim_cost_is_set (&p) || step_s <= 0)
    return;
  const SimScenarioRun *run = sim_scenario_run (sc);
  SimCost c;
  sim_cost_compute (&p, step_s, time_to_train_s, time_to_train_s, run->tokens, &c);
  fprintf (out, "\n== Cost (%s; no failures: see `trainsim goodput`) ==\n", what);
  fprintf (out, "power                IT %.1f kW, facility %.1f kW (PUE %.2f)\n", c.it_w / 1e3, c.facility_w / 1e3,
           p.pue > 0 ? p.pue : 1);
  fprintf (out, "per step             $%.4g, %.4g kWh, %.4g kgCO2e\n", c.step_usd, c.step_kwh, c.step_kg_co2e);
  if (time_to_train_s > 0)
    fprintf (out, "per run              $%.4g, %.4g kWh, %.4g kgCO2e\n", c.run_usd, c.run_kwh, c.run_kg_co2e);
  if (run->tokens > 0 && time_to_train_s > 0)
    fprintf (out, "per million tokens   $%.4g, %.4g kWh, %.4g kgCO2e\n", c.mtok_usd, c.mtok_kwh, c.mtok_kg_co2e);
}
