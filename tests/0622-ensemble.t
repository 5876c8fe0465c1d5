#!/bin/sh
# Model ensembles against a scripted server that answers as the model
# asked: --model a,b gives samples and independent runs the models in
# turn, each lineage keeps its model through geak-gen, geak-reflect and
# geak-opt, every record names the model that wrote its code, and
# geak-select breaks accuracy, speedup and usage down by model.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
plan 21

cat > script.jsonl <<'EOS'
{"match": "was timed against the reference", "text": "```reflection\nfast, by {model}\n```"}
{"match": "ascending order of performance", "text": "{\"strategy\": \"s\", \"code\": \"# faster, by {model}\\n\"}"}
{"text": "{\"thought\": \"t\", \"code\": \"import triton\\n# by {model}\\n\"}"}
EOS
start_llm script.jsonl
unset GEAK_MODEL

task() { # task ID RUN
	jq -cn --arg id "$1" --argjson run "$2" '{id: ("plain/" + $id), run: $run,
		task: {suite: "plain", name: $id, instruction: "Add.",
		reference: "import torch\ndef op(x, y):\n    return x + y\n"}}'
}

# 1. Samples take the models in turn; run 1 starts one model further on.
{ task add 0; task add 1; } > tasks.jsonl
geak-gen -n 3 --model m-a,m-b tasks.jsonl > gen.jsonl 2> gen.err
check_same "geak-gen: exit 0" 0 $?
check_same "run 0's samples: a, b, a; run 1's: b, a, b" \
	'[0,0,"m-a"] [0,1,"m-b"] [0,2,"m-a"] [1,0,"m-b"] [1,1,"m-a"] [1,2,"m-b"]' \
	"$(jq -c '[.run, .sample, .llm.model]' gen.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "each record's code came from the model it names" 6 \
	"$(jq -r 'select(.code == "import triton\n# by \(.llm.model)\n") | .id' gen.jsonl | wc -l | tr -d ' ')"
check_same "the server was asked by both, three times each" '3 m-a 3 m-b' \
	"$(jq -r .model llm.log | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ' | sed 's/ $//')"

# 2. A lineage keeps its model: the reflection and the optimizer of
# run 0's sample 1 ask m-b.
jq -c 'select(.run == 0 and .sample == 1) | .iter = 0 |
	.eval = {code_sha: .code_sha, call: true, exec: true, speedup: 1.5, flags: [],
	shapes: [{shape: [8], ms: 0.2, ms_ref: 0.3}]}' gen.jsonl > ev.jsonl
: > llm.log
geak-reflect --model m-a,m-b ev.jsonl 2> reflect.err | geak-opt --model m-a,m-b > opt.jsonl 2> opt.err
check_same "reflect | opt: exit 0" 0 $?
check_same "both asked the lineage's model" '"m-b" "m-b"' "$(jq -c .model llm.log | tr '\n' ' ' | sed 's/ $//')"
check_same "the new code names its model, as the record does" '["# faster, by m-b\n","m-b","optimize"]' \
	"$(jq -c '[.code, .llm.model, .mode]' opt.jsonl)"
check_same "its best entry says which model wrote it" '"m-b"' "$(jq -c '.best[0].model' opt.jsonl)"

# 3. A provider per model: "anthropic:NAME" goes to the Messages API.
: > llm.log
task mix 0 | geak-gen -n 2 --model openai:m-a,anthropic:c-1 > mix.jsonl 2> mix.err
check_same "mixed providers: exit 0" 0 $?
check_same "one request to each API, each model by its own name" '["openai","m-a"] ["anthropic","c-1"]' \
	"$(jq -c '[.family, .model]' llm.log | sort -r | tr '\n' ' ' | sed 's/ $//')"
check_same "records name provider and model" '["openai","m-a"] ["anthropic","c-1"]' \
	"$(jq -c '[.llm.provider, .llm.model]' mix.jsonl | tr '\n' ' ' | sed 's/ $//')"

# 3b. A ledger counts every model's spending, so the ensemble stops
# when it reaches the whole budget: one request, then none.
: > llm.log
task led 0 | geak-gen -j 1 -n 4 --model m-a,m-b --ledger ledger.json --max-tokens-total 1 \
	> led.jsonl 2> led.err
check_same "ledger: one request, by the first model" '"m-a"' "$(jq -c .model llm.log | tr '\n' ' ' | sed 's/ $//')"
check_same "ledger: the other samples refused by the budget" 3 \
	"$(jq -r 'select(.error.kind == "budget") | .sample' led.jsonl | wc -l | tr -d ' ')"

# 4. --check asks every model; an empty list is refused.
geak-gen --check --model m-a,m-b > check.out 2>&1
check_same "--check: exit 0" 0 $?
check_same "--check: both models answered" 'model: m-a (--model) model: m-b (--model)' \
	"$(grep '^model:' check.out | tr '\n' ' ' | sed 's/ $//')"
geak-gen --model , tasks.jsonl > /dev/null 2> empty.err
check_same "--model ,: exit 3" 3 $?
check_match "--model ,: says why" 'no model named' "$(cat empty.err)"

# 5. The summary by model, from evaluated records worked out by hand:
# task p: m-a correct at 2x (run 0), m-b wrong (run 1); task q: m-a
# correct at 1.5x, m-b correct at 3x.
ev() { # ev TASK RUN MODEL EXEC SPEEDUP TOKENS
	jq -cn --arg t "$1" --argjson run "$2" --arg m "$3" --argjson exec "$4" --argjson sp "$5" \
		--argjson tok "$6" '{id: ("plain/" + $t), run: $run, sample: 0, iter: 0,
		code: ($t + $m), code_sha: ($t + $m), llm: {provider: "openai", model: $m},
		usage_total: {calls: 1, input_tokens: $tok, output_tokens: 10, cost: ($tok / 400)},
		eval: {code_sha: ($t + $m), call: true, exec: $exec, speedup: $sp, flags: []}}'
}
{ ev p 0 m-a true 2 100; ev p 1 m-b false null 200; ev q 0 m-a true 1.5 300; ev q 1 m-b true 3 400; } > evaluated.jsonl
geak-select -s summary.json -r report.html evaluated.jsonl > best.jsonl
check_same "geak-select: exit 0" 0 $?
check_same "by model: tasks, passes, speedups, tokens and cost" \
	'[["m-a",2,2,2,1.75,2,400,20,1,0],["m-b",2,2,1,3,2,600,20,1.5,0]]' \
	"$(jq -c '[.by_model[] | [.model, .tasks, .call_pass, .exec_pass, .speedup_mean, .calls, .input_tokens, .output_tokens, .cost, .unpriced_calls]]' summary.json)"
check_same "the selection names the model of each pick" '["plain/p","m-a"] ["plain/q","m-b"]' \
	"$(jq -c '[.id, .selected.model]' best.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_match "report: the by-model table" '<h2>By model</h2>.*<td>m-a</td><td>2</td><td>100.0%</td><td>100.0%</td><td>1.75x</td>' \
	"$(tr '\n' ' ' < report.html)"
done_testing
