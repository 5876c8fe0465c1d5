# problem: level1/19_ReLU
# cpu: batch_size=16 dim=1000
# expect: cheat
# ModelNew in PyTorch alone: right values, but no Triton kernel wrote
# them, so it fails as a fallback.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
