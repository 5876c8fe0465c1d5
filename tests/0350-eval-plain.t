#!/bin/sh
# The plain task format: test(fn) instead of inputs(), task.entry naming
# the function, task.tolerance loosening the comparison, and a candidate
# that does not define the function; a job that runs out of memory beside
# others is run again expecting twice the GPU memory.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 53

# Runs of geak-eval with the same flags are made one (each run starts
# workers that import torch, seconds each): gather RUN NAME adds
# NAME.jsonl's records to RUN.jsonl, each id marked " #NAME"; judge RUN
# FLAGS... runs geak-eval once on them, with RUN.err its stderr, and
# gives each NAME.out its records (in their order) and NAME.err their
# trace lines.  Its exit status is geak-eval's.
gather() {
	jq -c --arg n "$2" '.id += " #" + $n' "$2.jsonl" >> "$1.jsonl"
}
judge() {
	run=$1
	shift
	geak-eval "$@" "$run.jsonl" > "$run.out" 2> "$run.err"
	rc=$?
	for n in $(jq -r '.id | sub(".* #"; "")' "$run.jsonl" | sort -u); do
		jq -c --arg n "$n" 'select(.id | endswith(" #" + $n))' "$run.out" > "$n.out"
		grep -F " #$n): " "$run.err" > "$n.err"
	done
	return $rc
}

cp "$top/tests/harness/scale.py" ref.py
cp "$top/tests/harness/scale_test.py" test.py
# off by 0.5%: wrong at the default tolerance, right at rtol 1e-2
sed 's/\* s, mask/* s * 1.005, mask/' ref.py > close.py
printf 'import torch\n\ndef other(x, s):\n    return x * s\n' > missing.py
task() {
	jq -nc --rawfile r ref.py --rawfile t test.py --rawfile c "$1" --argjson tol "$2" \
		'{id: "plain/op", code: $c, task: ({suite: "plain", name: "op", entry: "scale",
		  reference: $r, test: $t} + (if $tol then {tolerance: $tol} else {} end))}'
}
{
	task ref.py null
	task close.py null
	task close.py '{"rtol": 0.01, "atol": 0.01}'
	task missing.py null
} > in.jsonl
gather run-j2 in

# A reference with an element that depends on the process (as memory it
# reads but never wrote does): the same in every run of one process, so
# only the reference's run in a second process shows it unstable, and the
# candidate is not failed for it.
sed 's/    return out$/    out[0] = float(os.getpid() % 1000)\n    return out/; s/^import torch$/import os\nimport torch/' ref.py > pid.py
jq -nc --rawfile r pid.py --rawfile t test.py \
	'{id: "plain/op", code: $r, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > pid.jsonl
check_same "the process-dependent reference is what it says" 1 "$(grep -c getpid pid.py)"
gather run-j1 pid

# A candidate that runs out of (GPU) memory: beside other jobs the memory
# they held may be what it lacked, so its job runs once more (on a GPU,
# expecting twice the memory); in the CPU mode the trace names no GPU.
sed 's/^    out = torch.empty_like(x)$/    raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB.")/' ref.py > oom.py
check_same "the out-of-memory candidate is what it says" 1 "$(grep -c OutOfMemoryError oom.py)"
jq -nc --rawfile r ref.py --rawfile t test.py --rawfile c oom.py \
	'{id: "plain/op", code: $c, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > oom.jsonl
gather run-v oom

# A job killed by SIGKILL that nobody in geak-eval sent (the host's
# out-of-memory killer, when the jobs beside it filled the host): once
# more (on a GPU, expecting twice the memory); this candidate kills itself only the
# first time.
{ printf 'import os, signal\nif not os.path.exists("killed_once"):\n    open("killed_once", "w").close()\n    os.kill(os.getpid(), signal.SIGKILL)\n'; cat ref.py; } > killed.py
check_same "the once-killed candidate is what it says" 1 "$(grep -c SIGKILL killed.py)"
jq -nc --rawfile r ref.py --rawfile t test.py --rawfile c killed.py \
	'{id: "plain/op", code: $c, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > killed.jsonl
gather run-v killed
judge run-v -v --cpu --no-cache --static off
check_same "the out-of-memory candidate fails as runtime, noted oom_retry" "false runtime oom_retry" \
	"$(jq -r '.eval | "\(.call) \(.reason) \(.notes | map(select(. == "oom_retry")) | join(","))"' oom.out)"
check_same "its job ran twice, the trace naming the CPU and no GPU" "1 0" \
	"$(grep -c 'cand-.*: out of memory beside other jobs; once more$' oom.err) $(grep -c GPU run-v.err)"
check_same "the once-killed candidate passes the second time, noted oom_retry, the retry traced" "true true oom_retry 1" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.notes | map(select(. == "oom_retry")) | join(","))"' killed.out) $(grep -c 'cand-.*: killed by SIGKILL (host memory?) beside other jobs' killed.err)"

# A reference that fails only on poisoned memory (as references that use
# memory they never wrote as indices fault there): it runs again without
# the poison, and so does the candidate, noted no_poison; a wrong
# candidate still fails.
sed 's/^    out = torch.empty_like(x)$/    probe = torch.empty(4, dtype=torch.int32)\n    if bool((probe == torch.iinfo(torch.int32).max).all()):\n        raise RuntimeError("an illegal memory access was encountered")\n    out = torch.empty_like(x)/' ref.py > fragile.py
sed 's/\* s, mask/* s * 1.5, mask/' fragile.py > fragile_wrong.py
check_same "the poison-fragile reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'illegal memory access' fragile.py) $(grep -c 's \* 1.5' fragile_wrong.py)"
for c in fragile fragile_wrong; do
	jq -nc --rawfile r fragile.py --rawfile t test.py --rawfile c "$c.py" --arg m "$c" \
		'{id: "plain/op", mutant: $m, code: $c, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}'
done > fragile.jsonl
gather run-j1 fragile

# The other half of the poison: NaN left in the allocator's free blocks
# before each call.  A task run without the poison gets none of it either
# (on an H200, six TritonBench references kept faulting through it).
sed 's/^    out = torch.empty_like(x)$/    probe = torch.empty(256)\n    if bool(torch.isnan(probe).all()):\n        raise RuntimeError("an illegal memory access was encountered")\n    out = torch.empty_like(x)/' ref.py > nanfrag.py
jq -nc --rawfile r nanfrag.py --rawfile t test.py --rawfile c nanfrag.py \
	'{id: "plain/op", code: $c, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > nanfrag.jsonl
gather run-j1 nanfrag

# A reference whose output depends on its autotuner's choice: the
# calibration runs it under each of its configurations, so the judge
# knows which elements depend on the choice and leaves them out; a
# candidate whose own search picks another configuration (the CPU mode
# takes the first listed, here the reference's second) passes, a wrong
# one still fails.
for v in "normal right" "reversed right" "reversed wrong"; do
	"$GEAK_PYTHON" "$top/tests/harness/tuned_add.py" $v > "tuned-$(echo $v | tr ' ' -).py"
done
for c in normal-right reversed-right reversed-wrong; do
	jq -nc --rawfile r tuned-normal-right.py --rawfile t "$top/tests/cheats/add_test.py" --rawfile c "tuned-$c.py" --arg m "$c" \
		'{id: "plain/add", mutant: $m, code: $c, task: {suite: "plain", name: "add", reference: $r, test: $t}}'
done > tuned.jsonl
gather run-j1 tuned
# Among three configurations the candidate's may be neither the
# reference's first choice nor its second: the calibration ran each.
for v in "normal right three" "reversed right three" "reversed wrong three"; do
	"$GEAK_PYTHON" "$top/tests/harness/tuned_add.py" $v > "t3-$(echo $v | tr ' ' -).py"
done
for c in reversed-right-three reversed-wrong-three; do
	jq -nc --rawfile r t3-normal-right-three.py --rawfile t "$top/tests/cheats/add_test.py" --rawfile c "t3-$c.py" --arg m "$c" \
		'{id: "plain/add3", mutant: $m, code: $c, task: {suite: "plain", name: "add", reference: $r, test: $t}}'
done > t3.jsonl
gather run-j1 t3

# A reference that cannot run under another configuration (as one that
# faults on a shape its search did not see): its calibration's second
# process runs again with its own choices, and still shows what depends
# on the process.
sed -e 's/^@triton.jit$/@triton.autotune(configs=[triton.Config({"SHIFT": 0}), triton.Config({"SHIFT": 1})], key=[])\n@triton.jit/' \
	-e 's/BLOCK: tl.constexpr):/BLOCK: tl.constexpr, SHIFT: tl.constexpr):/' \
	-e 's/^    offs = tl.program_id(0)/    tl.static_assert(SHIFT == 0)\n    offs = tl.program_id(0)/' pid.py > pidtuned.py
check_same "the reference that fails under its second configuration is what it says" "1 1" \
	"$(grep -c 'triton.autotune' pidtuned.py) $(grep -c 'static_assert(SHIFT == 0)' pidtuned.py)"
jq -nc --rawfile r pidtuned.py --rawfile t test.py \
	'{id: "plain/op", code: $r, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > pidtuned.jsonl
gather run-j1 pidtuned

# A job may write files of --file-limit MiB at most, and its outputs are
# one file: outputs larger than that fail with a message that names the
# option, not torch's own ("unexpected pos"); a limit above them passes.
cat > bigtest.py <<'PY'
import torch


def test(fn):
    x = torch.randn(300, device="cuda")
    return {"twice": fn(x, 2.0), "big": torch.ones(6 << 20, device="cuda")}
PY
jq -nc --rawfile r ref.py --rawfile t bigtest.py \
	'{id: "plain/big", code: $r, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > big.jsonl
geak-eval --cpu --no-cache --static off --file-limit 64 big.jsonl > big.out 2>big.err
check_match "the calibration's four runs' outputs of 24 MiB each do not fit in 64, said on the message's first line" \
	"^a calibration run of the reference failed: RuntimeError: the outputs take 96 MiB.*\\(64 MiB: geak-eval --file-limit\\)$" \
	"$(jq -r .error.message big.out | head -n 1)"
check_same "they fit in 128" "true true" \
	"$(geak-eval --cpu --no-cache --static off --file-limit 128 big.jsonl 2>/dev/null | jq -r '.eval | "\(.call) \(.exec)"')"

# Each worker gets its share of the cores for torch's thread pool, unless
# the user chose a number.
{ cat ref.py; printf 'import os\nprint("threads=%%s" %% os.environ.get("OMP_NUM_THREADS"))\n'; } > threads.py
jq -nc --rawfile r ref.py --rawfile t test.py --rawfile c threads.py \
	'{id: "plain/op", code: $c, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > threads.jsonl
share=$(( $(getconf _NPROCESSORS_ONLN) / 2 )); [ "$share" -ge 1 ] || share=1
a=$(env -u OMP_NUM_THREADS geak-eval --cpu -j 2 --no-cache --static off threads.jsonl 2>/dev/null | jq -r '.eval.stdout_tail')
b=$(OMP_NUM_THREADS=7 geak-eval --cpu -j 2 --no-cache --static off threads.jsonl 2>/dev/null | jq -r '.eval.stdout_tail')
check_same "OMP_NUM_THREADS: the cores shared out among 2 slots, or the user's" "threads=$share threads=7" "$a $b"

# A judge that writes no verdict: the error says how it ended and what it
# printed, as its directory goes.
cp -R "$top/share/harness" badharness
printf '\n\ndef main(req, workdir):\n    raise RuntimeError("judge broke on purpose")\n' >> badharness/geakh/judge.py
sed -n 1p fragile.jsonl > one.jsonl
geak-eval --cpu --no-cache --static off --harness "$PWD/badharness" one.jsonl > badjudge.out 2>badjudge.err
check_same "the judge's failure names its end and its stderr" "true" \
	"$(jq -r '.error.message | startswith("the judge wrote no verdict (exit): ") and contains("judge broke on purpose")' badjudge.out)"

# A reference whose writes race: 256 places get one of two values at
# random on every call (os.urandom: no seed decides it).  Its runs on one
# seed disagree, so it runs each seed more times, and the candidate
# identical to it passes; one wrong where nothing races still fails.
# The kernel of ref.py, with a wrapper of its own.
# mutants NAME REF.py CAND...: NAME.jsonl, one record per candidate
# (CAND.py, its name as "mutant") of the plain task NAME against REF.py,
# with test.py's test.
mutants() {
	name=$1 ref=$2
	shift 2
	for c; do
		jq -nc --rawfile r "$ref" --rawfile t test.py --rawfile c "$c.py" --arg m "$c" --arg n "$name" \
			'{id: ("plain/" + $n), mutant: $m, code: $c, task: {suite: "plain", name: $n,
			  entry: "scale", reference: $r, test: $t}}'
	done > "$name.jsonl"
}
kernel() { sed '/^def scale/,$d' ref.py | sed 's/^import torch$/import os\nimport torch/'; }
{ kernel; cat <<'PY'
def scale(x, s):
    out = torch.empty(x.numel() + 256, device=x.device)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    bits = torch.tensor(list(os.urandom(256)), device=x.device) % 2
    out[x.numel():] = bits.float()
    return out
PY
} > racy.py
sed 's/) \* s, mask/) * s + (offs == 7), mask/' racy.py > racy-wrong.py
mutants racy racy.py racy racy-wrong
gather run-j2 racy

# A reference that races where no number of its runs shows every element
# that can: one element of a 65536-wide tail, drawn at random on every
# call, is set.  Its identical candidate differs from it on every run, at
# another element each time: it passes, noted.  One wrong at the same
# element in every run fails, and the message says why it is no race
# (the test calls it twice: two elements race, two are wrong).
{ kernel; cat <<'PY'
def scale(x, s):
    out = torch.empty(x.numel() + 65536, device=x.device)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    out[x.numel():] = 0
    out[x.numel() + int.from_bytes(os.urandom(4), "little") % 65536] = 1
    return out
PY
} > sparse.py
sed 's/) \* s, mask/) * s + (offs == 7), mask/' sparse.py > sparse-wrong.py
check_same "the sparsely racing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'os.urandom(4)' sparse.py) $(grep -c 'offs == 7' sparse-wrong.py)"
mutants sparse sparse.py sparse sparse-wrong
gather run-j2 sparse

# A reference whose race is decided alike within a process and apart
# across processes (the tail's element is set by the process id, as reads
# of never-written memory give each process its own garbage): its
# identical candidate differs from it at one element in every output,
# and passes, noted, since the reference's own runs in one process did
# so too; one wrong at more elements than twice the reference's spread
# still fails.
{ kernel; cat <<'PY'
def scale(x, s):
    out = torch.empty(x.numel() + 65536, device=x.device)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    out[x.numel():] = 0
    out[x.numel() + os.getpid() % 65536] = 1
    return out
PY
} > perproc.py
sed 's/) \* s, mask/) * s + (offs < 8), mask/' perproc.py > perproc-wrong.py
check_same "the per-process racing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'os.getpid() % 65536' perproc.py) $(grep -c 'offs < 8' perproc-wrong.py)"
mutants perproc perproc.py perproc perproc-wrong
gather run-j2 perproc

check_same "races decided anew on every run are never taken for races fixed within a process; those are" \
	"0 0 0 0 200" "$("$GEAK_PYTHON" "$top/tests/harness/fixed_races.py" 200 2>>err.txt | tail -n 1)"

# A reference whose 64 x 64 output races within row 5 (one of its
# elements 1 to 63, drawn on every call, is set): a candidate fixed apart
# from it at (5, 0) in every run passes, as the stores of a row's racing
# writers can land interleaved; one fixed apart at (9, 0), in a row where
# nothing races, fails.
{ kernel; cat <<'PY'
def scale(x, s):
    out = torch.empty(x.numel(), device=x.device)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    rows = torch.zeros(64, 64, device=x.device)
    rows[5, 1 + int.from_bytes(os.urandom(4), "little") % 63] = 1
    return (out, rows)
PY
} > rows.py
sed 's/^    return (out, rows)$/    rows[5, 0] = 2\n    return (out, rows)/' rows.py > rows-in.py
sed 's/^    return (out, rows)$/    rows[9, 0] = 2\n    return (out, rows)/' rows.py > rows-out.py
check_same "the row-racing reference and its two twins are what they say" "1 1 1" \
	"$(grep -c 'os.urandom(4)' rows.py) $(grep -c 'rows\[5, 0\] = 2' rows-in.py) $(grep -c 'rows\[9, 0\] = 2' rows-out.py)"
mutants rows rows.py rows-in rows-out
gather run-j2 rows

# The verdicts of the records gathered for two slots: the plain format's
# first four, then the races' above.
judge run-j2 -j 2 --cpu --no-cache --static off
check_same "geak-eval exits 0" 0 $?
check_same "the reference passes through test(fn) and task.entry" "true true" \
	"$(sed -n 1p in.out | jq -r '.eval | "\(.call) \(.exec)"')"
check_same "a 0.5% error fails at the default tolerance" "false mismatch" \
	"$(sed -n 2p in.out | jq -r '.eval | "\(.exec) \(.reason)"')"
check_same "and passes at the task's tolerance" "true" "$(sed -n 3p in.out | jq -r .eval.exec)"
check_match "a candidate without the function fails call" "^false runtime .*scale" \
	"$(sed -n 4p in.out | jq -r '.eval | "\(.call) \(.reason) \(.message)"')"
check_same "a racing reference judged against itself passes (its races left out)" \
	"true unstable_reference" "$(sed -n 1p racy.out | jq -r '.eval | "\(.exec) \(.notes - ["within_reference_spread"] | join(","))"')"
check_same "a candidate wrong where nothing races fails" "false mismatch" \
	"$(sed -n 2p racy.out | jq -r '.eval | "\(.exec) \(.reason)"')"
check_same "a sparsely racing reference judged against itself passes, noted" \
	"true unstable_reference,within_reference_spread" \
	"$(sed -n 1p sparse.out | jq -r '.eval | "\(.exec) \(.notes - ["no_landlock"] | join(","))"')"
check_same "a candidate wrong at one element in every run fails" "false mismatch" \
	"$(sed -n 2p sparse.out | jq -r '.eval | "\(.exec) \(.reason)"')"
check_match "its message gives the counts" "own runs differ at up to [0-9]+ elements, the candidate.s outputs at [0-9, ]+, [1-9][0-9]* in all of them" \
	"$(sed -n 2p sparse.out | jq -r '.eval.message')"
check_same "races fixed within a process: the same code passes, noted; wrong at 8 elements fails" \
	"true within_reference_spread false mismatch" \
	"$(jq -r '.eval | "\(.exec) \(if .exec then (.notes - ["no_landlock", "unstable_reference"] | join(",")) else .reason end)"' perproc.out | paste -sd ' ')"
check_same "fixed apart inside a racing row: passes, noted; in a row where nothing races: mismatch" \
	"true within_reference_spread false mismatch" \
	"$(jq -r '.eval | "\(.exec) \(if .exec then (.notes - ["no_landlock", "unstable_reference"] | join(",")) else .reason end)"' rows.out | paste -sd ' ')"

# A reference that fails on its third call in a process (each run calls
# it twice), as one that faults on its second call does: each of its
# runs goes to a process of its own, and the candidate's too, noted.  A
# candidate wrong there still fails; one that fails so where the
# reference does not is failed for it.
{ kernel; cat <<'PY'
CALLS = [0]


def scale(x, s):
    CALLS[0] += 1
    if CALLS[0] > 2:
        raise RuntimeError("an illegal memory access, as it were")
    out = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    return out
PY
} > once.py
sed 's/) \* s, mask/) * s + (offs == 7), mask/' once.py > once-wrong.py
check_same "the run-once reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'CALLS\[0\] > 2' once.py) $(grep -c 'offs == 7' once-wrong.py)"
for pair in once:once once:once-wrong ref:once; do
	jq -nc --rawfile r "${pair%%:*}.py" --rawfile t test.py --rawfile c "${pair#*:}.py" --arg m "$pair" \
		'{id: "plain/once", mutant: $m, code: $c, task: {suite: "plain", name: "once", entry: "scale",
		  reference: $r, test: $t}}'
done > once.jsonl
gather run-j1 once

# Numbers in the outputs (a loss, a gradient's norm) where two runs of
# the reference disagree are left out like tensor elements; the others
# are still compared.
check_same "an unstable number is left out, a stable one still compared" "pass mismatch" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import compare
r1, r2 = {"loss": 1.0, "norm": 5.0, "n": 3}, {"loss": 1.0, "norm": 4000.0, "n": 3}
m = compare.unstable(r1, r2, 1e-3, 1e-3)
out = []
for cand in ({"loss": 1.0, "norm": 77.0, "n": 3}, {"loss": 2.0, "norm": 5.0, "n": 3}):
    try:
        compare.compare(compare.masked(cand, m), compare.masked(r1, m), 1e-3, 1e-3)
        out.append("pass")
    except compare.Mismatch:
        out.append("mismatch")
print(*out)')"

# A reference run that fails while resampling is dropped, with what it
# gave before kept: the reference does not fail for it.
{ kernel; cat <<'PY'
CALLS = [0]


def scale(x, s):
    CALLS[0] += 1
    if CALLS[0] > 40:
        raise RuntimeError("illegal memory access, as it were")
    out = torch.empty(x.numel() + 8, device=x.device)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    out[x.numel():] = (torch.tensor(list(os.urandom(8)), device=x.device) % 2).float()
    return out
PY
} > faulty.py
jq -nc --rawfile r faulty.py --rawfile t test.py --rawfile c faulty.py \
	'{id: "plain/faulty", code: $c, task: {suite: "plain", name: "faulty", entry: "scale",
	  reference: $r, test: $t}}' > faulty.jsonl
gather run-j1 faulty

# What a job finds at import: tempfile's folder is the job's own (the
# worker's imports may have fixed it to the worker's), and torch._dynamo,
# which the watch's first operation needs, came with the fork.
{ cat ref.py; printf 'import sys, tempfile\nprint("tmp=%%s dynamo=%%s" %% (tempfile.gettempdir(), "torch._dynamo" in sys.modules))\n'; } > jobenv.py
jq -nc --rawfile r ref.py --rawfile t test.py --rawfile c jobenv.py \
	'{id: "plain/op", code: $c, task: {suite: "plain", name: "op", entry: "scale", reference: $r, test: $t}}' > jobenv.jsonl
gather run-j1 jobenv

# The verdicts of the records gathered for one slot: the process-dependent
# reference's, the poison's, the tuning's, the run-once, the resampling
# references' and the job's environment.
judge run-j1 --cpu --no-cache --static off
check_match "a job's tempfile folder is its own, and torch._dynamo was there before it" \
	"^true tmp=.*/cand-[^/]*/tmp dynamo=True$" \
	"$(jq -r '.eval | "\(.exec) \(.stdout_tail)"' jobenv.out | head -n 1)"
check_same "as its own candidate it passes, the element left out" "true true unstable_reference" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.notes | map(select(. == "unstable_reference")) | join(","))"' pid.out)"
check_same "as its own candidate it passes without the poison, noted" "true true no_poison" \
	"$(sed -n 1p fragile.out | jq -r '.eval | "\(.call) \(.exec) \(.notes | map(select(. == "no_poison")) | join(","))"')"
check_same "a wrong candidate of that task still fails" "false mismatch" \
	"$(sed -n 2p fragile.out | jq -r '.eval | "\(.exec) \(.reason)"')"
check_same "a reference that faults on the allocator's poison passes without it, noted" "true true no_poison" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.notes | map(select(. == "no_poison")) | join(","))"' nanfrag.out)"
check_same "the reference and the candidate tuned the other way pass, the element left out" \
	"true unstable_reference true unstable_reference" \
	"$(sed -n 1,2p tuned.out | jq -r '.eval | "\(.exec) \(.notes | map(select(. == "unstable_reference")) | join(","))"' | paste -sd ' ')"
check_same "a candidate wrong where the tuning does not matter fails" "false mismatch" \
	"$(sed -n 3p tuned.out | jq -r '.eval | "\(.exec) \(.reason)"')"
check_same "three configurations: the candidate's third passes, a wrong one fails" "true false mismatch" \
	"$(jq -r '.eval | if .exec then "true" else "false \(.reason)" end' t3.out | paste -sd ' ')"
check_same "as its own candidate it passes, the element left out" "true true unstable_reference" \
	"$(jq -r '.eval | "\(.call) \(.exec) \(.notes | map(select(. == "unstable_reference")) | join(","))"' pidtuned.out)"
check_same "the run-once reference as candidate passes, one call per process, every run made" \
	"true one_call_per_process 4" \
	"$(sed -n 1p once.out | jq -r '.eval | "\(.exec) \(.notes | map(select(. == "one_call_per_process")) | join(",")) \(.runs | length)"')"
check_same "its wrong twin fails" "false mismatch" "$(sed -n 2p once.out | jq -r '.eval | "\(.exec) \(.reason)"')"
check_match "a candidate that fails on a later call where the reference does not fails" \
	"^false false runtime .*illegal memory access, as it were" \
	"$(sed -n 3p once.out | jq -r '.eval | "\(.call) \(.exec) \(.reason) \(.message)"')"
check_same "a reference that fails in its extra runs still judges (itself as candidate passes)" \
	"true unstable_reference" "$(jq -r '.eval | "\(.exec) \(.notes - ["within_reference_spread"] | join(","))"' faulty.out)"

# Half-precision outputs are compared at no finer than two units in their
# last place; float32 keeps the suite's tolerance.
check_same "float16/bfloat16: one ulp passes, 1% fails; float32: 0.3% fails" "True False True False False" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'import torch
from geakh import compare
def ok(dt, a, b):
    try:
        compare.compare(torch.tensor([a], dtype=dt), torch.tensor([b], dtype=dt), 1e-3, 1e-3)
        return True
    except compare.Mismatch:
        return False
print(ok(torch.float16, 1.0 + 2 ** -10, 1.0), ok(torch.float16, 1.01, 1.0),
      ok(torch.bfloat16, 1.0 + 2 ** -7, 1.0), ok(torch.bfloat16, 1.05, 1.0), ok(torch.float32, 1.003, 1.0))')"

# Two evaluators started at once on one cache both run the reference of
# a task they find uncached; one keeps its outputs, the other drops its
# own and judges by the kept ones (their nonce with them).  The
# reference's import waits 3 s, so that neither can find it kept before
# it has started its own.
{ printf 'import time\ntime.sleep(3)\n'; cat ref.py; } > slow_ref.py
task ref.py null | jq -c --rawfile r slow_ref.py '.task.reference = $r' > race.jsonl
geak-eval --cpu --static off --cache race-cache -v race.jsonl > race1.out 2> race1.err &
race1=$!
geak-eval --cpu --static off --cache race-cache -v race.jsonl > race2.out 2> race2.err
race2=$?
wait $race1
check_same "both evaluators exit 0" "0 0" "$? $race2"
check_same "both calibrated the reference" "1 1" \
	"$(grep -c 'calibrate-.*: exit after' race1.err) $(grep -c 'calibrate-.*: exit after' race2.err)"
check_same "both pass the candidate, judged by one profile kept" "true true 1" \
	"$(cat race1.out race2.out | jq -r .eval.exec | paste -sd ' ') $(ls race-cache/profile | wc -l)"

# Large outputs are compared in pieces (whole comparisons of 8 GiB
# outputs ran a GPU out of memory): the same verdicts, counts and
# masks as in one go, contiguous or not.
check_same "pieces compare as the whole does" "same same same" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'import torch
from geakh import compare
def verdicts(a, b):
    try:
        compare.compare(a, b, 1e-5, 1e-5)
        said = "pass"
    except compare.Mismatch as exc:
        said = str(exc)
    return said, compare.count(compare.unstable(a, b, 1e-5, 1e-5))
torch.manual_seed(0)
r = torch.randn(50, 97)
c = r.clone()
c[3, 5] += 1
c[40, 96] = float("nan")
r[0, 0] = c[0, 0] = float("nan")
out = []
for a, b, differ in ((c, r, 2), (c.t(), r.t(), 2), (r.clone(), r, 0)):
    compare.CHUNK = 1 << 24
    whole = verdicts(a, b)
    compare.CHUNK = 1000
    out.append("same" if verdicts(a, b) == whole and whole[1] == differ else f"{whole} {verdicts(a, b)}")
print(*out)')"
# The probe (the first call made again on its inputs changed in place)
# keeps every argument that call is expected to change, changed by the
# probe or not: a racing in-place output that the probe may leave as it
# was must not make the probe's outputs differ in their keys.
cat > fill.py <<'PY'
import os

import torch
import triton
import triton.language as tl


@triton.jit
def _fill(x_ptr, out_ptr, n, bit, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
    tl.store(out_ptr + offs, tl.max(x, 0) + bit, mask=offs < n)


def fill_max(x, out):
    _fill[(1,)](x, out, x.numel(), float(os.urandom(1)[0] & 1), BLOCK=triton.next_power_of_2(x.numel()))
PY
cat > fill_test.py <<'PY'
import torch


def inputs():
    return [(torch.randn(64, device="cuda"), torch.zeros(64, device="cuda"))]
PY
jq -nc --rawfile r fill.py --rawfile t fill_test.py \
	'{id: "plain/fill_max", code: $r, task: {suite: "plain", name: "fill_max", reference: $r, test: $t}}' > fill.jsonl
gather run-static fill

# An argument that no call of the reference changes but its probe may:
# here only the first probe of a process (the reference's canonical one,
# and the candidate's first run's) lifts x[0] in place, so the probe of
# the candidate's repeated run keeps x only because the reference's
# probe was seen to change it.
cat > lift.py <<'PY'
import torch
import triton
import triton.language as tl

_lifted = []


@triton.jit
def _lift(x_ptr, out_ptr, n, up, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)
    tl.store(x_ptr, tl.where(up > 0, tl.load(x_ptr + 1), tl.load(x_ptr)))


def lift(x, out):
    up = 0.0
    if not _lifted and float(x[0]) < float(x[1]):
        _lifted.append(1)
        up = 1.0
    _lift[(1,)](x, out, x.numel(), up, BLOCK=triton.next_power_of_2(x.numel()))
PY
cat > lift_test.py <<'PY'
import torch


def inputs():
    return [(torch.sort(torch.randn(64, device="cuda"), descending=True).values, torch.zeros(64, device="cuda"))]
PY
jq -nc --rawfile r lift.py --rawfile t lift_test.py \
	'{id: "plain/lift", code: $r, task: {suite: "plain", name: "lift", reference: $r, test: $t}}' > lift.jsonl
gather run-static lift
judge run-static --cpu --no-cache
check_same "a racing in-place output passes its probe as its own candidate" "true null" \
	"$(jq -r '"\(.eval.exec) \(.eval.message)"' fill.out)"
check_same "an argument only the reference's probe changed: the repeat's probe keeps it" "true null" \
	"$(jq -r '"\(.eval.exec) \(.eval.message)"' lift.out)"

# An autotuner's search writes a call's outputs before the call's own
# launch writes the same values there: the launch hook tells the call of
# the search's launches, so the output counts as written by its kernels.
check_same "an output a search wrote first is written by the call's kernels" "True False" \
	"$("$GEAK_PYTHON" "$top/tests/harness/searched.py" 2>>err.txt | tail -n 1)"

# Where the reference races at 3000 elements, a candidate's outputs may
# all differ at 3 (one per thousand), no more, and each at no more than
# twice the spread; where the reference's runs agree, at none.
check_same "a racing case's outputs may share a difference per thousand of the spread" \
	"pass pass fail fail fail" \
	"$("$GEAK_PYTHON" "$top/tests/harness/fixed_share.py" 2>>err.txt | tail -n 1)"

# Before a watched call the allocator's free blocks are filled, each by a
# request that the allocator serves from that block (the GPU's own check:
# tests/gpu/alloc-check.py); which requests, from a made-up snapshot.
check_same "the free blocks filled, by the requests that take them" "2048 1024 1024 512 300 1.5 True" \
	"$("$GEAK_PYTHON" "$top/tests/harness/free_sizes.py" 2>>err.txt | tail -n 1)"

done_testing
