#!/bin/sh
# What the sandbox costs on this machine: starting a program under the
# runner's layers (tests/helpers/sandbox-bench: /bin/true and the
# harness's Python), the same under bubblewrap where it is installed, for
# comparison, and a job through the warm worker (the median of N static
# jobs: each is a relay and a job forked from it).
#
#   tests/bench/sandbox.sh [N]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-30}
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=$top/.venv/bin/python}"
export GEAK_SHAREDIR GEAK_PYTHON
bench=$top/tests/helpers/sandbox-bench
[ -x "$bench" ] || { echo "sandbox.sh: $bench is not built (make units)" >&2; exit 3; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geak-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The Python environment's directories, as the worker's probe finds them.
pyro=$("$GEAK_PYTHON" -c 'import os, sys
for p in {sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix)}: print("-r", p)')

echo "== /bin/true, $n runs each"
"$bench" -n "$n" /bin/true || exit 1
echo "== $GEAK_PYTHON -c pass"
# shellcheck disable=SC2086  # "-r PATH" pairs
"$bench" -n "$n" $pyro "$GEAK_PYTHON" -c pass || exit 1

loop() { # the ms per run of "$@", n times from this shell
	t0=$(date +%s%N)
	i=0
	while [ $i -lt "$n" ]; do
		"$@" > /dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
		i=$((i + 1))
	done
	echo $(( ($(date +%s%N) - t0) / n / 1000 )) | awk '{ printf "%8.2f ms per run\n", $1 / 1000 }'
}
if command -v bwrap > /dev/null; then
	echo "== bubblewrap (--unshare-all, /usr and the Python environment read-only), from the shell"
	bw="bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/bin /bin
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp"
	for p in $(printf '%s\n' "$pyro" | awk '{ print $2 }' | sort -u); do
		bw="$bw --ro-bind $p $p"
	done
	printf 'plain /bin/true   '; loop /bin/true
	# shellcheck disable=SC2086
	printf 'bwrap /bin/true   '; loop $bw /bin/true
	printf 'plain python      '; loop "$GEAK_PYTHON" -c pass
	# shellcheck disable=SC2086
	printf 'bwrap python      '; loop $bw "$GEAK_PYTHON" -c pass
fi

echo "== static jobs through the warm worker (CPU mode), $n of them"
"$GEAK_PYTHON" - "$GEAK_SHAREDIR/harness/geak_worker.py" "$tmp" "$n" <<'EOPY'
import json, os, socket, subprocess, sys, time
script, tmp, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ours, theirs = socket.socketpair()
worker = subprocess.Popen([sys.executable, "-u", "-B", script], close_fds=False,
                          env=dict(os.environ, GEAK_EVAL_CPU="1"),
                          preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
theirs.close()
rfile, wfile = ours.makefile("rb"), ours.makefile("wb")
wfile.write(b'{"op": "start", "sandbox": {}}\n')
wfile.flush()
rfile.readline()
walls = []
for i in range(n):
    d = os.path.join(tmp, f"job{i}")
    os.makedirs(d)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump({"code": "def f(x):\n    return x\n"}, fp)
    t = time.monotonic()
    wfile.write((json.dumps({"op": "static", "dir": d, "nonce": "n", "timeout": 60,
                             "compile_timeout": 60}) + "\n").encode())
    wfile.flush()
    resp = json.loads(rfile.readline())
    walls.append(time.monotonic() - t)
wfile.write(b'{"op": "quit"}\n')
wfile.flush()
worker.wait()
walls.sort()
print(f"median {walls[n // 2] * 1000:.1f} ms, fastest {walls[0] * 1000:.1f} ms a job; "
      f"its layers: {json.dumps(resp.get('sandbox'))}")
EOPY
