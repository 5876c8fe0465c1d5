#!/bin/sh
# geak-select on a hand-made set of runs: the pick per task (never a
# flagged one), the beam, and every metric against values worked out by
# hand (see the comments), plus the HTML and Markdown reports.
. "$(dirname "$0")/lib.sh"
plan 36

# ev ID RUN ITER SHA CALL EXEC SPEEDUP FLAGS [EXTRA]
ev() {
	printf '{"id":"%s","run":%s,"iter":%s,"task":{"difficulty":%s},"code":"code %s","code_sha":"%s","eval":{"code_sha":"%s","call":%s,"exec":%s,"speedup":%s,"flags":%s}%s}\n' \
		"$1" "$2" "$3" "$( [ "$1" = plain/a ] && echo 1 || echo 2)" "$4" "$4" "$4" "$5" "$6" "$7" "$8" "${9:-}"
}
{
	# plain/a: run 0 fails, then passes at 1.5x and 2.5x; run 1 is only
	# flagged (40x: never trusted); run 2 runs but is wrong.
	ev plain/a 0 0 a0 false false null '[]' ',"usage_total":{"calls":1,"input_tokens":100,"output_tokens":50,"cost":0.0006}'
	ev plain/a 0 1 a1 true true 1.5 '[]' ',"usage_total":{"calls":3,"input_tokens":300,"output_tokens":150,"cost":0.0018}'
	ev plain/a 0 2 a2 true true 2.5 '[]' ',"best":[{"code":"code a1","code_sha":"a1","speedup":1.5,"ms":2,"iter":1}],"usage_total":{"calls":5,"input_tokens":500,"output_tokens":250,"cost":0.003}'
	ev plain/a 1 0 b0 true true 40 '["excessive_speedup"]' ',"llm":{"provider":"openai","model":"gpt-4.1","replayed":true}'
	ev plain/a 2 0 ar2 true false null '[]'
	# plain/b: run 0 wrong; run 1 passes at 0.5x; run 2's 2.0x kernel is
	# known only from the best list of an unevaluated record.
	ev plain/b 0 0 c0 true false null '[]'
	ev plain/b 1 1 c1 true true 0.5 '[]'
	echo '{"id":"plain/b","run":2,"iter":2,"task":{"difficulty":2},"code":"new","code_sha":"n","best":[{"code":"code c9","code_sha":"c9","speedup":2.0,"ms":1,"reflection":"fast","iter":1}],"usage_total":{"calls":2,"input_tokens":200,"output_tokens":100,"cost":0.0012}}'
	# plain/c: never runs (a compile error); its second run died with an error.
	echo '{"id":"plain/c","run":0,"iter":0,"task":{"difficulty":2},"code":"code d0","code_sha":"d0","eval":{"code_sha":"d0","call":false,"exec":false,"stage":"call","reason":"compile","speedup":null,"flags":[],"device":"NVIDIA H200"}}'
	echo '{"id":"plain/c","run":1,"task":{"difficulty":2},"error":{"tool":"geak-gen","stage":"llm","kind":"http","message":"refused"}}'
} > runs.jsonl

geak-select -k 1,2,3 -s sum.json -r report.html runs.jsonl > best.jsonl
check_same "exit 0" 0 $?
check_same "one pick per task" 'plain/a plain/b plain/c' "$(jq -r .id best.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "a: the fastest correct, not the flagged 40x" '"a2" 2.5' \
	"$(sed -n 1p best.jsonl | jq -r '[(.code_sha | tojson), .selected.speedup] | join(" ")')"
check_same "b: a best-list entry, its stale eval dropped" '"code c9" "best" false "fast"' \
	"$(sed -n 2p best.jsonl | jq -r '[(.code | tojson), (.selected.from | tojson), has("eval"), (.reflection | tojson)] | join(" ")')"
check_same "c: nothing passed" 'false false null' \
	"$(sed -n 3p best.jsonl | jq -r '[.selected.call, .selected.exec, .selected.speedup] | map(tostring) | join(" ")')"

r() { jq -c "$1" sum.json; }
# a and b pass, c does not: 2/3 for call and exec.
check_same "call accuracy" 0.666667 "$(r .call_accuracy)"
check_same "exec accuracy" 0.666667 "$(r .exec_accuracy)"
# mean of 2.5 and 2.0; geometric mean sqrt(5).
check_same "mean speedup over passing kernels" 2.25 "$(r .speedup_mean)"
check_same "geometric mean" 2.23607 "$(r .speedup_geomean)"
# runs: a n=3 c=1, b n=3 c=2, c n=2 c=0.
# pass@1 = (1/3 + 2/3 + 0)/3; pass@2 = (1 - (1-2/3) + 1 + 0)/3 = 5/9;
# pass@3 only over a and b (c has 2 runs): (1 + 1)/2.
check_same "exec pass@k" '[[1,3,0.333333],[2,3,0.555556],[3,2,1]]' \
	"$(r '[.pass_at_k[] | [.k, .tasks, .exec]]')"
# call: a 3/3 runs, b 3/3, c 0/2.
check_same "call pass@1" 0.666667 "$(r '.pass_at_k[0].call')"
check_same "per difficulty" '[[1,1,1,2.5],[2,2,0.5,2]]' \
	"$(r '[.by_difficulty[] | [.difficulty, .tasks, .exec_accuracy, .speedup_mean]]')"
# iter 0: only wrong/flagged/failed; iter 1: 1.5 and 2.0; iter 2: 2.5 and 2.0.
check_same "by iteration" '[[0,0.666667,0,null],[1,0.666667,0.666667,1.75],[2,0.666667,0.666667,2.25]]' \
	"$(r '[.by_iter[] | [.iter, .call_accuracy, .exec_accuracy, .speedup_mean]]')"
# lineages: a/run 0 grows to 5 calls, 500+250 tokens, $0.003; b/run 2 has
# 2, 200+100, $0.0012.
check_same "tokens and cost, the largest of each lineage" \
	'{"calls":7,"input_tokens":700,"output_tokens":350,"cost":0.0042,"unpriced_calls":0}' "$(r .usage)"
# By iteration 0 only a0 has spent; by 1 a1; by 2 a2 and b's record.
check_same "... and what was spent by each iteration" '[[1,0.0006],[3,0.0018],[7,0.0042]]' \
	"$(r '[.by_iter[] | [.usage.calls, .usage.cost]]')"
check_same "why c failed: its best candidate's stage and reason" \
	'[{"reason":"call: compile","tasks":1,"ids":["plain/c"]}]' "$(r .failures)"
check_same "where the records came from" \
	'[[{"name":"openai gpt-4.1","records":1}],1,0,[{"name":"NVIDIA H200","records":1}]]' \
	"$(r '[.provenance.models, .provenance.replayed, .provenance.live, .provenance.devices]')"
check_same "per-kernel runs" '[[3,3,1],[3,3,2],[2,0,0]]' "$(r '[.kernels[] | [.runs, .call_runs, .exec_runs]]')"

geak-select --tasks 4 -S runs.jsonl > s4.json
check_same "--tasks sets the denominator" 0.5 "$(jq -c .exec_accuracy s4.json)"

geak-select -b 2 runs.jsonl > beam.jsonl
check_same "beam of 2: best first" 'a2 a1 c9 c1 d0' "$(jq -r .code_sha beam.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "beam ranks" '0 1 0 1 0' "$(jq -r .selected.rank beam.jsonl | tr '\n' ' ' | sed 's/ $//')"

cat runs.jsonl | geak-select -S -k 1 > stdin.json
check_same "reads stdin" 0.666667 "$(jq -c .exec_accuracy stdin.json)"
head -n 3 runs.jsonl > part1.jsonl
tail -n +4 runs.jsonl > part2.jsonl
check_same "files merge like one" "$(jq -c 'del(.records)' sum.json)" \
	"$(geak-select -S -k 1,2,3 part2.jsonl part1.jsonl | jq -c 'del(.records)')"

{ cat runs.jsonl; echo 'not json'; } > bad.jsonl
geak-select -S bad.jsonl > /dev/null 2> err.txt
check_same "a bad line: exit 1" 1 $?
check_match "and a message naming it" 'bad.jsonl:11' "$(cat err.txt)"

# accuracy, the speedups' spread, speedup, tokens and cost by iteration, pass@k
check_same "HTML report: six plots" 6 "$(grep -o '<svg' report.html | wc -l)"
check_match "HTML report: the numbers" '66.7%.*2.25x' "$(tr '\n' ' ' < report.html)"
geak-select -r report.md runs.jsonl > /dev/null
check_match "Markdown report: the kernel table" '^\| plain/a \| 1 \| yes \| yes \| 2.50x' "$(cat report.md)"
check_match "... and why c failed" '^\| a kernel did not compile \(call: compile\) \| 1 \| 33.3% \| plain/c \|' "$(cat report.md)"
printf '%s\n' '{"id":"t/x","task":{"difficulty":3},"code":"a","code_sha":"a","eval":{"code_sha":"a","call":true,"exec":true,"flags":[]}}' \
	'{"id":"t/y","task":{"difficulty":1},"code":"b","code_sha":"b","eval":{"code_sha":"b","call":true,"exec":false,"flags":[]}}' |
	geak-select -S > order.json
check_same "difficulties in order, whatever the input's" "1 3" "$(jq -r '[.by_difficulty[].difficulty] | map(tostring) | join(" ")' order.json)"
echo '{"id":"plain/<b>&x","code":"c","code_sha":"z","eval":{"code_sha":"z","call":true,"exec":true,"speedup":1.5,"flags":[]}}' |
	geak-select -r esc.html > /dev/null
check_same "ids are escaped in HTML, wherever they are shown" '0 yes' \
	"$(grep -c 'plain/<b>' esc.html) $(grep -q 'plain/&lt;b&gt;&amp;x' esc.html && echo yes)"
# A task that never had a candidate comes out as its record (under
# SANITIZE=1 this also shows no sort of an empty list is attempted).
printf '%s\n' '{"id":"plain/none","task":{"instruction":"x"}}' > none.jsonl
geak-select -S -r none.html none.jsonl > none.out 2> none.err
check_same "a task without a candidate: exit 0, counted, not passed" '0 1 0' \
	"$? $(jq -c '"\(.tasks) \(.exec_pass)"' -r none.out)"
geak-select none.jsonl > none.out 2>> none.err
check_same "... its record comes out, without a selection" '"plain/none" false' \
	"$(jq -c .id none.out) $(jq -c 'has("selected")' none.out)"
check_same "... and nothing on stderr" '' "$(cat none.err)"
geak-select -r report.pdf runs.jsonl > /dev/null 2>&1
check_same "unknown report type: usage error" 2 $?
geak-select -k 0 runs.jsonl > /dev/null 2>&1
check_same "bad -k: usage error" 2 $?
done_testing
