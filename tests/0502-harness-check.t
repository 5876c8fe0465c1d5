#!/bin/sh
# The harness check on the CPU: the ten TritonBench smoke references,
# imported as candidates and evaluated on Triton's interpreter through
# examples/bench/harness-check.sh, must all pass.
. "$(dirname "$0")/lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
[ -r "$geak" ] || skip_all "no benchmark archive $geak"
[ -x "$top/bin/geak-eval" ] || skip_all "geak-eval not built"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 6

GEAK_EVAL_FLAGS="-j 2 --no-cache" sh "$top/examples/bench/harness-check.sh" --cpu --ids "$top/examples/bench/smoke-tbg.txt" \
	-o check "$geak" > check.out 2> check.err
status=$?
check_same "harness check exits 0" 0 $status
[ $status -eq 0 ] || sed 's/^/# /' check.err check.out | tail -n 30
ev=check/evaluated.jsonl
check_same "ten references evaluated" 10 "$(grep -c . "$ev" 2>/dev/null)"
check_same "every reference passes call" "" "$(jq -r 'select(.eval.call != true) | .id' "$ev")"
check_same "every reference passes exec" "" "$(jq -r 'select(.eval.exec != true) | .id' "$ev")"
# What failed, when something did, on stderr (prove shows it).
jq -r 'select(.eval.exec != true) | "# \(.id): \(.eval.stage) \(.eval.reason) \(.eval.notes) \(.eval.message)"' \
	"$ev" 2>/dev/null | cut -c1-600 >&2
[ $status -eq 0 ] || tail -n 20 check.err >&2
check_same "no speedup claimed on the CPU" "" "$(jq -r 'select(.eval.speedup != null) | .id' "$ev")"
check_same "summary: ten tasks, call accuracy 1" "10 1" \
	"$(jq -r '"\(.total_tasks) \(.call_accuracy)"' check/summary.json)"
done_testing
