#!/bin/bash
# `plumb dump` against the peers that show every thread's stack of a running process: `eu-stack -p` (elfutils)
# and `gdb -batch -ex 'thread apply all bt'`, on the same deadlocked 3-thread program (tests/targets/deadlock.c,
# no frame pointers), median wall time of RUNS each. plumb runs with a filled symbol cache (its second dump of the
# program, as a user's second look is). Also the target's stopped time, as plumb reports it (median).
# Goal: plumb dump at most 1.5x eu-stack.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-5}
T="$BUILD/targets/deadlock-nofp"
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export PLUMB_DEBUG=1 PLUMB_HOME="$tmp/home"

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
timed() { local s; s=$(now); "$@" >/dev/null 2>&1; awk -v s="$s" -v e="$(now)" 'BEGIN {print e - s}'; }

"$T" >"$tmp/out" &
pid=$!
for _ in $(seq 100); do grep -q deadlocked "$tmp/out" 2>/dev/null && break; sleep 0.05; done
sleep 0.2
"$BUILD/plumb" dump --pid "$pid" >/dev/null # the first dump fills the symbol cache
for _ in $(seq "$RUNS"); do
	timed "$BUILD/plumb" dump --pid "$pid" >>"$tmp/plumb"
	"$BUILD/plumb" dump --json --pid "$pid" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stopped_ns"] / 1e6)' >>"$tmp/stopped"
	if command -v eu-stack >/dev/null; then timed eu-stack -p "$pid" >>"$tmp/eu"; fi
	if command -v gdb >/dev/null; then timed gdb -nx -batch -p "$pid" -ex 'thread apply all bt' >>"$tmp/gdb"; fi
done
p=$(median <"$tmp/plumb")
s=$(median <"$tmp/stopped")
e=$([ -s "$tmp/eu" ] && median <"$tmp/eu" || echo 0)
g=$([ -s "$tmp/gdb" ] && median <"$tmp/gdb" || echo 0)
grep -q "TracerPid:	0" "/proc/$pid/status" || { echo "the target was left traced"; exit 1; }
awk -v p="$p" -v e="$e" -v g="$g" -v s="$s" -v n="$RUNS" 'BEGIN {
	printf "every thread of a 3-thread deadlocked process (median of %d, ms): plumb dump %.1f (target stopped %.2f ms), eu-stack -p %.1f, gdb thread apply all bt %.1f\n", n, p * 1000, s, e * 1000, g * 1000
	if (e > 0) printf "ratio plumb dump / eu-stack %.2fx (goal <= 1.5x: %s), plumb dump / gdb %.2fx\n", p / e, (p / e <= 1.5 ? "met" : "MISSED"), (g > 0 ? p / g : 0)
}'
