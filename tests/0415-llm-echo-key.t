#!/bin/sh
# A server that sends the key back (a proxy echoing the request's
# credential in a 401 body, in its request id, in the model list and in
# an answer): the key reaches no record, no --record or --journal file,
# no stderr (with -v) and no line of --check.
. "$(dirname "$0")/lib.sh"
. "$top/tests/04lib-llm.sh"
command -v jq >/dev/null || skip_all "jq is not installed"
plan 15

# A server that wants another key: every request is refused, and the
# refusal quotes the key it was sent.
start_server refuse --key sk-some-other-key-0000 --echo-key
task a "Write a." >a.in
OPENAI_API_KEY=$KEY geak-gen -v --base-url "$refuse_url" --max-attempts 1 <a.in \
	>refused.out 2>refused.err
check_same "refused: the error is auth" auth "$(field refused.out .error.kind)"
check_match "refused: the message says what the server sent, redacted" \
	'you sent: Bearer \[redacted:OPENAI_API_KEY\]' "$(field refused.out .error.message)"
check_match "refused: stderr says it too, redacted" \
	'\[redacted:OPENAI_API_KEY\]' "$(cat refused.err)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$refuse_url" >check-refused.out 2>&1
check_match "--check, refused: FAILED, redacted" \
	'^FAILED: key: .*\[redacted:OPENAI_API_KEY\]' "$(cat check-refused.out)"

# A server that takes the key and sends it back in everything it can.
start_server echo --key "$KEY" --echo-key \
	--reply 'Here.
```python
import triton
# {auth}
def kernel():
    return 1
```'
task b "Write b." >b.in
OPENAI_API_KEY=$KEY geak-gen -v --base-url "$echo_url" --record rec.jsonl \
	--journal journal.jsonl <b.in >echo.out 2>echo.err
check_same "echoed: the answer is taken" "import triton" "$(field echo.out '.code' | head -n 1)"
check_match "echoed: the code keeps the redaction mark" \
	'# Bearer \[redacted:OPENAI_API_KEY\]' "$(field echo.out .code)"
OPENAI_API_KEY=$KEY geak-gen --no-stream --base-url "$echo_url" <b.in >whole.out 2>whole.err
check_match "echoed, not streamed: the request id, redacted" \
	'^req_test_[0-9]+Bearer \[redacted:OPENAI_API_KEY\]$' "$(field whole.out .llm.request_id)"
check_match "--record: redacted" '\[redacted:OPENAI_API_KEY\]' "$(cat rec.jsonl)"
check_match "--journal: redacted" '\[redacted:OPENAI_API_KEY\]' "$(cat journal.jsonl)"
check_same "--record and --journal files are their owner's alone" "600 600" \
	"$(stat -c %a rec.jsonl journal.jsonl | tr '\n' ' ' | sed 's/ $//')"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$echo_url" >check-echo.out 2>&1
check_match "--check: the model list, redacted" \
	'^models: .*\[redacted:OPENAI_API_KEY\]' "$(cat check-echo.out)"

# Anthropic's header is the key alone.
start_server anth --key sk-some-other-key-0000 --echo-key
ANTHROPIC_API_KEY=$KEY geak-gen -v --provider anthropic --base-url "$anth_root" \
	--model claude-test --max-attempts 1 <a.in >anth.out 2>anth.err
check_match "anthropic, refused: redacted" \
	'you sent: \[redacted:ANTHROPIC_API_KEY\]' "$(field anth.out .error.message)"

# What the server says is printed with its control characters escaped:
# here it quotes the model asked for.
start_server models --key "$KEY" --models gpt-4.1
OPENAI_API_KEY=$KEY geak-gen --base-url "$models_url" --model "$(printf 'm\033[2J\033]0;t\007')" \
	<a.in >esc.out 2>esc.err
check_same "escapes: no raw control character on stderr" 0 \
	"$(tr -d '\n' < esc.err | tr -cd '\000-\037\177' | wc -c | tr -d ' ')"
check_match "escapes: the server's words, escaped" "model 'm\\\\x1b\\[2J\\\\x1b\\]0;t\\\\x07'" \
	"$(cat esc.err)"

stop_servers
no_key_anywhere
done_testing
