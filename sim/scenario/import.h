/* A trainsim scenario assembled from another framework's configuration (`trainsim import`): the
 * keys found, each with the input it came from, and every input that was not mapped, so that none
 * is dropped silently. The framework readers (import-megatron.h, import-nemo.h) fill it; the
 * command writes it as a scenario file and lists the rest on stderr.
 *
 * Three kinds of leftovers, each one line:
 *   ignored: X (no trainsim equivalent)   read and understood, no bearing on what trainsim predicts
 *                                          (paths, logging, learning rate, seeds, ...)
 *   unknown: X (why)                       matters for performance but has no trainsim key, or a
 *                                          value trainsim cannot express; or an input the reader
 *                                          does not know
 *   note: text                             a key derived, defaulted or left out, and why */
#pragma once
#include <stdio.h>
#include <glib.h>

#define SIM_IMPORT_ERROR (sim_import_error_quark ())
GQuark sim_import_error_quark (void);
typedef enum {
  SIM_IMPORT_ERROR_VALUE,     /* a value that is not what its input needs (a number, a choice) */
  SIM_IMPORT_ERROR_SYNTAX,    /* input that is not an argument list / config the reader takes */
  SIM_IMPORT_ERROR_IO,        /* an input file cannot be read */
} SimImportError;

/* What trainsim's own options add to the imported keys. */
typedef struct {
  const char *hardware;       /* a hardware profile: embedded name ("h100-sxm") or path; NULL: none */
  const char *fabric;         /* a fabric file: embedded name or path; NULL: none */
  int gpus;                   /* cluster size; 0: not given (a framework config may give it) */
  int vocab;                  /* tokenizer vocabulary, unpadded; 0: from the input where it can say */
} SimImportOptions;

typedef struct SimImport SimImport;

/* FRAMEWORK names the input in the file's header ("a Megatron-LM argument list"). */
SimImport *sim_import_new (const char *framework);
void sim_import_free (SimImport *imp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimImport, sim_import_free)

/* [GROUP] KEY = VALUE, FROM saying which input gave it ("--num-layers 96"; written as the key's
 * comment). Setting a key again replaces the value in place. The key must be in trainsim's key
 * table (sim_scenario_key); anything else is a programming error. */
void sim_import_set (SimImport *imp, const char *group, const char *key, const char *value, const char *from);
void sim_import_set_int (SimImport *imp, const char *group, const char *key, gint64 value, const char *from);
void sim_import_set_bool (SimImport *imp, const char *group, const char *key, gboolean value, const char *from);
/* The value set for a key, or NULL. */
const char *sim_import_get (const SimImport *imp, const char *group, const char *key);

void sim_import_ignored (SimImport *imp, const char *input);
void sim_import_unknown (SimImport *imp, const char *input, const char *why);
void sim_import_note (SimImport *imp, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* Whether TEXT appears in a key's FROM or a leftover line: readers check that every input they read
 * is accounted for somewhere. */
gboolean sim_import_mentions (const SimImport *imp, const char *text);

/* The leftovers, in the order found: "ignored: …", "unknown: …", "note: …" lines. */
guint sim_import_n_lines (const SimImport *imp);
const char *sim_import_line (const SimImport *imp, guint i);

/* The scenario file: a header naming INPUT (a file or "the command line"), [scenario] include of
 * the hardware and fabric when OPTS names them, [cluster] gpus when known (a comment saying what to
 * add when not), then the keys by group, each with its FROM; the unknown inputs and notes end the
 * file as comments. A hardware or fabric name without '/' and without ".ini" is an embedded file
 * (`embedded:hardware/NAME.ini`); a path is written absolute, so the file works from anywhere. */
char *sim_import_write (const SimImport *imp, const SimImportOptions *opts, const char *input);
