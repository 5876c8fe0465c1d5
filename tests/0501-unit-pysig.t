#!/bin/sh
unit=test-pysig . "$(dirname "$0")/unit.sh"
