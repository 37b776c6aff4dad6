#!/usr/bin/env python3
"""The vendor kernels the frameworks call, timed through PyTorch on one GPU (optional: needs a CUDA
build of PyTorch on the GPU node; nothing in trainsim's build or tests runs it).

trainsim-bench-attention times an unfused attention and trainsim-bench-memory trainsim's own kernels;
what Megatron-Core and Transformer Engine run in a training step are cuDNN's fused attention, fused
multi-tensor optimizers and vendor norms. This script times those through PyTorch:

  sdpa     causal scaled-dot-product attention, bf16, forward and backward, per backend (cuDNN
           fused attention as TE uses it, and FlashAttention-2 as PyTorch ships it); FLOPs as the
           profiles count them: forward 4*B*H*S*S*D/2 (causal), backward 2.5x the forward
           (FlashAttention's convention, benchmarks/benchmark_flash_attention.py)
  launch   per-kernel cost of a chain of tiny kernels, eager (host launch each) and replayed from a
           CUDA graph
  adamw    torch.optim.AdamW(fused=True) over fp32 parameters: bytes as trainsim counts them (read
           grad, param, m, v; write param, m, v: 28 B per parameter)
  norm     layer_norm and rms_norm forward and backward over [tokens, hidden] bf16 (read x, write y;
           backward read x and dy, write dx)
  elementwise  the eager PyTorch kernels an unfused (eager) training step is made of, one 2^28-element
           tensor each: copy, add, mul, scale, silu, pow, casts bf16<->fp32, fp32 mul and rsqrt; and an
           eager Llama RMSNorm (x.float(), pow, mean, rsqrt, mul, type_as, * weight) over [16384, 4096]
           as one composite. GB/s counts the compulsory bytes (inputs read once, outputs written once)
  inductor the same chains through torch.compile (Inductor's generated kernels, as torchtitan's
           compiled runs get them): the Llama RMSNorm forward and forward + backward over [16384, 4096],
           SwiGLU's silu(a) * b over [16384, 14336], a residual add, and a rotate-half RoPE of
           [2, 8192, 32, 128]; compulsory bytes as above (only with --only inductor)
  sustained  a scenario's layer GEMMs (the PLAN's `gemm` lines of one scenario prefix, LM head left
           out) timed one by one as the GEMM benchmark does (L2 flushed, idle between) and back to back
           for --sustained seconds, as a training step runs them; their ratio is the GEMM throughput
           lost to sustained power and clocks, with the SM clock and board power read by NVML

Usage: torch-kernels.py [--shapes PLAN.tsv] [--sustained SECONDS] [--only SECTION,...] [-o OUT.tsv]. PLAN lines `attention NAME B H Hkv S D`
(the format `trainsim calib-plan` prints) are timed besides a sequence-length sweep. Median of 10
timed repetitions after 3 warm-ups, CUDA events; random inputs; exit 77 without a CUDA device.
"""
import argparse
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch-kernels.py: skipped: no PyTorch", file=sys.stderr)
    sys.exit(77)

WARMUP, REPS = 3, 10


def event_us(fn, during=None):
    """Microseconds of device time of fn(), between two CUDA events; during() runs on the host
    while the device works."""
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    if during:
        during()
    b.synchronize()
    return a.elapsed_time(b) * 1e3


def timed(fn, reps=REPS, warmup=WARMUP):
    """Median, p10, p90 in microseconds of fn() over reps, CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = sorted(event_us(fn) for _ in range(reps))
    return statistics.median(ts), ts[len(ts) // 10], ts[(9 * len(ts)) // 10]


def sdpa_rows(shapes, out):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash2", SDPBackend.FLASH_ATTENTION)]
    for name, b, h, hkv, s, d in shapes:
        fwd_flop = 4.0 * b * h * s * s * d / 2
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        # GQA: K and V expanded to the query heads outside the timing (the FLOPs are the same).
        k = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16)
        k = k.repeat_interleave(h // hkv, dim=1).detach().requires_grad_(True)
        v = v.repeat_interleave(h // hkv, dim=1).detach().requires_grad_(True)
        dout = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
        ref = None
        if b * h * s * s <= 2**31:
            with torch.no_grad(), sdpa_kernel([SDPBackend.MATH]):
                ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
        for bname, backend in backends:
            try:
                with sdpa_kernel([backend]):
                    with torch.no_grad():
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    err = float((o.float() - ref).norm() / ref.norm()) if ref is not None else float("nan")
                    fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    bwd = timed(lambda: torch.autograd.grad(o, (q, k, v), dout, retain_graph=True))
            except Exception as e:  # a backend that refuses the shape is reported, not fatal
                out.write(f"# sdpa {name} {bname}: not run: {type(e).__name__}: {str(e)[:160]}\n")
                continue
            for pas, (t, p10, p90), flop in (("fwd", fwd, fwd_flop), ("bwd", bwd, 2.5 * fwd_flop)):
                out.write(f"sdpa\t{name}\t{bname}\t{pas}\tbf16\t{b}\t{h}\t{hkv}\t{s}\t{d}\t{t:.3f}\t{p10:.3f}\t{p90:.3f}"
                          f"\t{flop / t / 1e6:.2f}\t{err:.2e}\n")
        del q, k, v, dout, ref
        torch.cuda.empty_cache()


def launch_rows(out):
    x = torch.zeros(1, device="cuda")
    n = 2000

    def chain():
        for _ in range(n):
            x.add_(1.0)
    t, p10, p90 = timed(chain, reps=5, warmup=2)
    out.write(f"launch\teager\t{n}\t{t:.1f}\t{t / n:.3f}\n")
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        chain()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        chain()
    t, p10, p90 = timed(g.replay, reps=5, warmup=2)
    out.write(f"launch\tgraph\t{n}\t{t:.1f}\t{t / n:.3f}\n")


def adamw_rows(out):
    for n_params in (250_000_000, 1_000_000_000):
        # 20 tensors, as a model's parameters are many tensors (the multi-tensor kernel's case).
        sizes = [n_params // 20] * 20
        ps = [torch.nn.Parameter(torch.randn(m, device="cuda")) for m in sizes]
        for p in ps:
            p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW(ps, lr=1e-4, fused=True)
        opt.step()  # creates m and v
        t, p10, p90 = timed(opt.step)
        byts = 28.0 * n_params
        out.write(f"adamw\tfused\t{n_params}\t{t:.1f}\t{p10:.1f}\t{p90:.1f}\t{byts / t / 1e3:.1f}\n")
        del ps, opt
        torch.cuda.empty_cache()


def norm_rows(out):
    for tokens, hidden in ((8192, 8192), (16384, 12288), (4096, 4096)):
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        bias = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn_like(x)
        e = x.numel() * 2.0
        for nname, fn in (("layer_norm", lambda: F.layer_norm(x, (hidden,), w, bias)),
                          ("rms_norm", lambda: F.rms_norm(x, (hidden,), w))):
            fwd = timed(fn)
            y = fn()
            bwd = timed(lambda: torch.autograd.grad(y, (x, w), dy, retain_graph=True))
            out.write(f"norm\t{nname}\tfwd\t{tokens}\t{hidden}\t{fwd[0]:.1f}\t{2 * e / fwd[0] / 1e3:.1f}\n")
            out.write(f"norm\t{nname}\tbwd\t{tokens}\t{hidden}\t{bwd[0]:.1f}\t{3 * e / bwd[0] / 1e3:.1f}\n")
        del x, w, bias, dy
        torch.cuda.empty_cache()


def elementwise_rows(out):
    n = 1 << 28
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    z = torch.empty_like(x)
    xf = x.float()
    yf = y.float()
    cases = (("copy", "bf16", lambda: z.copy_(x), 4), ("add", "bf16", lambda: x + y, 6),
             ("mul", "bf16", lambda: x * y, 6), ("scale", "bf16", lambda: x * 0.5, 4),
             ("silu", "bf16", lambda: F.silu(x), 4), ("pow", "bf16", lambda: x.pow(2), 4),
             ("cast_to_fp32", "bf16", lambda: x.float(), 6), ("cast_to_bf16", "fp32", lambda: xf.bfloat16(), 6),
             ("mul", "fp32", lambda: xf * yf, 12), ("rsqrt", "fp32", lambda: torch.rsqrt(xf.abs()), 8))
    for name, dt, fn, bytes_per_elem in cases:
        t = timed(fn)[0]
        out.write(f"elementwise\t{name}\t{dt}\t{n}\t{t:.1f}\t{bytes_per_elem * n / t / 1e3:.1f}\n")
    del x, y, z, xf, yf
    tokens, hidden = 16384, 4096
    a = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)

    def rmsnorm_eager():
        af = a.float()
        return (af * torch.rsqrt(af.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(a) * w

    t = timed(rmsnorm_eager)[0]
    out.write(f"elementwise\trmsnorm_eager_composite\tbf16\t{a.numel()}\t{t:.1f}\t{4.0 * a.numel() / t / 1e3:.1f}\n")
    del a, w
    torch.cuda.empty_cache()


def inductor_rows(out):
    tokens, hidden, ffn = 16384, 4096, 14336
    x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    r = torch.randn_like(x)
    w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    a = torch.randn(tokens, ffn, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    q = torch.randn(2, 8192, 32, 128, device="cuda", dtype=torch.bfloat16)
    cos = torch.randn(8192, 1, 128, device="cuda", dtype=torch.bfloat16)
    sin = torch.randn_like(cos)

    def rmsnorm(v, g):
        vf = v.float()
        return (vf * torch.rsqrt(vf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(v) * g

    def rope(t):
        t1, t2 = t.chunk(2, dim=-1)
        return t * cos + torch.cat((-t2, t1), dim=-1) * sin

    norm_c = torch.compile(rmsnorm)
    swiglu_c = torch.compile(lambda u, v: F.silu(u) * v)
    add_c = torch.compile(lambda u, v: u + v)
    rope_c = torch.compile(rope)
    dy = torch.randn_like(x)

    def norm_fwd_bwd():
        y = norm_c(x, w)
        torch.autograd.grad(y, (x, w), dy)

    e = x.numel()
    cases = (("rmsnorm_fwd", lambda: norm_c(x.detach(), w.detach()), 4.0 * e),
             ("rmsnorm_fwd_bwd", norm_fwd_bwd, 4.0 * e + 6.0 * e),  # backward: read x, dy; write dx
             ("swiglu", lambda: swiglu_c(a, b), 6.0 * a.numel()),
             ("residual_add", lambda: add_c(x.detach(), r), 6.0 * e),
             ("rope", lambda: rope_c(q), 4.0 * q.numel()))
    for name, fn, byts in cases:
        t = timed(fn)[0]
        out.write(f"inductor\t{name}\tbf16\t{int(byts)}\t{t:.1f}\t{byts / t / 1e3:.1f}\n")
    del x, r, w, a, b, q, cos, sin, dy
    torch.cuda.empty_cache()


def gemm_call(m, n, k, dtype):
    if dtype == "fp8":
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        return lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return lambda: a @ b


def nvml_read():
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return (pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0)
    except Exception:
        return (float("nan"), float("nan"))


def sustained_rows(plan, seconds, out):
    groups = {}
    for line in open(plan):
        f = line.split()
        if len(f) >= 7 and f[0] == "gemm" and "lm_head" not in f[1]:
            dt = f[6] if len(f) > 6 else "bf16"
            groups.setdefault(f[1].split(".")[0], []).append((f[1], int(f[2]), int(f[3]), int(f[4]), dt))
    flush = torch.empty(64 * 2**20, device="cuda", dtype=torch.uint8)
    for scen, gemms in groups.items():
        if scen not in ("gpt3-175b", "llama31-405b", "mpt-70b"):
            continue
        calls = [gemm_call(m, n, k, dt) for _, m, n, k, dt in gemms]
        flop = sum(2.0 * m * n * k for _, m, n, k, _ in gemms)
        iso = 0.0
        for c in calls:
            ts = []
            for _ in range(10):
                flush.fill_(1)
                torch.cuda.synchronize()
                time.sleep(0.002)
                ts.append(event_us(c))
            iso += statistics.median(ts)
        idle = nvml_read()
        loops = []
        t_end = time.time() + seconds
        busy = [idle]

        def twenty_loops():
            for _ in range(20):
                for c in calls:
                    c()
        while time.time() < t_end:
            # NVML is read while the 20 loops run
            loops.append(event_us(twenty_loops, lambda: busy.__setitem__(0, nvml_read())) / 20)
        tail = loops[len(loops) // 2:]
        sus = statistics.median(tail)
        dts = ",".join(sorted({g[4] for g in gemms}))
        out.write(f"sustained\t{scen}\t{dts}\t{len(gemms)}\t{iso:.1f}\t{sus:.1f}\t{iso / sus:.4f}\t"
                  f"{flop / sus / 1e6:.1f}\t{idle[0]}\t{busy[0][0]}\t{busy[0][1]:.0f}\t{len(loops) * 20}\n")
        out.flush()
        del calls
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", help="calib-plan file whose attention lines are timed too")
    ap.add_argument("--sustained", type=float, default=0.0,
                    help="seconds of back-to-back layer GEMMs per scenario of --shapes (0: not run)")
    ap.add_argument("--only", help="comma-separated sections to run (sdpa, launch, adamw, norm, elementwise, inductor; "
                    "default: all but inductor)")
    ap.add_argument("-o", "--out", help="TSV file (default stdout)")
    a = ap.parse_args()
    # inductor compiles (minutes where Triton is cold, none where it is missing): only when asked
    want = set(a.only.split(",")) if a.only else {"sdpa", "launch", "adamw", "norm", "elementwise"}
    if not torch.cuda.is_available():
        print("torch-kernels.py: skipped: no usable CUDA device", file=sys.stderr)
        return 77
    shapes = [(f"sweep-s{s}", 1, 32, 32, s, 128) for s in (1024, 2048, 4096, 8192, 16384)]
    shapes += [(f"sweep-d64-s{s}", 1, 32, 32, s, 64) for s in (2048, 8192)]
    if a.shapes:
        for line in open(a.shapes):
            f = line.split()
            if len(f) >= 7 and f[0] == "attention":
                shapes.append((f[1], int(f[2]), int(f[3]), int(f[4]), int(f[5]), int(f[6])))
    out = open(a.out, "w") if a.out else sys.stdout
    p = torch.cuda.get_device_properties(0)
    out.write(f"# tool\ttorch-kernels.py (trainsim calib/)\n# gpu\t{p.name}\n# sm_count\t{p.multi_processor_count}\n"
              f"# torch\t{torch.__version__}\n# cuda\t{torch.version.cuda}\n# cudnn\t{torch.backends.cudnn.version()}\n"
              f"# date\t{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n"
              f"# timing\tmedian of {REPS} after {WARMUP} warm-ups, CUDA events, random inputs\n")
    sections = (
        ("sdpa", "name\tbackend\tpass\tdtype\tB\tH\tHkv\tS\tD\ttime_us_median\ttime_us_p10\ttime_us_p90\tTFLOPS\t"
                 "rel_err_vs_fp32", lambda: sdpa_rows(shapes, out)),
        ("launch", "mode\tkernels\ttime_us\tus_per_kernel", lambda: launch_rows(out)),
        ("adamw", "impl\tparams\ttime_us_median\ttime_us_p10\ttime_us_p90\tGBps (28 B/param)", lambda: adamw_rows(out)),
        ("norm", "op\tpass\ttokens\thidden\ttime_us\tGBps", lambda: norm_rows(out)),
        ("elementwise", "op\tdtype\telements\ttime_us\tGBps (compulsory bytes)", lambda: elementwise_rows(out)),
        ("inductor", "op\tdtype\tcompulsory_bytes\ttime_us\tGBps", lambda: inductor_rows(out)),
    )
    for name, columns, run in sections:
        if name in want:
            out.write(f"# {name}\t{columns}\n")
            run()
            out.flush()
    if a.shapes and a.sustained > 0:
        out.write("# sustained\tscenario\tdtypes\tgemms\tisolated_sum_us\tsustained_loop_us\tisolated/sustained\t"
                  "sustained_TFLOPS\tsm_MHz_idle\tsm_MHz_busy\tpower_W_busy\tloops\n")
        sustained_rows(a.shapes, a.sustained, out)
    out.write("# result\tdone\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
