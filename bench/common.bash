# Helpers shared by bench/convert.sh and bench/flame.sh.
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
# peak_rss CMD...: runs CMD (output discarded) and prints its peak resident set size in MB (the largest RSS of
# any child, from getrusage; python3 is there wherever the benchmarks run).
peak_rss() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.1f" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' "$@"
}
