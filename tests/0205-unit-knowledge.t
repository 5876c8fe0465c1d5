#!/bin/sh
# The shipped packs are read from this tree.
GEAK_SHAREDIR=$(cd "$(dirname "$0")/.." && pwd)/share
export GEAK_SHAREDIR
unset GEAK_KNOWLEDGE
unit=test-knowledge . "$(dirname "$0")/unit.sh"
