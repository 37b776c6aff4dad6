#!/usr/bin/env python3
"""DeepSpeed <= 0.3.16's ZeRO-3 tensor work around each gathered parameter, on one GPU without the network
(optional: needs PyTorch on a CUDA node; nothing in trainsim's build or tests runs it).

The SC21 ZeRO-3 rows of the validation deck (529.6B on 640-2,240 A100) are 17-27% slower than the
simulator, by about 43 s per step whatever the GPU count (174.6B: about 5 s; issue #18's closing notes).
sim/step/program.c prices the blocking fetch of DeepSpeed v0.3.13-v0.3.16 as: per parameter and list
collective, N eager ops of host time (eager_op_us, one per member of the rank list), plus 3 S of HBM
traffic for a gather (the zeroed flat tensor, the copies out of PyTorch's flat output) and 2 S for a
reduce-scatter (the copies into its flat input), S the parameter's bytes. This script measures those
pieces as one rank of N ranks does them, the collective itself left out:

  gather   partition_parameters.py _allgather_param: torch.zeros(S), torch.cuda.synchronize(), a Python
           loop of N narrow() views with the rank test; ProcessGroupNCCL's list all_gather (PyTorch <= 1.8):
           a flat output of S, then N copy_() of S/N out of it, in order on one stream
  rscatter _reduce_scatter_gradient: N narrow() views of the gradient; the list reduce_scatter: a flat
           input of S and N copy_() of S/N into it
Host time is the wall time of the Python loop and the launches (the device idle before), device time
the CUDA-event time of the copies; both per parameter and per member.

  alloc    the allocations of one 529.6B layer's forward, recompute and backward in DeepSpeed's order
           (per weight matrix: the zeroed tensor and the list buffer of its gather, freed at release;
           its gradient and the reduce-scatter's flat input), beside a resident block that leaves F GiB
           free: the caching allocator's num_alloc_retries and device allocations per layer and the
           time per layer, for whether freeing and re-mapping the cache costs what the rows lack.

Shapes: the weight matrices (fp16) of SC21's ZeRO-3 models, h = 12288 (174.6B) and 20480 (529.6B):
qkv 3h^2, proj h^2, fc1 and fc2 4h^2, at the paper's GPU counts. Output: TSV on stdout or -o.
Usage: zero3-lists.py [-o OUT.tsv] [--quick]. Exit 77 without PyTorch or a CUDA device.
"""
import argparse
import statistics
import sys
import time

from cuda_timing import cuda_or_skip, import_or_skip

(torch,) = import_or_skip("zero3-lists.py", "torch")

MODELS = ((12288, (384, 768, 1536)), (20480, (640, 1120, 2240)))
MATRICES = (("qkv", 3), ("proj", 1), ("fc1", 4), ("fc2", 4))
REPS = 5


def aligned(numel, n):
    return (numel + n - 1) // n * n


def get_rank():
    """torch.distributed.get_rank() of a one-process group where one could be made (main), else 0."""
    return 0


def gather_once(numel, n):
    """One _allgather_param and the list all_gather's copies; returns (host_us, device_us): the host's
    Python loop and launches after the synchronize, and the copies' device time."""
    size = aligned(numel, n)
    part = size // n
    flat = torch.zeros(size, dtype=torch.float16, device="cuda")
    torch.cuda.synchronize()  # partition_parameters.py: before every parameter's all_gather
    t1 = time.perf_counter()
    parts = []
    for i in range(n):
        parts.append(flat.narrow(0, part * i, part))
        if i == get_rank():  # DeepSpeed asks the process group for its rank at every member
            pass  # its own shard is then copied in, one copy of S/N, left out
    out = torch.empty(size, dtype=torch.float16, device="cuda")  # newLikeFlat
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for i in range(n):
        parts[i].copy_(out.narrow(0, part * i, part), non_blocking=True)
    b.record()
    t2 = time.perf_counter()
    b.synchronize()
    return (t2 - t1) * 1e6, a.elapsed_time(b) * 1e3


def rscatter_once(numel, n):
    """One _reduce_scatter_gradient's list and the list reduce_scatter's copies in."""
    size = aligned(numel, n)
    part = size // n
    grad = torch.empty(size, dtype=torch.float16, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    inputs = [grad.view(-1).narrow(0, i * part, part) for i in range(n)]
    flat = torch.empty(size, dtype=torch.float16, device="cuda")
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for i in range(n):
        flat.narrow(0, part * i, part).copy_(inputs[i], non_blocking=True)
    b.record()
    t1 = time.perf_counter()
    b.synchronize()
    return (t1 - t0) * 1e6, a.elapsed_time(b) * 1e3


def alloc_layer(h, n):
    """The allocations of one layer's forward, recompute and backward: returns seconds."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _pass in ("forward", "recompute"):
        for _name, k in MATRICES:
            size = aligned(k * h * h, n)
            w = torch.zeros(size, dtype=torch.float16, device="cuda")
            buf = torch.empty(size, dtype=torch.float16, device="cuda")
            del buf
            del w  # released after the module's forward
    for _name, k in reversed(MATRICES):
        size = aligned(k * h * h, n)
        w = torch.zeros(size, dtype=torch.float16, device="cuda")
        buf = torch.empty(size, dtype=torch.float16, device="cuda")
        del buf
        grad = torch.empty(size, dtype=torch.float16, device="cuda")
        flat = torch.empty(size, dtype=torch.float16, device="cuda")
        del flat, grad, w
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output")
    ap.add_argument("--quick", action="store_true", help="one repetition, the largest GPU count only")
    args = ap.parse_args()
    cuda_or_skip("zero3-lists.py", torch)
    global get_rank
    try:  # a one-process group, so that the rank test costs what DeepSpeed's did
        torch.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:29517", rank=0, world_size=1)
        get_rank = torch.distributed.get_rank
    except (RuntimeError, ValueError):
        pass
    out = open(args.output, "w") if args.output else sys.stdout
    props = torch.cuda.get_device_properties(0)
    reps = 1 if args.quick else REPS
    print(f"# tool\tcalib/zero3-lists.py\n# gpu\t{props.name}\n# memory_GiB\t{props.total_memory / 2**30:.1f}"
          f"\n# torch\t{torch.__version__}\n# timing\thost: perf_counter, device: CUDA events; median of {reps}",
          file=out)
    print("case\th\tmatrix\tnumel\tranks\thost_us\tdevice_us\thost_us_per_member\tdevice_us_per_member"
          "\tdevice_GBps", file=out, flush=True)
    for h, counts in MODELS:
        for n in counts[-1:] if args.quick else counts:
            for name, k in MATRICES:
                numel = k * h * h
                for case, fn in (("gather", lambda: gather_once(numel, n)), ("rscatter", lambda: rscatter_once(numel, n))):
                    fn()  # warm the allocator's cache for this size
                    runs = [fn() for _ in range(reps)]
                    host = statistics.median(r[0] for r in runs)
                    dev = statistics.median(r[1] for r in runs)
                    moved = 2.0 * 2 * aligned(numel, n)  # each copy reads and writes its S/N
                    print(f"{case}\t{h}\t{name}\t{numel}\t{n}\t{host:.1f}\t{dev:.1f}\t{host / n:.3f}\t{dev / n:.3f}"
                          f"\t{moved / dev / 1e3:.1f}", file=out, flush=True)
                torch.cuda.empty_cache()
    print("case\th\tranks\tfree_GiB\tlayer_ms\talloc_retries_per_layer\tdevice_allocs_per_layer", file=out)
    total = torch.cuda.get_device_properties(0).total_memory
    for free_gib in ((16,) if args.quick else (40, 24, 16, 12, 8)):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        hold = max(total - free_gib * 2**30 - torch.cuda.memory_reserved(), 0)
        try:
            resident = torch.empty(hold // 2, dtype=torch.float16, device="cuda")
        except RuntimeError:
            continue
        h, n = 20480, 640
        try:
            alloc_layer(h, n)  # warm
            s0 = torch.cuda.memory_stats()
            times = [alloc_layer(h, n) for _ in range(reps)]
            s1 = torch.cuda.memory_stats()
            retries = (s1.get("num_alloc_retries", 0) - s0.get("num_alloc_retries", 0)) / reps
            allocs = (s1.get("num_device_alloc", 0) - s0.get("num_device_alloc", 0)) / reps
            print(f"alloc\t{h}\t{n}\t{free_gib}\t{statistics.median(times) * 1e3:.1f}\t{retries:.2f}\t{allocs:.2f}",
                  file=out, flush=True)
        except RuntimeError as e:  # out of memory at this headroom: a layer does not fit
            print(f"alloc\t{h}\t{n}\t{free_gib}\tnan\tnan\tnan\t# {str(e).splitlines()[0]}", file=out, flush=True)
        del resident


if __name__ == "__main__":
    main()
