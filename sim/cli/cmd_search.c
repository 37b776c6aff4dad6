/* `trainsim search SCENARIO…`: the best parallelism plans for the scenario's model, cluster and
 * global batch, under the GPU memory limit (sim/plan/search.h: space, stages, pruning rule).
 * Under `mpirun -n N` both stages are split over the ranks; rank 0 merges and prints, and the
 * output is identical to a serial run's (ties broken by enumeration order). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/cli/cmd.h"
#include "sim/plan/dist.h"
#include "sim/report/plots.h"
#include "sim/plan/progress.h"
#include "sim/step/runner.h"
#include "sim/plan/search.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static int
fail (const char *msg, int status)
{
  if (sim_dist_rank () == 0)
    fprintf (stderr, "trainsim search: %s\n", msg);
  sim_dist_finalize ();
  return status;
}

static GArray *
lines_to_candidates (GPtrArray *lines)
{
  GArray *a = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  for (guint i = 0; i < lines->len; i++)
    {
      SimSearchCandidate c = { 0 };
      if (sim_search_candidate_from_line (lines->pdata[i], &c))
        g_array_append_val (a, c);
    }
  return a;
}

/* The stage-2 evaluation: the step simulation of the plan (sim/step/runner.h), or the closed form again
 * with --no-simulate. A plan the simulation refuses (a collective the fabric cannot carry) is
 * dropped with the reason on stderr. */
static gboolean
confirm (const SimScenario *sc, gboolean simulate, SimSearchCandidate *c)
{
  if (!simulate)
    {
      c->confirmed_s = c->estimate_s;
      memcpy (c->confirmed_part_s, c->estimate.part_s, sizeof c->confirmed_part_s);
      return TRUE;
    }
  SimCollectiveProfile prof;
  SimRunnerOptions ro;
  sim_runner_options_init (&ro);
  ro.memory_overhead_bytes = sim_scenario_run (sc)->memory_overhead_bytes;
  ro.sensitivities = sim_runner_param_sigma_needed (sim_scenario_run (sc), sim_scenario_gpu (sc)); /* the band's term */
  SimRunnerResult r;
  GError *error = NULL;
  if (!sim_scenario_collective_profile (sc, &prof, &error)
      || !sim_runner_run (sim_scenario_shape (sc), &c->plan, sim_scenario_gpu (sc), sim_scenario_cluster (sc),
                          sim_scenario_fabric (sc), &prof, &ro, &r, &error))
    {
      g_autofree char *d = sim_search_describe_plan (&c->plan);
      fprintf (stderr, "trainsim search: %s: dropped: %s\n", d, error->message);
      g_error_free (error);
      return FALSE;
    }
  double vf = 1.0 + sim_scenario_run (sc)->virtualization_overhead;
  c->confirmed_s = r.step_ns * 1e-9 * vf;
  c->param_sigma = sim_runner_param_sigma (sim_scenario_run (sc), sim_scenario_gpu (sc), &r);
  for (int i = 0; i < SIM_EST_COUNT; i++)
    c->confirmed_part_s[i] = r.breakdown_s[i] * vf;
  c->estimate.mfu = r.mfu / vf;
  c->estimate.tokens_per_s = r.tokens_per_s / vf;
  return TRUE;
}

/* The parts where a beats b by the most, as "dp −0.120 s, bubble −0.010 s". */
static char *
why (const SimSearchCandidate *a, const SimSearchCandidate *b)
{
  int idx[SIM_EST_COUNT];
  double d[SIM_EST_COUNT];
  for (int i = 0; i < SIM_EST_COUNT; i++)
    idx[i] = i, d[i] = a->confirmed_part_s[i] - b->confirmed_part_s[i];
  for (int i = 0; i < SIM_EST_COUNT; i++)
    for (int j = i + 1; j < SIM_EST_COUNT; j++)
      if (fabs (d[idx[j]]) > fabs (d[idx[i]]))
        {
          int t = idx[i];
          idx[i] = idx[j], idx[j] = t;
        }
  GString *s = g_string_new (NULL);
  for (int k = 0; k < 3; k++)
    {
      int i = idx[k];
      if (fabs (d[i]) < 5e-4)
        break;
      g_string_append_printf (s, "%s%s %+.3f s", s->len ? ", " : "", sim_estimate_part_name (i), d[i]);
    }
  if (!s->len)
    g_string_append (s, "no part differs by 0.5 ms or more (tie broken by enumeration order)");
  return g_string_free (s, FALSE);
}

static gboolean
same_shape (const SimSearchCandidate *a, const SimSearchCandidate *b)
{
  const ModelPlan *x = &a->plan, *y = &b->plan;
  return a->confirmed_s == b->confirmed_s && x->tp == y->tp && x->pp == y->pp && x->vpp == y->vpp && x->cp == y->cp
         && x->dp == y->dp && x->ep == y->ep && x->micro_batch == y->micro_batch && x->recompute == y->recompute
         && x->tp_comm_overlap == y->tp_comm_overlap;
}

static void
write_heat (FILE *f, GArray *heat)
{
  fprintf (f, "# trainsim search: best estimated step per (tp, pp) over the plans that fit\ntp\tpp\tbest_step_s\n");
  for (guint i = 0; i < heat->len; i++)
    {
      SimSearchHeat *h = &g_array_index (heat, SimSearchHeat, i);
      fprintf (f, "%d\t%d\t%.6g\n", h->tp, h->pp, h->best_s);
    }
}

static int
cmp_heat (const void *a, const void *b)
{
  const SimSearchHeat *x = a, *y = b;
  return x->tp != y->tp ? x->tp - y->tp : x->pp - y->pp;
}

int
sim_cmd_search (int argc, char **argv)
{
  g_auto (GStrv) sets = NULL;
  g_auto (GStrv) files = NULL;
  g_autofree char *format_name = NULL, *plots_dir = NULL;
  int top = 10, confirm_n = 8, max_mbs = 8;
  double margin = 0.25;
  gboolean exhaustive = FALSE, verbose = FALSE, no_simulate = FALSE;
  GOptionEntry entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override one key after the files (repeatable)",
      "GROUP.KEY=VALUE" },
    { "top", 'n', 0, G_OPTION_ARG_INT, &top, "Plans to print (default 10)", "N" },
    { "margin", 0, 0, G_OPTION_ARG_DOUBLE, &margin,
      "Stage-2 window: plans within (1 + M) of the best estimate are confirmed (default 0.25)", "M" },
    { "confirm", 0, 0, G_OPTION_ARG_INT, &confirm_n, "At most K plans simulated in stage 2 (default 8)", "K" },
    { "max-micro-batch", 0, 0, G_OPTION_ARG_INT, &max_mbs, "Largest micro-batch tried (default 8)", "B" },
    { "exhaustive", 0, 0, G_OPTION_ARG_NONE, &exhaustive, "No lower-bound skip in stage 1", NULL },
    { "no-simulate", 0, 0, G_OPTION_ARG_NONE, &no_simulate,
      "Stage 2 repeats the closed form instead of simulating each plan (fast, less exact)", NULL },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &format_name, "Output format: text (default) or tsv", "FORMAT" },
    { "plots", 0, 0, G_OPTION_ARG_FILENAME, &plots_dir,
      "Write the TP x PP heat map and the winners' breakdown (TSV, PNG, SVG) into DIR", "DIR" },
    { "verbose", 0, 0, G_OPTION_ARG_NONE, &verbose, "Stage-1 counters on stderr", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[SCENARIO.ini...] - best parallelism plans");
  g_option_context_set_summary (ctx,
    "Enumerates every plan (tp, pp, vpp, cp, dp, ep, micro-batch, recompute, ZeRO/FSDP, TP\n"
    "overlap, placement order) of the scenario's model on its GPUs with its global batch,\n"
    "splitting layers that pp·vpp does not divide with the embedding and loss as layers or\n"
    "uneven first and last ranks (and trying DualPipe where the scenario runs it);\n"
    "keeps those that are valid and fit in memory, ranks them by a closed-form estimate,\n"
    "confirms the plans within --margin of the best (at most --confirm) and prints the top N\n"
    "with their breakdown and what separates them. Pruning rule: see sim/search.h.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autofree char *argv_text = g_strjoinv (" ", argv);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "trainsim search: %s\n(`trainsim search --help` lists the options)\n", error->message);
      g_error_free (error);
      return 2;
    }
  sim_dist_init (&argc, &argv);
  gboolean tsv = FALSE;
  if (format_name && strcmp (format_name, "tsv") == 0)
    tsv = TRUE;
  else if (format_name && strcmp (format_name, "text") != 0)
    return fail ("--format: use text or tsv", 2);
  if (top < 1 || confirm_n < 1 || max_mbs < 1 || !(margin >= 0))
    return fail ("--top, --confirm and --max-micro-batch must be positive, --margin >= 0", 2);
  g_autoptr (SimScenario) sc = sim_scenario_load ((const char *const *) files, (const char *const *) sets, &error);
  if (!sc)
    {
      int st = fail (error->message, 2);
      g_error_free (error);
      return st;
    }
  gboolean root = sim_dist_rank () == 0;
  SimSearchOptions o;
  sim_search_options_init (&o);
  o.margin = margin;
  o.confirm = (guint) confirm_n;
  o.max_micro_batch = max_mbs;
  o.exhaustive = exhaustive || plots_dir != NULL;
  o.rank = sim_dist_rank ();
  o.size = sim_dist_size ();
  g_autoptr (GArray) heat = plots_dir ? g_array_new (FALSE, FALSE, sizeof (SimSearchHeat)) : NULL;
  o.heat = heat;

  /* Stage 1 on this rank's share, then every survivor to rank 0. */
  g_autoptr (GArray) mine = g_array_new (FALSE, TRUE, sizeof (SimSearchCandidate));
  SimSearchStats st;
  gint64 t0 = g_get_monotonic_time ();
  sim_search_stage1 (sc, &o, mine, &st);
  double t1_s = (g_get_monotonic_time () - t0) / 1e6;
  double counts[4] = { (double) st.enumerated, (double) st.valid, (double) st.estimated, (double) st.no_fit };
  sim_dist_allreduce_sum (counts + 1, 3); /* every rank enumerates all; valid/estimated/no-fit are shares */
  if (verbose && root)
    fprintf (stderr, "stage 1: %.0f plans enumerated, %.0f valid, %.0f estimated, %.0f no-fit (of those checked), "
                     "%.3f s on rank 0\n", counts[0], counts[1], counts[2], counts[3], t1_s);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < mine->len; i++)
    g_ptr_array_add (lines, sim_search_candidate_to_line (&g_array_index (mine, SimSearchCandidate, i)));
  g_autoptr (GPtrArray) all_lines = g_ptr_array_new_with_free_func (g_free);
  sim_dist_gather_lines (lines, all_lines);
  g_autoptr (GPtrArray) heat_lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) heat_all = g_ptr_array_new_with_free_func (g_free);
  if (heat)
    {
      for (guint i = 0; i < heat->len; i++)
        {
          SimSearchHeat *h = &g_array_index (heat, SimSearchHeat, i);
          g_ptr_array_add (heat_lines, g_strdup_printf ("%d %d %.17g", h->tp, h->pp, h->best_s));
        }
      sim_dist_gather_lines (heat_lines, heat_all);
    }

  /* Stage 2: rank 0 selects, every rank confirms its share. */
  g_autofree char *selected_text = NULL;
  guint within = 0;
  if (root)
    {
      g_autoptr (GArray) merged = lines_to_candidates (all_lines);
      SimSearchOptions keep_all = o;
      keep_all.confirm = G_MAXUINT;
      sim_search_select (merged, &keep_all);
      within = merged->len;
      if (merged->len > o.confirm)
        g_array_set_size (merged, o.confirm);
      GString *s = g_string_new (NULL);
      for (guint i = 0; i < merged->len; i++)
        {
          g_autofree char *l = sim_search_candidate_to_line (&g_array_index (merged, SimSearchCandidate, i));
          g_string_append_printf (s, "%s\n", l);
        }
      selected_text = g_string_free (s, FALSE);
    }
  g_autofree char *sel = sim_dist_bcast_string (selected_text);
  g_auto (GStrv) sel_lines = g_strsplit (sel, "\n", -1);
  g_autoptr (GPtrArray) conf_lines = g_ptr_array_new_with_free_func (g_free);
  guint n_sel = 0;
  while (sel_lines[n_sel] && sel_lines[n_sel][0])
    n_sel++;
  g_autoptr (SimProgress) progress = sim_progress_new ("plans simulated (this rank)", (n_sel + o.size - 1) / o.size,
                                                       root && !no_simulate);
  guint done_here = 0;
  for (guint i = 0; i < n_sel; i++)
    if ((int) (i % (guint) o.size) == o.rank)
      {
        SimSearchCandidate c = { 0 };
        sim_search_candidate_from_line (sel_lines[i], &c);
        ModelPlan p = *sim_scenario_plan (sc);
        sim_search_merge_plan (&p, &c.plan);
        c.plan = p;
        if (confirm (sc, !no_simulate, &c))
          g_ptr_array_add (conf_lines, sim_search_candidate_to_line (&c));
        sim_progress_update (progress, ++done_here);
      }
  g_clear_pointer (&progress, sim_progress_free);
  g_autoptr (GPtrArray) conf_all = g_ptr_array_new_with_free_func (g_free);
  sim_dist_gather_lines (conf_lines, conf_all);
  if (!root)
    {
      sim_dist_finalize ();
      return 0;
    }
  g_autoptr (GArray) ranked = lines_to_candidates (conf_all);
  /* Lines carry only the searched fields: the rest of the plan is the scenario's. */
  for (guint i = 0; i < ranked->len; i++)
    {
      SimSearchCandidate *c = &g_array_index (ranked, SimSearchCandidate, i);
      ModelPlan p = *sim_scenario_plan (sc);
      sim_search_merge_plan (&p, &c->plan);
      c->plan = p;
    }
  sim_search_rank (ranked);

  const ModelPlan *own = sim_scenario_plan (sc);
  const SimScenarioRun *run = sim_scenario_run (sc);
  double steps = (double) run->steps;
  if (steps <= 0 && run->tokens > 0)
    steps = ceil (run->tokens / ((double) own->global_batch * sim_scenario_shape (sc)->seq_len));
  /* The scenario's own plan, for comparison. */
  SimEstimateHw hw;
  sim_estimate_hw_from_scenario (sc, &hw);
  SimSearchCandidate own_c = { 0 };
  own_c.plan = *own;
  GError *own_err = NULL;
  gboolean own_ok = sim_estimate_step (sim_scenario_shape (sc), own, &hw, TRUE, &own_c.estimate, &own_err);
  own_c.estimate_s = own_c.estimate.step_s;
  own_c.memory_bytes = own_c.estimate.memory_bytes;
  if (own_ok && !confirm (sc, !no_simulate, &own_c))
    {
      own_ok = FALSE;
      g_set_error (&own_err, MODEL_ERROR, MODEL_ERROR_INVALID_PLAN, "the step simulation refused it");
    }
  guint shown = MIN ((guint) top, ranked->len);
  const char *conf_name = no_simulate ? "closed form again (--no-simulate)" : "step simulation (sim/runner.c)";
  if (tsv)
    {
      printf ("# trainsim %s search\n# command: %s\n# stage 2: %s\n", PACKAGE_VERSION, argv_text, conf_name);
      printf ("rank\tstep_s\tstep_lo_s\tstep_hi_s\testimate_s\tmfu\tmemory_GiB\ttime_to_train_s\ttp\tpp\tvpp\tcp\tdp\tep\tmicro_batch\t"
              "recompute\tzero\tfsdp\ttp_overlap\torder");
      for (int i = 0; i < SIM_EST_COUNT; i++)
        printf ("\t%s_s", sim_estimate_part_name (i));
      printf ("\n");
      for (guint i = 0; i < shown; i++)
        {
          const SimSearchCandidate *c = &g_array_index (ranked, SimSearchCandidate, i);
          const ModelPlan *p = &c->plan;
          static const char *const rc[] = { "none", "selective", "full", "selective_op" };
          double lo = 0, hi = 0;
          if (!no_simulate)
            sim_runner_band (run, 0, c->confirmed_s, c->param_sigma, &lo, &hi);
          printf ("%u\t%.6g\t%.6g\t%.6g\t%.6g\t%.4f\t%.2f\t%.6g\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t", i + 1,
                  c->confirmed_s, lo, hi, c->estimate_s, c->estimate.mfu, c->memory_bytes / GIB,
                  steps > 0 ? run->init_s + steps * c->confirmed_s : 0.0, p->tp, p->pp, p->vpp, p->cp, p->dp, p->ep,
                  p->micro_batch, rc[p->recompute], p->zero, p->fsdp, p->tp_comm_overlap);
          for (int k = 0; k < MODEL_DIM_COUNT; k++)
            printf ("%s%s", k ? "," : "", model_dim_name (p->order[k]));
          for (int k = 0; k < SIM_EST_COUNT; k++)
            printf ("\t%.6g", c->confirmed_part_s[k]);
          printf ("\n");
        }
    }
  else
    {
      const ModelShape *shape = sim_scenario_shape (sc);
      printf ("Search: %s on %d GPUs, global batch %d x %d tokens\n", shape->name, own->gpus, own->global_batch,
              shape->seq_len);
      printf ("Space: tp, pp, cp dividing %d GPUs; vpp <= %d (layers split evenly, with embedding and loss as "
              "layers, or uneven first and last ranks%s); micro-batch <= %d; recompute none/selective/full; "
              "ZeRO 0-3, FSDP; TP overlap; order tp,cp,ep,dp,pp or tp,cp,ep,pp,dp\n",
              own->gpus, o.max_vpp, own->schedule == MODEL_SCHED_DUALPIPE ? "; DualPipe as the scenario" : "",
              o.max_micro_batch);
      printf ("Valid plans: %.0f of %.0f enumerated. Within %.0f%% of the best estimate: %u; ranked by stage 2: %u.\n",
              counts[1], counts[0], 100.0 * margin, within, ranked->len);
      printf ("Stage 1: closed-form estimate (sim/estimate.c). Stage 2: %s.\n\n", conf_name);
      printf ("%4s %9s %-15s %6s %8s %9s  %s\n", "rank", "step s", "90% band s", "MFU %", "mem GiB", "TTT h", "plan");
      for (guint i = 0, printed = 0; i < ranked->len && printed < (guint) top; i++, printed++)
        {
          const SimSearchCandidate *c = &g_array_index (ranked, SimSearchCandidate, i);
          g_autofree char *d = sim_search_describe_plan (&c->plan);
          /* Plans of the same step that differ only in placement order or ZeRO/FSDP are one line. */
          guint same = 0;
          while (i + 1 + same < ranked->len && same_shape (c, &g_array_index (ranked, SimSearchCandidate, i + 1 + same)))
            same++;
          double lo = 0, hi = 0;
          g_autofree char *band = !no_simulate && sim_runner_band (run, 0, c->confirmed_s, c->param_sigma, &lo, &hi)
                                      ? g_strdup_printf ("%.4f–%.4f", lo, hi)
                                      : g_strdup ("-");
          printf ("%4u %9.4f %-15s %6.1f %8.1f %9.2f  %s\n", i + 1, c->confirmed_s, band, 100.0 * c->estimate.mfu,
                  c->memory_bytes / GIB, steps > 0 ? (run->init_s + steps * c->confirmed_s) / 3600.0 : 0.0, d);
          if (same > 0)
            printf ("%4s   (and %u more with the same step: other placement order or ZeRO/FSDP, ranks %u-%u)\n", "",
                    same, i + 2, i + 1 + same);
          printf ("%4s   ", "");
          for (int k = 0; k < SIM_EST_COUNT; k++)
            if (c->confirmed_part_s[k] >= 5e-4 || k == SIM_EST_COMPUTE)
              printf ("%s %.3f  ", sim_estimate_part_name (k), c->confirmed_part_s[k]);
          printf ("\n");
          i += same;
        }
      if (ranked->len > 0)
        {
          const SimSearchCandidate *w = &g_array_index (ranked, SimSearchCandidate, 0);
          printf ("\nWhy #1 wins (its step minus the other's, per part):\n");
          guint k2 = 1;
          while (k2 < ranked->len && same_shape (w, &g_array_index (ranked, SimSearchCandidate, k2)))
            k2++;
          if (k2 < ranked->len)
            {
              const SimSearchCandidate *r2 = &g_array_index (ranked, SimSearchCandidate, k2);
              g_autofree char *d2 = sim_search_describe_plan (&r2->plan);
              g_autofree char *y = why (w, r2);
              printf ("  vs #%u (%s): %.4f s less: %s\n", k2 + 1, d2, r2->confirmed_s - w->confirmed_s, y);
            }
          g_autofree char *od = sim_search_describe_plan (own);
          if (own_ok)
            {
              g_autofree char *y = why (w, &own_c);
              printf ("  vs the scenario's plan (%s, %.4f s): %.4f s less: %s\n", od, own_c.confirmed_s,
                      own_c.confirmed_s - w->confirmed_s, y);
            }
          else
            printf ("  the scenario's plan (%s) is not a candidate: %s\n", od, own_err->message);
        }
      else
        printf ("No plan fits: raise the GPU count or the memory, or lower the global batch.\n");
    }
  g_clear_error (&own_err);
  int status = fflush (stdout) == 0 ? 0 : 1;
  if (plots_dir)
    {
      g_autofree char *hp = g_build_filename (plots_dir, "search-heat.tsv", NULL);
      g_autofree char *bp = g_build_filename (plots_dir, "search-top.tsv", NULL);
      FILE *f = NULL;
      g_autoptr (GArray) merged_heat = g_array_new (FALSE, FALSE, sizeof (SimSearchHeat));
      for (guint i = 0; i < heat_all->len; i++)
        {
          SimSearchHeat h;
          if (sscanf (heat_all->pdata[i], "%d %d %lf", &h.tp, &h.pp, &h.best_s) != 3)
            continue;
          guint k = 0;
          for (; k < merged_heat->len; k++)
            {
              SimSearchHeat *m = &g_array_index (merged_heat, SimSearchHeat, k);
              if (m->tp == h.tp && m->pp == h.pp)
                {
                  m->best_s = MIN (m->best_s, h.best_s);
                  break;
                }
            }
          if (k == merged_heat->len)
            g_array_append_val (merged_heat, h);
        }
      g_array_sort (merged_heat, cmp_heat);
      if (!sim_plots_prepare_dir (plots_dir, &error) || !(f = fopen (hp, "w")))
        status = 1;
      else
        {
          write_heat (f, merged_heat);
          fclose (f);
          if ((f = fopen (bp, "w")))
            {
              fprintf (f, "# trainsim search: top plans (one of each group of equal ones) and the scenario's plan\n"
                         "plan (rank: tp pp vpp cp micro-batch recompute ZeRO)");
              for (int k = 0; k < SIM_EST_COUNT; k++)
                fprintf (f, "\t%s_s", sim_estimate_part_name (k));
              fprintf (f, "\n");
              static const char *const rcs[] = { "none", "sel", "full", "sel_op" };
              guint printed = 0;
              for (guint i = 0; i < ranked->len && printed < shown; i++, printed++)
                {
                  const SimSearchCandidate *c = &g_array_index (ranked, SimSearchCandidate, i);
                  fprintf (f, "%u: tp%d pp%d vpp%d cp%d mbs%d rc-%s z%d", i + 1, c->plan.tp, c->plan.pp, c->plan.vpp,
                           c->plan.cp, c->plan.micro_batch, rcs[c->plan.recompute], c->plan.zero);
                  for (int k = 0; k < SIM_EST_COUNT; k++)
                    fprintf (f, "\t%.6g", c->confirmed_part_s[k]);
                  fprintf (f, "\n");
                  while (i + 1 < ranked->len && same_shape (c, &g_array_index (ranked, SimSearchCandidate, i + 1)))
                    i++;
                }
              if (own_ok)
                {
                  fprintf (f, "scenario: tp%d pp%d vpp%d cp%d mbs%d rc-%s z%d", own->tp, own->pp, own->vpp, own->cp,
                           own->micro_batch, rcs[own->recompute], own->zero);
                  for (int k = 0; k < SIM_EST_COUNT; k++)
                    fprintf (f, "\t%.6g", own_c.confirmed_part_s[k]);
                  fprintf (f, "\n");
                }
              fclose (f);
            }
          if (!sim_plots_render ("heatmap", hp, plots_dir, "search-heat", &error)
              || !sim_plots_render ("breakdown", bp, plots_dir, "search-breakdown", &error))
            status = 1;
        }
      if (error)
        {
          fprintf (stderr, "trainsim search: %s\n", error->message);
          g_clear_error (&error);
        }
    }
  sim_dist_finalize ();
  return status;
}
