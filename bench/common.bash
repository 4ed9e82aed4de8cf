# Helpers shared by bench/convert.sh, bench/flame.sh and bench/hot.sh.
# time_median N CMD...: runs CMD N times (output discarded) and prints "WALL CPU", the medians in seconds of
# the wall time and of the CPU time (user + system). On a shared, loaded machine the CPU time is the steadier
# figure; both are reported.
time_median() {
	local n=$1 i
	shift
	local walls=() cpus=() line
	local TIMEFORMAT='%R %U %S'
	for ((i = 0; i < n; i++)); do
		line=$({ time "$@" >/dev/null 2>&1; } 2>&1 | tail -1)
		walls+=("$(echo "$line" | awk '{print $1}')")
		cpus+=("$(echo "$line" | awk '{print $2 + $3}')")
	done
	local mid=$(((n + 1) / 2))
	echo "$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "${mid}p") $(printf '%s\n' "${cpus[@]}" | sort -g | sed -n "${mid}p")"
}
# calc EXPR: floating-point arithmetic (awk, present everywhere)
calc() { awk "BEGIN{print $1}"; }
# measure N CMD...: runs CMD N times (output discarded) under GNU time and prints "WALL CPU RSS_MB", the medians
# of the wall time, the CPU time (user + system) and the peak resident set of that one process.
measure() {
	local n=$1 i
	shift
	local walls=() cpus=() rsss=() f
	f=$(mktemp)
	for ((i = 0; i < n; i++)); do
		/usr/bin/time -f '%e %U %S %M' -o "$f" "$@" >/dev/null 2>&1
		read -r w u s m < <(tail -1 "$f")
		walls+=("$w")
		cpus+=("$(calc "$u + $s")")
		rsss+=("$(calc "$m / 1024")")
	done
	rm -f "$f"
	local mid=$(((n + 1) / 2))
	echo "$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "${mid}p") $(printf '%s\n' "${cpus[@]}" | sort -g |
		sed -n "${mid}p") $(printf '%s\n' "${rsss[@]}" | sort -g | sed -n "${mid}p")"
}
# report LABEL MB WALL CPU RSS: one line: the throughput of the input in MB/s (wall and CPU) and the peak RSS as
# a multiple of the input's size.
report() {
	printf '%-28s wall %6.2f s = %5.0f MB/s, cpu %6.2f s = %5.0f MB/s, peak RSS %6.0f MB = %.2fx the input\n' \
		"$1" "$3" "$(calc "$2 / $3")" "$4" "$(calc "$2 / ($4 + 0.0001)")" "$5" "$(calc "$5 / $2")"
}
# PREV_PLUMB: an earlier plumb binary measured beside this one in the same run ("the previous figures"), e.g.
# PREV_PLUMB=/path/to/main/build/plumb make bench
# peak_rss CMD...: runs CMD (output discarded) and prints its peak resident set size in MB (the largest RSS of
# any child, from getrusage; python3 is there wherever the benchmarks run).
peak_rss() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.1f" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' "$@"
}
