/* trainsim: one binary, subcommands. With no arguments it runs the embedded default scenario.
 * Each subcommand lives in sim/cmd_<name>.c and parses its own options with GOption. */
#include "config.h"
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "sim/cli/cmd.h"
#include "sim/des/heap.h"

typedef struct {
  const char *name;
  SimCmdFn fn;
  const char *summary;
} Command;

static const Command commands[] = {
  { "run", sim_cmd_run, "predict one scenario (files merged in order, then --set overrides)" },
  { "sweep", sim_cmd_sweep, "what-if grid over any scenario keys (--vary); scaling efficiency; MPI" },
  { "search", sim_cmd_search, "best valid parallelism plans under the memory limit, ranked; MPI" },
  { "collective", sim_cmd_collective, "predicted nccl-tests rows for one collective over a plan group" },
  { "topology", sim_cmd_topology, "build a scenario's cluster; print switches per tier, links, bisection" },
  { "fit", sim_cmd_fit, "fit a hardware profile layer from benchmark TSVs and nccl-tests output" },
  { "calib-plan", sim_cmd_calib_plan, "GEMM/attention shapes and collective sizes a scenario needs measured" },
  { "compare", sim_cmd_compare, "predicted vs measured step time and phases for a trainsim-trainer run" },
  { "straggler", sim_cmd_straggler, "step-time distribution under compute jitter and slow GPUs (--full)" },
  { "goodput", sim_cmd_goodput, "expected time to train and goodput under failures and checkpoints; cost" },
  { "validate", sim_cmd_validate, "predicted vs measured step time for every row of a validation deck" },
  { "sensitivity", sim_cmd_sensitivity, "how much the step moves per percent of each hardware and fabric constant" },
  { "import", sim_cmd_import, "a Megatron-LM argument list or NeMo config as a scenario; lists what is not mapped" },
};

static void
usage (FILE *out)
{
  fprintf (out, "Usage: trainsim [COMMAND] [OPTION…]\n\n"
                "Predicts LLM training step time, MFU and scaling on a GPU cluster.\n"
                "With no command: `trainsim run` on the embedded default scenario\n"
                "(MLPerf Training v3.1 GPT-3 175B on 10,752 H100).\n\nCommands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\n`trainsim COMMAND --help` describes each, as does its manual page trainsim-COMMAND(1).\n\n"
                "Options:\n"
                "  -h, --help       Show this help\n"
                "  -V, --version    Print the version and the git revision it was built from\n\n"
                "Any other option without a command is one of `trainsim run`, on the default scenario.\n");
}

int
main (int argc, char **argv)
{
  /* Only the character set: GLib converts --help text and option arguments between it and UTF-8,
   * and in the C locale prints '?' for every non-ASCII character (OPTION…). Numbers stay in the C
   * locale's format (LC_NUMERIC is left alone). */
  setlocale (LC_CTYPE, "");
  sim_heap_setup (argv);
  if (argc < 2 || argv[1][0] == '-')
    {
      if (argc >= 2 && (strcmp (argv[1], "--version") == 0 || strcmp (argv[1], "-V") == 0))
        {
          printf ("trainsim %s (git %s)\n", PACKAGE_VERSION, TRAINSIM_GIT_REV);
          return 0;
        }
      if (argc >= 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
        {
          usage (stdout);
          return 0;
        }
      /* Options without a command belong to `run` on the default scenario. */
      return sim_cmd_run (argc, argv);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      return commands[i].fn (argc - 1, argv + 1);
  fprintf (stderr, "trainsim: unknown command '%s'\n\n", argv[1]);
  usage (stderr);
  return 2;
}
