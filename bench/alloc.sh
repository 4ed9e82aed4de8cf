#!/bin/bash
# Cost of `plumb record --mode alloc` (the preloaded sampling allocation profiler, docs/alloc.md) on an
# allocation-churn program (tests/targets/allocs.c `churn`: GIB GiB of 64 B..32 KiB blocks allocated and freed),
# against the bare run and heaptrack (which traces every call), side by side in one run: wall time of the whole
# command (plumb's unwinding, symbolizing and writing included), medians of RUNS runs, as ratios of the bare run.
# The target is 1.3x at the default interval (512 KiB); 64 KiB and 4 MiB are reported beside it.
set -eu
BUILD=${BUILD:-build}
. bench/common.bash
T="$BUILD/targets/allocs"
RUNS=${RUNS:-5}
GIB=${GIB:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PLUMB_DEBUG=1

read -r bare bare_cpu _ < <(measure "$RUNS" "$T" churn "$GIB")
read -r def def_cpu _ < <(measure "$RUNS" "$BUILD/plumb" record --mode alloc -o "$tmp/d.pb.gz" -- "$T" churn "$GIB")
read -r small small_cpu _ < <(measure "$RUNS" "$BUILD/plumb" record --mode alloc --alloc-interval 65536 \
	-o "$tmp/s.pb.gz" -- "$T" churn "$GIB")
read -r big big_cpu _ < <(measure "$RUNS" "$BUILD/plumb" record --mode alloc --alloc-interval 4194304 \
	-o "$tmp/b.pb.gz" -- "$T" churn "$GIB")
"$BUILD/plumb" record --mode alloc -o "$tmp/d.pb.gz" -- "$T" churn "$GIB" 2>&1 | grep '^Sampled' || true
if command -v heaptrack >/dev/null; then
	read -r ht ht_cpu _ < <(measure "$RUNS" heaptrack -o "$tmp/ht" "$T" churn "$GIB")
else
	ht=0 ht_cpu=0
	echo "heaptrack is not installed (Debian heaptrack); its column is 0"
fi
awk -v b="$bare" -v d="$def" -v s="$small" -v g="$big" -v h="$ht" -v gib="$GIB" \
	-v bc="$bare_cpu" -v dc="$def_cpu" -v sc="$small_cpu" -v gc="$big_cpu" -v hc="$ht_cpu" 'BEGIN {
	printf "alloc churn of %d GiB, wall (median): bare %.3f s, plumb --mode alloc %.3f s (512 KiB), %.3f s (64 KiB), %.3f s (4 MiB), heaptrack %.3f s\n", gib, b, d, s, g, h
	printf "cost vs bare (wall): plumb 512 KiB %.2fx, 64 KiB %.2fx, 4 MiB %.2fx; heaptrack %.2fx\n", d/b, s/b, g/b, h/b
	printf "cost vs bare (CPU of the whole command): plumb 512 KiB %.2fx, 64 KiB %.2fx, 4 MiB %.2fx; heaptrack %.2fx\n", dc/bc, sc/bc, gc/bc, hc/bc
	ok = d / b <= 1.3
	printf "%s: plumb --mode alloc at the default interval costs %.2fx the bare wall time (target <= 1.30x)\n", ok ? "PASS" : "FAIL", d/b
	exit ok ? 0 : 1
}'
