import pytest
import torch

result_gold = {}


def test_double(request, device='cuda'):
    torch.manual_seed(0)
    x = torch.randn(size(), device=device)
    y = torch.empty_like(x)
    double_kernel[(1,)](x, y, BLOCK=64)
    result_gold['_CALL_SUCCESS_'] = torch.tensor([[1.0]])
    result_gold[request.node.name] = y.clone().cpu()
