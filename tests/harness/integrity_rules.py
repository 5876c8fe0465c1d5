"""The rules of tests/0321-eval-integrity.t, one line each: NAME ok|FAIL."""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "share", "harness"))
import torch  # noqa: E402

from geakh import compare, judge, outside  # noqa: E402

torch.manual_seed(0)
checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


ref = torch.randn(64, 256)
# The reference judged as its own candidate where its canonical run holds
# values and another of its runs left NaN (an output its test does not
# always write): the mask covers them, and the candidate's run left NaN.
mask = torch.ones(64, 256, dtype=torch.bool)
cand = torch.full((64, 256), float("nan"))
check("no_finite_elements_no_downgrade", not compare.downgraded(cand, ref))
check("masked_elements_no_downgrade", not compare.downgraded(ref.clone(), ref * 3, mask))
check("a_real_downgrade_flagged", compare.downgraded(ref.half().float(), ref))
half = ref.half().float()
half[:, 128:] = float("nan")
check("a_downgrade_on_the_finite_part_flagged", compare.downgraded(half, ref))
check("own_outputs_never_downgraded", not compare.downgraded(ref.clone(), ref))

check("confirmed_speedup_kept", judge._confirmed({"ms": 1.0, "ms_ref": 12.0,
                                                  "recheck": {"ms": 1.1, "ms_ref": 11.0}}))
check("unconfirmed_speedup_flagged", not judge._confirmed({"ms": 1.0, "ms_ref": 12.0,
                                                           "recheck": {"ms": 4.0, "ms_ref": 12.0}}))
check("no_recheck_nothing_to_confirm", judge._confirmed({"ms": 1.0, "ms_ref": 2.0}))

outside.install()
x, y = torch.randn(100), torch.randn(100)
idx = torch.arange(10)
w = outside.begin()
out = torch.empty_like(x)
out.view(10, 10).t().contiguous()
out.copy_(x)
out.to(torch.float16)
_ = (idx * 2).cumsum(0).max().item()
rec = outside.end(w)
check("glue_is_allowed", rec["ops"] == [] and rec["to_host"] == 0)
w = outside.begin()
torch.add(x, y)
getattr(torch, "mul")(x, 2.0)
rec = outside.end(w)
check("torch_arithmetic_recorded", rec["ops"] == ["add", "mul"])
w = outside.begin()
a = x.numpy() + y.numpy()
torch.from_numpy(a)
rec = outside.end(w)
check("host_round_trip_counted", rec["to_host"] == 200 and rec["from_host"] == 100)
w = outside.begin()
with outside.aside():
    torch.add(x, y)
rec = outside.end(w)
check("launches_stand_aside", rec["ops"] == [])
check("allowed_list_read", "empty_like" in outside.ALLOWED and "add" not in outside.ALLOWED)

for name, ok in checks:
    print(name, "ok" if ok else "FAIL")
