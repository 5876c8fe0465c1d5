#!/bin/sh
# KernelBench tasks: the problem's Model against the candidate's
# ModelNew, both built after the same seed on the problem's init inputs
# and called on its inputs.  The candidates of tests/kernelbench say on
# their "# expect:" line how they must end.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
kb=$top/tests/kernelbench
plan 6
for f in "$kb"/scale_*.py; do
	case $f in */scale_problem.py) continue ;; esac
	jq -nc --rawfile r "$kb/scale_problem.py" --rawfile c "$f" --arg n "$(basename "$f" .py)" \
		'{id: "kernelbench/level1/0_Scale", cand: $n, code: $c,
		  task: {suite: "kernelbench", name: "level1_0_Scale", level: 1, reference: $r, test: ""}}'
done > in.jsonl
jq -nc --rawfile r "$kb/scale_problem.py" \
	'{id: "kernelbench/level1/0_Scale", cand: "reference", code: $r,
	  task: {suite: "kernelbench", name: "level1_0_Scale", level: 1, reference: $r, test: ""}}' >> in.jsonl
geak-eval --cpu --no-cache --static off -j 2 in.jsonl > out.jsonl 2> err.txt
check_same "geak-eval exits 0: every reference calibrated" 0 $?
for f in "$kb"/scale_*.py; do
	case $f in */scale_problem.py) continue ;; esac
	name=$(basename "$f" .py)
	want=$(sed -n 's/^# expect: //p' "$f")
	got=$(jq -r --arg n "$name" 'select(.cand == $n) | .eval | "\(.exec) \(.reason)"' out.jsonl)
	case $want in
	pass) check_same "$name passes" "true null" "$got" ;;
	*) check_match "$name: $want" "^false $want" "$got" ;;
	esac
done
check_match "the reference itself, torch alone, is no Triton kernel" "^false cheat" \
	"$(jq -r 'select(.cand == "reference") | .eval | "\(.exec) \(.reason)"' out.jsonl)"
check_same "its four runs were made (the first seed twice)" "true" \
	"$(jq -r 'select(.cand == "scale_triton") | .eval.runs | length == 4' out.jsonl)"
done_testing
