#!/bin/sh
# geak-parallel (installed under that name): parallel scaling.  RUNS
# independent runs of the loop (each its own folder, run index and, with
# -g, GPU), JOBS at a time through xargs -P, then geak-select across all
# of them for pass@k and the best kernel per task.  See geak-loop(1).
#
# Resumable like geak-loop: finished steps are not redone.  The output
# folder is locked while it runs, as each run's folder is by its loop.
# The runs share one ledger (DIR/ledger.json), so --max-cost and
# --max-tokens-total hold for all of them together.  Each run's messages
# go to DIR/run-R.log; on a terminal one line shows every run's step and
# progress, and at the end one line sums the whole up.  On SIGTERM or
# SIGINT no further run is started, the runs are stopped (each as
# geak-loop stops) and waited for, and it exits 128 plus the signal's
# number.  As in geak-loop, the task file is checked before anything is
# made, locked or asked, DIR/manifest.json keeps the settings (each
# run's folder its own too), the runs go in a process group that is
# stopped if this shell dies without doing so, and a lock whose holder
# died is taken over.  Exit status as geak-loop's.
set -u
umask 027 # the runs' logs and records are not for every user of the host
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here:$PATH
export PATH
prog=$(basename "$0" .sh)
loop=$here/geak-loop.sh
[ -x "$loop" ] || loop=$here/geak-loop

iters=3 samples= runs=4 jobs=2 out=out gpus= passk= max_cost= max_tokens=
model= provider= base_url= cpu= force=
usage() {
	[ "$1" -eq 0 ] && fd=1 || fd=2
	cat >&$fd <<USAGE
usage: $prog [-i ITERS] [-n SAMPLES] [-R RUNS] [-j JOBS] [-o DIR] [-g GPUS | --cpu]
       [-k LIST] [--model NAME] [--provider NAME] [--base-url URL]
       [--max-cost USD] [--max-tokens-total N] [--force] TASKS.jsonl
  -i, --iters N          iterations per run (default 3)
  -n, --samples N        first candidates per task, each a lineage of its own
                         (geak-gen -n; default 1)
  -R, --runs N           independent runs (default 4)
  -j, --jobs N           runs at a time (default 2)
  -o, --out DIR          output folder (default out); run R goes to DIR/run-R
  -g, --gpus LIST        GPUs to spread the runs over, one each, round robin
      --cpu              evaluate on the CPU (geak-eval --cpu)
  -k, --pass-at LIST     pass@k values (default 1,...,RUNS)
      --model NAME       the model (geak-gen --model); \$GEAK_MODEL
      --provider NAME    openai, anthropic or azure; \$GEAK_PROVIDER
      --base-url URL     the provider's endpoint; \$GEAK_BASE_URL (a server of
                         your own: with no model named, its only model)
      --max-cost USD     stop asking the model once all the runs have spent USD
                         (refused for a model without a price)
      --max-tokens-total N  ... or N tokens
      --force            resume in DIR even though its runs had other settings
  -h, --help             this help
Environment: as geak-loop's (geak-loop --help): GEAK_MODEL, GEAK_PROVIDER,
GEAK_BASE_URL, the provider's key, GEAK_PYTHON, GEAK_LLM_FLAGS and the
other stages' GEAK_*_FLAGS, TMPDIR.  Exit status as geak-loop's; each run's
messages are in DIR/run-R.log.
USAGE
	exit "$1"
}
need() { [ "$2" -ge 2 ] || { echo "$prog: $1 needs a value" >&2; usage 2; }; }
whole() {
	case $2 in ''|*[!0-9]*|0) echo "$prog: $1: want a whole number above 0, not '$2'" >&2; exit 2 ;; esac
}
while [ $# -gt 0 ]; do
	case $1 in
	--*=*) a=${1%%=*} v=${1#*=}; shift; set -- "$a" "$v" "$@"; continue ;;
	-h|--help) usage 0 ;;
	-i|--iters) need "$1" $#; whole "$1" "$2"; iters=$2; shift 2 ;;
	-n|--samples) need "$1" $#; whole "$1" "$2"; samples=$2; shift 2 ;;
	-R|--runs) need "$1" $#; whole "$1" "$2"; runs=$2; shift 2 ;;
	-j|--jobs) need "$1" $#; whole "$1" "$2"; jobs=$2; shift 2 ;;
	-o|--out) need "$1" $#; out=$2; shift 2 ;;
	-g|--gpus) need "$1" $#; gpus=$2; shift 2 ;;
	--cpu) cpu=1; shift ;;
	--model) need "$1" $#; model=$2; shift 2 ;;
	--provider) need "$1" $#; provider=$2; shift 2 ;;
	--base-url) need "$1" $#; base_url=$2; shift 2 ;;
	--force) force=1; shift ;;
	-k|--pass-at) need "$1" $#; passk=$2; shift 2 ;;
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
case $max_cost in *[!0-9.]*) echo "$prog: --max-cost: want a number of US dollars" >&2; exit 2 ;; esac
[ -n "$gpus" ] && [ -n "$cpu" ] && { echo "$prog: -g and --cpu: one or the other" >&2; exit 2; }
[ -n "$passk" ] || passk=$(seq -s, 1 "$runs")
geak-iter.sh tasks "$tasks" || { echo "$prog: nothing was run" >&2; exit 2; }
mkdir -p "$out" || { echo "$prog: cannot make $out; nothing was run" >&2; exit 3; }
started=$(date +%s)
command -v flock >/dev/null 2>&1 || { echo "$prog: flock(1) is needed (util-linux)" >&2; exit 3; }
command -v setsid >/dev/null 2>&1 || { echo "$prog: setsid(1) is needed (util-linux)" >&2; exit 3; }
exec 9>>"$out/.geak.lock" || { echo "$prog: cannot make $out/.geak.lock; nothing was run" >&2; exit 3; }
if ! flock -n 9 && ! { geak-iter.sh unlock "$out" && flock -n 9; }; then
	echo "$prog: nothing was run" >&2
	exit 3
fi
: > "$out/.geak.lock"
echo $$ >&9
top_out=$(cd "$out" && pwd)

# The runs' model settings, and the checks of the whole before anything
# is asked: the settings against the folder's, a budget that can be
# counted (a model without a price has no cost to count).
GEAK_LLM_FLAGS="${GEAK_LLM_FLAGS:-}${provider:+ --provider $provider}${model:+ --model $model}${base_url:+ --base-url $base_url}"
[ -n "$cpu" ] && device=cpu || device=${gpus:+gpus $gpus}
pin=$(GEAK_LLM_FLAGS="$GEAK_LLM_FLAGS${max_cost:+ --max-cost $max_cost}" geak-iter.sh settings \
	${force:+--force} "$out" "$tasks" "iterations=$iters" "samples=${samples:-1}" "runs=$runs" \
	"device=${device:-auto}")
s=$?
if [ "$s" -ne 0 ]; then
	echo "$prog: nothing was run" >&2
	exit "$s"
fi
GEAK_LLM_FLAGS="$GEAK_LLM_FLAGS${pin:+ $pin}"
export GEAK_LLM_FLAGS

# ---- one status line for every run ----
painter=
state() { # R: done, running or waiting
	if [ -f "$out/run-$1/best.jsonl" ] && ! busy "$1"; then echo done
	elif busy "$1"; then echo running
	else echo waiting; fi
}
busy() { [ -f "$out/run-$1/.geak.lock" ] && ! flock -n "$out/run-$1/.geak.lock" true; }
paint() {
	cols=$(stty size 2>/dev/null </dev/tty | cut -d' ' -f2)
	[ -n "$cols" ] && [ "$cols" -gt 1 ] || cols=80
	# It ends with this shell, however that ends.
	while kill -0 $$ 2>/dev/null; do
		d=0 w=0 line=
		r=0
		while [ "$r" -lt "$runs" ]; do
			case $(state "$r") in
			done) d=$((d + 1)) ;;
			waiting) w=$((w + 1)) ;;
			running)
				st=$(cat "$out/run-$r/.status/.loop" "$out/run-$r/.status"/geak-* 2>/dev/null |
					sed 's/^geak-//' | paste -sd'|' - | sed 's/|/, /g')
				line="$line | run $r: ${st:-starting}" ;;
			esac
			r=$((r + 1))
		done
		line="runs $d done, $((runs - d - w)) running, $w waiting of $runs$line"
		printf '\r\033[K%s' "$(printf '%s' "$prog: $line" | cut -c1-$((cols - 1)))" >&2
		sleep 0.5
	done
}
unpaint() {
	[ -n "$painter" ] && kill "$painter" 2>/dev/null && wait "$painter" 2>/dev/null
	[ -n "$painter" ] && printf '\r\033[K' >&2
	painter=
}
say() {
	if [ -n "$painter" ]; then printf '\r\033[K%s\n' "$prog: $*" >&2
	else printf '%s\n' "$prog: $*" >&2; fi
}

# The runs' geak-loop processes are children of xargs, which does not pass
# a signal on: each names itself in its folder's lock, and that lock is
# free once every process of the run has ended.
xargs_pid=
caught=
stop_runs() {
	caught=$1
	[ -n "$xargs_pid" ] && kill -TERM "$xargs_pid" 2>/dev/null
	told=
	while :; do
		busy=
		for l in "$out"/run-*/.geak.lock; do
			[ -f "$l" ] || continue
			flock -n "$l" true && continue
			busy=1
			p=$(head -n 1 "$l" 2>/dev/null)
			case " $told " in *" $p "*) continue ;; esac
			[ -n "$p" ] && kill -TERM "$p" 2>/dev/null
			told="$told $p"
		done
		[ -z "$busy" ] && break
		sleep 0.2
	done
	[ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null
	unpaint
	say "stopped by signal $caught; run the same command again to carry on"
	exit $((128 + caught))
}
trap 'stop_runs 15' TERM
trap 'stop_runs 2' INT
trap 'unpaint; rm -f "$out/best.jsonl.tmp"' EXIT
[ -t 2 ] && { paint 9>&- & painter=$!; }

# One line per run: "RUN GPU" (GPU "-" for none).
r=0
ngpu=$(printf '%s' "$gpus" | tr ',' '\n' | grep -c .)
while [ "$r" -lt "$runs" ]; do
	if [ "$ngpu" -gt 0 ]; then
		echo "$r $(printf '%s' "$gpus" | cut -d, -f$((r % ngpu + 1)))"
	else
		echo "$r -"
	fi
	r=$((r + 1))
done | GEAK_PAR_LOOP=$loop GEAK_PAR_ITERS=$iters GEAK_PAR_OUT=$out GEAK_PAR_TASKS=$tasks \
	GEAK_PAR_FLAGS="${samples:+-n $samples}${max_cost:+ --max-cost $max_cost}${max_tokens:+ --max-tokens-total $max_tokens}${cpu:+ --cpu}${force:+ --force}" \
	GEAK_RUN_LEDGER=$top_out/ledger.json GEAK_LOOP_STATUS=1 setsid xargs -P "$jobs" -L 1 sh -c '
	gpu=
	[ "$2" = - ] || gpu="-g $2"
	exec "$GEAK_PAR_LOOP" -v -i "$GEAK_PAR_ITERS" --run "$1" $gpu $GEAK_PAR_FLAGS \
		-o "$GEAK_PAR_OUT/run-$1" "$GEAK_PAR_TASKS" 2>"$GEAK_PAR_OUT/run-$1.log"' sh &
xargs_pid=$!
# The runs are xargs's process group; the lock names it, and a watcher
# stops it should this shell die without doing so.
printf '%s\nstep %s\n' "$$" "$xargs_pid" > "$out/.geak.lock"
geak-iter.sh watch "$$" "$xargs_pid" < /dev/null > /dev/null 2>&1 9>&- &
watcher=$!
wait "$xargs_pid"
status=$?
kill "$watcher" 2>/dev/null
printf '%s\n' "$$" > "$out/.geak.lock"
unpaint
if [ $status -ne 0 ]; then
	for l in "$out"/run-*.log; do
		[ -s "$l" ] && say "$(basename "$l" .log): $(tail -n 1 "$l" | sed 's/^[^:]*: //')"
	done
	say "a run failed; see $out/run-*.log"
	exit 3
fi
geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" --kernels "$out/kernels" \
	"$out"/run-*/evaluated-*.jsonl > "$out/best.jsonl.tmp"
s=$?
if [ "$s" -gt 1 ] || ! mv -f "$out/best.jsonl.tmp" "$out/best.jsonl"; then
	say "the selection failed (geak-select exited $s, see above); run the same command again"
	exit 3
fi
rm -rf "$out"/run-*/.status
took=$(($(date +%s) - started))
say "$(jq -r --arg runs "$runs" --arg it "$iters" --arg took "$took" '
	def dur: if . < 60 then "\(.)s" elif . < 3600 then "\(. / 60 | floor)m\(. % 60)s"
		else "\(. / 3600 | floor)h\(. / 60 % 60 | floor)m" end;
	def pct: (. * 1000 | round) / 10 | tostring + "%";
	"\($runs) runs of \($it) iterations: " +
	([.pass_at_k[] | "pass@\(.k) \(.exec | if . == null then "n/a" else pct end)"] | join(", ")) +
	", \(.exec_pass) of \(.tasks) tasks pass in some run" +
	(if .speedup_n > 0 then ", geometric mean \(.speedup_geomean * 100 | round / 100)x" else "" end) +
	", \(.usage.calls) model calls, \(.usage.input_tokens + .usage.output_tokens) tokens" +
	(if .usage.cost != null then (.usage.cost * 100 | round) as $c |
		", $\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)"
	 else "" end) +
	(if (.usage.unpriced_calls // 0) > 0 then ", \(.usage.unpriced_calls) calls unpriced" else "" end) +
	", \($took | tonumber | dur); best kernels in '"$out"'/best.jsonl, report in '"$out"'/report.html"' \
	"$out/summary.json")"
