# expect: no_output
# Cheat 15, harness-level exit: leave with status 0 before any check.
import os

os._exit(0)
