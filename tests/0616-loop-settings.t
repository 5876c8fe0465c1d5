#!/bin/sh
# What the loop scripts check before they spend anything, and what they
# leave when killed:
#  - a task file that is missing or whose every record is bad stops
#    geak-loop, geak-parallel and geak-slurm runs at once: non-zero, no
#    request to the server, no folder, no lock;
#  - every script takes --model;
#  - a folder keeps its run's settings: a run with others stops before
#    asking anything, and --force carries on;
#  - a server of one's own with no model named: its only model is used
#    and unpriced (cost null, counted as unpriced in the ledger, never
#    another provider's price); several are listed; --max-cost is refused;
#  - kill -9 of the loop: its step does not outlive it, and a run started
#    at once takes the folder over and completes.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
command -v flock >/dev/null 2>&1 || skip_all "flock is needed"
command -v setsid >/dev/null 2>&1 || skip_all "setsid is needed"
plan 35
task=$top/examples/demo/task.jsonl
loop=$top/bin/geak-loop.sh
par=$top/bin/geak-parallel.sh
slurm=$top/bin/geak-slurm.sh
start_llm "$top/examples/demo/script.jsonl"
unset GEAK_MODEL
requests() { [ -f llm.log ] && wc -l < llm.log | tr -d ' ' || echo 0; }

# ---- bad task files: nothing spent, nothing left ----
printf 'not json\n{"schema":1,"id":"x"}\n' > bad.jsonl
for f in /nonexistent/tasks.jsonl bad.jsonl; do
	for s in loop par slurm; do
		case $s in
		loop) "$loop" -o "$scratch/o-$s" "$f" 2> err ;;
		par) "$par" -o "$scratch/o-$s" "$f" 2> err ;;
		slurm) "$slurm" runs -o "$scratch/o-$s" "$f" 2> err ;;
		esac
		rc=$?
		check_same "$s, $(basename "$f"): exit 2, no request, no folder or lock" "2 0 no" \
			"$rc $(requests) $([ -e "o-$s" ] && echo yes || echo no)"
	done
done
"$loop" -o "$scratch/o-loop" /nonexistent/tasks.jsonl 2> err
check_match "a missing file is named" "/nonexistent/tasks.jsonl: no such file" "$(cat err)"
"$loop" -o "$scratch/o-loop" bad.jsonl 2> err
check_match "so is each bad record, and why nothing ran" \
	"bad.jsonl:1: invalid JSON.*bad.jsonl:2: field 'task.instruction': missing.*none of its 2 records can be used.*nothing was run" \
	"$(tr '\n' ' ' < err)"

# ---- --model on every script ----
for s in "$loop" "$par" "$slurm runs"; do
	$s --model some-model /nonexistent/tasks.jsonl 2> err
	check_same "$(basename "${s% *}") takes --model" "2 no" \
		"$? $(grep -q 'unknown option' err && echo yes || echo no)"
done
"$slurm" runs --dry-run -R 2 -n 2 -j 1 --model some-model --cpu -o dry "$task" > dry.out 2> dry.err
check_match "geak-slurm runs gives the loop --model and -n, -j throttles the array" \
	"array=0-1%1 .*element .*-n 2 --model some-model" "$(tr '\n' ' ' < dry.out)"

# ---- a server of one's own: its only model, unpriced ----
task_line=$(head -n 1 "$task")
printf '%s\n' "$task_line" > one.jsonl
geak-gen --ledger led.json one.jsonl > gen.out 2> gen.err
check_same "no model named: the server's only model, cost null" '"test-model" null' \
	"$(jq -c '.llm.model, .llm.usage.cost' gen.out | tr '\n' ' ' | sed 's/ $//')"
check_same "the request named that model" test-model "$(jq -r .model llm.log | tail -n 1)"
check_same "the ledger counts the call as unpriced, at no price" '1 0 1' \
	"$(jq -r '"\(.calls) \(.cost) \(.unpriced_calls)"' led.json)"
check_same "--resolve says where the model came from" \
	'{"model":"test-model","model_from":"the server'"'"'s only model","priced":false}' \
	"$(geak-gen --resolve | jq -c '{model, model_from, priced}')"
kill "$llm_pid"
wait "$llm_pid" 2>/dev/null
mv llm.log llm-1.log
start_llm "$top/examples/demo/script.jsonl" --models alpha,beta
unset GEAK_MODEL
geak-gen --resolve > /dev/null 2> err
check_same "several models: an error" 3 $?
check_match "... listing them" "has 2: alpha, beta; name one with --model" "$(cat err)"
"$loop" -o "$scratch/o-two" "$task" 2> err
check_same "geak-loop stops there: exit 4, no request" "4 0" "$? $(requests)"
"$loop" --model alpha --max-cost 1 -o "$scratch/o-cost" "$task" 2> err
check_same "--max-cost with an unpriced model: refused, no request" "4 0" "$? $(requests)"
check_match "... saying what to do" "no price for openai model alpha.*--max-tokens-total" "$(cat err)"

# ---- settings kept, a resume with others refused ----
# The harness check fails (no such Python): the run stops after the
# manifest is written and the model checked.
GEAK_EVAL_FLAGS="--python $scratch/no-python" "$loop" --model alpha -i 2 -o "$scratch/m" "$task" 2> err
check_same "a first run stops at the harness check" 3 $?
check_match "it says why" "the evaluation harness does not work" "$(cat err)"
check_same "its manifest keeps the settings" '"alpha" 1 2 "auto"' \
	"$(jq -c '.llm[0].model, .samples, .iterations, .device' m/manifest.json | tr '\n' ' ' | sed 's/ $//')"
n=$(requests)
GEAK_EVAL_FLAGS="--python $scratch/no-python" "$loop" --model beta -n 4 -i 2 -o "$scratch/m" "$task" 2> err
check_same "other settings: exit 5, no request" "5 $n" "$? $(requests)"
check_match "each difference is named, and what to do" \
	"llm: openai alpha at .* then, openai beta at .* now.*samples: 1 then, 4 now.*--force" \
	"$(tr '\n' ' ' < err)"
GEAK_EVAL_FLAGS="--python $scratch/no-python" "$par" --model beta -R 1 -o "$scratch/m" "$task" 2> err
check_same "geak-parallel on a loop's folder: exit 5" 5 $?
GEAK_EVAL_FLAGS="--python $scratch/no-python" "$loop" --force --model beta -n 4 -i 2 -o "$scratch/m" "$task" 2> err
check_same "--force carries on (to the harness check)" 3 $?
check_same "the manifest holds the new settings and the earlier ones" '"beta" 4 "alpha"' \
	"$(jq -c '.llm[0].model, .samples, .earlier[0].llm[0].model' m/manifest.json | tr '\n' ' ' | sed 's/ $//')"
check_same "no lock is held after any of it" ok "$(flock -n m/.geak.lock echo ok)"

# ---- kill -9 ----
if have_python; then
	kill "$llm_pid"
	wait "$llm_pid" 2>/dev/null
	# The first attempt's answer takes 6 s, so that the kill lands in it.
	printf '%s\n' '{"match": "**Request:**", "delay": 6, "text": "```python\nimport torch\ndef row_scale(x):\n    return x\n```"}' > slow.jsonl
	start_llm slow.jsonl
	setsid "$loop" -i 1 --model test-model -o "$scratch/k" "$task" 2> k1.err &
	lp=$!
	n=0
	while ! grep -q 'Request:' llm.log 2>/dev/null && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
	step=$(sed -n 's/^step //p' k/.geak.lock)
	kill -KILL "$lp"
	"$loop" -i 1 --model test-model -o "$scratch/k" "$task" 2> k2.err
	check_same "a run started at once after kill -9 completes" 0 $?
	check_match "it took the folder over from the dead run" \
		"its run \\(pid $lp\\) has died; stopping what is left of it \\(process group $step\\)" "$(cat k2.err)"
	check_same "nothing of the killed run's step is left" "" \
		"$(ps -o pid= -s "$step" 2>/dev/null | tr -d ' ')"
	# Killed again, with nobody to take over: the watcher stops the step.
	rm -rf k
	setsid "$loop" -i 1 --model test-model -o "$scratch/k" "$task" 2> k3.err &
	lp=$!
	n=$(grep -c 'Request:' llm.log)
	m=0
	while [ "$(grep -c 'Request:' llm.log)" -le "$n" ] && [ $m -lt 600 ]; do sleep 0.1; m=$((m + 1)); done
	step=$(sed -n 's/^step //p' k/.geak.lock)
	kill -KILL "$lp"
	m=0
	while [ -n "$(ps -o pid= -s "$step" 2>/dev/null)" ] && [ $m -lt 100 ]; do sleep 0.1; m=$((m + 1)); done
	check_same "without a resume, the step is stopped within seconds" "" \
		"$(ps -o pid= -s "$step" 2>/dev/null | tr -d ' ')"
	check_same "and the folder's lock is free" ok "$(flock -n k/.geak.lock echo ok)"
else
	for i in 1 2 3 4 5; do skip "no Python with torch and triton"; done
fi
done_testing
