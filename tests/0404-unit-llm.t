#!/bin/sh
# Unit tests of the LLM client's parts (lib/llm*.c).
unit=test-llm . "$(dirname "$0")/unit.sh"
