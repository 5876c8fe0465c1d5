# The plain task's test(fn) for scale.py: two calls on 300 elements.
import torch


def test(fn):
    x = torch.randn(300, device="cuda")
    return {"twice": fn(x, 2.0), "half": fn(x, 0.5), "n": 300}
