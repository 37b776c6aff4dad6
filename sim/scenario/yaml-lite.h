/* A reader for the block-mapping subset of YAML that NeMo's Megatron GPT configs use, for
 * `trainsim import nemo` (no YAML library is among trainsim's dependencies).
 *
 * Read: nested `key: value` mappings by indentation (spaces only), plain, 'single' and "double"
 * quoted scalars, `#` comments, block sequences of scalars (`- item`, also at the indentation of
 * their key, as NeMo writes `betas:`), sequence items that are one `key: value` pair (Hydra's
 * `defaults:` list), one-line flow sequences of scalars (`[0]`, `[]`) and `{}`, a leading `---`.
 * Scalars are kept as text; `${...}` interpolations and OmegaConf's `???` are kept unresolved and
 * flagged (sim_yaml_unresolved).
 *
 * Refused, with FILE:LINE: tabs in indentation, anchors, aliases, tags, block scalars (| and >),
 * multi-line plain or flow scalars, non-empty flow mappings, sequences of multi-line mappings,
 * several documents, directives, duplicate keys, and anything indented where no block may start. */
#pragma once
#include <glib.h>

#define SIM_YAML_ERROR (sim_yaml_error_quark ())
GQuark sim_yaml_error_quark (void);
typedef enum {
  SIM_YAML_ERROR_IO,          /* the file cannot be read */
  SIM_YAML_ERROR_SYNTAX,      /* not YAML, or outside the subset read here */
} SimYamlError;

typedef enum {
  SIM_YAML_SCALAR,
  SIM_YAML_MAP,               /* children carry keys, in file order */
  SIM_YAML_SEQ,               /* children have no key */
} SimYamlKind;

typedef struct SimYamlNode SimYamlNode;
struct SimYamlNode {
  SimYamlKind kind;
  char *key;                  /* its key in the parent mapping; NULL in a sequence or at the root */
  char *value;                /* SCALAR: the text, quotes removed and escapes applied */
  gboolean quoted;            /* SCALAR: written in quotes (so `"True"` is a string, not a bool) */
  int line;                   /* 1-based line of the key (or item) */
  GPtrArray *children;        /* MAP and SEQ: SimYamlNode *, owned */
  SimYamlNode *parent;
};

/* Parses TEXT (LEN bytes, or -1 for NUL-terminated); NAME is the FILE in error messages. The root
 * is a mapping (an empty document gives an empty one). */
SimYamlNode *sim_yaml_parse (const char *text, gssize len, const char *name, GError **error);
SimYamlNode *sim_yaml_parse_file (const char *path, GError **error);
void sim_yaml_free (SimYamlNode *node);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SimYamlNode, sim_yaml_free)

/* The node at a dotted path of mapping keys below MAP ("model.optim.name"), or NULL. */
const SimYamlNode *sim_yaml_lookup (const SimYamlNode *map, const char *path);
/* The dotted path of NODE from the root ("model.optim.name"); sequence items are "[i]". */
char *sim_yaml_path (const SimYamlNode *node);

/* Scalar reading, YAML 1.2 core schema as OmegaConf reads it. A quoted scalar is never null, bool
 * or a number. */
gboolean sim_yaml_is_null (const SimYamlNode *node);       /* plain null, Null, NULL, ~ or empty */
/* `${...}` anywhere in the text, or OmegaConf's mandatory-missing `???`: a value trainsim cannot
 * resolve (it needs the config's other files, the environment or resolvers). */
gboolean sim_yaml_unresolved (const SimYamlNode *node);
gboolean sim_yaml_get_bool (const SimYamlNode *node, gboolean *out);     /* true/True/TRUE, false/… */
gboolean sim_yaml_get_int (const SimYamlNode *node, gint64 *out);        /* decimal, no fraction */
gboolean sim_yaml_get_double (const SimYamlNode *node, double *out);     /* finite decimal or exponent */
