#!/bin/sh
unit=test-roofline . "$(dirname "$0")/unit.sh"
