"""End-to-end: debug information from a real debuginfod server (Debian's `debuginfod`, started here on 127.0.0.1
over a directory holding the split debug file of a stripped program) names the stripped program's frames as the
unstripped run names them; a stopped or silent server costs at most the time bound and the summary says why names
are missing; without DEBUGINFOD_URLS the client is never even loaded (docs/symbols.md)."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import TempDir, main, needs_tool, plumb, read_folded, target, wait_until  # noqa: E402

OWN = ("path_a", "path_b", "path_c", "burn")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def own_labels(rows):
    return {f for frames, _ in rows for f in frames if f.split(" ", 1)[0] in OWN}


def callers(labels):
    """The labels of the callers (their lines are call sites, the same in every run)."""
    return {f for f in labels if not f.startswith("burn ")}


class DebuginfodTest(TempDir):
    def setUp(self):
        super().setUp()
        self.debuginfod = needs_tool("debuginfod", "Debian package debuginfod")
        needs_tool("objcopy", "Debian package binutils")
        self.prog = self.path("prog")
        served = self.path("served")
        os.mkdir(served)
        shutil.copy(target("split-nofp"), self.prog)
        subprocess.run(["objcopy", "--only-keep-debug", self.prog, os.path.join(served, "prog.debug")], check=True)
        subprocess.run(["strip", "--strip-all", self.prog], check=True)
        note = subprocess.run(["readelf", "-n", self.prog], capture_output=True, text=True, check=True).stdout
        self.build_id = re.search(r"Build ID: ([0-9a-f]+)", note).group(1)
        self.served = served
        self.server = None

    def tearDown(self):
        self.stop()
        super().tearDown()

    def start(self):
        port = free_port()
        self.server = subprocess.Popen([self.debuginfod, "-F", "-p", str(port), "-d", self.path("db.sqlite"),
                                        self.served], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = "http://127.0.0.1:%d" % port

        def indexed():
            try:
                with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, self.build_id), timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        self.assertTrue(wait_until(indexed, timeout=30, step=0.2), "debuginfod never served the debug file")
        return url

    def stop(self):
        if self.server:
            self.server.kill()
            self.server.wait()
            self.server = None

    def record(self, program, out, urls, timeout_s=None):
        extra = {}
        if urls:
            extra = {"DEBUGINFOD_URLS": urls, "DEBUGINFOD_CACHE_PATH": self.path("cache-" + os.path.basename(out))}
        if timeout_s:
            extra["PLUMB_DEBUGINFOD_TIMEOUT"] = str(timeout_s)
        start = time.monotonic()
        r = plumb("record", "--interval", "0.001", "-o", out, "--", program, "1", extra_env=extra, timeout=300)
        took = time.monotonic() - start
        self.assertEqual(r.returncode, 0, r.stderr)
        return r, read_folded(out), took

    def test_names_and_lines_from_debuginfod(self):
        url = self.start()
        r, rows, _ = self.record(self.prog, self.path("served.folded"), url)
        _, plain, _ = self.record(target("split-nofp"), self.path("plain.folded"), None)
        self.assertIn("fetching debug information for prog from debuginfod", r.stderr)
        got, want = own_labels(rows), own_labels(plain)
        self.assertEqual(callers(got), callers(want))
        self.assertTrue(any(f.startswith("burn (targets/split.c:") for f in got), got)
        self.assertFalse([f for fr, _ in rows for f in fr if f.startswith("prog+0x")])
        self.assertNotIn("hint:", r.stderr)

    def test_stopped_server_costs_nothing_but_says_why(self):
        url = "http://127.0.0.1:%d" % free_port()  # nothing listens there
        r, rows, took = self.record(self.prog, self.path("stopped.folded"), url, timeout_s=3)
        self.assertLess(took, 1 + 3 + 5)
        self.assertTrue([f for fr, _ in rows for f in fr if f.startswith("prog+0x")], rows[:2])
        self.assertIn("hint:", r.stderr)
        self.assertIn("DEBUGINFOD_URLS", r.stderr)

    def test_silent_server_is_cut_off_at_the_bound(self):
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)  # connections are accepted by the kernel and never answered
        try:
            url = "http://127.0.0.1:%d" % silent.getsockname()[1]
            r, rows, took = self.record(self.prog, self.path("silent.folded"), url, timeout_s=2)
        finally:
            silent.close()
        self.assertLess(took, 1 + 2 + 5, r.stderr)
        self.assertIn("fetching debug information for prog", r.stderr)
        self.assertIn("within 2 s", r.stderr)
        self.assertTrue([f for fr, _ in rows for f in fr if f.startswith("prog+0x")], rows[:2])

    def test_client_not_loaded_without_debuginfod_urls(self):
        env = {"LD_DEBUG": "libs"}
        out = self.path("off.folded")
        r = plumb("record", "-o", out, "--", self.prog, "0.2", extra_env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertNotIn("libdebuginfod", r.stderr)
        env["DEBUGINFOD_URLS"] = "http://127.0.0.1:%d" % free_port()
        env["DEBUGINFOD_CACHE_PATH"] = self.path("cache-off")
        r = plumb("record", "-o", out, "--", self.prog, "0.2", extra_env=env, timeout=60)
        self.assertIn("libdebuginfod", r.stderr)  # the contrast: the check above can see it


if __name__ == "__main__":
    main()
# plumbtest: alone
