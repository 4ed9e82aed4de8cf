"""The truth matrix's measurements (docs/design.md §5.2), shared by tests/e2e/test_truth.py (its fast part, in
`make check`) and bench/truth.py (the slow part, in `make bench`): a program with a known split in a fixed rhythm
(tests/targets/rounds.c) and a bursty server-shaped one (tests/targets/bursty.c), sampled by plumb (any backend,
launched or attached, cpu or wall, fp or dwarf, any rate) or by perf, on a quiet machine or one whose other core
this module keeps busy itself (Burner).

The statistics: a sampler that is unbiased takes each sample where the target is with the probability of its
share of CPU time, so a path's count is binomial; z = (count - n p) / sqrt(n p (1 - p)) has variance 1, and the
RMS of the z of the three paths over several runs is near 1. A sampler locked onto the rhythm reads some paths
exactly and others several points off in a way no single run shows: its RMS z is 2.5-4 or more."""
import math
import os
import re
import shutil
import subprocess
import tempfile
import time

ROUNDS_TRUTH = {"path_a": 0.5, "path_b": 0.3, "path_c": 0.2}


class Burner:
    """Keeps one core busy (a shell spinning) while the with-block runs; kills it by its pid."""

    def __enter__(self):
        self.proc = subprocess.Popen(["sh", "-c", "while :; do :; done"])
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


class Quiet:
    """No load of our own (the machine may still be shared)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def schedstat_ns(pid):
    """The CPU time every thread of pid has used so far (sum_exec_runtime, /proc/PID/task/*/schedstat)."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def folded_counts(path, names, root=None):
    """(total samples, {name: samples whose stack has a frame of that function}), of the stacks whose first frame
    is `root` when given (a process under --all)"""
    total, hits = 0, dict.fromkeys(names, 0)
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or (root and stack.split(";")[0] != root):
                continue
            n = int(count)
            total += n
            funcs = {fr.split(" (")[0] for fr in stack.split(";")}
            for name in names:
                if name in funcs:
                    hits[name] += n
    return total, hits


def zscores(total, hits, truth):
    return [(hits[k] - total * p) / math.sqrt(total * p * (1 - p)) for k, p in truth.items()] if total else []


def rms(values):
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else float("inf")


def summary_ticks(stderr):
    m = re.search(r"Sampled (\d+) ticks over ([\d.]+)s", stderr)
    return (int(m.group(1)), float(m.group(2))) if m else (0, 0.0)


def run_plumb(plumb, args, timeout=120):
    env = dict(os.environ, PLUMB_DEBUG="1", PLUMB_SYMBOL_CACHE="0")
    return subprocess.run([plumb, "record", *args], env=env, capture_output=True, text=True, timeout=timeout)


def start_target(argv, env=None):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
    proc.stdout.readline()  # "ready"
    return proc


def stop(proc):
    proc.kill()
    proc.wait()


def rounds_run(plumb, targets, how, seconds=3, options=(), tool="plumb", nofp=False):
    """One run on rounds: (samples, {path: samples}, stderr). how: "attach" or "launch"; tool "plumb" or "perf"
    (attach only: `perf record -F RATE -g -p`, options = (RATE,))."""
    exe = os.path.join(targets, "rounds-nofp" if nofp else "rounds")
    with tempfile.TemporaryDirectory(prefix="plumb-truth-") as tmp:
        out = os.path.join(tmp, "r.folded")
        if tool == "perf":
            proc = start_target([exe, str(seconds + 30)])
            try:
                data = os.path.join(tmp, "perf.data")
                subprocess.run(["perf", "record", "-q", "-F", str(options[0]), "-g", "-p", str(proc.pid), "-o", data,
                                "--", "sleep", str(seconds)], capture_output=True, timeout=seconds + 60)
            finally:
                stop(proc)
            script = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True, text=True,
                                    timeout=120).stdout
            total, hits = 0, dict.fromkeys(ROUNDS_TRUTH, 0)
            for block in script.split("\n\n"):
                syms = set(block.split())
                if not syms:
                    continue
                total += 1
                for name in hits:
                    hits[name] += name in syms
            return total, hits, ""
        if how == "attach":
            proc = start_target([exe, str(seconds + 30)])
            try:
                r = run_plumb(plumb, ["--pid", str(proc.pid), "--seconds", str(seconds), "-o", out, *options])
            finally:
                stop(proc)
        else:
            r = run_plumb(plumb, ["-o", out, *options, "--", exe, str(seconds)])
        if r.returncode != 0:
            raise AssertionError("plumb record %s failed (%d): %s" % (how, r.returncode, r.stderr.strip()))
        total, hits = folded_counts(out, ROUNDS_TRUTH)
        return total, hits, r.stderr


def pinned(argv):
    """argv on the last CPU (taskset): a program that does not migrate keeps more of its rhythm, so a sampler that
    locks onto the rhythm shows it. A real-time priority kept the rhythm whole (the locks were measured so: RMS z
    2.8 forked, 5.1 under --all), but in make check it starved what other tests ran on that CPU (a target got
    17 samples in 3 s), and at nice -10 a Python child's start was missed beside it once (perhaps slowed by it)."""
    return ["taskset", "-c", str(os.cpu_count() - 1), *argv]


def rounds_pinned_run(plumb, targets, how, seconds=2, options=()):
    """One run on a pinned rounds (pinned()) sampled by the CPUs' events: "fork", a launched shell that forks it
    (a process started while sampling), or "all", `record --all` while it runs. (samples, {path: samples},
    stderr)."""
    exe = os.path.join(targets, "rounds")
    with tempfile.TemporaryDirectory(prefix="plumb-truth-") as tmp:
        out = os.path.join(tmp, "r.folded")
        root = None
        if how == "fork":
            r = run_plumb(plumb, ["-o", out, *options, "--", *pinned(["sh", "-c", "%s %d; true" % (exe, seconds)])])
        else:
            proc = start_target(pinned([exe, str(seconds + 30)]))
            try:
                r = run_plumb(plumb, ["--all", "--seconds", str(seconds), "-o", out, *options])
            finally:
                stop(proc)
            root = "rounds (%d)" % proc.pid
        if r.returncode != 0:
            raise AssertionError("plumb record %s failed (%d): %s" % (how, r.returncode, r.stderr.strip()))
        total, hits = folded_counts(out, ROUNDS_TRUTH, root)
        return total, hits, r.stderr


def bursty_run(plumb, targets, how, seconds=4, options=(), interval=0.005, keep=None):
    """One run on bursty: (samples, CPU seconds the target used while sampled, exit status, stderr); the profile
    is copied to `keep` when given."""
    exe = os.path.join(targets, "bursty")
    with tempfile.TemporaryDirectory(prefix="plumb-truth-") as tmp:
        out = os.path.join(tmp, "b.folded")
        if how == "attach":
            proc = start_target([exe, str(seconds + 30)])
            try:
                c0, w0 = schedstat_ns(proc.pid), time.monotonic()
                r = run_plumb(plumb, ["--pid", str(proc.pid), "--seconds", str(seconds), "-o", out, *options])
                c1, w1 = schedstat_ns(proc.pid), time.monotonic()
            finally:
                stop(proc)
            # the target runs at a steady rate: what it used while sampled is that rate times the window the
            # summary states (plumb's own start and end are outside it)
            _, window = summary_ticks(r.stderr)
            cpu = (c1 - c0) / 1e9 * (window / (w1 - w0) if window and w1 > w0 else 1.0)
        else:
            report = os.path.join(tmp, "cpu")
            env = dict(os.environ, PLUMB_DEBUG="1", PLUMB_SYMBOL_CACHE="0", CPU_REPORT=report)
            r = subprocess.run([plumb, "record", "-o", out, *options, "--", exe, str(seconds)], env=env,
                               capture_output=True, text=True, timeout=120)
            try:
                with open(report) as f:
                    cpu = float(f.read())
            except (OSError, ValueError):
                cpu = 0.0
        ticks, _ = summary_ticks(r.stderr)
        if keep and os.path.exists(out):
            shutil.copy(out, keep)
        return ticks, cpu, r.returncode, r.stderr


def bursty_perf(targets, seconds=4, event="cpu-clock", period=5000000):
    """`perf record -e EVENT -c PERIOD -p` on bursty: (samples, CPU seconds while perf ran)."""
    exe = os.path.join(targets, "bursty")
    with tempfile.TemporaryDirectory(prefix="plumb-truth-") as tmp:
        proc = start_target([exe, str(seconds + 30)])
        data = os.path.join(tmp, "perf.data")
        try:
            c0 = schedstat_ns(proc.pid)
            subprocess.run(["perf", "record", "-q", "-e", event, "-c", str(period), "-p", str(proc.pid), "-o", data,
                            "--", "sleep", str(seconds)], capture_output=True, timeout=seconds + 60)
            c1 = schedstat_ns(proc.pid)
        finally:
            stop(proc)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "tid"], capture_output=True, text=True,
                                timeout=60).stdout
        return len(script.split()), (c1 - c0) / 1e9


def now():
    return time.monotonic()
