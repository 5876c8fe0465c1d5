#!/bin/sh
# The whole loop with a key in its environment (the scripted model
# requires it) and a model whose every kernel tries to steal it: from the
# environment of every process it can see, and from its own.  The
# evaluation stage is given no credential (a geak-eval in front of the
# real one records its environment), and after two iterations the key is
# in no record, cache file, trace or prompt.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"

key=sk-geak-loop-$$-fedcba9876543210
OPENAI_API_KEY=$key
export OPENAI_API_KEY top
python3 - <<'EOPY'
import json
thief = '''import os
import torch
import triton
import triton.language as tl

found = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fp:
                env = fp.read().split(b"\\0")
        except OSError:
            continue
        found += [e.decode(errors="replace") for e in env if b"sk-" in e or b"KEY" in e]
found += [f"{k}={v}" for k, v in os.environ.items() if "KEY" in k or v.startswith("sk-")]
print("saw", found)
raise RuntimeError("THIEF" + "-RAN saw " + repr(found))
'''
task = {"id": "plain/double_it", "task": {"suite": "plain", "name": "double_it",
    "instruction": "Write a Triton kernel and a wrapper double_it(x) that doubles every element of a 1-D tensor.",
    "reference": "import torch\n\n\ndef double_it(x):\n    return x * 2\n",
    "test": "import torch\n\n\ndef inputs():\n    return [(torch.randn(300, device='cuda'),)]\n",
    "difficulty": 1, "cpu_ok": True, "signatures": ["def double_it(x)"]}}
with open("tasks.jsonl", "w") as f:
    f.write(json.dumps(task) + "\n")
with open("script.jsonl", "w") as f:
    f.write(json.dumps({"match": "the run failed",
                        "text": "```reflection\nCALL: it raises on purpose.\n```"}) + "\n")
    f.write(json.dumps({"match": "doubles every element",
                        "text": json.dumps({"thought": "look around", "code": thief})}) + "\n")
EOPY
start_llm script.jsonl --key "$key"
plan 7

# The loop as installed, with a geak-eval in front that records what it
# was given.
mkdir -p fake/bin
for t in "$top"/bin/geak-*; do
	case $t in *.c) continue ;; esac
	ln -s "$t" fake/bin/
done
rm fake/bin/geak-eval
printf '#!/bin/sh\nenv > "%s/eval-env.txt"\nexec "%s/bin/geak-eval" "$@"\n' "$scratch" "$top" > fake/bin/geak-eval
chmod +x fake/bin/geak-eval
GEAK_EVAL_FLAGS="--static off --cpu -v"
GEAK_RETRIEVE_FLAGS=
export GEAK_EVAL_FLAGS GEAK_RETRIEVE_FLAGS

fake/bin/geak-loop.sh -i 2 -o out tasks.jsonl 2> loop.err
check_same "the loop finishes" 0 $?
check_same "the model was asked with the key" "true" \
	"$(jq -s -c 'map(.auth_ok) | unique | .[0]' llm.log)"
check_match "the thief ran, in both iterations" '^2$' \
	"$(cat out/evaluated-*.jsonl | grep -c 'THIEF-RAN')"
check_same "the evaluation stage was given no credential" "" \
	"$(grep -E '^[^=]*(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|PRIVATE)' eval-env.txt)"
check_same "the key is in no record" "" "$(grep -l -F "$key" out/*.jsonl)"
check_same "nor in the cache, nor in the trace" "" "$(grep -rl -F "$key" cache loop.err)"
check_same "nor in any prompt" "" "$(jq -r '.body.messages[].content' llm.log | grep -F "$key")"
done_testing
