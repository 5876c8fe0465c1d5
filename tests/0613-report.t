#!/bin/sh
# geak-select's report as a reader meets it: at 215 tasks (both suites,
# imported from the benchmark and given scripted evaluations of every
# kind) it stays the height of a few plots, shows speedups on a log
# axis, says why tasks failed, orders difficulties, prices the run in
# dollars and says where it came from; at 3 tasks evaluated on the CPU it
# draws no plot of speeds that were never measured.
. "$(dirname "$0")/lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
[ -r "$geak" ] || skip_all "no benchmark archive $geak"
command -v jq >/dev/null || skip_all "no jq"
plan 19
SOURCE_DATE_EPOCH=1767225600 # 2026-01-01 00:00 UTC
export SOURCE_DATE_EPOCH

geak-import --as-candidate "$geak" > tasks.jsonl 2> import.err
check_same "215 tasks imported" 215 "$(grep -c . tasks.jsonl)"

# An outcome per task from its place, spread over every kind the record
# knows; speedups spread evenly in log2 from 1/8x to 8x.
jq -c -s --arg dev "NVIDIA H200" '
  def ev($o): {code_sha: .code_sha, device: $dev, harness: "h1-test", flags: []} + $o;
  to_entries[] | .key as $i | .value | ($i * 37 % 100) as $r |
  .run = 0 | .sample = 0 | .iter = ($i % 4) |
  .llm = {provider: "openai", model: "gpt-4.1", replayed: false} |
  .usage_total = {calls: (1 + $i % 5), input_tokens: (4000 + $i * 37 % 3000),
                  output_tokens: (900 + $i * 53 % 1500), cost: (0.01 + ($i % 7) / 1000)} |
  if $r < 45 then .eval = ev({call: true, exec: true, stage: "done", reason: null,
                              speedup: (pow(2; (($i * 13) % 96) / 16 - 3))})
  elif $r < 60 then .eval = ev({call: true, exec: false, stage: "exec", reason: "mismatch"})
  elif $r < 72 then .eval = ev({call: false, exec: false, stage: "call", reason: "compile"})
  elif $r < 80 then .eval = ev({call: false, exec: false, stage: "call", reason: "runtime"})
  elif $r < 84 then .eval = ev({call: false, exec: false, stage: "call", reason: "timeout"})
  elif $r < 87 then .eval = ev({call: false, exec: false, stage: "static", reason: "cheat"})
  elif $r < 90 then .eval = ev({call: true, exec: true, stage: "done", reason: null,
                                speedup: 40, flags: ["excessive_speedup"]})
  elif $r < 95 then del(.code, .code_sha) |
       .error = {tool: "geak-gen", stage: "extract", kind: "no_code", message: "no code"}
  else del(.code, .code_sha) |
       .error = {tool: "geak-gen", stage: "llm", kind: "budget", message: "not sent"}
  end' tasks.jsonl > big.jsonl
geak-select -s big.json -r big.html big.jsonl > /dev/null 2> big.err
check_same "geak-select: exit 0, quiet" "0 " "$? $(cat big.err)"

svg_heights=$(grep -o '<svg [^>]*height="[0-9]*"' big.html | sed 's/.*height="//; s/"//' | sort -u | tr '\n' ' ')
check_same "every plot is 300 px high, whatever the number of tasks" "300 " "$svg_heights"
# The tasks' sections grow with the tasks, folded; the rest does not.
check_same "a page of a bounded size above the folded sections" yes \
	"$([ "$(sed '/<h2 id="tasks">/,$d' big.html | wc -c)" -lt 200000 ] && echo yes)"
check_match "speedups on a log axis, the 1x line among its ticks" \
	'Speedup of the selected kernels.*0\.125x.*0\.25x.*0\.5x.*class="base".*>1x<.*2x.*4x.*8x' \
	"$(tr '\n' ' ' < big.html)"
check_same "no per-task bar chart" "" "$(grep -o 'Speedup per kernel' big.html)"
n_fail=$(jq '[.kernels[] | select(.exec | not)] | length' big.json)
check_same "the failure reasons account for every task without a correct kernel" "$n_fail" \
	"$(jq '[.failures[].tasks] | add' big.json)"
check_same "... most common first" "$(jq -c '[.failures[].tasks] | sort | reverse' big.json)" \
	"$(jq -c '[.failures[].tasks]' big.json)"
check_match "... each said in words, with its record's reason" \
	'ran, but its outputs were wrong <span class="muted">exec: mismatch</span>' "$(cat big.html)"
check_match "... a task without a candidate says why" 'the model.s answer held no code' "$(cat big.html)"
check_same "difficulties in order" "1 2 3 4 5" "$(jq -r '[.by_difficulty[].difficulty] | map(tostring) | join(" ")' big.json)"
check_match "the cost in dollars" 'LLM cost \(US\$\)' "$(cat big.html)"
check_match "tokens and cost per iteration" 'Tokens per iteration.*Cost per iteration' "$(tr '\n' ' ' < big.html)"
check_match "where it came from: date, model, device" \
	'2026-01-01 00:00 UTC.*openai gpt-4.1.*NVIDIA H200' "$(tr '\n' ' ' < big.html)"

# Three tasks, evaluated on the CPU, every answer replayed.
jq -c 'select(.task.difficulty == 1)' tasks.jsonl | head -n 3 | jq -c '
  .llm = {provider: "openai", model: "gpt-4.1", replayed: true} |
  .usage_total = {calls: 1, input_tokens: 1200, output_tokens: 400, cost: 0} |
  .eval = {code_sha: .code_sha, call: true, exec: (.task.name != "sin_kernel"),
           stage: (if .task.name == "sin_kernel" then "exec" else "done" end),
           reason: (if .task.name == "sin_kernel" then "mismatch" else null end),
           speedup: null, flags: [], device: "cpu (Triton interpreter)", harness: "h1-test"}' \
	> small.jsonl
geak-select -r small.html small.jsonl > /dev/null
check_same "3 tasks" 3 "$(grep -c . small.jsonl)"
check_same "on the CPU: no plot or card of speedups" "" "$(grep -o -e 'aria-label="Speedup[^"]*' -e 'mean speedup' small.html)"
check_match "... and the page says why" "speed is not measured there" "$(cat small.html)"
check_match "replayed answers are said to be" "every answer replayed from a recording" "$(cat small.html)"
check_same "... and cost nothing: no plot of cost" "" "$(grep -o 'Cost per iteration' small.html)"
done_testing
