# Performance cases of the plain task "add", with the bytes moved per call
# for the roofline check.
import torch


def perf_inputs():
    return [(torch.randn(n, device="cuda"), torch.randn(n, device="cuda"))
            for n in (1 << 16, 1 << 20, 1 << 24)]


def gbps(args, ms):
    return 3 * args[0].numel() * args[0].element_size() / (ms * 1e-3) / 1e9
