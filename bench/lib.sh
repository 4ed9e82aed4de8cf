# Helpers shared by bench/convert.sh and bench/flame.sh: median of several timed runs.
# time_median N CMD... prints the median wall time in seconds of N runs of CMD (output discarded).
time_median() {
	local n=$1 i t
	shift
	local times=()
	for ((i = 0; i < n; i++)); do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s.%N)
		times+=("$(awk "BEGIN{print $e - $s}")")
	done
	printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((n + 1) / 2))p"
}
# calc EXPR: floating-point arithmetic (awk, present everywhere)
calc() { awk "BEGIN{print $1}"; }
