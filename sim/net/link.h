/* A directed network link: capacity and latency. Links are numbered densely by the topology. */
#pragma once
#include <glib.h>

typedef enum {
  SIM_LINK_NVLINK_UP,    /* GPU -> NVSwitch (scale-up domain) */
  SIM_LINK_NVLINK_DOWN,  /* NVSwitch -> GPU */
  SIM_LINK_NIC_UP,       /* NIC -> leaf switch */
  SIM_LINK_NIC_DOWN,     /* leaf switch -> NIC */
  SIM_LINK_LEAF_UP,      /* leaf -> spine */
  SIM_LINK_LEAF_DOWN,    /* spine -> leaf */
  SIM_LINK_SPINE_UP,     /* spine -> core */
  SIM_LINK_SPINE_DOWN,   /* core -> spine */
  SIM_LINK_MESH,         /* GPU -> GPU, a direct link of a fully connected scale-up domain (Infinity Fabric) */
  SIM_LINK_KIND_COUNT
} SimLinkKind;

typedef struct {
  double bandwidth_bytes_per_s;
  gint64 latency_ns;
  SimLinkKind kind;
} SimLink;

const char *sim_link_kind_name (SimLinkKind kind);
