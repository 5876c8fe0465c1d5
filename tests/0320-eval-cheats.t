#!/bin/sh
# geak-eval against the cheats of the integrity catalogue: each candidate
# in tests/cheats/ (for the plain task "add" made of add_reference.py,
# add_test.py and add_perf.py) and in tests/cheats/tbg/ (for the
# TritonBench-format task "addk", whose test makes its own inputs and
# keeps copies of the outputs) says on its "# expect:" line how it must
# end: rejected with a reason, flagged, or passing with nothing leaked or
# written outside its directory.  "gpu" ones are timed on a GPU only.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
cheats=$top/tests/cheats
n=0
for f in "$cheats"/*.py "$cheats"/tbg/*.py; do
	case $f in */add_*|*/tbg/reference.py|*/tbg/test.py) continue ;; esac
	n=$((n + 1))
done
plan $((n + 6))

for f in "$cheats"/*.py; do
	case $f in */add_*) continue ;; esac
	jq -nc --rawfile ref "$cheats/add_reference.py" --rawfile test "$cheats/add_test.py" \
		--rawfile perf "$cheats/add_perf.py" --rawfile code "$f" \
		--arg name "$(basename "$f" .py)" \
		'{schema: 1, id: "plain/add", cheat: $name, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test, perf: $perf}}'
done > in.jsonl
for f in "$cheats"/tbg/*.py; do
	case $f in */reference.py|*/test.py) continue ;; esac
	jq -nc --rawfile ref "$cheats/tbg/reference.py" --rawfile test "$cheats/tbg/test.py" --rawfile code "$f" \
		--arg name "tbg-$(basename "$f" .py)" \
		'{schema: 1, id: "tbg/addk", cheat: $name, code: $code,
		  task: {suite: "tbg", name: "addk", reference: $ref, test: $test}}'
done >> in.jsonl

mkdir tmp
rm -f /tmp/geak-cheat-escape
OPENAI_API_KEY=sk-geak-test-secret-0123 GEAK_TEST_TOKEN=tok-geak-test-secret \
	geak-eval -j 2 --cpu --no-cache --static off --tmpdir tmp --keep --timeout 20 in.jsonl > out.jsonl 2> err.txt
check_same "geak-eval exits 0" 0 $?

for f in "$cheats"/*.py "$cheats"/tbg/*.py; do
	case $f in */add_*|*/tbg/reference.py|*/tbg/test.py) continue ;; esac
	name=$(basename "$f" .py)
	case $f in */tbg/*) name=tbg-$name ;; esac
	want=$(sed -n 's/^# expect: //p' "$f")
	got=$(jq -c --arg n "$name" 'select(.cheat == $n) | .eval' out.jsonl)
	verdict=$(printf '%s' "$got" | jq -r '"\(.exec) \(.reason) \(.flags | join(","))"')
	case $want in
	pass*) check_match "$name: passes ($want)" '^true null' "$verdict" ;;
	flag:*) check_match "$name: flagged or rejected" "${want#flag:}|^false (cheat|mismatch)" "$verdict" ;;
	gpu*) skip "$name: needs a GPU to time (tests/gpu/full-check.sh)" ;;
	*) check_match "$name: rejected as $want" "^false $want" "$verdict" ;;
	esac
done

# Its home is its job directory: what it writes there goes with the job.
check_same "nothing was written outside the job directories" "" \
	"$(find tmp -name escape ! -path 'tmp/geak-eval-*/jobs/*/escape'; ls /tmp/geak-cheat-escape 2>/dev/null)"
check_same "the escape attempt ran with Landlock applied" true \
	"$(jq -r 'select(.cheat == "write_outside") | .eval.sandbox.landlock_job' out.jsonl)"
check_same "no secret reached any record" "" "$(grep -l -e sk-geak-test-secret -e tok-geak-test out.jsonl)"

# Against a reference that is plain torch (a user's task), a torch
# fallback is still no Triton kernel: it fails, and an honest Triton
# candidate passes.
printf 'import torch\n\n\ndef add(x, y):\n    return x + y\n' > torch_ref.py
for f in torch_fallback honest; do
	jq -nc --rawfile ref torch_ref.py --rawfile test "$cheats/add_test.py" --rawfile code "$cheats/$f.py" \
		--arg name "$f" '{id: "plain/torchref", cheat: $name, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test}}'
done > torchref.jsonl
geak-eval --cpu --no-cache --static off torchref.jsonl > torchref.out 2>/dev/null
check_same "against a torch reference: a torch fallback is a cheat, a Triton kernel passes" \
	"false cheat true null" \
	"$(jq -r '.eval | "\(.exec) \(.reason)"' torchref.out | paste -sd ' ')"
check_match "and the message says which output no kernel of the candidate wrote" \
	"launched none of the candidate|no Triton kernel" \
	"$(sed -n 1p torchref.out | jq -r .eval.message)"
done_testing
