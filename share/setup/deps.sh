#!/bin/sh
# Set up a machine for geak: the C libraries (Debian packages) and the
# evaluation harness's Python environment (.venv, from
# share/harness/requirements.txt).  Installs only what is missing.  Where
# it cannot install (not root, not Debian) it prints what is missing and
# how to get it, and fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
venv=${GEAK_VENV:-$top/.venv}
req=$top/share/harness/requirements.txt

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
			echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
	else
		echo "deps: missing:$missing" >&2
		echo "deps: as root on Debian or Ubuntu: apt-get install$missing" >&2
		echo "deps: elsewhere install jansson, libcurl, libarchive and cmocka" \
			"development files, jq, perl (prove), mandoc, clang, flock, and for" \
			"the cluster tests Slurm (slurmctld, slurmd, its client) and munge" >&2
		exit 1
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
			echo "deps: apt-get install failed for: $rt" >&2; exit 1; }
	else
		echo "deps: clang cannot link libFuzzer: install $rt" >&2
		exit 1
	fi
fi

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch, triton, numpy, pytest' 2>/dev/null &&
   [ "$venv/.req" -nt "$req" ] 2>/dev/null; then
	echo "deps: $venv is up to date"
	exit 0
fi
py=${PYTHON:-python3}
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
