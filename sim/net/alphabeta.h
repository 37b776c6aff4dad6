/* Closed-form alpha-beta times of the collectives of sim/net/collective.h: the cross-check beside the flow
 * model and the cost model of the AUTO algorithm choice (as NCCL's tuner, which is also alpha-beta).
 *
 *   time = latency + bytes_on_the_busiest_link / achievable_rate
 *   latency = base_latency[algo] + steps_nvlink * (nvlink_step + nvlink hop) + steps_net * (net_step + net hop)
 *             where a ring with steps_net > 0 takes max(nvlink_step, k * net_overhead) per NVLink step
 *             (k = 3 Simple, 1 LL: NCCL tuning.cc, the proxy posts every step of a ring across nodes)
 *             + pipeline fill (broadcast chain, tree): one chunk over the longest path, each hop at its
 *               link's rate, less one hop (chunk = min(chunk_bytes, bytes per channel and tree))
 *
 * with Bn = nvlink line rate * nvlink_eff and Bi = NIC line rate * nic_eff per GPU, n ranks,
 * L members per NVLink domain, D domains (n = L*D when uniform):
 *   ring all-reduce      2(n-1)/n * S / R       R = Bn (D = 1); with C channels spreading the D domain
 *   ring RS / AG         (n-1)/n  * S / R       exits over the L rails: R = C * min(Bi/ceil(C/L),
 *   ring broadcast       S / R                  Bn/(C - floor(C/L)))  (= min(L*Bi, L/(L-1)*Bn), C = L)
 *   tree all-reduce      max(2 w S/(2C) / Bn,   NCCL's shape: per channel a double binary tree over
 *                          h g S/(2C) / Bi)     the D domains' heads, each chained to the other members
 *                                               of its domain; S/2 per tree. w: NVLink sends per tree
 *                                               of the busiest GPU over all chains (2(L-1) for C = L),
 *                                               g: most tree edges of one domain over both trees (4 for
 *                                               large D), h = ceil(C/L) channels headed by one GPU
 *   NVLS all-reduce      (1+1/n) S / (Bn*nvls_eff)   per GPU: multimem ld_reduce serves S of reads and
 *                                               receives S/n; multimem st sends S/n, receives S
 *   NVLS RS / AG         S / (Bn*nvls_eff)
 *   hier all-reduce      2 (L-1)/L S/Bn + 2(D-1)/D (S/L)/Bi   (RS in domain, AR per rail, AG in domain)
 *   hier RS / AG         (L-1)/L S/Bn + (D-1)/D (S/L)/Bi
 *   collnet all-reduce   max(2 (L-1)/L S/Bn, (S/L)/Bi) / collnet_eff   (NCCL CollNet Direct on a
 *                        fabric whose switches reduce, InfiniBand SHARP: each GPU scatters inside its
 *                        domain, sends its S/L shard up its NICs and gets the sum back, then gathers;
 *                        the stages pipeline. Latency: 2 (min(1, L-1) nvlink + (L-1) arity) + the
 *                        switches' round trip, tuning.cc's)
 *   direct all-to-all    max((L-1)/n S/Bn, (n-L)/n S/Bi)
 *   send/recv            S / (Bn or Bi)
 * Constants come from SimCollectiveProfile (sourced in scenarios/hardware/ files).
 *
 * Protocols: the above is NCCL's Simple protocol. Ring and tree also run LL (when the profile gives
 * ll_bw_fraction): the same steps at LL's base and step latencies, no pipeline fill, the transfer at
 * ll_bw_fraction of the rate. As NCCL's tuner, the time of an algorithm is that of its faster
 * protocol (sim_alphabeta_protocol), so tiny collectives pay microseconds, not Simple's latency. */
#pragma once
#include <glib.h>
#include "sim/net/collective.h"

/* nccl-tests bus-bandwidth factor: busbw = algbw * factor. */
double sim_alphabeta_busbw_factor (SimCollectiveOp op, int n);
gboolean sim_alphabeta_applicable (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape);
typedef enum { SIM_COLLECTIVE_PROTO_SIMPLE, SIM_COLLECTIVE_PROTO_LL } SimCollectiveProto;

/* The faster protocol of algo for this size (Simple where LL does not apply). */
SimCollectiveProto sim_alphabeta_protocol (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                                           const SimCollectiveProfile *profile, double bytes);
/* LL's latency term (ring and tree with ll_bw_fraction > 0; else -1). */
gint64 sim_alphabeta_ll_latency_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                                    const SimCollectiveProfile *profile);
/* The Simple protocol's latency term alone, without the fill (also used by the flow model, so both
 * share it exactly); -1 if not applicable. */
gint64 sim_alphabeta_latency_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                                 const SimCollectiveProfile *profile);
/* The pipeline fill of chains (broadcast) and trees for a size (see above); 0 for other algorithms. */
gint64 sim_alphabeta_fill_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                              const SimCollectiveProfile *profile, double bytes);
/* Whole time in ns (latency + fill + transfer) with the faster protocol; -1 if the algorithm does not
 * apply. One rank or zero bytes take 0 ns. */
gint64 sim_alphabeta_time_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                              const SimCollectiveProfile *profile, double bytes);
/* The binary tree of NCCL's double binary tree over n: parent of r (-1 for the root 0), and rank r's
 * place in tree t (t = 1: mirrored for even n, shifted by one for odd n, so leaves swap with inner
 * nodes). Shared by the closed form and the flow model. */
int sim_alphabeta_btree_parent (int r, int n);
int sim_alphabeta_dtree_rank (int t, int r, int n);
/* The fastest applicable algorithm among NCCL's (hier excluded: NCCL has none), each at its faster
 * protocol (ties: the lower enum value); its time in *time_ns (may be NULL). Returns
 * SIM_COLLECTIVE_ALGO_AUTO if none applies. */
SimCollectiveAlgo sim_alphabeta_best (SimCollectiveOp op, const SimCollectiveShape *shape,
                                      const SimCollectiveProfile *profile, double bytes, gint64 *time_ns);
