#!/usr/bin/env python3
"""Compute beside communication on one GPU: how much a GEMM slows down while a bandwidth-bound
kernel holding c CTAs runs beside it, as NCCL's kernels run beside a training step's compute
(optional: needs PyTorch and Triton on the GPU node; nothing in trainsim's build or tests runs it).

The simulator slows compute that overlaps a communication stream by the profile's overlap_slowdown,
or by c/SMs where the communicator is capped to c CTAs (parallel.nccl_ctas_*, sim/step/runner.c):
the SMs the collective's CTAs hold are the GEMM's loss. This measures that on the device: a Triton
copy kernel launched first on its own stream with a grid of c persistent CTAs (each striding over a
1 GiB fp32 buffer, the way NCCL's channels stream their chunks), then a loop of cuBLAS GEMMs on the
default stream, timed with CUDA events against the same loop alone. The copy moves HBM at the rate
its c CTAs reach, an upper bound of what a collective's CTAs take from the HBM (a NIC-bound
all-reduce moves ~50 GB/s per GPU).

Output (TSV): per GEMM shape and c, the loop alone and beside the copy (us, median of 5), the slowdown,
c/SMs and c/(SMs - c) for comparison, the copy's bandwidth alone on c CTAs, and the loop beside c CTAs
that only spin (they hold their SMs and move nothing), to tell SMs held from HBM shared. Alone and
beside are measured in alternating pairs, each after the same 1 ms pause, so both see the same clocks
and power. Results and what they show: calib/results/README.md.
Usage: overlap.py [-o OUT.tsv] [--ctas 1,2,4,8,16,32,66]. Exit 77 without a CUDA device.
"""
import argparse
import statistics
import sys

from cuda_timing import cuda_or_skip, device_us, import_or_skip

torch, triton = import_or_skip("overlap.py", "torch", "triton")
import triton.language as tl  # noqa: E402 (after the skip rule)


@triton.jit
def copy_kernel(src, dst, n, reps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for _ in range(reps):
        for start in range(pid * BLOCK, n, nprog * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


@triton.jit
def spin_kernel(out, iters):
    # Holds its SM without touching HBM: a dependent chain of multiply-adds, one store at the end.
    x = tl.program_id(0).to(tl.float32)
    for _ in range(iters):
        x = x * 1.000001 + 1.0
    tl.store(out + tl.program_id(0), x)


BLOCK = 4096
REPS = 5


def copy_alone_us(src, dst, ctas, reps, stream):
    with torch.cuda.stream(stream):
        return device_us(torch, lambda: copy_kernel[(ctas,)](src, dst, src.numel(), reps, BLOCK=BLOCK, num_warps=16))


def gemm_loop_us(x, y, loops, beside=None):
    """The GEMM loop on the current stream; beside() launches the copy on its stream first."""
    if beside:
        beside()
    torch.cuda._sleep(2_000_000)  # ~1 ms: the copy's CTAs are resident before the GEMMs start (alone: the same pause)

    def loop():
        for _ in range(loops):
            torch.matmul(x, y)

    us = device_us(torch, loop)
    torch.cuda.synchronize()  # the copy beside, too
    return us


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output")
    ap.add_argument("--ctas", default="1,2,4,8,16,32,66")
    args = ap.parse_args()
    cuda_or_skip("overlap.py", torch)
    out = open(args.output, "w") if args.output else sys.stdout
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    print(f"# tool\tcalib/overlap.py\n# gpu\t{props.name}\n# sm_count\t{sms}\n# torch\t{torch.__version__}"
          f"\n# triton\t{triton.__version__}\n# copy\tTriton, {BLOCK} fp32 per step, 16 warps per CTA, 1 GiB"
          f"\n# timing\tCUDA events, median of {REPS} alternating pairs (alone, beside), each after a 1 ms pause;"
          f" the copy launched first on its own stream",
          file=out)
    print("gemm\tM\tN\tK\tctas\tgemm_alone_us\tgemm_beside_us\tslowdown\tctas_over_sms\tctas_over_rest"
          "\tcopy_alone_GBps\tgemm_beside_spin_us\tspin_slowdown", file=out)
    n = 1 << 28  # 1 GiB of fp32
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    side = torch.cuda.Stream()
    spin_out = torch.empty(1024, device="cuda")
    spin_kernel[(1,)](spin_out, 1000, num_warps=16)
    spin_rate = 1e7 / device_us(torch, lambda: spin_kernel[(1,)](spin_out, 10_000_000, num_warps=16))  # per us
    for (m, nn, k, loops) in ((8192, 8192, 8192, 20), (4096, 4096, 4096, 150), (2048, 12288, 12288, 20)):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(k, nn, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            gemm_loop_us(x, y, loops)
        for c in (int(v) for v in args.ctas.split(",")):
            copy_alone_us(src, dst, c, 1, side)  # compile and warm
            one = statistics.median(copy_alone_us(src, dst, c, 1, side) for _ in range(3))
            loop = gemm_loop_us(x, y, loops)
            reps = int(1.5 * loop / one) + 2  # the copy outlasts the GEMM loop
            spin_iters = int(1.5 * loop * spin_rate) + 1000

            def beside():
                with torch.cuda.stream(side):
                    copy_kernel[(c,)](src, dst, n, reps, BLOCK=BLOCK, num_warps=16)

            # Alone and beside alternate, so both meet the same clocks and power.
            pairs = [(gemm_loop_us(x, y, loops), gemm_loop_us(x, y, loops, beside)) for _ in range(REPS)]
            alone = statistics.median(p[0] for p in pairs)
            t = statistics.median(p[1] for p in pairs)

            def spin():
                with torch.cuda.stream(side):
                    spin_kernel[(c,)](spin_out, spin_iters, num_warps=16)

            spin_t = statistics.median(gemm_loop_us(x, y, loops, spin) for _ in range(REPS))
            gbps = 2 * 4 * n / one / 1e3
            print(f"bf16\t{m}\t{nn}\t{k}\t{c}\t{alone:.1f}\t{t:.1f}\t{t / alone - 1:.4f}\t{c / sms:.4f}"
                  f"\t{c / (sms - c):.4f}\t{gbps:.1f}\t{spin_t:.1f}\t{spin_t / alone - 1:.4f}", file=out, flush=True)


if __name__ == "__main__":
    main()
