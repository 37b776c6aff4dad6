/* Stragglers: seeded per-op lognormal jitter and slow GPUs; see sim/straggler.h. */
#include "config.h"
#include <math.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include "sim/straggler.h"

struct SimStraggler {
  SimStragglerParams p;
  int gpus;
  gsl_rng *rng;
  double *speed;   /* per GPU: slow_factor or 1 */
  double mu;
  int n_slow;
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
  return slow;
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
