#!/bin/bash
# Cost of `plumb record --mode alloc` (the preloaded sampling allocation profiler, docs/alloc.md) on an
# allocation-churn program (tests/targets/allocs.c `churn`: GIB GiB of 64 B..32 KiB blocks allocated and freed),
# against the bare run and heaptrack (which traces every call), side by side in one run: wall time of the whole
# command (plumb's unwinding, symbolizing and writing included), medians of RUNS runs, as ratios of the bare run.
# The target is 1.3x at the default interval (512 KiB); 64 KiB and 4 MiB are reported beside it. The churn is
# extreme on purpose (about 50 GiB/s of 6.5 KiB blocks on this machine): every cost per call and per sample shows.
set -eu
BUILD=${BUILD:-build}
T="$BUILD/targets/allocs"
RUNS=${RUNS:-5}
GIB=${GIB:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PLUMB_DEBUG=1
# without the target every run fails at once and the ratios are of nothing (0/0 read "meets" before)
[ -x "$T" ] || { echo "bench/alloc.sh: $T is not built: make $T" >&2; exit 2; }
[ -x "$BUILD/plumb" ] || { echo "bench/alloc.sh: $BUILD/plumb is not built: make" >&2; exit 2; }

# One run of each, in turn, RUNS times (a machine whose load drifts affects every column alike); then medians.
one() { # LABEL CMD...: appends "WALL CPU" of one run to $tmp/LABEL (wall to the microsecond: time's %e has
	# 10 ms steps, 2% of the bare run)
	local label=$1 f="$tmp/time" t0 t1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$f" "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	awk -v w="$(( (t1 - t0) / 1000 ))" '{printf "%.6f %s\n", w / 1e6, $1 + $2}' "$f" >>"$tmp/$label"
}
have_ht=0
command -v heaptrack >/dev/null && have_ht=1
for i in $(seq "$RUNS"); do
	one bare "$T" churn "$GIB"
	one def "$BUILD/plumb" record --mode alloc -o "$tmp/d.pb.gz" -- "$T" churn "$GIB"
	one small "$BUILD/plumb" record --mode alloc --alloc-interval 65536 -o "$tmp/s.pb.gz" -- "$T" churn "$GIB"
	one big "$BUILD/plumb" record --mode alloc --alloc-interval 4194304 -o "$tmp/b.pb.gz" -- "$T" churn "$GIB"
	[ "$have_ht" = 1 ] && one ht heaptrack -o "$tmp/ht.$i" "$T" churn "$GIB"
done
med() { # LABEL COLUMN
	[ -f "$tmp/$1" ] || { echo 0; return; }
	awk -v c="$2" '{print $c}' "$tmp/$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'
}
bare=$(med bare 1) bare_cpu=$(med bare 2) def=$(med def 1) def_cpu=$(med def 2) small=$(med small 1)
small_cpu=$(med small 2) big=$(med big 1) big_cpu=$(med big 2) ht=$(med ht 1) ht_cpu=$(med ht 2)
[ "$have_ht" = 1 ] || echo "heaptrack is not installed (Debian heaptrack); its column is 0"
"$BUILD/plumb" record --mode alloc -o "$tmp/d.pb.gz" -- "$T" churn "$GIB" 2>&1 | grep '^Sampled' || true
awk -v b="$bare" 'BEGIN { exit !(b > 0) }' || { echo "bench/alloc.sh: the bare run gave no time" >&2; exit 2; }
awk -v b="$bare" -v d="$def" -v s="$small" -v g="$big" -v h="$ht" -v gib="$GIB" \
	-v bc="$bare_cpu" -v dc="$def_cpu" -v sc="$small_cpu" -v gc="$big_cpu" -v hc="$ht_cpu" 'BEGIN {
	printf "alloc churn of %d GiB, wall (median): bare %.3f s, plumb --mode alloc %.3f s (512 KiB), %.3f s (64 KiB), %.3f s (4 MiB), heaptrack %.3f s\n", gib, b, d, s, g, h
	printf "cost vs bare (wall): plumb 512 KiB %.2fx, 64 KiB %.2fx, 4 MiB %.2fx; heaptrack %.2fx\n", d/b, s/b, g/b, h/b
	printf "cost vs bare (CPU of the whole command): plumb 512 KiB %.2fx, 64 KiB %.2fx, 4 MiB %.2fx; heaptrack %.2fx\n", dc/bc, sc/bc, gc/bc, hc/bc
	printf "%s: plumb --mode alloc at the default interval costs %.2fx the bare wall time (target <= 1.30x)\n", d / b <= 1.3 ? "meets" : "MISSES", d/b
}'
