"""One autotuner searched on two keys, each among other configurations
(early_config_prune drops S=2 for small n, S=1 for large): prints every
key's choice, then the same under Tunings.runners_up.  Each key must get
the runner-up of its own search, "[0, 0] [1, 2]"; one taken from the
tuner's last search alone gives S=2 on the small key, where it was
never run (on a GPU such a configuration can fault)."""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

from triton.runtime import autotuner  # noqa: E402

from geakh import cpu, timing  # noqa: E402

prune = autotuner.Autotuner.prune_configs
cpu._quiet_autotune()  # every configuration timed 0: the first wins
autotuner.Autotuner.prune_configs = prune  # ...among all that the pruning keeps
timing.TUNINGS.install()

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def drop(configs, named_args, **kwargs):
    gone = 2 if named_args["n"] < 100 else 1
    return [c for c in configs if c.kwargs["S"] != gone]


@triton.autotune(configs=[triton.Config({"S": s}) for s in (0, 1, 2)], key=["n"],
                 prune_configs_by={"early_config_prune": drop})
@triton.jit
def kernel(x, n, S: tl.constexpr):
    tl.store(x, S)


x = torch.zeros(1)
kernel[(1,)](x, 10)
kernel[(1,)](x, 1000)
own = [c.kwargs["S"] for t in timing.TUNINGS.tuners for c in t.cache.values()]
with timing.TUNINGS.runners_up():
    other = [c.kwargs["S"] for t in timing.TUNINGS.tuners for c in t.cache.values()]
print(own, other)
