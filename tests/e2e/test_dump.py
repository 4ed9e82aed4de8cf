"""`plumb dump`: every thread of a process now — the deadlocked C program (no frame pointers) by thread name,
state and locking functions with their callers; the target left running, untraced, not stopped; another tracer
named; CPython frames per thread on Debian's python3 and pyenv's 3.12; --json against docs/dump.schema.json;
--nonblocking."""
import glob
import json
import os
import re
import signal
import subprocess
import time

from plumbtest import ROOT, TempDir, main, needs_tool, plumb, skip_missing, target, wait_until

SCHEMA = os.path.join(ROOT, "docs", "dump.schema.json")
PY_TARGET = os.path.join(ROOT, "tests", "targets", "python", "blocked.py")


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        return f.read()


def thread_states(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                out[int(tid)] = f.read().rpartition(")")[2].split()[0]
        except FileNotFoundError:
            pass
    return out


def blocked(pid, n):
    """True when the process has n threads, each sleeping in a system call (futex, nanosleep)."""
    st = thread_states(pid)
    if len(st) != n or any(s != "S" for s in st.values()):
        return False
    for tid in st:
        with open(f"/proc/{pid}/task/{tid}/syscall") as f:
            if f.read().startswith(("running", "-1")):
                return False
    return True


def funcs(thread):
    return [f["function"] for f in thread["frames"]]


def in_order(names, wanted):
    """wanted appear in names in that order (innermost first), others between them allowed."""
    it = iter(names)
    return all(any(n == w for n in it) for w in wanted)


class Dump(TempDir):
    def start(self, argv, ready, nthreads):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)

        def stop():
            if p.poll() is None:
                p.kill()
            p.communicate()
        self.addCleanup(stop)
        self.assertEqual(p.stdout.readline().strip(), ready)
        self.assertTrue(wait_until(lambda: blocked(p.pid, nthreads), timeout=15), thread_states(p.pid))
        return p

    def dump_json(self, pid, *extra):
        r = plumb("dump", "--json", *(["--pid", str(pid)] if pid else []), *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.validate(doc)
        return doc

    def validate(self, doc):
        try:
            import jsonschema
        except ImportError:
            skip_missing("python3-jsonschema", "it validates plumb.dump.v1")
        with open(SCHEMA) as f:
            jsonschema.validate(doc, json.load(f))

    def assert_left_running(self, p):
        # untraced at once; each interrupted system call is restarted when the thread runs again, so on a loaded
        # machine a thread may be runnable (R) for a moment before it sleeps in it again
        for tid in thread_states(p.pid):
            self.assertIn("TracerPid:\t0", status(f"{p.pid}/task/{tid}"))
        self.assertIsNone(p.poll())
        self.assertTrue(wait_until(lambda: blocked(p.pid, len(thread_states(p.pid))), timeout=15),
                        thread_states(p.pid))

    def test_dump__deadlock_threads_states_and_callers(self):
        p = self.start([target("deadlock-nofp")], "deadlocked", 3)
        r = plumb("dump", "--pid", str(p.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout
        self.assertRegex(text.splitlines()[0], r"3 threads; stopped for \d+\.\d ms")
        heads = re.findall(r'^thread (\d+) "([^"]*)".*?: (\w[\w ]*?)(?: in (\w+)\(\))?(?:,|$)', text, re.M)
        self.assertEqual([h[1] for h in heads], ["deadlock-nofp", "locker_ab", "locker_ba"], text)
        self.assertEqual(int(heads[0][0]), p.pid)  # main first
        self.assertEqual({h[2] for h in heads}, {"sleeping"}, text)
        self.assertEqual({h[3] for h in heads}, {"futex"}, text)
        self.assert_left_running(p)

        doc = self.dump_json(p.pid)
        self.assertEqual(doc["mode"], "stopped")
        self.assertGreater(doc["stopped_ns"], 0)
        th = {t["name"]: t for t in doc["threads"]}
        self.assertEqual(doc["threads"][0]["tid"], p.pid)
        self.assertTrue(doc["threads"][0]["main"])
        for name, outer in (("locker_ab", "locker_ab"), ("locker_ba", "locker_ba")):
            t = th[name]
            self.assertEqual(t["state_text"], "sleeping")
            self.assertEqual(t["syscall"]["name"], "futex")
            names = funcs(t)
            # the lock's own frames, then every caller in the program down to the thread's start
            self.assertTrue(any(n and "mutex_lock" in n for n in names), names)
            self.assertTrue(in_order(names, ["take_second", "lock_pair", outer, "start_thread"]), names)
            src = [f for f in t["frames"] if f["function"] == "lock_pair"][0]
            self.assertTrue(src["file"].endswith("deadlock.c") and src["line"], src)
        self.assertTrue(in_order(funcs(th["deadlock-nofp"]), ["join_all", "main"]), funcs(th["deadlock-nofp"]))
        self.assert_left_running(p)

    def test_dump__a_stopped_process_is_left_stopped(self):
        p = self.start([target("deadlock-nofp")], "deadlocked", 3)
        os.kill(p.pid, signal.SIGSTOP)
        self.assertTrue(wait_until(lambda: set(thread_states(p.pid).values()) == {"T"}), thread_states(p.pid))
        doc = self.dump_json(p.pid)
        self.assertEqual({t["state_text"] for t in doc["threads"]}, {"stopped"})
        self.assertIn("take_second", funcs(doc["threads"][1]))
        self.assertIn("TracerPid:\t0", status(p.pid))
        # still stopped, as it was (each thread goes back into its group stop once detached)
        self.assertTrue(wait_until(lambda: set(thread_states(p.pid).values()) == {"T"}, timeout=15),
                        thread_states(p.pid))
        time.sleep(0.2)
        self.assertEqual(set(thread_states(p.pid).values()), {"T"})
        os.kill(p.pid, signal.SIGCONT)
        self.assertTrue(wait_until(lambda: blocked(p.pid, 3)), thread_states(p.pid))
        self.assert_left_running(p)

    def test_dump__another_tracer_is_named_and_nonblocking_still_works(self):
        strace = needs_tool("strace")
        p = self.start([target("deadlock-nofp")], "deadlocked", 3)
        tr = subprocess.Popen([strace, "-f", "-p", str(p.pid), "-o", self.path("strace.out")],
                              stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (tr.poll() is None and tr.terminate(), tr.wait()))
        self.assertTrue(wait_until(lambda: f"TracerPid:\t{tr.pid}" in status(p.pid), timeout=10))
        r = plumb("dump", "--pid", str(p.pid))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        err = r.stderr.strip()
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn(f"pid {tr.pid} (strace)", err)
        self.assertIn("--nonblocking", err)
        # what still works: the threads blocked in futex() are read from their stack and instruction pointers
        # (strace -f stops each thread at its system calls: a read that meets locker_ab in such a stop finds no
        # registers to unwind from — one of six full runs — so a few reads are allowed)
        for _ in range(5):
            doc = self.dump_json(p.pid, "--nonblocking")
            th = {t["name"]: t for t in doc["threads"]}
            if funcs(th["locker_ab"]):
                break
            time.sleep(0.2)
        self.assertEqual(doc["mode"], "nonblocking")
        self.assertEqual(doc["stopped_ns"], 0)
        self.assertTrue(in_order(funcs(th["locker_ab"]), ["take_second", "lock_pair", "locker_ab"]),
                        funcs(th["locker_ab"]))
        tr.terminate()
        tr.wait(timeout=10)
        self.assertTrue(wait_until(lambda: "TracerPid:\t0" in status(p.pid), timeout=10))
        self.assert_left_running(p)
        # a tracer of one thread alone (strace -p TID): the process's own status says nothing, the thread's does
        tid = max(thread_states(p.pid))
        tr = subprocess.Popen([strace, "-p", str(tid), "-o", self.path("strace1.out")], stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (tr.poll() is None and tr.terminate(), tr.wait()))
        self.assertTrue(wait_until(lambda: f"TracerPid:\t{tr.pid}" in status(f"{p.pid}/task/{tid}"), timeout=10))
        r = plumb("dump", "--pid", str(p.pid))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"pid {tid} refused: it is already traced by pid {tr.pid} (strace)", r.stderr)
        for t in thread_states(p.pid):
            if t != tid:
                self.assertIn("TracerPid:\t0", status(f"{p.pid}/task/{t}"))
        tr.terminate()
        tr.wait(timeout=10)
        self.assertTrue(wait_until(lambda: "TracerPid:\t0" in status(f"{p.pid}/task/{tid}"), timeout=10))
        self.assertTrue(wait_until(lambda: blocked(p.pid, 3)), thread_states(p.pid))
        self.assert_left_running(p)

    def python_case(self, exe):
        p = self.start([exe, PY_TARGET], "ready", 3)
        doc = self.dump_json(p.pid)
        self.assertTrue(doc["python_version"])
        th = {t["python_name"]: t for t in doc["threads"]}
        self.assertEqual(set(th), {"MainThread", "lockwaiter", "sleeper"}, doc["threads"])
        self.assertEqual(doc["threads"][0]["python_name"], "MainThread")
        py = {name: [f["function"] for f in t["frames"] if f["kind"] == "python"] for name, t in th.items()}
        self.assertEqual(py["lockwaiter"][:2], ["wait_for_lock", "run"], py)
        self.assertEqual(py["sleeper"][:2], ["nap", "run"], py)
        self.assertIn("main", py["MainThread"])
        self.assertEqual(th["lockwaiter"]["syscall"]["name"], "futex")
        self.assertEqual(th["sleeper"]["syscall"]["name"], "clock_nanosleep")
        # merged in place: the native frames of the C call below the Python frame that made it
        for name in ("lockwaiter", "sleeper"):
            kinds = [f["kind"] for f in th[name]["frames"]]
            first_py = kinds.index("python")
            self.assertGreater(first_py, 0)
            self.assertIn("native", kinds[first_py:])
        self.assert_left_running(p)
        # --nonblocking reads the Python frames without stopping
        doc = self.dump_json(p.pid, "--nonblocking")
        th = {t["python_name"]: t for t in doc["threads"]}
        self.assertIn("nap", [f["function"] for f in th["sleeper"]["frames"] if f["kind"] == "python"])
        self.assert_left_running(p)

    def test_dump__debian_python3(self):
        if not os.path.exists("/usr/bin/python3.11"):
            skip_missing("Debian python3.11")
        self.python_case("/usr/bin/python3.11")

    def test_dump__pyenv_python312(self):
        found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
        if not found:
            skip_missing("CPython 3.12", "pyenv: ~/.pyenv/versions/3.12*")
        self.python_case(found[-1])

    def test_dump__core_file_shows_the_same_stacks(self):
        gcore = needs_tool("gcore", "gdb")
        p = self.start([target("deadlock-nofp")], "deadlocked", 3)
        live = self.dump_json(p.pid)
        prefix = self.path("core")
        r = subprocess.run([gcore, "-o", prefix, str(p.pid)], capture_output=True, text=True, timeout=60,
                           cwd=self.tmp)
        core = "%s.%d" % (prefix, p.pid)
        self.assertTrue(os.path.exists(core), r.stdout + r.stderr)
        for extra in ([], ["--exe", target("deadlock-nofp")]):
            doc = self.dump_json(None, "--core", core, *extra)
            self.assertEqual(doc["mode"], "core")
            self.assertEqual(doc["pid"], p.pid)
            self.assertEqual(doc["threads"][0]["tid"], p.pid)
            got = {t["tid"]: funcs(t) for t in doc["threads"]}
            want = {t["tid"]: funcs(t) for t in live["threads"]}
            self.assertEqual(got, want)
        self.assert_left_running(p)

    def test_dump__target_name(self):
        # an announced target (plumb_announce writes $PLUMB_HOME/targets/NAME.lock holding "PID STARTTIME")
        p = self.start([target("deadlock-nofp")], "deadlocked", 3)
        home = self.path("home")
        os.makedirs(os.path.join(home, "targets"), mode=0o700)
        with open(f"/proc/{p.pid}/stat") as f:
            start = f.read().rpartition(")")[2].split()[19]
        with open(os.path.join(home, "targets", "locks.lock"), "w") as f:
            f.write(f"{p.pid} {start}\n")
        r = plumb("dump", "--target", "locks", extra_env={"PLUMB_HOME": home})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(f'pid {p.pid} "deadlock-nofp"'), r.stdout)
        self.assertIn("lock_pair", r.stdout)
        r = plumb("dump", "--target", "other", extra_env={"PLUMB_HOME": home})
        self.assertEqual(r.returncode, 2)
        self.assertIn(f"announced: locks (pid {p.pid})", r.stderr)
        self.assert_left_running(p)

    def test_dump__hostile_thread_names_are_escaped(self):
        # a thread's kernel name and its threading name are the target's bytes: the terminal never sees them raw
        script = self.path("evil.py")
        with open(script, "w") as f:
            f.write("import ctypes, threading, time\n"
                    "libc = ctypes.CDLL(None)\n"
                    "def f():\n"
                    "    libc.prctl(15, b'\\x1b[31mev\\x07', 0, 0, 0)\n"
                    "    time.sleep(60)\n"
                    "t = threading.Thread(target=f, name='x\\x1b]0;pwned\\x07')\n"
                    "t.start()\n"
                    "print('ready', flush=True)\n"
                    "t.join()\n")
        p = self.start(["/usr/bin/python3", script], "ready", 2)
        r = plumb("dump", "--pid", str(p.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b", r.stdout)
        self.assertNotIn("\x07", r.stdout)
        self.assertIn('"\\x1b[31mev\\x07" (Python "x\\x1b]0;pwned\\x07")', r.stdout)
        self.assert_left_running(p)

    def test_dump__main_thread_exited(self):
        p = subprocess.Popen([target("leaderexit-nofp")], stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.communicate()))
        self.assertEqual(p.stdout.readline().strip(), "ready")
        self.assertTrue(wait_until(lambda: sorted(thread_states(p.pid).values()) == ["S", "Z"]),
                        thread_states(p.pid))
        doc = self.dump_json(p.pid)
        main_thread, survivor = doc["threads"]
        self.assertEqual((main_thread["tid"], main_thread["state_text"], main_thread["frames"]),
                         (p.pid, "zombie", []))
        self.assertEqual(survivor["name"], "survivor")
        self.assertTrue(in_order(funcs(survivor), ["survivor_wait", "survivor", "start_thread"]), funcs(survivor))
        self.assertIn("TracerPid:\t0", status(p.pid))
        self.assertTrue(wait_until(lambda: sorted(thread_states(p.pid).values()) == ["S", "Z"], timeout=15),
                        thread_states(p.pid))

    def test_dump__bad_targets(self):
        r = plumb("dump", "--pid", "nope")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        r = plumb("dump", "--pid", "999999999")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("does not exist", r.stderr)
        r = plumb("dump", "--pid", "1", debug=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("PLUMB_DEBUG", r.stderr)


if __name__ == "__main__":
    main()
