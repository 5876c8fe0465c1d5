"""A module compatible with GEAK-eval's geak_eval.perf.performance_utils,
which TritonBench-revised perf scripts import.  geak-eval itself uses only
the subclass's hooks (get_input_tensors, to_cuda, call_op, call_op_ref,
get_gbps, get_tflops) and times them with geakh.timing; run_benchmark is
here so that a perf script also runs on its own, with the fixes listed in
eval-deviations.md (inputs cloned recursively, no speedup without results).
"""
import json
import random

import torch


class do_bench_config:
    def __init__(self, warm_up=25, repetition=100, grad_to_none=None,
                 quantiles=(0.5, 0.8, 0.2), return_mode="median"):
        self.warm_up = warm_up
        self.repetition = repetition
        self.grad_to_none = grad_to_none
        self.quantiles = list(quantiles)
        self.return_mode = return_mode


def _clone(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x


class Performance_Metrics:
    def __init__(self, op_name, dtype=None, is_backward=False, **kwargs):
        self.op_name = op_name + ("backward" if is_backward else "")
        self.dtype = dtype
        self.is_backward = is_backward
        self.kwargs = kwargs
        self.input_tensors = []
        self.do_bench_config = do_bench_config()

    def get_input_tensors(self):
        raise NotImplementedError

    def to_cuda(self, input_tensor):
        raise NotImplementedError

    def call_op(self, input_tensor):
        raise NotImplementedError

    def call_op_ref(self, input_tensor):
        raise NotImplementedError

    def get_gbps(self, input_tensor, runtime):
        raise NotImplementedError

    def get_tflops(self, input_tensor, runtime):
        raise NotImplementedError

    def get_do_bench_config(self, warmup=None, rep=None):
        if warmup is not None and rep is not None:
            self.do_bench_config = do_bench_config(warm_up=warmup, repetition=rep)
            return
        self.do_bench_config = do_bench_config(warm_up=100, repetition=1000)

    def get_runtime(self, op):
        import triton
        c = self.do_bench_config
        ms = triton.testing.do_bench(op, warmup=c.warm_up, rep=c.repetition,
                                     quantiles=c.quantiles, return_mode=c.return_mode)
        return ms[0] if isinstance(ms, (list, tuple)) else ms

    def check_close(self, a, b, rtol=1e-3, atol=1e-3):
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(self.check_close(x, y, rtol, atol) for x, y in zip(a, b))
        if isinstance(a, dict):
            return set(a) == set(b) and all(self.check_close(a[k], b[k], rtol, atol) for k in a)
        if isinstance(a, torch.Tensor):
            return a.shape == b.shape and a.dtype == b.dtype and \
                torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        return a == b

    def get_num_elements(self, x):
        if isinstance(x, torch.Tensor):
            return x.numel()
        if isinstance(x, (list, tuple)):
            return sum(self.get_num_elements(v) for v in x)
        if isinstance(x, dict):
            return sum(self.get_num_elements(v) for v in x.values())
        return 0

    def run_benchmark(self):
        results = []
        for inp in self.input_tensors:
            try:
                x = self.to_cuda(inp)
                self.call_op(_clone(x))
                self.call_op_ref(_clone(x))
                torch.manual_seed(42)
                out = self.call_op(_clone(x))
                torch.manual_seed(42)
                ref = self.call_op_ref(_clone(x))
                if not self.check_close(out, ref):
                    print("Failed to run benchmark for input tensor.")
                    return False, "outputs differ"
                ops = [("ms", lambda: self.call_op(x)), ("ms_ref", lambda: self.call_op_ref(x))]
                random.shuffle(ops)
                row = {"input_size": [self.get_num_elements(x)]}
                for key, op in ops:
                    row[key] = self.get_runtime(op)
                row["GB/s"] = self.get_gbps(x, row["ms"])
                row["TFLOPS"] = self.get_tflops(x, row["ms"])
                results.append(row)
            except Exception as exc:  # noqa: BLE001
                print("Failed to run benchmark for input tensor.", exc)
                return False, str(exc)
        if results:
            total = sum(r["ms"] for r in results)
            results.append({"speedup": sum(r["ms_ref"] for r in results) / total})
        print("```json\n" + json.dumps(results, indent=1) + "\n```")
        return True, results
