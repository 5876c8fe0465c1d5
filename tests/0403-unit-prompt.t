#!/bin/sh
# Unit tests of lib/prompt.c.
unit=test-prompt . "$(dirname "$0")/unit.sh"
