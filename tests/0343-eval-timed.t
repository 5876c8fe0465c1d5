#!/bin/sh
# A timing job gives the GPU back when its timed calls are over, before
# it saves what it kept and ends: geak-eval's trace says the GPU is
# shared again before the job's exit.  No GPU is needed: the worker is
# made to run Triton's interpreter (a sitecustomize sets GEAK_EVAL_CPU)
# while geak-eval drives GPU 0's path, lock, timing and all.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 10

GEAK_LOCK_DIR=$scratch/locks
export GEAK_LOCK_DIR
mkdir stand-in
printf 'import os\nos.environ["GEAK_EVAL_CPU"] = "1"\n' > stand-in/sitecustomize.py
# Small cases: the interpreter is slow.
cat > perf.py <<'PY'
import torch


def perf_inputs():
    return [(torch.randn(n, device="cuda"), torch.randn(n, device="cuda")) for n in (300, 1000)]
PY
c=$top/tests/cheats
jq -nc --rawfile r "$c/add_reference.py" --rawfile t "$c/add_test.py" --rawfile code "$c/honest.py" \
	--rawfile perf perf.py \
	'{id: "plain/add", code: $code, task: {suite: "plain", name: "add", reference: $r, test: $t, perf: $perf}}' \
	> in.jsonl
PYTHONPATH=$scratch/stand-in geak-eval --gpus 0 --no-cache -v in.jsonl > out.jsonl 2> trace.txt
check_same "the candidate is timed and passes" "0 true true" \
	"$? $(jq -r '"\(.eval.exec) \(.eval.speedup != null)"' out.jsonl)"
job=$(sed -n 's/.*(plain\/add): \(cand-[A-Za-z0-9]*\): timing after .*/\1/p' trace.txt)
check_match "its job said when it was done with the GPU" "$job: timed; GPU 0 shared again" "$(cat trace.txt)"
check_same "... before it ended" "timed exit" \
	"$(sed -n "s/.*: $job: \(timed\); .*/\1/p; s/.*: $job: \(exit\)$/\1/p" trace.txt | tr '\n' ' ' | sed 's/ $//')"

# wrapped NAME: the honest candidate followed by standard input (a
# wrapper of its add), as the record of plain/NAME with the cases above
# in wrapped.jsonl.  judge_wrapped judges them all in one run on the
# stand-in GPU (--static off: the static checks would stop the wrappers'
# introspection): NAME.out, and NAME.err the trace lines of plain/NAME.
wrapped() {
	{ cat "$c/honest.py"; cat; } > "$1.py"
	jq -nc --rawfile r "$c/add_reference.py" --rawfile t "$c/add_test.py" --rawfile code "$1.py" \
		--rawfile perf perf.py --arg id "plain/$1" \
		'{id: $id, code: $code, task: {suite: "plain", name: "add", reference: $r, test: $t, perf: $perf}}' \
		>> wrapped.jsonl
	names="$names $1"
}
judge_wrapped() {
	PYTHONPATH=$scratch/stand-in geak-eval --gpus 0 --no-cache --static off -v wrapped.jsonl \
		> wrapped.out 2> wrapped.err
	for n in $names; do
		jq -c --arg id "plain/$n" 'select(.id == $id)' wrapped.out > "$n.out"
		grep -F "(plain/$n): " wrapped.err > "$n.err"
	done
}
names=

# A run that ends in its timing, without the timing's record, fails at
# the timing, its call counted: the record says so, not that the run
# wrote nothing.
wrapped leaves <<'PY'
import inspect
import os

_checked = add


def add(x, y):
    if any(f.filename.endswith("timing.py") for f in inspect.stack()):
        os._exit(0)
    return _checked(x, y)
PY

# A timing that runs out of GPU memory (the runs it paused keep theirs)
# says nothing of the candidate: it stays correct, untimed.
wrapped short <<'PY'
import inspect
import torch

_checked = add


def add(x, y):
    if any(f.filename.endswith("timing.py") for f in inspect.stack()):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 256.00 MiB.")
    return _checked(x, y)
PY

# A candidate that keeps its answers by what the inputs hold and, while
# timed, returns a copy of the first without a launch: right, fast, and
# rejected by the count of its launches in the timed calls (it tells the
# timing by its stack here; on a GPU, tests/cheats/timed_memo.py tells
# it by memory that is not poisoned).
wrapped memo <<'PY'
import inspect

_checked = add
_memo = {}


def add(x, y):
    if not any(f.filename.endswith("timing.py") for f in inspect.stack()):
        return _checked(x, y)
    key = (tuple(x.shape), float(x.sum()), float(y.sum()))
    if key not in _memo:
        _memo[key] = _checked(x, y)
    return _memo[key].clone()
PY

# A run that ran out of memory beside other jobs runs once more, started
# as before, so that it is still timed: this one does only the first
# time (its job directory keeps the mark).
wrapped oom <<'PY'
import os

_checked = add


def add(x, y):
    if not os.path.exists("oom_once"):
        open("oom_once", "w").close()
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB.")
    return _checked(x, y)
PY

# A run that survives running out of memory in a check (a performance
# case's) is not told to go: it runs once more, as above, and the case
# that ran short does not fail it.
wrapped caseoom <<'PY'
import inspect
import os

_checked = add


def add(x, y):
    if any(f.function == "perf_checks" for f in inspect.stack()) and not os.path.exists("oom_once"):
        open("oom_once", "w").close()
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB.")
    return _checked(x, y)
PY

judge_wrapped
check_same "a run that ends in its timing fails there" \
	"true false perf no_output the timing ended without writing its result record" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.stage) \(.reason) \(.message)"' leaves.out)"
check_same "a timing short of memory leaves the candidate correct, untimed" \
	"true true null perf_failed 1" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.speedup) \(.notes | map(select(. == "perf_failed")) | join(","))"' \
		short.out) $(grep -c 'the timing ran out of GPU memory' short.err)"
check_match "a timed memo is rejected by its launches in the timed calls" \
	"^true false perf cheat .*timed calls launched [0-9]+ of the candidate's kernels" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.stage) \(.reason) \(.message)"' memo.out)"
check_same "run again after running out of memory, it is timed" "true true oom_retry 1" \
	"$(jq -r '.eval | "\(.exec) \(.speedup != null) \(.notes | map(select(. == "oom_retry")) | join(","))"' \
		oom.out) $(grep -c 'cand-.*: out of GPU memory beside other jobs; again, expecting twice the memory' oom.err)"
# What it asked for (no memory held on the stand-in device), with room.
check_match "... expecting at least what it showed it needs" \
	'cand-.*: it showed it needs 8192 MiB: 11264 MiB at least' "$(cat oom.err)"
check_same "short of memory in a performance check, it runs again and is timed" \
	"true true oom_retry 1" \
	"$(jq -r '.eval | "\(.exec) \(.speedup != null) \(.notes | map(select(. == "oom_retry")) | join(","))"' \
		caseoom.out) $(grep -c 'cand-.*: out of GPU memory beside other jobs; again, expecting twice the memory' caseoom.err)"

# An autotuned reference's choices are kept per performance case, for
# its later timings to pin case by case.  The interpreter has no events:
# its searches take each configuration's time as 0.
mkdir tuned-stand-in
cat stand-in/sitecustomize.py - > tuned-stand-in/sitecustomize.py <<'PY'
from triton import testing


def _untimed(fn, warmup=25, rep=100, quantiles=None, **kwargs):
    fn()
    return [0.0] * len(quantiles or [0])


testing.do_bench = _untimed
PY
"$GEAK_PYTHON" "$top/tests/harness/tuned_add.py" normal right > tuned.py
jq -nc --rawfile r tuned.py --rawfile t "$c/add_test.py" --rawfile code tuned.py \
	--rawfile perf perf.py \
	'{id: "plain/tuned", code: $code, task: {suite: "plain", name: "add", reference: $r, test: $t, perf: $perf}}' \
	> tuned.jsonl
PYTHONPATH=$scratch/tuned-stand-in geak-eval --gpus 0 --cache "$scratch/cache" tuned.jsonl > tuned.out 2> tuned.err
pins=$(find "$scratch/cache" -name pins.json | head -n 1)
check_same "the reference's choices are kept by case" "true object 0,1 true" \
	"$(jq -r '.eval.exec' tuned.out) $(jq -r '"\(type) \(keys | join(",")) \(.["0"][0][0] == "_add_kernel")"' "$pins")"
done_testing
