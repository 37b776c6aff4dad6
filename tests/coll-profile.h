/* Test helper (header-only): the collective constants of a scenarios/hardware + scenarios/fabrics pair,
 * read straight from the files so the accuracy tests use exactly what the scenarios use. */
#pragma once
#include <string.h>
#include <glib.h>
#include "sim/net/collective.h"

typedef struct {
  double nvlink_bw_bytes_per_s, nic_bw_bytes_per_s;
  int nics_per_gpu;
  gboolean nvls;
  gboolean mesh;   /* [hardware] scaleup_mesh: the node's GPUs linked directly (AMD Infinity Fabric) */
  gint64 nvlink_latency_ns, nic_latency_ns, hop_latency_ns;
} CollHw;

static double
coll_ini_double (GKeyFile *kf, const char *group, const char *key, double fallback)
{
  g_autoptr (GError) error = NULL;
  double v = g_key_file_get_double (kf, group, key, &error);
  return error ? fallback : v;
}

static GKeyFile *
coll_ini_load (const char *dir, const char *name)
{
  g_autofree char *file = g_strconcat (name, ".ini", NULL);
  g_autofree char *path = g_build_filename (g_getenv ("TRAINSIM_SRCDIR") ? g_getenv ("TRAINSIM_SRCDIR") : TRAINSIM_SRCDIR,
                                            "scenarios", dir, file, NULL);
  GKeyFile *kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &error))
    g_error ("%s: %s", path, error->message);
  return kf;
}

/* Defaults as in the key table of sim/scenario/scenario.c (the files give every key anyway). */
static void
coll_profile_load (const char *hardware, const char *fabric, SimCollectiveProfile *p, CollHw *hw)
{
  g_autoptr (GKeyFile) h = coll_ini_load ("hardware", hardware);
  g_autoptr (GKeyFile) f = coll_ini_load ("fabrics", fabric);
  memset (p, 0, sizeof *p);
  memset (hw, 0, sizeof *hw);
  p->nvlink_eff = coll_ini_double (h, "hardware", "nvlink_eff", 0);
  p->nvls_eff = coll_ini_double (h, "hardware", "nvls_eff", 0);
  gint64 base = (gint64) (coll_ini_double (h, "hardware", "coll_base_latency_us", 8.4) * 1e3 + 0.5);
  for (int a = 0; a < SIM_COLLECTIVE_ALGO_COUNT; a++)
    p->base_latency_ns[a] = base;
  p->base_latency_ns[SIM_COLLECTIVE_ALGO_NVLS] = (gint64) (coll_ini_double (h, "hardware", "nvls_latency_us", 25) * 1e3 + 0.5);
  p->nvlink_step_latency_ns = (gint64) (coll_ini_double (h, "hardware", "nvlink_step_latency_us", 3.4) * 1e3 + 0.5);
  p->chunk_bytes = coll_ini_double (h, "hardware", "coll_chunk_KiB", 512) * 1024;
  p->ll_base_latency_ns = (gint64) (coll_ini_double (h, "hardware", "ll_base_latency_us", 6.6) * 1e3 + 0.5);
  p->ll_nvlink_step_latency_ns = (gint64) (coll_ini_double (h, "hardware", "ll_nvlink_step_latency_us", 0.6) * 1e3 + 0.5);
  p->ll_bw_fraction = coll_ini_double (h, "hardware", "ll_bw_fraction", 0.25);
  p->ll_net_step_latency_ns = (gint64) (coll_ini_double (f, "fabric", "ll_net_step_latency_us", 2.7) * 1e3 + 0.5);
  p->ll_tree_net_step_latency_ns = (gint64) (coll_ini_double (f, "fabric", "ll_tree_net_step_latency_us", 5.0) * 1e3 + 0.5);
  p->nic_eff = coll_ini_double (f, "fabric", "nic_eff", 0);
  p->net_step_latency_ns = (gint64) (coll_ini_double (f, "fabric", "net_step_latency_us", 14) * 1e3 + 0.5);
  p->channels = (int) coll_ini_double (f, "fabric", "coll_channels", 0);
  hw->nvlink_bw_bytes_per_s = coll_ini_double (h, "hardware", "nvlink_unidir_GBps", 0) * 1e9;
  hw->nvls = g_key_file_get_boolean (h, "hardware", "nvls", NULL);
  hw->mesh = g_key_file_get_boolean (h, "hardware", "scaleup_mesh", NULL);
  hw->nic_bw_bytes_per_s = coll_ini_double (f, "cluster", "nic_Gbps", 0) * 1e9 / 8;
  hw->nics_per_gpu = (int) coll_ini_double (f, "cluster", "nics_per_gpu", 1);
  hw->nvlink_latency_ns = (gint64) (coll_ini_double (f, "cluster", "nvlink_latency_us", 0) * 1e3 + 0.5);
  hw->nic_latency_ns = (gint64) (coll_ini_double (f, "cluster", "nic_latency_us", 0) * 1e3 + 0.5);
  hw->hop_latency_ns = (gint64) (coll_ini_double (f, "fabric", "hop_latency_us", 0) * 1e3 + 0.5);
  g_assert_cmpfloat (p->nvlink_eff, >, 0);
  g_assert_cmpfloat (p->nic_eff, >, 0);
  g_assert_cmpfloat (hw->nvlink_bw_bytes_per_s, >, 0);
}

/* Profile constants (the same figures as scenarios/hardware/ files, with their sources there):
 * nvlink_eff 0.80: "about 20% protocol overhead" takes 450 GB/s to ~370 GB/s (NVIDIA, nccl-tests#212);
 * nic_eff 4096/4122: InfiniBand 4 KiB MTU payload with LRH 8 + BTH 12 + ICRC 4 + VCRC 2 header bytes;
 * nvls_eff 0.85 (Hopper), 0.74 (Blackwell): NCCL src/graph/tuning.cc nvlsEfficiency;
 * latencies: NCCL Simple protocol tuning (baseLat 8.4 us, NVLink ring step 3.4 us, net step 14 us,
 * NVLS 25 us). */
/* NCCL's LL protocol figures (src/graph/tuning.cc: baseLat Ring LL 6.6 us, hwLat NVLink LL 0.6 us,
 * NET ring LL 2.7 us, tree LL 5.0 us; LL at a quarter of Simple's bus bandwidth), as the key table's
 * defaults. */
G_GNUC_UNUSED static void
coll_profile_ll_nccl (SimCollectiveProfile *p)
{
  p->ll_base_latency_ns = 6600;
  p->ll_nvlink_step_latency_ns = 600;
  p->ll_net_step_latency_ns = 2700;
  p->ll_tree_net_step_latency_ns = 5000;
  p->ll_bw_fraction = 0.25;
}

G_GNUC_UNUSED static void
coll_profile_reference (SimCollectiveProfile *p, gboolean blackwell)
{
  memset (p, 0, sizeof *p);
  p->nvlink_eff = 0.80;
  p->nvls_eff = blackwell ? 0.74 : 0.85;
  p->nic_eff = 4096.0 / 4122.0;
  for (int a = 0; a < SIM_COLLECTIVE_ALGO_COUNT; a++)
    p->base_latency_ns[a] = 8400;
  p->base_latency_ns[SIM_COLLECTIVE_ALGO_NVLS] = 25000;
  p->nvlink_step_latency_ns = 3400;
  p->net_step_latency_ns = 14000;
  p->chunk_bytes = 512 * 1024;
}
