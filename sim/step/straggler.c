/* Stragglers: seeded per-op lognormal jitter and slow GPUs; see sim/step/straggler.h. */
#include "config.h"
#include <math.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include "sim/step/straggler.h"

struct SimStraggler {
  SimStragglerParams p;
  int gpus;
  gsl_rng *rng;
  double *speed;   /* per GPU: slow_factor or 1 */
  double mu;
  int n_slow;
  int n_links;
  double *link;           /* per link capacity factor */
  gboolean *scale_out;    /* per link: NIC/leaf/spine (drawn) or NVLink (left at 1) */
};

SimStraggler *
sim_straggler_new (const SimStragglerParams *p, int gpus, guint64 seed)
{
  g_return_val_if_fail (p != NULL && gpus > 0, NULL);
  g_return_val_if_fail (p->op_sigma >= 0 && p->gpu_sigma >= 0 && p->slow_fraction >= 0 && p->slow_fraction <= 1, NULL);
  SimStraggler *s = g_new0 (SimStraggler, 1);
  s->p = *p;
  if (s->p.slow_factor <= 0)
    s->p.slow_factor = 1;
  s->gpus = gpus;
  s->rng = gsl_rng_alloc (gsl_rng_mt19937);
  gsl_rng_set (s->rng, (unsigned long) seed);
  s->speed = g_new (double, gpus);
  s->mu = -p->op_sigma * p->op_sigma / 2;
  sim_straggler_resample (s);
  return s;
}

void
sim_straggler_free (SimStraggler *s)
{
  if (!s)
    return;
  gsl_rng_free (s->rng);
  g_free (s->speed);
  g_free (s->link);
  g_free (s->scale_out);
  g_free (s);
}

int
sim_straggler_resample (SimStraggler *s)
{
  int slow = 0;
  for (int g = 0; g < s->gpus; g++)
    {
      gboolean is_slow = s->p.slow_fraction > 0 && gsl_rng_uniform (s->rng) < s->p.slow_fraction;
      s->speed[g] = is_slow ? s->p.slow_factor : 1.0;
      if (s->p.gpu_sigma > 0)
        s->speed[g] *= gsl_ran_lognormal (s->rng, -s->p.gpu_sigma * s->p.gpu_sigma / 2, s->p.gpu_sigma);
      slow += is_slow;
    }
  s->n_slow = slow;
  if (s->n_links > 0)
    {
      int candidates = 0;
      for (int l = 0; l < s->n_links; l++)
        {
          s->link[l] = 1.0;
          if (!s->scale_out[l])
            continue;
          candidates++;
          if (s->p.link_sigma > 0)
            s->link[l] = MIN (1.0, gsl_ran_lognormal (s->rng, -s->p.link_sigma * s->p.link_sigma / 2,
                                                      s->p.link_sigma));
        }
      /* degraded_links distinct scale-out links, uniformly. */
      for (int k = 0; k < MIN (s->p.degraded_links, candidates); k++)
        {
          int pick;
          do
            pick = (int) gsl_rng_uniform_int (s->rng, (unsigned long) s->n_links);
          while (!s->scale_out[pick] || s->link[pick] < 0);
          s->link[pick] = -s->p.degraded_factor; /* marked; made positive below */
        }
      for (int l = 0; l < s->n_links; l++)
        if (s->link[l] < 0)
          s->link[l] = -s->link[l];
    }
  return slow;
}

void
sim_straggler_bind_links (SimStraggler *s, const SimTopology *topo)
{
  g_return_if_fail (s->p.degraded_factor > 0 || s->p.degraded_links == 0);
  s->n_links = sim_topology_n_links (topo);
  s->link = g_renew (double, s->link, s->n_links);
  s->scale_out = g_renew (gboolean, s->scale_out, s->n_links);
  for (int l = 0; l < s->n_links; l++)
    {
      SimLinkKind k = sim_topology_link (topo, l)->kind;
      s->scale_out[l] = k != SIM_LINK_NVLINK_UP && k != SIM_LINK_NVLINK_DOWN && k != SIM_LINK_MESH;
    }
  sim_straggler_resample (s);
}

double
sim_straggler_link_scale (gpointer user, int link)
{
  SimStraggler *s = user;
  return link >= 0 && link < s->n_links ? s->link[link] : 1.0;
}

int
sim_straggler_n_slow (const SimStraggler *s)
{
  return s->n_slow;
}

double
sim_straggler_scale (gpointer user, int gpu)
{
  SimStraggler *s = user;
  double f = gpu >= 0 && gpu < s->gpus ? s->speed[gpu] : 1.0;
  if (s->p.op_sigma > 0)
    f *= gsl_ran_lognormal (s->rng, s->mu, s->p.op_sigma);
  return f;
}
