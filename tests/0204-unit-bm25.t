#!/bin/sh
unit=test-bm25 . "$(dirname "$0")/unit.sh"
