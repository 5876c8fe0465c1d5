#!/bin/sh
unit=test-gpulock . "$(dirname "$0")/unit.sh"
