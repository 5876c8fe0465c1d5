#!/bin/sh
# The performance cases, driven on the CPU through the harness worker
# (Triton's interpreter with the CPU mode's device mapping; the times mean
# nothing here): the reference is calibrated on its cases, the candidate's
# run checks every case's outputs and, after its handshake, times them and
# keeps outputs of its timed calls, and the judge compares both against
# the reference's profile.  A candidate with one face for checks and
# another for timing is caught where it is timed.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
command -v jq >/dev/null || skip_all "no jq"
plan 62
c=$top/tests/cheats
h=$top/tests/harness
# The cases are driven through the whole path by one perf_cpu.py, as
# geak-eval's slot judges many records with its two workers (each of
# their jobs a fresh fork): queue NAME REF CAND [PERF] or queue NAME
# RECORDS.jsonl adds one to cases.jsonl, drive_queued drives them all,
# and result NAME prints that case's JSON.
queue() {
	name=$1
	shift
	case $1 in
	*.jsonl) jq -nc --args '$ARGS.positional' "$name" "$1" "$scratch/$name" ;;
	*) jq -nc --args '$ARGS.positional' "$name" "$1" "$2" "$scratch/$name" ${3:+"$3"} ;;
	esac >> cases.jsonl
}
drive_queued() {
	GEAK_TEST_TIME=1 "$GEAK_PYTHON" "$h/perf_cpu.py" --cases cases.jsonl > results.jsonl 2>>err.txt
}
result() {
	jq -cR --arg n "$1" 'fromjson? | select(.name == $n)' results.jsonl
}
# verdicts JSON: "calibrated run-exec run-reason timed-exec timed-reason".
verdicts() {
	printf '%s' "$1" | jq -r '"\(.profile.ok) \(.run.exec) \(.run.reason) \(.timed.exec) \(.timed.reason)"'
}

# The cases' inputs first, each with what it shows; the checks of their
# verdicts follow, once they are all driven.
queue honest "$c/add_reference.py" "$c/honest.py"
queue twofaced "$c/add_reference.py" "$c/two_faced.py"
queue fallback "$c/add_reference.py" "$c/torch_fallback.py"

# NAME.py as its own candidate passes the checks and the timed calls;
# NAME_wrong.py fails the checks (self_and_twin NAME HOW checks it).
queue_twins() {
	queue "$1" "$1.py" "$1.py"
	queue "$1-wrong" "$1.py" "$1_wrong.py"
}
self_and_twin() {
	check_same "the $1 reference as candidate passes, checked and timed" "true true null true null" \
		"$(verdicts "$(result "$1")")"
	check_same "a candidate wrong $2 still fails" "false mismatch" \
		"$(result "$1-wrong" | jq -r '"\(.run.exec) \(.run.reason)"')"
}

# A reference that writes only part of its output: what it leaves alone
# holds the poison, and is not compared.
sed -e 's/x + y, mask=mask)/x + y, mask=mask \& (offs < n \/\/ 2))/' "$c/add_reference.py" > half.py
sed -e 's/x + y, mask=mask \& (offs < n \/\/ 2))/x + y + (offs == 3), mask=mask \& (offs < n \/\/ 2))/' half.py > half_wrong.py
check_same "the half-writing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'offs < n // 2' half.py) $(grep -c 'offs == 3' half_wrong.py)"
queue_twins half

# A reference whose writes race: 64 places of its output get one of two
# values at random on every call (os.urandom: no seed decides it).  Its
# calibration runs it more, and what races is left out; its profile says
# which cases race, and the candidate checks those more.
sed -e 's/^    return out$/    k = min(64, n)\n    out[-k:] = (torch.tensor(list(os.urandom(k)), device=out.device) % 2).to(out.dtype)\n    return out/' \
	-e 's/^import torch$/import os\nimport torch/' "$c/add_reference.py" > racy.py
sed -e 's/x + y, mask=mask)/x + y + (offs == 3), mask=mask)/' racy.py > racy_wrong.py
check_same "the racing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'os.urandom(k)' racy.py) $(grep -c 'offs == 3' racy_wrong.py)"
queue_twins racy

# A reference that races where no number of its runs shows every element
# that can: one element of a 65536-wide tail, drawn at random on every
# call, is set.  Its identical candidate passes, noted; one wrong at the
# same element on every call fails.
sed -e 's/^    return out$/    tail = torch.zeros(1 << 16, dtype=out.dtype, device=out.device)\n    tail[int.from_bytes(os.urandom(4), "little") % (1 << 16)] = 1\n    return torch.cat([out, tail])/' \
	-e 's/^import torch$/import os\nimport torch/' "$c/add_reference.py" > sparse.py
sed -e 's/x + y, mask=mask)/x + y + (offs == 3), mask=mask)/' sparse.py > sparse_wrong.py
check_same "the sparsely racing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'os.urandom(4)' sparse.py) $(grep -c 'offs == 3' sparse_wrong.py)"
queue_twins sparse

# A reference that reads past the end of an input (as perf scripts that
# pass a one-element scale to a kernel indexing it per block make it do):
# both sides find the same zeros there, and the elements that depend on
# them (a calibration run with poisoned guard zones shows which) are not
# compared.
sed -e 's/y_ptr + offs, mask=mask)/y_ptr + offs + n \/\/ 2, mask=mask)/' "$c/add_reference.py" > past.py
sed -e 's/x + y, mask=mask)/x - y, mask=mask)/' past.py > past_wrong.py
check_same "the reading-past-the-end reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'n // 2' past.py) $(grep -c 'x - y' past_wrong.py)"
queue_twins past

# A reference whose first call in a process differs, as racing writes
# decided by a cold start do: its calibration runs disagree there.
{ sed -e 's/^    return out$/    return first_call(out)/' "$c/add_reference.py"
  printf '%s\n' '' '' 'def first_call(out):' \
	'    import os' \
	'    if not os.environ.get("GEAK_TEST_WARM"):' \
	'        os.environ["GEAK_TEST_WARM"] = "1"' \
	'        out[0] += 1' \
	'    return out'; } > cold.py
check_same "the cold-start reference is what it says" 1 "$(grep -c 'return first_call(out)' cold.py)"
queue cold cold.py cold.py

# An autotuner keyed on nothing that changes between cases would keep the
# configuration found on the first: the timing tunes afresh on each, and
# pins the reference's choices per case.
sed -e 's/^@triton.jit/@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=2)], key=[])\n@triton.jit/' \
	"$c/add_reference.py" > tuned.py
check_same "the autotuned reference is what it says" 1 "$(grep -c 'key=\[\]' tuned.py)"
queue tuned tuned.py tuned.py

# A reference whose output depends on its autotuner's choice: calibrated
# under each configuration, a candidate that picks the other is not
# failed for it, a wrong one still is.
tuned_add() { "$GEAK_PYTHON" "$h/tuned_add.py" "$@"; }
tuned_add normal right > tref.py
tuned_add reversed right > tcand.py
tuned_add reversed wrong > twrong.py
check_same "the tuning-dependent reference and its twins are what they say" "1 1 1" \
	"$(grep -c 'SHIFT": 0}), triton.Config({"SHIFT": 1' tref.py) $(grep -c 'SHIFT": 1}), triton.Config({"SHIFT": 0' tcand.py) $(grep -c 'offs == 5' twrong.py)"
queue tcand tref.py tcand.py
queue twrong tref.py twrong.py
# A configuration that cannot run (a static assertion, as one that
# overruns a buffer): the calibration runs without it.
tuned_add normal right faulty > tfref.py
sed -e 's/x + y, mask=mask)/x + y + (offs == 5), mask=mask)/' "$c/add_reference.py" > plus5.py
check_same "the reference whose second configuration fails and the candidate wrong at element 5 are what they say" "1 1" \
	"$(grep -c 'static_assert(SHIFT == 0)' tfref.py) $(grep -c 'offs == 5' plus5.py)"
queue tf tfref.py plus5.py

# A perf script that fails for the reference itself on one case is the
# task's defect: that case is left out for every candidate.
sed -e 's/^    out = torch.empty_like(x)$/    if x.numel() == 300:\n        raise ValueError("no such size")\n    out = torch.empty_like(x)/' \
	"$c/add_reference.py" > brokenref.py
check_same "the reference that fails on the first case (and on no test input) is what it says" 1 \
	"$(grep -c 'no such size' brokenref.py)"
queue brokenref brokenref.py "$c/honest.py"
queue brokencand "$c/add_reference.py" brokenref.py

# A case in which none of the reference's own kernels launch (here a
# torch path for one size) times something else: it is left out for
# every candidate, as a case the reference fails on is.
sed -e 's/^    out = torch.empty_like(x)$/    if x.numel() == 300:\n        return x + y\n    out = torch.empty_like(x)/' \
	"$c/add_reference.py" > torchpath.py
check_same "the reference with a torch path on the first case is what it says" 1 \
	"$(grep -c 'return x + y' torchpath.py)"
queue torchpath torchpath.py "$c/honest.py"

# The calibration resamples the performance cases whose runs disagree,
# not the others: here the 1000-element case races at one element.
queue racycase "$h/racy_case_add.py" "$h/racy_case_add.py"
queue racycase-wrong "$h/racy_case_add.py" "$h/racy_case_add_wrong.py"

# Where a reference races, its perturbed runs take its programs in the
# other order too: a place that several programs write goes to the first
# of them, not the last, and a candidate that takes its blocks in the
# other order is not failed for the winner it picked.  The orders
# themselves are checked in the interpreter, by tests/gpu/order-check.py.
queue scatter "$h/racy_scatter_add.py" "$h/racy_scatter_reversed.py"
queue scatter-self "$h/racy_scatter_add.py" "$h/racy_scatter_add.py"

# A ROCm file runs its own correctness tests and test_performance cases;
# a TritonBench perf script (its sizes cut for the interpreter) has its
# call_op run the candidate's functions, its GB/s counted.
geak=$top/../shared/bench/geak-eval-data.tar.gz
if [ -r "$geak" ]; then
	geak-import --suite rocm --ids test_add_kernel --as-candidate "$geak" |
		jq -c '.task.test |= (gsub("1048576"; "4096") | gsub("98432"; "3000"))' > add.jsonl
	queue rocm add.jsonl
	# --perf-cases 2 of 4: the first and the last, the same for the
	# reference's calibration and the candidate's run and timing.
	jq -c '.task.perf_cases = 2' add.jsonl > add-2.jsonl
	queue rocm-2 add-2.jsonl
	jq -c '.code |= sub("output = x \\+ y"; "output = x + no_such_name")' add.jsonl > bad.jsonl
	queue rocm-bad bad.jsonl
	geak-import --suite tbg --ids vector_addition_custom --as-candidate "$geak" |
		jq -c '.task.perf |= sub("range\\(12, 28\\)"; "range(8, 10)")' > va.jsonl
	queue va va.jsonl
	jq -c '.task.perf_cases = 1' va.jsonl > va-1.jsonl
	queue va-1 va-1.jsonl
	# call_op_ref is never used: a perf script whose call_op_ref does
	# other work, or whose second call_op calls the reference's name,
	# still times the candidate's own functions.
	jq -c '.task.perf |= sub("return custom_add_ref\\(input_tensor\\[0\\], input_tensor\\[1\\]\\)";
		"return custom_add_ref(input_tensor[0], input_tensor[0])")' va.jsonl > va-other.jsonl
	jq -c '.task.perf |= sub("    def get_gbps"; "    def call_op(self, input_tensor):\n        return custom_add_ref(input_tensor[0], input_tensor[1])\n\n    def get_gbps")' \
		va.jsonl > va-swapped.jsonl
	queue va-other va-other.jsonl
	queue va-swapped va-swapped.jsonl
	jq -c '.code |= sub("def custom_add\\(a, b\\):"; "def custom_add(a, b):\n    return a + b\ndef _unused(a, b):")' va.jsonl > va-torch.jsonl
	queue va-torch va-torch.jsonl
fi

drive_queued

out=$(result honest)
check_same "an honest candidate passes its checks and its timed calls" "true true null true null" "$(verdicts "$out")"
check_same "every case timed, with the candidate's launches counted" "2 true" \
	"$(printf '%s' "$out" | jq -r '"\(.timing.cases | length) \(.timing.cases | all(.ms > 0 and .launches > 0))"')"
check_same "the job's ready message says the layers it runs under" "true true" \
	"$(printf '%s' "$out" | jq -r '"\(.ready.landlock) \(.ready.sandbox.pidns)"')"
check_same "the timing carries the run's nonce and a probe of the device" "c0 true" \
	"$(printf '%s' "$out" | jq -r '"\(.timing.nonce) \(.timing.probe_before | has("flush_ms"))"')"
check_same "the calibration keeps each case's bytes from the perf script" "true" \
	"$(printf '%s' "$out" | jq -r '.profile.cases | all(.counts.gbps > 0)')"

out=$(result twofaced)
check_same "the two-faced candidate passes its checks, and fails where it is timed" \
	"true true null false mismatch" "$(verdicts "$out")"
check_match "the message names the timed call" "performance case 0, timed call" \
	"$(printf '%s' "$out" | jq -r .timed.message)"
check_same "a candidate that launches no kernel of its own is a cheat" "true false cheat" \
	"$(result fallback | jq -r '"\(.profile.ok) \(.run.exec) \(.run.reason)"')"

self_and_twin half "where the reference writes"
self_and_twin racy "where nothing races"
check_same "its profile says which cases race, and the candidate checks those more" "true" \
	"$(result racy | jq -r '.profile.cases | all(.spread > 0)')"

out=$(result sparse)
check_same "the sparsely racing reference as candidate passes, noted" "true true within_reference_spread" \
	"$(printf '%s' "$out" | jq -r '"\(.run.exec) \(.timed.exec) \(.run.notes | map(select(. == "within_reference_spread")) | join(","))"')"
check_same "wrong at one element on every call, it fails" "false mismatch" \
	"$(result sparse-wrong | jq -r '"\(.run.exec) \(.run.reason)"')"

self_and_twin past "where the reference is defined"

check_same "the same code as candidate passes" "true true null true null" \
	"$(verdicts "$(result cold)")"

out=$(result tuned)
check_same "the timing searches once per case" "true 1,1" \
	"$(printf '%s' "$out" | jq -r '"\(.timed.exec) \(.timing.cases | map(.searches) | join(","))"')"
check_same "the timing says what its searches and its timed calls took, and no profile" "true true 0" \
	"$(printf '%s' "$out" | jq -r '.timing.spent | "\(.tuning > 0) \(.timed > 0) \(.profile)"')"

check_same "the other configuration's outputs pass, checked and timed" "true true null true null" \
	"$(verdicts "$(result tcand)")"
check_same "wrong where the tuning does not matter still fails" "false mismatch" \
	"$(result twrong | jq -r '"\(.run.exec) \(.run.reason)"')"
check_same "such a reference still calibrates, and a wrong candidate fails against it" "true false mismatch" \
	"$(result tf | jq -r '"\(.profile.ok) \(.run.exec) \(.run.reason)"')"

out=$(result brokenref)
check_same "the case it fails on is marked, with its error" "false true true" \
	"$(printf '%s' "$out" | jq -r '"\(.profile.cases[0].ok) \(.profile.cases[1].ok) \(.profile.cases[0].error | contains("no such size"))"')"
check_same "the candidate is checked and timed on the other case alone" "true true 1" \
	"$(printf '%s' "$out" | jq -r '"\(.run.exec) \(.timed.exec) \(.timing.cases | map(.key) | join(","))"')"
check_match "a candidate failing on a case where the reference does not fails there" \
	"^false perf runtime performance case 0: ValueError: no such size" \
	"$(result brokencand | jq -r '"\(.run.exec) \(.run.stage) \(.run.reason) \(.run.message)"')"

check_same "that case is left out, said why; the candidate is checked and timed on the other" \
	"false true true true true 1" \
	"$(result torchpath | jq -r '"\(.profile.cases[0].ok) \(.profile.cases[1].ok) \(.profile.cases[0].error | contains("no kernel of the reference")) \(.run.exec) \(.timed.exec) \(.timing.cases | map(.key) | join(","))"')"
check_same "a synchronised call's wall time far above its event time is work the events did not see" \
	"False True" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import timing
print(timing._hidden((1.0, 1.2)), timing._hidden((1.0, 3.0)))')"
check_same "a side's timed calls stop near 100 ms of device time, never below five or above --reps" \
	"20 10 5 20 3" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import timing as t
print(t.reps_for(20, [1.0, 0.2]), t.reps_for(20, [2.0, 10.0]), t.reps_for(20, [50.0]),
      t.reps_for(20, [0.0]), t.reps_for(3, [50.0]))')"
check_same "a hidden-looking sample is retaken: noise once is not hidden work, every time is" \
	"False True False False" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import timing
noisy = iter([(1.0, 1.1)] * 8)
print(timing._hides_work(lambda i: next(noisy), [(1.0, 3.0), (1.0, 1.1)]),
      timing._hides_work(lambda i: (1.0, 3.0) if i == 0 else (1.0, 1.1), [(1.0, 3.0), (1.0, 1.1)]),
      timing._hides_work(lambda i: (1.0, 3.0), [(1.0, 3.0), (1.0, 3.0)]),
      timing._hides_work(lambda i: 1 / 0, [(1.0, 1.2)]))')"
# The flush before a synchronised call takes what the memory gives it:
# its time on that call is taken out of the wall time, not a typical one.
check_same "a slow L2 flush before the code's calls is not work the events did not see" "hidden: False" \
	"$("$GEAK_PYTHON" "$top/tests/harness/slow_flush.py" 2>>err.txt | tail -n 1)"
check_same "the device is held by the reference's host time, never the code's; none without a spin" \
	"0.08 0.08 2.0 0.0 0.0 0.0" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import bench, timing as t
h = lambda q, c=1e6: round(bench.hold_for(q, c), 4)
print(h(t._trusted_queue([5.0, 0.03], True, None)), h(t._trusted_queue([5.0], False, {"queue_ms": 0.03})),
      h(5.0), h(t._trusted_queue([5.0], False, None)), h(t._trusted_queue([5.0], False, {})), h(0.03, 0))')"
check_same "a run short of GPU memory leaves what it showed it needs, the most of its processes'" \
	'{"need_mib": 8192} {"need_mib": 8192} none' \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'import os, tempfile
from geakh import errors
errors.OOM_MARK = os.path.join(tempfile.mkdtemp(), "oom")
said = []
for m in ("CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0", "out of memory. Tried to allocate 2.00 GiB."):
    errors.mark_if_short(RuntimeError(m))
    said.append(open(errors.OOM_MARK).read())
os.remove(errors.OOM_MARK)
errors.mark_if_short(ValueError("shapes differ"))
print(*said, "none" if not os.path.exists(errors.OOM_MARK) else "marked")')"
check_same "a test part's imports go with the kernel module, its own module's left out" \
	"import torch|from os import path|" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import source
print(source.test_imports("import torch\nfrom os import path\nfrom blk import f\ndef test_x():\n    import numpy\n", "blk"), end="")' | tr '\n' '|')"
# Correctness runs search each configuration briefly: they want outputs,
# and full searches took minutes on scripts with many configurations and
# shapes (a CUDA-graph search included).
check_same "quick searches time every configuration for a few ms" "timed 5 with [(1, 5)]" \
	"$("$GEAK_PYTHON" "$top/tests/harness/quick_search.py" 2>>err.txt | tail -n 1)"
# The timing's searches hold the GPU alone: a tenth of Triton's 25 + 100 ms.
check_same "full searches time every configuration for 2 + 10 ms" "timed 5 with [(2, 10)]" \
	"$("$GEAK_PYTHON" "$top/tests/harness/quick_search.py" full 2>>err.txt | tail -n 1)"

# The calibration resamples the performance cases whose runs disagree,
# not the others: here the 1000-element case races at one element (the
# same one on every run, so R's first round ends the resampling: 1 + 1 +
# 3, and P's 2 + 4).
out=$(result racycase)
check_same "a racing case is resampled, the others run once more, and the reference passes" \
	"4 11 true true" \
	"$(printf '%s' "$out" | jq -r '"\([.profile.cases[].checks] | join(" ")) \(.run.exec) \(.timed.exec)"')"
# The test's first input has 1000 elements too: a race decided anew on
# every call, at one element, is not taken for one fixed within a process,
# so the wrong element fails the test's inputs already.
check_same "... and a candidate wrong at another element of that case fails, on the test's inputs already" \
	"false exec mismatch" \
	"$(result racycase-wrong | jq -r '"\(.run.exec) \(.run.stage) \(.run.reason)"')"

check_same "the perturbed process's program orders, in the interpreter" "order: ok" \
	"$("$GEAK_PYTHON" "$top/tests/gpu/order-check.py" 2>>err.txt | tail -n 1)"
# Each perturbed run starts in the other order from the one before, so
# the repeat of a run's first call (its last launch) sees the other
# winner too: the place is left out there as well, and the candidate's
# outputs are not held to the reference's spread.
check_same "a racing scatter's other winner passes, left out in the repeated call too" "4 1 true true false" \
	"$(result scatter | jq -r '"\(.profile.cases[0].checks) \(.profile.cases[0].spread) \(.run.exec) \(.timed.exec) \(.run.notes | index("within_reference_spread") != null)"')"
check_same "... and the reference passes as its own candidate" "true true" \
	"$(result scatter-self | jq -r '"\(.run.exec) \(.timed.exec)"')"

# A perf script's inputs are made once per process: an output buffer it
# takes from torch.empty would hold that process's garbage where no
# kernel writes, unlike in the reference's processes.
check_same "a perf script's empty tensors come zeroed" "outside: garbage; inside: zeros zeros zeros" \
	"$("$GEAK_PYTHON" "$top/tests/harness/zeroed_empties.py" 2>>err.txt | tail -n 1)"

# A performance case's output of more than 4 MiB is kept as a sample:
# its values at fixed positions (the positions themselves not stored)
# and its sums, which the judge compares as it does whole outputs.
check_same "a large output is sampled, compared, and kept small" "values passes fails fails True" \
	"$("$GEAK_PYTHON" "$top/tests/harness/sampled.py" "$scratch/sampled" 2>>err.txt | tail -n 1)"

if [ -r "$geak" ]; then
	out=$(result rocm)
	check_same "ROCm: the reference as candidate passes, checked and timed" "true true null true null" \
		"$(verdicts "$out")"
	check_same "ROCm: every test_performance case is calibrated and timed" "4 4" \
		"$(printf '%s' "$out" | jq -r '"\(.profile.cases | length) \(.timing.cases | length)"')"
	out=$(result rocm-2)
	check_same "ROCm: two cases of four, spread, calibrated, checked and timed" \
		"true true null true null 2 2 4 true" \
		"$(verdicts "$out") $(printf '%s' "$out" | jq -r '"\(.profile.cases | length) \(.timing.cases | length) \(.timing.cases_total) \([.profile.cases[].key] == [.timing.cases[].key])"')"
	check_same "ROCm: a broken candidate kernel fails (not the reference's again)" "false runtime" \
		"$(result rocm-bad | jq -r '"\(.run.call) \(.run.reason)"')"
	out=$(result va)
	check_same "TritonBench: the reference as candidate passes both cases, with the script's GB/s" \
		"true true null true null 2 true" \
		"$(verdicts "$out") $(printf '%s' "$out" | jq -r '"\(.timing.cases | length) \(.profile.cases | all(.counts.gbps > 0))"')"
	out=$(result va-1)
	check_same "TritonBench: one case of two, the last, checked and timed" "true true null true null 1 1 2" \
		"$(verdicts "$out") $(printf '%s' "$out" | jq -r '"\(.timing.cases | length) \(.timing.cases[0].key) \(.timing.cases_total)"')"
	check_same "the altered perf scripts are what they say" "1 2" \
		"$(jq -r .task.perf va-other.jsonl | grep -c 'input_tensor\[0\], input_tensor\[0\]') $(jq -r .task.perf va-swapped.jsonl | grep -c 'def call_op(')"
	check_same "TritonBench: a call_op_ref that does other work, or a call_op that calls the reference, changes nothing" \
		"true true null true null true true null true null" \
		"$(for f in va-other va-swapped; do verdicts "$(result $f)"; done | paste -sd ' ')"
	check_same "TritonBench: a torch fallback behind the perf script's name is a cheat" "false cheat" \
		"$(result va-torch | jq -r '"\(.run.exec) \(.run.reason)"')"
else
	for i in 1 2 3 4 5 6 7 8 9; do skip "no benchmark archive $geak"; done
fi
done_testing
