#!/bin/sh
# Hand-written ModelNew candidates for KernelBench level-1 problems
# (tests/kernelbench/l1_*.py: a matrix product, a reduction, an
# elementwise op and a softmax in Triton, and one in PyTorch alone)
# evaluated in the CPU mode against the problems themselves, read from
# the archive in ../shared.  The interpreter cannot run the problems at their published
# sizes (geak-import(1), CPU MODE), so each candidate's "# cpu:" line
# gives smaller values for the problem's size constants, set in a copy of
# the problem; its "# expect:" line says how it must end.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
archive=$top/../shared/bench/kernelbench-data.tar.gz
[ -r "$archive" ] || skip_all "no KernelBench archive at $archive"
kb=$top/tests/kernelbench
set -- "$kb"/l1_*.py
plan $(($# * 2 + 5))

# A checkout of the chosen problems, their sizes made small.
mkdir -p src/KernelBench/level1
for f; do
	problem=$(sed -n 's/^# problem: level1\///p' "$f")
	out=src/KernelBench/level1/$problem.py
	tar -xzf "$archive" -O "KernelBench/level1/$problem.py" > "$out" || not_ok "$problem in the archive"
	for set in $(sed -n 's/^# cpu: //p' "$f"); do
		name=${set%%=*}
		sed -E "s/^$name[[:space:]]*=.*/$name = ${set#*=}/" "$out" > "$out.new" && mv "$out.new" "$out"
	done
done
geak-import --suite kernelbench src > tasks.jsonl 2> import.err
check_same "geak-import reads the small copies" 0 $?
check_same "each is cpu_ok by the size rule" "true" "$(jq -s 'length > 0 and (map(.task.cpu_ok) | all)' tasks.jsonl)"

for f; do
	problem=$(sed -n 's/^# problem: //p' "$f")
	jq -c --rawfile c "$f" --arg n "$(basename "$f" .py)" --arg id "kernelbench/$problem" \
		'select(.id == $id) | .cand = $n | .code = $c' tasks.jsonl
done > in.jsonl
start=$(date +%s)
geak-eval --cpu --no-cache -j 2 in.jsonl > out.jsonl 2> err.txt
check_same "geak-eval exits 0: every record a result" "ok" \
	"$([ $? -eq 0 ] && echo ok || { cat err.txt >&2; echo failed; })"
echo "# geak-eval --cpu on $# candidates: $(($(date +%s) - start)) s"
for f; do
	name=$(basename "$f" .py)
	want=$(sed -n 's/^# expect: //p' "$f")
	got=$(jq -r --arg n "$name" 'select(.cand == $n) | .eval | "\(.exec) \(.reason)"' out.jsonl)
	check_same "$name: evaluated once" 1 "$(jq --arg n "$name" 'select(.cand == $n)' out.jsonl | jq -s length)"
	case $want in
	pass) check_same "$name passes" "true null" "$got" ;;
	*) check_match "$name: $want" "^false $want" "$got" ;;
	esac
done
# The static check refuses code without a @triton.jit function; without
# it, the run itself finds that no Triton kernel wrote the outputs.
jq -c 'select(.cand == "l1_relu_torch")' in.jsonl > torch.jsonl
geak-eval --cpu --no-cache --static off torch.jsonl > torch-out.jsonl 2> torch-err.txt
check_same "the torch candidate with --static off: exit 0 (a result, not an error)" 0 $?
check_match "it fails at run time as a fallback" \
	'^false cheat .*no Triton kernel of the candidate.s own code was launched' \
	"$(jq -r '.eval | "\(.exec) \(.reason) \(.message)"' torch-out.jsonl)"
done_testing
