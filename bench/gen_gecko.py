#!/usr/bin/env python3
"""Writes a Firefox-Profiler-shaped processed profile (preprocessedProfileVersion 49 layout, per-thread
tables) of THREADS threads x SAMPLES samples, for bench/hot.sh. Deterministic (seeded)."""
import random
import sys


def main():
    out = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 2_000_000
    rnd = random.Random(42)
    nfuncs = 2000
    names = ["fn_%d" % i for i in range(nfuncs)] + ["libbench.so"]
    # a prefix tree of 20000 stacks, depth up to ~30
    nstacks = 20000
    prefix = [None]
    frame = [0]
    for i in range(1, nstacks):
        p = rnd.randrange(max(0, i - 200), i) if rnd.random() < 0.97 else None
        prefix.append(p)
        frame.append(rnd.randrange(nfuncs))
    with open(out, "w") as f:
        f.write('{"meta": {"interval": 1.0, "startTime": 1700000000000.0, "preprocessedProfileVersion": 49, '
                '"version": 24, "product": "bench"},\n "libs": [{"name": "libbench.so", "path": "/usr/lib/libbench.so", '
                '"debugName": "libbench.so", "breakpadId": "AA", "codeId": "aa"}],\n "threads": [')
        for t in range(threads):
            if t:
                f.write(",\n")
            f.write('{"name": "worker-%d", "pid": 1000, "tid": %d, "processName": "bench",\n' % (t, 1000 + t))
            f.write(' "stringArray": [%s],\n' % ", ".join('"%s"' % n for n in names))
            f.write(' "resourceTable": {"length": 1, "lib": [0], "name": [%d], "host": [null], "type": [1]},\n' % nfuncs)
            f.write(' "funcTable": {"length": %d, "name": [%s], "resource": [%s], "isJS": [%s], "fileName": [%s], '
                    '"lineNumber": [%s]},\n' % (nfuncs, ",".join(map(str, range(nfuncs))), ",".join(["0"] * nfuncs),
                                                 ",".join(["false"] * nfuncs), ",".join(["null"] * nfuncs),
                                                 ",".join(["null"] * nfuncs)))
            f.write(' "frameTable": {"length": %d, "address": [%s], "func": [%s], "inlineDepth": [%s], '
                    '"line": [%s], "category": [%s]},\n' % (nfuncs, ",".join(str(4096 + 16 * i) for i in range(nfuncs)),
                                            ",".join(map(str, range(nfuncs))), ",".join(["0"] * nfuncs),
                                            ",".join(["null"] * nfuncs), ",".join(["1"] * nfuncs)))
            f.write(' "stackTable": {"length": %d, "prefix": [%s], "frame": [%s], "category": [%s]},\n' % (
                nstacks, ",".join("null" if p is None else str(p) for p in prefix), ",".join(map(str, frame)),
                ",".join(["1"] * nstacks)))
            stacks = [rnd.randrange(nstacks) for _ in range(4096)]
            f.write(' "samples": {"length": %d, "weightType": "samples", "stack": [' % samples)
            chunk = 100_000
            for start in range(0, samples, chunk):
                n = min(chunk, samples - start)
                f.write(("," if start else "") + ",".join(str(stacks[(start + i) * 7 % 4096]) for i in range(n)))
            f.write('],\n "time": [')
            for start in range(0, samples, chunk):
                n = min(chunk, samples - start)
                f.write(("," if start else "") + ",".join("%.6f" % ((start + i) * 1.000123 + 0.5) for i in range(n)))
            f.write('],\n "weight": null}, "markers": {"length": 0, "data": [], "name": []}}')
        f.write("]}\n")


if __name__ == "__main__":
    main()
