#!/bin/sh
unit=test-secrets . "$(dirname "$0")/unit.sh"
