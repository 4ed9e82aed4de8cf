#!/usr/bin/env python3
"""Deterministic benchmark inputs: `folded N_STACKS TARGET_MB` writes sorted folded stacks with N distinct
stacks (realistic prefix sharing, C++-ish labels with file:line); `random N_STACKS` writes N distinct stacks that share little (depth 5-40,
each frame one of 5,000 functions drawn uniformly, unsorted); `perf TARGET_MB` writes `perf script` text
(event headers with periods, stack lines with varied addresses and +0x offsets, several threads)."""
import random
import sys


def names(rng, n):
    ns = ["core", "net", "db", "http", "json", "util", "io", "sched", "alloc", "cache"]
    out = []
    for i in range(n):
        out.append("%s::%s%d::%s_%d" % (rng.choice(ns), rng.choice(["Parser", "Worker", "Table", "Conn", "Pool"]),
                                      i % 97, rng.choice(["run", "step", "read", "emit", "visit", "push"]), i))
    return out


def folded(n_stacks, target_mb, out):
    rng = random.Random(42)
    fn = names(rng, 6000)
    files = ["src/%s/file_%d.c" % (d, i) for d in ("core", "net", "db", "io") for i in range(60)]
    labels = ["%s (%s:%d)" % (fn[i], files[i % len(files)], 10 + i % 900) for i in range(len(fn))]
    target = target_mb * 1024 * 1024
    avg = target / n_stacks
    depth = max(4, int(avg / 45))
    seen = set()
    lines = []
    while len(lines) < n_stacks:
        d = rng.randint(depth - 6, depth + 6)
        path = [0]
        for k in range(1, d):
            # few children per node near the root, more deeper: realistic sharing of prefixes
            fanout = 2 if k < 4 else 5 if k < 10 else 12
            path.append((path[-1] * 31 + rng.randrange(fanout) * 7919 + k) % len(labels))
        key = tuple(path)
        if key in seen:
            continue
        seen.add(key)
        lines.append(";".join(labels[i] for i in path) + " %d" % rng.randint(1, 5000))
    lines.sort()
    out.write("\n".join(lines))
    out.write("\n")


def random_stacks(n_stacks, out):
    """Stacks that share little: each frame is drawn uniformly from 5,000 functions, so prefixes diverge after
    the first frame or two and the merged tree has nearly as many nodes as the input has frames."""
    rng = random.Random(11)
    fn = names(rng, 5000)
    files = ["src/%s/file_%d.c" % (d, i) for d in ("core", "net", "db", "io") for i in range(60)]
    labels = ["%s (%s:%d)" % (fn[i], files[i % len(files)], 10 + i % 900) for i in range(len(fn))]
    seen = set()
    chunks = []
    while len(seen) < n_stacks:
        key = tuple(rng.randrange(len(labels)) for _ in range(rng.randint(5, 40)))
        if key in seen:
            continue
        seen.add(key)
        chunks.append(";".join(labels[i] for i in key) + " %d\n" % rng.randint(1, 5000))
        if len(chunks) >= 10000:
            out.write("".join(chunks))
            chunks = []
    out.write("".join(chunks))


def perf(target_mb, out):
    """Eight threads of one process, sampled in turn. Like a real program, a thread's stack changes a little
    between two samples (a few innermost frames return, a few calls are made); every sample has its own
    addresses and offsets."""
    rng = random.Random(7)
    fn = names(rng, 3000)
    libs = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/app/bin/server", "/opt/app/lib/libdb.so"]
    kernel = ["entry_SYSCALL_64", "do_syscall_64", "__x64_sys_read", "ksys_read", "vfs_read", "schedule"]
    stacks = {4000 + i: [i] for i in range(8)}
    written = 0
    target = target_mb * 1024 * 1024
    t = 1000.0
    chunks = []
    while written < target:
        tid = 4000 + rng.randrange(8)
        st = stacks[tid]
        for _ in range(rng.randint(0, 5)):
            if len(st) > 4:
                st.pop()
        for _ in range(rng.randint(0, 5)):
            if len(st) < 60:
                st.append((st[-1] * 31 + rng.randrange(4) * 7 + len(st)) % len(fn))
        t += 0.000101
        lines = ["server %d/%d [00%d] %.6f:   10101010 cpu-clock: " % (4000, tid, tid % 2, t)]
        if rng.random() < 0.2:
            for k in kernel[: rng.randint(2, 6)][::-1]:
                lines.append("\tffffffff8%07x %s+0x%x ([kernel.kallsyms])" % (rng.randrange(1 << 24), k,
                                                                           rng.randrange(512)))
        for node in reversed(st):
            lines.append("\t%16x %s+0x%x (%s)" % (0x7f0000000000 + node * 4096 + rng.randrange(64) * 4,
                                                fn[node], rng.randrange(256), libs[node % 3]))
        block = "\n".join(lines) + "\n\n"
        chunks.append(block)
        written += len(block)
        if len(chunks) > 5000:
            out.write("".join(chunks))
            chunks = []
    out.write("".join(chunks))


if __name__ == "__main__":
    if sys.argv[1] == "folded":
        folded(int(sys.argv[2]), int(sys.argv[3]), sys.stdout)
    elif sys.argv[1] == "random":
        random_stacks(int(sys.argv[2]), sys.stdout)
    else:
        perf(int(sys.argv[2]), sys.stdout)
