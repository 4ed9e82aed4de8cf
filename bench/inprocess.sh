#!/bin/bash
# Overhead of the inprocess backend (libplumb preloaded: per-thread CPU timers + signal handler, unwinding in
# plumb) against gperftools' CPU profiler (LD_PRELOAD=libprofiler.so, its SIGPROF handler unwinds in the target)
# at the same rate, on the same CPU-bound target, side by side in one run: work the target gets done in a fixed
# wall time under each, as a ratio of the bare run (medians). Also: what plumb.h costs with the switch off.
set -eu
BUILD=${BUILD:-build}
T="$BUILD/targets/split"
RUNS=${RUNS:-7}
SECS=${SECS:-2}
HZ=${HZ:-1000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PROFILER=$(ls /usr/lib/*/libprofiler.so.0 /usr/lib/libprofiler.so.0 2>/dev/null | head -1 || true)
[ -n "$PROFILER" ] || { echo "gperftools is not installed (Debian libgoogle-perftools-dev); skipping"; exit 0; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
interval=$(awk -v hz="$HZ" 'BEGIN {printf "%.6f", 1/hz}')
# The target runs for a fixed wall time and prints its rounds; a shell around it reports the CPU time it used
# (`times`), so each run yields CPU seconds per round of work: what the profiler costs inside the target,
# unaffected by how much of the machine other processes take.
wrap='"$0" "$1" >"$2"; times >"$2.times"'
wrap_gp='LD_PRELOAD="$3" CPUPROFILE="$4" CPUPROFILE_FREQUENCY="$5" "$0" "$1" >"$2"; times >"$2.times"'
per_round() { # FILE -> CPU ms per round
	awk '/^rounds/ {r=$2} END {print r}' "$1" | {
		read -r r
		sed -n 2p "$1.times" | awk -v r="$r" '{
			split($1, u, /[ms]/); split($2, s, /[ms]/)
			printf "%.4f\n", (u[1]*60 + u[2] + s[1]*60 + s[2]) * 1000 / r }'
	}
}
for i in $(seq "$RUNS"); do
	bash -c "$wrap" "$T" "$SECS" "$tmp/bare.$i"
	PLUMB_DEBUG=1 "$BUILD/plumb" record --backend inprocess --unwind fp --interval "$interval" -o "$tmp/p.folded" \
		-- bash -c "$wrap" "$T" "$SECS" "$tmp/ipfp.$i" 2>"$tmp/ipfp.err.$i"
	(
		PLUMB_DEBUG=1 "$BUILD/plumb" record --backend inprocess --interval "$interval" -o "$tmp/p.folded" \
			-- bash -c "$wrap" "$T" "$SECS" "$tmp/ipdw.$i" 2>"$tmp/ipdw.err.$i"
		times >"$tmp/ipdw.outer.$i"
	)
	# the profiler goes into the target only (a preloaded shell would write its own profile over the target's)
	bash -c "$wrap_gp" "$T" "$SECS" "$tmp/gp.$i" "$PROFILER" "$tmp/gperf.prof.$i" "$HZ" 2>/dev/null
done
med() { for i in $(seq "$RUNS"); do per_round "$tmp/$1.$i"; done | median; }
bare=$(med bare)
ipfp=$(med ipfp)
ipdw=$(med ipdw)
gp=$(med gp)
secs_of() { sed -n 2p "$1" | awk '{split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1]*60 + u[2] + s[1]*60 + s[2]}'; }
# plumb's own CPU per run (draining the ring, unwinding, symbolizing, writing): everything minus the target
own=$(for i in $(seq "$RUNS"); do
	echo "$(secs_of "$tmp/ipdw.outer.$i") $(secs_of "$tmp/ipdw.$i.times")" | awk '{printf "%.4f\n", ($1 - $2) * 1000}'
done | median)
# samples per second of the target's CPU time: both profilers must have taken as many for the costs to compare
gp_samples() { # gperftools' profile: 5 header words, then (count, depth, pcs...) records, little-endian 64-bit
	python3 -c 'import struct,sys
d = open(sys.argv[1], "rb").read(); w = struct.unpack("<%dQ" % (len(d) // 8), d[: len(d) // 8 * 8])
i, n = 5, 0
while i + 1 < len(w) and not (w[i] == 0 and w[i + 1] == 1):
    n += w[i]; i += 2 + w[i + 1]
print(n)' "$1"
}
gp_rate=$(for i in $(seq "$RUNS"); do
	cpu=$(secs_of "$tmp/gp.$i.times"); n=$(gp_samples "$tmp/gperf.prof.$i")
	awk -v n="${n:-0}" -v c="$cpu" 'BEGIN {printf "%.1f\n", (c > 0 ? n / c : 0)}'
done | median)
ip_rate=$(for i in $(seq "$RUNS"); do
	n=$(sed -n 's/^Sampled \([0-9]*\) ticks.*/\1/p' "$tmp/ipdw.err.$i"); cpu=$(secs_of "$tmp/ipdw.$i.times")
	awk -v n="${n:-0}" -v c="$cpu" 'BEGIN {printf "%.1f\n", (c > 0 ? n / c : 0)}'
done | median)
eff=$(for i in $(seq "$RUNS"); do sed -n 's/.*(\([0-9]*\)\/s effective.*/\1/p' "$tmp/ipdw.err.$i"; done | median)
awk -v b="$bare" -v f="$ipfp" -v d="$ipdw" -v g="$gp" -v hz="$HZ" -v eff="$eff" -v own="$own" -v gr="$gp_rate" -v ir="$ip_rate" 'BEGIN {
	printf "target CPU per round at %d Hz requested (median; lower is better): bare %.3f ms, inprocess fp %.3f, inprocess dwarf %.3f, gperftools %.3f\n", hz, b, f, d, g
	printf "cost vs bare: inprocess fp %.3fx, inprocess dwarf %.3fx, gperftools %.3fx (inprocess effective rate %d/s)\n", f/b, d/b, g/b, eff
	printf "inprocess overhead minus gperftools overhead: dwarf %+.1f points, fp %+.1f points (<= 0: plumb costs the target no more)\n", (d-g)/b*100, (f-g)/b*100
	printf "samples per second of target CPU: inprocess %.0f, gperftools %.0f (both run on the kernel tick)\n", ir, gr
	printf "plumb itself (drain, unwind, symbolize, write; on another core, outside the target): %.0f ms CPU per run\n", own
}'

# plumb.h with the switch off: what one call costs (nanoseconds, median of the loop in plumb_api bench).
api="$BUILD/targets/plumb_api"
if [ -x "$api" ]; then
	env -u PLUMB_DEBUG "$api" bench 20000000 | awk -F'[:,}]' '{printf "plumb.h switched off: plumb_sample %.1f ns/call, stage begin+end %.1f ns/pair\n", $2, $4}'
fi
