#!/bin/sh
# geak-iter.sh: one step of the agent loop, written atomically.
#
#   geak-iter.sh first TASKS OUT [RUN]  geak-retrieve | geak-gen   (iteration 0)
#   geak-iter.sh eval  IN OUT [ITER]    geak-eval, without the credentials
#                                       in the environment, then with ITER a
#                                       progress line when stderr is a
#                                       terminal or GEAK_VERBOSE is set
#   geak-iter.sh next  IN OUT ITER      geak-reflect | geak-opt | geak-retrieve
#                                       | geak-gen (the example retrieved
#                                       again, by the code to be debugged)
#   geak-iter.sh progress ITER FILE     one progress line on stderr
#
# OUT is written as OUT.tmp and renamed only when every stage exited 0 or
# 1, so a step stopped at any point leaves no OUT and is simply run again:
# a loop of these steps resumes where it stopped.  The model's answers of
# a step are kept in OUT.journal until OUT is written (--journal, see
# geak-gen(1)), so that a step run again asks only what it has no answer
# to.  The folder of OUT is locked (flock(1) on its .geak.lock) while the
# step runs, unless GEAK_LOCKED names it, as loop.sh does for the folder
# it holds: a second step there fails at once, and clearly.
#
# On SIGTERM or SIGINT the stages are sent SIGTERM and waited for (they
# finish the model calls in flight, so that the journal keeps them), OUT
# is not written, and the step exits 128 plus the signal's number.
# Exit status: 0, OUT written; 2, bad usage; 3, a stage failed; 4, a stage
# said its records failed for reasons that are not theirs (a refused key,
# the network, the provider, the budget): OUT is not written, the cause
# is to be fixed, and the step run again.
#
# Tool flags come from GEAK_LLM_FLAGS (geak-gen, geak-reflect, geak-opt),
# GEAK_RETRIEVE_FLAGS, GEAK_GEN_FLAGS, GEAK_EVAL_FLAGS, GEAK_REFLECT_FLAGS,
# GEAK_OPT_FLAGS; each is split at white space.  GEAK_SAMPLES is geak-gen's
# -n for the first attempts only: a later step debugs or optimises each
# lineage one candidate at a time, where geak-gen -n would multiply the
# lineages by n at every iteration.
set -u
prog=geak-iter.sh

# Under a loop that draws a status line on the terminal, a message goes
# above it.
say() {
	if [ -n "${GEAK_STATUS_DIR:-}" ] && [ -t 2 ]; then
		printf '\r\033[K%s\n' "$prog: $*" >&2
	else
		printf '%s\n' "$prog: $*" >&2
	fi
}

die() {
	say "$*"
	exit 3
}

usage() {
	echo "usage: $prog first TASKS OUT [RUN] | eval IN OUT [ITER] | next IN OUT ITER | progress ITER FILE" >&"$1"
	[ "$1" -eq 1 ] && exit 0
	exit 2
}

# lock DIR: hold DIR's lock for the life of this shell.
lock() {
	dir=$(cd "$1" && pwd) || die "$1: no such folder"
	[ "${GEAK_LOCKED:-}" = "$dir" ] && return 0
	command -v flock >/dev/null 2>&1 || die "flock(1) is needed (util-linux)"
	exec 9>>"$dir/.geak.lock" || die "$dir: cannot make its lock file"
	if ! flock -n 9; then
		die "$dir is in use by another run (pid $(head -n 1 "$dir/.geak.lock" 2>/dev/null)); stop it or wait for it"
	fi
	: > "$dir/.geak.lock"
	echo $$ >&9
}

# The evaluation stage runs the candidates' code: it gets no variable whose
# name looks like a credential (the names geak-eval itself drops).
credential_names() {
	awk 'BEGIN {
		for (k in ENVIRON)
			if (k ~ /^[A-Za-z_][A-Za-z0-9_]*$/ &&
			    toupper(k) ~ /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|PRIVATE/)
				print k
	}'
}

# without_credentials COMMAND...: COMMAND in place of the shell that runs
# this (a stage's background shell: its pid stays the stage's).
without_credentials() {
	# shellcheck disable=SC2046  # the names are identifiers, one a line
	unset $(credential_names)
	exec "$@"
}

# The stages run in the background, each its own process, joined by
# named pipes in a private folder, so that each can be stopped and waited
# for by its pid.
tmpd=
pids=
names=
caught=

cleanup() {
	[ -n "$tmpd" ] && rm -rf "$tmpd"
	tmpd=
}

on_signal() {
	caught=$1
	# shellcheck disable=SC2086  # a list of pids
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
}
trap 'on_signal 15' TERM
trap 'on_signal 2' INT
trap cleanup EXIT

pipes() {
	tmpd=$(mktemp -d "${TMPDIR:-/tmp}/geak-iter.XXXXXX") || die "cannot make a temporary folder"
	for p in "$@"; do
		mkfifo "$tmpd/$p" || die "cannot make a pipe in $tmpd"
	done
}

# spawn NAME IN OUT COMMAND...: a stage reading IN and writing OUT.
spawn() {
	name=$1 in=$2 to=$3
	shift 3
	"$@" < "$in" > "$to" &
	pids="$pids $!"
	names="$names $name"
}

# Wait for every stage; the worst status: 0 or 1 all is well, 4 some
# records failed for reasons not theirs, else the first failure.
# Reports each stage that failed.
join() {
	worst=0
	# shellcheck disable=SC2086  # lists of pids and names
	[ -n "$caught" ] && kill -TERM $pids 2>/dev/null
	# shellcheck disable=SC2086
	set -- $names
	for pid in $pids; do
		name=$1
		shift
		while :; do
			wait "$pid"
			s=$?
			# A trap cut the wait short: the stage is still finishing.
			if [ -n "$caught" ] && kill -0 "$pid" 2>/dev/null; then
				continue
			fi
			break
		done
		[ -n "$caught" ] && continue
		if [ "$s" -eq 4 ]; then
			say "$name: its records failed for reasons that are not theirs (see above)"
			[ "$worst" -le 1 ] && worst=4
		elif [ "$s" -gt 1 ]; then
			say "$name exited $s"
			[ "$worst" -le 1 ] || [ "$worst" -eq 4 ] && worst=3
		fi
	done
	pids=
	return "$worst"
}

# finish OUT STATUS: commit OUT, or say why not and exit.
finish() {
	out=$1 s=$2
	if [ -n "$caught" ]; then
		rm -f "$out.tmp"
		say "stopped by signal $caught; $out not written"
		exit $((128 + caught))
	fi
	if [ "$s" -le 1 ]; then
		mv -f "$out.tmp" "$out" || die "cannot rename $out.tmp"
		rm -f "$out.journal"
		return 0
	fi
	rm -f "$out.tmp"
	[ -s "$out.journal" ] && extra="; the answers so far are kept in $out.journal" || extra=
	say "$out not written$extra"
	exit "$s"
}

[ $# -ge 1 ] || usage 2
case $1 in -h|--help) usage 1 ;; esac
step=$1
shift
# shellcheck disable=SC2086  # the flag variables are word lists
case $step in
first)
	[ $# -ge 2 ] || usage 2
	tasks=$1 out=$2 run=${3:-}
	[ -r "$tasks" ] || die "$tasks: cannot read"
	lock "$(dirname "$out")"
	pipes runs retrieved
	if [ -n "$run" ]; then
		spawn jq "$tasks" "$tmpd/runs" jq -c --argjson run "$run" '.run = $run'
	else
		spawn cat "$tasks" "$tmpd/runs" cat
	fi
	spawn geak-retrieve "$tmpd/runs" "$tmpd/retrieved" geak-retrieve ${GEAK_RETRIEVE_FLAGS:-}
	spawn geak-gen "$tmpd/retrieved" "$out.tmp" \
		geak-gen ${GEAK_SAMPLES:+-n "$GEAK_SAMPLES"} ${GEAK_LLM_FLAGS:-} --journal "$out.journal" \
		${GEAK_GEN_FLAGS:-}
	join
	finish "$out" $?
	;;
eval)
	[ $# -eq 2 ] || [ $# -eq 3 ] || usage 2
	lock "$(dirname "$2")"
	spawn geak-eval "$1" "$2.tmp" without_credentials geak-eval ${GEAK_EVAL_FLAGS:-}
	join
	finish "$2" $?
	if [ $# -eq 3 ] && { [ -t 2 ] || [ -n "${GEAK_VERBOSE:-}" ]; }; then
		"$0" progress "$3" "$2"
	fi
	;;
next)
	[ $# -eq 3 ] || usage 2
	in=$1 out=$2 iter=$3
	lock "$(dirname "$out")"
	pipes reflected optimised retrieved
	spawn geak-reflect "$in" "$tmpd/reflected" \
		geak-reflect ${GEAK_LLM_FLAGS:-} --journal "$out.journal" ${GEAK_REFLECT_FLAGS:-}
	spawn geak-opt "$tmpd/reflected" "$tmpd/optimised" \
		geak-opt --iter "$iter" ${GEAK_LLM_FLAGS:-} --journal "$out.journal" ${GEAK_OPT_FLAGS:-}
	spawn geak-retrieve "$tmpd/optimised" "$tmpd/retrieved" geak-retrieve ${GEAK_RETRIEVE_FLAGS:-}
	spawn geak-gen "$tmpd/retrieved" "$out.tmp" \
		geak-gen ${GEAK_LLM_FLAGS:-} --journal "$out.journal" ${GEAK_GEN_FLAGS:-}
	join
	finish "$out" $?
	;;
progress)
	[ $# -eq 2 ] || usage 2
	geak-select -S "$2" | jq -r --arg it "$1" '
		"iter \($it): \(.records) records, \(.exec_pass)/\(.tasks) tasks passing, best " +
		(([.kernels[].speedup | numbers] | max | if . == null then "n/a"
		  else (. * 100 | round / 100 | tostring) + "x" end)) +
		", \(.usage.input_tokens + .usage.output_tokens) tokens"' >&2
	;;
*)
	usage 2
	;;
esac
