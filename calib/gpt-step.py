#!/usr/bin/env python3
"""One GPT micro-batch's compute on one GPU through PyTorch: a transformer layer forward and
backward, and the LM head with its cross-entropy, each timed with CUDA events (optional: needs
PyTorch on the GPU node; nothing in trainsim's build or tests runs it).

What it answers: how long the compute of a run without model parallelism takes on this GPU with
vendor kernels (cuBLAS GEMMs, cuDNN attention through scaled_dot_product_attention, PyTorch's own
norms, GELU and cross-entropy), to hold against what trainsim predicts for the same model (its
compute breakdown, `trainsim run … --trace`). The default is the Megatron-LM README's 1.7B (24
layers, hidden 2,048, 16 heads, sequence 4,096, vocabulary 131,072) at micro-batch 4 in BF16.
--sdpa names the attention kernel (PyTorch's SDPBackend: cudnn, flash for its FlashAttention-2,
efficient for the memory-efficient kernel of the xformers line, math); --no-bias drops the linear
layers' biases, as MPT's and Llama's layers have none.

Output (TSV): per part the milliseconds per call (median of --reps after warm-up) and the total for
--layers layers plus the head. Usage: gpt-step.py [--layers 24] [--hidden 2048] [--heads 16]
[--seq 4096] [--mbs 4] [--vocab 131072] [--sdpa auto|cudnn|flash|efficient|math] [--no-bias]
[--reps 10] [-o OUT.tsv]. Exit 77 without a CUDA device.
"""
import argparse
import contextlib
import statistics
import sys

from cuda_timing import cuda_or_skip, device_us, import_or_skip

(torch,) = import_or_skip("gpt-step.py", "torch")
import torch.nn.functional as F  # noqa: E402 (after the skip rule)


def timed_ms(fn, reps):
    """Median milliseconds of fn() over `reps` calls after 3 warm-ups."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    return statistics.median(device_us(torch, fn) / 1e3 for _ in range(reps))


class Layer(torch.nn.Module):
    def __init__(self, h, heads, bias):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(h, bias=bias)
        self.qkv = torch.nn.Linear(h, 3 * h, bias=bias)
        self.proj = torch.nn.Linear(h, h, bias=bias)
        self.ln2 = torch.nn.LayerNorm(h, bias=bias)
        self.fc1 = torch.nn.Linear(h, 4 * h, bias=bias)
        self.fc2 = torch.nn.Linear(4 * h, h, bias=bias)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--mbs", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=131072)
    ap.add_argument("--sdpa", default="auto", choices=("auto", "cudnn", "flash", "efficient", "math"))
    ap.add_argument("--no-bias", dest="bias", action="store_false")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    cuda_or_skip("gpt-step.py", torch)
    out = open(args.output, "w") if args.output else sys.stdout
    dev, dt = "cuda", torch.bfloat16
    b, s, h, v = args.mbs, args.seq, args.hidden, args.vocab
    layer = Layer(h, args.heads, args.bias).to(dev, dt)
    x = torch.randn(b, s, h, device=dev, dtype=dt, requires_grad=True)
    dy = torch.randn(b, s, h, device=dev, dtype=dt)

    def layer_fwd():
        with torch.no_grad():
            layer(x)

    def layer_fwd_bwd():
        layer(x).backward(dy)

    head = torch.randn(v, h, device=dev, dtype=dt, requires_grad=True)
    hx = torch.randn(b * s, h, device=dev, dtype=dt, requires_grad=True)
    labels = torch.randint(0, v, (b * s,), device=dev)

    def head_ce():
        logits = hx @ head.t()
        F.cross_entropy(logits.float(), labels).backward()

    props = torch.cuda.get_device_properties(0)
    print(f"# tool\tcalib/gpt-step.py\n# gpu\t{props.name}\n# torch\t{torch.__version__}\n# model\tlayers {args.layers}, "
          f"hidden {h}, heads {args.heads}, seq {s}, micro-batch {b}, vocab {v}, bf16 (cross-entropy in fp32), "
          f"{'biases' if args.bias else 'no biases'}\n# timing\tCUDA events, median of {args.reps} after 3 warm-ups"
          f"\n# sdpa\t{args.sdpa}",
          file=out)
    print("part\tms_per_call", file=out)
    if args.sdpa == "auto":
        kernel = contextlib.nullcontext()
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                 "math": "MATH"}
        kernel = sdpa_kernel(getattr(SDPBackend, names[args.sdpa]))
    with kernel:
        f = timed_ms(layer_fwd, args.reps)
        fb = timed_ms(layer_fwd_bwd, args.reps)
    hc = timed_ms(head_ce, args.reps)
    print(f"layer_forward\t{f:.3f}\nlayer_forward_backward\t{fb:.3f}\nhead_cross_entropy_forward_backward\t{hc:.3f}",
          file=out)
    print(f"total_micro_batch\t{args.layers * fb + hc:.3f}", file=out)


if __name__ == "__main__":
    main()
