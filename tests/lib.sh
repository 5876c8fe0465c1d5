# tests/lib.sh: TAP helpers for the shell tests, sourced by tests/*.t.
# Each test script: `. "$(dirname "$0")/lib.sh"`, `plan N`, then checks.
top=$(cd "$(dirname "$0")/.." && pwd)
PATH="$top/bin:$top/tests/helpers:$PATH"
export PATH
GEAK_SHAREDIR="$top/share"
export GEAK_SHAREDIR
: "${GEAK_PYTHON:=$top/.venv/bin/python}"
export GEAK_PYTHON
# Nothing the tests run may see a real key, whatever the caller has set.
unset OPENAI_API_KEY ANTHROPIC_API_KEY AZURE_OPENAI_API_KEY GEMINI_API_KEY LLM_API_KEY
# Under SANITIZE=1 every leak or UB report fails the tool that made it.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}
export ASAN_OPTIONS UBSAN_OPTIONS

tap_n=0
tap_fail=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/geak-test.XXXXXX")
# GEAK_TEST_KEEP=DIR keeps what a test made there, to look at.
keep_scratch() {
	[ -n "${GEAK_TEST_KEEP:-}" ] && mkdir -p "$GEAK_TEST_KEEP" && cp -R "$scratch/." "$GEAK_TEST_KEEP/"
	rm -rf "$scratch"
}
trap keep_scratch EXIT
cd "$scratch" || exit 1
# Caches (geak-eval's results, Triton's kernels) start empty and stay here.
XDG_CACHE_HOME=$scratch/cache
TRITON_CACHE_DIR=$scratch/cache/triton
export XDG_CACHE_HOME TRITON_CACHE_DIR
# Test files run side by side (make check runs prove -j): each has its
# own GPU locks, and each torch one thread, since torch's threads spin
# waiting for each other when the files together want more cores than
# there are (a test of geak-eval's own choice unsets it).
GEAK_LOCK_DIR=$scratch/gpulock
OMP_NUM_THREADS=1
export GEAK_LOCK_DIR OMP_NUM_THREADS

plan() { echo "1..$1"; }

skip_all() { echo "1..0 # SKIP $*"; exit 0; }

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_fail=$((tap_fail + 1))
	echo "not ok $tap_n - $*"
}

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP $*"
}

# check NAME COMMAND...: passes when the command exits 0.
check() {
	msg=$1
	shift
	if "$@" >"$scratch/.out" 2>"$scratch/.err"; then
		ok "$msg"
	else
		not_ok "$msg"
		sed 's/^/# /' "$scratch/.err" | head -n 20
	fi
}

# check_fail NAME COMMAND...: passes when the command exits non-zero.
check_fail() {
	msg=$1
	shift
	if "$@" >"$scratch/.out" 2>"$scratch/.err"; then
		not_ok "$msg (exited 0)"
	else
		ok "$msg"
	fi
}

# check_same NAME WANT GOT: compares two strings.
check_same() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '# want: %s\n# got:  %s\n' "$2" "$3" | head -n 20
	fi
}

# check_match NAME REGEX STRING
check_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		ok "$1"
	else
		not_ok "$1"
		printf '# want match: %s\n# got: %s\n' "$2" "$3" | head -n 20
	fi
}

have_python() {
	[ -x "$GEAK_PYTHON" ] || command -v "$GEAK_PYTHON" >/dev/null 2>&1 || return 1
	"$GEAK_PYTHON" -c 'import torch, triton' 2>/dev/null
}

done_testing() {
	exit $((tap_fail > 0))
}

# add_kernel_file FILE: an honest Triton candidate for a plain "add" task
# (an add(x, y) of one masked elementwise kernel), written to FILE.
add_kernel_file() {
	cat > "$1" <<'EOF'
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK=128)
    return out
EOF
}
