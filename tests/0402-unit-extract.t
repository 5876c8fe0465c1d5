#!/bin/sh
# Unit tests of lib/extract.c.
unit=test-extract . "$(dirname "$0")/unit.sh"
