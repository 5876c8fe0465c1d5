#!/bin/sh
# The per-GPU lock holds across processes: while another process holds
# GPU 0's lock exclusively (as a timing run does), a geak-eval job on GPU 0
# waits for it.  No GPU is needed: torch is made to say it has one (a
# sitecustomize), so the harness takes GPU 0, and the job fails once it
# gets the lock.
. "$(dirname "$0")/lib.sh"
command -v flock >/dev/null || skip_all "no flock(1)"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 3

GEAK_LOCK_DIR=$scratch/locks
export GEAK_LOCK_DIR
mkdir locks
c=$top/tests/cheats
jq -nc --rawfile r "$c/add_reference.py" --rawfile t "$c/add_test.py" --rawfile code "$c/honest.py" \
	'{id: "plain/add", code: $code, task: {suite: "plain", name: "add", reference: $r, test: $t}}' > in.jsonl
: > locks/gpu-0.lock
flock -x locks/gpu-0.lock sleep 6 &
holder=$!
sleep 1
start=$(date +%s)
mkdir stand-in
cat > stand-in/sitecustomize.py <<'EOF'
import types
import torch
if not torch.cuda.is_available():
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.get_device_properties = lambda i: types.SimpleNamespace(
        name="stand-in GPU", total_memory=1 << 30, multi_processor_count=1, L2_cache_size=0)
EOF
PYTHONPATH=$scratch/stand-in geak-eval --gpus 0 --no-cache in.jsonl > out.jsonl 2>/dev/null
end=$(date +%s)
wait $holder
check "the job waited for the lock" test $((end - start)) -ge 4
check_same "one record out" 1 "$(grep -c . out.jsonl)"
check "the lock files live in GEAK_LOCK_DIR" test -e locks/gpu-0.gate
done_testing
