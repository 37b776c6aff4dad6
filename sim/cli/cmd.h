/* Subcommand entry points. argv[0] is the command name; return value is the exit status
 * (0 ok, 1 failure of the work, 2 bad usage or input). */
#pragma once

typedef int (*SimCmdFn) (int argc, char **argv);

int sim_cmd_run (int argc, char **argv);
int sim_cmd_collective (int argc, char **argv);
int sim_cmd_topology (int argc, char **argv);
int sim_cmd_fit (int argc, char **argv);
int sim_cmd_calib_plan (int argc, char **argv);
int sim_cmd_goodput (int argc, char **argv);
int sim_cmd_straggler (int argc, char **argv);
int sim_cmd_compare (int argc, char **argv);
int sim_cmd_sweep (int argc, char **argv);
int sim_cmd_search (int argc, char **argv);
int sim_cmd_validate (int argc, char **argv);
int sim_cmd_sensitivity (int argc, char **argv);
int sim_cmd_import (int argc, char **argv);
