#!/bin/sh
# geak-eval on the CPU (Triton's interpreter), TritonBench-revised tasks:
# the reference passes as a candidate, mutants fail with the right reason,
# records without a candidate or with an error pass through untouched, and
# the cache answers a repeated candidate.
. "$(dirname "$0")/lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
[ -r "$geak" ] || skip_all "no benchmark archive $geak"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 37

check "geak-eval --help exits 0" geak-eval --help
geak-eval --no-such-option </dev/null >/dev/null 2>&1
check_same "an unknown option is a usage error" 2 $?

geak-import --suite tbg --ids vector_addition_custom --as-candidate "$geak" > ref.jsonl ||
	not_ok "geak-import"
ref=$(cat ref.jsonl)

# mutant NAME CODE: the task record with another candidate.
mutant() {
	printf '%s\n' "$ref" | jq -c --arg c "$2" --arg n "$1" '.code = $c | .mutant = $n'
}
good_kernel='import torch, triton, triton.language as tl
@triton.jit
def _add_kernel(A, B, C, size, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(A + offs, mask=offs < size)
    b = tl.load(B + offs, mask=offs < size)
    tl.store(C + offs, a + b + K, mask=offs < size)
def custom_add(a, b):
    c = torch.empty_like(a)
    _add_kernel[(triton.cdiv(c.size(0), 16),)](a, b, c, c.size(0), BLOCK=16)
    return c
'
{
	printf '%s\n' "$ref"
	mutant constant "K = 0.5
$good_kernel"
	mutant fallback 'import torch
def custom_add(a, b):
    return a + b
'
	mutant syntax 'def custom_add(a, b:
    return a'
	mutant runtime 'def custom_add(a, b):
    raise ValueError("boom")'
	mutant hang 'import time
def custom_add(a, b):
    while True:
        time.sleep(1)'
	mutant crash 'import os, signal
def custom_add(a, b):
    os.kill(os.getpid(), signal.SIGSEGV)'
	mutant tests "K = 0.0
$good_kernel
def test_mine():
    raise SystemExit(3)
test_mine()"
	printf '%s\n' "$ref" | jq -c 'del(.code)'
	printf '%s\n' "$ref" | jq -c '.error = {tool: "x", stage: "y", kind: "z", message: "m"}'
} > in.jsonl

geak-eval -j 2 --cpu --cache cache --static off --timeout 4 --compile-timeout 8 in.jsonl > out.jsonl 2> err.txt
check_same "exit status 0" 0 $?
check_same "one line out per line in" 10 "$(grep -c . out.jsonl)"
check_same "records come out in input order" \
	"null constant fallback syntax runtime hang crash tests null null" \
	"$(jq -r '.mutant // "null"' out.jsonl | tr '\n' ' ' | sed 's/ $//')"

line() { sed -n "$1p" out.jsonl; }
check_same "the reference passes call and exec" "true true done null" \
	"$(line 1 | jq -r '.eval | "\(.call) \(.exec) \(.stage) \(.reason)"')"
check_same "no speedup is claimed on the CPU" null "$(line 1 | jq -r .eval.speedup)"
check_same "eval.code_sha is the code's digest" \
	"$(line 1 | jq -j .code | sha256sum | cut -d' ' -f1)" "$(line 1 | jq -r .eval.code_sha)"
check_match "the sandbox layers are recorded" '"landlock_job":true' "$(line 1 | jq -c .eval.sandbox)"
check_same "a wrong constant is a mismatch" "true false mismatch" \
	"$(line 2 | jq -r '.eval | "\(.call) \(.exec) \(.reason)"')"
check_match "the mismatch message names the output" "test_case_" "$(line 2 | jq -r .eval.message)"
check_same "a torch fallback is a cheat" "false cheat" "$(line 3 | jq -r '.eval | "\(.exec) \(.reason)"')"
check_same "a syntax error fails call" "false syntax" "$(line 4 | jq -r '.eval | "\(.call) \(.reason)"')"
check_same "an exception fails call as runtime" "false runtime" \
	"$(line 5 | jq -r '.eval | "\(.call) \(.reason)"')"
check_match "its message is the exception" "ValueError: boom" "$(line 5 | jq -r .eval.message)"
check_same "a hang is a timeout" "false timeout" "$(line 6 | jq -r '.eval | "\(.call) \(.reason)"')"
check_same "a crash is a crash" "false crash" "$(line 7 | jq -r '.eval | "\(.call) \(.reason)"')"
check_same "the candidate's own tests are removed" "true true" \
	"$(line 8 | jq -r '.eval | "\(.call) \(.exec)"')"
check_same "a record without code passes through unchanged" \
	"$(sed -n 9p in.jsonl)" "$(line 9)"
check_same "a record with an error passes through unchanged" \
	"$(sed -n 10p in.jsonl)" "$(line 10)"

check_same "eval.phases says where the time went" "call call_tests judge lock_wait reference" \
	"$(line 1 | jq -r '.eval.phases | keys | join(" ")')"

geak-eval -u -j 2 --cpu --cache cache --static off --timeout 4 --compile-timeout 8 in.jsonl > un.jsonl 2>/dev/null
check_same "-u: exit status 0" 0 $?
check_same "-u: every record comes out once" \
	"$(jq -r '.mutant // "null"' out.jsonl | sort | tr '\n' ' ')" \
	"$(jq -r '.mutant // "null"' un.jsonl | sort | tr '\n' ' ')"
pos() { grep -n -e "$1" un.jsonl | head -n 1 | cut -d: -f1; }
check_same "-u: a record passed through comes out before the hang is killed" yes \
	"$([ "$(pos '"tool":"x"')" -lt "$(pos '"mutant":"hang"')" ] && echo yes)"

# A test part that brings its own copy of the candidate's wrapper (one
# TritonBench task does) must not test that copy instead.
printf '%s\n' "$ref" | jq -c '.task.test = "import torch\ndef custom_add(a, b):\n    return a + b\n" + .task.test' > shadow.jsonl
check_same "the test part's copy of a candidate's function does not replace it" "true true null" \
	"$(geak-eval -v --cpu --no-cache shadow.jsonl 2>trace.txt | jq -r '.eval | "\(.call) \(.exec) \(.reason)"')"
check_match "-v: each step on stderr, named by line and id" \
	"slot 0: shadow.jsonl:1 .tbg/vector_addition_custom.: cand-.*: running on the CPU$" "$(cat trace.txt)"
check_same "-v: no GPU named in the CPU mode" 0 "$(grep -c GPU trace.txt)"
check_match "-v: tests/gpu/trace-summary.py reads the trace: two jobs (the calibration and the run), on the CPU" \
	"^2 jobs over .* by 0 timing runs" "$("$GEAK_PYTHON" "$top/tests/gpu/trace-summary.py" trace.txt | sed -n 1p)"
check_same "-v: the candidate's start and end" "started finished" \
	"$(sed -n 's/.*: \(started\|finished\)$/\1/p' trace.txt | tr '\n' ' ' | sed 's/ $//')"

geak-eval --cpu --cache cache --static off ref.jsonl > again.jsonl 2>/dev/null
check_same "the second evaluation comes from the cache" "true true" \
	"$(jq -r '.eval | "\(.cached) \(.exec)"' again.jsonl)"
check_same "an evaluated record is not evaluated again" "$(line 1)" \
	"$(line 1 | geak-eval --cpu --cache cache --static off 2>/dev/null)"

# A run whose every candidate is cached starts no worker: the interpreter
# is replaced by one that cannot run after the first run.
printf '#!/bin/sh\nexec "%s" "$@"\n' "$(command -v "$GEAK_PYTHON")" > py
chmod +x py
GEAK_PYTHON=$scratch/py geak-eval --cpu --cache cache2 ref.jsonl > /dev/null 2>&1
rm py
printf '#!/bin/sh\nexit 1\n' > py
chmod +x py
check_same "a fully cached run needs no worker" "true true" \
	"$(GEAK_PYTHON=$scratch/py geak-eval --cpu --cache cache2 ref.jsonl 2>/dev/null |
		jq -r '.eval | "\(.cached) \(.exec)"')"

GEAK_PYTHON=$scratch/py geak-eval --cpu --no-cache ref.jsonl > dead.out 2> dead.err
check_same "a worker that cannot start: exit 3, no record, said once" "3 0 1" \
	"$? $(grep -c . dead.out) $(grep -c 'the harness could not start' dead.err)"

printf '%s\n' "$ref" | jq -c '.task.suite = "other"' > bad.jsonl
geak-eval --cpu --cache cache bad.jsonl > bad.out 2> bad.err
check_same "a bad task field exits 1" 1 $?
check_same "and comes out with an error object" "input bad_field" \
	"$(jq -r '.error | "\(.stage) \(.kind)"' bad.out)"
check_match "the message names the field and line" "bad.jsonl:1: field 'task.suite'" "$(cat bad.err)"
# The jobs reach their folders whatever the caller's umask.
(umask 077 && geak-eval --cpu --no-cache ref.jsonl > umask.jsonl 2>/dev/null)
check_same "under umask 077 the reference passes as its own candidate" true \
	"$(jq -r .eval.exec umask.jsonl)"
done_testing
