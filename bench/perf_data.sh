#!/bin/bash
# perf.data read directly (issue 30): `plumb convert perf.data -o x.folded` against `perf script` alone on the
# same `perf record --call-graph dwarf` recording of the no-frame-pointer split target (target: plumb at least
# 3x faster, in wall time), with plumb's peak memory beside the file's size; and the same on a `perf record -g`
# (frame-pointer) recording. Medians of 3 runs.
set -eu
cd "$(dirname "$0")/.."
. bench/common.bash
BUILD=${BUILD:-build}
PLUMB=$BUILD/plumb
DIR=$BUILD/bench
mkdir -p "$DIR"
if ! command -v perf >/dev/null || [ ! -x "$BUILD/targets/split-nofp" ]; then
	echo "perf or build/targets/split-nofp is missing: nothing measured"
	exit 0
fi
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for kind in dwarf fp; do
	data=$DIR/perf-$kind.data
	if [ "$kind" = dwarf ]; then
		SPLIT_CLOCK=cpu perf record -q -F 997 --call-graph dwarf -o "$data" -- "$BUILD/targets/split-nofp" 6 >/dev/null 2>&1
	else
		SPLIT_CLOCK=cpu perf record -q -F 997 -g -o "$data" -- "$BUILD/targets/split" 3 >/dev/null 2>&1
	fi
	mb=$(calc "$(stat -c %s "$data") / 1048576")
	cat "$data" >/dev/null
	read -r w_ps c_ps r_ps < <(measure 3 sh -c "perf script -i '$data' > '$DIR/perf-$kind.txt' 2>/dev/null")
	read -r w_pl c_pl r_pl < <(measure 3 "$PLUMB" convert "$data" -o "$DIR/perf-$kind.folded")
	printf '%s recording: %s (%.1f MB)\n' "$kind" "$data" "$mb"
	printf '  perf script    : wall %.3f s, cpu %.3f s\n' "$w_ps" "$c_ps"
	printf '  plumb convert  : wall %.3f s, cpu %.3f s, peak RSS %.0f MB (%.2fx the file)\n' "$w_pl" "$c_pl" \
		"$r_pl" "$(calc "$r_pl / $mb")"
	ratio=$(calc "$w_ps / $w_pl")
	printf '  plumb is %.1fx faster than perf script alone (wall; cpu %.1fx)' "$ratio" "$(calc "$c_ps / ($c_pl + 0.0001)")"
	if [ "$kind" = dwarf ]; then
		if awk "BEGIN{exit !($ratio >= 3)}"; then
			echo " (target >= 3x: met)"
		else
			echo " (target >= 3x: NOT met)"
			status=1
		fi
	else
		echo
	fi
done
exit $status
