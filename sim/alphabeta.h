/* Closed-form alpha-beta times of the collectives of sim/collective.h: the cross-check beside the flow
 * model and the cost model of the AUTO algorithm choice (as NCCL's tuner, which is also alpha-beta).
 *
 *   time = latency + bytes_on_the_busiest_link / achievable_rate
 *   latency = base_latency[algo] + steps_nvlink * (nvlink_step + nvlink hop) + steps_net * (net_step + net hop)
 *             + pipeline fill (broadcast chain, tree): (hops - 1) * chunk_bytes / B
 *
 * with Bn = nvlink line rate * nvlink_eff and Bi = NIC line rate * nic_eff per GPU, n ranks,
 * L members per NVLink domain, D domains (n = L*D when uniform):
 *   ring all-reduce      2(n-1)/n * S / R       R = Bn (D = 1); with C channels spreading the D domain
 *   ring RS / AG         (n-1)/n  * S / R       exits over the L rails: R = C * min(Bi/ceil(C/L),
 *   ring broadcast       S / R                  Bn/(C - floor(C/L)))  (= min(L*Bi, L/(L-1)*Bn), C = L)
 *   tree all-reduce      2S / B                 B = Bn (D = 1) or min(Bn, Bi): each rank sends S/2 up
 *                                               both trees and S down its interior tree
 *   NVLS all-reduce      (1+1/n) S / (Bn*nvls_eff)   per GPU: multimem ld_reduce serves S of reads and
 *                                               receives S/n; multimem st sends S/n, receives S
 *   NVLS RS / AG         S / (Bn*nvls_eff)
 *   hier all-reduce      2 (L-1)/L S/Bn + 2(D-1)/D (S/L)/Bi   (RS in domain, AR per rail, AG in domain)
 *   hier RS / AG         (L-1)/L S/Bn + (D-1)/D (S/L)/Bi
 *   direct all-to-all    max((L-1)/n S/Bn, (n-L)/n S/Bi)
 *   send/recv            S / (Bn or Bi)
 * Constants come from SimCollectiveProfile (sourced in scenarios/hardware/ files). */
#pragma once
#include <glib.h>
#include "sim/collective.h"

/* nccl-tests bus-bandwidth factor: busbw = algbw * factor. */
double sim_alphabeta_busbw_factor (SimCollectiveOp op, int n);
gboolean sim_alphabeta_applicable (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape);
/* The latency term alone (also used by the flow model, so both share it exactly); -1 if not applicable. */
gint64 sim_alphabeta_latency_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                                 const SimCollectiveProfile *profile);
/* Whole time in ns; -1 if the algorithm does not apply. One rank or zero bytes take 0 ns. */
gint64 sim_alphabeta_time_ns (SimCollectiveOp op, SimCollectiveAlgo algo, const SimCollectiveShape *shape,
                              const SimCollectiveProfile *profile, double bytes);
/* The fastest applicable algorithm (ties: the lower enum value); its time in *time_ns (may be NULL).
 * Returns SIM_COLLECTIVE_ALGO_AUTO if none applies. */
SimCollectiveAlgo sim_alphabeta_best (SimCollectiveOp op, const SimCollectiveShape *shape,
                                      const SimCollectiveProfile *profile, double bytes, gint64 *time_ns);
