"""Nothing left behind (docs/design.md §3.4): every temp file plumb makes lives beside the output it belongs to,
is removed on every signal plumb can catch and swept by the next run after one it cannot; and a killed
`bench run` takes its case processes with it.

- SIGINT, SIGTERM, SIGHUP and SIGPIPE at random moments of `record --stages --summary` (20 each, short
  targets): no temp file anywhere, $TMPDIR included.
- SIGKILL of `record --stages`: no /tmp/plumb-stages-*; the stage scratch beside --stages is swept by the next
  run.
- SIGKILL of `bench run`: no case process left within 2 s, nothing in $TMPDIR, the samples scratch beside the
  artifact swept by the next run.
- py-spy's output: a scratch file beside the profile, not a folder in /tmp."""
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main, plumb, skip_installed, target, wait_until  # noqa: E402

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE]
RUNS_PER_SIGNAL = 20


def default_signals():
    """A test runner started in the background may have SIGINT ignored; plumb keeps ignored signals ignored."""
    for s in SIGNALS + [signal.SIGQUIT]:
        signal.signal(s, signal.SIG_DFL)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def processes_with(marker):
    """Pids of live processes whose command line holds `marker` (zombies have none)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


class Leftovers(TempDir):
    def setUp(self):
        super().setUp()
        self.out = self.path("out")
        self.tmpdir = self.path("tmpdir")  # plumb's $TMPDIR: nothing may land there
        os.mkdir(self.out)
        os.mkdir(self.tmpdir)
        self.env = env(True, TMPDIR=self.tmpdir)

    def left(self, *keep):
        found = sorted(os.listdir(self.out)) + ["$TMPDIR/" + n for n in sorted(os.listdir(self.tmpdir))]
        return [n for n in found if n not in keep]

    def start(self, args):
        return subprocess.Popen([PLUMB, *args], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=default_signals)

    def record_args(self, seconds):
        return ["record", "-o", os.path.join(self.out, "p.folded"), "--stages", os.path.join(self.out, "st.json"),
                "--summary", os.path.join(self.out, "hot.json"), "--", target("stages2"), str(seconds)]

    def test_record_signals_at_random_moments(self):
        rng = random.Random(17)
        t0 = time.monotonic()
        r = subprocess.run([PLUMB, *self.record_args(0.05)], env=self.env, capture_output=True, timeout=60)
        took = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs = ["hot.json", "p.folded", "st.json"]
        for sig in SIGNALS:
            for i in range(RUNS_PER_SIGNAL):
                for n in outputs:
                    if os.path.exists(os.path.join(self.out, n)):
                        os.unlink(os.path.join(self.out, n))
                p = self.start(self.record_args(0.05))
                time.sleep(rng.uniform(0, took))
                kids = children(p.pid)
                p.send_signal(sig)
                _, err = p.communicate(timeout=60)
                for k in kids:  # a target plumb's death left running (gone already when it ended in time)
                    try:
                        os.kill(k, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.assertIn(p.returncode, (0, 1, -sig), err)
                self.assertEqual(self.left(*outputs), [], "%s at %s run %d left temp files" % (sig.name, "record", i))

    def test_record_stages_sigkill_then_next_run(self):
        p = self.start(self.record_args(30))
        kids = []
        try:
            kids = wait_until(lambda: children(p.pid), timeout=20)
            self.assertTrue(kids, "the target never started")
            p.kill()
            p.wait()
        finally:
            for k in kids:  # the target a killed plumb leaves running (it holds plumb's stderr open too)
                os.kill(k, signal.SIGKILL)
            p.communicate()
        self.assertEqual(os.listdir(self.tmpdir), [], "a stage file went to $TMPDIR")
        stale = self.left()
        self.assertEqual(len(stale), 1, stale)  # SIGKILL cannot be caught: the scratch beside --stages stays
        self.assertRegex(stale[0], r"^\.st\.json\.plumb-tmp\.%d\.\w{6}$" % p.pid)
        r = subprocess.run([PLUMB, *self.record_args(0.05)], env=self.env, capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.left("hot.json", "p.folded", "st.json"), [], "the next run did not sweep it")

    def test_bench_run_sigkill_takes_its_cases_along(self):
        marker = "61.%d" % os.getpid()
        suite = self.path("suite.ini")
        with open(suite, "w") as f:
            # a process group of its own with a child of the shell and a grandchild
            f.write("[case sleepy]\nrun = sleep %s & sh -c 'sleep %s; true'; wait\n" % (marker, marker))
        art = os.path.join(self.out, "a.json")
        p = self.start(["bench", "run", suite, "--repeats", "1", "--warmup", "0", "--out", art])
        try:
            self.assertTrue(wait_until(lambda: len(processes_with(marker)) >= 2, timeout=20),
                            "the case never started")
            p.kill()
            p.wait()
            gone = wait_until(lambda: not processes_with(marker), timeout=2)
            self.assertTrue(gone, "case processes outlived a killed bench run: %s" % processes_with(marker))
        finally:
            for pid in processes_with(marker):
                os.kill(pid, signal.SIGKILL)
            p.communicate()  # its stderr, once nothing that inherited it is left
        self.assertEqual(os.listdir(self.tmpdir), [], "bench run put files in $TMPDIR")
        stale = self.left()
        self.assertTrue(all(n.startswith(".a.json.plumb-tmp.%d." % p.pid) for n in stale), stale)
        with open(suite, "w") as f:
            f.write("[case quick]\nrun = true\n")
        r = plumb("bench", "run", suite, "--repeats", "1", "--warmup", "0", "--out", art, debug=False,
                  extra_env={"TMPDIR": self.tmpdir})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.left("a.json"), [], "the next run did not sweep the samples scratch")

    def test_pyspy_output_lives_beside_the_profile(self):
        """py-spy's output file (a fake py-spy here, in ~/.cargo/bin where plumb looks for one) is a scratch file
        beside the profile, not a folder in /tmp, and is gone afterwards."""
        if os.path.exists("/usr/local/bin/py-spy"):
            skip_installed("py-spy", "/usr/local/bin")
        home = self.path("home")
        os.makedirs(os.path.join(home, ".cargo", "bin"))
        fake = os.path.join(home, ".cargo", "bin", "py-spy")
        log = self.path("pyspy.args")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %s\nwhile [ \"$1\" != --output ]; do shift; done\n"
                    "printf 'main (app.py:1);work (app.py:2) 7\\n' > \"$2\"\n" % log)
        os.chmod(fake, 0o755)
        out = os.path.join(self.out, "p.folded")
        r = subprocess.run([PLUMB, "record", "--backend", "py-spy", "-o", out, "--", "true"],
                           env=dict(self.env, HOME=home), capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            args = f.read().split("\n")
        given = args[args.index("--output") + 1]
        self.assertEqual(os.path.dirname(given), self.out, "py-spy was not given a file beside the profile")
        self.assertRegex(os.path.basename(given), r"^\.p\.folded\.plumb-tmp\.\d+\.\w{6}$")
        self.assertEqual(self.left("p.folded"), [], "py-spy's output file was left")
        with open(out) as f:
            self.assertIn("work (app.py:2)", f.read())


if __name__ == "__main__":
    main()
