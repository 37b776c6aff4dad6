/* `trainsim import megatron [OPTION…] -- ARGS…` and `trainsim import nemo [OPTION…] FILE.yaml`: a
 * framework's training configuration as a trainsim scenario (sim/scenario/import*.h does the
 * mapping). The scenario goes to -o FILE or stdout; what was not mapped goes to stderr.
 * Exit status: 0 written, 1 the output could not be written, 2 bad usage or input. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include "sim/cli/cmd.h"
#include "sim/scenario/import.h"
#include "sim/scenario/import-megatron.h"
#include "sim/scenario/import-nemo.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/yaml-lite.h"

static const char summary[] =
  "Writes a trainsim scenario from a framework's training configuration:\n"
  "[model] (shape, vocabulary, activation, norm, positions, MoE), [parallel] (TP, PP, VPP, CP, EP,\n"
  "SP, ZeRO/FSDP, batch, recompute, precision, overlaps, rank order), [training] (sequence length,\n"
  "steps, evaluation) and [cluster] gpus; each key is commented with the input it came from.\n"
  "\n"
  "  megatron  a Megatron-LM pretrain_gpt.py argument list after `--` (--flag value and\n"
  "            --flag=value), or in --args-file (a launch script's words; everything up to the\n"
  "            script.py is skipped). Meanings: Megatron-LM core_v0.15.0 arguments.py. Megatron\n"
  "            takes the GPU count from the launcher: give --gpus.\n"
  "  nemo      a NeMo Megatron GPT config YAML (the model: section of NeMo 1.x, the Megatron-Core\n"
  "            names it passes through, NeMo 2.x's model.config / trainer.strategy / data places;\n"
  "            trainer.num_nodes x trainer.devices GPUs). YAML read: block mappings, scalars,\n"
  "            comments, scalar sequences; anything else (anchors, tags, block scalars, ...) is\n"
  "            refused with FILE:LINE. ${...} interpolations and ??? are not resolved: reported.\n"
  "\n"
  "Not read: the hardware and the fabric (give --hardware and --fabric, else the file says what to\n"
  "include), Transformer Engine userbuffers settings (add a tp-overlap/*.ini layer), anything\n"
  "outside the configuration (environment variables, NCCL settings). On stderr, one line each:\n"
  "  ignored: X (no trainsim equivalent)   an input with no bearing on a step (paths, logging, LR)\n"
  "  unknown: X (why)                      matters for performance, but trainsim has no key for it\n"
  "                                        or cannot express its value; or an input not recognized\n"
  "  note: ...                             a key derived or left out, and why\n"
  "\n"
  "Exit status: 0 written, 1 the output could not be written, 2 bad usage, a value that is not a\n"
  "number or not one of its choices (named), or a YAML error (FILE:LINE).";

/* Checks that a --hardware/--fabric file exists and loads, as the scenario will include it. */
static gboolean
check_include (const char *dir, const char *name, GError **error)
{
  g_autofree char *path = NULL;
  if (!strchr (name, '/') && !g_str_has_suffix (name, ".ini"))
    path = g_strdup_printf ("embedded:%s/%s.ini", dir, name);
  else
    path = g_strdup (name);
  g_autoptr (SimScenario) sc = sim_scenario_new ();
  return sim_scenario_add_file (sc, path, error);
}

/* Loads the written scenario (when it names hardware and a fabric) and says whether it resolves;
 * errors name OUTPUT (or stdout) in place of the copy loaded. */
static void
check_written (const char *text, const char *output)
{
  g_autofree char *tmp = NULL;
  int fd = g_file_open_tmp ("trainsim-import-XXXXXX.ini", &tmp, NULL);
  if (fd < 0)
    return;
  g_close (fd, NULL);
  GError *error = NULL;
  if (g_file_set_contents (tmp, text, -1, NULL))
    {
      const char *files[] = { tmp, NULL };
      g_autoptr (SimScenario) sc = sim_scenario_load (files, NULL, &error);
      if (!sc)
        {
          g_autoptr (GString) msg = g_string_new (error->message);
          g_string_replace (msg, tmp, output ? output : "(stdout)", 0);
          fprintf (stderr, "note: the scenario does not resolve as written (add what it lacks): %s\n", msg->str);
        }
      g_clear_error (&error);
    }
  g_unlink (tmp);
}

int
sim_cmd_import (int argc, char **argv)
{
  /* Megatron's own options follow `--`; GOption sees only trainsim's. */
  int split = argc;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--") == 0)
      {
        split = i;
        break;
      }
  int own_argc = split;
  g_autofree char **own_argv = g_new0 (char *, split + 1);
  memcpy (own_argv, argv, sizeof (char *) * (gsize) split);
  char **own = own_argv;
  g_autofree char *output = NULL, *hardware = NULL, *fabric = NULL, *args_file = NULL;
  int gpus = 0, vocab = 0;
  g_auto (GStrv) rest = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the scenario to FILE (default: stdout)", "FILE" },
    { "hardware", 0, 0, G_OPTION_ARG_STRING, &hardware, "Include this hardware profile: an embedded name "
      "(h100-sxm, gb200, ...: trainsim run --list) or a file", "NAME|FILE" },
    { "fabric", 0, 0, G_OPTION_ARG_STRING, &fabric, "Include this fabric: an embedded name "
      "(ndr400-rail-optimized, ...) or a file", "NAME|FILE" },
    { "gpus", 0, 0, G_OPTION_ARG_INT, &gpus, "Cluster size ([cluster] gpus; NeMo: replaces num_nodes x devices)", "N" },
    { "vocab", 0, 0, G_OPTION_ARG_INT, &vocab, "Tokenizer vocabulary, unpadded (frameworks read it from the "
      "tokenizer's files)", "N" },
    { "args-file", 0, 0, G_OPTION_ARG_FILENAME, &args_file, "megatron: read the arguments from FILE (before "
      "those after --)", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("megatron [OPTION…] -- ARGS… | nemo [OPTION…] FILE.yaml "
                                                         "- a framework's configuration as a scenario");
  g_option_context_set_summary (ctx, summary);
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &own_argc, &own, &error))
    {
      fprintf (stderr, "trainsim import: %s\n(Megatron-LM arguments go after `--`; `trainsim import --help` lists "
                       "the options)\n", error->message);
      g_error_free (error);
      return 2;
    }
  const char *framework = rest ? rest[0] : NULL;
  gboolean megatron = framework && strcmp (framework, "megatron") == 0;
  gboolean nemo = framework && strcmp (framework, "nemo") == 0;
  if (!megatron && !nemo)
    {
      fprintf (stderr, "trainsim import: %s%s%s; use megatron or nemo (see --help)\n",
               framework ? "unknown framework '" : "which framework?", framework ? framework : "", framework ? "'" : "");
      return 2;
    }
  if (gpus < 0 || vocab < 0)
    {
      fprintf (stderr, "trainsim import: --%s %d: must be positive\n", gpus < 0 ? "gpus" : "vocab", gpus < 0 ? gpus : vocab);
      return 2;
    }
  if (megatron && (rest[1] || (split == argc && !args_file)))
    {
      fprintf (stderr, "trainsim import megatron: %s\nusage: trainsim import megatron [OPTION…] -- --num-layers 96 …\n",
               rest[1] ? "the Megatron-LM arguments go after `--`" : "no arguments: give them after `--` or in --args-file");
      return 2;
    }
  if (nemo && (!rest[1] || rest[2] || split < argc || args_file))
    {
      fprintf (stderr, "trainsim import nemo: give one config file (and no `--` arguments)\n"
                       "usage: trainsim import nemo [OPTION…] FILE.yaml\n");
      return 2;
    }
  for (int i = 0; i < 2; i++)
    {
      const char *name = i == 0 ? hardware : fabric;
      if (name && !check_include (i == 0 ? "hardware" : "fabrics", name, &error))
        {
          fprintf (stderr, "trainsim import: --%s %s: %s\n", i == 0 ? "hardware" : "fabric", name, error->message);
          g_error_free (error);
          return 2;
        }
    }
  SimImportOptions opts = { hardware, fabric, gpus, vocab };
  g_autoptr (SimImport) imp = NULL;
  g_autofree char *input = NULL;
  gboolean ok;
  if (megatron)
    {
      imp = sim_import_new ("a Megatron-LM argument list");
      g_autoptr (GStrvBuilder) words = g_strv_builder_new ();
      if (args_file)
        {
          g_auto (GStrv) from_file = sim_import_megatron_read_args (args_file, &error);
          if (!from_file)
            {
              fprintf (stderr, "trainsim import megatron: %s\n", error->message);
              g_error_free (error);
              return 2;
            }
          g_strv_builder_addv (words, (const char **) from_file);
        }
      for (int i = split + 1; i < argc; i++)
        g_strv_builder_add (words, argv[i]);
      g_auto (GStrv) all = g_strv_builder_end (words);
      input = args_file ? g_strdup (args_file) : g_strdup ("the command line");
      ok = sim_import_megatron (imp, (const char *const *) all, &opts, &error);
    }
  else
    {
      imp = sim_import_new ("a NeMo config");
      input = g_strdup (rest[1]);
      g_autoptr (SimYamlNode) root = sim_yaml_parse_file (rest[1], &error);
      ok = root && sim_import_nemo (imp, root, rest[1], &opts, &error);
    }
  if (!ok)
    {
      fprintf (stderr, "trainsim import %s: %s\n", framework, error->message);
      g_error_free (error);
      return 2;
    }
  for (guint i = 0; i < sim_import_n_lines (imp); i++)
    fprintf (stderr, "%s\n", sim_import_line (imp, i));
  g_autofree char *text = sim_import_write (imp, &opts, input);
  if (output)
    {
      if (!g_file_set_contents (output, text, -1, &error))
        {
          fprintf (stderr, "trainsim import: %s\n", error->message);
          g_error_free (error);
          return 1;
        }
    }
  else if (fputs (text, stdout) == EOF || fflush (stdout) != 0)
    {
      fprintf (stderr, "trainsim import: writing the scenario to stdout failed\n");
      return 1;
    }
  if (hardware && fabric)
    check_written (text, output);
  return 0;
}
