#!/bin/sh
# Nothing a candidate writes is trusted.  Its compile cache keeps only
# compiled kernels after its job (geakh/cachetrust.py, on a cache made
# here, and cache_write.py's planted files gone after a run, unread by a
# later job of the same code); a job of other code cannot read it; the
# worker's output tails write no file the job put in their place; a
# global of the reference's module changed beside its timing is a cheat.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 15
c=$top/tests/cheats

"$GEAK_PYTHON" "$top/tests/harness/cache_trust.py" "$top" "$scratch/prune" > prune.out 2> prune.err
sed 's/^/# /' prune.err | tail -n 5
for name in kernel_files_kept targets_of_links_untouched planted_files_removed fifo_link_huge_removed \
	foreign_group_removed deep_tree_removed second_prune_removes_nothing; do
	check_same "prune: $name" "$name ok" "$(grep "^$name " prune.out)"
done

# record ID CODE-FILE: a record of the plain task "add".
record() {
	jq -nc --rawfile ref "$c/add_reference.py" --rawfile test "$c/add_test.py" --rawfile code "$2" \
		--arg id "$1" '{schema: 1, id: $id, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test}}'
}
# A kernel-shaped file planted in its own cache (it stays), and a second
# candidate, of other code, that returns wrong sums where it can read it.
cat > plant.py <<'PY'
import json, os
_d = os.path.join(os.environ["TRITON_CACHE_DIR"], "A" * 52)
os.makedirs(_d, exist_ok=True)
open(os.path.join(_d, "k.json"), "w").write("{}")
open(os.path.join(_d, "__grp__k.json"), "w").write(json.dumps({"child_paths": {"k.json": os.path.join(_d, "k.json")}}))
PY
cat plant.py "$c/honest.py" > planter.py
own=$(sha256sum < planter.py | cut -c1-32)
{ printf 'import os\n_seen = os.path.exists(os.path.join(os.path.dirname(os.environ["TRITON_CACHE_DIR"]), "%s", "%s", "k.json"))\n' "$own" "$(printf 'A%.0s' $(seq 52))"
  sed 's/(x, y, out, n,/(x, y, out, n - _seen,/' "$c/honest.py"; } > peeker.py
{ record plain/add/cw1 "$c/cache_write.py"; record plain/add/planter planter.py
  record plain/add/peeker peeker.py; } > in.jsonl
record plain/add/cw2 "$c/cache_write.py" > again.jsonl
mkdir tmp
# The second run of cache_write's code, with no result kept to reuse.
timeout -s KILL 240 geak-eval -j 1 --cpu --static off --cache cache --tmpdir tmp \
	--timeout 30 in.jsonl > out.jsonl 2> err.txt &&
	rm -r cache/eval && timeout -s KILL 120 geak-eval -j 1 --cpu --static off --cache cache \
	--tmpdir tmp --timeout 30 again.jsonl >> out.jsonl 2>> err.txt
check_same "geak-eval exits 0" 0 $?
ev() { jq -r --arg id "$1" 'select(.id == $id) | .eval | "\(.exec) \(.reason)"' out.jsonl; }
check_same "cache_write passes, and a later job of its code finds nothing it left" \
	"true null true null" "$(ev plain/add/cw1) $(ev plain/add/cw2)"
cw=$(sha256sum < "$c/cache_write.py" | cut -c1-32)
check_same "its cache holds nothing of what it planted" "" "$(ls -A "cache/triton/$cw" 2>&1)"
check_same "a kernel-shaped file stays in its own code's cache" "__grp__k.json k.json" \
	"$(ls "cache/triton/$own/$(printf 'A%.0s' $(seq 52))" | paste -sd ' ')"
check_same "a job of other code cannot read it" "true null" "$(ev plain/add/peeker)"

# The tails' count of bytes cut: a link (here to the job's own job.json,
# which the job cannot write) or a FIFO the job put in its place is never
# written or waited on.
{ printf 'import os, sys\nos.symlink("job.json", "stdout.txt.cut")\nos.mkfifo("stderr.txt.cut")\n'
  printf 'sys.stdout.write("x" * (3 << 20))\nsys.stderr.write("y" * (3 << 20))\n'
  cat "$c/honest.py"; } > tails.py
record plain/add/tails tails.py > tails.jsonl
mkdir tails
# A job that waited on the FIFO would run to its timeout: that is well
# past what a loaded machine takes for one that does not.
timeout -s KILL 300 geak-eval -j 1 --cpu --no-cache --static off --tmpdir tails --keep \
	--timeout 120 tails.jsonl > tails.out 2> tails.err
check_same "a job whose cut files are a link and a FIFO ends before its timeout, judged" \
	"0 false cheat true" "$? $(jq -r '.eval | "\(.exec) \(.reason) \(.seconds < 60)"' tails.out)"
check_same "the file behind the link is untouched" "" \
	"$(for f in $(find tails -name job.json); do jq -e .code "$f" >/dev/null 2>&1 || echo "$f"; done)"

out=$(GEAK_TEST_TIME=1 "$GEAK_PYTHON" "$top/tests/harness/perf_cpu.py" "$c/add_reference.py" \
	"$c/ref_global_swap.py" "$scratch/swap" 2>>err.txt | tail -n 1)
check_same "a reference module's global changed beside its timing: a cheat" \
	"true false cheat geak_reference_side.torch" \
	"$(printf '%s' "$out" | jq -r '"\(.run.exec) \(.timed.exec) \(.timed.reason) \(.timed.message | capture("\\((?<n>[^)]*)\\)").n)"')"
done_testing
