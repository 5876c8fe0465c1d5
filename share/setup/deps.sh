#!/bin/sh
# Set up a machine for geak: the C libraries (Debian packages) and the
# evaluation harness's Python environment (.venv).  Installs only what is
# missing.  Where it cannot install (not root, not Debian, no network) it
# prints what is missing and how to get it, and fails (after setting up
# what it can).
#
# torch is built for one kind of machine, so the environment gets the
# build for this one:
#   TORCH=auto (default)  CUDA where an NVIDIA GPU is found (nvidia-smi,
#                         /proc/driver/nvidia, libcuda with /dev/nvidiactl),
#                         ROCm where an AMD GPU is (rocminfo, /dev/kfd with
#                         ROCm or libamdhip64), else the CPU build
#   TORCH=cuda|rocm|cpu   that build, whatever is found
# The CPU build is share/harness/requirements.txt as pinned.  For CUDA or
# ROCm a Python here whose torch already uses the GPU ($GEAK_PYTHON, else
# $PYTHON or python3) is taken as it is: .venv is made on it with
# --system-site-packages and nothing is installed.  Otherwise torch at
# requirements.txt's version comes from PyPI (CUDA; on x86_64 Linux PyPI's
# torch is the CUDA build) or from PyTorch's own index for the ROCm found
# (TORCH_INDEX=URL names another index), with the triton that torch
# requires in place of requirements.txt's, and numpy and pytest as pinned.
#
# DEPS_DRY_RUN=1: the Python environment only, nothing changed: say which
# build and why, and print the commands that would run.  DEPS_ROOT=DIR
# looks for /proc, /dev and /opt/rocm under DIR.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
venv=${GEAK_VENV:-$top/.venv}
req=$top/share/harness/requirements.txt
want=${TORCH:-auto}
dry=${DEPS_DRY_RUN:-}
root=${DEPS_ROOT:-}
rocm=${ROCM_PATH:-$root/opt/rocm}
py=${PYTHON:-python3}

case $want in
auto|cuda|rocm|cpu) ;;
*) echo "deps: TORCH=$want: want cuda, rocm, cpu or auto" >&2; exit 2 ;;
esac

say() { echo "deps: $*"; }
# A command, or in a dry run the command as it would run.
run() {
	if [ -n "$dry" ]; then
		say "would run: $*"
	else
		"$@"
	fi
}

debian_packages() {
# Debian package : what needs it
pkgs="gcc:cc make:make pkg-config:pkg-config libjansson-dev:jansson
libcurl4-openssl-dev:libcurl libarchive-dev:libarchive libcmocka-dev:cmocka
jq:jq perl:prove mandoc:mandoc clang:clang python3-venv:python3-venv
util-linux:flock slurmctld:slurmctld slurmd:slurmd slurm-client:sbatch munge:munged"

missing=
for p in $pkgs; do
	deb=${p%%:*}
	dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $deb"
done
# A Python from elsewhere (pyenv, a distribution) brings its own venv.
if printf %s "$missing" | grep -q python3-venv && python3 -c 'import venv, ensurepip' 2>/dev/null; then
	missing=$(printf %s "$missing" | sed 's/ python3-venv//')
fi

if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing Debian packages:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null &&
		apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
			echo "deps: apt-get install failed for:$missing" >&2; return 1; }
	else
		echo "deps: missing:$missing" >&2
		echo "deps: as root on Debian or Ubuntu: apt-get install$missing" >&2
		echo "deps: elsewhere install jansson, libcurl, libarchive and cmocka" \
			"development files, jq, perl (prove), mandoc, clang, flock, and for" \
			"the cluster tests Slurm (slurmctld, slurmd, its client) and munge" >&2
		return 1
	fi
fi

# The fuzz test links libFuzzer, which Debian ships apart from clang
# (libclang-rt-N-dev, a recommendation that --no-install-recommends skips).
fuzz_links() {
	t=$(mktemp -d) || return 1
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' > "$t/f.c"
	clang -fsanitize=fuzzer,address "$t/f.c" -o "$t/f" >/dev/null 2>&1
	ok=$?
	rm -rf "$t"
	return $ok
}
if command -v clang >/dev/null 2>&1 && ! fuzz_links; then
	rt=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "deps: installing Debian package: $rt"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null &&
		apt-get install -y -qq --no-install-recommends "$rt" >/dev/null || {
			echo "deps: apt-get install failed for: $rt" >&2; return 1; }
	else
		echo "deps: clang cannot link libFuzzer: install $rt" >&2
		return 1
	fi
fi
}

# ---- which GPU this machine has ----

has_lib() {
	ldconfig -p 2>/dev/null | grep -q "[[:space:]]$1 "
}

# found: cuda, rocm or cpu; gpu_why: what said so.
detect_gpu() {
	found=cuda
	if command -v nvidia-smi >/dev/null 2>&1; then
		n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU [0-9]')
		[ "$n" -gt 0 ] && { gpu_why="nvidia-smi lists $n NVIDIA GPU(s)"; return; }
	fi
	for g in "$root"/proc/driver/nvidia/gpus/*; do
		[ -e "$g" ] && { gpu_why="$root/proc/driver/nvidia lists an NVIDIA GPU"; return; }
	done
	[ -e "$root/dev/nvidiactl" ] && has_lib libcuda.so.1 &&
		{ gpu_why="$root/dev/nvidiactl and libcuda.so.1"; return; }
	found=rocm
	for ri in "$(command -v rocminfo 2>/dev/null)" "$rocm/bin/rocminfo"; do
		[ -n "$ri" ] && [ -x "$ri" ] || continue
		arch=$("$ri" 2>/dev/null | sed -n 's/^ *Name: *\(gfx[0-9a-f]*\).*/\1/p' | head -n 1)
		[ -n "$arch" ] && { gpu_why="rocminfo lists an AMD GPU ($arch)"; return; }
	done
	[ -e "$root/dev/kfd" ] && { [ -d "$rocm" ] || has_lib libamdhip64.so; } &&
		{ gpu_why="$root/dev/kfd and ROCm"; return; }
	found=cpu
	gpu_why="no GPU found by nvidia-smi, /proc/driver/nvidia, rocminfo or /dev/kfd"
}

# ---- what a Python has ----

# One line: the torch build (cuda, rocm, cpu, or - when torch does not
# import), the GPUs it sees, then the versions of torch, triton, numpy and
# pytest (- for one that does not import).
probe_script='
import sys
def version(name):
    try:
        return str(__import__(name).__version__)
    except Exception:
        return "-"
try:
    import torch
except Exception:
    print("- 0 - - %s %s" % (version("numpy"), version("pytest")))
    sys.exit(0)
kind = "rocm" if getattr(torch.version, "hip", None) else "cuda" if torch.version.cuda else "cpu"
try:
    n = torch.cuda.device_count() if kind != "cpu" and torch.cuda.is_available() else 0
except Exception:
    n = 0
print(kind, n, torch.__version__, version("triton"), version("numpy"), version("pytest"))
'
probe() {
	"$1" -c "$probe_script" 2>/dev/null | tail -n 1
}

# The pin of a package in requirements.txt.
pin() {
	sed -n "s/^$1==\\([^ ]*\\).*/\\1/p" "$req"
}

label() {
	case $1 in cuda) echo CUDA ;; rocm) echo ROCm ;; *) echo "the CPU" ;; esac
}

# ---- the CPU build: requirements.txt as pinned ----

setup_cpu() {
if [ -n "$dry" ]; then
	say "torch: the CPU build ($why)"
	run "$py" -m venv "$venv"
	run "$venv/bin/python" -m pip install -q -r "$req"
	exit 0
fi
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, triton, numpy, pytest' 2>/dev/null &&
   [ "$venv/.req" -nt "$req" ] 2>/dev/null; then
	echo "deps: $venv is up to date"
	exit 0
fi
command -v "$py" >/dev/null 2>&1 || { echo "deps: no $py: install Python 3.10 or newer" >&2; exit 1; }
echo "deps: building $venv (torch CPU build, triton, numpy, pytest)"
"$py" -m venv "$venv" || { echo "deps: cannot create $venv" >&2; exit 1; }
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1
# pip's notes about unused local package folders are noise here.
{ "$venv/bin/python" -m pip install -q -r "$req" 2>&1 || echo "deps: pip-failed"; } |
	grep -v '^WARNING: Location' | tee "$venv/.pip.log" | grep -q 'deps: pip-failed' && {
	cat "$venv/.pip.log" >&2; echo "deps: pip install -r $req failed" >&2; exit 1; }
"$venv/bin/python" -c 'import torch, triton, numpy, pytest' || exit 1
touch "$venv/.req"
"$venv/bin/python" -m pip freeze > "$venv/.freeze" 2>/dev/null
echo "deps: $venv ready: $("$venv/bin/python" -c 'import torch, triton, numpy; print("torch", torch.__version__, "triton", triton.__version__, "numpy", numpy.__version__)')"
}

# ---- a GPU build ----

# A probe line's fields: kind gpus torch triton numpy pytest.
uses_gpu() {
	[ "$1" = "$kind" ] && [ "$2" -gt 0 ] 2>/dev/null && [ "$4" != - ]
}

# The folder of a program, without detours (a venv's python is a link).
bindir() {
	(cd "$(dirname "$1")" 2>/dev/null && pwd -P)
}

# The harness's other packages as pinned, that the environment lacks.
missing_pins() {
	m=
	[ "$1" = - ] && m="numpy==$(pin numpy)"
	[ "$2" = - ] && m="${m:+$m }pytest==$(pin pytest)"
	echo "$m"
}

# Where pip is to install them, and what to do when it cannot.
install_rest() {
	[ -n "$1" ] || return 0
	# shellcheck disable=SC2086
	run "$venv/bin/python" -m pip install -q $1 && return 0
	echo "deps: pip could not install $1 into $venv (see above)" >&2
	echo "deps: where the network is reachable: $venv/bin/python -m pip install $1" >&2
	exit 1
}

# .venv on a Python whose torch uses the GPU: its packages seen, none
# installed (but numpy or pytest where it lacks them).
venv_on() {
	cand=$1
	shift
	say "using the torch of $cand: torch $3 built for $(label "$1"), sees $2 GPU(s), triton $4"
	# A Python without ensurepip makes a venv without pip, which this one
	# needs only where numpy or pytest are missing.
	run "$cand" -m venv --clear --system-site-packages "$venv" ||
	run "$cand" -m venv --clear --system-site-packages --without-pip "$venv" ||
		{ echo "deps: cannot create $venv" >&2; exit 1; }
	# A venv's packages are not a system's: the new one is told of them.
	base=$("$cand" -c 'import site, sys
if sys.prefix != sys.base_prefix:
    print("\n".join(site.getsitepackages()))' 2>/dev/null)
	if [ -n "$base" ]; then
		if [ -n "$dry" ]; then
			say "would write $venv's geak-base.pth: $(echo $base)"
		else
			site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))') &&
			printf '%s\n' "$base" > "$site/geak-base.pth" ||
				{ echo "deps: cannot point $venv at $cand's packages" >&2; exit 1; }
		fi
	fi
	rest=$(missing_pins "$5" "$6")
	[ -z "$rest" ] && say "nothing installed"
	install_rest "$rest"
}

# The index that has torch for the ROCm installed here.
rocm_index() {
	v=$(sed -n '1s/^\([0-9]*\.[0-9]*\).*/\1/p' "$rocm/.info/version" 2>/dev/null)
	[ -n "$v" ] && echo "https://download.pytorch.org/whl/rocm$v"
}

# The CUDA version the driver runs, as nvidia-smi says it (12.8).
driver_cuda() {
	nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\)\.\([0-9]*\).*/\1.\2/p' | head -n 1
}

reachable() {
	"$py" -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=15)' "$1" >/dev/null 2>&1
}

# What to do when no GPU build can be had here, on stderr.
advise() {
	echo "deps: $1" >&2
	shift
	for line in "$@"; do
		echo "deps:   $line" >&2
	done
	echo "deps: or take a Python whose torch already uses the GPU: GEAK_PYTHON=/path/to/python make deps" >&2
	echo "deps: or evaluate on the CPU: make deps TORCH=cpu (then geak-eval --cpu)" >&2
	exit 1
}

install_gpu() {
	torch_pin=$(pin torch)
	rest="numpy==$(pin numpy) pytest==$(pin pytest)"
	index=${TORCH_INDEX:-}
	if [ "$kind" = rocm ] && [ -z "$index" ] && ! index=$(rocm_index); then
		advise "no ROCm version found in $rocm/.info/version: name the index of torch for this machine's ROCm" \
			"make deps TORCH=rocm TORCH_INDEX=https://download.pytorch.org/whl/rocmX.Y"
	fi
	from=${index:-PyPI}
	want_cmd="$venv/bin/python -m pip install${index:+ --index-url $index} torch==$torch_pin"
	if [ -n "$index" ] && ! reachable "$index/torch/"; then
		advise "$index cannot be reached from here: where it can, run" \
			"${py} -m venv --clear $venv" "$want_cmd" "$venv/bin/python -m pip install $rest"
	fi
	say "installing torch $torch_pin for $(label "$kind") from $from (with the triton it requires), $rest"
	run "$py" -m venv --clear "$venv" || { echo "deps: cannot create $venv" >&2; exit 1; }
	[ -n "$dry" ] || "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1
	# shellcheck disable=SC2086
	run "$venv/bin/python" -m pip install -q ${index:+--index-url "$index"} "torch==$torch_pin" ||
		advise "pip could not install torch $torch_pin from $from (see above): where it can be reached, run" \
			"$want_cmd" "$venv/bin/python -m pip install $rest"
	install_rest "$rest"
	[ -n "$dry" ] && exit 0
	# shellcheck disable=SC2046
	set -- $(probe "$venv/bin/python")
	uses_gpu "$@" && return 0
	if [ "$kind" = cuda ]; then
		cu=$(driver_cuda | tr -d .)
		advise "the torch installed ($3, built for $1) sees no GPU here: install one built for the driver's CUDA${cu:+ (nvidia-smi: CUDA $(driver_cuda))}" \
			"make deps TORCH=cuda TORCH_INDEX=https://download.pytorch.org/whl/cu${cu:-XYZ}"
	fi
	advise "the torch installed ($3, built for $1) sees no GPU here: name the index for this machine's ROCm" \
		"make deps TORCH=rocm TORCH_INDEX=https://download.pytorch.org/whl/rocmX.Y"
}

setup_gpu() {
	say "torch: a $(label "$kind") build ($why)"
	if [ -x "$venv/bin/python" ]; then
		# shellcheck disable=SC2046
		set -- $(probe "$venv/bin/python")
		if [ $# -eq 6 ] && uses_gpu "$@" && [ "$5" != - ] && [ "$6" != - ]; then
			say "$venv is up to date: torch $3 built for $(label "$1"), sees $2 GPU(s), triton $4"
			exit 0
		fi
	fi
	here=$(bindir "$venv/bin/python")
	took=
	for cand in ${GEAK_PYTHON:-} "$py"; do
		c=$(command -v "$cand" 2>/dev/null) || continue
		[ -n "$here" ] && [ "$(bindir "$c")" = "$here" ] && continue
		# shellcheck disable=SC2046
		set -- $(probe "$c")
		[ $# -eq 6 ] || continue
		if uses_gpu "$@"; then
			venv_on "$c" "$@"
			took=$c
			break
		fi
		[ "$1" != - ] && say "not $c: its torch $3 is built for $(label "$1") and sees $2 GPU(s)"
	done
	[ -n "$took" ] || install_gpu
	[ -n "$dry" ] && exit 0
	touch "$venv/.req"
	"$venv/bin/python" -m pip freeze > "$venv/.freeze" 2>/dev/null
	# shellcheck disable=SC2046
	set -- $(probe "$venv/bin/python")
	say "$venv ready: torch $3 built for $(label "$1"), sees $2 GPU(s), triton $4, numpy $5, pytest $6"
}

# The Python environment is set up even where Debian packages are
# missing (they are said first), and then the run fails.
debian=ok
[ -n "$dry" ] || debian_packages || debian=
kind=$want
why="TORCH=$want"
if [ "$want" = auto ]; then
	detect_gpu
	kind=$found
	why=$gpu_why
fi
case $kind in
cpu) (setup_cpu) ;;
*) (setup_gpu) ;;
esac
status=$?
[ -n "$debian" ] || { echo "deps: the Debian packages above are still missing" >&2; exit 1; }
exit $status
