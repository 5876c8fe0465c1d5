#!/bin/sh
# geak-eval reads a job's files as files a sandboxed process made: a
# candidate that leaves a link to /dev/zero, a FIFO or a huge file where
# geak-eval reads its output is rejected, and geak-eval stays bounded in
# time and memory (under a watchdog).  A reference that writes beside its
# run folder leaves nothing in the cache: only its profile is kept.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 9

c=$top/tests/cheats
tag=t$$
# The reference writes beside its working folder, then is the usual one.
{ printf 'import os\nfor _p in ("../geak-ref-%s", "../../geak-ref-%s"):\n' "$tag" "$tag"
  printf '    try:\n        open(_p, "w").write("left\\n")\n    except OSError:\n        pass\n'
  cat "$c/add_reference.py"; } > ref.py
# record NAME PYTHON: a candidate that runs PYTHON in its job folder at
# import, then is the honest kernel.
record() {
	{ printf '%s\n' "$2"; cat "$c/honest.py"; } > code.py
	jq -nc --rawfile ref ref.py --rawfile test "$c/add_test.py" --rawfile code code.py \
		--arg name "$1" '{schema: 1, id: ("plain/add/" + $name), probe: $name, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test}}'
}
{
	record link 'import os; os.symlink("/dev/zero", "stdout.txt.cut")'
	record fifo 'import os; os.mkfifo("stderr.txt.cut")'
	record huge 'open("stdout.txt.cut", "wb").truncate(16 << 30)'
	record honest 'pass'
} > in.jsonl

# The watchdog: a time limit, an address-space limit (not under ASan,
# which reserves terabytes), and geak-eval's resident size polled.
mkdir tmp
(
	[ -n "$GEAK_SANITIZE" ] || ulimit -S -v 4000000
	exec timeout -s KILL 240 geak-eval -j 1 --cpu --static off --cache cache --tmpdir tmp \
		--timeout 30 --compile-timeout 60 --memory-limit 2048 in.jsonl > out.jsonl 2> err.txt
) &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
	for p in $(pgrep -x geak-eval); do
		[ "$(readlink "/proc/$p/cwd")" = "$scratch" ] || continue
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
	done
	sleep 0.2
done
wait "$pid"
st=$?
check_same "geak-eval ends by itself, within the watchdog's time and memory" 0 "$st"
[ "$st" = 0 ] || sed 's/^/# /' err.txt | tail -n 20
limit=400000
[ -n "$GEAK_SANITIZE" ] && limit=1500000
if [ "$peak" -lt "$limit" ]; then
	ok "geak-eval's resident size stays small ($peak kB)"
else
	not_ok "geak-eval's resident size stays small ($peak kB, want < $limit)"
fi
ev() { jq -r --arg p "$1" "select(.probe == \$p) | .eval | $2" out.jsonl; }
check_match "a link to /dev/zero as stdout.txt.cut: rejected, and said why" \
	'^false cheat .*stdout.txt.cut was not read: it is a symbolic link' \
	"$(ev link '"\(.exec) \(.reason) \(.message)"')"
check_match "a FIFO as stderr.txt.cut: rejected, and said why" \
	'^false cheat .*stderr.txt.cut was not read: it is not a regular file' \
	"$(ev fifo '"\(.exec) \(.reason) \(.message)"')"
check_match "a 16 GiB stdout.txt.cut: rejected, and said why" \
	'^false cheat .*stdout.txt.cut was not read: it is larger' \
	"$(ev huge '"\(.exec) \(.reason) \(.message)"')"
check_same "the honest candidate passes" true "$(ev honest .exec)"
check_same "every record comes out" 4 "$(jq -s length out.jsonl)"
check_same "the reference's writes beside its run folder are not in the cache" "" \
	"$(find cache -name "geak-ref-$tag*")"
check_same "the cached profile holds the profile alone" "masks.pt profile.json profile.pt spec.json" \
	"$(ls cache/profile/*/ | sort | tr '\n' ' ' | sed 's/ $//')"
done_testing
