#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every Triton kernel in share/corpus/ on the Triton CPU interpreter and
# compare it with its plain-torch reference (see tests/corpus_check.py).
cd "$(dirname "$0")/.." || exit 1
py="${GEAK_PYTHON:-$(pwd)/.venv/bin/python}"
if ! "$py" -c 'import triton, torch' >/dev/null 2>&1; then
    echo "1..0 # SKIP no triton in $py"
    exit 0
fi
exec "$py" tests/corpus_check.py
