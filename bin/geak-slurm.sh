#!/bin/sh
# geak-slurm (installed under that name): the agent loop and geak-eval on
# a Slurm cluster.  See geak-slurm(1).
#
#   geak-slurm runs [OPTIONS] TASKS.jsonl [-- SBATCH-OPTION...]
#	one job array of RUNS independent, resumable loops (element r writes
#	DIR/run-r), and a merge job (--dependency=afterany) that runs
#	geak-select over every run that got anywhere
#   geak-slurm eval [OPTIONS] RECORDS.jsonl [-- SBATCH-OPTION...]
#	one job of N srun tasks, each geak-eval --shard k/N of the file,
#	then their outputs put back together in input order
#
# The jobs run this script again: `element`, `merge`, `shard` and `join`
# are the parts that run inside them.
set -u
prog=geak-slurm
here=$(cd "$(dirname "$0")" && pwd)
self=$here/$(basename "$0")
PATH=$here:$here/../bin:$PATH
export PATH

die() {
	echo "$prog: $*" >&2
	exit 3
}
usage_fail() {
	echo "$prog: $*" >&2
	echo "usage: $prog runs|eval [OPTIONS] FILE [-- SBATCH-OPTION...]; $prog --help" >&2
	exit 2
}

usage() {
	cat <<USAGE
usage: $prog runs [-i ITERS] [-n SAMPLES] [-R RUNS] [-j JOBS] [-k LIST] [-o DIR]
                  [-g [TYPE:]N | --cpu] [--model NAME] [--provider NAME]
                  [--base-url URL] [--max-cost USD] [--max-tokens-total N] [--force]
                  [--lock-wait S] [-W] [--dry-run] TASKS.jsonl [-- SBATCH-OPTION...]
       $prog eval [-j TASKS] [-o FILE] [-g [TYPE:]N | --cpu] [--lock-wait S] [-W]
                  [--dry-run] RECORDS.jsonl [-- SBATCH-OPTION...]
  runs: RUNS independent loops as one job array, then one job merging them
  -i, --iters N      iterations per run (default 3)
  -n, --samples N    first candidates per task (geak-gen -n; default 1)
  -R, --runs N       independent runs, array elements 0..N-1 (default 4)
  -j, --jobs N       runs at a time (the array's %N; default: all)
  -k, --pass-at LIST pass@k values of the merge (default 1,...,RUNS)
  -o, --out DIR      output folder (runs: default out; run r in DIR/run-r)
      --model NAME   the model (geak-gen --model); \$GEAK_MODEL
      --provider NAME  openai, anthropic or azure; \$GEAK_PROVIDER
      --base-url URL the provider's endpoint; \$GEAK_BASE_URL
      --max-cost USD stop asking the model once all the runs have spent USD
                     (DIR/ledger.json, shared; refused for an unpriced model)
      --max-tokens-total N  ... or N tokens
      --force        resume in DIR even though its runs had other settings
  eval: one job of TASKS srun tasks, each evaluating a slice of the file
  -j, --jobs N       srun tasks (default 2; --tasks N says the same)
  -o, --out FILE     the evaluated records (default evaluated.jsonl)
  both:
  -g, --gpus [TYPE:]N  GPUs per array element or srun task (default 1; 0: none)
      --cpu          evaluate on the CPU (geak-eval --cpu), no GPU asked for
      --lock-wait S  seconds a requeued job waits for the instance before it
                     to let go of its folder (default 300)
  -W, --wait         wait for the last job to end; exit with its status
      --dry-run      print the sbatch commands and scripts, submit nothing
  -h, --help         this help
Options after -- go to every sbatch call (partition, account, time, ...).
Environment (passed to the jobs by sbatch): GEAK_MODEL, GEAK_PROVIDER,
GEAK_BASE_URL, the provider's key, GEAK_PYTHON, GEAK_LLM_FLAGS and the
other stages' GEAK_*_FLAGS; GEAK_LOOP (the loop to run).  The task file
is checked, and DIR/manifest.json against these settings, before anything
is submitted.  Exit: 0 done or submitted, 2 bad usage or no usable task,
3 failed, 4 no model can be used, 5 DIR holds runs with other settings.
USAGE
	exit 0
}

# q WORD: WORD quoted for sh.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# abspath PATH: PATH from the root, the file need not exist.
abspath() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s/%s\n' "$(pwd)" "$1" ;;
	esac
}

# A path sbatch is given in a #SBATCH line or --output: no blank, no
# pattern character, which sbatch would read its own way.
sbatch_path() {
	case $1 in
	*[[:space:]%\\]*) usage_fail "$1: a path with blanks, % or \\ cannot be given to sbatch" ;;
	esac
}

# --gpus [TYPE:]N, as sbatch's --gres=gpu:... and --gpus-per-task take it.
gpu_count() {
	case $2 in
	*:*) t=${2%:*} n=${2##*:} ;;
	*) t= n=$2 ;;
	esac
	case $t in *[!A-Za-z0-9_.-]*) usage_fail "$1: want [TYPE:]N, not '$2'" ;; esac
	case $n in ''|*[!0-9]*) usage_fail "$1: want [TYPE:]N, not '$2'" ;; esac
}
need_file() {
	[ -n "${file:-}" ] || usage_fail "no file named"
}
whole() {
	case $2 in ''|*[!0-9]*) usage_fail "$1: want a whole number, not '$2'" ;; esac
}
dollars() {
	case $2 in ''|*[!0-9.]*) usage_fail "$1: want a number of US dollars, not '$2'" ;; esac
}
# word OPTION VALUE: a value that goes into a job's script as one word.
word() {
	case $2 in *[[:space:]\'\"\\\$\`]*) usage_fail "$1: a value with blanks or quotes cannot be passed on: '$2'" ;; esac
}
above0() {
	whole "$1" "$2"
	[ "$2" -gt 0 ] || usage_fail "$1: want a whole number above 0, not '$2'"
}

# The loop: geak-loop where installed, else the tree's bin/geak-loop.sh;
# GEAK_LOOP names another.
find_loop() {
	if [ -n "${GEAK_LOOP:-}" ]; then
		loop=$GEAK_LOOP
	elif [ -x "$here/geak-loop" ]; then
		loop=$here/geak-loop
	elif [ -x "$here/geak-loop.sh" ]; then
		loop=$here/geak-loop.sh
	else
		die "no geak-loop next to $self (set GEAK_LOOP)"
	fi
}

# ---- options of the commands a user types ----
iters=3 runs=4 passk= out= tasks_n= gpus=1 cpu= lock_wait=300 wait= dry=
run_index= samples= model= provider= base_url= max_cost= max_tokens= force=
parse() {
	while [ $# -gt 0 ]; do
		case $1 in
		--*=*) a=${1%%=*} v=${1#*=}; shift; set -- "$a" "$v" "$@"; continue ;;
		-h|--help) usage ;;
		-i|--iters) [ $# -ge 2 ] || usage_fail "$1 needs a value"; above0 "$1" "$2"; iters=$2; shift 2 ;;
		-R|--runs) [ $# -ge 2 ] || usage_fail "$1 needs a value"; above0 "$1" "$2"; runs=$2; shift 2 ;;
		-k|--pass-at) [ $# -ge 2 ] || usage_fail "$1 needs a value"; passk=$2; shift 2 ;;
		-o|--out) [ $# -ge 2 ] || usage_fail "$1 needs a value"; out=$2; shift 2 ;;
		-j|--jobs|--tasks) [ $# -ge 2 ] || usage_fail "$1 needs a value"; above0 "$1" "$2"; tasks_n=$2; shift 2 ;;
		-n|--samples) [ $# -ge 2 ] || usage_fail "$1 needs a value"; above0 "$1" "$2"; samples=$2; shift 2 ;;
		--model) [ $# -ge 2 ] || usage_fail "$1 needs a value"; model=$2; shift 2 ;;
		--provider) [ $# -ge 2 ] || usage_fail "$1 needs a value"; provider=$2; shift 2 ;;
		--base-url) [ $# -ge 2 ] || usage_fail "$1 needs a value"; base_url=$2; shift 2 ;;
		--max-cost) [ $# -ge 2 ] || usage_fail "$1 needs a value"; dollars "$1" "$2"; max_cost=$2; shift 2 ;;
		--max-tokens-total) [ $# -ge 2 ] || usage_fail "$1 needs a value"; whole "$1" "$2"; max_tokens=$2; shift 2 ;;
		--force) force=1; shift ;;
		-g|--gpus) [ $# -ge 2 ] || usage_fail "$1 needs a value"; gpu_count "$1" "$2"; gpus=$2; shift 2 ;;
		--cpu) cpu=1; shift ;;
		--lock-wait) [ $# -ge 2 ] || usage_fail "$1 needs a value"; whole "$1" "$2"; lock_wait=$2; shift 2 ;;
		--run) [ $# -ge 2 ] || usage_fail "$1 needs a value"; whole "$1" "$2"; run_index=$2; shift 2 ;;
		-W|--wait) wait=1; shift ;;
		--dry-run) dry=1; shift ;;
		--) shift; break ;;
		-?*) usage_fail "unknown option $1" ;;
		*) [ -z "${file:-}" ] || usage_fail "one file, not '$file' and '$1'"; file=$1; shift ;;
		esac
	done
	sbatch_args=
	for a in "$@"; do
		sbatch_args="$sbatch_args $(q "$a")"
	done
	case $passk in *[!0-9,]*) usage_fail "-k: want a list of whole numbers, not '$passk'" ;; esac
	[ -n "$cpu" ] && gpus=0
	case $gpus in *:0|0) gpus= ;; esac
	for v in "--model:$model" "--provider:$provider" "--base-url:$base_url"; do
		word "${v%%:*}" "${v#*:}"
	done
}

# The flags an element gives its loop, from the options of runs.
loop_flags() {
	printf '%s' "${samples:+ -n $samples}${model:+ --model $model}${provider:+ --provider $provider}${base_url:+ --base-url $base_url}${max_cost:+ --max-cost $max_cost}${max_tokens:+ --max-tokens-total $max_tokens}${force:+ --force}"
}

# submit WHAT SCRIPT EXTRA...: sbatch SCRIPT, written from stdin, with
# EXTRA and the user's options; the job's id in job_id.  With --dry-run,
# the command and the script on stdout instead.
submit() {
	what=$1 script=$2
	shift 2
	if [ -n "$dry" ]; then
		printf '# %s job: sbatch --parsable' "$what"
		for a in "$@"; do printf ' %s' "$(q "$a")"; done
		printf '%s %s\n' "$sbatch_args" "$(q "$script")"
		cat
		echo
		job_id=$(echo "$what" | tr a-z A-Z)_JOB_ID
		return 0
	fi
	cat > "$script" || die "cannot write $script"
	# shellcheck disable=SC2086  # the user's options, each quoted
	eval "sbatch --parsable \"\$@\" $sbatch_args \"\$script\"" > "$script.id" 2> "$script.err"
	s=$?
	sed "s/^/$prog: sbatch: /" "$script.err" >&2
	rm -f "$script.err"
	job_id=$(head -n 1 "$script.id" | cut -d';' -f1)
	rm -f "$script.id"
	[ "$s" -eq 0 ] && return 0
	# Under --wait, sbatch's status is the job's.
	[ -n "$wait" ] && [ -n "$job_id" ] && return "$s"
	die "sbatch of the $what job failed (exit $s)"
}

runs_cmd() {
	parse "$@"
	need_file
	# Nothing is made or submitted before the task file holds a task.
	geak-iter.sh tasks "$file" || { echo "$prog: nothing was submitted" >&2; exit 2; }
	command -v sbatch >/dev/null 2>&1 || [ -n "$dry" ] || die "sbatch is not on PATH (Slurm's client)"
	: "${out:=out}"
	[ -n "$passk" ] || passk=$(seq -s, 1 "$runs")
	find_loop
	outd=$(abspath "$out") tasksf=$(abspath "$file")
	sbatch_path "$outd"
	[ -n "$dry" ] || mkdir -p "$outd" || die "cannot make $outd"
	# The runs' settings against the folder's, and a model that can be
	# used, before anything is submitted; a model found on a server of
	# the user's is named to every element.
	if [ -z "$dry" ]; then
		pin=$(GEAK_LLM_FLAGS="${GEAK_LLM_FLAGS:-}${provider:+ --provider $provider}${model:+ --model $model}${base_url:+ --base-url $base_url}${max_cost:+ --max-cost $max_cost}" \
			geak-iter.sh settings ${force:+--force} "$outd" "$tasksf" "iterations=$iters" \
			"samples=${samples:-1}" "runs=$runs" "device=${cpu:+cpu}${gpus:+gpus per run $gpus}")
		s=$?
		[ "$s" -eq 0 ] || { echo "$prog: nothing was submitted" >&2; exit "$s"; }
		case $pin in --model\ *) model=${pin#--model }; word --model "$model" ;; esac
	fi
	flags="-i $iters -k $passk --lock-wait $lock_wait${cpu:+ --cpu}$(loop_flags)"
	gres=
	[ -n "$gpus" ] && gres="
#SBATCH --gres=gpu:$gpus"
	submit runs "$outd/runs.sbatch" <<EOF
#!/bin/sh
#SBATCH --job-name=geak-runs
#SBATCH --array=0-$((runs - 1))${tasks_n:+%$tasks_n}
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=$outd/run-%a.log$gres
# Element r is run r of the loop in $outd/run-r, resumed where it stopped.
exec $(q "$self") element $flags -o $(q "$outd") $(q "$tasksf")
EOF
	array=$job_id
	set -- --dependency="afterany:$array"
	[ -n "$wait" ] && set -- "$@" --wait
	[ -n "$wait" ] && [ -z "$dry" ] &&
		echo "$prog: $runs runs submitted as job $array (logs $outd/run-*.log); waiting for them and their merge" >&2
	submit merge "$outd/merge.sbatch" "$@" <<EOF
#!/bin/sh
#SBATCH --job-name=geak-merge
#SBATCH --open-mode=append
#SBATCH --output=$outd/merge.log
# After every element has ended, however it ended: pass@k and the report
# over the runs that have results.
exec $(q "$self") merge -R $runs -i $iters -k $passk -o $(q "$outd")
EOF
	s=$?
	merge=$job_id
	[ -n "$dry" ] && exit 0
	printf 'runs %s\nmerge %s\n' "$array" "$merge" > "$outd/jobs"
	if [ "$s" -ne 0 ]; then
		echo "$prog: the merge (job $merge) exited $s; see $outd/merge.log" >&2
		exit "$s"
	fi
	if [ -n "$wait" ]; then
		echo "$prog: $runs runs (job $array) merged (job $merge); best kernels in $outd/best.jsonl, report in $outd/report.html" >&2
	else
		echo "$prog: $runs runs submitted as job $array, their merge as job $merge; results in $outd" >&2
	fi
	exit 0
}

eval_cmd() {
	parse "$@"
	need_file
	command -v sbatch >/dev/null 2>&1 || [ -n "$dry" ] || die "sbatch is not on PATH (Slurm's client)"
	[ -r "$file" ] || die "$file: cannot read"
	: "${out:=evaluated.jsonl}"
	: "${tasks_n:=2}"
	# The file as named, from the folder it was named in, so that errors
	# name it as a plain geak-eval would.
	outf=$(abspath "$out") inf=$file here_dir=$(pwd)
	work=$outf.shards
	sbatch_path "$outf"
	if [ -f "$outf" ] && [ -z "$dry" ]; then
		echo "$prog: $outf exists: nothing to do (remove it to evaluate again)" >&2
		exit 0
	fi
	[ -n "$dry" ] || mkdir -p "$work" || die "cannot make $work"
	flags="-j $tasks_n --lock-wait $lock_wait${cpu:+ --cpu}"
	gres=
	[ -n "$gpus" ] && gres="
#SBATCH --gpus-per-task=$gpus"
	set --
	[ -n "$wait" ] && set -- --wait
	[ -n "$wait" ] && [ -z "$dry" ] &&
		echo "$prog: submitting $file in $tasks_n tasks and waiting for them (log $work/job.log)" >&2
	submit eval "$work/eval.sbatch" "$@" <<EOF
#!/bin/sh
#SBATCH --job-name=geak-eval
#SBATCH --ntasks=$tasks_n
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=$work/job.log$gres
cd $(q "$here_dir") || exit 3
# Task k evaluates the records numbered k modulo $tasks_n (geak-eval
# --shard); a shard already written is not evaluated again.
srun --kill-on-bad-exit=0 --label $(q "$self") shard $flags -o $(q "$outf") $(q "$inf")
# Every shard's records, in input order, or the ones missing named.
exec $(q "$self") join $flags -o $(q "$outf") $(q "$inf")
EOF
	s=$?
	job=$job_id
	[ -n "$dry" ] && exit 0
	printf 'eval %s\n' "$job" > "$work/jobs"
	if [ "$s" -gt 1 ]; then
		echo "$prog: the evaluation (job $job) exited $s; see $work/job.log" >&2
		exit "$s"
	fi
	if [ -n "$wait" ]; then
		echo "$prog: $file evaluated in $tasks_n tasks (job $job) into $outf" >&2
	else
		echo "$prog: $file submitted as job $job, $tasks_n tasks; output $outf, log $work/job.log" >&2
	fi
	exit "$s"
}

# ---- the parts that run inside the jobs ----

# wait_lock FILE: until no process holds FILE's lock (a requeued job's
# earlier instance may still be ending), at most --lock-wait seconds.
wait_lock() {
	command -v flock >/dev/null 2>&1 || die "flock(1) is needed (util-linux)"
	: >> "$1" || die "cannot make $1"
	flock -w "$lock_wait" "$1" true && return 0
	die "$(dirname "$1") is still in use (pid $(head -n 1 "$1" 2>/dev/null)) after $lock_wait s; not started"
}

# An array element: run r of the loop, resumed where it stopped.
element_cmd() {
	parse "$@"
	need_file
	[ -n "$out" ] || usage_fail "element: -o DIR is needed"
	r=${run_index:-${SLURM_ARRAY_TASK_ID:-}}
	[ -n "$r" ] || usage_fail "element: no --run and no SLURM_ARRAY_TASK_ID"
	find_loop
	dir=$out/run-$r
	mkdir -p "$dir" || die "cannot make $dir"
	echo "$prog: run $r, job ${SLURM_JOB_ID:-none}, on $(hostname), start $((${SLURM_RESTART_COUNT:-0} + 1))" >&2
	wait_lock "$dir/.geak.lock"
	if [ -n "$cpu" ]; then
		GEAK_EVAL_FLAGS="--cpu ${GEAK_EVAL_FLAGS:-}"
	else
		# The knowledge pack of the GPU this element got, wherever it
		# landed; the user's own --knowledge, later, still wins.
		GEAK_GEN_FLAGS="--knowledge auto ${GEAK_GEN_FLAGS:-}"
	fi
	GEAK_VERBOSE=1
	# One ledger for the runs, so that a budget holds for all of them.
	GEAK_RUN_LEDGER=$(cd "$out" && pwd)/ledger.json
	export GEAK_EVAL_FLAGS GEAK_GEN_FLAGS GEAK_VERBOSE GEAK_RUN_LEDGER
	# shellcheck disable=SC2046  # the loop's flags, each one word
	exec "$loop" -v -i "$iters" --run "$r" -k "${passk:-1}" $(loop_flags) -o "$dir" "$file"
}

# The merge: geak-select over every run's evaluated files, whatever
# state the runs ended in.  Exit 0 every run complete, 1 some were not
# (merged all the same), 3 nothing to merge.
merge_cmd() {
	parse "$@"
	[ -n "$out" ] || usage_fail "merge: -o DIR is needed"
	[ -d "$out" ] || die "$out: no such folder"
	[ -n "$passk" ] || passk=$(seq -s, 1 "$runs")
	complete= partial= missing=
	r=0
	while [ "$r" -lt "$runs" ]; do
		if [ -f "$out/run-$r/evaluated-$((iters - 1)).jsonl" ]; then
			complete="$complete $r"
		elif ls "$out/run-$r"/evaluated-*.jsonl >/dev/null 2>&1; then
			partial="$partial $r"
		else
			missing="$missing $r"
		fi
		r=$((r + 1))
	done
	set -- "$out"/run-*/evaluated-*.jsonl
	[ -f "$1" ] || die "no run has an evaluated iteration yet (see $out/run-*.log); nothing merged"
	geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" --kernels "$out/kernels" "$@" > "$out/best.jsonl.tmp"
	s=$?
	if [ "$s" -gt 1 ]; then
		rm -f "$out/best.jsonl.tmp"
		die "geak-select failed (exit $s)"
	fi
	mv -f "$out/best.jsonl.tmp" "$out/best.jsonl" || die "cannot rename $out/best.jsonl.tmp"
	echo "$prog: merged runs${complete:- none} complete${partial:+, runs$partial in part}${missing:+, runs$missing without results}; best kernels in $out/best.jsonl, report in $out/report.html" >&2
	[ -z "$partial$missing" ] || exit 1
	exit 0
}

# One srun task: shard k (SLURM_PROCID) of N, into OUT.shards/shard-k.jsonl.
shard_cmd() {
	parse "$@"
	need_file
	[ -n "$out" ] || usage_fail "shard: -o FILE is needed"
	k=${SLURM_PROCID:-}
	[ -n "$k" ] || usage_fail "shard: no SLURM_PROCID (run it under srun)"
	work=$out.shards
	f=$work/shard-$k.jsonl
	wait_lock "$work/shard-$k.lock"
	exec 9>> "$work/shard-$k.lock" && flock -n 9 || die "$work/shard-$k.lock: taken meanwhile"
	: > "$work/shard-$k.lock"
	echo $$ >&9
	if [ -f "$f" ]; then
		echo "$prog: shard $k of $tasks_n was evaluated before" >&2
		exit 0
	fi
	echo "$prog: shard $k of $tasks_n, job ${SLURM_JOB_ID:-none}, on $(hostname)" >&2
	# shellcheck disable=SC2086  # the flags are a word list
	geak-eval ${cpu:+--cpu} ${GEAK_EVAL_FLAGS:-} --shard "$k/$tasks_n" "$file" > "$f.tmp"
	s=$?
	if [ "$s" -gt 1 ]; then
		rm -f "$f.tmp"
		die "shard $k: geak-eval exited $s"
	fi
	echo "$s" > "$f.status" && mv -f "$f.tmp" "$f" || die "cannot write $f"
	exit 0
}

# After the tasks: the shards put back in input order, checked to hold
# one record for each line of the input that is not blank.
join_cmd() {
	parse "$@"
	need_file
	[ -n "$out" ] || usage_fail "join: -o FILE is needed"
	work=$out.shards
	k=0 missing= worst=0
	while [ "$k" -lt "$tasks_n" ]; do
		if [ -f "$work/shard-$k.jsonl" ]; then
			s=$(cat "$work/shard-$k.status" 2>/dev/null) || s=1
			[ "$s" -gt "$worst" ] && worst=$s
		else
			missing="$missing $k"
		fi
		k=$((k + 1))
	done
	[ -z "$missing" ] || die "shards$missing of $tasks_n were not evaluated (see $work/job.log); submit the same command again to evaluate them"
	want=$(awk '/[^ \t\r]/ { n++ } END { print n + 0 }' "$file")
	k=0
	set --
	while [ "$k" -lt "$tasks_n" ]; do
		set -- "$@" "$work/shard-$k.jsonl"
		k=$((k + 1))
	done
	# Line i of the output is line floor(i/N) of shard i mod N; shard k
	# holds the records numbered k, k+N, ..., so shards run out in order.
	awk -v n="$tasks_n" -v want="$want" '
	BEGIN {
		for (i = 1; i < ARGC; i++) f[i - 1] = ARGV[i]
		ARGC = 1
		for (got = 0; ; got++) {
			k = got % n
			if ((getline line < f[k]) <= 0) break
			print line
		}
		for (j = 0; j < n; j++)
			if ((getline line < f[j]) > 0) {
				printf "records left over in %s\n", f[j] > "/dev/stderr"
				exit 3
			}
		if (got != want) {
			printf "%d records for %d lines of input\n", got, want > "/dev/stderr"
			exit 3
		}
	}' "$@" > "$out.tmp" 2> "$work/join.err"
	s=$?
	if [ "$s" -ne 0 ]; then
		rm -f "$out.tmp"
		die "the shards do not add up: $(cat "$work/join.err"); nothing written"
	fi
	mv -f "$out.tmp" "$out" || die "cannot rename $out.tmp"
	rm -f "$work/join.err" "$work"/shard-*.jsonl "$work"/shard-*.status
	echo "$prog: $want records from $tasks_n shards in $out" >&2
	exit "$worst"
}

[ $# -ge 1 ] || usage_fail "no command"
cmd=$1
shift
case $cmd in
runs) runs_cmd "$@" ;;
eval) eval_cmd "$@" ;;
element) element_cmd "$@" ;;
merge) merge_cmd "$@" ;;
shard) shard_cmd "$@" ;;
join) join_cmd "$@" ;;
-h|--help) usage ;;
*) usage_fail "unknown command '$cmd'" ;;
esac
