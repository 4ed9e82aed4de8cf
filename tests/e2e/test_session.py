"""One sampling session under record, top and metrics record (docs/design.md §5.2, §7, §13):

- kill -KILL of `plumb record -- CMD`, `plumb top -- CMD` and `plumb metrics record -- CMD` (what CI's
  `timeout -s KILL` and the OOM killer do) leaves no process it launched after 2 s: a long-running child and the
  grandchild it started (the keeper ends the tree);
- `metrics record --profile FILE` samples the tree's stacks with record's options (which need --profile);
- `metrics record -- true` twice: a command that ends before the first sample leaves no recording behind, so the
  second run is not refused;
- `top --pid` of a CPython busy loop shows its Python functions, as `record --pid` does;
- `top --mode wall` of a process blocked in sigsuspend shows its wait;
- the sampling options are one table: top and metrics record show every sampling option record shows, with the
  same argument and the same help text."""
import os
import re
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main, plumb, read_folded, skip_missing, target, wait_until  # noqa: E402

BUSY_PY = "def burn_here():\n    x = 0\n    while True:\n        x += 1\n\nburn_here()\n"


def marked(mark):
    """Live processes whose environment holds PLUMB_SESSION_MARK=mark (every descendant of a marked command)."""
    found = []
    needle = ("PLUMB_SESSION_MARK=%s" % mark).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rpartition(")")[2].split()[0] in ("Z", "X"):
                    continue
            with open("/proc/%s/comm" % pid) as f:
                if f.read().strip().startswith("plumb"):
                    continue  # plumb itself (and its keeper) carry the mark too: only what it launched counts
        except OSError:
            continue
        found.append(int(pid))
    return found


class KilledPlumbLeavesNothing(TempDir):
    """SIGKILL of plumb while it runs a command whose child started a grandchild."""

    def setUp(self):
        super().setUp()
        self.mark = uuid.uuid4().hex
        self.addCleanup(self.kill_leftovers)

    def kill_leftovers(self):
        for pid in marked(self.mark):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def kill_mid_run(self, *args):
        # sh (the child) starts `sleep 300` (a grandchild) and a busy loop (another grandchild), and waits
        command = ["sh", "-c", "sleep 300 & sh -c 'while :; do :; done' & wait"]
        with open(self.path("out"), "w") as out, open(self.path("err"), "w") as err:
            p = subprocess.Popen([PLUMB, *args, "--", *command], stdout=out, stderr=err, cwd=self.tmp,
                                 env=env(PLUMB_SESSION_MARK=self.mark, PLUMB_HOME=self.path("home")))
        try:
            self.assertTrue(wait_until(lambda: len(marked(self.mark)) >= 3, timeout=20),
                            "the command and its two children never all ran: %s" % marked(self.mark))
            self.assertIsNone(p.poll(), "plumb ended before it was killed")
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=10)
            t0 = time.monotonic()
            gone = wait_until(lambda: not marked(self.mark), timeout=2.0)
            took = time.monotonic() - t0
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        with open(self.path("err")) as f:
            err = f.read()
        self.assertTrue(gone, "still running 2 s after plumb was killed: %s\n%s" % (marked(self.mark), err))
        return took

    def test_record(self):
        self.kill_mid_run("record", "-o", self.path("p.folded"))

    def test_record_inprocess(self):
        self.kill_mid_run("record", "--backend", "inprocess", "-o", self.path("p.folded"))

    def test_top(self):
        self.kill_mid_run("top", "--refresh", "0.2")

    def test_metrics_record(self):
        self.kill_mid_run("metrics", "record", "--every", "0.1", "--name", "killed")


class MetricsTrueTwice(TempDir):
    def test_a_command_that_ends_at_once_is_never_refused_the_next_time(self):
        """Whether the sample taken at the start finds `true` alive is a race: either nothing is recorded (exit 1,
        no file), or a valid one-sample recording is written; a second and third run are never refused, and a
        taken name derived from the command goes to the next free NAME.N instead of replacing the earlier one."""
        home = {"PLUMB_HOME": self.path("home")}
        mdir = os.path.join(self.path("home"), "metrics")
        written = []
        for run in (1, 2, 3):
            r = plumb("metrics", "record", "--", "true", extra_env=home, timeout=30)
            self.assertNotIn("exists", r.stderr, "run %d was refused" % run)
            if r.returncode == 1:
                self.assertIn("nothing was recorded: true exited with 0 before the first sample; no recording "
                              "written", r.stderr)
            else:
                self.assertEqual(r.returncode, 0, r.stderr)
                m = re.search(r"of (true(?:\.\d+)?) written to", r.stderr)
                self.assertIsNotNone(m, r.stderr)
                written.append(m.group(1))
                shown = plumb("metrics", "--name", m.group(1), extra_env=home)
                self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertEqual(len(written), len(set(written)), "a recording was replaced: %r" % written)
        self.assertEqual(sorted(n + ".json" for n in written), sorted(os.listdir(mdir)) if written else [])
        # the same name derived from the command when it surely is taken: the next run goes to true.N
        r = plumb("metrics", "record", "--every", "0.05", "--", "sh", "-c", "sleep 0.3", extra_env=home,
                  timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("metrics", "record", "--every", "0.05", "--", "sh", "-c", "sleep 0.3", extra_env=home,
                  timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("of sh.2 written to", r.stderr)
        # a name the user gave is replaced only with --force
        r = plumb("metrics", "record", "--every", "0.05", "--name", "sh", "--", "sleep", "0.3", extra_env=home,
                  timeout=30)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("a recording named 'sh' exists", r.stderr)
        r = plumb("metrics", "record", "--every", "0.05", "--name", "sh", "--force", "--", "sleep", "0.3",
                  extra_env=home, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sleep exited with 0.", r.stderr)


def leaf_rows(text):
    """(own%, function) of the session table of the last block top printed in a pipe."""
    blocks = [b for b in text.split("plumb top |") if b.strip()]
    self_rows = []
    if not blocks:
        return self_rows
    session = blocks[-1].split("session ")[-1]
    for line in session.splitlines()[2:]:
        m = re.match(r"\s*([\d.]+)\s+([\d.]+)\s+(.*)$", line)
        if m:
            self_rows.append((float(m.group(1)), m.group(3)))
    return self_rows


class TopLikeRecord(TempDir):
    def test_top_of_a_cpython_process_shows_its_python_functions(self):
        exe = "/usr/bin/python3"
        if not os.path.exists(exe):
            skip_missing("python3", "Debian's /usr/bin/python3")
        p = subprocess.Popen([exe, "-c", BUSY_PY])
        try:
            wait_until(lambda: open("/proc/%d/stat" % p.pid).read().split()[13] != "0", timeout=5)
            r = plumb("top", "--pid", str(p.pid), "--refresh", "1", "-n", "2", "--top", "5", timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("| python/", r.stdout)
            rows = leaf_rows(r.stdout)
            self.assertTrue(rows, r.stdout)
            share, name = rows[0]
            self.assertTrue(name.startswith("burn_here ("), r.stdout)  # a Python function, not _PyEval_...
            self.assertGreater(share, 90, r.stdout)
            self.assertNotIn("_PyEval_EvalFrameDefault", r.stdout)
            # record --pid of the same process names the same function
            out = self.path("py.folded")
            r = plumb("record", "--pid", str(p.pid), "--seconds", "1", "-o", out, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                self.assertIn("burn_here (", f.read())
        finally:
            p.kill()
            p.wait()

    def test_top_wall_mode_shows_a_thread_waiting_in_sigsuspend(self):
        p = subprocess.Popen([target("suspender"), "60"], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
            r = plumb("top", "--pid", str(p.pid), "--mode", "wall", "--refresh", "1", "-n", "2", "--top", "8",
                      "--table", "inclusive", timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            header = r.stdout.split("\n", 1)[0]
            m = re.search(r"\| (\d+) samples \|", header)
            self.assertTrue(m and int(m.group(1)) > 0, "no samples in the first window: " + header)
            # one thread waiting the whole time: its wait is ~200 samples a second, all of them under wait_here
            last = r.stdout.split("plumb top |")[-1]
            self.assertIn("wall", last)
            total = re.search(r"\| (\d+) samples \|", last)
            self.assertGreater(int(total.group(1)), 150, last)
            # the inclusive table: total% first, then own%; the whole wait is under wait_here, in sigsuspend
            self.assertRegex(last, r"\n\s*100\.0\s+[\d.]+\s+wait_here \(", last)
            self.assertRegex(last, r"\n\s*100\.0\s+100\.0\s+\S*sigsuspend", last)
        finally:
            p.kill()
            p.wait()


class MetricsProfile(TempDir):
    def test_metrics_record_samples_stacks_with_records_options(self):
        home = {"PLUMB_HOME": self.path("home")}
        out = self.path("m.folded")
        r = plumb("metrics", "record", "--every", "0.1", "--rate", "500", "--unwind", "fp", "--profile", out, "--",
                  target("split"), "1", extra_env=home, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"stack samples? with perf_event/fp written to")
        self.assertIn("split exited with 0.", r.stderr)
        rows = read_folded(out)
        self.assertGreater(sum(c for _, c in rows), 0)
        for path in ("path_a", "path_b", "path_c"):
            self.assertTrue(any(any(f.startswith(path + " ") for f in fr) for fr, _ in rows), (path, rows[:3]))
        self.assertTrue(os.path.exists(os.path.join(self.path("home"), "metrics", "split.json")))
        # without --profile a stack option has nothing to do: exit 2, and it says what it goes with
        r = plumb("metrics", "record", "--rate", "500", "--", "true", extra_env=home)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--rate is about sampling stacks: it goes with --profile FILE", r.stderr)


class SameFate(TempDir):
    def test_the_three_commands_say_alike_how_the_target_ended(self):
        command = ["sh", "-c", "%s 0.6 >/dev/null; exit 3" % target("split")]
        home = {"PLUMB_HOME": self.path("home")}
        runs = {
            "record": plumb("record", "-o", self.path("f.folded"), "--", *command, timeout=60),
            "top": plumb("top", "--refresh", "0.2", "--", *command, timeout=60),
            "metrics record": plumb("metrics", "record", "--every", "0.1", "--", *command, extra_env=home, timeout=60),
        }
        for name, r in runs.items():
            with self.subTest(command=name):
                # a command that failed on its own is exit 1, with what was sampled kept (docs/design.md §3.2)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertRegex(r.stderr, r"(^|[ .:] )sh exited with 3\.\n", r.stderr)


# The rows of CMD_SAMPLING_OPTS (src/cmd/cmd.h): what every sampling command accepts.
SAMPLING = ["--pid", "--target", "--all", "--comm", "--interval", "--rate", "--seconds", "--mode", "--alloc-interval", "--unwind",
            "--stack-size", "--no-kernel", "--backend", "--native", "--idle"]
# record's options that are about its output, not about sampling.
RECORD_OUTPUT = ["--call", "--output", "--format", "--threads", "--no-lines", "--summary", "--stages",
                 "--save-baseline", "--force", "--top", "--group-by", "--module-depth", "--collapse-generics",
                 "--include", "--exclude", "--repo-only", "--root", "--thread", "--top-threads", "--help",
                 "--addresses", "--full-names"]


def options(*command):
    """{--name: the whole help line} of plumb COMMAND --help."""
    r = plumb(*command, "--help")
    assert r.returncode == 0, r.stderr
    found = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+(?:-\w, )?(--[\w-]+)(.*)$", line)
        if m:
            found[m.group(1)] = line.strip()
    return found


class OneOptionTable(TempDir):
    def test_top_and_metrics_record_take_every_sampling_option_of_record(self):
        record = options("record")
        # every option of record is either a sampling option or one of its output options: a sampling option
        # added to record alone fails here
        self.assertEqual(sorted(set(record) - set(RECORD_OUTPUT)), sorted(SAMPLING))
        for command in (["top"], ["metrics", "record"]):
            theirs = options(*command)
            for name in SAMPLING:
                with self.subTest(command=" ".join(command), option=name):
                    self.assertIn(name, theirs)
                    self.assertEqual(theirs[name], record[name], "the same row, from the same table")

    def test_the_same_values_are_refused_alike(self):
        pid = str(os.getpid())
        for args, word in ((["--rate", "0"], "--rate must be between 1 and 10000 Hz"),
                           (["--interval", "2"], "--interval must be between 0.0001 and 1.0 seconds"),
                           (["--stack-size", "10"], "--stack-size must be between 1024 and 65000 bytes"),
                           (["--mode", "sideways"], "--mode must be cpu, wall or alloc, not 'sideways'"),
                           (["--unwind", "guess"], "--unwind must be dwarf or fp, not 'guess'"),
                           (["--pid", "x"], "--pid needs a process id, not 'x'")):
            for command in (["record"], ["top"], ["metrics", "record"]):
                with self.subTest(command=" ".join(command), args=args):
                    extra = [] if "--pid" in args else ["--pid", pid]
                    r = plumb(*command, *extra, *args, extra_env={"PLUMB_HOME": self.path("home")})
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertEqual(r.stderr.strip(), "plumb: %s: %s" % (" ".join(command), word))


if __name__ == "__main__":
    main()
