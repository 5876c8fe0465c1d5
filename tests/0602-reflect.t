#!/bin/sh
# geak-reflect against a scripted model: which prompt each outcome gets,
# the reflection taken out of its fence, history kept and summarised,
# records that must pass through untouched, and a failed call.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
plan 21

cat > script.jsonl <<'EOS'
{"match": "[[fail-here]]", "fault": "400"}
{"match": "the run failed", "text": "The name tl is used but never imported.\n```reflection\nCALL: tl is not imported.\nAdd `import triton.language as tl`.\nThen the kernel compiles.\nA fourth line.\n```\nGood luck."}
{"match": "The runnable test checks", "text": "```reflection\nEXEC: the mask is missing on the last block.\n```"}
{"match": "Measured performance", "text": "```reflection\nPERF: one row per program; fuse the two passes.\n```"}
{"match": "was not measured", "text": "No fence here, just advice.\n"}
EOS
start_llm script.jsonl

# rec SHA CALL EXEC SPEEDUP [EXTRA]: an evaluated record of code SHA.
rec() {
	printf '{"id":"plain/t","iter":%s,"sample":0,"mode":"debug","task":{"instruction":"Do it.","test":"def test(fn): return fn()"},"code":"code %s","code_sha":"%s","llm":{"model":"maker"},"usage_total":{"calls":1,"input_tokens":10,"output_tokens":5},"eval":{"code_sha":"%s","call":%s,"exec":%s,"speedup":%s,"reason":"x","message":"it went wrong","stderr_tail":"Traceback\\nNameError: tl","flags":[],"shapes":[{"shape":[8],"ms":0.5,"ms_ref":1.0}]}%s}\n' \
		"${6:-1}" "$1" "$1" "$1" "$2" "$3" "$4" "${5:-}"
}
{
	rec a false false null
	rec b true false null
	rec c true true 2.0
	rec d true true null
	rec e true true null ',"reflection":"already done"'
	rec f true true null
	echo '{"id":"plain/t","error":{"tool":"geak-eval","stage":"x","kind":"y","message":"z"}}'
} > in.jsonl
# f's evaluation is of older code.
sed -i '6s/"code_sha":"f"/"code_sha":"f2"/' in.jsonl

geak-reflect in.jsonl > out.jsonl 2> err.txt
check_same "exit 0" 0 $?
check_same "one line out per line in" 7 "$(wc -l < out.jsonl)"
check_same "call failure: reflect-call, fence body only" \
	'"CALL: tl is not imported.\nAdd `import triton.language as tl`.\nThen the kernel compiles.\nA fourth line."' \
	"$(sed -n 1p out.jsonl | jq -c .reflection)"
check_match "call prompt shows the trace" "NameError: tl" "$(llm_prompt_with "the run failed")"
check_same "wrong output: reflect-exec" '"EXEC: the mask is missing on the last block."' \
	"$(sed -n 2p out.jsonl | jq -c .reflection)"
check_same "timed: reflect-perf" '"PERF: one row per program; fuse the two passes."' \
	"$(sed -n 3p out.jsonl | jq -c .reflection)"
check_match "perf prompt shows the shape timings" '\[8\]: 0.5 ms \(reference 1 ms\)' "$(llm_prompt_with "Measured performance")"
check_same "untimed: reflect-correct; no fence: the whole answer" \
	'"No fence here, just advice."' "$(sed -n 4p out.jsonl | jq -c .reflection)"
check_same "already reflected, stale eval, error: untouched" \
	"$(sed -n "5,7p" in.jsonl | jq -cS "del(.schema)")" "$(sed -n "5,7p" out.jsonl | jq -cS "del(.schema)")"
check_same "four calls made" 4 "$(wc -l < llm.log)"
check_same "history entry" \
	'{"call":false,"code":"code a","code_sha":"a","exec":false,"iter":1,"mode":"debug","reason":"x","sample":0,"speedup":null}' \
	"$(sed -n 1p out.jsonl | jq -cS '.history[0] | del(.reflection)')"
check_same "the maker's llm field is kept" '"maker"' "$(sed -n 1p out.jsonl | jq -c .llm.model)"
check_match "usage_total grows" '^\{"calls":2,"input_tokens":[1-9][0-9]+' \
	"$(sed -n 1p out.jsonl | jq -c .usage_total)"

# Four rounds of one lineage with --keep 2: the two oldest are summarised.
cp in.jsonl round.jsonl
head -n 1 in.jsonl > lineage.jsonl
for i in 2 3 4 5; do
	geak-reflect --history 2 --summary-lines 2 lineage.jsonl > next.jsonl 2>> tools.err || break
	jq -c --arg s "a$i" '.code = "code " + $s | .code_sha = $s | .eval.code_sha = $s |
		del(.reflection) | .iter = ('"$i"')' next.jsonl > lineage.jsonl
done
check_same "history holds every attempt" 4 "$(jq '.history | length' next.jsonl)"
check_same "older attempts lose their code" '[false,false,true,true]' \
	"$(jq -c '[.history[] | has("code")]' next.jsonl)"
check_same "and keep the first lines of their reflection" \
	'"CALL: tl is not imported.\nAdd `import triton.language as tl`."' \
	"$(jq -c '.history[0].reflection' next.jsonl)"
check_same "marked summarised" '[true,true,null,null]' \
	"$(jq -c '[.history[].summarised]' next.jsonl)"
# Rounds 2, 3 and 4 list 1, 2 and 3 earlier attempts.
check_same "the reflector is shown the earlier attempts" 6 \
	"$(jq -r '.body.messages[0].content' llm.log | grep -c '^\* iteration [0-9]*: did not run (x)\. CALL: tl is not imported\.$')"

# A refused call: the record carries the error, exit status 1.
rec g false false null | sed 's/it went wrong/[[fail-here]]/' > bad.jsonl
geak-reflect --max-attempts 1 bad.jsonl > badout.jsonl 2> err.txt
check_same "failed call exits 1" 1 $?
check_same "error from the llm stage" '{"stage":"llm","tool":"geak-reflect"}' \
	"$(jq -cS '.error | {stage, tool}' badout.jsonl)"
check_same "no reflection on failure" null "$(jq -c .reflection badout.jsonl)"
done_testing
