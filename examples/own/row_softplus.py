"""A KernelBench-style problem of one's own: Model, get_inputs() and
get_init_inputs(), kept small.

    geak-import examples/own/row_softplus.py > row_softplus.jsonl
"""
import torch
import torch.nn as nn

batch_size = 16
dim = 200


class Model(nn.Module):
    """Softplus with a learned scale per column, then the mean of each row."""

    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softplus(x * self.scale).mean(dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
