/* `trainsim run`: placeholder until the scenario loader lands (replaced by its owner). */
#include <stdio.h>
#include "sim/cmd.h"

int
sim_cmd_run (int argc, char **argv)
{
  fprintf (stderr, "trainsim run: scenario loading is not built yet\n");
  return 1;
}
