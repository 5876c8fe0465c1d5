#!/bin/sh
# geak-select's fast_p on records made by hand: the share of tasks whose
# pick is correct and more than p times faster than the reference, with
# every expected value worked out in the comments.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
plan 12

# ev ID EXEC SPEEDUP FLAGS
ev() {
	printf '{"id":"%s","code":"c","code_sha":"%s","eval":{"code_sha":"%s","call":true,"exec":%s,"speedup":%s,"flags":%s}}\n' \
		"$1" "$1" "$1" "$2" "$3" "$4"
}
{
	ev kernelbench/level1/1 true 0.8 '[]'    # correct, slower
	ev kernelbench/level1/2 true 1.0 '[]'    # correct, exactly as fast: not > 1
	ev kernelbench/level1/3 true 1.6 '[]'
	ev kernelbench/level1/4 true 2.5 '[]'
	ev kernelbench/level1/5 true null '[]'   # correct, no time (the CPU mode)
	ev kernelbench/level1/6 false 3 '[]'     # wrong: its speed counts for nothing
	ev kernelbench/level1/7 true 40 '["excessive_speedup"]' # flagged: not correct
} > runs.jsonl

geak-select -S runs.jsonl > sum.json
check_same "exit 0" 0 $?
r() { jq -c "$1" sum.json; }
# 7 tasks.  correct: 1-5; > 1: 3, 4; > 1.5: 3, 4; > 2: 4.
check_same "fast_p for 0, 1, 1.5 and 2 by default" \
	'[[0,5,0.714286],[1,2,0.285714],[1.5,2,0.285714],[2,1,0.142857]]' \
	"$(r '[.fast_p[] | [.p, .tasks, .share]]')"
check_same "fast_0 is the execution accuracy" "$(r .exec_accuracy)" "$(r '.fast_p[0].share')"

# -p adds to the defaults, sorted, each p once: > 0.5: 1-4; > 3: none.
geak-select -S -p 3,0.5,1 runs.jsonl > sum2.json
check_same "-p 3,0.5,1: added in order, 1 once" '[0,0.5,1,1.5,2,3]' "$(jq -c '[.fast_p[].p]' sum2.json)"
check_same "fast_0.5 and fast_3" '[4,0]' "$(jq -c '[.fast_p[] | select(.p == 0.5 or .p == 3) | .tasks]' sum2.json)"

# --tasks 10: the same counts over 10 tasks.
check_same "--tasks divides fast_p too" '[0.5,0.2,0.2,0.1]' \
	"$(geak-select -S --tasks 10 runs.jsonl | jq -c '[.fast_p[].share]')"

check_fail "-p with a negative p is a usage error" geak-select -S -p -1 runs.jsonl
check_fail "-p with a word is a usage error" geak-select -S -p fast runs.jsonl

geak-select -r report.md runs.jsonl > /dev/null
check_match "Markdown report: fast_p in the summary" \
	'fast_0 71\.4%, fast_1 28\.6%, fast_1\.5 28\.6%, fast_2 14\.3%' "$(cat report.md)"
check_match "Markdown report: its table" '\| 1\.5 \| 2 \| 28\.6% \|' "$(cat report.md)"
geak-select -r report.html runs.jsonl > /dev/null
check_match "HTML report: a card per p" '<b>14\.3%</b><span>fast_2</span>' "$(cat report.html)"
check_match "HTML report: its table" '<tr><td>1\.5</td><td>2</td><td>28\.6%</td></tr>' "$(cat report.html)"
done_testing
