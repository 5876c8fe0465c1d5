#!/bin/sh
# The runner's unit tests again as a user that is not root: its
# namespaces and private root then come inside a user namespace.  Run by
# root only, through setpriv(1), as nobody.
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/tests/unit/test-runner
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	echo "1..0 # SKIP needs root and setpriv(1) to become nobody"
	exit 0
fi
if [ ! -x "$bin" ]; then
	echo "1..1"
	echo "not ok 1 - test-runner is not built (run make units)"
	exit 1
fi
# nobody must reach the binary and have a directory of its own to work in.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geak-unit-user.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cp "$bin" "$tmp/test-runner" && chmod 755 "$tmp" "$tmp/test-runner" || exit 1
cd "$tmp" || exit 1
CMOCKA_MESSAGE_OUTPUT=TAP TMPDIR=$tmp
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}
export CMOCKA_MESSAGE_OUTPUT TMPDIR ASAN_OPTIONS UBSAN_OPTIONS
chmod 1777 "$tmp"
setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/test-runner" 2>&1 |
	sed 's/^\([a-z][a-z-]*: \)/# \1/'
