#!/bin/sh
# geak-loop (installed under that name): the sequential agent loop on a task
# file, resumable.  See geak-loop(1).
#
#   iteration 0:  tasks -> geak-retrieve | geak-gen            -> iter-0.jsonl
#   iteration i:  iter-i.jsonl -> geak-eval                     -> evaluated-i.jsonl
#                 evaluated-i.jsonl -> geak-reflect | geak-opt | geak-retrieve
#                 | geak-gen                                     -> iter-(i+1).jsonl
#   at the end:   geak-select over every evaluated-i.jsonl -> best.jsonl,
#                 summary.json, report.html
#
# Each file is written under a temporary name and renamed when its step is
# complete; a file that exists is never made again.  Stop the loop at any
# point (kill PID, or ^C) and run the same command: it carries on from
# the last complete step, and a step that was stopped asks the model only
# what it has no answer to yet.  The output folder is locked while the
# loop runs: a second loop on it fails at once.  Before the first step
# that asks the model, the provider and the harness are checked
# (geak-gen --check, geak-eval --check); a step whose requests failed for
# reasons that are not the records' (a refused key, the network, the
# budget) is not kept, and the loop stops.  Every answer's cost goes
# into DIR/ledger.json, which --max-cost and --max-tokens-total count for
# the whole run, resumed runs included.
#
# On a terminal one line at its foot shows the step and the stages'
# progress (each stage writes its line into DIR/.status, GEAK_STATUS_DIR);
# at the end one line sums the run up.
#
# Before anything is locked or asked, the task file is read as the first
# step will read it (geak-iter.sh tasks): missing, unreadable, or without
# one usable record, the loop stops there.  The folder keeps the run's
# settings in DIR/manifest.json (geak-iter.sh settings): a run there
# with other settings is not resumed unless --force says so.
#
# Each step runs in a process group of its own (setsid(1)), watched by a
# small process (geak-iter.sh watch) that stops the group if this shell
# dies without doing so (kill -9): nothing of the run outlives it for
# more than a few seconds.  The lock names this shell's pid, and the
# step's group while one runs; a run that finds the lock's holder dead
# stops what is left of it and takes the folder over.
#
# Exit status: 0 done; 2 bad usage, or a task file with no usable
# record; 3 a step failed; 4 the model could not be used, or the budget
# is spent (see the message); 5 the folder holds a run with other
# settings; 128+N stopped by signal N.  Tool flags: GEAK_LLM_FLAGS,
# GEAK_GEN_FLAGS, GEAK_EVAL_FLAGS, ... as described in geak-iter.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here:$PATH
export PATH
prog=$(basename "$0" .sh)

iters=3 samples= out=out run= gpus= passk=1 verbose= max_cost= max_tokens=
model= provider= base_url= cpu= jobs= force=
usage() {
	[ "$1" -eq 0 ] && fd=1 || fd=2
	cat >&$fd <<USAGE
usage: $prog [-v] [-i ITERS] [-n SAMPLES] [-o DIR] [-g GPUS | --cpu] [-j N] [-k LIST]
       [--model NAME] [--provider NAME] [--base-url URL] [--max-cost USD]
       [--max-tokens-total N] [--run N] [--force] TASKS.jsonl
  -i, --iters N          iterations (default 3)
  -n, --samples N        first candidates per task, each a lineage of its own
                         (geak-gen -n; default 1)
  -o, --out DIR          output folder (default out)
  -g, --gpus LIST        the GPUs the evaluator may use (geak-eval --gpus)
      --cpu              evaluate on the CPU (geak-eval --cpu)
  -j, --jobs N           at once: candidates evaluated (geak-eval -j) and
                         requests in flight (geak-gen -j ...)
  -k, --pass-at LIST     pass@k values for the summary (default 1)
      --model NAME       the model (geak-gen --model); \$GEAK_MODEL
      --provider NAME    openai, anthropic or azure; \$GEAK_PROVIDER
      --base-url URL     the provider's endpoint; \$GEAK_BASE_URL (a server of
                         your own: with no model named, its only model)
      --max-cost USD     stop asking the model once the run has spent USD
                         (refused for a model without a price: see
                         share/prices.tsv, or use --max-tokens-total)
      --max-tokens-total N  ... or N tokens (the run: every step, resumed too)
      --run N            the run's index in its records (parallel scaling)
      --force            resume in DIR even though its run had other settings
                         (DIR/manifest.json)
  -v, --verbose          the stages' checks and each iteration's numbers on
                         stderr, also when it is not a terminal
  -h, --help             this help
Environment: GEAK_MODEL, GEAK_PROVIDER, GEAK_BASE_URL; the key from
GEAK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY, AZURE_OPENAI_API_KEY or
LLM_API_KEY; GEAK_PYTHON (the harness's Python); GEAK_LLM_FLAGS,
GEAK_GEN_FLAGS, GEAK_RETRIEVE_FLAGS, GEAK_REFLECT_FLAGS, GEAK_OPT_FLAGS,
GEAK_EVAL_FLAGS (more flags for the stages); GEAK_VERBOSE (as -v); TMPDIR.
Exit: 0 done, 2 bad usage or no usable task, 3 a step failed, 4 the model
could not be used or the budget is spent, 5 DIR holds a run with other
settings, 128+N stopped by signal N.  See geak-loop(1).
USAGE
	exit "$1"
}
need() { [ "$2" -ge 2 ] || { echo "$prog: $1 needs a value" >&2; usage 2; }; }
whole() {
	case $2 in ''|*[!0-9]*) echo "$prog: $1: want a whole number, not '$2'" >&2; exit 2 ;; esac
}
while [ $# -gt 0 ]; do
	case $1 in
	--*=*) a=${1%%=*} v=${1#*=}; shift; set -- "$a" "$v" "$@"; continue ;;
	-h|--help) usage 0 ;;
	-v|--verbose) verbose=1; shift ;;
	-i|--iters) need "$1" $#; iters=$2; shift 2 ;;
	-n|--samples) need "$1" $#; whole "$1" "$2"; samples=$2; shift 2 ;;
	-o|--out) need "$1" $#; out=$2; shift 2 ;;
	-g|--gpus) need "$1" $#; gpus=$2; shift 2 ;;
	--cpu) cpu=1; shift ;;
	-j|--jobs) need "$1" $#; whole "$1" "$2"; jobs=$2; shift 2 ;;
	--model) need "$1" $#; model=$2; shift 2 ;;
	--provider) need "$1" $#; provider=$2; shift 2 ;;
	--base-url) need "$1" $#; base_url=$2; shift 2 ;;
	--force) force=1; shift ;;
	-k|--pass-at) need "$1" $#; passk=$2; shift 2 ;;
	--run) need "$1" $#; whole "$1" "$2"; run=$2; shift 2 ;;
	--max-cost) need "$1" $#; max_cost=$2; shift 2 ;;
	--max-tokens-total) need "$1" $#; whole "$1" "$2"; max_tokens=$2; shift 2 ;;
	--) shift; break ;;
	-?*) echo "$prog: unknown option $1" >&2; usage 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { [ $# -eq 0 ] && echo "$prog: no task file named" >&2 ||
	echo "$prog: one task file, not $#" >&2; usage 2; }
tasks=$1
case $iters in ''|*[!0-9]*|0) echo "$prog: -i: want a whole number above 0" >&2; exit 2 ;; esac
case $max_cost in *[!0-9.]*) echo "$prog: --max-cost: want a number of US dollars" >&2; exit 2 ;; esac
case $jobs in 0) echo "$prog: -j: want a whole number above 0" >&2; exit 2 ;; esac
[ -n "$gpus" ] && [ -n "$cpu" ] && { echo "$prog: -g and --cpu: one or the other" >&2; exit 2; }
# Nothing is locked, made or asked before the task file is known to hold
# a task.
geak-iter.sh tasks "$tasks" || { echo "$prog: nothing was run" >&2; exit 2; }
[ -n "${GEAK_VERBOSE:-}" ] && verbose=1
# On a terminal: each iteration's numbers and the checks' verdicts; with
# -v also what the checks found.
brief=
[ -t 2 ] && [ -z "$verbose" ] && brief=1
mkdir -p "$out" || { echo "$prog: cannot make $out; nothing was run" >&2; exit 3; }
started=$(date +%s)

# One run per folder: the lock lives as long as this shell and every
# process it starts (they inherit it), and names the pid that holds it;
# one left by a run that died is taken over (geak-iter.sh unlock).
command -v flock >/dev/null 2>&1 || { echo "$prog: flock(1) is needed (util-linux)" >&2; exit 3; }
command -v setsid >/dev/null 2>&1 || { echo "$prog: setsid(1) is needed (util-linux)" >&2; exit 3; }
exec 9>>"$out/.geak.lock" || { echo "$prog: cannot make $out/.geak.lock; nothing was run" >&2; exit 3; }
if ! flock -n 9 && ! { geak-iter.sh unlock "$out" && flock -n 9; }; then
	echo "$prog: nothing was run" >&2
	exit 3
fi
: > "$out/.geak.lock"
echo $$ >&9
GEAK_LOCKED=$(cd "$out" && pwd)
export GEAK_LOCKED

# The run's settings reach its stages through their flag variables.  The
# ledger is the run's (geak-parallel gives its runs one to share).
GEAK_LLM_FLAGS="${GEAK_LLM_FLAGS:-}${provider:+ --provider $provider}${model:+ --model $model}${base_url:+ --base-url $base_url}${jobs:+ -j $jobs}${max_cost:+ --max-cost $max_cost}${max_tokens:+ --max-tokens-total $max_tokens}"
# Samples are drawn for the first attempts only: each then goes on as a
# lineage of its own, debugged and optimised one candidate at a time.
[ -n "$samples" ] && GEAK_SAMPLES=$samples && export GEAK_SAMPLES
[ -n "$gpus" ] && GEAK_EVAL_FLAGS="--gpus $gpus ${GEAK_EVAL_FLAGS:-}"
[ -n "$cpu" ] && GEAK_EVAL_FLAGS="--cpu ${GEAK_EVAL_FLAGS:-}"
[ -n "$jobs" ] && GEAK_EVAL_FLAGS="${GEAK_EVAL_FLAGS:-} -j $jobs"
export GEAK_LLM_FLAGS GEAK_EVAL_FLAGS
case " ${GEAK_EVAL_FLAGS:-} " in
*" --cpu "*) device=cpu ;;
*" --gpus "*|*" -g "*) device="gpus $(printf ' %s ' "$GEAK_EVAL_FLAGS" | sed -n 's/.* \(--gpus\|-g\)[ =]\([^ ]*\) .*/\2/p')" ;;
*) device=auto ;;
esac
# What the run is made with, checked against what the folder's run was
# made with, before anything is asked; the model a server of the user's
# was found to have is then named to every step.
pin=$(geak-iter.sh settings ${force:+--force} "$out" "$tasks" "iterations=$iters" \
	"samples=${samples:-1}" "run=$run" "device=$device")
s=$?
if [ "$s" -ne 0 ]; then
	echo "$prog: nothing was run" >&2
	exit "$s"
fi
ledger=${GEAK_RUN_LEDGER:-$GEAK_LOCKED/ledger.json}
GEAK_LLM_FLAGS="$GEAK_LLM_FLAGS${pin:+ $pin} --ledger $ledger"
export GEAK_LLM_FLAGS

# ---- the status line ----
# The stages write theirs into $sdir (GEAK_STATUS_DIR), this script its
# own into $sdir/.loop; on a terminal a background painter shows them as
# one line.  Under geak-parallel (GEAK_LOOP_STATUS set) the files are kept
# for it to show, and nothing is painted here.
sdir=$GEAK_LOCKED/.status
painter=
if [ -t 2 ] || [ -n "${GEAK_LOOP_STATUS:-}" ]; then
	rm -rf "$sdir" && mkdir -p "$sdir" || exit 3
	GEAK_STATUS_DIR=$sdir
	export GEAK_STATUS_DIR
fi
status_is() {
	[ -n "${GEAK_STATUS_DIR:-}" ] && printf '%s\n' "$*" > "$sdir/.loop.tmp" &&
		mv -f "$sdir/.loop.tmp" "$sdir/.loop"
}
paint() {
	cols=$(stty size 2>/dev/null </dev/tty | cut -d' ' -f2)
	[ -n "$cols" ] && [ "$cols" -gt 1 ] || cols=80
	# It ends with this shell, however that ends.
	while kill -0 $$ 2>/dev/null; do
		line=$(cat "$sdir/.loop" "$sdir"/geak-* 2>/dev/null | sed 's/^geak-//' | paste -sd'|' - |
			sed 's/|/ | /g' | cut -c1-$((cols - ${#prog} - 3)))
		printf '\r\033[K%s' "$prog: $line" >&2
		sleep 0.5
	done
}
unpaint() {
	[ -n "$painter" ] && kill "$painter" 2>/dev/null && wait "$painter" 2>/dev/null
	[ -n "$painter" ] && printf '\r\033[K' >&2
	painter=
}
if [ -t 2 ] && [ -z "${GEAK_LOOP_STATUS:-}" ]; then
	paint 9>&- &
	painter=$!
fi
# say MESSAGE: on stderr, above the status line.
say() {
	if [ -n "$painter" ]; then printf '\r\033[K%s\n' "$prog: $*" >&2
	else printf '%s\n' "$prog: $*" >&2; fi
}
say_file() {
	while IFS= read -r l; do say "$l"; done < "$1"
}

# Each step runs in the background so that a signal reaches this shell
# at once; the step is then told to stop and waited for.  It runs in a
# process group of its own, which a watcher stops should this shell die
# without doing so; the lock's second line names the group.
child=
caught=
on_signal() {
	caught=$1
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap 'on_signal 15' TERM
trap 'on_signal 2' INT
trap 'unpaint; rm -f "$out/.geak.check" "$out/best.jsonl.tmp"; [ -n "${GEAK_STATUS_DIR:-}" ] && [ -z "${GEAK_LOOP_STATUS:-}" ] && rm -rf "$sdir"' EXIT

# run [-o FILE | -O FILE] COMMAND...: run it as the current step, its
# stdout into FILE with -o, stdout and stderr with -O; its exit status.
# (A redirection of run itself would take this shell's messages too.)
run() {
	case $1 in
	-o) f=$2; shift 2; setsid "$@" > "$f" & ;;
	-O) f=$2; shift 2; setsid "$@" > "$f" 2>&1 & ;;
	*) setsid "$@" & ;;
	esac
	child=$!
	printf '%s\nstep %s\n' "$$" "$child" > "$out/.geak.lock"
	geak-iter.sh watch "$$" "$child" < /dev/null > /dev/null 2>&1 9>&- &
	watcher=$!
	while :; do
		wait "$child"
		s=$?
		if [ -n "$caught" ] && kill -0 "$child" 2>/dev/null; then
			continue
		fi
		break
	done
	kill "$watcher" 2>/dev/null
	child=
	printf '%s\n' "$$" > "$out/.geak.lock"
	if [ -n "$caught" ]; then
		say "stopped by signal $caught; run the same command again to carry on"
		exit $((128 + caught))
	fi
	return "$s"
}

# The run's spending so far, from its ledger: "$0.12, 3456 tokens", and
# ", 5 calls unpriced" for a model without a price, whose cost is unknown
# ("3456 tokens, 5 calls unpriced" when no call was priced).
spent() {
	[ -s "$ledger" ] && jq -r '(.unpriced_calls // 0) as $u |
		(if $u == 0 or .calls > $u then "$\((.cost * 100 | round) / 100), " else "" end) +
		"\(.input_tokens + .output_tokens) tokens" +
		(if $u > 0 then ", \($u) calls unpriced" else "" end)' "$ledger" 2>/dev/null
}
# 0 when the ledger has reached a limit of the run's.
budget_spent() {
	[ -s "$ledger" ] || return 1
	jq -e --arg c "$max_cost" --arg t "$max_tokens" '
		($c != "" and .cost >= ($c | tonumber)) or
		($t != "" and .input_tokens + .output_tokens >= ($t | tonumber))' "$ledger" >/dev/null 2>&1
}

# step FILE COMMAND...: make FILE unless a complete one exists.
step() {
	file=$1
	shift
	[ -f "$file" ] && return 0
	run "$@"
	s=$?
	[ "$s" -eq 0 ] && return 0
	if [ "$s" -eq 4 ] && budget_spent; then
		say "the run's budget is spent ($(spent) so far, --max-cost ${max_cost:-none}, --max-tokens-total ${max_tokens:-none}): $file was not made; raise the limit and run the same command again"
		exit 4
	fi
	if [ "$s" -eq 4 ]; then
		say "the model could not be used for $file (see above); fix that and run the same command again"
		exit 4
	fi
	say "$file could not be made (see above)"
	exit 3
}

# The provider and the harness are checked once, before the first step
# that asks the model: a harness that cannot start would waste its
# answers.
# check_tool EXIT WHAT TOOL FLAGS...: TOOL --check into .geak.check, what
# it found said as -v and the terminal ask; where it fails, all it said,
# and the loop exits EXIT naming WHAT.
check_tool() {
	code=$1 what=$2 tool=$3
	shift 3
	run -O "$out/.geak.check" "$tool" --check "$@"
	if [ $? -ne 0 ]; then
		say_file "$out/.geak.check"
		say "$what does not work ($tool --check); nothing was run"
		exit "$code"
	fi
	[ -n "$verbose" ] && say_file "$out/.geak.check"
	[ -n "$brief" ] && grep '^ok:' "$out/.geak.check" > "$out/.geak.check.ok" &&
		say_file "$out/.geak.check.ok"
	rm -f "$out/.geak.check.ok"
}
checked=
preflight() {
	[ -n "$checked" ] && return 0
	checked=1
	status_is "checking the model provider and the harness"
	# shellcheck disable=SC2086  # a word list
	check_tool 4 "the model provider" geak-gen ${GEAK_LLM_FLAGS:-}
	i=0
	while [ "$i" -lt "$iters" ] && [ -f "$out/evaluated-$i.jsonl" ]; do i=$((i + 1)); done
	if [ "$i" -lt "$iters" ]; then
		# shellcheck disable=SC2086
		check_tool 3 "the evaluation harness" geak-eval ${GEAK_EVAL_FLAGS:-}
		# Found no GPU, as the check said: the steps need not say it again.
		case " ${GEAK_EVAL_FLAGS:-} " in *" --gpus "*|*" -g "*|*" --cpu "*) ;; *)
			grep -q '^evaluating on: the CPU' "$out/.geak.check" &&
				GEAK_EVAL_FLAGS="--cpu ${GEAK_EVAL_FLAGS:-}" && export GEAK_EVAL_FLAGS ;;
		esac
	fi
	rm -f "$out/.geak.check"
}
model_step() {
	[ -f "$1" ] && return 0
	preflight
	step "$@"
}

status_is "iteration 0 of $iters: the first candidates"
model_step "$out/iter-0.jsonl" geak-iter.sh first "$tasks" "$out/iter-0.jsonl" $run
evaluated=
i=0
while [ "$i" -lt "$iters" ]; do
	status_is "iteration $i of $iters: evaluating"
	step "$out/evaluated-$i.jsonl" geak-iter.sh eval "$out/iter-$i.jsonl" "$out/evaluated-$i.jsonl"
	evaluated="$evaluated $out/evaluated-$i.jsonl"
	[ -n "$verbose$brief" ] && say "$(geak-iter.sh progress "$i" "$out/evaluated-$i.jsonl" 2>&1)"
	next=$((i + 1))
	if [ "$next" -lt "$iters" ]; then
		status_is "iteration $next of $iters: reflecting, optimising, generating"
		model_step "$out/iter-$next.jsonl" geak-iter.sh next "$out/evaluated-$i.jsonl" \
			"$out/iter-$next.jsonl" "$next"
	fi
	i=$next
done
# Cheap, and its inputs may have grown: always made afresh.
status_is "selecting the best kernels"
# shellcheck disable=SC2086  # a list of file names without blanks
run -o "$out/best.jsonl.tmp" geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" \
	--kernels "$out/kernels" $evaluated
s=$?
if [ "$s" -gt 1 ] || ! mv -f "$out/best.jsonl.tmp" "$out/best.jsonl"; then
	say "the selection failed (geak-select exited $s, see above); run the same command again"
	exit 3
fi
unpaint
took=$(($(date +%s) - started))
say "$(jq -r --arg it "$iters" --arg took "$took" '
	def dur: if . < 60 then "\(.)s" elif . < 3600 then "\(. / 60 | floor)m\(. % 60)s"
		else "\(. / 3600 | floor)h\(. / 60 % 60 | floor)m" end;
	"\($it) iterations: \(.exec_pass) of \(.tasks) tasks pass" +
	(if .speedup_n > 0 then ", best \([.kernels[].speedup | numbers] | max * 100 | round / 100)x, geometric mean \(.speedup_geomean * 100 | round / 100)x" else "" end) +
	", \(.usage.calls) model calls, \(.usage.input_tokens + .usage.output_tokens) tokens" +
	(if .usage.cost != null then (.usage.cost * 100 | round) as $c |
		", $\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)"
	 else "" end) +
	(if (.usage.unpriced_calls // 0) > 0 then ", \(.usage.unpriced_calls) calls unpriced" else "" end) +
	", \($took | tonumber | dur); best kernels in '"$out"'/best.jsonl, report in '"$out"'/report.html"' \
	"$out/summary.json")"
exit 0
