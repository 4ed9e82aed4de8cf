#!/bin/bash
# What `plumb top` costs (docs/design.md §11: at most 3% of one core at the default rate on one target): plumb's
# own CPU time (user + system, from /proc/PID/stat as it ends) over its wall time, watching a one-process
# CPU-bound target (splitswitch) at the default 200 Hz with the default one-second redraw — full screen under
# tmux when it is installed, and in a pipe. Medians of RUNS (default 3) runs of SECS seconds (default 10).
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
SECS=${SECS:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
tmp=$(mktemp -d)
T="$BUILD/targets/splitswitch"
"$T" $((RUNS * SECS * 3 + 60)) >/dev/null &
target=$!
sock="plumb-bench-$$"
cleanup() {
	kill "$target" 2>/dev/null || true
	command -v tmux >/dev/null && tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# the CPU plumb used, in percent of one core: `ps`-like, from its own stat just before it exits
percent() { # TIMES-FILE: "user+sys-seconds wall-seconds"
	awk '{printf "%.2f\n", 100 * $1 / $2}' "$1"
}
TIMEFORMAT='%R %U %S'

for i in $(seq "$RUNS"); do
	# in a pipe: plain tables once a second
	line=$({ time PLUMB_DEBUG=1 "$BUILD/plumb" top --pid "$target" --seconds "$SECS" >"$tmp/plain.out" \
		2>/dev/null; } 2>&1 | tail -1)
	echo "$line" | awk '{print $2 + $3, $1}' >"$tmp/t"
	percent "$tmp/t" >>"$tmp/pipe"
	grep -c '^plumb top' "$tmp/plain.out" >>"$tmp/redraws"
	# full screen, under tmux (the time goes to a file: the screen is the pane's)
	if command -v tmux >/dev/null; then
		run="{ time PLUMB_DEBUG=1 $BUILD/plumb top --pid $target --seconds $SECS; } 2>$tmp/screen.time"
		tmux -L "$sock" -f /dev/null new-session -d -s b -x 120 -y 40 \
			"bash -c 'TIMEFORMAT=\"%R %U %S\"; $run'"
		while tmux -L "$sock" has-session -t b 2>/dev/null; do sleep 0.2; done
		tail -1 "$tmp/screen.time" | awk '{print $2 + $3, $1}' >"$tmp/t"
		percent "$tmp/t" >>"$tmp/screen"
	fi
done
echo "plumb top --pid (one CPU-bound process, 200 Hz, redraw every 1 s, ${SECS}s runs, median of $RUNS):"
echo "  in a pipe:   $(median <"$tmp/pipe")% of one core ($(median <"$tmp/redraws") redraws per run)"
if [ -s "$tmp/screen" ]; then
	echo "  full screen: $(median <"$tmp/screen")% of one core (under tmux)"
else
	echo "  full screen: tmux is not installed; not measured"
fi
echo "  budget: 3% of one core (docs/design.md §11)"
