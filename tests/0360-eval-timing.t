#!/bin/sh
# The timing run's two stages, driven on the CPU (Triton's interpreter with
# the CPU mode's device mapping; the times mean nothing here): the check
# stage compares outputs on the performance inputs and wants the
# candidate's own kernel launched; the timing stage compares the outputs of
# its own timed calls, so a candidate with one face for checks and another
# for timing is caught where it is timed.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 8
drive() { "$GEAK_PYTHON" "$top/tests/harness/timing_cpu.py" "$@" 2>>err.txt | tail -n 1; }
field() { "$GEAK_PYTHON" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(eval(sys.argv[1], {}, d))' "$1"; }
c=$top/tests/cheats

out=$(drive check "$c/honest.py" honest-check)
check_same "check stage: an honest candidate passes" "None 2" \
	"$(printf '%s' "$out" | field '(globals().get("error"), launches)' | tr -d "(),")"
out=$(drive time "$c/honest.py" honest-time)
check_same "timing stage: one row per performance input, both sides timed" "2 True" \
	"$(printf '%s' "$out" | field '(len(shapes), all(r["ms"] > 0 and r["ms_ref"] > 0 for r in shapes))' | tr -d '(),')"
check_same "timing stage: the run's nonce is in the result" n0nce \
	"$(printf '%s' "$out" | field 'nonce')"
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
done_testing
