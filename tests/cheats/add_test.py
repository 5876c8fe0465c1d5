# The test of the plain task "add": cases of positional arguments, drawn
# after the harness has seeded the generators.
import torch


def inputs():
    return [
        (torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")),
        (torch.randn(37, device="cuda"), torch.randn(37, device="cuda")),
        (torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")),
    ]
