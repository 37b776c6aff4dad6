#!/usr/bin/env python3
"""The attention curve of a hardware profile, fitted to calib/torch-kernels.py's sdpa rows (standard
library only; runs anywhere).

The simulator times a fused attention kernel at e_max * G / (G + G_half) of the BF16 peak, G the
kernel's causal FLOPs in GFLOP (forward 4*B*H*S*S*D/2, backward 2.5x that; sim/gpu/gpu.c). This fits
e_max and G_half to one backend's rows of one head dimension by Gauss-Newton on relative residuals,
forward and backward apart, and prints each with its 1-sigma (the covariance scaled by the residual
variance) and the rms relative residual: the attn_eff / attn_half_GFLOP (backend cudnn) and
attn_fa2_* (backend flash2) figures of scenarios/hardware/h100-sxm.ini and h200-sxm.ini.

Usage: fit-attention.py TSV [--backend cudnn|flash2] [--head-dim 128] [--peak-tflops 989]
"""
import argparse
import math
import sys


def rows(path, backend, direction, head_dim, peak):
    """(GFLOP, fraction of peak) of each matching sdpa row."""
    out = []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 11 or f[0] != "sdpa" or f[2] != backend or f[3] != direction or int(f[9]) != head_dim:
            continue
        b, h, s, d = int(f[5]), int(f[6]), int(f[8]), int(f[9])
        flops = 4.0 * b * h * s * s * d / 2 * (2.5 if direction == "bwd" else 1.0)
        out.append((flops / 1e9, flops / (float(f[10]) * 1e-6) / (peak * 1e12)))
    return out


def fit(points):
    """e_max, G_half, their 1-sigma and the rms relative residual."""
    e, g = 0.5, 30.0
    for _ in range(200):
        jtj = [[0.0, 0.0], [0.0, 0.0]]
        jtr = [0.0, 0.0]
        ss = 0.0
        for gf, y in points:
            r = (y - e * gf / (gf + g)) / y
            j = (gf / (gf + g) / y, -e * gf / (gf + g) ** 2 / y)
            ss += r * r
            for a in range(2):
                jtr[a] += j[a] * r
                for b in range(2):
                    jtj[a][b] += j[a] * j[b]
        det = jtj[0][0] * jtj[1][1] - jtj[0][1] ** 2
        inv = ((jtj[1][1] / det, -jtj[0][1] / det), (-jtj[0][1] / det, jtj[0][0] / det))
        de = inv[0][0] * jtr[0] + inv[0][1] * jtr[1]
        dg = inv[1][0] * jtr[0] + inv[1][1] * jtr[1]
        e, g = e + de, g + dg
        if abs(de) < 1e-12 and abs(dg) < 1e-9:
            break
    s2 = ss / (len(points) - 2)
    return e, g, math.sqrt(inv[0][0] * s2), math.sqrt(inv[1][1] * s2), math.sqrt(ss / len(points))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tsv")
    ap.add_argument("--backend", default="cudnn", choices=("cudnn", "flash2"))
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="the profile's BF16 peak")
    a = ap.parse_args()
    print("pass\tshapes\te_max\te_max_sigma\tG_half_GFLOP\tG_half_sigma\trms_pct")
    for direction in ("fwd", "bwd"):
        pts = rows(a.tsv, a.backend, direction, a.head_dim, a.peak_tflops)
        if len(pts) < 3:
            print(f"fit-attention.py: {a.tsv}: {len(pts)} {a.backend} {direction} rows of head dim {a.head_dim}, "
                  "need 3", file=sys.stderr)
            return 1
        e, g, se, sg, rms = fit(pts)
        print(f"{direction}\t{len(pts)}\t{e:.3f}\t{se:.3f}\t{g:.1f}\t{sg:.1f}\t{rms * 100:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
