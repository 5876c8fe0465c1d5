# tests/04lib-llm.sh: shared by the LLM tests (tests/04*.t), sourced after
# tests/lib.sh: a loopback test server, task records, and record checks.

KEY=sk-test-41b7c0ffee-never-leak-this
# The test server is a server of one's own, which is asked for its model
# when none is named: the tests name OpenAI's default, which they price.
GEAK_MODEL=gpt-4.1
export GEAK_MODEL
PY=$(command -v python3 || echo "$GEAK_PYTHON")
srv_pids=

# start_server NAME [llm_server.py options]: sets NAME_url (OpenAI base),
# NAME_root (host root) and NAME_log (the request log).
start_server() {
	name=$1
	shift
	"$PY" "$top/tests/helpers/llm_server.py" --log "$scratch/$name.log" "$@" \
		>"$scratch/$name.port" 2>"$scratch/$name.err" &
	srv_pids="$srv_pids $!"
	i=0
	while [ ! -s "$scratch/$name.port" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	p=$(head -n 1 "$scratch/$name.port")
	[ -n "$p" ] || { echo "Bail out! llm_server.py did not start"; cat "$scratch/$name.err"; exit 1; }
	eval "${name}_root=http://127.0.0.1:$p"
	eval "${name}_url=http://127.0.0.1:$p/v1"
	eval "${name}_log=$scratch/$name.log"
	: >"$scratch/$name.log"
}

stop_servers() {
	for p in $srv_pids; do kill "$p" 2>/dev/null; done
	srv_pids=
}
trap 'stop_servers; rm -rf "$scratch"' EXIT

# task ID INSTRUCTION: one task record on stdout.
task() {
	jq -cn --arg id "$1" --arg ins "$2" '{schema: 1, id: ("plain/" + $id),
		task: {suite: "plain", name: $id, instruction: $ins,
		reference: "import torch\ndef op(x, y):\n    return x + y\n"}}'
}

# field FILE JQ-FILTER: the filter applied to each record, one per line.
field() {
	jq -r "$2" "$1"
}

# lines FILE: how many lines FILE holds.
lines() {
	wc -l <"$1" | tr -d ' '
}

# no_key_anywhere: passes when no file in the scratch dir holds the key.
no_key_anywhere() {
	if grep -rlF "$KEY" "$scratch" >"$scratch/.leaks" 2>/dev/null; then
		not_ok "the key appears in no output, error or record file"
		sed 's/^/# leaked into: /' "$scratch/.leaks"
	else
		ok "the key appears in no output, error or record file"
	fi
}
