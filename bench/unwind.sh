#!/bin/bash
# DWARF unwinding, plumb against perf, side by side in one run on the same no-frame-pointer target
# (split3-nofp, a fixed amount of work, 48-deep recursion in one path) at the same rate (1 kHz cpu-clock,
# 16 KiB stack copies):
#   1. the cost of one unwind (bench/unwind_cost.c): plumb's per-address rule cache vs libdw for every frame;
#   2. the overhead: the target's own CPU time (user + sys: the kernel's stack copies at each sample are charged
#      to it) and its launch-to-exit wall time under `plumb record` vs `perf record --call-graph dwarf`, and the
#      profiler's own CPU time to get to a folded file -- on a loaded machine wall time is mostly other
#      people's work, CPU time is ours;
#   3. the time from the target's exit to a folded file: plumb vs perf record + perf script + a collapse
#      (bench/collapse-perf.awk);
#   4. plumb's peak RSS for a short and a long run (bounded: it grows with distinct stacks, not run length).
# Medians of RUNS (default 3). RSS_SECONDS (default 20) is the long run; the contract is 60 s: RSS_SECONDS=60.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-800}        # about 2 s of work on this machine
RSS_SECONDS=${RSS_SECONDS:-20}
T="$BUILD/targets/split3-nofp"
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "perf is not installed (Debian linux-perf); skipping"; exit 0; }
[ -x "$T" ] || { echo "missing $T (make $T)"; exit 1; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
cputime() { tail -n 1 "$tmp/cpu" | awk '{printf "%.3f\n", $1 + $2}'; }
timed() { /usr/bin/time -f "%U %S" -o "$tmp/cpu" "$@"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a - b}'; }
stamp() { awk '{print $1}' "$tmp/exit"; }   # the target's exit time
tcpu() { awk '{print $2}' "$tmp/exit"; }    # the target's own CPU seconds

# 1. Cost of one unwind.
cc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -Iinclude "$HERE/unwind_cost.c" "$BUILD/libplumbcore.a" \
	$(pkg-config --libs libdw libelf zlib jansson inih) -liberty -lpthread -lm -ldl -lrt -o "$tmp/unwind_cost"
for i in $(seq "$RUNS"); do "$tmp/unwind_cost" >"$tmp/cost.$i"; done
field() { for i in $(seq "$RUNS"); do awk -v k="$1" '$1 == k {print $2}' "$tmp/cost.$i"; done | median; }
frames=$(field frames_per_sample)
cached=$(field cached_us_per_sample)
libdw=$(field libdw_us_per_sample)
awk -v f="$frames" -v c="$cached" -v l="$libdw" 'BEGIN {
	printf "one unwind of %d frames: plumb (rule cache) %.2f us, libdw CFI for every frame %.2f us: cache/libdw %.2f\n", f, c, l, c/l
	printf "  (perf script spends ~300 us per sample unwinding, symbolizing and printing: NOTES.md)\n"
}'

# 2 and 3. Overhead and exit-to-folded, alternating tools in each round.
for i in $(seq "$RUNS"); do
	t0=$(now)
	EXIT_STAMP="$tmp/exit" timed "$T" -n "$ROUNDS" >/dev/null
	echo "$(sub "$(stamp)" "$t0")" >>"$tmp/bare"
	tcpu >>"$tmp/bare.tcpu"

	t0=$(now)
	EXIT_STAMP="$tmp/exit" PLUMB_DEBUG=1 timed "$BUILD/plumb" record --interval 0.001 --stack-size 16384 \
		-o "$tmp/p.folded" -- "$T" -n "$ROUNDS" >/dev/null 2>"$tmp/plumb.err"
	t1=$(now)
	echo "$(sub "$(stamp)" "$t0")" >>"$tmp/plumb.run"
	echo "$(sub "$t1" "$(stamp)")" >>"$tmp/plumb.post"
	tcpu >>"$tmp/plumb.tcpu"
	awk -v a="$(cputime)" -v b="$(tcpu)" 'BEGIN {printf "%.3f\n", a - b}' >>"$tmp/plumb.cpu"

	t0=$(now)
	EXIT_STAMP="$tmp/exit" timed perf record -q -e cpu-clock -c 1000000 --call-graph dwarf,16384 -o "$tmp/perf.data" \
		-- "$T" -n "$ROUNDS" >/dev/null 2>&1
	c1=$(cputime)
	tcpu >>"$tmp/perf.tcpu"
	c1=$(awk -v a="$c1" -v b="$(tcpu)" 'BEGIN {printf "%.3f\n", a - b}')
	timed sh -c 'perf script -i "$1" 2>/dev/null | awk -f "$2" >"$3"' sh "$tmp/perf.data" "$HERE/collapse-perf.awk" \
		"$tmp/perf.folded"
	t1=$(now)
	awk -v a="$c1" -v b="$(cputime)" 'BEGIN {printf "%.3f\n", a + b}' >>"$tmp/perf.cpu"
	echo "$(sub "$(stamp)" "$t0")" >>"$tmp/perf.run"
	echo "$(sub "$t1" "$(stamp)")" >>"$tmp/perf.post"
done
bare=$(median <"$tmp/bare")
prun=$(median <"$tmp/plumb.run")
qrun=$(median <"$tmp/perf.run")
ppost=$(median <"$tmp/plumb.post")
qpost=$(median <"$tmp/perf.post")
btc=$(median <"$tmp/bare.tcpu")
ptc=$(median <"$tmp/plumb.tcpu")
qtc=$(median <"$tmp/perf.tcpu")
pcpu=$(median <"$tmp/plumb.cpu")
qcpu=$(median <"$tmp/perf.cpu")
psamples=$(awk '{s += $NF} END {print s}' "$tmp/p.folded")
qsamples=$(awk '{s += $NF} END {print s}' "$tmp/perf.folded")
awk -v b="$bare" -v p="$prun" -v q="$qrun" -v pp="$ppost" -v qp="$qpost" -v ps="$psamples" -v qs="$qsamples" \
	-v bt="$btc" -v pt="$ptc" -v qt="$qtc" -v pc="$pcpu" -v qc="$qcpu" 'BEGIN {
	printf "target CPU time (median of '"$RUNS"'): bare %.3f s, under plumb dwarf %.3f s (%.3fx), under perf --call-graph dwarf %.3f s (%.3fx)\n", bt, pt, pt/bt, qt, qt/bt
	printf "  overhead on the target plumb/perf: %.2f (<= 1: plumb costs the target no more than perf)\n", ((pt-bt) > 0 ? (pt-bt) : 0) / ((qt-bt) > 0.001 ? (qt-bt) : 0.001)
	printf "profiler CPU time, launch to folded file: plumb %.3f s, perf record + perf script + collapse %.3f s: plumb/perf %.3f\n", pc, qc, pc/qc
	printf "target launch-to-exit wall time (noisy on a loaded machine): bare %.3f s, plumb dwarf %.3f s (%.3fx), perf --call-graph dwarf %.3f s (%.3fx)\n", b, p, p/b, q, q/b
	printf "  overhead plumb/perf: %.2f (<= 1: plumb costs no more than perf)\n", ((p-b) > 0 ? (p-b) : 0) / ((q-b) > 0.001 ? (q-b) : 0.001)
	printf "exit to folded file: plumb %.3f s, perf record + perf script + collapse %.3f s: plumb/perf %.3f\n", pp, qp, pp/qp
	printf "  (samples in the last folded files: plumb %d, perf %d)\n", ps, qs
}'

# 4. Peak RSS, short and long run at 1 kHz.
rss() {
	/usr/bin/time -f "%M" -o "$tmp/rss" env PLUMB_DEBUG=1 "$BUILD/plumb" record --interval 0.001 \
		-o "$tmp/r.folded" -- "$T" "$1" >/dev/null 2>&1
	tail -n 1 "$tmp/rss"
}
short=$(rss 5)
long=$(rss "$RSS_SECONDS")
awk -v s="$short" -v l="$long" -v n="$RSS_SECONDS" 'BEGIN {
	printf "plumb peak RSS at 1 kHz: 5 s %.1f MiB, %d s %.1f MiB (long/short %.2f; contract: under 64 MiB for 60 s)\n", s/1024, n, l/1024, l/s
}'
