# tests/06lib.sh: the scripted model server for the loop tests (06*.t).
# After tests/lib.sh: `start_llm SCRIPT [SERVER ARGS]` starts tests/helpers/llm_server.py
# on a loopback port with the JSON Lines script, logs requests to llm.log
# and points GEAK_BASE_URL/GEAK_MODEL at it; it is stopped on exit.

llm_pid=
start_llm() {
	script=$1
	shift
	command -v python3 >/dev/null 2>&1 || skip_all "python3 is needed for the test LLM server"
	rm -f llm.port llm.log
	python3 "$top/tests/helpers/llm_server.py" --script "$script" --port-file llm.port \
		--log llm.log --reply 'no script line matched' "$@" > llm.out 2>&1 &
	llm_pid=$!
	n=0
	while [ ! -s llm.port ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ -s llm.port ] || skip_all "the test LLM server did not start"
	GEAK_BASE_URL=http://127.0.0.1:$(cat llm.port)/v1
	GEAK_MODEL=test-model
	GEAK_PROVIDER=openai
	export GEAK_BASE_URL GEAK_MODEL GEAK_PROVIDER
	trap 'kill "$llm_pid" 2>/dev/null; keep_scratch' EXIT
}

# The prompt of the Nth request (from 1) the server saw.
llm_prompt() {
	jq -r --argjson n "$1" 'select(.n == $n) | .body.messages[0].content' llm.log
}

# jq FILTER over a record file, compact, one value per line.
q() {
	jq -c "$1" "$2"
}

# The prompts the server saw that contain TEXT (requests run in parallel,
# so their numbers do not follow the input order).
llm_prompt_with() {
	jq -r --arg t "$1" '.body.messages[0].content | select(contains($t))' llm.log
}
