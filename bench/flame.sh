#!/bin/bash
# plumb flame (target: <= 2 s) and plumb hot on 200+ MB folded files of 300k distinct stacks, next to `wc -l` on
# the same file, with peak RSS against the input's size (target: <= 1.5x). Two shapes: realistic stacks that
# share their prefixes (sorted, bench/gen_inputs.py folded) and random stacks that share little (depth 5-40 over
# 5,000 functions, unsorted, bench/gen_inputs.py random), where the tree has nearly as many nodes as the input has
# frames. Medians of RUNS (default 3). flamegraph.pl is not installed offline; NOTES.md measured it at about 99 s
# for the first shape.
set -eu
cd "$(dirname "$0")/.."
. bench/common.bash
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
PLUMB=$BUILD/plumb
DIR=$BUILD/bench
mkdir -p "$DIR"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (wall times stretch on a busy machine; CPU times less so)"
one() { # NAME FILE
	local name=$1 in=$2 mb
	mb=$(calc "$(stat -L -c %s "$in") / 1048576")
	cat "$in" >/dev/null
	read -r w_fl c_fl < <(time_median "$RUNS" "$PLUMB" flame "$in" -o "$DIR/$name.svg")
	read -r w_hot c_hot < <(time_median "$RUNS" "$PLUMB" hot "$in")
	read -r w_wc c_wc < <(time_median "$RUNS" wc -l "$in")
	local rss_fl rss_hot
	rss_fl=$(peak_rss "$PLUMB" flame "$in" -o "$DIR/$name.svg")
	rss_hot=$(peak_rss "$PLUMB" hot "$in")
	printf '%s: %s (%.1f MB, %s distinct stacks)\n' "$name" "$in" "$mb" "$(wc -l <"$in")"
	printf '  plumb flame: wall %.3f s, cpu %.3f s (target <= 2 s); peak RSS %.0f MB = %.2fx the input (target <= 1.5x); svg %s bytes\n' \
		"$w_fl" "$c_fl" "$rss_fl" "$(calc "$rss_fl / $mb")" "$(stat -c %s "$DIR/$name.svg")"
	printf '  plumb hot  : wall %.3f s, cpu %.3f s; peak RSS %.0f MB = %.2fx the input\n' "$w_hot" "$c_hot" "$rss_hot" \
		"$(calc "$rss_hot / $mb")"
	printf '  wc -l      : wall %.3f s (the floor); flame/wc %.1fx, hot/wc %.1fx\n' "$w_wc" "$(calc "$w_fl / $w_wc")" \
		"$(calc "$w_hot / $w_wc")"
}
IN=$DIR/stacks-300k.folded
[ -s "$IN" ] || python3 bench/gen_inputs.py folded 300000 200 >"$IN"
one stacks-300k "$IN"
IN=$DIR/random-300k.folded
[ -s "$IN" ] || python3 bench/gen_inputs.py random 300000 >"$IN"
one random-300k "$IN"

# The same two files beside PREV_PLUMB (the previous figures, in the same run), through GNU time: wall, CPU and
# peak RSS of each binary.
for bin in "$PLUMB" ${PREV_PLUMB:+"$PREV_PLUMB"}; do
	[ "$bin" = "$PLUMB" ] && who=plumb || who="previous ($bin)"
	echo "-- $who"
	for name in stacks-300k random-300k; do
		read -r w c r < <(measure 3 "$bin" flame "$DIR/$name.folded" -o "$DIR/$name.svg")
		report "flame $name" "$(calc "$(stat -c %s "$DIR/$name.folded") / 1048576")" "$w" "$c" "$r"
	done
done
