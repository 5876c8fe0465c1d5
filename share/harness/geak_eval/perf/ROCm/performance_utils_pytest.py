"""A module compatible with GEAK-eval's
geak_eval.perf.ROCm.performance_utils_pytest, which the ROCm benchmark's
pytest files import.  PytestBenchmarker times op_callable with
triton.testing.do_bench and keeps the results in this module, and
save_all_benchmark_results writes them as JSON, one file per op.
"""
import json
import os

import torch

# The same budget settings as the TritonBench perf scripts use.
from geak_eval.perf.performance_utils import do_bench_config  # noqa: F401

_RESULTS = {}
# geak-eval's timing replaces do_bench with its own timer:
# (fn, case key) -> (median, min, max) ms, or None for "timed later".
TIMER = None


def case_key(op_name, params):
    """What names one benchmark case across the two sides' files."""
    return op_name + json.dumps(params, sort_keys=True, default=str)


class PytestBenchmarker:
    def __init__(self, op_callable, op_name, config=None):
        self.op_callable = op_callable
        self.op_name = op_name
        self.config = config or do_bench_config()

    def run_benchmark(self, current_params_dict=None, gbps_calculator=None,
                      tflops_calculator=None):
        params = dict(current_params_dict or {})
        if TIMER is not None:
            ms, lo, hi = TIMER(self.op_callable, case_key(self.op_name, params)) or (None,) * 3
        else:
            import triton
            c = self.config
            q = triton.testing.do_bench(self.op_callable, warmup=c.warm_up, rep=c.repetition,
                                        quantiles=[0.5, 0.2, 0.8])
            ms, lo, hi = q if isinstance(q, (list, tuple)) else (q, q, q)
        row = {"params": params, "ms": ms, "min_ms": lo, "max_ms": hi}
        for key, f in (("GB/s", gbps_calculator), ("TFLOPS", tflops_calculator)):
            if f is not None and ms is not None:
                try:
                    row[key] = f(params, ms)
                except Exception:  # noqa: BLE001 - an optional figure
                    row[key] = None
        _RESULTS.setdefault(self.op_name, []).append(row)
        return row


def results():
    return _RESULTS


def save_all_benchmark_results(output_directory):
    os.makedirs(output_directory, exist_ok=True)
    for name, rows in _RESULTS.items():
        with open(os.path.join(output_directory, name + ".json"), "w") as fp:
            json.dump(rows, fp, indent=1, default=str)
