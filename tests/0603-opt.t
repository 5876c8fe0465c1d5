#!/bin/sh
# geak-opt against a scripted model: the best list (measured speedups
# only, slowest first, the slowest evicted), new optimize-mode candidates,
# the debugging-trap cap under both counting rules, flagged candidates,
# and answers without code.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
plan 27

cat > script.jsonl <<'EOS'
{"match": "[[no-code]]", "text": "I would rather not write that."}
{"match": "times in a row without getting back", "text": "{\"strategy\": \"a new start\", \"code\": \"# restarted\\n\"}"}
{"match": "ascending order of performance", "text": "{\"strategy\": \"plan {count}\", \"code\": \"# faster {count}\\n\"}"}
EOS
start_llm script.jsonl

# rec SHA CALL EXEC SPEEDUP BEST PERF_DEBUG [FLAGS] [INSTRUCTION]
rec() {
	printf '{"id":"plain/t","iter":1,"sample":0,"task":{"instruction":"%s"},"code":"code %s","code_sha":"%s","reflection":"why %s","perf_debug":%s,"best":%s,"eval":{"code_sha":"%s","call":%s,"exec":%s,"speedup":%s,"reason":null,"flags":%s,"shapes":[{"shape":[8],"ms":0.25,"ms_ref":0.5}]}}\n' \
		"${8:-Do it.}" "$1" "$1" "$1" "$6" "$5" "$1" "$2" "$3" "$4" "${7:-[]}"
}
best() { # best SHA:SPEEDUP ...: a best list
	printf '['
	sep=
	for e in "$@"; do
		printf '%s{"code":"code %s","code_sha":"%s","speedup":%s,"ms":1,"reflection":"r %s","iter":0}' \
			"$sep" "${e%%:*}" "${e%%:*}" "${e#*:}" "${e%%:*}"
		sep=,
	done
	printf ']'
}

# 1. A correct candidate enters best and gets a faster successor.
rec a true true 1.25 '[]' 3 > a.jsonl
geak-opt a.jsonl > a.out 2>> tools.err
check_same "correct: exit 0" 0 $?
check_same "new optimize-mode candidate" '{"code":"# faster 1\n","iter":2,"mode":"optimize","strategy":"plan 1"}' \
	"$(jq -cS '{code, mode, iter, strategy}' a.out)"
check_same "code_sha is the new code's" "$(printf '# faster 1\n' | sha256sum | cut -d' ' -f1)" \
	"$(jq -r .code_sha a.out)"
check_same "stale eval and reflection removed" 'false false' \
	"$(jq -r '[has("eval"), has("reflection")] | map(tostring) | join(" ")' a.out)"
check_same "best holds the measured candidate" \
	'[{"code":"code a","code_sha":"a","iter":1,"ms":0.25,"reflection":"why a","speedup":1.25}]' \
	"$(jq -cS .best a.out)"
check_same "counter reset" 0 "$(jq .perf_debug a.out)"
check_same "llm describes the new code's call" '"test-model"' "$(jq -c .llm.model a.out)"

# 2. A full list evicts its slowest, and the prompt lists slowest first.
rec b true true 1.8 "$(best s:1.5 f:2.0)" 0 > b.jsonl
geak-opt --ancestors 2 b.jsonl > b.out 2>> tools.err
check_same "the slowest is evicted, not the best" '[["b",1.8],["f",2]]' \
	"$(jq -c '[.best[] | [.code_sha, .speedup]]' b.out)"
prompt=$(llm_prompt 2)
check_match "prompt: slowest first" 'Implementation 1.*code b.*Speedup over the reference: 1.800x.*Implementation 2.*code f.*2.000x' \
	"$(printf '%s' "$prompt" | tr '\n' ' ')"
check_match "prompt carries the analysis" 'Analysis: r f' "$(printf '%s' "$prompt" | tr '\n' ' ')"
rec c true true 1.0 "$(best s:1.5 f:2.0)" 0 > c.jsonl
geak-opt --ancestors 2 c.jsonl > c.out 2>> tools.err
check_same "slower than the list: not added" '["s","f"]' "$(jq -c '[.best[].code_sha]' c.out)"
check_same "but still optimised" '"optimize"' "$(jq -c .mode c.out)"

# 3. The debugging trap: failures after a correct kernel.  --max-debug 2
# gives the failed kernel two debug rounds; the failure of the second
# drops the lineage.
rec d true false null "$(best s:1.5)" 0 > d.jsonl
geak-opt --max-debug 2 d.jsonl > d1.out 2>> tools.err
check_same "first failure: passed on for debugging, counted" '1 "code d"' \
	"$(jq -r '[.perf_debug, (.code | tojson)] | join(" ")' d1.out)"
calls=$(wc -l < llm.log)
check_same "no model call for a failure" 3 "$calls"
geak-opt --max-debug 2 d1.out > d2.out 2>> tools.err
check_same "the first debug round failed: a second one" '2 "code d"' \
	"$(jq -r '[.perf_debug, (.code | tojson)] | join(" ")' d2.out)"
geak-opt --max-debug 2 d2.out > d3.out 2>> tools.err
check_same "the second failed: lineage restarted from best" '{"code":"# restarted\n","mode":"optimize","perf_debug":0}' \
	"$(jq -cS '{code, mode, perf_debug}' d3.out)"
check_match "restart prompt asks for a different strategy" 'failed 2 times in a row' \
	"$(llm_prompt 4 | tr '\n' ' ')"

# 4. Before any correct kernel: v2 counts and starts over, v1 does not count.
rec e false false null '[]' 2 > e.jsonl
geak-opt --max-debug 2 e.jsonl > e2.out 2>> tools.err
check_same "v2: capped with an empty best list: start from the task" '{"code":false,"code_sha":false,"eval":false,"iter":2,"perf_debug":0}' \
	"$(jq -cS '{code: has("code"), code_sha: has("code_sha"), eval: has("eval"), iter, perf_debug}' e2.out)"
geak-opt --max-debug 2 --count-rule v1 e.jsonl > e1.out 2>> tools.err
check_same "v1: no count while best is empty" '2 true' \
	"$(jq -r '[.perf_debug, has("code")] | map(tostring) | join(" ")' e1.out)"
check_same "v1 and v2 made no call" 4 "$(wc -l < llm.log)"

# 5. A flagged candidate never enters best; its lineage is dropped.
rec f true true 40.0 "$(best s:1.5)" 0 '["excessive_speedup"]' > f.jsonl
geak-opt f.jsonl > f.out 2>> tools.err
check_same "flagged: not in best" '["s"]' "$(jq -c '[.best[].code_sha]' f.out)"
check_same "flagged: restarted from best" '"# restarted\n"' "$(jq -c .code f.out)"

# 6. Records that are not evaluated, or carry an error, pass untouched.
printf '%s\n' '{"id":"plain/t","task":{"instruction":"x"}}' \
	'{"id":"plain/t","code":"c","code_sha":"new","eval":{"code_sha":"old","call":true,"exec":true}}' \
	'{"id":"plain/t","error":{"tool":"geak-gen","stage":"llm","kind":"http","message":"no"}}' > g.jsonl
geak-opt g.jsonl > g.out 2>> tools.err
check_same "pass-through" "$(jq -cS . g.jsonl)" "$(jq -cS 'del(.schema)' g.out)"

# 7. An answer without code is an error on the record.
rec h true true 1.1 '[]' 0 '[]' '[[no-code]]' > h.jsonl
geak-opt h.jsonl > h.out 2> h.err
check_same "no code: exit 1" 1 $?
check_same "error kind no_code" '"no_code"' "$(jq -c .error.kind h.out)"

# Usage errors.
geak-opt --count-rule v3 < /dev/null > /dev/null 2>&1
check_same "bad --count-rule exits 2" 2 $?
geak-opt --ancestors 0 < /dev/null > /dev/null 2>&1
check_same "--ancestors 0 exits 2" 2 $?
done_testing
