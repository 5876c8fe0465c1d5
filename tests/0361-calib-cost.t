#!/bin/sh
# What a reference's calibration costs, step by step, on the CPU (Triton's
# interpreter; the seconds mean nothing here, that they are there does):
# profile.json's "steps" name each process's wall time and its parts; the
# resampling stops after its first round where that round widened no
# mask, and goes on where it did; the wait for free device memory waits
# only while the memory measured is short.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
command -v jq >/dev/null || skip_all "no jq"
plan 11
c=$top/tests/cheats
h=$top/tests/harness
# calibrate NAME REF CAND: the whole path (perf_cpu.py), then the profile.
calibrate() {
	"$GEAK_PYTHON" "$h/perf_cpu.py" "$2" "$3" "$scratch/$1" >/dev/null 2>>err.txt
	cat "$scratch/$1/profile/profile.json"
}

prof=$(calibrate honest "$c/add_reference.py" "$c/honest.py")
check_same "each process's step timings are in the profile" "true true" \
	"$(printf '%s' "$prof" | jq -r '.steps as $s | [$s.A10, $s.B] |
		map(all(.wall, .run, .load, .take, .tests, .perf_checks, .search, .compile, .save;
			type == "number" and . >= 0)) | "\(all) \($s.B.runs == 3 and $s.B.checks == 1)"')"
check_same "and the calibration's own steps, its total at least its processes' walls" "true true" \
	"$(printf '%s' "$prof" | jq -r '.steps as $s |
		"\([$s.racing, $s.profile, $s.total] | all(type == "number"))" +
		" \($s.total >= $s.A10.wall + $s.B.wall)"')"
check_same "a reference that does not race is not resampled" "false false" \
	"$(printf '%s' "$prof" | jq -r '"\(.steps | has("R")) \(.steps | has("P"))"')"

# One element of one case races, the same one on every run: R's first
# round shows nothing new, and R2 does not run; P does, as before.
prof=$(calibrate racy-one "$h/racy_case_add.py" "$h/racy_case_add.py")
check_same "a race whose mask R's first round left alone stops there" "true false true 11 1" \
	"$(printf '%s' "$prof" | jq -r '"\(.steps | has("R")) \(.steps | has("R2")) \(.steps | has("P"))" +
		" \([.cases[] | select(.spread > 0) | .checks] | join(" ")) \(.cases[1].spread)"')"

# 64 places of each case's output take one of two values at random on
# every call: R's first round widens the masks, and R2 runs the rest.
sed -e 's/^    return out$/    k = min(64, n)\n    out[-k:] = (torch.tensor(list(os.urandom(k)), device=out.device) % 2).to(out.dtype)\n    return out/' \
	-e 's/^import torch$/import os\nimport torch/' "$c/add_reference.py" > racy.py
prof=$(calibrate racy-wide racy.py racy.py)
check_same "a race still widening after R's first round is resampled to the end" "true true 14 14" \
	"$(printf '%s' "$prof" | jq -r '"\(.steps | has("R")) \(.steps | has("R2"))" +
		" \([.cases[].checks] | join(" "))"')"

# The wait for memory, on a made-up device.
waited=$(GEAK_SHAREDIR=$top/share "$GEAK_PYTHON" - 2>>err.txt <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))
from geakh import calibrate as c
free = iter([(500, 8000), (700, 8000), (3000, 8000)])
seen = []
def probe():
    seen.append(1)
    return next(free)
c.wait_for_memory(2000, poll=0.01, probe=probe)
short = c.wait_for_memory(9000, poll=0.01, probe=lambda: (10, 8000))
blind = c.wait_for_memory(2000, poll=0.01, probe=lambda: None)
capped = c.wait_for_memory(2000, limit=0.05, poll=0.01, probe=lambda: (10, 8000))
print(len(seen), short < 0.01, blind < 0.01, 0.05 <= capped < 1, c.need_mib(0), c.need_mib(4000))
PY
)
check_same "it waits until the need is free, not for a need past the device or unmeasured, nor past its limit" \
	"3 True True True 0 6024" "$waited"
devs=$(GEAK_SHAREDIR=$top/share "$GEAK_PYTHON" - 2>>err.txt <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))
from geakh import calibrate as c
out = []
for v in (None, "3,1", "GPU-5a1c", "", "foo"):
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    if v is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = v
    out.append(str(c._visible_device()))
print(" ".join(out))
PY
)
check_same "the device measured is the job's first visible one" "0 3 GPU-5a1c None None" "$devs"
# geak-eval: the evaluation that calibrated carries the steps, and -v
# traces them; the next candidate of the task, which used the profile,
# carries none.
geak=$top/../shared/bench/geak-eval-data.tar.gz
if [ -r "$geak" ] && geak-import --suite tbg --ids vector_addition_custom --as-candidate "$geak" > ref.jsonl; then
	{ cat ref.jsonl; jq -c '.code = .code + "\n# again\n"' ref.jsonl; } > two.jsonl
	geak-eval -v --cpu -j 1 --no-cache --static off two.jsonl > two.out 2> trace.txt
	check_same "the evaluation that calibrated carries its steps, the next one none" "true false" \
		"$(jq -r '.eval | has("calibration") and (.calibration.A10.wall >= 0)' two.out | tr '\n' ' ' | sed 's/ $//')"
	check_match "-v traces the steps" "calibrate-[^:]*: steps \\(s\\): A10 [0-9.]* \\(.*runs 4\\) B " "$(cat trace.txt)"
	check_match "tests/gpu/trace-summary.py still reads the trace" "^3 jobs over" \
		"$("$GEAK_PYTHON" "$top/tests/gpu/trace-summary.py" trace.txt | sed -n 1p)"
else
	skip "no benchmark archive"
	skip "no benchmark archive"
	skip "no benchmark archive"
fi
check_same "nothing went to stderr but the harness's own" "" \
	"$(grep -E 'Traceback|Error' err.txt | grep -v 'expected' | head -3)"
done_testing
