#!/bin/bash
# flame of a 200 MB folded file with 300k distinct stacks (target: <= 2 s), next to `wc -l` on the same file.
# flamegraph.pl is not installed offline; NOTES.md measured it at about 99 s for such a file here.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
PLUMB=$BUILD/plumb
DIR=$BUILD/bench
mkdir -p "$DIR"
IN=$DIR/stacks-300k.folded
[ -s "$IN" ] || python3 bench/gen_inputs.py folded 300000 200 >"$IN"
mb=$(echo "$(stat -c %s "$IN") / 1048576" | bc -l)
cat "$IN" >/dev/null
t_plumb=$(time_median 3 "$PLUMB" flame "$IN" -o "$DIR/stacks-300k.svg")
t_wc=$(time_median 3 wc -l "$IN")
printf 'input: %s (%.1f MB, %s distinct stacks)\n' "$IN" "$mb" "$(wc -l <"$IN")"
printf 'plumb flame: %.3f s (target <= 2 s), svg %s bytes\n' "$t_plumb" "$(stat -c %s "$DIR/stacks-300k.svg")"
printf 'wc -l      : %.3f s (floor)\n' "$t_wc"
printf 'ratio plumb/wc: %.1fx\n' "$(calc "$t_plumb / $t_wc")"
