#!/bin/bash
# `plumb bench run` against hyperfine on the same commands in the same run: does plumb measure the same
# per-run wall time (median), what is its floor on a command that does nothing, and what does the whole
# measured session cost in elapsed time. Ratios near 1 mean plumb's runner adds nothing hyperfine does not.
set -eu
BUILD=${BUILD:-build}
T="$BUILD/targets/benchwork"
RUNS=${RUNS:-20}
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (Debian hyperfine); skipping"; exit 0; }
[ -x "$T" ] || { echo "$T is not built (make check builds it); skipping"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T=$(realpath "$T")
printf '[case spin]\nrun = %s spin 30\n[case noop]\nrun = /bin/true\n' "$T" >"$tmp/suite.ini"
now() { date +%s.%N; }
t0=$(now)
"$BUILD/plumb" bench run "$tmp/suite.ini" --repeats "$RUNS" --warmup 1 --out "$tmp/p.json" >/dev/null 2>&1
t1=$(now)
# hyperfine without a shell (-N): it would subtract its shell's start-up, plumb counts /bin/sh -c in each run
hyperfine -N --runs "$RUNS" --warmup 1 --style none --export-json "$tmp/h.json" "$T spin 30" "/bin/true" \
	>/dev/null 2>&1
t2=$(now)
python3 - "$tmp/p.json" "$tmp/h.json" "$t0" "$t1" "$t2" <<'PY'
import json, statistics, sys
p, h = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t0, t1, t2 = map(float, sys.argv[3:6])
pm = {c: statistics.median(s["value"] for s in p["samples"] if s["name"] == c + ".wall_ms") for c in ("spin", "noop")}
hm = {("spin" if "spin" in r["command"] else "noop"): statistics.median(r["times"]) * 1e3 for r in h["results"]}
print("median wall per run, ms: spin plumb %.2f hyperfine %.2f; noop plumb %.2f hyperfine %.2f"
      % (pm["spin"], hm["spin"], pm["noop"], hm["noop"]))
print("plumb / hyperfine median wall: spin %.3f (same command, ~1 means the same figure); noop %.2f (plumb's"
      " floor includes /bin/sh -c)" % (pm["spin"] / hm["spin"], pm["noop"] / max(hm["noop"], 1e-3)))
print("elapsed for the whole session: plumb %.2fs, hyperfine %.2fs, ratio %.2f" % (t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1)))
PY
