#!/bin/sh
# Unit tests of lib/report/metrics.c and lib/memory.c (cmocka, TAP output).
top=$(cd "$(dirname "$0")/.." && pwd)
CMOCKA_MESSAGE_OUTPUT=TAP exec "$top/tests/unit/test-metrics"
