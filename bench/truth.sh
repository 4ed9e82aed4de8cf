#!/bin/bash
# The truth matrix's slow part (bench/truth.py; docs/design.md §5.2): shares of a program in a fixed rhythm and
# samples of a bursty one against their truth, beside perf in the same minutes, and what random intervals cost
# the sampling thread (against PREV_PLUMB, an earlier plumb with fixed intervals, when given).
set -u
BUILD=${BUILD:-build}
exec python3 "$(dirname "$0")/truth.py" "$@"
