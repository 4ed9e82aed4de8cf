#!/bin/bash
# `plumb hot` on a 100+ MB Firefox-Profiler-shaped profile (3 threads x 2M samples, bench/gen_gecko.py) against
# the floor of the seeds' Python tool: a bare `json.load` of the same file. Same file, same run, medians of
# RUNS (default 3), each side warmed once so both read from the page cache. Target: ratio <= 0.5 (aim 0.2).
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
THREADS=${THREADS:-3}
SAMPLES=${SAMPLES:-2000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f="$tmp/profile.json"
python3 "$(dirname "$0")/gen_gecko.py" "$f" "$THREADS" "$SAMPLES"
size=$(stat -c %s "$f")

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
secs() { # wall seconds of a command, its output discarded
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN {printf "%.4f\n", e - s}'
}

"$BUILD/plumb" hot "$f" >/dev/null
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f"
: >"$tmp/plumb.t"
: >"$tmp/stages.t"
: >"$tmp/py.t"
# the same with two stages: every sample's time is kept and sliced
printf '{"schema": "plumb.stages.v1", "time_unit": "ms", "stages": [{"name": "a", "start_ms": 0, "end_ms": %d}, {"name": "b", "start_ms": %d, "end_ms": %d}]}\n' \
	"$SAMPLES" "$SAMPLES" $((SAMPLES * 3)) >"$tmp/stages.json"
for _ in $(seq "$RUNS"); do
	secs "$BUILD/plumb" hot "$f" --top 20 >>"$tmp/plumb.t"
	secs "$BUILD/plumb" hot "$f" --top 20 --stages "$tmp/stages.json" >>"$tmp/stages.t"
	secs python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$f" >>"$tmp/py.t"
done
p=$(median <"$tmp/plumb.t")
st=$(median <"$tmp/stages.t")
y=$(median <"$tmp/py.t")
awk -v p="$p" -v st="$st" -v y="$y" -v sz="$size" -v th="$THREADS" -v n="$SAMPLES" 'BEGIN {
	printf "input: %.1f MB Firefox profile, %d threads x %d samples\n", sz / 1e6, th, n
	printf "plumb hot %.3fs (%.0f MB/s), python3 json.load %.3fs (%.0f MB/s) (medians of '"$RUNS"')\n", p, sz / 1e6 / p, y, sz / 1e6 / y
	printf "plumb hot / json.load time ratio: %.3f (target <= 0.5, aim 0.2)\n", p / y
	printf "plumb hot --stages (2 stages, every sample time kept) %.3fs: ratio %.3f\n", st, st / y
}'

# Peak RSS and throughput of hot on the same Firefox profile and on a 200+ MB folded file of 300k stacks (issue
# 14: <= ~1.5x the input), against wc -l; PREV_PLUMB: the previous figures in the same run.
. "$(dirname "$0")/common.bash"
DIR=${BUILD}/bench
mkdir -p "$DIR"
BIG=$DIR/stacks-300k.folded
[ -s "$BIG" ] || python3 "$(dirname "$0")/gen_inputs.py" folded 300000 200 >"$BIG"
gmb=$(calc "$size / 1048576")
bmb=$(calc "$(stat -c %s "$BIG") / 1048576")
read -r w_wc c_wc r_wc < <(measure 3 wc -l "$BIG")
printf 'wc -l of the folded file: wall %.2f s = %.0f MB/s\n' "$w_wc" "$(calc "$bmb / $w_wc")"
for bin in "$BUILD/plumb" ${PREV_PLUMB:+"$PREV_PLUMB"}; do
	[ "$bin" = "$BUILD/plumb" ] && who=plumb || who="previous ($bin)"
	echo "-- $who"
	read -r w c r < <(measure "$RUNS" "$bin" hot "$f" --top 20)
	report "hot Firefox profile" "$gmb" "$w" "$c" "$r"
	read -r w c r < <(measure "$RUNS" "$bin" hot "$BIG" --top 20)
	report "hot folded 300k stacks" "$bmb" "$w" "$c" "$r"
done
