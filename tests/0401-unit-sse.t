#!/bin/sh
# The SSE parser, fed whole, in 1-byte chunks and split at every byte.
unit=test-sse . "$(dirname "$0")/unit.sh"
