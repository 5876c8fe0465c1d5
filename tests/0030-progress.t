#!/bin/sh
# Progress and the closing summary: on a terminal (a pseudo-terminal
# made by script(1)) a line redrawn in place, with messages above it;
# into a pipe or a file never a progress line, but always one summary
# line; under a loop (GEAK_STATUS_DIR) the line goes to a file, gone
# when the tool ends; and the loop and the parallel runs each draw one
# line for all their stages.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v script >/dev/null 2>&1 || skip_all "no script(1) to make a terminal"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
plan 21
CR=$(printf '\r')
ESC=$(printf '\033')

# on_tty FILE COMMAND: run the shell command with a terminal as its
# stderr; FILE gets what the terminal was sent.
on_tty() {
	f=$1
	shift
	script -qec "$*" "$f" > /dev/null 2>&1
}

for t in one two three four five six; do
	jq -nc --arg t "$t" '{id: ("plain/" + $t), task: {suite: "plain", name: $t,
		instruction: ("Write " + $t + "."), reference: "import torch\ndef op(x):\n    return x\n"}}'
done > six.jsonl
{
	printf '%s\n' '{"match": "Write four.", "text": "There is no code in this answer."}'
	# The first record's answer is slow: the others finish behind it.
	jq -nc '{match: "Write one.", delay: 4, text: "```python\nimport triton\ndef op(x):\n    return x\n```"}'
	jq -nc '{text: "```python\nimport triton\ndef op(x):\n    return x\n```"}'
} > script.jsonl
start_llm script.jsonl --latency 0.8
printf 'openai\ttest-model\t1.00\t0.10\t4.00\n' > prices.tsv
GEAK_LLM_FLAGS="--prices $scratch/prices.tsv"

# geak-gen into a file: no progress, one summary.
geak-gen $GEAK_LLM_FLAGS -j 2 six.jsonl > gen.out 2> gen.err
check_same "not a terminal: one line on stderr" 2 "$(grep -c . gen.err)"
check_match "... the error, then the summary: generated, requests, tokens, dollars, errors, time" \
	'^geak-gen: 5 generated, 6 requests, [0-9.]+k? tokens, \$[0-9.]+, 1 error, [0-9]+s$' "$(tail -n 1 gen.err)"
check_same "... and no terminal control anywhere" "" "$(grep -l -e "$CR" -e "$ESC" gen.err gen.out)"

# On a terminal.
on_tty tty.log "geak-gen $GEAK_LLM_FLAGS -j 2 six.jsonl > tgen.out"
check_same "on a terminal: the same records" "$(jq -c 'del(.llm, .usage_total)' gen.out | sort)" \
	"$(jq -c 'del(.llm, .usage_total)' tgen.out | sort)"
check_match "a progress line redrawn in place: done of all, requests, tokens, in flight, time" \
	"${CR}${ESC}\\[Kgeak-gen: [0-9]+/6 done, [0-9]+ requests?, [0-9.]+k? tokens, \\\$[0-9.]+, [0-9]+ in flight, [0-9]+s" \
	"$(cat tty.log)"
check_match "... done counts what finished behind a slower first record, not what was written" \
	"geak-gen: [2-5]/6 done, [^${CR}]* 1 in flight" "$(cat tty.log)"
check_match "... with the time left once something is done" 'done, .* in flight, [0-9]+s, ETA [0-9]+s' "$(cat tty.log)"
check_match "a message goes above the line, which comes back below it" \
	"${CR}${ESC}\\[Kgeak-gen: plain/four \\(sample 0\\): no_code: .*${CR}?
geak-gen: [0-9]+/6 done" "$(cat tty.log)"
check_match "the summary last, the line taken away" \
	"^${ESC}\\[Kgeak-gen: 5 generated, 6 requests, .*, 1 error, [0-9]+s\$" \
	"$(tr '\r' '\n' < tty.log | grep -v '^Script ' | grep . | tail -n 1)"

# Under a loop: the line goes to GEAK_STATUS_DIR/geak-gen.
mkdir st
GEAK_STATUS_DIR=$scratch/st geak-gen $GEAK_LLM_FLAGS -j 1 six.jsonl > sgen.out 2> sgen.err &
gen_pid=$!
n=0
while [ ! -s st/geak-gen ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
check_match "under a loop the line is a file the loop reads" '^geak-gen: [0-9]+/6 done, ' "$(cat st/geak-gen 2>/dev/null)"
wait $gen_pid
check_same "... gone when the tool ends, and stderr as into a file" "0 2" \
	"$(ls st | wc -l | tr -d ' ') $(grep -c . sgen.err)"

# geak-eval: what it counts.
add_kernel_file mine.py
task='{suite: "plain", name: "add", reference: "import torch\ndef add(x, y):\n    return x + y\n",
	test: "import torch\ndef inputs():\n    return [(torch.randn(300, device=\"cuda\"), torch.randn(300, device=\"cuda\"))]\n"}'
{
	jq -nc --rawfile c mine.py "{id: \"plain/good\", code: \$c, task: $task}"
	jq -nc "{id: \"plain/wrong\", code: \"import torch\ndef add(x, y):\n    return x - y\n\", task: $task}"
	jq -nc "{id: \"plain/nocode\", task: $task}"
	jq -nc "{id: \"plain/failed\", task: $task, error: {tool: \"geak-gen\", stage: \"llm\", kind: \"budget\", message: \"x\"}}"
} > four.jsonl
geak-eval --cpu four.jsonl > ev.out 2> ev.err
check_same "geak-eval into a file: one line" 1 "$(grep -c . ev.err)"
check_match "... evaluated, pass, cached, passed through and why, time" \
	'^geak-eval: 2 evaluated, 1 pass, 0 cached, 1 passed through \(no code\), 1 passed through with an error, [0-9]+s$' \
	"$(cat ev.err)"
geak-eval --cpu ev.out > ev2.out 2> ev2.err
check_match "... again: nothing to do, and it says so" \
	'^geak-eval: 0 evaluated, 0 pass, 0 cached, 1 passed through \(no code\), 2 passed through \(evaluated already\), 1 passed through with an error, [0-9]+s$' \
	"$(cat ev2.err)"
on_tty etty.log "geak-eval --cpu four.jsonl > ev3.out"
check_match "the same candidates again, on a terminal: from the cache, said" \
	'geak-eval: 2 evaluated, 1 pass, 2 cached, 1 passed through \(no code\)' "$(cat etty.log)"
on_tty etty2.log "geak-eval --cpu --no-cache four.jsonl > ev4.out"
check_match "... and, evaluated afresh, its progress line" \
	"${CR}${ESC}\\[Kgeak-eval: [0-9]/4 done, [0-9] pass, 0 cached, [0-9] in flight, [0-9]+s" "$(cat etty2.log)"

# The loop: one line for the step and its stages, one summary at the end.
unset GEAK_BASE_URL GEAK_MODEL GEAK_PROVIDER
GEAK_PROMPTS=$top/examples/demo/prompts
GEAK_LLM_FLAGS="--provider openai --model geak-demo-recording --replay $top/examples/demo/replay.jsonl"
export GEAK_PROMPTS GEAK_LLM_FLAGS
on_tty loop.log "'$top/bin/geak-loop.sh' -i 2 -o '$scratch/lo' '$top/examples/demo/task.jsonl'"
check_same "the loop on a terminal completes" yes "$([ -f lo/best.jsonl ] && echo yes)"
check_match "its line: the iteration, the step, the stage's progress" \
	"${CR}${ESC}\\[Kgeak-loop: iteration 0 of 2: evaluating \\| eval: 0/1 done" "$(cat loop.log)"
check_match "the stages' summaries above it, then the loop's" \
	"${CR}${ESC}\\[Kgeak-eval: 1 evaluated.*${CR}${ESC}\\[Kgeak-loop: 2 iterations: [01] of 1 tasks pass, [0-9]+ model calls" \
	"$(tr '\n' ' ' < loop.log)"
check_same "the loop's status files are gone with it" "" "$(ls -A lo/.status 2>/dev/null)"
on_tty par.log "'$top/bin/geak-parallel.sh' -i 1 -R 2 -j 2 -o '$scratch/pa' '$top/examples/demo/task.jsonl'"
check_match "parallel runs: one line for all of them, then pass@k" \
	"${CR}${ESC}\\[Kgeak-parallel: runs [0-2] done, [0-2] running, [0-2] waiting of 2 \\| run [01]: .*geak-parallel: 2 runs of 1 iterations: pass@1 [0-9.]+%, pass@2 " \
	"$(tr '\n' ' ' < par.log)"
done_testing
