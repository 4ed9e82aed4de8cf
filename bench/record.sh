#!/bin/bash
# Overhead of `plumb record` against `perf record -g` on the same CPU-bound target at the same rate (~1 kHz),
# side by side in one run: the target's wall time under each, as a ratio of its bare wall time (medians).
set -eu
BUILD=${BUILD:-build}
T="$BUILD/targets/split"
RUNS=${RUNS:-5}
SECS=${SECS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "perf is not installed (Debian linux-perf); skipping"; exit 0; }

# The target runs for a fixed wall time, so measure work done instead: its printed round count.
rounds() { awk '/^rounds/ {print $2}' "$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for i in $(seq "$RUNS"); do
	"$T" "$SECS" >"$tmp/bare.$i"
	PLUMB_DEBUG=1 "$BUILD/plumb" record --unwind fp --interval 0.001 -o "$tmp/p.folded" -- "$T" "$SECS" >"$tmp/pfp.$i" 2>/dev/null
	PLUMB_DEBUG=1 "$BUILD/plumb" record --interval 0.001 -o "$tmp/p.folded" -- "$T" "$SECS" >"$tmp/pdw.$i" 2>/dev/null
	perf record -q -g -F 1000 -o "$tmp/perf.data" -- "$T" "$SECS" >"$tmp/perf.$i" 2>/dev/null
done
bare=$(for i in $(seq "$RUNS"); do rounds "$tmp/bare.$i"; done | median)
pfp=$(for i in $(seq "$RUNS"); do rounds "$tmp/pfp.$i"; done | median)
pdw=$(for i in $(seq "$RUNS"); do rounds "$tmp/pdw.$i"; done | median)
perf=$(for i in $(seq "$RUNS"); do rounds "$tmp/perf.$i"; done | median)
awk -v b="$bare" -v f="$pfp" -v d="$pdw" -v p="$perf" 'BEGIN {
	printf "work done in %ss at 1 kHz (median of rounds; higher is better): bare %d, plumb fp %d, plumb dwarf %d, perf -g %d\n", '"$SECS"', b, f, d, p
	printf "slowdown vs bare: plumb fp %.3fx, plumb dwarf %.3fx, perf record -g %.3fx\n", b/f, b/d, b/p
	printf "plumb fp / perf -g overhead ratio: %.2f (<= 1 means plumb costs no more than perf)\n", (b/f-1)/((b/p-1) > 0.0001 ? (b/p-1) : 0.0001)
}'
