#!/bin/sh
unit=test-record . "$(dirname "$0")/unit.sh"
