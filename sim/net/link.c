/* Directed network links: names of the link kinds (the topology numbers the links themselves). */
#include "config.h"
#include "sim/net/link.h"

const char *
sim_link_kind_name (SimLinkKind kind)
{
  static const char *const names[SIM_LINK_KIND_COUNT] = {
    [SIM_LINK_NVLINK_UP] = "nvlink-up",
    [SIM_LINK_NVLINK_DOWN] = "nvlink-down",
    [SIM_LINK_NIC_UP] = "nic-up",
    [SIM_LINK_NIC_DOWN] = "nic-down",
    [SIM_LINK_LEAF_UP] = "leaf-up",
    [SIM_LINK_LEAF_DOWN] = "leaf-down",
    [SIM_LINK_SPINE_UP] = "spine-up",
    [SIM_LINK_SPINE_DOWN] = "spine-down",
    [SIM_LINK_MESH] = "mesh",
  };
  if ((int) kind < 0 || kind >= SIM_LINK_KIND_COUNT)
    return "invalid";
  return names[kind];
}
