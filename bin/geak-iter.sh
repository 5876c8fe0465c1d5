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
#   geak-iter.sh tasks FILE             read and check a task file before
#                                       anything is spent (see below)
#   geak-iter.sh settings [--force] DIR TASKS [KEY=VALUE...]
#                                       the run's settings against
#                                       DIR/manifest.json (see below)
#   geak-iter.sh watch PID STEP         stop STEP's process group once
#                                       PID has died
#   geak-iter.sh unlock DIR             take over DIR's lock from a holder
#                                       that has died (see below)
#
# OUT is written as OUT.tmp and renamed only when every stage exited 0 or
# 1, so a step stopped at any point leaves no OUT and is simply run again:
# a loop of these steps resumes where it stopped.  The model's answers of
# a step are kept in OUT.journal until OUT is written (--journal, see
# geak-gen(1)), so that a step run again asks only what it has no answer
# to.  The folder of OUT is locked (flock(1) on its .geak.lock) while the
# step runs, unless GEAK_LOCKED names it, as geak-loop does for the folder
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
# tasks FILE: FILE is read as the first step would read it (geak-gen
# --dry-run, which sends nothing); exit 0 when some record is usable
# (the bad ones are named on stderr and come out of the run as errors),
# 2 with the reason when FILE is missing, unreadable, empty, or holds no
# usable record.
#
# settings: the run's settings, as DIR/manifest.json keeps them: the
# task file's SHA-256, the provider, model(s) and base URL (never a key)
# that geak-gen --resolve chooses from GEAK_LLM_FLAGS and the
# environment, the harness's Python and its torch and Triton versions,
# geak's version, and each KEY=VALUE given (samples, iterations, run,
# device).  A folder without a manifest gets one; one whose manifest
# differs is not resumed: exit 5, naming each difference (--force:
# carry on, the manifest keeps the earlier settings under "earlier").
# On stdout, flags that pin what was chosen for the steps to come
# (--model NAME when the server's only model was taken); exit 4 when no
# model can be chosen (the reason on stderr).
#
# A lock file names its holder's pid on its first line and, while a
# step runs, "step PGID", the step's process group, on its second.
# unlock DIR: when the holder named is dead, what is left of its step is
# stopped (SIGTERM to the group, SIGKILL 2 s later) and the lock waited
# for, 10 s at most; exit 0 once the lock is free or was, 1 when a live
# process holds it (said on stderr).
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
	echo "       $prog tasks FILE | settings [--force] DIR TASKS [KEY=VALUE...] | watch PID STEP | unlock DIR" >&"$1"
	[ "$1" -eq 1 ] && exit 0
	exit 2
}

# lock DIR: hold DIR's lock for the life of this shell.
lock() {
	dir=$(cd "$1" && pwd) || die "$1: no such folder"
	[ "${GEAK_LOCKED:-}" = "$dir" ] && return 0
	command -v flock >/dev/null 2>&1 || die "flock(1) is needed (util-linux)"
	exec 9>>"$dir/.geak.lock" || die "$dir: cannot make its lock file"
	flock -n 9 || { unlock "$dir" && flock -n 9; } || exit 3
	: > "$dir/.geak.lock"
	echo $$ >&9
}

# stop_group PGID: SIGTERM to the group, SIGKILL to what is left 2 s later.
stop_group() {
	kill -s TERM -- "-$1" 2>/dev/null || return 0
	n=0
	while [ $n -lt 20 ] && kill -s 0 -- "-$1" 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	kill -s KILL -- "-$1" 2>/dev/null
	return 0
}

# unlock DIR: see above.
unlock() {
	f=$1/.geak.lock
	[ -f "$f" ] || return 0
	flock -n "$f" true && return 0
	holder=$(sed -n '1{/^[0-9][0-9]*$/p;}' "$f" 2>/dev/null)
	group=$(sed -n '2s/^step \([0-9][0-9]*\)$/\1/p' "$f" 2>/dev/null)
	if [ -n "$holder" ] && kill -0 "$holder" 2>/dev/null; then
		say "$1 is in use by another run (pid $holder); stop it or wait for it"
		return 1
	fi
	say "$1: its run (pid ${holder:-unknown}) has died; stopping what is left of it${group:+ (process group $group)} and taking over"
	[ -n "$group" ] && stop_group "$group"
	flock -w 10 "$f" true && return 0
	say "$1 is still held by a process of the run that died (see fuser $f); stop it and run again"
	return 1
}

# watch PID STEP: while both live, nothing; once PID has died, STEP's
# group is stopped.  Signals from the terminal are the loop's to handle.
watch() {
	trap '' INT HUP
	trap 'exit 0' TERM
	while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do
		sleep 1
	done
	kill -0 "$1" 2>/dev/null || stop_group "$2"
}

# tasks FILE: see above.
check_tasks() {
	f=$1
	[ -e "$f" ] || { say "$f: no such file"; exit 2; }
	[ -f "$f" ] || { say "$f: not a file"; exit 2; }
	[ -r "$f" ] || { say "$f: cannot read (permission denied)"; exit 2; }
	tmpd=$(mktemp -d "${TMPDIR:-/tmp}/geak-iter.XXXXXX") || die "cannot make a temporary folder"
	geak-gen --dry-run --knowledge none "$f" > "$tmpd/out" 2> "$tmpd/err"
	s=$?
	if [ "$s" -gt 1 ]; then
		grep -v ' generated, ' "$tmpd/err" | while IFS= read -r l; do say "$l"; done
		say "$f: cannot be read as task records (geak-gen exited $s)"
		exit 2
	fi
	set -- $(jq -r 'if .error then "bad" else "ok" end' "$tmpd/out" | sort | uniq -c |
		awk '{ n[$2] = $1 } END { print n["ok"] + 0, n["bad"] + 0 }')
	good=${1:-0} bad=${2:-0}
	grep -v ' generated, ' "$tmpd/err" | head -n 10 | while IFS= read -r l; do say "$l"; done
	[ "$bad" -gt 10 ] && say "... and $((bad - 10)) more"
	if [ "$good" -eq 0 ]; then
		[ "$bad" -eq 0 ] && say "$f: no task records in it; nothing to run" ||
			say "$f: none of its $bad records can be used (see above); nothing to run"
		exit 2
	fi
	[ "$bad" -gt 0 ] && say "$f: $bad of $((good + bad)) records cannot be used (see above); they come out as errors"
	exit 0
}

# The harness's Python as geak-eval would find it (--python, $GEAK_PYTHON,
# the build tree's .venv, python3), and its torch and Triton versions.
harness_json() {
	py=$(printf ' %s ' "${GEAK_EVAL_FLAGS:-}" | sed -n 's/.* --python[ =]\([^ ]*\) .*/\1/p')
	[ -n "$py" ] || py=${GEAK_PYTHON:-}
	here=$(cd "$(dirname "$0")" && pwd)
	[ -n "$py" ] || { [ -x "$here/../.venv/bin/python" ] && py=$(cd "$here/.." && pwd)/.venv/bin/python; }
	[ -n "$py" ] || py=python3
	v=$("$py" -c 'import importlib.metadata as m
def v(p):
    try:
        return m.version(p)
    except Exception:
        return None
import json; print(json.dumps({"torch": v("torch"), "triton": v("triton")}))' 2>/dev/null) ||
		v='{"torch": null, "triton": null}'
	printf '%s\n' "$v" | jq -c --arg py "$py" '{python: $py} + .'
}

# settings [--force] DIR TASKS [KEY=VALUE...]: see above.
settings() {
	force=
	[ "${1:-}" = --force ] && force=1 && shift
	dir=$1 tasks=$2
	shift 2
	m=$dir/manifest.json
	# shellcheck disable=SC2086  # a word list
	llm=$(geak-gen --resolve ${GEAK_LLM_FLAGS:-}) || exit 4
	sha=$(sha256sum < "$tasks" | cut -d' ' -f1) || die "$tasks: cannot read"
	version=$(geak-gen --version 2>/dev/null | awk '{ print $NF; exit }')
	harness=$(harness_json)
	kv='{}'
	for a in "$@"; do
		kv=$(printf '%s\n' "$kv" | jq -c --arg k "${a%%=*}" --arg v "${a#*=}" \
			'. + {($k): (if $v == "" then null else ($v | tonumber? // $v) end)}')
	done
	new=$(printf '%s\n' "$llm" | jq -sc --arg sha "$sha" --arg file "$tasks" --arg ver "$version" \
		--argjson h "$harness" --argjson kv "$kv" '
		{schema: 1, geak: $ver, tasks: {sha256: $sha, file: $file},
		 llm: [.[] | {provider, model,
			base_url: (.base_url | sub("//[^/@]*@"; "//") | sub("[?#].*$"; ""))}],
		 harness: $h} + $kv') || die "cannot make the manifest"
	if [ -s "$m" ]; then
		diffs=$(jq -r --argjson new "$new" '
			def show($k): if $k == "llm" then [.[]? | "\(.provider) \(.model) at \(.base_url)"] | join(", ")
				elif $k == "harness" then "\(.python) (torch \(.torch), triton \(.triton))"
				elif type == "string" then . else tojson end;
			. as $old | ($old + $new | keys_unsorted) - ["schema", "earlier", "written"] | .[] |
			select(. != "tasks" and ($old[.] != $new[.])
				or . == "tasks" and $old.tasks.sha256 != $new.tasks.sha256) |
			if . == "tasks" then "  the tasks: \($old.tasks.file) (SHA-256 \($old.tasks.sha256[:12])...) then, \($new.tasks.file) (\($new.tasks.sha256[:12])...) now"
			else . as $k | "  \($k): \($old[$k] | show($k)) then, \($new[$k] | show($k)) now" end' "$m" 2>/dev/null) ||
			die "$m: not a manifest (remove it, or run in another folder)"
		if [ -n "$diffs" ] && [ -z "$force" ]; then
			say "$dir holds a run made with other settings:"
			printf '%s\n' "$diffs" | while IFS= read -r l; do say "$l"; done
			say "nothing was run: start a new run in another folder (-o DIR), remove $dir, or carry on with these settings with --force"
			exit 5
		fi
		if [ -n "$diffs" ]; then
			say "carrying on in $dir with other settings (--force):"
			printf '%s\n' "$diffs" | while IFS= read -r l; do say "$l"; done
			new=$(jq -c --argjson new "$new" '$new + {earlier: ((.earlier // []) + [del(.earlier)])}' "$m") ||
				die "$m: cannot be read"
		else
			new=$(jq -c --argjson new "$new" '$new + if .earlier then {earlier} else {} end' "$m") ||
				die "$m: cannot be read"
		fi
	fi
	printf '%s\n' "$new" | jq . > "$m.tmp" && mv -f "$m.tmp" "$m" || die "cannot write $m"
	printf '%s\n' "$llm" | jq -r -s 'if length == 1 and .[0].model_from == "the server\u0027s only model"
		then "--model \(.[0].model)" else empty end'
	exit 0
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
tasks)
	[ $# -eq 1 ] || usage 2
	check_tasks "$1"
	;;
settings)
	[ $# -ge 2 ] || usage 2
	settings "$@"
	;;
watch)
	[ $# -eq 2 ] || usage 2
	trap - EXIT
	watch "$@"
	;;
unlock)
	[ $# -eq 1 ] || usage 2
	unlock "$1"
	exit $?
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
