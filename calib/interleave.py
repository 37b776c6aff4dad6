#!/usr/bin/env python3
"""A transformer layer's GEMMs back to back against the same GEMMs interleaved with the layer's
memory-bound kernels, on one GPU (optional: needs PyTorch on the GPU node; nothing in trainsim's
build or tests runs it).

The simulator times a step's GEMMs from the GEMM benchmark's curve and its memory-bound kernels at
an achieved HBM bandwidth, each kernel on its own, and the calibration fits one in-situ scale per
precision over both. Whether a GEMM that follows a norm or an activation runs as fast as one that
follows another GEMM (clocks, L2 contents, the tail of the previous kernel) decides how much of that
scale is the GEMMs' own. Three loops over the same tensors, each for --seconds, CUDA events:
  gemms   the layer's four GEMMs (QKV, projection, FC1, FC2) back to back
  memory  its memory-bound kernels alone: layer norm, residual add, layer norm, GELU, residual add
  layer   both in the layer's order
and layer / (gemms + memory), the cost of interleaving. Shapes: GPT-3 175B per TP-4 rank with
sequence parallelism gathered (2,048 tokens, hidden 12,288), BF16, the attention left out.

Usage: interleave.py [--seconds S] [-o OUT.tsv]. Exit 77 without a CUDA device.
"""
import argparse
import sys

from cuda_timing import cuda_or_skip, device_us, import_or_skip

(torch,) = import_or_skip("interleave.py", "torch")
import torch.nn.functional as F  # noqa: E402 (after the skip rule)


def loop_us(fn, seconds):
    """Mean microseconds per call of fn() over about `seconds` of back-to-back calls."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    n = max(1, int(seconds * 1e6 / max(device_us(torch, fn), 1.0)))

    def calls():
        for _ in range(n):
            fn()

    return device_us(torch, calls) / n, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    cuda_or_skip("interleave.py", torch)
    out = open(args.output, "w") if args.output else sys.stdout
    dev, dt = "cuda", torch.bfloat16
    t, h, tp = 2048, 12288, 4
    x = torch.randn(t, h, device=dev, dtype=dt)
    w_qkv = torch.randn(h, 3 * h // tp, device=dev, dtype=dt)
    w_proj = torch.randn(h // tp, h, device=dev, dtype=dt)
    w_fc1 = torch.randn(h, 4 * h // tp, device=dev, dtype=dt)
    w_fc2 = torch.randn(4 * h // tp, h, device=dev, dtype=dt)
    g = torch.ones(h, device=dev, dtype=dt)
    beta = torch.zeros(h, device=dev, dtype=dt)
    ctx = torch.randn(t, h // tp, device=dev, dtype=dt)

    def gemms():
        torch.matmul(x, w_qkv)
        torch.matmul(ctx, w_proj)
        a = torch.matmul(x, w_fc1)
        torch.matmul(a, w_fc2)

    act = torch.randn(t, 4 * h // tp, device=dev, dtype=dt)

    def memory():
        y = F.layer_norm(x, (h,), g, beta)
        y = y + x
        F.layer_norm(y, (h,), g, beta)
        F.gelu(act)
        y + x

    def layer():
        y = F.layer_norm(x, (h,), g, beta)
        torch.matmul(y, w_qkv)
        y = torch.matmul(ctx, w_proj) + x
        y = F.layer_norm(y, (h,), g, beta)
        a = F.gelu(torch.matmul(y, w_fc1))
        torch.matmul(a, w_fc2) + x

    props = torch.cuda.get_device_properties(0)
    print(f"# tool\tcalib/interleave.py\n# gpu\t{props.name}\n# torch\t{torch.__version__}\n# shapes\tGPT-3 175B per TP-4 rank,"
          f" {t} tokens, hidden {h}, bf16; attention left out\n# timing\tCUDA events over ~{args.seconds} s of"
          " back-to-back calls per loop", file=out)
    print("loop\tus_per_layer\tcalls", file=out)
    res = {}
    for name, fn in (("gemms", gemms), ("memory", memory), ("layer", layer), ("gemms_again", gemms)):
        us, n = loop_us(fn, args.seconds)
        res[name] = us
        print(f"{name}\t{us:.1f}\t{n}", file=out, flush=True)
    flop = 2 * t * h * (3 * h // tp + h // tp + 4 * h // tp + 4 * h // tp)
    print(f"# gemms TFLOP/s {flop / res['gemms'] / 1e6:.1f}; layer / (gemms + memory) "
          f"{res['layer'] / (res['gemms'] + res['memory']):.4f}", file=out)


if __name__ == "__main__":
    main()
