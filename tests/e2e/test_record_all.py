"""End-to-end tests of `plumb record --all` (docs/design.md §13): two known burners among the machine's processes
get the CPU shares /proc says they used and their own functions, one root per process `name (pid)`; --pid and
--comm narrow it; without the privilege it needs it says so (exit 3); bad arguments are exit 2."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from plumbtest import PLUMB, TempDir, env, main, plumb, read_folded, target, wait_until  # noqa: E402
from procwatch import ProcWatch  # noqa: E402

SUMMARY = re.compile(r"Sampled (\d+) ticks over ([\d.]+)s \(\d+/s effective, [\d.e-]+s requested\) with system/(\S+) "
                     r"\((\d+) process(?:es)?\); (\d+) lost\.")
ROOT = re.compile(r"^(.*) \((\d+)\)$")


def start(argv):
    """Starts a burner and waits for its "ready" line."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def by_process(rows):
    """{pid: (name, samples, [(frames below the root, count)])} from folded rows with a root per process."""
    out = {}
    for frames, count in rows:
        m = ROOT.match(frames[0])
        assert m, "a root that is not `name (pid)`: " + frames[0]
        name, pid = m.group(1), int(m.group(2))
        prev = out.get(pid, (name, 0, []))
        out[pid] = (name, prev[1] + count, prev[2] + [(frames[1:], count)])
    return out


def inclusive(stacks, func):
    """Samples whose stack has a frame of function func."""
    return sum(c for fr, c in stacks if any(f == func or f.startswith(func + " ") for f in fr))


class RecordAll(TempDir):
    def setUp(self):
        super().setUp()
        self.burners = []

    def tearDown(self):
        for p in self.burners:
            p.kill()
            p.wait()
        super().tearDown()

    def record_all(self, *args, watch=()):
        out = self.path("all.folded")
        rec = subprocess.Popen([PLUMB, "record", "--all", "-o", out, *args], env=env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        w = ProcWatch(watch).start(rec.pid)
        _, err = rec.communicate(timeout=120)
        w.stop()
        self.assertEqual(rec.returncode, 0, err)
        return out, err, w

    def test_two_burners_get_their_cpu_and_their_functions(self):
        split = start([target("splitswitch"), "60"])
        duty = start([target("duty"), "30", "60"])
        self.burners += [split, duty]
        out, err, w = self.record_all("--seconds", "3", "--interval", "0.002", watch=[split.pid, duty.pid])
        m = SUMMARY.search(err)
        self.assertTrue(m, err)
        secs = float(m.group(2))
        procs = by_process(read_folded(out))
        self.assertGreater(len(procs), 2, "the machine's other processes are there too")
        for p, name in ((split, "splitswitch"), (duty, "duty")):
            self.assertIn(p.pid, procs, f"{name} ({p.pid}) is missing: {sorted(procs)[:20]}")
            self.assertEqual(procs[p.pid][0], name)
            got = 100.0 * procs[p.pid][1] * 0.002 / secs
            want = w.cpu_percent(p.pid)
            # 5 points, or 3.5 Poisson standard deviations of the count (the burner's CPU share moves with the
            # machine's load, and /proc's window is not quite the session's: 82.1 for 76.0 once, 1230 samples)
            n = procs[p.pid][1]
            tol = max(5.0, 3.5 * 100.0 * n ** 0.5 * 0.002 / secs)
            self.assertAlmostEqual(got, want, delta=tol, msg=f"{name}: sampled {got:.1f}% of a CPU, /proc {want:.1f}%")
        stacks = procs[split.pid][2]
        a, b, c = (inclusive(stacks, f) for f in ("path_a", "path_b", "path_c"))
        # 50/30/20 within 5 points, or 3.5 standard errors when a loaded machine left the burner few samples
        # (135 samples in one run: path_b 37, path_c 38 for an expected 40 and 27)
        n = a + b + c
        self.assertGreater(n, 30, (a, b, c))
        tol = max(5.0, 3.5 * 100 * (0.25 / n) ** 0.5)
        for got_n, want in ((a, 50), (b, 30), (c, 20)):
            self.assertAlmostEqual(100.0 * got_n / n, want, delta=tol, msg=(a, b, c))
        self.assertGreater(inclusive(stacks, "work_a"), 0.9 * a)
        stacks = procs[duty.pid][2]
        self.assertGreater(inclusive(stacks, "duty_burn"), 0.8 * procs[duty.pid][1])
        self.assertGreater(inclusive(stacks, "duty_loop"), 0.8 * procs[duty.pid][1])

    def test_a_rename_on_another_cpu_names_the_process(self):
        # exec'd on the last CPU, renamed on CPU 0 (tests/targets/renamer.c): the rename's COMM is read first
        last = max((os.cpu_count() or 1) - 1, 0)
        rec = subprocess.Popen([PLUMB, "record", "--all", "--seconds", "2", "-o", self.path("r.folded"),
                                "--comm", "^(renamer|renamed-now|taskset)$"], env=env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        self.assertTrue(wait_until(lambda: os.path.exists("/proc/%d" % rec.pid), timeout=5))
        time.sleep(0.5)  # sampling has started
        r = subprocess.run(["taskset", "-c", str(last), target("renamer"), "0.4"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        _, err = rec.communicate(timeout=120)
        self.assertEqual(rec.returncode, 0, err)
        names = {name for name, _, frames in by_process(read_folded(self.path("r.folded"))).values()
                 if any(f.startswith("renamed_burn ") for fr, _ in frames for f in fr)}
        self.assertEqual(names, {"renamed-now"}, err)

    def test_short_lived_processes_are_named(self):
        # issue 27: 691 of ~720 short-lived processes were named "?" (gone from /proc when their samples were read);
        # a process is named from the records of its fork (its parent's name) and its exec (PERF_RECORD_COMM)
        child = self.path("burnchild")
        os.symlink(target("spawner"), child)
        sp = subprocess.Popen([target("spawner"), "100000", "0.3", child], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
        self.burners.append(sp)
        self.assertEqual(sp.stdout.readline().strip(), "ready")
        # narrowed to the spawner's names and "?" (an unnamed process is kept, to be counted): the machine's other
        # processes are not symbolized, which keeps the test short on a loaded machine
        out, err, _ = self.record_all("--seconds", "2", "--interval", "0.001", "--comm", r"^(spawner|burnchild|\?)$")
        sp.stdin.close()
        pids = {int(x) for x in sp.stdout.read().split() if x.isdigit()}
        sp.stdout.close()
        sp.wait(timeout=30)
        self.assertGreater(len(pids), 50, "the spawner started too few children")
        procs = by_process(read_folded(out))
        theirs = {pid: procs[pid] for pid in pids if pid in procs}
        total = sum(s for _, s, _ in theirs.values())
        named = sum(s for name, s, _ in theirs.values() if name != "?")
        self.assertGreater(total, 40, "too few samples of the children to judge: %d" % total)
        self.assertGreaterEqual(named, 0.95 * total, "%d of %d samples of short-lived processes named: %s" %
                                (named, total, sorted({n for n, _, _ in theirs.values()})))
        self.assertTrue({n for n, _, _ in theirs.values()} <= {"spawner", "burnchild"},
                        sorted({n for n, _, _ in theirs.values()}))

    def test_pid_list_and_comm_narrow_it(self):
        # the duty is named for this test (a link's name is the process's): test_top's runs beside it in make check
        os.symlink(target("duty"), self.path("dutyra"))
        split = start([target("splitswitch"), "60"])
        duty = start([self.path("dutyra"), "20", "60"])
        self.burners += [split, duty]
        out, err, _ = self.record_all("--seconds", "1", "--pid", f"{split.pid},{duty.pid}")
        self.assertEqual(set(by_process(read_folded(out))), {split.pid, duty.pid}, err)
        self.assertIn("(2 processes)", err)
        out, err, _ = self.record_all("--seconds", "1", "--comm", "^dutyr[a]$")
        self.assertEqual(set(by_process(read_folded(out))), {duty.pid}, err)

    def test_hot_picks_processes_as_threads(self):
        split = start([target("splitswitch"), "60"])
        duty = start([target("duty"), "40", "60"])
        self.burners += [split, duty]
        out = self.path("two.json")
        r = plumb("record", "--all", "--seconds", "1", "--pid", f"{split.pid},{duty.pid}", "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("hot", out, "--thread", "^duty$")
        self.assertEqual(r.returncode, 0, r.stderr)
        leaf = r.stdout.split("leaf (self):", 1)[1].split("inclusive", 1)[0]
        self.assertIn("duty_burn (targets/duty.c", leaf)
        self.assertNotIn("work_a", leaf)
        r = plumb("hot", out, "--thread", f"splitswitch \\({split.pid}\\)")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("work_a (targets/splitswitch.c", r.stdout)
        self.assertNotIn("duty_burn", r.stdout)

    def test_bad_arguments_are_exit_2(self):
        cases = [
            ["--comm", "x", "--pid", "1"],
            ["--all", "--mode", "wall"],
            ["--all", "--pid", "12x"],
            ["--all", "--pid", "1,,2"],
            ["--all", "--backend", "ptrace"],
            ["--all", "--comm", "(unclosed"],
            ["--all", "--", "true"],
        ]
        for args in cases:
            r = plumb("record", *args, "--seconds", "1", "-o", self.path("b.folded"))
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))

    def test_without_the_privilege_it_says_what_it_needs(self):
        # plumb runs as an unprivileged user: the kernel's perf_event_paranoid decides
        od = self.path("out")
        os.mkdir(od)
        os.chmod(od, 0o777)
        r, paranoid = self.run_unprivileged("record", "--all", "--seconds", "1", "-o", os.path.join(od, "np.folded"))
        if paranoid > 0:
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("perf_event_paranoid <= 0", r.stderr)
            self.assertIn(f"it is {paranoid} here", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        else:
            self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    main()
# plumbtest: slow
