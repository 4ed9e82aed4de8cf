"""Output paths plumb must not damage and temp files it must not leave (docs/design.md §3.4, issue 17).
A character device, a FIFO, a socket and a /proc/self/fd link are written in place; a symlink (a chain, a
dangling one) is followed and its target replaced, mode 0600, the link stays a link. SIGINT, SIGTERM, SIGHUP and
SIGPIPE at random moments of a long `convert` or `flame` leave no temp file and the old output whole; a temp
left by SIGKILL is removed by the next run writing there, and nothing that is not plumb's temp is. The device
nodes are made in a temp dir with mknod: /dev/null itself is never an output here."""
import errno
import hashlib
import fcntl
import os
import random
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import tty
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from plumbtest import FIXTURES, PLUMB, ROOT, SANITIZED, TempDir, env, main, plumb, target, wait_until  # noqa: E402
from procwatch import CLK_TCK, proc_cpu_ticks  # noqa: E402

SMALL = os.path.join(FIXTURES, "flamegraph", "test", "perf-vertx-stacks-01.txt")
OLD = b"the old output, which must survive whole\n"
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE]
RUNS_PER_SIGNAL = 8  # half at a random moment, half while the temp file is written: 32 signals a command
BIG_MB = 12 if SANITIZED else 20  # a sanitized plumb is several times slower; the count of runs stays


def default_signals():
    """In the child before exec: a test runner started in the background has SIGINT ignored, and plumb keeps an
    ignored signal ignored — the runs here must see the default dispositions."""
    for s in SIGNALS + [signal.SIGQUIT]:
        signal.signal(s, signal.SIG_DFL)


def start(args, **kw):
    return subprocess.Popen([PLUMB, *args], env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=default_signals, **kw)


def children(pid):
    """The pids of a process's children (its target, for record)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def temps_in(directory, keep):
    """Entries of directory other than those in keep: anything plumb left."""
    return sorted(n for n in os.listdir(directory) if n not in keep)


class Reader(threading.Thread):
    """Reads what opener() opens (it returns a read and a close function: a FIFO, a terminal's master side, an
    accepted connection) to EOF or until `want` bytes came."""

    def __init__(self, opener, want=None, timeout=60):
        super().__init__(daemon=True)
        self.opener, self.want, self.timeout, self.data, self.error = opener, want, timeout, b"", None
        self.start()

    def run(self):
        try:
            deadline = time.monotonic() + self.timeout
            read, close = self.opener()
            try:
                while time.monotonic() < deadline and (self.want is None or len(self.data) < self.want):
                    chunk = read()
                    if not chunk:
                        break
                    self.data += chunk
            finally:
                close()
        except Exception as ex:  # reported by the test
            self.error = ex


def writers(tmp):
    """Each command that writes a file, as (name, args for an output path, expected bytes)."""
    a, b = os.path.join(tmp, "a.folded"), os.path.join(tmp, "b.folded")
    for p, keep in ((a, 2), (b, 3)):
        r = plumb("convert", SMALL, "--to", "folded", "-o", "-")
        assert r.returncode == 0, r.stderr
        with open(p, "w") as f:  # two different sides for diff
            f.writelines(line for i, line in enumerate(r.stdout.splitlines(True)) if i % keep)
    out = []
    for name, args in (("convert", ["convert", SMALL, "--to", "folded", "-o"]),
                       ("flame", ["flame", SMALL, "--title", "t", "-o"]),
                       ("diff --folded", ["diff", a, b, "--folded", "-o"])):
        r = subprocess.run([PLUMB, *args, "-"], env=env(), capture_output=True, timeout=120)
        assert r.returncode == 0 and r.stdout, r.stderr
        out.append((name, args, r.stdout))
    return out


class SpecialPaths(TempDir):
    """Every file-writing command against each kind of special output path."""

    def setUp(self):
        super().setUp()
        self.writers = writers(self.tmp)

    def run_to(self, args, path, timeout=120):
        return subprocess.run([PLUMB, *args, path], env=env(), capture_output=True, timeout=timeout)

    def mknod(self, name, rdev):
        path = self.path(name)
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, rdev)
        except PermissionError:
            self.skipTest("mknod needs CAP_MKNOD (run as root): the device-node cases cannot run")
        os.chmod(path, 0o666)  # mknod's mode went through the umask
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK))
        except OSError as ex:
            if ex.errno == errno.EACCES:
                self.skipTest("%s is on a nodev mount: a device node made there cannot be opened" % self.tmp)
        return path

    def test_null_device_node_stays_a_device(self):
        node = self.mknod("null", os.makedev(1, 3))
        for name, args, _ in self.writers:
            r = self.run_to(args, node)
            self.assertEqual(r.returncode, 0, (name, r.stderr))
            st = os.lstat(node)
            self.assertTrue(stat.S_ISCHR(st.st_mode), "%s replaced the device node with a regular file" % name)
            self.assertEqual(st.st_rdev, os.makedev(1, 3), name)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o666, "%s changed the device's mode" % name)
            self.assertEqual(temps_in(self.tmp, {"null", "a.folded", "b.folded"}), [], name)

    def test_full_device_node_gets_the_write(self):
        # /dev/full's twin refuses every write with ENOSPC: exit 6 proves the bytes went to the device
        node = self.mknod("full", os.makedev(1, 7))
        for name, args, _ in self.writers:
            r = self.run_to(args, node)
            self.assertEqual(r.returncode, 6, (name, r.stderr))
            self.assertTrue(stat.S_ISCHR(os.lstat(node).st_mode), "%s replaced the device node" % name)
            self.assertEqual(temps_in(self.tmp, {"full", "a.folded", "b.folded"}), [], name)

    def test_terminal_device_receives_the_bytes(self):
        # a private devpts instance in the temp dir: a terminal device whose other end the test reads
        pts = self.path("pts")
        os.mkdir(pts)
        m = subprocess.run(["mount", "-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=0600", "devpts", pts],
                           capture_output=True, text=True)
        if m.returncode != 0:
            self.skipTest("cannot mount a private devpts instance (needs CAP_SYS_ADMIN): " + m.stderr.strip())
        master = slave = -1
        try:
            master = os.open(os.path.join(pts, "ptmx"), os.O_RDWR | os.O_NOCTTY)
            fcntl.ioctl(master, 0x40045431, struct.pack("i", 0))  # TIOCSPTLCK: unlock the slave
            n = struct.unpack("I", fcntl.ioctl(master, 0x80045430, b"\0" * 4))[0]  # TIOCGPTN
            node = os.path.join(pts, str(n))
            slave = os.open(node, os.O_RDWR | os.O_NOCTTY)
            tty.setraw(slave)  # bytes pass unchanged (no \n -> \r\n)
            for name, args, want in self.writers:
                rd = Reader(lambda: ((lambda: os.read(master, 65536)), lambda: None), want=len(want))
                r = self.run_to(args, node)
                self.assertEqual(r.returncode, 0, (name, r.stderr))
                rd.join(60)
                self.assertIsNone(rd.error, name)
                self.assertEqual(rd.data, want, "%s: the terminal did not receive the profile" % name)
                self.assertTrue(stat.S_ISCHR(os.lstat(node).st_mode), name)
        finally:
            for fd in (slave, master):
                if fd >= 0:
                    os.close(fd)
            subprocess.run(["umount", pts], check=True)

    def test_fifo_reader_gets_the_whole_profile(self):
        fifo = self.path("pipe")
        os.mkfifo(fifo, 0o644)
        for name, args, want in self.writers:
            def opener():
                f = open(fifo, "rb")
                return (lambda: f.read(65536)), f.close
            rd = Reader(opener)
            r = self.run_to(args, fifo)
            self.assertEqual(r.returncode, 0, (name, r.stderr))
            rd.join(60)
            self.assertFalse(rd.is_alive(), "%s: the FIFO's reader never saw its end" % name)
            self.assertIsNone(rd.error, name)
            self.assertEqual(rd.data, want, name)
            st = os.lstat(fifo)
            self.assertTrue(stat.S_ISFIFO(st.st_mode), "%s replaced the FIFO" % name)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644, name)

    def test_socket_listener_gets_the_whole_profile(self):
        path = self.path("sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        try:
            for name, args, want in self.writers:
                def opener():
                    conn, _ = srv.accept()
                    return (lambda: conn.recv(65536)), conn.close
                rd = Reader(opener)
                r = self.run_to(args, path)
                self.assertEqual(r.returncode, 0, (name, r.stderr))
                rd.join(60)
                self.assertEqual(rd.data, want, name)
                self.assertTrue(stat.S_ISSOCK(os.lstat(path).st_mode), "%s replaced the socket" % name)
        finally:
            srv.close()

    def test_symlink_stays_a_link_and_its_target_is_replaced(self):
        os.mkdir(self.path("real"))
        tgt = self.path("real/profile.out")
        link = self.path("out")
        os.symlink("real/profile.out", link)
        chain = self.path("chain")
        os.symlink(link, chain)  # chain -> out -> real/profile.out
        for name, args, want in self.writers:
            for path in (link, chain):
                with open(tgt, "wb") as f:
                    f.write(OLD)
                os.chmod(tgt, 0o644)
                r = self.run_to(args, path)
                self.assertEqual(r.returncode, 0, (name, r.stderr))
                self.assertTrue(os.path.islink(link) and os.path.islink(chain), "%s replaced the link" % name)
                self.assertEqual(os.readlink(link), "real/profile.out")
                with open(tgt, "rb") as f:
                    self.assertEqual(f.read(), want, "%s did not write the link's target" % name)
                self.assertEqual(stat.S_IMODE(os.stat(tgt).st_mode), 0o600, name)
                self.assertEqual(temps_in(self.path("real"), {"profile.out"}), [], name)
                self.assertEqual(temps_in(self.tmp, {"real", "out", "chain", "a.folded", "b.folded"}), [], name)

    def test_dangling_symlink_creates_its_target(self):
        os.mkdir(self.path("elsewhere"))
        for name, args, want in self.writers:
            tgt = self.path("elsewhere/new.out")
            link = self.path("dangling")
            os.symlink("elsewhere/new.out", link)
            r = self.run_to(args, link)
            self.assertEqual(r.returncode, 0, (name, r.stderr))
            self.assertTrue(os.path.islink(link), "%s replaced the dangling link" % name)
            with open(tgt, "rb") as f:
                self.assertEqual(f.read(), want, name)
            self.assertEqual(stat.S_IMODE(os.stat(tgt).st_mode), 0o600, name)
            os.unlink(link)
            os.unlink(tgt)

    def test_another_users_symlink_is_not_followed(self):
        # root writing to a shared place must not replace what another user's link there names (the kernel's
        # protected_symlinks rule: a link is followed when its owner is the writer or the directory's owner)
        if os.geteuid() != 0:
            self.skipTest("needs root to make a link owned by another user")
        victim = self.path("victim")
        with open(victim, "wb") as f:
            f.write(OLD)
        link = self.path("planted")
        os.symlink("victim", link)
        os.lchown(link, 65534, 65534)
        for name, args, _ in self.writers:
            r = self.run_to(args, link)
            self.assertEqual(r.returncode, 6, (name, r.stderr))
            self.assertIn(b"another user", r.stderr)
            with open(victim, "rb") as f:
                self.assertEqual(f.read(), OLD, "%s wrote through another user's link" % name)
            self.assertTrue(os.path.islink(link))
        # the directory's owner may link within it: followed
        shared = self.path("shared")
        os.mkdir(shared)
        os.chown(shared, 65534, 65534)
        os.symlink(victim, os.path.join(shared, "out"))
        os.lchown(os.path.join(shared, "out"), 65534, 65534)
        name, args, want = self.writers[0]
        r = self.run_to(args, os.path.join(shared, "out"))
        self.assertEqual(r.returncode, 0, (name, r.stderr))
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), want)

    def test_proc_fd_link_writes_to_standard_output(self):
        link = self.path("stdout")
        os.symlink("/proc/self/fd/1", link)  # as /dev/stdout is, without touching /dev
        for name, args, want in self.writers:
            r = self.run_to(args, link)
            self.assertEqual(r.returncode, 0, (name, r.stderr))
            self.assertEqual(r.stdout, want, name)
            self.assertTrue(os.path.islink(link), "%s replaced the link" % name)

    def test_a_directory_is_refused(self):
        for name, args, _ in self.writers:
            r = self.run_to(args, self.tmp)
            self.assertEqual(r.returncode, 6, (name, r.stderr))
            self.assertIn(b"directory", r.stderr)


class Record(TempDir):
    """record -o (and --summary, a plumb.hot.v1 JSON file) to a device node, a FIFO and a symlink; SIGINT still
    ends sampling and writes the profile."""

    def record(self, *args, timeout=60):
        # 0.3 s of the target's CPU (SPLIT_CLOCK=cpu): beside a loaded check 0.3 s of wall time once gave the
        # target one sample, not in path_a
        return subprocess.run([PLUMB, "record", "--format", "folded", *args, "--", target("split"), "0.3"],
                              env=env(SPLIT_CLOCK="cpu"), capture_output=True, timeout=timeout)

    def test_record_to_a_device_node(self):
        try:
            os.mknod(self.path("null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            self.skipTest("mknod needs CAP_MKNOD (run as root)")
        node = self.path("null")
        r = self.record("-o", node, "--summary", node)
        self.assertEqual(r.returncode, 0, r.stderr)
        st = os.lstat(node)
        self.assertTrue(stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), "record replaced the node")
        self.assertEqual(os.listdir(self.tmp), ["null"])

    def test_record_to_fifos(self):
        fifos = [self.path("profile.pipe"), self.path("summary.pipe")]
        readers = []
        for fifo in fifos:
            os.mkfifo(fifo)

            def opener(fifo=fifo):
                f = open(fifo, "rb")
                return (lambda: f.read(65536)), f.close
            readers.append(Reader(opener))
        r = self.record("-o", fifos[0], "--summary", fifos[1])
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        for fifo, rd in zip(fifos, readers):
            rd.join(60)
            self.assertIsNone(rd.error)
            self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "record replaced the FIFO")
        self.assertIn(b"path_a", readers[0].data)
        for line in readers[0].data.decode().splitlines():  # whole folded lines
            self.assertRegex(line, r"^\S.* \d+$")
        self.assertIn(b"plumb.hot.v1", readers[1].data)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["profile.pipe", "summary.pipe"])

    def test_record_summary_through_dangling_symlinks(self):
        os.symlink("hot.json", self.path("summary"))
        os.symlink("p.folded", self.path("out"))
        r = self.record("-o", self.path("out"), "--summary", self.path("summary"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(self.path("summary")) and os.path.islink(self.path("out")))
        with open(self.path("hot.json")) as f:
            self.assertIn("plumb.hot.v1", f.read())
        self.assertEqual(stat.S_IMODE(os.stat(self.path("p.folded")).st_mode), 0o600)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["hot.json", "out", "p.folded", "summary"])

    def record_then_signal(self, sig, args):
        """Starts a long record, sends sig to plumb alone once sampling is under way; returns (exit status,
        stderr). A target still there afterwards (plumb ends it on SIGINT and SIGTERM, not on SIGHUP) is killed."""
        with tempfile.TemporaryFile() as err:
            p = subprocess.Popen([PLUMB, "record", *args, "--", target("split"), "30"], env=env(),
                                 stdout=subprocess.DEVNULL, stderr=err, preexec_fn=default_signals)
            self.pid = p.pid
            kids = wait_until(lambda: children(p.pid), timeout=20)
            try:
                self.assertTrue(kids, "the target never started")
                # sampling is under way once the target has had 0.3 s of CPU (~60 samples at the default rate),
                # however loaded the machine: half a second of wall time gave it 2 samples beside a loaded check
                # (plumb's children are the target and plumb's own helper, which uses next to none)
                used = lambda: sum(proc_cpu_ticks(k) or 0 for k in children(p.pid))  # noqa: E731
                self.assertTrue(wait_until(lambda: used() >= 0.3 * CLK_TCK, timeout=60), "the target got no CPU")
                self.before_signal = os.listdir(self.tmp)
                p.send_signal(sig)
                p.wait(timeout=60)
            finally:
                for k in kids or []:  # plumb passes the signal on and waits for its target: normally gone
                    try:
                        os.kill(k, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                if p.poll() is None:
                    p.kill()
                    p.wait()
            err.seek(0)
            return p.returncode, err.read()

    def test_sigint_and_sigterm_still_stop_sampling_and_write(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            out = self.path("out.folded")
            rc, err = self.record_then_signal(sig, ["-o", out, "--stages", self.path("st.json")])
            self.assertEqual(rc, 0, (sig, err))
            with open(out, "rb") as f:
                self.assertIn(b"path_a", f.read())
            self.assertEqual(sorted(os.listdir(self.tmp)), ["out.folded", "st.json"], sig)
            os.unlink(out)
            os.unlink(self.path("st.json"))

    def test_sighup_ends_record_without_leftovers(self):
        rc, err = self.record_then_signal(signal.SIGHUP, ["-o", self.path("out.folded"), "--stages",
                                                          self.path("st.json")])
        self.assertEqual(rc, -signal.SIGHUP, err)
        # the stage lines' scratch file lives beside the stage file, named as plumb's (a SIGKILL's is swept)
        self.assertEqual(len(self.before_signal), 1, self.before_signal)
        self.assertRegex(self.before_signal[0], r"^\.st\.json\.plumb-tmp\.%d\.\w{6}$" % self.pid)
        self.assertEqual(os.listdir(self.tmp), [], "record left its stage scratch file")


def big_input(directory):
    path = os.path.join(directory, "big.folded")
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_inputs.py"), "folded", str(BIG_MB * 1800),
                        str(BIG_MB)], stdout=f, check=True, timeout=300)
    return path


class Signals(unittest.TestCase):
    """Signals at random moments of a long write: no temp file left, the old output whole (or the new one whole,
    when the signal came after the rename)."""

    @classmethod
    def setUpClass(cls):
        cls._td = tempfile.TemporaryDirectory(prefix="plumb-test-")
        cls.big = big_input(cls._td.name)
        cls.rng = random.Random(17)

    @classmethod
    def tearDownClass(cls):
        cls._td.cleanup()

    def setUp(self):
        self._out = tempfile.TemporaryDirectory(prefix="plumb-test-out-")
        self.dir = self._out.name

    def tearDown(self):
        self._out.cleanup()

    def reference(self, args, name):
        """Runs once to completion: the new output's size and digest, and how long a whole run takes."""
        out = os.path.join(self.dir, name)
        t0 = time.monotonic()
        p = start([*args, out])
        _, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, err)
        took = time.monotonic() - t0
        with open(out, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()
        return os.path.getsize(out), digest, took

    def interrupt(self, args, name):
        out = os.path.join(self.dir, name)
        size, digest, took = self.reference(args, name)
        hits = 0
        for sig in SIGNALS:
            for i in range(RUNS_PER_SIGNAL):
                with open(out, "wb") as f:
                    f.write(OLD)
                p = start([*args, out])
                if i % 2:  # a random moment of the whole run
                    time.sleep(self.rng.uniform(0, took))
                else:  # a random moment while the temp file is being written
                    wait_until(lambda: temps_in(self.dir, {name}) or p.poll() is not None, timeout=took * 5,
                               step=0.001)
                    time.sleep(self.rng.uniform(0, 0.05))
                live_temp = bool(temps_in(self.dir, {name}))
                p.send_signal(sig)
                _, err = p.communicate(timeout=300)
                self.assertIn(p.returncode, (0, -sig), err)
                hits += live_temp and p.returncode == -sig
                left = temps_in(self.dir, {name})
                self.assertEqual(left, [], "%s: %s left a temp file (run %d)" % (args[0], sig.name, i))
                if os.path.getsize(out) == len(OLD):
                    with open(out, "rb") as f:
                        self.assertEqual(f.read(), OLD, "%s: the old output was damaged" % args[0])
                else:
                    self.assertEqual(os.path.getsize(out), size, "%s: a half-written output" % args[0])
                    with open(out, "rb") as f:
                        self.assertEqual(hashlib.sha1(f.read()).hexdigest(), digest)
        # the runs must have hit the temp file's lifetime often enough to mean something
        print("%s: %d of %d signals hit a live temp file" % (args[0], hits, len(SIGNALS) * RUNS_PER_SIGNAL), file=sys.stderr)
        self.assertGreaterEqual(hits, len(SIGNALS) * RUNS_PER_SIGNAL // 8, "too few signals hit a live temp file")

    def test_convert(self):
        self.interrupt(["convert", self.big, "--to", "folded", "-o"], "out.folded")

    def test_flame(self):
        self.interrupt(["flame", self.big, "--min-width", "0", "-o"], "out.svg")

    def kill_then_rerun(self, args, name):
        d = tempfile.mkdtemp(dir=self.dir)
        out = os.path.join(d, name)
        p = start([*args, out])
        self.assertTrue(wait_until(lambda: temps_in(d, {name}) or p.poll() is not None, timeout=120, step=0.001))
        p.kill()
        p.communicate()
        self.assertEqual(p.returncode, -signal.SIGKILL, "the run ended before it could be killed")
        stale = temps_in(d, {name})
        self.assertEqual(len(stale), 1, stale)  # SIGKILL cannot be caught: the temp stays, for now
        self.assertIn(str(p.pid), stale[0], "the temp file's name does not carry its writer's pid")
        r = plumb(*args[:1], SMALL, *args[2:], out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(temps_in(d, {name}), [], "the next run did not remove the stale temp")

    def test_sigkill_then_next_run_removes_the_stale_temp(self):
        self.kill_then_rerun(["convert", self.big, "--to", "folded", "-o"], "out.folded")
        self.kill_then_rerun(["flame", self.big, "--min-width", "0", "-o"], "out.svg")

    def test_the_sweep_removes_only_plumbs_stale_temps(self):
        dead = subprocess.Popen(["true"])
        dead.wait()
        live = subprocess.Popen(["sleep", "60"])
        locker = None
        try:
            d = self.dir
            stale = ".out.folded.plumb-tmp.%d.aB3xY9" % dead.pid
            keep = {
                "live writer": ".out.folded.plumb-tmp.%d.aB3xY9" % live.pid,
                "no leading dot": "out.folded.plumb-tmp.%d.aB3xY9" % dead.pid,
                "short suffix": ".out.folded.plumb-tmp.%d.aB3" % dead.pid,
                "not a pid": ".out.folded.plumb-tmp.x%d.aB3xY9" % dead.pid,
                "another name": ".out.folded.tmp.%d.aB3xY9" % dead.pid,
                "old-style temp": "out.folded.tmp.aB3xY9",
                "locked": ".locked.plumb-tmp.%d.aB3xY9" % dead.pid,
            }
            for n in [stale, *keep.values()]:
                with open(os.path.join(d, n), "w") as f:
                    f.write("x")
            os.symlink("out.folded", os.path.join(d, ".link.plumb-tmp.%d.aB3xY9" % dead.pid))
            keep["a symlink"] = ".link.plumb-tmp.%d.aB3xY9" % dead.pid
            os.mkdir(os.path.join(d, ".dir.plumb-tmp.%d.aB3xY9" % dead.pid))
            keep["a directory"] = ".dir.plumb-tmp.%d.aB3xY9" % dead.pid
            hard = ".hard.plumb-tmp.%d.aB3xY9" % dead.pid
            os.link(os.path.join(d, keep["old-style temp"]), os.path.join(d, hard))
            keep["a file with another link"] = hard
            if os.geteuid() == 0:
                other = ".other.plumb-tmp.%d.aB3xY9" % dead.pid
                with open(os.path.join(d, other), "w") as f:
                    f.write("x")
                os.chown(os.path.join(d, other), 65534, 65534)
                keep["another user's"] = other
            # a lock held by a live process (a writer in another pid namespace) protects the file too
            locker = subprocess.Popen([sys.executable, "-c", "import fcntl,sys,time\n"
                                       "f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print(1, flush=True)\n"
                                       "time.sleep(60)", os.path.join(d, keep["locked"])], stdout=subprocess.PIPE)
            locker.stdout.readline()
            r = plumb("convert", SMALL, "--to", "folded", "-o", os.path.join(d, "out.folded"))
            self.assertEqual(r.returncode, 0, r.stderr)
            names = set(os.listdir(d))
            self.assertNotIn(stale, names, "a dead writer's temp was not removed")
            for why, n in keep.items():
                self.assertIn(n, names, "the sweep removed %s (%s)" % (n, why))
        finally:
            live.kill()
            live.wait()
            if locker:
                locker.kill()
                locker.communicate()


if __name__ == "__main__":
    main()
# plumbtest: slow
