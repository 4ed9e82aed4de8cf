"""One profile through every path (docs/design.md §6.7): for every reader x writer among folded, perf script
(input), Firefox JSON (plain and gzipped), speedscope and pprof, reading a file and reading what it converts to
give the same `plumb hot --json` — function rows and their counts (so function identity and the _[k]/_[j] kinds
in the names), totals, and what the writer can hold of units, sample counts and threads — on a generated corpus
(random stacks with kernel, JIT, inlined, Python and nameless frames, several processes and threads, time and
count weights), on real recordings of the test targets, and on the peer data. Labels themselves read back to the
same bytes (render(parse(label)) == label) through folded output. `plumb diff` of one recording saved in two
formats changes no row."""
import gzip
import json
import os
import random
import unittest

from plumbtest import FIXTURES, TempDir, plumb, target

WRITERS = [".folded", ".json", ".json.gz", ".speedscope.json", ".pb.gz"]
# what each writer holds besides function rows and totals (docs/design.md §6.7): folded keeps the threads' names
# and tids (with --threads) but not their pids, nor the unit or the sample counts
HOLDS = {
    ".folded": {"unit": False, "samples": False, "pid": False},
    ".json": {"unit": True, "samples": True, "pid": True},
    ".json.gz": {"unit": True, "samples": True, "pid": True},
    ".speedscope.json": {"unit": True, "samples": True, "pid": True},
    ".pb.gz": {"unit": True, "samples": True, "pid": True},
}


def hot(path, *extra):
    r = plumb("hot", path, "--json", *extra, timeout=300)
    if r.returncode != 0:
        raise AssertionError("plumb hot %s failed (%d): %s" % (path, r.returncode, r.stderr))
    return json.loads(r.stdout)


def rows(doc, table, blanks=False):
    """{name: count}; with blanks, a name of white space only reads as [unknown], as folded text gives it back (the
    white space ending a stack runs into the one before its count)."""
    out = {}
    for r in doc[table]:
        name = r["name"].strip() or "[unknown]" if blanks else r["name"]
        out[name] = out.get(name, 0) + r["count"]
    return out


def threads(doc, pid):
    return sorted((t["name"], t["tid"], t["pid"] if pid else 0, t["count"]) for t in doc["threads"])


# ---- a generated corpus -----------------------------------------------------------------------------------------

def gen_folded(path, rng):
    """Count weights: threads as --threads roots, frames of every kind and shape of the label grammar."""
    user = ["main (app/main.c:%d)" % l for l in (10, 12, 40)] + ["parse (app/parse.c:120)", "memcpy (libc.so.6)",
                                                                 "std::vector<int>::push_back (c++/vector.h:9)"]
    kernel = ["do_syscall_64_[k]", "clear_page_erms_[k]", "ext4_read (fs/read.c:7)_[k]", "vfs_read ([ext4])_[k]"]
    jit = ["jit_fn (perf-42.map)_[j]", "Lambda$1 (perf-42.map)_[j]"]
    inl = ["mix_step (app/mix.c:14)_[i]", "helper (app/util.h:3)_[i]"]
    py = ["run (pkg/mod.py:7)", "<module> (app/tool.py:1)", "work (pkg/mod.py:30)"]
    nameless = ["libfoo.so.1+0x4300", "libfoo.so.1+0x11a0", "[unknown] (libbar.so)", "[unknown]"]
    roots = ["app (100)", "worker (101)", "other (200)"]
    lines = {}
    for _ in range(400):
        depth = rng.randint(1, 9)
        stack = [rng.choice(roots)]
        for d in range(depth):
            pool = rng.choice([user, user, py, nameless, inl, jit])
            stack.append(rng.choice(pool))
        if rng.random() < 0.3:
            stack += rng.sample(kernel, rng.randint(1, 2))
        key = ";".join(stack)
        lines[key] = lines.get(key, 0) + rng.randint(1, 50)
    with open(path, "w") as f:
        for k, v in sorted(lines.items()):
            f.write("%s %d\n" % (k, v))


def gen_perf(path, rng):
    """Time weights: cpu-clock events of two processes and three threads, with periods and times; kernel, JIT
    and library frames, an inline chain."""
    procs = [("app", 100, 100), ("app", 100, 101), ("other", 200, 200)]
    frames = [("main", "/opt/app/bin/app"), ("parse", "/opt/app/bin/app"), ("memcpy", "/usr/lib/libc.so.6"),
              ("Lambda$1", "/tmp/perf-100.map"), ("inner->outer", "/opt/app/bin/app"), ("[unknown]", "[unknown]")]
    kern = [("do_syscall_64", "[kernel.kallsyms]"), ("clear_page_erms", "[kernel.kallsyms]")]
    t = 5000.0
    with open(path, "w") as f:
        for i in range(600):
            comm, pid, tid = rng.choice(procs)
            t += rng.random() / 1000
            period = 1000000 + rng.randint(-5000, 5000)
            f.write("%s %d/%d [000] %.6f: %d cpu-clock:pppH:\n" % (comm, pid, tid, t, period))
            stack = [rng.choice(kern) for _ in range(rng.randint(0, 2))]
            stack += [rng.choice(frames) for _ in range(rng.randint(1, 6))]
            for k, (sym, mod) in enumerate(stack):
                f.write("\t%12x %s+0x%x (%s)\n" % (0xffff0000 + 16 * k, sym, rng.randint(0, 64), mod))
            f.write("\n")


class Matrix(TempDir):
    def setUp(self):
        super().setUp()
        self.rng = random.Random(14)

    def inputs(self, source):
        """The source and the same profile in every other readable format (through plumb: reading those formats
        is what the matrix tests)."""
        out = [source]
        for ext in (".json", ".json.gz", ".speedscope.json", ".pb.gz"):
            p = source + ".in" + ext
            r = plumb("convert", source, "-o", p, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            out.append(p)
        return out

    def check_round_trip(self, path):
        want = hot(path)
        for ext in WRITERS:
            with self.subTest(input=os.path.basename(path), writer=ext):
                out = self.path(os.path.basename(path) + ".out" + ext)  # never beside a fixture
                r = plumb("convert", path, "-o", out, "--threads", timeout=300)
                self.assertEqual(r.returncode, 0, r.stderr)
                got = hot(out)
                holds = HOLDS[ext]
                self.assertEqual(got["total"], want["total"])
                blanks = ext == ".folded"
                self.assertEqual(rows(got, "leaf", blanks), rows(want, "leaf", blanks))
                self.assertEqual(rows(got, "inclusive", blanks), rows(want, "inclusive", blanks))
                self.assertEqual(threads(got, holds["pid"]), threads(want, holds["pid"]))
                if holds["unit"]:
                    self.assertEqual(got["weight_unit"], want["weight_unit"])
                    self.assertEqual(got["interval_ns"], want["interval_ns"])
                if holds["samples"]:
                    self.assertEqual(got["samples"], want["samples"])
                if ext == ".folded":
                    self.check_labels_read_back(out)

    def check_labels_read_back(self, folded):
        """Every label of a folded file reads into fields that render back to the same bytes."""
        again = folded + ".again.folded"
        r = plumb("convert", folded, "-o", again, "--threads")
        self.assertEqual(r.returncode, 0, r.stderr)
        def lines(f):  # a leaf label of white space only comes back as [unknown] (see rows())
            out = []
            for line in f.read().splitlines():
                stack, _, n = line.rpartition(" ")
                stack = stack[:-1] + "[unknown]" if stack.endswith("; ") else stack
                out.append(stack + " " + n)
            return sorted(out)
        with open(folded) as a, open(again) as b:
            self.assertEqual(lines(a), lines(b))

    def test_generated_counts_every_reader_and_writer(self):
        src = self.path("gen.folded")
        gen_folded(src, self.rng)
        for path in self.inputs(src):
            self.check_round_trip(path)
        doc = hot(src)
        names = set(rows(doc, "inclusive"))
        for kind in ("clear_page_erms_[k]", "jit_fn (perf-42.map)_[j]", "libfoo.so.1+0x4300", "run (pkg/mod.py)"):
            self.assertIn(kind, names)
        self.assertEqual(len(doc["threads"]), 3)

    def test_generated_perf_script_every_writer(self):
        src = self.path("gen.perf.txt")
        gen_perf(src, self.rng)
        want = hot(src)
        self.assertEqual(want["weight_unit"], "nanoseconds")
        self.assertEqual(want["samples"], 600)
        self.assertEqual(sorted((t["name"], t["pid"], t["tid"]) for t in want["threads"]),
                         [("app", 100, 100), ("app", 100, 101), ("other", 200, 200)])
        for path in self.inputs(src):
            self.check_round_trip(path)

    def test_recordings(self):
        for name, ext, args in (("split", ".json", []), ("threads", ".folded", ["--threads"]),
                                ("inlined", ".json.gz", [])):
            rec = self.path(name + ext)
            r = plumb("record", "-o", rec, *args, "--", target(name), timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            for path in self.inputs(rec) if ext != ".folded" else [rec]:
                self.check_round_trip(path)

    def test_peer_data(self):
        gecko = os.path.join(FIXTURES, "gecko")
        perf = os.path.join(FIXTURES, "flamegraph", "test")
        for path in (os.path.join(gecko, "samply-ls-linux-profile.v41.json"),
                     os.path.join(gecko, "fxprof-profile_without_js.v66.json"),
                     os.path.join(perf, "perf-vertx-stacks-01.txt"),
                     os.path.join(FIXTURES, "inferno", "collapse-perf", "go-stacks.txt")):
            self.check_round_trip(path)

    def test_diff_of_one_recording_in_two_formats_has_no_row(self):
        rec = self.path("rec.json")
        r = plumb("record", "-o", rec, "--", target("split"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        for ext in (".folded", ".json.gz", ".speedscope.json", ".pb.gz"):
            other = self.path("rec" + ext)
            self.assertEqual(plumb("convert", rec, "-o", other).returncode, 0)
            for table in ("leaf", "inclusive"):
                d = plumb("diff", rec, other, "--json", "--table", table)
                self.assertEqual(d.returncode, 0, d.stderr)
                moved = [row for row in json.loads(d.stdout)["rows"] if row["delta_count"] != 0 or
                         row["before"]["count"] != row["after"]["count"]]
                self.assertEqual(moved, [], (ext, table))


class LabelsReadBack(TempDir):
    """render(parse(label)) == label for every label of the folded files in tests/fixtures and the peer data:
    a folded file converted to folded comes back line for line (counts summed for repeated stacks)."""

    def folded_files(self):
        dirs = [os.path.join(FIXTURES, "folded"), os.path.join(FIXTURES, "inferno", "flamegraph"),
                os.path.join(FIXTURES, "inferno", "diff-folded"), os.path.join(FIXTURES, "flamegraph", "test",
                                                                                 "results"),
                os.path.join(FIXTURES, "inferno", "collapse-perf", "results"),
                os.path.join(FIXTURES, "flamegraph", "results-extra"), "/work/shared/peer-data"]
        for d in dirs:
            for root, _, files in os.walk(d):
                for f in files:
                    if f.endswith((".txt", ".folded", ".collapsed")):
                        yield os.path.join(root, f)

    @staticmethod
    def summed(lines):
        out = {}
        for line in lines:
            line = line.rstrip("\n").rstrip("\r").strip(" \t")
            if not line or line.startswith("#"):
                continue
            stack, _, n = line.rpartition(" ")
            if not stack or not n.isdigit():
                return None
            stack = stack.rstrip(" \t")
            if int(n):  # a stack of count 0 is no sample: writers leave it out
                out[stack] = out.get(stack, 0) + int(n)
        return out

    def test_every_label_renders_back(self):
        checked = 0
        for path in self.folded_files():
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                want = self.summed(f)
            if not want or any(";;" in s or s.startswith(";") or s.endswith(";") for s in want):
                continue  # not plain folded stacks (perf script text, counts with fractions, empty frames)
            out = self.path("again.folded")
            r = plumb("convert", path, "--from", "folded", "-o", out)
            self.assertEqual(r.returncode, 0, (path, r.stderr))
            with open(out, encoding="utf-8", errors="surrogateescape") as f:
                got = self.summed(f)
            self.assertEqual(got, want, path)
            checked += 1
        self.assertGreater(checked, 60)


if __name__ == "__main__":
    unittest.main()
