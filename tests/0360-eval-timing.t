#!/bin/sh
# The timing run's two stages, driven on the CPU (Triton's interpreter with
# the CPU mode's device mapping; the times mean nothing here): the check
# stage compares outputs on the performance inputs and wants the
# candidate's own kernel launched; the timing stage compares the outputs of
# its own timed calls, so a candidate with one face for checks and another
# for timing is caught where it is timed.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
command -v jq >/dev/null || skip_all "no jq"
plan 61
drive() { "$GEAK_PYTHON" "$top/tests/harness/timing_cpu.py" "$@" 2>>err.txt | tail -n 1; }
field() { "$GEAK_PYTHON" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(eval(sys.argv[1], d))' "$1"; }
c=$top/tests/cheats

out=$(drive check "$c/honest.py" honest-check)
check_same "check stage: an honest candidate passes" "None 2" \
	"$(printf '%s' "$out" | field '(globals().get("error"), launches)' | tr -d "(),")"
out=$(drive time "$c/honest.py" honest-time)
check_same "timing stage: one row per performance input, both sides timed" "2 True" \
	"$(printf '%s' "$out" | field '(len(shapes), all(r["ms"] > 0 and r["ms_ref"] > 0 for r in shapes))' | tr -d '(),')"
check_same "timing stage: the run's nonce is in the result" n0nce \
	"$(printf '%s' "$out" | field 'nonce')"
check_same "timing stage: its seconds split into setup, warm-up and timed calls" "setup timed warmup True" \
	"$(printf '%s' "$out" | field '" ".join(sorted(spent)) + " " + str(all(v >= 0 for v in spent.values()))')"
out=$(drive check "$c/two_faced.py" tf-check)
check_same "check stage: the two-faced candidate looks right while checked" None \
	"$(printf '%s' "$out" | field 'globals().get("error")')"
out=$(drive time "$c/two_faced.py" tf-time)
check_same "timing stage: its timed outputs are wrong: mismatch" mismatch \
	"$(printf '%s' "$out" | field 'error["kind"]')"
check_match "the message says the timed call differed" "performance input 0, timed call" \
	"$(printf '%s' "$out" | field 'error["message"]')"
out=$(drive check "$c/torch_fallback.py" tb-check)
check_same "check stage: a candidate that launches no kernel of its own is a cheat" cheat \
	"$(printf '%s' "$out" | field 'error["kind"]')"
out=$(drive time "$c/torch_fallback.py" tb-time)
check_same "timing stage: the same, on the timed inputs" cheat \
	"$(printf '%s' "$out" | field 'error["kind"]')"

# A reference that writes only part of its output: what it leaves alone
# holds whatever memory held, poison included, and is not compared.
sed -e 's/x + y, mask=mask)/x + y, mask=mask \& (offs < n \/\/ 2))/' "$c/add_reference.py" > half.py
check_same "the half-writing reference is what it says" 1 "$(grep -c 'offs < n // 2' half.py)"
out=$(drive time half.py half-time half.py)
check_same "timing stage: the same code as candidate is not a mismatch" "None 2" \
	"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes))' | tr -d "(),")"

# NAME.py as its own candidate passes both stages; NAME_wrong.py fails the
# check stage (3 checks).
self_and_twin() {
	out=$(drive check "$1.py" "$1-check" "$1.py")
	check_same "check stage: the $1 reference as candidate is not a mismatch" None \
		"$(printf '%s' "$out" | field 'globals().get("error")')"
	out=$(drive time "$1.py" "$1-time" "$1.py")
	check_same "timing stage: nor there" "None 2" \
		"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes))' | tr -d "(),")"
	out=$(drive check "$1_wrong.py" "$1w-check" "$1.py")
	check_same "check stage: a candidate wrong $2 still fails" mismatch \
		"$(printf '%s' "$out" | field 'error["kind"]')"
}

# A reference whose writes race: 64 places of its output get one of two
# values at random on every call (os.urandom: no seed decides it).  Where
# the candidate's outputs differ, more runs of the reference show what
# races, and it is left out; a candidate wrong elsewhere still fails.
sed -e 's/^    return out$/    out[-64:] = (torch.tensor(list(os.urandom(64)), device=out.device) % 2).to(out.dtype)\n    return out/' \
	-e 's/^import torch$/import os\nimport torch/' "$c/add_reference.py" > racy.py
sed -e 's/x + y, mask=mask)/x + y + (offs == 3), mask=mask)/' racy.py > racy_wrong.py
check_same "the racing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'os.urandom(64)' racy.py) $(grep -c 'offs == 3' racy_wrong.py)"
self_and_twin racy "where nothing races"

# A reference that races where no number of its runs shows every element
# that can: one element of a 65536-wide tail, drawn at random on every
# call, is set.  The candidate identical to it passes both stages, noted,
# as its outputs differ elsewhere on each call; one wrong at the same
# element on every call still fails.
sed -e 's/^    return out$/    tail = torch.zeros(1 << 16, dtype=out.dtype, device=out.device)\n    tail[int.from_bytes(os.urandom(4), "little") % (1 << 16)] = 1\n    return torch.cat([out, tail])/' \
	-e 's/^import torch$/import os\nimport torch/' "$c/add_reference.py" > sparse.py
sed -e 's/x + y, mask=mask)/x + y + (offs == 3), mask=mask)/' sparse.py > sparse_wrong.py
check_same "the sparsely racing reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'os.urandom(4)' sparse.py) $(grep -c 'offs == 3' sparse_wrong.py)"
for stage in check time; do
	out=$(drive $stage sparse.py sparse-$stage sparse.py)
	check_same "$stage stage: the sparsely racing reference as candidate passes, noted" \
		"None ['within_reference_spread']" \
		"$(printf '%s' "$out" | field '(globals().get("error"), notes)' | sed 's/^(//; s/)$//; s/, / /')"
	out=$(drive $stage sparse_wrong.py sparse-w-$stage sparse.py)
	check_same "$stage stage: wrong at one element on every call, it fails" mismatch \
		"$(printf '%s' "$out" | field 'error["kind"]')"
done

# A reference that reads past the end of an input (as perf scripts that
# pass a one-element scale to a kernel indexing it per block make it do):
# the candidate and the reference must find the same bytes there, and the
# elements that depend on them are not compared.
sed -e 's/y_ptr + offs, mask=mask)/y_ptr + offs + n \/\/ 2, mask=mask)/' "$c/add_reference.py" > past.py
sed -e 's/x + y, mask=mask)/x - y, mask=mask)/' past.py > past_wrong.py
check_same "the reading-past-the-end reference and its wrong twin are what they say" "1 1" \
	"$(grep -c 'n // 2' past.py) $(grep -c 'x - y' past_wrong.py)"
self_and_twin past "where the reference is defined"

# A reference whose first call in a process differs, as racing writes
# decided by a cold start do: the reference's calls disagree there, and
# the candidate, never the first caller, is not held to either.
{ sed -e 's/^    return out$/    return first_call(out)/' "$c/add_reference.py"
  printf '%s\n' '' '' 'def first_call(out):' \
	'    import os' \
	'    if not os.environ.get("GEAK_TEST_WARM"):' \
	'        os.environ["GEAK_TEST_WARM"] = "1"' \
	'        out[0] += 1' \
	'    return out'; } > cold.py
check_same "the cold-start reference is what it says" 1 "$(grep -c 'return first_call(out)' cold.py)"
out=$(drive check cold.py cold-check cold.py)
check_same "check stage: the same code as candidate is not a mismatch" "None 2" \
	"$(printf '%s' "$out" | field '(globals().get("error"), launches)' | tr -d "(),")"

# An autotuner keyed on nothing that changes between inputs would keep
# the configuration found on the first: each side tunes afresh on each.
sed -e 's/^@triton.jit/@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=2)], key=[])\n@triton.jit/' \
	"$c/add_reference.py" > tuned.py
check_same "the autotuned reference is what it says" 1 "$(grep -c 'key=\[\]' tuned.py)"
out=$(drive time tuned.py tuned-time tuned.py)
check_same "timing stage: each side tunes once per performance input" "None 2 2 2" \
	"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes), autotune_searches["candidate"], autotune_searches["reference"])' | tr -d "(),")"

# A reference whose output depends on its autotuner's choice (as sums
# that cancel do on the tile sizes): a candidate that picks the other
# configuration is not failed for it, a wrong one still is.
tuned_add() { "$GEAK_PYTHON" "$top/tests/harness/tuned_add.py" "$@"; }
tuned_add normal right > tref.py
tuned_add reversed right > tcand.py
tuned_add reversed wrong > twrong.py
check_same "the tuning-dependent reference and its twins are what they say" "1 1 1" \
	"$(grep -c 'SHIFT": 0}), triton.Config({"SHIFT": 1' tref.py) $(grep -c 'SHIFT": 1}), triton.Config({"SHIFT": 0' tcand.py) $(grep -c 'offs == 5' twrong.py)"
out=$(GEAK_TEST_ALL_CONFIGS=1 drive check tcand.py tc-check tref.py)
check_same "check stage: the other configuration's output is not a mismatch" None \
	"$(printf '%s' "$out" | field 'globals().get("error")')"
out=$(GEAK_TEST_ALL_CONFIGS=1 drive time tcand.py tc-time tref.py)
check_same "timing stage: nor there" "None 2" \
	"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes))' | tr -d "(),")"
out=$(GEAK_TEST_ALL_CONFIGS=1 drive check twrong.py tw-check tref.py)
check_same "check stage: wrong where the tuning does not matter still fails" mismatch \
	"$(printf '%s' "$out" | field 'error["kind"]')"
# Among three configurations the candidate's choice may be neither the
# reference's nor its runner-up: the reference runs once as the candidate
# tuned it too.
tuned_add normal right three > t3ref.py
tuned_add reversed right three > t3cand.py
tuned_add reversed wrong three > t3wrong.py
check_same "the three-configuration reference and its twins are what they say" "1 1 1" \
	"$(grep -c '"SHIFT": 0}), triton.Config({"SHIFT": 1}), triton.Config({"SHIFT": 2' t3ref.py) $(grep -c '"SHIFT": 2}), triton.Config({"SHIFT": 1}), triton.Config({"SHIFT": 0' t3cand.py) $(grep -c 'offs == 5' t3wrong.py)"
check_same "check stage: the candidate's third configuration is not a mismatch; wrong still is" "None mismatch" \
	"$(GEAK_TEST_ALL_CONFIGS=1 drive check t3cand.py t3c-check t3ref.py | field '(globals().get("error") or {}).get("kind")')"\
" $(GEAK_TEST_ALL_CONFIGS=1 drive check t3wrong.py t3w-check t3ref.py | field '(globals().get("error") or {}).get("kind")')"

# A runner-up that the search on one key never ran can fault there: each
# key of a tuner takes the runner-up of its own search.
check_same "each autotuner key gets the runner-up of its own search" "[0, 0] [1, 2]" \
	"$("$GEAK_PYTHON" "$top/tests/harness/runner_up_keys.py" 2>>err.txt | tail -n 1)"
# The check stage's searches time each configuration briefly: it wants
# outputs, and full searches took minutes on scripts with many
# configurations and shapes (a CUDA-graph search included).
check_same "quick searches time every configuration for a few ms" "timed 5 with [(1, 5)]" \
	"$("$GEAK_PYTHON" "$top/tests/harness/quick_search.py" 2>>err.txt | tail -n 1)"
# A retuned call of the reference that ends the device's usability (an
# illegal memory access does on a GPU) fails the stage as retuned_fault,
# which geak-eval runs again without such calls; an error that leaves the
# device usable is passed over, as before.
tuned_add normal right faulty > tfref.py
sed -e 's/x + y, mask=mask)/x + y + (offs == 5), mask=mask)/' "$c/add_reference.py" > plus5.py
check_same "the reference whose runner-up fails and the candidate wrong at element 5 are what they say" "1 1" \
	"$(grep -c 'static_assert(SHIFT == 0)' tfref.py) $(grep -c 'offs == 5' plus5.py)"
check_same "check stage: a retuned call that leaves the device unusable is retuned_fault" retuned_fault \
	"$(GEAK_TEST_ALL_CONFIGS=1 GEAK_TEST_DEVICE_LOST=1 drive check plus5.py tf-check tfref.py | field 'error["kind"]')"
check_same "check stage: run again without retuned calls, the candidate is judged: mismatch" mismatch \
	"$(GEAK_TEST_ALL_CONFIGS=1 GEAK_TEST_DEVICE_LOST=1 GEAK_TEST_REQUEST='{"retuned": false}' drive check plus5.py tf-again tfref.py | field 'error["kind"]')"
check_same "check stage: a retuned call's error that leaves the device usable is passed over" mismatch \
	"$(GEAK_TEST_ALL_CONFIGS=1 drive check plus5.py tf-usable tfref.py | field 'error["kind"]')"

# Racing outputs: the candidate's outputs that judge.unlike_races sees
# are spread over the reference's extra runs, since outputs made back to
# back share their race's winners.
check_same "a candidate whose first two outputs share a rare winner passes on its later outputs" True \
	"$("$GEAK_PYTHON" "$top/tests/harness/sticky_draws.py" spread 2>>err.txt)"
check_match "one with that winner in every output fails" "in all of them" \
	"$("$GEAK_PYTHON" "$top/tests/harness/sticky_draws.py" sticky 2>>err.txt)"
check_same "a candidate fixed apart at one element of a row where the reference races passes" True \
	"$("$GEAK_PYTHON" "$top/tests/harness/sticky_draws.py" row 2>>err.txt)"
check_match "one fixed apart in a row where nothing races fails" "in all of them" \
	"$("$GEAK_PYTHON" "$top/tests/harness/sticky_draws.py" elsewhere 2>>err.txt)"

# A perf script that fails for the reference itself (token_attn_llama2's
# passes 3-d tensors to a wrapper that takes 4-d ones) is the task's
# defect: told apart from the candidate's failures.
sed -e 's/^    out = torch.empty_like(x)$/    if x.numel() == 1000:\n        raise ValueError("no such size")\n    out = torch.empty_like(x)/' \
	"$c/add_reference.py" > brokenref.py
check_same "the reference that fails on the second input is what it says" 1 "$(grep -c 'no such size' brokenref.py)"
out=$(drive check "$c/honest.py" bref-check brokenref.py)
check_same "check stage: the reference failing on an input is kind reference" reference \
	"$(printf '%s' "$out" | field 'error["kind"]')"
check_match "the message names the input and the reference's error" \
	"the reference itself fails on performance input 1: ValueError: no such size" \
	"$(printf '%s' "$out" | field 'error["message"]')"
out=$(drive check brokenref.py bcand-check)
check_same "check stage: a candidate failing there is kind runtime" runtime \
	"$(printf '%s' "$out" | field 'error["kind"]')"
check_match "the message says whose call on which input failed" \
	"ValueError: no such size [(]in the candidate.s checked call on performance input 1[)]" \
	"$(printf '%s' "$out" | field 'error["message"]')"

check_same "a perf script's inputs go to the device one at a time, as they are used" "3 10 [1]" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import timing
moved = []
d = timing.DeviceInputs([1, 2, 3], lambda x: moved.append(x) or 10 * x)
first = next(iter(d))
print(len(d), first, moved)')"

check_same "a slow host return in one call keeps event times; wall times well above them throughout win" \
	"[1.0, 1.0, 1.0] [3.0, 3.0, 3.0]" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import timing
print(timing.series_ms([(1.0, 1.2), (1.0, 9.0), (1.0, 1.1)]), timing.series_ms([(1.0, 3.0)] * 3))')"

check_same "a test part's imports go with the kernel module, its own module's left out" \
	"import torch|from os import path|" \
	"$(cd "$top/share/harness" && "$GEAK_PYTHON" -c 'from geakh import run
print(run.test_imports("import torch\nfrom os import path\nfrom blk import f\ndef test_x():\n    import numpy\n", "blk"), end="")' | tr '\n' '|')"

# A ROCm file times itself under pytest; the reference's file and the
# candidate's have the same name, and the candidate's must not be served
# from the reference's module.
geak=$top/../shared/bench/geak-eval-data.tar.gz
if [ -r "$geak" ]; then
	geak-import --suite rocm --ids test_add_kernel --as-candidate "$geak" > add.jsonl
	out=$(drive check add.jsonl rocm-check)
	check_same "ROCm check stage: the candidate's file runs its own kernel" "None 4" \
		"$(printf '%s' "$out" | field '(globals().get("error"), launches)' | tr -d "(),")"
	jq -c '.code |= sub("output = x \\+ y"; "output = x + no_such_name")' add.jsonl > bad.jsonl
	out=$(drive check bad.jsonl rocm-bad)
	check_match "ROCm: a broken candidate kernel fails there (not the reference's again)" \
		"test_performance failed for the candidate" "$(printf '%s' "$out" | field 'error["message"]')"
	# Timed: the candidate's file keeps each case's op and the
	# reference's times its own against it, call by call (two rounds); an
	# op that fails when called from outside its own test is timed alone.
	jq -c '.task.test |= (gsub("1048576"; "4096") | gsub("98432"; "3000"))' add.jsonl > add-small.jsonl
	out=$(drive time add-small.jsonl rocm-time)
	check_same "ROCm timing stage: each case timed against the reference's, in both rounds" "None 4 8" \
		"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes), paired)' | tr -d "(),")"
	# Autotuned on both sides: each side searches once per case, its
	# later calls there (the kept op's in the reference's run too) take
	# those choices; searching on every call made 4 and 2 searches a case.
	jq -c '(.code, .task.reference) |= sub("@triton.jit\ndef add_kernel";
		"@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=2)], key=[])\n@triton.jit\ndef add_kernel")' \
		add-small.jsonl > add-tuned.jsonl
	out=$(drive time add-tuned.jsonl rocm-tuned)
	check_same "ROCm timing stage: each side's autotuners search once per case" "None 8 4 4" \
		"$(printf '%s' "$out" | field '(globals().get("error"), paired, autotune_searches["candidate"], autotune_searches["reference"])' | tr -d "(),")"
	jq -c --rawfile w "$top/tests/harness/rocm_own_test_only.py" '.code += "\n\n" + $w' add-small.jsonl > add-own.jsonl
	out=$(drive time add-own.jsonl rocm-own)
	check_same "ROCm timing stage: a kept op that fails when called again is timed on its own" "None 4 0" \
		"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes), paired)' | tr -d "(),")"
	# A TritonBench task's perf script (its sizes cut for the
	# interpreter): inputs made on the host, moved to the device one at a
	# time, the script's bandwidth figures from the host copies.
	geak-import --suite tbg --ids vector_addition_custom --as-candidate "$geak" |
		jq -c '.task.perf |= sub("range\\(12, 28\\)"; "range(8, 10)")' > va.jsonl
	out=$(drive check va.jsonl va-check)
	check_same "TritonBench check stage: the reference as candidate passes" "None 2" \
		"$(printf '%s' "$out" | field '(globals().get("error"), launches)' | tr -d "(),")"
	out=$(drive time va.jsonl va-time)
	check_same "TritonBench timing stage: both cases timed, with the script's GB/s" "None 2 True" \
		"$(printf '%s' "$out" | field '(globals().get("error"), len(shapes), all(r.get("gbps", 0) > 0 for r in shapes))' | tr -d "(),")"
	# Both sides run the script's call_op, each with its own module's
	# functions: a call_op_ref that does other work (chunk_retention) or
	# a second call_op that calls the reference (apply_penalty) leaves
	# the candidate's own call unchanged and the reference doing the same.
	jq -c '.task.perf |= sub("return custom_add_ref\\(input_tensor\\[0\\], input_tensor\\[1\\]\\)";
		"return custom_add_ref(input_tensor[0], input_tensor[0])")' va.jsonl > va-other.jsonl
	jq -c '.task.perf |= sub("    def get_gbps"; "    def call_op(self, input_tensor):\n        return custom_add_ref(input_tensor[0], input_tensor[1])\n\n    def get_gbps")' \
		va.jsonl > va-swapped.jsonl
	check_same "the altered perf scripts are what they say" "1 2" \
		"$(jq -r .task.perf va-other.jsonl | grep -c 'input_tensor\[0\], input_tensor\[0\]') $(jq -r .task.perf va-swapped.jsonl | grep -c 'def call_op(')"
	check_same "TritonBench check stage: a call_op_ref that does other work, or a call_op that calls the reference, changes nothing" \
		"None 2 None 2" \
		"$(for f in va-other va-swapped; do drive check $f.jsonl $f-check | field '((globals().get("error") or {}).get("kind"), globals().get("launches"))'; done | tr -d "()," | paste -sd ' ')"
else
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
	skip "no benchmark archive $geak"
fi
done_testing
