#!/bin/sh
# geak-eval on ROCm benchmark tasks (pytest files): on the CPU, the one
# smoke task that runs under Triton's interpreter passes as a reference and
# fails when its kernel is broken; the rest of the smoke set is checked on
# a GPU by tests/gpu/full-check.sh.
. "$(dirname "$0")/lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
[ -r "$geak" ] || skip_all "no benchmark archive $geak"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 11

geak-import --suite rocm --ids test_reverse_range --as-candidate "$geak" > ref.jsonl
jq -c '.code = "import triton\n" | .mutant = "missing"' ref.jsonl > miss.jsonl
# An autotuning candidate runs the task's autotune variant of the test;
# one whose autotuner leaves BLOCK to the caller (as the reference does)
# runs the original test instead, and the record says so.
d=$top/tests/harness/rocm_double
jq -nc --rawfile r "$d/reference.py" --rawfile t "$d/test.py" \
	--rawfile a "$d/test_autotune.py" --rawfile u "$d/tuned.py" \
	'{id: "rocm/double", task: {suite: "rocm", name: "double", reference: $r,
	  test: $t, test_autotune: $a}} | (.code = $r), (.code = $u),
	  (.code = ($r | sub("\\* 2\\)"; "* 3)")))' > tune.jsonl

# Both tasks' records in one run (each run starts workers that import
# torch): out.jsonl the smoke task's, tune-out.jsonl the autotuning one's.
cat ref.jsonl miss.jsonl tune.jsonl > in.jsonl
geak-eval -j 2 --cpu --no-cache --static off in.jsonl > all.jsonl 2> err.txt
check_same "geak-eval exits 0" 0 $?
jq -c 'select(.id != "rocm/double")' all.jsonl > out.jsonl
jq -c 'select(.id == "rocm/double")' all.jsonl > tune-out.jsonl
check_same "the reference passes" "true true done" \
	"$(sed -n 1p out.jsonl | jq -r '.eval | "\(.call) \(.exec) \(.stage)"')"
check_same "without its kernel the file's tests fail call" "false runtime" \
	"$(sed -n 2p out.jsonl | jq -r '.eval | "\(.call) \(.reason)"')"
check_match "the message carries the first pytest failure" "test_reverse_range" \
	"$(sed -n 2p out.jsonl | jq -r .eval.message)"
check_match "the error itself comes first, before the traceback" "^E +NameError" \
	"$(sed -n 2p out.jsonl | jq -r .eval.message | sed -n 2p)"
check_same "nothing is timed on the CPU" null "$(sed -n 1p out.jsonl | jq -r .eval.speedup)"
# Its tests seed themselves: the other seeds would only repeat the first.
check_same "the first seed runs twice, the seeds that change nothing not at all" "[42,42]" \
	"$(sed -n 1p out.jsonl | jq -c '[.eval.runs[].seed]')"

# The autotuning candidates' checks (their records judged with the
# smoke task's, above).
check_same "the reference passes under the original test, noted" "true original_test" \
	"$(sed -n 1p tune-out.jsonl | jq -r '.eval | "\(.exec) \(.notes | join(","))"')"
check_same "a candidate that tunes BLOCK passes under the variant" "true " \
	"$(sed -n 2p tune-out.jsonl | jq -r '.eval | "\(.exec) \(.notes | join(","))"')"
check_same "a wrong one still fails under the original test" "false mismatch" \
	"$(sed -n 3p tune-out.jsonl | jq -r '.eval | "\(.exec) \(.reason)"')"
check_same "the original test ran only where the variant could not launch" 2 \
	"$(grep -c original_test tune-out.jsonl)"
done_testing
