#!/bin/bash
# `plumb record --all` beside `perf record -a -g` over the same busy window: two CPU-bound burners run the whole
# time, and each profiler samples every process for SECS seconds (default 5) at 200 Hz, one after the other.
# Reported per profiler: its CPU time (user + system) per sample taken, and the time from the end of sampling
# to a written folded profile (perf: `perf script` + the collapse step, as FlameGraph's users do; plumb: its own
# symbolizing and writing). Medians of RUNS (default 3). Needs root or perf_event_paranoid <= 0.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
SECS=${SECS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
command -v perf >/dev/null || { echo "perf is not installed (Debian linux-perf); skipping"; exit 0; }
T="$BUILD/targets/split"
"$T" $((RUNS * SECS * 6 + 60)) >/dev/null &
b1=$!
"$T" $((RUNS * SECS * 6 + 60)) >/dev/null &
b2=$!
trap 'kill $b1 $b2 2>/dev/null || true; rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
TIMEFORMAT='%R %U %S'

for i in $(seq "$RUNS"); do
	for unwind in fp dwarf; do
		line=$({ time PLUMB_DEBUG=1 "$BUILD/plumb" record --all --unwind "$unwind" --seconds "$SECS" \
			-o "$tmp/all.folded" 2>"$tmp/err"; } 2>&1 | tail -1)
		ticks=$(sed -n 's/^Sampled \([0-9]*\) ticks over \([0-9.]*\)s.*/\1/p' "$tmp/err")
		secs=$(sed -n 's/^Sampled \([0-9]*\) ticks over \([0-9.]*\)s.*/\2/p' "$tmp/err")
		[ -n "$ticks" ] || { cat "$tmp/err"; exit 1; }
		echo "$line" | awk -v n="$ticks" '{printf "%.1f\n", 1e6 * ($2 + $3) / n}' >>"$tmp/plumb.$unwind.cpu"
		echo "$line" | awk -v s="$secs" '{printf "%.3f\n", $1 - s}' >>"$tmp/plumb.$unwind.after"
	done
	line=$({ time perf record -q -a -g -F 200 -o "$tmp/perf.data" -- sleep "$SECS" >/dev/null 2>&1; } 2>&1 |
		tail -1)
	t=$(now)
	line2=$({ time perf script -i "$tmp/perf.data" 2>/dev/null |
		awk -f "$HERE/collapse-perf.awk" >"$tmp/perf.folded"; } 2>&1 | tail -1)
	after=$(awk -v a="$t" -v b="$(now)" 'BEGIN {printf "%.3f\n", b - a}')
	ticks=$(perf script -i "$tmp/perf.data" -F pid 2>/dev/null | wc -l)
	echo "$line $line2" | awk -v n="$ticks" '{printf "%.1f\n", 1e6 * ($2 + $3 + $5 + $6) / n}' >>"$tmp/perf.cpu"
	echo "$after" >>"$tmp/perf.after"
done
echo "every process for ${SECS}s at 200 Hz while two burners run (median of $RUNS):"
printf "  %-28s %12s %22s\n" "" "CPU per sample" "end to written profile"
row() { printf "  %-28s %10s us %20s s\n" "$1" "$(median <"$tmp/$2.cpu")" "$(median <"$tmp/$2.after")"; }
row "plumb record --all --unwind fp" plumb.fp
row "plumb record --all (dwarf)" plumb.dwarf
row "perf record -a -g + script" perf
echo "  (perf's CPU includes perf script and the collapse; plumb's includes symbolizing and writing)"
