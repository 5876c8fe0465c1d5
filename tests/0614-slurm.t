#!/bin/sh
# geak-slurm on a one-node Slurm cluster started for the test (Debian's
# slurmctld, slurmd and munge), with the scripted model over loopback
# and evaluation on the CPU:
#  - a job array of 3 runs and its merge give the merged pass@k and best
#    kernels of geak-parallel -R 3 on the same answers (and the times of
#    both are printed);
#  - an element requeued (scontrol requeue) in the middle of its loop
#    resumes: its records are those of an uninterrupted run, none lost
#    or twice, and no request answered before is made again;
#  - an evaluation sharded over 2 srun tasks writes what one geak-eval
#    writes, a bad line and a blank one included.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
. "$top/tests/slurmlib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
command -v flock >/dev/null 2>&1 || skip_all "flock is needed"
# The daemons are stopped however the test ends; start_llm sets a trap
# of its own, so each is followed by this one.
cleanup() {
	stop_slurm
	[ -n "$llm_pid" ] && kill "$llm_pid" 2>/dev/null
	rm -rf "$scratch"
}
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
start_slurm 4
trap cleanup EXIT
plan 37
start_llm "$top/examples/demo/script.jsonl"
trap cleanup EXIT
slurm=$top/bin/geak-slurm.sh
task=$top/examples/demo/task.jsonl
check_prompt='Reply with the single word: ok'

# What differs from run to run: timings, the server's request ids, and the
# evaluator's paths in the traceback.
same() {
	jq -cS 'del(.llm.latency_ms, .llm.request_id, .eval.seconds, .eval.phases, .eval.calibration, .eval.cached,
		.eval.traceback, .eval.runs, .eval.stdout_tail, .eval.stderr_tail)' "$@"
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# --dry-run: the scripts, nothing submitted.
"$slurm" runs --dry-run -R 3 -i 2 --cpu -o dry "$task" -- --partition=geak --comment='a b' > dry.out 2> dry.err
check_same "--dry-run exits 0" 0 $?
check_match "it prints the array's script" '^#SBATCH --array=0-2$' "$(cat dry.out)"
check_match "and the merge's sbatch, after the array, options passed on" \
	"^# merge job: sbatch --parsable '--dependency=afterany:RUNS_JOB_ID' '--partition=geak' '--comment=a b'" \
	"$(cat dry.out)"
check "and submits nothing, makes no folder" test ! -e dry -a -z "$(squeue -h -o %i)"
"$slurm" runs -R 0 "$task" 2> usage.err
check_same "a bad option value is a usage error" 2 $?

# A 3-element array and geak-parallel -R 3, each with a cache of its own.
XDG_CACHE_HOME=$scratch/cache-array TRITON_CACHE_DIR=$scratch/cache-array/triton
export XDG_CACHE_HOME TRITON_CACHE_DIR
t2=$(now)
"$slurm" runs -W -R 3 -i 2 --cpu -o "$scratch/arr" "$task" 2> arr.err
check_same "the array and its merge complete (sbatch --wait)" 0 $?
t3=$(now)
XDG_CACHE_HOME=$scratch/cache-par TRITON_CACHE_DIR=$scratch/cache-par/triton
t0=$(now)
GEAK_EVAL_FLAGS=--cpu "$top/bin/geak-parallel.sh" -i 2 -R 3 -j 3 -o "$scratch/par" "$task" 2> par.err
check_same "geak-parallel -R 3 completes" 0 $?
t1=$(now)
echo "# 3 runs of 2 iterations: geak-parallel -R 3 -j 3 $(secs "$t0" "$t1") s," \
	"Slurm array + merge $(secs "$t2" "$t3") s (run first; same machine, caches of their own)"
sed 's/^/# /' arr.err | tail -n 3
check_same "each element ran once, its start logged" "1 1 1" \
	"$(for r in 0 1 2; do grep -c 'geak-slurm: run '$r', job' arr/run-$r.log; done | tr '\n' ' ' | sed 's/ $//')"
check_same "each run's records carry its index" '0 1 2' \
	"$(jq -r .run arr/run-*/evaluated-1.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "merged pass@k as geak-parallel's" "$(jq -c .pass_at_k par/summary.json)" \
	"$(jq -c .pass_at_k arr/summary.json)"
check_same "three runs in both summaries" "3 3" "$(jq .runs par/summary.json) $(jq .runs arr/summary.json)"
check_same "by iteration as geak-parallel's" "$(jq -c .by_iter par/summary.json)" "$(jq -c .by_iter arr/summary.json)"
check_same "the best kernels are geak-parallel's" "$(same par/best.jsonl)" "$(same arr/best.jsonl)"
check_match "the merge says every run is complete" 'merged runs 0 1 2 complete; best kernels' "$(cat arr/merge.log)"

# A run requeued in its second iteration, against a server of its own
# whose answers take a second, so that the requeue lands in a model call.
kill "$llm_pid"
wait "$llm_pid" 2>/dev/null
mv llm.log par-arr.log
start_llm "$top/examples/demo/script.jsonl" --latency 1
trap cleanup EXIT
XDG_CACHE_HOME=$scratch/cache-requeue TRITON_CACHE_DIR=$scratch/cache-requeue/triton
"$slurm" runs -R 1 -i 2 --cpu -o "$scratch/rq" "$task" 2> rq.err
check_same "a one-element array is submitted" 0 $?
array=$(awk '$1 == "runs" { print $2 }' rq/jobs)
merge=$(awk '$1 == "merge" { print $2 }' rq/jobs)
n=0
until grep -q 'the run failed' llm.log 2>/dev/null || [ $n -ge 1500 ]; do
	sleep 0.2
	n=$((n + 1))
done
check_same "the element is running when the reflection is asked" RUNNING "$(job_state "${array}_0")"
# A second instance on the folder waits for the lock, and gives up.
SLURM_ARRAY_TASK_ID=0 "$slurm" element --lock-wait 1 -i 2 --cpu -o "$scratch/rq" "$task" 2> second.err
check_same "a second instance on the running element's folder fails" 3 $?
check_match "and says why" 'run-0 is still in use \(pid [0-9]+\) after 1 s; not started' "$(cat second.err)"
scontrol requeue "${array}_0"
check_same "scontrol requeue takes it" 0 $?
# Slurm holds a requeued job back for a while; it may start at once here.
n=0
while [ "$(job_state "${array}_0")" != RUNNING ] && [ $n -lt 300 ]; do
	scontrol update JobId="${array}_0" StartTime=now > /dev/null 2>&1
	sleep 0.2
	n=$((n + 1))
done
until_job_ends "$merge" 300
check_match "the merge ran after the requeued element" 'merged runs 0 complete' "$(cat rq/merge.log 2>&1)"
check_same "the element started twice, the second time as a restart" "2 2" \
	"$(grep -c 'geak-slurm: run 0, job' rq/run-0.log) $(grep -o 'start [0-9]*' rq/run-0.log | tail -n 1 | cut -d' ' -f2)"
check_match "the first instance was stopped by the requeue" 'stopped by signal 15' "$(cat rq/run-0.log)"
for f in iter-0 evaluated-0 iter-1 evaluated-1; do
	check_same "$f.jsonl as in an uninterrupted run" "$(same arr/run-0/$f.jsonl | sed 's/"run":0/"run":R/')" \
		"$(same rq/run-0/$f.jsonl | sed 's/"run":0/"run":R/')"
done
check_same "no request made twice" 0 \
	"$(jq -c --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .body' llm.log |
		sort | uniq -d | wc -l | tr -d ' ')"
check_same "as many requests as one uninterrupted run" \
	"$(jq -r --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .n' par-arr.log |
		awk 'END { print NR / 6 }')" \
	"$(jq -r --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .n' llm.log | wc -l | tr -d ' ')"
check_same "no temporary file or journal left" '' "$(ls rq/run-0 | grep '\.tmp\|\.journal' || true)"

# Evaluation in shards: 4 records and a blank line on 2 srun tasks.
{
	cat arr/run-0/iter-0.jsonl
	echo 'not a record'
	echo
	cat arr/run-0/iter-1.jsonl
	jq -c '.code = .task.reference | .id = "reference"' "$task"
} > four.jsonl
# The plain run in a job step too: the sandbox's layers are those of the
# place it runs in.
XDG_CACHE_HOME=$scratch/cache-plain TRITON_CACHE_DIR=$scratch/cache-plain/triton
srun -n 1 geak-eval --cpu four.jsonl > plain.jsonl 2> plain.err
check_same "plain geak-eval (srun -n 1): some records fail" 1 $?
echo "# the sandbox in a job step: $(jq -c 'select(.eval.sandbox) | .eval.sandbox' plain.jsonl | head -n 1)"
XDG_CACHE_HOME=$scratch/cache-shards TRITON_CACHE_DIR=$scratch/cache-shards/triton
"$slurm" eval -W -j 2 --cpu -o "$scratch/sharded.jsonl" four.jsonl 2> shards.err
check_same "the sharded evaluation: exit 1 too" 1 $?
check_same "each of the 2 tasks evaluated its slice" "2" \
	"$(grep -c 'geak-slurm: shard [01] of 2, job' sharded.jsonl.shards/job.log)"
# Which sandbox layers a job got is the host's doing at that moment (a
# layer that fails is dropped: geak-eval(1), Sandbox), not the slicing's.
same_eval() {
	same "$1" | jq -cS 'if .eval then del(.eval.sandbox) |
		.eval.notes |= map(select(test("^no_(pidns|landlock|private_root)$") | not)) else . end'
}
same_eval plain.jsonl > plain.same
same_eval sharded.jsonl > sharded.same
if cmp -s plain.same sharded.same; then
	ok "the same records, in the same order, as one geak-eval"
else
	not_ok "the same records, in the same order, as one geak-eval"
	diff plain.same sharded.same | cut -c1-400 | sed 's/^/# /' | head -n 20
fi
jobs_before=$(squeue -h -o %i | wc -l)
"$slurm" eval -j 2 --cpu -o "$scratch/sharded.jsonl" four.jsonl 2> again.err
check_same "an output that exists is not made again" "0 $jobs_before" "$? $(squeue -h -o %i | wc -l)"

# The join refuses shards that do not add up, and names a missing one.
mkdir short.jsonl.shards
head -n 2 sharded.jsonl > short.jsonl.shards/shard-0.jsonl
sed -n 3p sharded.jsonl > short.jsonl.shards/shard-1.jsonl
"$slurm" join -j 2 -o "$scratch/short.jsonl" four.jsonl 2> short.err
check_same "3 records for 4: exit 3, nothing written" "3 no" "$? $(test -e short.jsonl && echo yes || echo no)"
check_match "and says so" 'do not add up: 3 records for 4 lines of input' "$(cat short.err)"
rm short.jsonl.shards/shard-1.jsonl
"$slurm" join -j 2 -o "$scratch/short.jsonl" four.jsonl 2> short.err
check_match "a shard missing is named" 'shards 1 of 2 were not evaluated' "$(cat short.err)"
done_testing
