"""What calib's PyTorch scripts (overlap.py, interleave.py, gpt-step.py) share: the skip rule, exit 77
(automake's SKIP) with a line that says what is missing, and device time between two CUDA events."""
import importlib
import sys


def import_or_skip(script, *modules):
    """The modules, imported; exit 77 naming the first that is missing."""
    out = []
    for name in modules:
        try:
            out.append(importlib.import_module(name))
        except ImportError:
            print(f"{script}: skipped: no {name}", file=sys.stderr)
            sys.exit(77)
    return out


def cuda_or_skip(script, torch):
    """Exit 77 where PyTorch sees no usable CUDA device."""
    if not torch.cuda.is_available():
        print(f"{script}: skipped: no usable CUDA device", file=sys.stderr)
        sys.exit(77)


def device_us(torch, fn):
    """Microseconds of device time of fn() on the current stream, between two CUDA events."""
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3
