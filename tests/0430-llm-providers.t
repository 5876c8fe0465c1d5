#!/bin/sh
# Providers and configuration: OpenAI-compatible, Anthropic Messages and
# Azure deployments over real HTTP; flag > GEAK_* > provider environment >
# default; --api-key-env; the --check preflight names what is wrong.
. "$(dirname "$0")/lib.sh"
. "$top/tests/04lib-llm.sh"
command -v jq >/dev/null || skip_all "jq is not installed"
plan 43

start_server s --key "$KEY" --models gpt-4.1,claude-test,mydeploy,other-model
task one "Write one." >one.in
unset GEAK_MODEL GEAK_BASE_URL GEAK_PROVIDER GEAK_API_KEY OPENAI_BASE_URL OPENAI_API_BASE \
	ANTHROPIC_BASE_URL AZURE_OPENAI_ENDPOINT
# A server of one's own with no model named is asked for its models (the
# server here has four): the checks below that name none use OpenAI's.
GEAK_MODEL=gpt-4.1
export GEAK_MODEL

# last_body JQ: the filter applied to the last request the server saw.
last() {
	tail -n 1 "$s_log" | jq -r "$1"
}

for stream in "" --no-stream; do
	ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=$s_root geak-gen --provider anthropic \
		--model claude-test $stream <one.in >anth.out 2>anth.err
	check_same "anthropic ${stream:-stream}: a candidate" "0 import triton anthropic" \
		"$? $(field anth.out '.code' | head -n 1) $(field anth.out .llm.provider)"
done
check_same "anthropic: version header, max_tokens, path" "2023-06-01 16000 /v1/messages" \
	"$(last '"\(.anthropic_version) \(.body.max_tokens) \(.path)"')"
check_same "anthropic: usage and request id" "true req_test_" \
	"$(field anth.out '"\(.llm.usage.input_tokens > 0) \(.llm.request_id | sub("[0-9]+$"; ""))"')"
ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=$s_root/v1 geak-gen --provider anthropic \
	--model claude-test --reasoning-effort high --max-tokens 30000 <one.in >think.out 2>/dev/null
check_same "anthropic: a base URL ending in /v1, reasoning as thinking, no temperature" \
	"/v1/messages 24576 null" "$(last '"\(.path) \(.body.thinking.budget_tokens) \(.body.temperature)"')"
ANTHROPIC_API_KEY=wrong ANTHROPIC_BASE_URL=$s_root geak-gen --provider anthropic \
	--model claude-test <one.in >anthbad.out 2>/dev/null
check_same "anthropic: wrong key is kind auth" auth "$(field anthbad.out .error.kind)"

AZURE_OPENAI_API_KEY=$KEY AZURE_OPENAI_ENDPOINT=$s_root geak-gen --provider azure \
	--model mydeploy --max-tokens 500 <one.in >azure.out 2>azure.err
check_same "azure: a candidate" "0 import triton" "$? $(field azure.out '.code' | head -n 1)"
check_same "azure: deployment URL, api-version, no model in the body" \
	"/openai/deployments/mydeploy/chat/completions?api-version=2024-10-21 null 500" \
	"$(last '"\(.path) \(.body.model) \(.body.max_completion_tokens)"')"
geak-gen --provider azure --model mydeploy <one.in >noend.out 2>noend.err
check_same "azure without an endpoint: exit 3" 3 "$?"
check_match "... saying what is missing" "AZURE_OPENAI_ENDPOINT" "$(cat noend.err)"

# OpenAI-compatible: the request's parameters.
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --max-tokens 100 --reasoning-effort low \
	<one.in >p.out 2>/dev/null
check_same "openai: temperature 1.0 by default, max_tokens to other servers, reasoning_effort" \
	"1 100 null low true" \
	"$(last '"\(.body.temperature) \(.body.max_tokens) \(.body.max_completion_tokens) \(.body.reasoning_effort) \(.body.stream_options.include_usage)"')"
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --temperature 0.2 <one.in >t.out 2>/dev/null
check_same "--temperature" 0.2 "$(last .body.temperature)"

# Precedence: flag > GEAK_* > provider variables > default.
OPENAI_API_KEY=$KEY OPENAI_BASE_URL=http://127.0.0.1:9/v1 GEAK_BASE_URL=$s_url \
	geak-gen <one.in >prec1.out 2>/dev/null
check_same "GEAK_BASE_URL over OPENAI_BASE_URL" 0 "$?"
OPENAI_API_KEY=$KEY GEAK_BASE_URL=http://127.0.0.1:9/v1 geak-gen --base-url "$s_url" \
	<one.in >prec2.out 2>/dev/null
check_same "--base-url over GEAK_BASE_URL" 0 "$?"
OPENAI_API_KEY=$KEY OPENAI_API_BASE=$s_url geak-gen <one.in >prec3.out 2>/dev/null
check_same "legacy OPENAI_API_BASE" 0 "$?"
OPENAI_API_KEY=$KEY OPENAI_BASE_URL=$s_url OPENAI_API_BASE=http://127.0.0.1:9/v1 \
	geak-gen <one.in >prec4.out 2>/dev/null
check_same "OPENAI_BASE_URL over OPENAI_API_BASE" 0 "$?"
OPENAI_API_KEY=$KEY GEAK_MODEL=other-model geak-gen --base-url "$s_url" <one.in >m1.out 2>/dev/null
check_same "GEAK_MODEL" other-model "$(last .model)"
OPENAI_API_KEY=$KEY GEAK_MODEL=other-model geak-gen --base-url "$s_url" --model gpt-4.1 \
	<one.in >m2.out 2>/dev/null
check_same "--model over GEAK_MODEL" gpt-4.1 "$(last .model)"
ANTHROPIC_API_KEY=$KEY GEAK_PROVIDER=anthropic GEAK_MODEL=claude-test GEAK_BASE_URL=$s_root \
	geak-gen <one.in >gp.out 2>/dev/null
check_same "GEAK_PROVIDER" anthropic "$(last .family)"
MY_SECRET=$KEY OPENAI_API_KEY=wrong geak-gen --base-url "$s_url" --api-key-env MY_SECRET \
	<one.in >ake.out 2>/dev/null
check_same "--api-key-env over OPENAI_API_KEY" 0 "$?"
geak-gen --base-url "$s_url" --api-key-env NOT_SET_ANYWHERE <one.in >ake2.out 2>ake2.err
check_same "--api-key-env naming an unset variable: exit 3" 3 "$?"
check_match "... naming the variable" "NOT_SET_ANYWHERE: the variable is not set" "$(cat ake2.err)"
geak-gen --provider nosuch <one.in >/dev/null 2>np.err
check_match "unknown provider: refused" "unknown provider 'nosuch'" "$(cat np.err)"

# --check: one tiny request; says which of endpoint, key, model failed.
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$s_url" >chk.out 2>&1
check_same "--check: exit 0 when all works" 0 "$?"
check_match "--check: says so" "^ok: endpoint, key and model work" "$(cat chk.out)"
OPENAI_API_KEY=wrong geak-gen --check --base-url "$s_url" >chk.out 2>&1
check_same "--check wrong key: exit 1" 1 "$?"
check_match "--check wrong key: names the key" "FAILED: key: the endpoint refused the key from \\\$OPENAI_API_KEY" \
	"$(cat chk.out)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$s_url" --model gpt-typo >chk.out 2>&1
check_match "--check wrong model: names the model" "FAILED: model: gpt-typo" "$(cat chk.out)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "http://127.0.0.1:9/v1" >chk.out 2>&1
check_match "--check dead endpoint: names the endpoint" "FAILED: endpoint: .*cannot be reached" "$(cat chk.out)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$s_root/wrong/path" >chk.out 2>&1
check_match "--check wrong path: names the endpoint" "FAILED: endpoint: .* does not exist" "$(cat chk.out)"
geak-gen --check --base-url "$s_url" >chk.out 2>&1
check_match "--check without a key: says none was found" "FAILED: key: none was found" "$(cat chk.out)"
GEAK_MODEL= geak-gen --check --provider azure >chk.out 2>&1
check_same "--check with no model: exit 1" 1 "$?"
check_match "--check with no model: says so" "azure needs the deployment's name: give --model" "$(cat chk.out)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$s_url" >chk.out 2>&1
check_match "--check lists the server's models, and finds the one asked for" \
	"^models: the server lists 4: gpt-4.1, claude-test, mydeploy, other-model \(gpt-4.1 is one of them\)" \
	"$(cat chk.out)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$s_url" --model gpt-typo >chk.out 2>&1
check_match "... or says it is not there" "\(gpt-typo is not among them\)" "$(cat chk.out)"
start_server quiet --key "$KEY" --no-list
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$quiet_url" --model test-model >chk.out 2>&1
check_same "a server that lists none: said, and the check still passes" \
	"0 models: the server does not list them (HTTP 404)" "$? $(grep '^models:' chk.out)"

# Nothing names the provider: a base URL means a server of one's own, a
# Claude model Anthropic, else the key that is set; each its default model.
: >none.jsonl
who() {
	env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u AZURE_OPENAI_API_KEY -u GEAK_MODEL "$@" \
		geak-gen -v --replay none.jsonl </dev/null 2>&1 | sed -n 's/^geak-gen: llm: \([a-z]*\) (\(.*\)) model \([^ ]*\) at.*/\1, \2, \3/p'
}
check_same "only ANTHROPIC_API_KEY: anthropic, its default model" \
	'anthropic, $ANTHROPIC_API_KEY or its base URL is set, claude-sonnet-4-5' "$(who ANTHROPIC_API_KEY=$KEY)"
check_same "both keys: openai, its default model" \
	'openai, $OPENAI_API_KEY or its base URL is set, gpt-4.1' "$(who ANTHROPIC_API_KEY=$KEY OPENAI_API_KEY=$KEY)"
check_same "both keys and a Claude model: anthropic" 'anthropic, the model is Claude, claude-x' \
	"$(who ANTHROPIC_API_KEY=$KEY OPENAI_API_KEY=$KEY GEAK_MODEL=claude-x)"
check_same "a base URL of one's own: an OpenAI-compatible server" 'openai, a base URL was given, gpt-4.1' \
	"$(who ANTHROPIC_API_KEY=$KEY GEAK_BASE_URL=$s_url)"
check_same "only Azure's: azure, the deployment from AZURE_OPENAI_DEPLOYMENT" \
	'azure, $AZURE_OPENAI_API_KEY or its endpoint is set, mydeploy' \
	"$(who AZURE_OPENAI_API_KEY=$KEY AZURE_OPENAI_DEPLOYMENT=mydeploy)"
check_same "no key at all: openai" 'openai, the default, gpt-4.1' "$(who)"

no_key_anywhere
done_testing
