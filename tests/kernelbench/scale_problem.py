# A KernelBench-format problem for tests/0335-eval-kernelbench.t: a model
# with a learned parameter, made small enough for Triton's interpreter.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Scales each column by a learned weight."""

    def __init__(self, dim):
        super(Model, self).__init__()
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight


batch_size = 8
dim = 300


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
