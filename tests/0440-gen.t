#!/bin/sh
# geak-gen: which records it acts on, the prompt it builds in each mode,
# the candidate fields it writes, samples, and what it does with answers
# that hold no code.
. "$(dirname "$0")/lib.sh"
. "$top/tests/04lib-llm.sh"
command -v jq >/dev/null || skip_all "jq is not installed"
plan 38

cat >script.jsonl <<'EOS'
{"match": "Write noanswer.", "text": "I am sorry, I cannot do that."}
{"match": "Write jsonfence.", "text": "```json\n{\"thought\": \"fenced\", \"code\": \"import triton\\nz = 3\\n\"}\n```"}
{"text": "{\"thought\": \"add them\", \"code\": \"import triton\\nimport torch\\ny = {count}\\n\"}<|im_end|>"}
EOS
start_server s --key "$KEY" --script script.jsonl
export OPENAI_API_KEY="$KEY"
gen() {
	geak-gen --base-url "$s_url" "$@"
}
# prompt N: the prompt of the N-th request the server saw (from 1).
prompt() {
	sed -n "${1}p" "$s_log" | jq -r '.body.messages[0].content'
}

# Records geak-gen leaves alone come out byte for byte.
cat >pass.in <<'EOS'
{"schema":1,"id":"plain/ok","code":"x = 1","code_sha":"aa","eval":{"code_sha":"aa","exec":true,"speedup":1.5}}
{"schema":1,"id":"plain/noeval","code":"x = 2","code_sha":"bb"}
{"schema":1,"id":"plain/err","error":{"tool":"geak-eval","stage":"x","kind":"y","message":"z"}}
{"schema":1,"id":"plain/stale","code":"x = 3","code_sha":"cc","eval":{"code_sha":"old","exec":false}}
{"schema":1,"id":"plain/harness","code":"x = 4","code_sha":"dd","eval":{"code_sha":"dd","exec":false,"reason":"harness"}}
EOS
gen <pass.in >pass.out 2>pass.err
check_same "pass-through: exit 0" 0 "$?"
check_same "pass-through: byte for byte" "$(cat pass.in)" "$(cat pass.out)"
check_same "pass-through: no calls" 0 "$(lines "$s_log")"

# First attempts, three samples each.
task add "Write an add kernel." >first.in
jq -c '.oneshot = {id: "corpus/x", code: "# ONESHOT-EXAMPLE-CODE\nimport triton\n"}' first.in >>first.in
gen -n 3 <first.in >first.out 2>first.err
check_same "first mode: exit 0" 0 "$?"
check_same "first mode: 2 records in, 3 samples each out" 6 "$(lines first.out)"
check_same "first mode: samples numbered" "0 1 2 0 1 2" "$(field first.out .sample | tr '\n' ' ' | sed 's/ $//')"
check_same "first mode: mode, knowledge pack, thought" "first generic add them" \
	"$(field first.out '"\(.mode) \(.knowledge.pack) \(.thought)"' | sort -u)"
code=$(jq -r 'select(.sample == 0) | .code' first.out | head -n 1)
check_same "first mode: code from the JSON contract, end token dropped" "import triton" \
	"$(printf '%s\n' "$code" | head -n 1)"
sha=$(head -n 1 first.out | jq -j .code | sha256sum | cut -d' ' -f1)
check_same "first mode: code_sha is the SHA-256 of code" "$sha" "$(head -n 1 first.out | jq -r .code_sha)"
check_same "first mode: samples are distinct answers" 6 "$(field first.out .code_sha | sort -u | wc -l | tr -d ' ')"
check_same "first mode: usage_total counts the call" "1 true" \
	"$(field first.out '"\(.usage_total.calls) \(.usage_total.input_tokens > 0)"' | sort -u)"
check_match "prompt: the instruction" "Write an add kernel\\." "$(prompt 1)"
check_match "prompt: the signatures from the reference" "\\* def op\\(x, y\\)" "$(prompt 1)"
check_match "prompt: injected knowledge" "Target: unknown GPU" "$(prompt 1)"
check_match "prompt: the output contract" '"thought".*"code"' "$(prompt 1)"
check_same "prompt: the record's 1-shot code in its 3 requests only" 3 \
	"$(jq -r '.body.messages[0].content' "$s_log" | grep -c ONESHOT-EXAMPLE-CODE)"

: >"$s_log"
gen --no-signatures --knowledge none <first.in >nosig.out 2>/dev/null
check_same "--no-signatures: no signature section" "" "$(prompt 1 | grep -e 'CRITICAL FUNCTION' -e 'def op')"
check_same "--knowledge none: no knowledge section, no knowledge field" "null" \
	"$(field nosig.out .knowledge | sort -u)"
gen --knowledge no/such <first.in >/dev/null 2>badpack.err
check_same "--knowledge with a bad pack: exit 2" 2 "$?"

# Debug mode: the failed code, the trimmed trace, the reflection.
long=$(awk 'BEGIN { for (i = 0; i < 400; i++) printf "noise line %d\\n", i }')
jq -cn --arg noise "$long" '{schema: 1, id: "plain/dbg", iter: 2, sample: 1,
	task: {instruction: "Write dbg.", reference: "def op(a):\n    return a\n"},
	code: "import triton\n# OLD-ATTEMPT\n", code_sha: "ee",
	eval: {code_sha: "ee", exec: false, stage: "exec", reason: "mismatch",
	  message: "outputs differ", stdout_tail: "shape 128: Mismatch: max abs diff 3.5\nall good here\n",
	  stderr_tail: ("Traceback (most recent call last):\n  FIRST-TRACEBACK\nValueError: one\n" + $noise +
	    "Traceback (most recent call last):\n  File \"k.py\", line 9\nAssertionError: LAST-ERROR\n")},
	reflection: "REFLECTION-TEXT: the mask is wrong"}' >dbg.in
: >"$s_log"
gen -n 2 --trace-max 600 <dbg.in >dbg.out 2>dbg.err
check_same "debug mode: exit 0, two samples" "0 2" "$? $(lines dbg.out)"
check_same "debug mode: iter+1, samples s*N+i, mode debug" "3 2 debug
3 3 debug" "$(field dbg.out '"\(.iter) \(.sample) \(.mode)"')"
check_same "debug mode: stale eval and reflection removed" "false false" \
	"$(field dbg.out '"\(has("eval")) \(has("reflection"))"' | sort -u)"
p=$(prompt 1)
check_match "debug prompt: the previous code" "OLD-ATTEMPT" "$p"
check_match "debug prompt: the last traceback" "AssertionError: LAST-ERROR" "$p"
check_same "debug prompt: not the earlier traceback" "" "$(printf '%s' "$p" | grep FIRST-TRACEBACK)"
check_match "debug prompt: the mismatch line" "Mismatch: max abs diff 3.5" "$p"
check_match "debug prompt: the reflection" "REFLECTION-TEXT" "$p"
check_match "debug prompt: ran but wrong" "runs without an exception, but its results are wrong" "$p"
check_same "debug prompt: the trace is capped" "" "$(printf '%s' "$p" | grep 'noise line 100$')"

# Answers without code: an error record, not a crash.
task noanswer "Write noanswer." >noans.in
gen <noans.in >noans.out 2>noans.err
check_same "no code in the answer: exit 1, kind no_code" "1 no_code" "$? $(field noans.out .error.kind)"
check_same "no code in the answer: the call is still accounted" "1 openai" \
	"$(field noans.out '"\(.usage_total.calls) \(.llm.provider)"')"
task jsonfence "Write jsonfence." | gen >fence.out 2>/dev/null
check_same "JSON inside a json fence" "fenced" "$(field fence.out .thought)"

# Templates are files a user can override.
mkdir myprompts
printf 'CUSTOM {{instruction}} for {{task.name}}\n' >myprompts/gen-first.txt
: >"$s_log"
gen --prompts myprompts <noans.in >/dev/null 2>&1
check_same "--prompts DIR overrides a template" "CUSTOM Write noanswer. for noanswer" "$(prompt 1)"
: >"$s_log"
GEAK_PROMPTS=$scratch/myprompts gen <noans.in >/dev/null 2>&1
check_same "GEAK_PROMPTS overrides a template" "CUSTOM Write noanswer. for noanswer" "$(prompt 1)"

# --dry-run: the prompt, no call, no key needed.
env -u OPENAI_API_KEY geak-gen --dry-run <first.in >dry.out 2>dry.err
check_same "--dry-run: exit 0, the prompt in each record" "0 2" \
	"$? $(jq -r 'select(.prompt | test("Write an add kernel")) | .id' dry.out | wc -l | tr -d ' ')"

# Bad input: named on stderr with file and line, an error record out.
printf '{"schema":1,"id":"plain/bad","task":{"name":"x"}}\n{"schema":1,"id":"plain/bad2","task":{"instruction":5}}\n' >bad.in
gen bad.in >bad.out 2>bad.err
check_same "bad input: exit 1, every record out" "1 2" "$? $(lines bad.out)"
check_match "bad input: file, line and field on stderr" "bad.in:2: field 'task.instruction'" "$(cat bad.err)"

no_key_anywhere
done_testing
