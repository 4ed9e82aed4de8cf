#!/bin/bash
# The kernel share question: kshare measures the share of its CPU time spent in kernel_work (reads of /dev/zero,
# system time) with its own thread CPU clock. plumb and perf (cpu-clock, the same rate) each launch it, then
# both attach to one run of it at once; each prints the share of samples whose innermost frame is in the kernel.
set -eu
BUILD=${BUILD:-build}
T="$BUILD/targets/kshare"
RUNS=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "perf is not installed (Debian linux-perf); skipping"; exit 0; }
export PLUMB_DEBUG=1

plumb_share() {
	awk '{n = $NF; $NF = ""; sub(/ $/, ""); t += n; k = split($0, f, ";"); if (f[k] ~ /_\[k\]$/) s += n}
	     END {printf "%.1f%% of %d", t ? 100 * s / t : 0, t}' "$1"
}
perf_share() {
	perf script -i "$1" -F ip 2>/dev/null | awk 'BEGIN {first = 1} /^[[:space:]]*$/ {first = 1; next}
		first {t++; if (length($1) == 16 && $1 >= "ffff800000000000") s++; first = 0}
		END {printf "%.1f%% of %d", t ? 100 * s / t : 0, t}'
}
truth() { grep -o 'kernel_work_share [0-9.]*' "$1" | awk '{print $2 "%"}'; }

for i in $(seq "$RUNS"); do
	"$BUILD/plumb" record --interval 0.001 -o "$tmp/l.folded" -- "$T" 2 8 2>"$tmp/l.err" >/dev/null
	perf record -q -e cpu-clock -c 1000000 -g -o "$tmp/l.data" -- "$T" 2 8 2>"$tmp/pl.err" >/dev/null
	echo "launch $i: plumb $(plumb_share "$tmp/l.folded") (target: $(truth "$tmp/l.err"));" \
		"perf $(perf_share "$tmp/l.data") (target: $(truth "$tmp/pl.err"))"
	"$T" 5 8 2>"$tmp/s.err" &
	pid=$!
	sleep 0.3
	"$BUILD/plumb" record --pid "$pid" --seconds 3 --interval 0.001 -o "$tmp/s.folded" 2>/dev/null &
	rec=$!
	perf record -q -e cpu-clock -c 1000000 -g -p "$pid" -o "$tmp/s.data" -- sleep 3 2>/dev/null >/dev/null
	wait "$rec"
	wait "$pid"
	echo "same run $i: plumb $(plumb_share "$tmp/s.folded"), perf $(perf_share "$tmp/s.data"); target: $(truth "$tmp/s.err")"
done
