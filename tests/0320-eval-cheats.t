#!/bin/sh
# geak-eval against the cheats of the integrity catalogue: each candidate
# in tests/cheats/ (for the plain task "add" made of add_reference.py,
# add_test.py and add_perf.py) says on its "# expect:" line how it must
# end: rejected with a reason, flagged, or passing with nothing leaked or
# written outside its directory.  "gpu" ones are timed on a GPU only.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
cheats=$top/tests/cheats
n=0
for f in "$cheats"/*.py; do
	case $f in */add_*) continue ;; esac
	n=$((n + 1))
done
plan $((n + 4))

for f in "$cheats"/*.py; do
	case $f in */add_*) continue ;; esac
	jq -nc --rawfile ref "$cheats/add_reference.py" --rawfile test "$cheats/add_test.py" \
		--rawfile perf "$cheats/add_perf.py" --rawfile code "$f" \
		--arg name "$(basename "$f" .py)" \
		'{schema: 1, id: "plain/add", cheat: $name, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test, perf: $perf}}'
done > in.jsonl

mkdir tmp
rm -f /tmp/geak-cheat-escape
OPENAI_API_KEY=sk-geak-test-secret-0123 GEAK_TEST_TOKEN=tok-geak-test-secret \
	geak-eval -j 2 --cpu --no-cache --static off --tmpdir tmp --keep --timeout 20 in.jsonl > out.jsonl 2> err.txt
check_same "geak-eval exits 0" 0 $?

for f in "$cheats"/*.py; do
	case $f in */add_*) continue ;; esac
	name=$(basename "$f" .py)
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
done_testing
