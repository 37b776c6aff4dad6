/* sim/scenario/yaml-lite.h: the block-mapping subset NeMo configs use is read into the tree
 * (nesting, scalars and their quoting, comments, scalar sequences at or below their key, Hydra's
 * defaults items, flow [] and {}), and everything outside it is refused with FILE:LINE. */
#include <string.h>
#include <glib.h>
#include "sim/scenario/yaml-lite.h"

static SimYamlNode *
parse_ok (const char *text)
{
  GError *error = NULL;
  SimYamlNode *root = sim_yaml_parse (text, -1, "t.yaml", &error);
  g_assert_no_error (error);
  g_assert_nonnull (root);
  g_assert_cmpint (root->kind, ==, SIM_YAML_MAP);
  return root;
}

static const char *
value (const SimYamlNode *root, const char *path)
{
  const SimYamlNode *n = sim_yaml_lookup (root, path);
  g_assert_nonnull (n);
  g_assert_cmpint (n->kind, ==, SIM_YAML_SCALAR);
  return n->value;
}

static void
test_mappings_and_scalars (void)
{
  g_autoptr (SimYamlNode) root = parse_ok (
    "---\n"
    "# a comment line\n"
    "name: megatron_gpt   # trailing comment\n"
    "trainer:\n"
    "  devices: 8\n"
    "  precision: bf16\n"
    "\n"
    "model:\n"
    "    num_layers: 96\n"
    "    hidden_dropout: 0.0\n"
    "    lr: 6.0e-05\n"
    "    kv_channels: null\n"
    "    empty:\n"
    "    tilde: ~\n"
    "    flag: True\n"
    "    quoted_true: 'True'\n"
    "    dq: \"a # not a comment \\\"q\\\"\"\n"
    "    sq: 'it''s'\n"
    "    apostrophe: don't # comment\n"
    "    filename: 'megatron_gpt--{val_loss:.2f}-{step}'\n"
    "    interp: ${multiply:${model.tp}, ${model.pp}}\n"
    "    missing: ???\n"
    "    tokenizer:\n"
    "      type: GPT2BPETokenizer\n"
    "    after: 1\n");
  g_assert_cmpstr (value (root, "name"), ==, "megatron_gpt");
  g_assert_cmpstr (value (root, "trainer.precision"), ==, "bf16");
  gint64 i = 0;
  g_assert_true (sim_yaml_get_int (sim_yaml_lookup (root, "model.num_layers"), &i));
  g_assert_cmpint (i, ==, 96);
  double d = 1;
  g_assert_true (sim_yaml_get_double (sim_yaml_lookup (root, "model.hidden_dropout"), &d));
  g_assert_cmpfloat (d, ==, 0.0);
  g_assert_true (sim_yaml_get_double (sim_yaml_lookup (root, "model.lr"), &d));
  g_assert_cmpfloat_with_epsilon (d, 6e-5, 1e-18);
  g_assert_false (sim_yaml_get_int (sim_yaml_lookup (root, "model.lr"), &i));
  g_assert_true (sim_yaml_is_null (sim_yaml_lookup (root, "model.kv_channels")));
  g_assert_true (sim_yaml_is_null (sim_yaml_lookup (root, "model.empty")));
  g_assert_true (sim_yaml_is_null (sim_yaml_lookup (root, "model.tilde")));
  gboolean b = FALSE;
  g_assert_true (sim_yaml_get_bool (sim_yaml_lookup (root, "model.flag"), &b) && b);
  /* A quoted "True" is a string. */
  g_assert_false (sim_yaml_get_bool (sim_yaml_lookup (root, "model.quoted_true"), &b));
  g_assert_cmpstr (value (root, "model.dq"), ==, "a # not a comment \"q\"");
  g_assert_cmpstr (value (root, "model.sq"), ==, "it's");
  g_assert_cmpstr (value (root, "model.apostrophe"), ==, "don't");
  g_assert_cmpstr (value (root, "model.filename"), ==, "megatron_gpt--{val_loss:.2f}-{step}");
  g_assert_true (sim_yaml_unresolved (sim_yaml_lookup (root, "model.interp")));
  g_assert_cmpstr (value (root, "model.interp"), ==, "${multiply:${model.tp}, ${model.pp}}");
  g_assert_true (sim_yaml_unresolved (sim_yaml_lookup (root, "model.missing")));
  g_assert_false (sim_yaml_unresolved (sim_yaml_lookup (root, "model.num_layers")));
  g_assert_cmpstr (value (root, "model.tokenizer.type"), ==, "GPT2BPETokenizer");
  g_assert_cmpstr (value (root, "model.after"), ==, "1");
  const SimYamlNode *n = sim_yaml_lookup (root, "model.tokenizer.type");
  g_assert_cmpint (n->line, ==, 24);
  g_autofree char *path = sim_yaml_path (n);
  g_assert_cmpstr (path, ==, "model.tokenizer.type");
  g_assert_null (sim_yaml_lookup (root, "model.nothing"));
  g_assert_null (sim_yaml_lookup (root, "model.num_layers.deeper"));
}

static void
test_sequences (void)
{
  g_autoptr (SimYamlNode) root = parse_ok (
    "defaults:\n"
    "  - _self_\n"
    "  - optional tp_overlap@model.ub_tp_comm_overlap_cfg: ${oc.env:GPU_ARCH,h}100tp4\n"
    "  - optional other@x:\n"
    "optim:\n"
    "  betas:\n"
    "  - 0.9\n"
    "  - 0.98\n"
    "  ranks: [0]\n"
    "  trace: [nvtx, 'cuda']\n"
    "  none: []\n"
    "  cfg: {}\n"
    "  after: x\n");
  const SimYamlNode *d = sim_yaml_lookup (root, "defaults");
  g_assert_cmpint (d->kind, ==, SIM_YAML_SEQ);
  g_assert_cmpuint (d->children->len, ==, 3);
  const SimYamlNode *item = g_ptr_array_index (d->children, 1);
  g_assert_cmpint (item->kind, ==, SIM_YAML_MAP);
  const SimYamlNode *pair = g_ptr_array_index (item->children, 0);
  g_assert_cmpstr (pair->key, ==, "optional tp_overlap@model.ub_tp_comm_overlap_cfg");
  g_assert_true (sim_yaml_unresolved (pair));
  g_autofree char *path = sim_yaml_path (pair);
  g_assert_cmpstr (path, ==, "defaults[1].optional tp_overlap@model.ub_tp_comm_overlap_cfg");
  const SimYamlNode *betas = sim_yaml_lookup (root, "optim.betas");
  g_assert_cmpint (betas->kind, ==, SIM_YAML_SEQ);
  g_assert_cmpuint (betas->children->len, ==, 2);
  g_assert_cmpstr (((SimYamlNode *) g_ptr_array_index (betas->children, 1))->value, ==, "0.98");
  const SimYamlNode *trace = sim_yaml_lookup (root, "optim.trace");
  g_assert_cmpuint (trace->children->len, ==, 2);
  g_assert_true (((SimYamlNode *) g_ptr_array_index (trace->children, 1))->quoted);
  g_assert_cmpuint (sim_yaml_lookup (root, "optim.none")->children->len, ==, 0);
  g_assert_cmpint (sim_yaml_lookup (root, "optim.cfg")->kind, ==, SIM_YAML_MAP);
  g_assert_cmpstr (value (root, "optim.after"), ==, "x");
}

static void
test_empty_document (void)
{
  g_autoptr (SimYamlNode) a = parse_ok ("");
  g_assert_cmpuint (a->children->len, ==, 0);
  g_autoptr (SimYamlNode) b = parse_ok ("# only a comment\n\n");
  g_assert_cmpuint (b->children->len, ==, 0);
}

/* Each input outside the subset fails at the line named, with a word of the reason. */
static void
test_refused (void)
{
  static const struct {
    const char *text;
    int line;
    const char *reason;
  } cases[] = {
    { "a: 1\nb:\n\tc: 2\n", 3, "tab" },
    { "a: &anchor 1\n", 1, "anchor" },
    { "a: *alias\n", 1, "alias" },
    { "a: !!str 1\n", 1, "tag" },
    { "a: |\n  text\n", 1, "block scalar" },
    { "a: >\n  text\n", 1, "block scalar" },
    { "a: plain\n  continued\n", 2, "indentation" },
    { "a: [1,\n  2]\n", 1, "flow sequence" },
    { "a: {b: 1}\n", 1, "flow mapping" },
    { "a: [[1]]\n", 1, "nested flow" },
    { "a:\n  - b: 1\n    c: 2\n", 3, "mappings" },
    { "a:\n  -\n    b: 1\n", 2, "empty sequence item" },
    { "a:\n  - - 1\n", 2, "nested sequences" },
    { "a: 1\na: 2\n", 2, "duplicate key 'a'" },
    { "a: 1\n---\nb: 2\n", 2, "document" },
    { "%YAML 1.2\na: 1\n", 1, "directives" },
    { "- 1\n- 2\n", 1, "sequence" },
    { "a:\n    b: 1\n  c: 2\n", 3, "indentation" },
    { "just text\n", 1, "key: value" },
    { "a: 'open\n", 1, "unterminated" },
    { "a: \"x\\q\"\n", 1, "escape" },
    { "a: b: c\n", 1, "mapping inside a value" },
    { "a: 1\n - b\n", 2, "indentation" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GError *error = NULL;
      SimYamlNode *root = sim_yaml_parse (cases[i].text, -1, "bad.yaml", &error);
      g_assert_null (root);
      g_assert_error (error, SIM_YAML_ERROR, SIM_YAML_ERROR_SYNTAX);
      g_autofree char *prefix = g_strdup_printf ("bad.yaml:%d: ", cases[i].line);
      if (!g_str_has_prefix (error->message, prefix) || !strstr (error->message, cases[i].reason))
        g_error ("case %" G_GSIZE_FORMAT " (%s): '%s' lacks '%s' or '%s'", i, cases[i].text, error->message, prefix,
                 cases[i].reason);
      g_error_free (error);
    }
}

static void
test_scalar_types (void)
{
  g_autoptr (SimYamlNode) root = parse_ok ("a: 0x10\nb: nan\nc: inf\nd: yes\ne: '5'\nf: -3\ng: 1_000\n");
  double d;
  gint64 i;
  gboolean b;
  g_assert_false (sim_yaml_get_double (sim_yaml_lookup (root, "a"), &d));
  g_assert_false (sim_yaml_get_double (sim_yaml_lookup (root, "b"), &d));
  g_assert_false (sim_yaml_get_double (sim_yaml_lookup (root, "c"), &d));
  g_assert_false (sim_yaml_get_bool (sim_yaml_lookup (root, "d"), &b));
  g_assert_false (sim_yaml_get_int (sim_yaml_lookup (root, "e"), &i));
  g_assert_true (sim_yaml_get_int (sim_yaml_lookup (root, "f"), &i));
  g_assert_cmpint (i, ==, -3);
  g_assert_false (sim_yaml_get_int (sim_yaml_lookup (root, "g"), &i));
}

static void
test_file_errors (void)
{
  GError *error = NULL;
  g_assert_null (sim_yaml_parse_file ("/nonexistent/x.yaml", &error));
  g_assert_error (error, SIM_YAML_ERROR, SIM_YAML_ERROR_IO);
  g_clear_error (&error);
  static const char nul[] = "a: 1\0b: 2\n";
  g_assert_null (sim_yaml_parse (nul, sizeof nul - 1, "n.yaml", &error));
  g_assert_error (error, SIM_YAML_ERROR, SIM_YAML_ERROR_SYNTAX);
  g_clear_error (&error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/scenario/yaml-lite/mappings-and-scalars", test_mappings_and_scalars);
  g_test_add_func ("/scenario/yaml-lite/sequences", test_sequences);
  g_test_add_func ("/scenario/yaml-lite/empty-document", test_empty_document);
  g_test_add_func ("/scenario/yaml-lite/refused", test_refused);
  g_test_add_func ("/scenario/yaml-lite/scalar-types", test_scalar_types);
  g_test_add_func ("/scenario/yaml-lite/file-errors", test_file_errors);
  return g_test_run ();
}
