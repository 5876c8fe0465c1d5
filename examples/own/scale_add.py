"""A task of one's own: the reference function, the inputs it is tested
on, the inputs it is timed on, and how many bytes one call moves.

    geak-import examples/own/scale_add.py > scale_add.jsonl
"""
import torch


def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    """Return alpha * x + y, elementwise, for two tensors of one shape."""
    return alpha * x + y


def inputs():
    # The argument tuples the candidate is checked on; an odd size
    # exercises the masks.
    return [
        (torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda"), 0.5),
        (torch.randn(37, 129, device="cuda"), torch.randn(37, 129, device="cuda"), -2.0),
    ]


def perf_inputs():
    # The argument tuples it is timed on, on a GPU.
    n = 1 << 24
    return [(torch.randn(n, device="cuda"), torch.randn(n, device="cuda"), 0.5)]


def gbps(args, ms):
    # Two reads and one write of every element.
    x = args[0]
    return 3 * x.numel() * x.element_size() / (ms * 1e-3) / 1e9
