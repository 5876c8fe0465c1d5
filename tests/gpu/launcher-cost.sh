#!/bin/sh
# tests/gpu/launcher-cost.sh: the per-process cost of Triton's launcher
# modules built again (tests/gpu/launcher-cost.py), three times over.
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=${GEAK_PYTHON:-python3}
for i in 1 2 3; do
	TRITON_CACHE_DIR=$(mktemp -d)
	export TRITON_CACHE_DIR
	"$py" "$here/launcher-cost.py" cold
	"$py" "$here/launcher-cost.py" warm
	find "$TRITON_CACHE_DIR" -name '*.so' -delete
	"$py" "$here/launcher-cost.py" "warm, launchers removed"
	rm -rf "$TRITON_CACHE_DIR"
done
