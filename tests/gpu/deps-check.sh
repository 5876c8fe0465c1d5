#!/bin/sh
# tests/gpu/deps-check.sh [VENV]: make deps on a GPU machine, with or
# without network, then geak-eval --check on what it set up.
#
# Prints the GPUs the drivers list and the torch of python3, then what
# make deps chose: its dry run (the build, why, and the commands), the
# real run into VENV (default $TMPDIR/geak-deps-venv, so the tree's .venv
# is left alone), a second run (up to date), and geak-eval --check with
# that environment's Python.  Last, what --check says to a CPU build of
# torch on this machine (a stand-in Python that answers the probe as one):
# the fix it names, with the index for this driver.  Each step's exit
# status is printed; the summary at the end says what was chosen.  Where
# Debian packages are missing and cannot be installed (no network), make
# deps says so and exits 1 after setting up the Python environment.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-${TMPDIR:-/tmp}/geak-deps-venv}
cd "$top" || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

step() { printf '\n== %s\n' "$*"; }

step "the machine"
if command -v nvidia-smi > /dev/null 2>&1; then nvidia-smi -L; else echo "no nvidia-smi"; fi
[ -e /dev/kfd ] && echo "/dev/kfd is there"
command -v rocminfo > /dev/null 2>&1 && rocminfo 2>/dev/null | grep -m 3 'Name: *gfx'
echo "python3: $(command -v python3)"
python3 -c 'import sys, torch
print("Python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "hip", getattr(torch.version, "hip", None), "GPUs seen", torch.cuda.device_count())' 2>&1 | tail -n 1
echo "GEAK_PYTHON: ${GEAK_PYTHON:-(unset)}"

step "build geak-eval (or use the one carried here)"
make -s bin/geak-eval > "$work/build.log" 2>&1; echo "exit $?"
tail -n 5 "$work/build.log"

step "make deps, dry run (DEPS_DRY_RUN=1, GEAK_VENV=$venv)"
DEPS_DRY_RUN=1 GEAK_VENV=$venv make -s deps > "$work/dry.log" 2>&1
echo "exit $?"
cat "$work/dry.log"

step "make deps (GEAK_VENV=$venv, made afresh)"
rm -rf "$venv"
start=$(date +%s)
GEAK_VENV=$venv make -s deps > "$work/deps.log" 2>&1
status=$?
cat "$work/deps.log"
echo "exit $status, $(($(date +%s) - start)) s"

step "make deps again: up to date"
GEAK_VENV=$venv make -s deps > "$work/again.log" 2>&1
echo "exit $?"
tail -n 3 "$work/again.log"

step "the environment made"
ls -l "$venv/bin/python" 2>&1
grep -H include-system-site-packages "$venv/pyvenv.cfg" 2>&1
find "$venv" -name geak-base.pth -exec sh -c 'echo "$1:"; cat "$1"' sh {} \;
"$venv/bin/python" -c 'import torch, triton, numpy
print("torch", torch.__version__, torch.__file__)
print("triton", triton.__version__, "numpy", numpy.__version__)
print("GPUs torch sees:", [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])' 2>&1
echo "packages installed into it: $(find "$venv"/lib/python*/site-packages -maxdepth 1 -name '*.dist-info' 2>/dev/null | wc -l)"

step "geak-eval --check with it (GEAK_PYTHON=$venv/bin/python)"
GEAK_PYTHON=$venv/bin/python bin/geak-eval --check > "$work/check.log" 2>&1
check=$?
cat "$work/check.log"
echo "exit $check"

step "geak-eval --check given a CPU build of torch on this machine (a stand-in Python)"
cat > "$work/cpu-python" <<'EOF'
#!/bin/sh
echo '{"python": "3.12.3", "numpy": {"version": "2.3.5"}, "triton": {"version": "3.6.0"}, "torch": {"version": "2.13.0+cpu", "cuda": null, "hip": null, "gpus": []}}'
EOF
chmod +x "$work/cpu-python"
bin/geak-eval --check --python "$work/cpu-python" > "$work/cpu.log" 2>&1
echo "exit $?"
grep -E '^(GPUs|evaluating|FAILED)' "$work/cpu.log"

step "summary"
echo "chose: $(grep -E '^deps: torch:' "$work/deps.log" | sed 's/^deps: torch: //')"
grep -E '^deps: (using the torch of|installing torch|nothing installed|.* ready:)' "$work/deps.log"
echo "make deps: exit $status; geak-eval --check: exit $check, $(tail -n 1 "$work/check.log")"
