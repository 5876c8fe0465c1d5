#!/bin/sh
# geak-eval's static checks (share/harness/geakh/static.py): the cheats
# they can see are rejected before anything runs; warnings become notes;
# --static warn lets the run decide; and no reference of either benchmark
# nor any corpus kernel trips a strict rule.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 12
c=$top/tests/cheats
static() { (cd "$top/share/harness" && "$GEAK_PYTHON" -m geakh.static "$@"); }
strict_rules() { static "$@" | jq -r '[.findings[] | select(.strict) | .rule] | unique | join(",")'; }

check_same "a background thread is seen" threads "$(strict_rules "$c/background_thread.py")"
check_same "a tensor subclass is seen" tensor_subclass "$(strict_rules "$c/lazy_subclass.py")"
check_same "patched timers and comparisons are seen" patches_library \
	"$(strict_rules "$c/timer_patch.py")"
check_same "a torch fallback without a kernel is seen" no_triton_kernel \
	"$(strict_rules "$c/torch_fallback.py")"
check_same "an honest candidate trips nothing strict" "" "$(strict_rules "$c/honest.py")"
check_same "frame walking and gc searches are seen" introspection "$(printf '%s\n' \
	'import sys, triton' '@triton.jit' 'def k(x): pass' \
	'def f(x):' '    return sys._getframe(2).f_locals["expected"]' > walk.py; strict_rules "$scratch/walk.py")"

mk() { # NAME FILE: the plain task "add" with a candidate
	jq -nc --rawfile r "$c/add_reference.py" --rawfile t "$c/add_test.py" --rawfile code "$2" \
		--arg n "$1" '{id: "plain/add", cheat: $n, code: $code,
		  task: {suite: "plain", name: "add", reference: $r, test: $t}}'
}
{ mk timer_patch "$c/timer_patch.py"; mk api_key "$c/api_key.py"; } > in.jsonl
geak-eval --cpu --no-cache in.jsonl > out.jsonl 2> err.txt
check_same "strict: the patched candidate is rejected before it runs" "false false static cheat" \
	"$(jq -r 'select(.cheat == "timer_patch") | .eval | "\(.call) \(.exec) \(.stage) \(.reason)"' out.jsonl)"
check_match "the message names the rule and the line" "static check patches_library, line [0-9]+" \
	"$(jq -r 'select(.cheat == "timer_patch") | .eval.message' out.jsonl)"
check_match "a warning is a note and the candidate runs" "static:environment" \
	"$(jq -r 'select(.cheat == "api_key") | "\(.eval.exec) \(.eval.notes)"' out.jsonl)"
geak-eval --cpu --no-cache --static warn in.jsonl > warn.jsonl 2>/dev/null
check_same "warn: the same candidate runs, and the run rejects it" "true false cheat static:patches_library" \
	"$(jq -r 'select(.cheat == "timer_patch") | .eval | "\(.call) \(.exec) \(.reason) \(.notes | map(select(startswith("static"))) | unique | join(","))"' warn.jsonl)"
geak-eval --static maybe < /dev/null > /dev/null 2>&1
check_same "--static takes strict, warn or off" 2 $?

# No false alarm on real kernels: every reference of both suites and every
# corpus kernel passes the strict rules.
geak=$top/../shared/bench/geak-eval-data.tar.gz
if [ -r "$geak" ]; then
	geak-import --suite all --as-candidate "$geak" > refs.jsonl
	static --jsonl "$scratch/refs.jsonl" > refs.out
	for f in "$top"/share/corpus/*/*.py "$top"/share/corpus/*.py; do
		[ -f "$f" ] && static "$f"
	done > corpus.out
	check_same "no strict finding on the 215 references and the corpus" "215 0" \
		"$(grep -c . refs.out) $(cat refs.out corpus.out | jq -r '.findings[] | select(.strict) | .rule' | grep -c .)"
else
	skip "no benchmark archive $geak"
fi
done_testing
