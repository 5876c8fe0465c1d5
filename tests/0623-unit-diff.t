#!/bin/sh
unit=test-diff . "$(dirname "$0")/unit.sh"
