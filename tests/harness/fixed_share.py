"""compare.unlike_races on made-up outputs of a racing case: the reference's
runs differ at 3000 elements (spread), so a candidate's outputs may all
differ at up to 3 elements, each at no more than 6000; prints one word per
case, "pass" or "fail"."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))
import torch  # noqa: E402

from geakh import compare  # noqa: E402

SPREAD = 3000
ref = torch.zeros(100000)


def outputs(common, scattered):
    """Four outputs, each apart from the reference at the first common
    elements and at scattered others of its own."""
    outs = []
    for i in range(4):
        o = ref.clone()
        o[:common] = 1.0
        start = 1000 + i * 20000
        o[start:start + scattered] = 1.0
        outs.append((o, ref))
    return outs


words = []
for common, scattered in ((0, 5000), (3, 1000), (4, 1000), (3, 7000)):
    why = compare.unlike_races(outputs(common, scattered), 0.0, 0.0, SPREAD)
    words.append("pass" if why is None else "fail")
why = compare.unlike_races(outputs(1, 10), 0.0, 0.0, 0)
words.append("pass" if why is None else "fail")
print(" ".join(words))
