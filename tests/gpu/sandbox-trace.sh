#!/bin/sh
# Which sandbox layer keeps the GPU runtime from starting, and why: each
# layer set of tests/gpu/sandbox-layers.py applied alone and together (a
# CUDA start and a Triton launch under it), the failing ones traced
# again, their failed system calls listed; then geak-eval's own device
# probe traced; then bubblewrap's namespaces for comparison.
#
#   tests/gpu/sandbox-trace.sh [-t TOOLS] [OUT_DIR]
#
# Run as root on the GPU machine.  TOOLS (default out/sbx-tools) may hold
# strace and bwrap binaries with their libraries in TOOLS/lib, for a
# machine that has neither.  OUT_DIR (default out/sandbox-trace) keeps
# the traces.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tools=$top/out/sbx-tools
while getopts t: o; do
	case $o in
	t) tools=$OPTARG ;;
	*) echo "usage: $0 [-t TOOLS] [OUT_DIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
o=${1:-$top/out/sandbox-trace}
py=${GEAK_PYTHON:-python3}
rm -rf "$o" && mkdir -p "$o/work" || exit 3
strace=$(command -v strace || echo "$tools/strace")
bwrap=$(command -v bwrap || echo "$tools/bwrap")
[ -d "$tools/lib" ] && export LD_LIBRARY_PATH="$tools/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$strace" ] || strace=
[ -x "$bwrap" ] || bwrap=
echo "kernel $(uname -r); uid $(id -u); strace ${strace:-none}; bwrap ${bwrap:-none}"

# failed FILE: the failed calls of a trace that can matter to a driver,
# the same call on the same path once.
failed() {
	grep -E '= -1 E(ACCES|PERM|ROFS|NOSYS|INVAL|NXIO|NODEV|BUSY|OPNOTSUPP|IO)|/dev/|/proc/driver|nvidia|/dev/shm|/sys/' "$1" |
		grep -v -E '(\.py|\.so|\.pyc|site-packages|python3)[^ ]*".*ENOENT|^[0-9]* *readlink.*EINVAL|ENOTTY|"/dev/tty"' |
		sed -E 's/^[0-9]+ +//; s/0x[0-9a-f]+/0x_/g; s/ = -1 / = /' | awk '!seen[$0]++' | head -n 40 | sed 's/^/    /'
}

traced=0
echo "== layer sets (P pid ns, I ipc ns, M mount ns, R /proc, D /dev, S /dev/shm, T /tmp, O read-only, F the job's mounts, U uid, C caps, N no_new_privs, L Landlock)"
for set in - L P MO F PF U FU PMRL PFUCNL PFCNL; do
	letters=$set
	[ "$set" = - ] && letters=
	line=$(cd "$o" && timeout 120 "$py" "$top/tests/gpu/sandbox-layers.py" "$letters" "$o/work" 2>"$o/err.$set" | tail -n 1)
	echo "$set: ${line:-no result: $(tail -n 2 "$o/err.$set" | tr '\n' ' ')}"
	case $line in *'"ok": true'*) continue ;; esac
	[ -n "$strace" ] && [ $traced -lt 6 ] || continue
	traced=$((traced + 1))
	(cd "$o" && timeout 180 "$strace" -f -qq -Z -s 96 -o "$o/trace.$set" \
		"$py" "$top/tests/gpu/sandbox-layers.py" "$letters" "$o/work" >/dev/null 2>&1)
	failed "$o/trace.$set"
done

echo "== geak-eval's device probe, traced"
if [ -x "$top/bin/geak-eval" ] && [ -n "$strace" ]; then
	GEAK_SHAREDIR=$top/share GEAK_PYTHON=$py timeout 300 "$strace" -f -qq -Z -s 96 -o "$o/trace.list-gpus" \
		"$top/bin/geak-eval" --list-gpus > "$o/list-gpus.json" 2> "$o/list-gpus.err"
	echo "list-gpus: $(head -c 1500 "$o/list-gpus.json")"
	failed "$o/trace.list-gpus"
fi

echo "== bubblewrap"
if [ -n "$bwrap" ]; then
	devs=
	for d in /dev/nvidia* /dev/kfd /dev/dri; do
		[ -e "$d" ] && devs="$devs --dev-bind $d $d"
	done
	base="--unshare-pid --unshare-ipc --unshare-net --die-with-parent --ro-bind / / --dev /dev $devs
		--proc /proc --tmpfs /tmp --bind $o/work $o/work --chdir $o/work"
	for variant in "plain" "user --unshare-user --uid 65534 --gid 65534" "caps --cap-drop ALL" \
		"newsession --new-session --cap-drop ALL"; do
		name=${variant%% *} extra=${variant#"$name"}
		# shellcheck disable=SC2086
		line=$(timeout 120 "$bwrap" $base $extra "$py" "$top/tests/gpu/sandbox-layers.py" "" "$o/work" \
			2>"$o/err.bwrap-$name" | tail -n 1)
		echo "bwrap $name: ${line:-no result: $(tail -n 2 "$o/err.bwrap-$name" | tr '\n' ' ')}"
	done
	t0=$(date +%s.%N)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		# shellcheck disable=SC2086
		"$bwrap" $base /bin/true || echo "bwrap /bin/true failed"
	done
	t1=$(date +%s.%N)
	echo "bwrap start to exit of /bin/true: $(awk "BEGIN { printf \"%.1f\", ($t1 - $t0) * 100 }") ms each"
fi
