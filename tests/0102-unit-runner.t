#!/bin/sh
unit=test-runner . "$(dirname "$0")/unit.sh"
