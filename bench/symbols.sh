#!/bin/bash
# Time to a written profile of a 0.3 s program: the bare run, `plumb record` with an empty symbol cache (the
# first run: debug information read and inflated) and with a filled one (the second run), and perf's
# `perf record -g` + `perf script` pipeline, side by side in one run (medians of wall time, and ratios to bare).
set -eu
BUILD=${BUILD:-build}
T="$BUILD/targets/benchwork"
RUNS=${RUNS:-7}
UNITS=${UNITS:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PLUMB_DEBUG=1

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
timed() { local s; s=$(now); "$@" >/dev/null 2>&1; awk -v s="$s" -v e="$(now)" 'BEGIN {print e - s}'; }

for i in $(seq "$RUNS"); do
	timed "$T" spin "$UNITS" >>"$tmp/bare"
	rm -rf "$tmp/home"
	PLUMB_HOME="$tmp/home" timed "$BUILD/plumb" record -o "$tmp/p.folded" -- "$T" spin "$UNITS" >>"$tmp/cold"
	PLUMB_HOME="$tmp/home" timed "$BUILD/plumb" record -o "$tmp/p.folded" -- "$T" spin "$UNITS" >>"$tmp/warm"
	if command -v perf >/dev/null; then
		timed sh -c "perf record -q -g -F 200 -o '$tmp/perf.data' -- '$T' spin '$UNITS' &&
			perf script -i '$tmp/perf.data' > '$tmp/perf.txt'" >>"$tmp/perf"
	fi
done
bare=$(median <"$tmp/bare")
cold=$(median <"$tmp/cold")
warm=$(median <"$tmp/warm")
perf=$( [ -s "$tmp/perf" ] && median <"$tmp/perf" || echo 0)
awk -v b="$bare" -v c="$cold" -v w="$warm" -v p="$perf" 'BEGIN {
	printf "time to a written profile of benchwork spin '"$UNITS"' (median of '"$RUNS"', s): bare %.3f, plumb first run %.3f, plumb second run %.3f, perf record -g + script %.3f\n", b, c, w, p
	printf "ratio to bare: plumb first %.2fx, plumb second %.2fx (goal <= 1.2x), perf pipeline %.2fx\n", c/b, w/b, (p > 0 ? p/b : 0)
	printf "plumb time after the target (second run / first run): %.0f%%\n", (c - b > 0 ? 100 * (w - b) / (c - b) : 0)
}'
