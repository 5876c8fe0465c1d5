import torch


def test_addk():
    # The test makes its inputs and keeps copies of the outputs, as many
    # TritonBench tests do: what it returns was never a kernel's argument.
    results = {}
    for i, n in enumerate((1000, 37, 4096)):
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        results[f"test_case_{i + 1}"] = add(x, y).clone()
    return results


result_gold = test_addk()
