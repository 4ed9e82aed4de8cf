#!/bin/bash
# convert of `perf script` text to folded stacks, in MB/s, next to the machine's floor on the same file
# (`wc -l`) and, where it can be measured here, `perf script` itself producing comparable text.
# The Perl stackcollapse-perf.pl is not installed offline; NOTES.md measured it at about 10.5 MB/s here.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PLUMB=$BUILD/plumb
DIR=$BUILD/bench
mkdir -p "$DIR"
IN=$DIR/perf-script.txt
[ -s "$IN" ] || python3 bench/gen_inputs.py perf 64 >"$IN"
bytes=$(stat -c %s "$IN")
mb=$(calc "$bytes / 1048576")
cat "$IN" >/dev/null # warm the page cache
t_plumb=$(time_median 3 "$PLUMB" convert "$IN" -o "$DIR/perf-script.folded")
t_wc=$(time_median 3 wc -l "$IN")
printf 'input: %s (%.1f MB, %s lines)\n' "$IN" "$mb" "$(wc -l <"$IN")"
printf 'plumb convert: %.3f s  %.0f MB/s (target >= 300 MB/s)\n' "$t_plumb" "$(calc "$mb / $t_plumb")"
printf 'wc -l        : %.3f s  %.0f MB/s (floor)\n' "$t_wc" "$(calc "$mb / $t_wc")"
printf 'ratio plumb/wc: %.1fx\n' "$(calc "$t_plumb / $t_wc")"
# A real recording: perf script's own time to write the text, then plumb's time to collapse it.
if command -v perf >/dev/null && perf record -q -g -F 4000 -o "$DIR/perf.data" -- sh -c \
	'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' >/dev/null 2>&1; then
	t_ps=$(time_median 3 sh -c "perf script -i '$DIR/perf.data' > '$DIR/perf-real.txt'")
	rb=$(stat -c %s "$DIR/perf-real.txt")
	rmb=$(calc "$rb / 1048576")
	t_pr=$(time_median 3 "$PLUMB" convert "$DIR/perf-real.txt" -o "$DIR/perf-real.folded")
	printf 'real recording: perf script %.3f s for %.1f MB; plumb convert of it %.3f s (%.2fx of perf script)\n' \
		"$t_ps" "$rmb" "$t_pr" "$(calc "$t_pr / $t_ps")"
else
	echo "perf record is not usable here: the perf script comparison was skipped"
fi
