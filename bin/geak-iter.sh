#!/bin/sh
# geak-iter.sh: one step of the agent loop, written atomically.
#
#   geak-iter.sh first TASKS OUT [RUN]  geak-retrieve | geak-gen   (iteration 0)
#   geak-iter.sh eval  IN OUT [ITER]    geak-eval, without the credentials
#                                       in the environment, then with ITER a
#                                       progress line when stderr is a
#                                       terminal or GEAK_VERBOSE is set
#   geak-iter.sh next  IN OUT ITER      geak-reflect | geak-opt | geak-gen
#   geak-iter.sh progress ITER FILE     one progress line on stderr
#
# OUT is written as OUT.tmp and renamed only when every stage finished, so
# a step killed at any point leaves no OUT and is simply run again: a loop
# of these steps resumes where it stopped.  A stage's exit status 1 (some
# records carry an error) is part of normal work; 2 or more stops the step.
# Tool flags come from GEAK_LLM_FLAGS (geak-gen, geak-reflect, geak-opt),
# GEAK_RETRIEVE_FLAGS, GEAK_GEN_FLAGS, GEAK_EVAL_FLAGS, GEAK_REFLECT_FLAGS,
# GEAK_OPT_FLAGS; each is split at white space.
set -u
prog=geak-iter.sh

die() {
	echo "$prog: $*" >&2
	exit 3
}

usage() {
	echo "usage: $prog first TASKS OUT [RUN] | eval IN OUT [ITER] | next IN OUT ITER | progress ITER FILE" >&2
	exit 2
}

# Run "$@" as one pipeline stage; its status goes to the named file.
stage() {
	st=$1
	shift
	"$@"
	echo $? > "$st"
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

without_credentials() {
	# shellcheck disable=SC2046  # the names are identifiers, one a line
	(unset $(credential_names) && exec "$@")
}

# Every stage status must be 0 or 1.
check_status() {
	for st in "$@"; do
		s=$(cat "$st" 2>/dev/null) || s=99
		if [ "$s" -gt 1 ]; then
			return 1
		fi
	done
}

finish() {
	out=$1
	shift
	if check_status "$@"; then
		mv -f "$out.tmp" "$out" || die "cannot rename $out.tmp"
		rm -f "$@"
	else
		rm -f "$out.tmp" "$@"
		die "a stage failed; $out not written"
	fi
}

set_run() {
	if [ -n "$1" ]; then
		jq -c --argjson run "$1" '.run = $run'
	else
		cat
	fi
}

[ $# -ge 1 ] || usage
step=$1
shift
# shellcheck disable=SC2086  # the flag variables are word lists
case $step in
first)
	[ $# -ge 2 ] || usage
	tasks=$1 out=$2 run=${3:-}
	[ -r "$tasks" ] || die "$tasks: cannot read"
	{ stage "$out.s1" set_run "$run" < "$tasks" |
		stage "$out.s2" geak-retrieve ${GEAK_RETRIEVE_FLAGS:-} |
		stage "$out.s3" geak-gen ${GEAK_LLM_FLAGS:-} ${GEAK_GEN_FLAGS:-} \
			> "$out.tmp"; }
	finish "$out" "$out.s1" "$out.s2" "$out.s3"
	;;
eval)
	[ $# -eq 2 ] || [ $# -eq 3 ] || usage
	stage "$2.s1" without_credentials geak-eval ${GEAK_EVAL_FLAGS:-} < "$1" > "$2.tmp"
	finish "$2" "$2.s1"
	if [ $# -eq 3 ] && { [ -t 2 ] || [ -n "${GEAK_VERBOSE:-}" ]; }; then
		"$0" progress "$3" "$2"
	fi
	;;
next)
	[ $# -eq 3 ] || usage
	in=$1 out=$2 iter=$3
	{ stage "$out.s1" geak-reflect ${GEAK_LLM_FLAGS:-} ${GEAK_REFLECT_FLAGS:-} < "$in" |
		stage "$out.s2" geak-opt --iter "$iter" ${GEAK_LLM_FLAGS:-} ${GEAK_OPT_FLAGS:-} |
		stage "$out.s3" geak-gen ${GEAK_LLM_FLAGS:-} ${GEAK_GEN_FLAGS:-} \
			> "$out.tmp"; }
	finish "$out" "$out.s1" "$out.s2" "$out.s3"
	;;
progress)
	[ $# -eq 2 ] || usage
	geak-select -S "$2" | jq -r --arg it "$1" '
		"iter \($it): \(.records) records, \(.exec_pass)/\(.tasks) tasks passing, best " +
		(([.kernels[].speedup | numbers] | max | if . == null then "n/a"
		  else (. * 100 | round / 100 | tostring) + "x" end)) +
		", \(.usage.input_tokens + .usage.output_tokens) tokens"' >&2
	;;
*)
	usage
	;;
esac
