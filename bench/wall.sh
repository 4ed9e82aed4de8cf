#!/bin/bash
# The cost of --mode wall, against the peers that do the same job, in one run:
#   perf record -e cpu-clock -e context-switches -c 1 --call-graph dwarf  (the same mechanism, perf's way), and
#   periodic stop-and-read (bench/wall_stopread.c: ptrace-interrupt the thread at every tick, read its
#   registers and stack), the mechanism plumb did not take.
# Two targets: worksleep-nofp (5 ms work / 5 ms sleep: ~200 switches/s) and bench/pingpong.c (two threads
# bouncing a byte through pipes: a context switch every few microseconds). Medians of RUNS (default 3).
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
PP_ROUNDS=${PP_ROUNDS:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null || { echo "perf is not installed (Debian linux-perf); skipping"; exit 0; }
WS="$BUILD/targets/worksleep-nofp"
cc -O2 -pthread "$HERE/pingpong.c" -o "$tmp/pingpong"
cc -O2 "$HERE/wall_stopread.c" -o "$tmp/stopread"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.4f\n", b - a}'; }
lost() { sed -n 's/.* \([0-9]*\) lost\..*/\1/p' "$1" | tail -n 1; }

for i in $(seq "$RUNS"); do
	t=$(now); TRUTH="$tmp/truth" "$WS" 2 >/dev/null; elapsed "$t" >>"$tmp/ws.bare"
	t=$(now); PLUMB_DEBUG=1 "$BUILD/plumb" record --mode cpu --interval 0.001 -o "$tmp/c.folded" -- "$WS" 2 \
		>/dev/null 2>"$tmp/err"; elapsed "$t" >>"$tmp/ws.cpu"
	t=$(now); TRUTH="$tmp/truth" PLUMB_DEBUG=1 "$BUILD/plumb" record --mode wall --interval 0.001 \
		-o "$tmp/w.folded" -- "$WS" 2 >/dev/null 2>"$tmp/err"; elapsed "$t" >>"$tmp/ws.wall"
	awk '{printf "%.2f\n", 100 * $2 / ($1 + $2)}' "$tmp/truth" >>"$tmp/ws.truth"
	awk '/sleep_path/ {s += $NF} {t += $NF} END {printf "%.2f\n", 100 * s / t}' "$tmp/w.folded" >>"$tmp/ws.share"
	t=$(now); perf record -q -e cpu-clock -c 1000000 -e context-switches -c 1 --call-graph dwarf,16384 \
		-o "$tmp/perf.data" -- "$WS" 2 >/dev/null 2>&1; elapsed "$t" >>"$tmp/ws.perf"
	perf script -i "$tmp/perf.data" 2>/dev/null | wc -l >/dev/null
	t=$(now); "$tmp/stopread" 0.001 "$WS" 2 >"$tmp/sr" 2>/dev/null; elapsed "$t" >>"$tmp/ws.sr"
	awk '{print $2}' "$tmp/sr" >>"$tmp/ws.srstops"

	t=$(now); "$tmp/pingpong" "$PP_ROUNDS"; elapsed "$t" >>"$tmp/pp.bare"
	t=$(now); PLUMB_DEBUG=1 "$BUILD/plumb" record --mode cpu --interval 0.001 -o "$tmp/c.folded" -- \
		"$tmp/pingpong" "$PP_ROUNDS" >/dev/null 2>"$tmp/err"; elapsed "$t" >>"$tmp/pp.cpu"
	t=$(now); PLUMB_DEBUG=1 "$BUILD/plumb" record --mode wall --interval 0.001 -o "$tmp/w.folded" -- \
		"$tmp/pingpong" "$PP_ROUNDS" >/dev/null 2>"$tmp/err"; elapsed "$t" >>"$tmp/pp.wall"
	lost "$tmp/err" >>"$tmp/pp.lost"
	t=$(now); "$tmp/stopread" 0.001 "$tmp/pingpong" "$PP_ROUNDS" >"$tmp/sr" 2>/dev/null; elapsed "$t" >>"$tmp/pp.sr"
done
m() { median <"$tmp/$1"; }
awk -v b="$(m ws.bare)" -v c="$(m ws.cpu)" -v w="$(m ws.wall)" -v p="$(m ws.perf)" -v s="$(m ws.sr)" \
	-v tr="$(m ws.truth)" -v sh="$(m ws.share)" -v st="$(m ws.srstops)" 'BEGIN {
	printf "worksleep (2 s, ~200 switches/s), wall time: bare %.2f s; plumb cpu %.2fx, plumb wall %.2fx, perf record cs+dwarf %.2fx (record only), stop-and-read %.2fx\n", b, c/b, w/b, p/b, s/b
	printf "  plumb wall / perf: %.2f; sleep share: plumb wall %.1f%% vs the target'"'"'s own clock %.1f%%; stop-and-read managed %d of ~2000 stops\n", w/p, sh, tr, st
}'
awk -v b="$(m pp.bare)" -v c="$(m pp.cpu)" -v w="$(m pp.wall)" -v s="$(m pp.sr)" -v l="$(m pp.lost)" 'BEGIN {
	printf "pingpong ('"$PP_ROUNDS"' round trips, a switch every few us), wall time: bare %.2f s; plumb cpu %.2fx, plumb wall %.2fx (%d samples lost), stop-and-read (one thread only) %.2fx\n", b, c/b, w/b, l, s/b
}'
