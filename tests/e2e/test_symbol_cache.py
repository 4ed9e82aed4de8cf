"""End-to-end: the symbol cache (docs/symbols.md): a second record of the same program names its frames
exactly as the first did without opening the debug information again (libc's separate debug file, whose
compressed sections the first run inflates), the cache is keyed on the build-id so a program replaced under the
same path gets its own names, and two records at once leave a cache every later run can read."""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main, needs_tool, read_folded, skip_missing, target  # noqa: E402


def labels(rows):
    return {f for frames, _ in rows for f in frames if not f.endswith("_[k]")}


def debug_opens(trace):
    """{path: build-id} of the files under /usr/lib/debug/.build-id that the traced processes opened. strace -f
    splits a call another process interrupts into an "<unfinished ...>" line and a "<... resumed>" one: the
    two are joined by pid before the result is read."""
    pending, out = {}, {}
    with open(trace) as f:
        for ln in f:
            pid, _, rest = ln.strip().partition(" ")
            rest = rest.strip()
            if rest.endswith("<unfinished ...>"):
                pending[pid] = rest[:-len("<unfinished ...>")]
                continue
            if rest.startswith("<... ") and pid in pending:
                rest = pending.pop(pid) + rest.split(">", 1)[1]
            m = re.match(r'open(?:at)?\(.*"(/usr/lib/debug/\.build-id/([0-9a-f]{2})/([0-9a-f]+)\.debug)".*\)\s*=\s*(-?\d+)',
                         rest)
            if m and int(m.group(4)) >= 0:
                out[m.group(1)] = m.group(2) + m.group(3)
    return out


class SymbolCache(TempDir):
    def setUp(self):
        super().setUp()
        self.env = env(PLUMB_HOME=self.path("home"), PLUMB_SYMBOL_CACHE="1")

    def record(self, argv, out, strace_log=None):
        cmd = [PLUMB, "record", "--no-kernel", "--interval", "0.002", "-o", out, "--"] + argv
        e = self.env
        if strace_log:
            cmd = ["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", strace_log] + cmd
            # LeakSanitizer cannot run under ptrace (make asan): the leak check is make asan's other runs' job
            e = dict(e, ASAN_OPTIONS=(e.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
        r = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return read_folded(out)

    def cache_entries(self):
        """{build-id: set of entry lines} of the symbol cache now."""
        out = {}
        for path in glob.glob(self.path("home/symbols/*")):
            with open(path) as f:
                out[os.path.basename(path)] = set(f.read().splitlines()[1:])
        return out

    def test_second_run_reads_no_debug_information(self):
        needs_tool("strace", "Debian package strace")
        prog = [target("benchwork"), "spin", "200"]
        first = self.record(prog, self.path("1.folded"), self.path("1.trace"))
        if not debug_opens(self.path("1.trace")):
            skip_missing("libc6-dbg", "Debian package libc6-dbg: a separate debug file to read")
        # the cache holds the addresses a run resolved: a later run that samples an address no run sampled
        # before (libc's exit path, ld.so while it maps the program: rare, more so on a loaded machine) reads
        # that module's debug information once and adds the entry. So each later run is checked module by
        # module: a module whose cache file it did not change must not have had its debug file opened, and
        # one of three runs must leave the entries of a module the first run read as they were (about 1 run in 16 adds one here).
        read_first = set(debug_opens(self.path("1.trace")).values())
        checked = False
        for k in range(2, 5):
            before = self.cache_entries()
            second = self.record(prog, self.path("%d.folded" % k), self.path("%d.trace" % k))
            after = self.cache_entries()
            # the program's own functions are on nearly every stack: the same names both times (the lines
            # sampled differ from run to run, so labels are compared by function)
            def own(rows):
                return {f.split(" (", 1)[0] for f in labels(rows) if "targets/benchwork.c" in f}
            self.assertEqual(own(first), own(second))
            self.assertTrue(any(f.startswith("work (") for f in labels(second)), labels(second))
            self.assertTrue(after)
            unchanged = {bid for bid in before if after.get(bid) == before[bid]}
            opened = debug_opens(self.path("%d.trace" % k))
            self.assertEqual({p: b for p, b in opened.items() if b in unchanged}, {}, (k, sorted(opened)))
            if read_first & unchanged:
                checked = True
                break
        self.assertTrue(checked, "every run added entries to the cache of %s" % sorted(read_first))

    def test_program_replaced_under_the_same_path(self):
        prog = self.path("prog")
        shutil.copy(target("split-nofp"), prog)
        first = labels(self.record([prog, "1"], self.path("a.folded")))
        self.assertTrue(any(f.startswith("path_a (") for f in first), first)
        os.unlink(prog)
        shutil.copy(target("inlined-nofp"), prog)
        second = labels(self.record([prog], self.path("b.folded")))
        self.assertFalse([f for f in second if f.split(" ", 1)[0] in ("path_a", "path_b", "path_c")], second)
        self.assertTrue(any(f.startswith("outer_work (targets/inlined.c:") for f in second), second)

    def test_concurrent_runs_leave_a_readable_cache(self):
        prog = [target("split-nofp"), "1"]
        procs = [subprocess.Popen([PLUMB, "record", "--no-kernel", "-o", self.path("%d.folded" % i), "--"] + prog,
                                  env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for i in range(2)]
        for p in procs:
            self.assertEqual(p.wait(timeout=120), 0, p.stderr.read())
        for path in glob.glob(self.path("home/symbols/*")):
            with open(path) as f:
                text = f.read()
            self.assertTrue(text.startswith("plumb-symbols 1\t") and text.endswith("\n"), path)
        again = labels(self.record(prog, self.path("3.folded")))
        self.assertTrue(any(f.startswith("burn (") for f in again), again)


    def test_planted_entries_are_not_read(self):
        """The cache lives in PLUMB_HOME and keeps its trust rule (docs/design.md §3.5): an entry that is a FIFO
        or another user's file is not read (a FIFO once blocked the record), and the run names its frames."""
        prog = [target("benchwork"), "spin", "100"]
        self.record(prog, self.path("1.folded"))
        entries = sorted(glob.glob(self.path("home/symbols/*")))
        self.assertTrue(entries)
        os.unlink(entries[0])
        os.mkfifo(entries[0])
        if len(entries) > 1:
            with open(entries[1], "w") as f:
                f.write("plumb-symbols 1\t/nonexistent\t0\t0\n")
            os.chown(entries[1], 65534, 65534)
        cmd = ["timeout", "-s", "KILL", "30", PLUMB, "record", "--no-kernel", "-o", self.path("2.folded"), "--"]
        r = subprocess.run(cmd + prog, env=self.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(any(f.startswith("work (") for f in labels(read_folded(self.path("2.folded")))))

if __name__ == "__main__":
    main()
