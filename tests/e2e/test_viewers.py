"""What the viewers need from plumb's writers, checked in the viewers themselves (docs/design.md §4.1, §6.1):
from a 3-thread recording made while the other core is busy, the Firefox Profiler JSON has every thread's samples
in time order, its importer (profiler-cli) counts what `plumb hot` counts, processName is the program's name and
the libs carry the build ID and real addresses; speedscope's own app, in headless Chromium, lists each function
once in its sandwich view; pprof's first mapping is the program with its build ID and real addresses, and `go tool
pprof -symbolize=local` names the frames of a stripped program once its debug file is at hand. Labels are as perf
shows them: no symbol versions, PLT stubs named X@plt (sqlite3), C++ names as ns::Class::method with
`--group-by module` giving namespaces and classes (tests/targets/cxxshapes.cc)."""
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import unittest
from collections import Counter

from plumbtest import TempDir, needs_tool, plumb, skip_missing, target, wait_until
import test_consumers as consumers

CONSUMERS = consumers.CONSUMERS


class Busy:
    """The other core kept busy while a recording runs (a CPU loop in a child process)."""

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


class Shared(TempDir):
    """One directory and its recordings for the whole class (setUpClass), removed at the end."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._ctd = tempfile.TemporaryDirectory(prefix="plumb-test-")
        cls.dir = cls._ctd.name

    @classmethod
    def tearDownClass(cls):
        cls._ctd.cleanup()

    @classmethod
    def at(cls, name):
        return os.path.join(cls.dir, name)


class ThreeThreads(Shared):
    """`record --threads` of tests/targets/threads (a main thread and two workers) under load."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.json = cls.at("threads.json")
        with Busy():
            cls.rec = plumb("record", "--threads", "-o", cls.json, "--", target("threads"), "0.4", timeout=180)

    def doc(self):
        self.assertEqual(self.rec.returncode, 0, self.rec.stderr)
        with open(self.json) as f:
            return json.load(f)

    def test_firefox_samples_in_time_order_and_the_process_named(self):
        doc = self.doc()
        threads = doc["threads"]
        self.assertGreaterEqual(len(threads), 2)  # both workers burn CPU; the main thread only waits
        last = 0.0
        for t in threads:
            times = t["samples"]["time"]
            self.assertGreater(len(times), 0, t["name"])
            self.assertEqual(times, sorted(times), "%s: samples out of time order" % t["name"])
            self.assertEqual(t["processName"], "threads", t["name"])
            last = max(last, times[-1])
        self.assertEqual({t["name"] for t in threads} & {"worker-a", "worker-b"}, {"worker-a", "worker-b"})
        meta = doc["meta"]
        self.assertEqual(meta["profilingStartTime"], 0)
        self.assertGreaterEqual(meta["profilingEndTime"], last)
        self.assertEqual(meta["oscpu"], "%s %s" % (os.uname().sysname, os.uname().machine))
        self.assertEqual(meta["platform"], os.uname().sysname)
        self.assertGreater(meta["interval"], 0)

    def test_firefox_libs_carry_build_ids_and_real_addresses(self):
        doc = self.doc()
        exe = target("threads")
        libs = {lib["path"]: lib for lib in doc["libs"]}
        lib = libs[exe]
        bid = build_id(exe)
        self.assertEqual(lib["codeId"], bid)
        guid = bid[6:8] + bid[4:6] + bid[2:4] + bid[0:2] + bid[10:12] + bid[8:10] + bid[14:16] + bid[12:14] + bid[16:32]
        self.assertEqual(lib["breakpadId"], guid.upper() + "0")
        self.assertGreater(lib["end"], lib["start"])
        # every frame of the program has an address relative to its lib that names its own function (addr2line)
        checked = 0
        for t in doc["threads"]:
            ft, fn, res, strs = t["frameTable"], t["funcTable"], t["resourceTable"], t["stringArray"]
            for i in range(ft["length"]):
                func = ft["func"][i]
                r = fn["resource"][func]
                if r < 0 or res["lib"][r] is None or doc["libs"][res["lib"][r]]["path"] != exe or ft["inlineDepth"][i]:
                    continue
                name = strs[fn["name"][func]]
                if name not in ("spin_for", "worker_a", "worker_b"):
                    continue
                addr = ft["address"][i]
                self.assertGreater(addr, 0, name)
                a2l = subprocess.run(["addr2line", "-f", "-i", "-e", exe, hex(addr)], capture_output=True, text=True)
                self.assertIn(name, a2l.stdout.splitlines()[0::2])  # the function, or one its code is inlined into
                checked += 1
        self.assertGreater(checked, 0)

    def test_profiler_cli_counts_equal_hot(self):
        exe = os.path.join(CONSUMERS, ".bin", "profiler-cli")
        if not os.path.exists(exe):
            skip_missing("@firefox-devtools/profiler-cli (npm)", "scripts/setup installs it into tests/consumers")
        needs_tool("node", "the Firefox Profiler's importer runs on Node.js")
        self.doc()
        env = dict(os.environ, HOME=self.tmp)  # its sessions live under $HOME

        def cli(*args):
            return subprocess.run([exe, *args, "--session", "viewers"], capture_output=True, text=True, timeout=120,
                                  env=env)

        try:
            r = cli("load", self.json)
            # profiler-cli waits 500 ms for its daemon, too little for node on a loaded machine; the daemon goes on
            # loading the profile, and answers once it has (polled, with a deadline)
            if r.returncode != 0 and "still starting" not in r.stdout + r.stderr:
                self.fail(r.stdout + r.stderr)
            r = wait_until(lambda: (lambda x: x if x.returncode == 0 else None)(cli("thread", "list", "--json")),
                           timeout=90, step=0.5)
            self.assertIsNotNone(r, "profiler-cli never answered: " + cli("thread", "list", "--json").stderr)
            got = Counter()
            for t in json.loads(r.stdout)["threads"]:
                self.assertEqual(t["processName"], "threads")
                r = cli("thread", "functions", "--thread", t["threadHandle"], "--json", "--include-idle")
                self.assertEqual(r.returncode, 0, r.stderr)
                for fn in json.loads(r.stdout)["functions"]:
                    if fn["selfSamples"]:
                        got[fn["name"].strip()] += fn["selfSamples"]
        finally:
            cli("stop")
        want = consumers.by_function(consumers.hot(self.json)["leaf"])
        self.assertEqual(sum(got.values()), sum(want.values()))
        self.assertEqual(got, want)

    def test_speedscope_sandwich_lists_each_function_once(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            skip_missing("chromium", "speedscope's app runs in headless Chromium")
        app = os.path.join(CONSUMERS, "speedscope", "dist", "release")
        if not os.path.exists(os.path.join(app, "index.html")):
            skip_missing("speedscope (npm)", "scripts/setup installs it into tests/consumers/node_modules")
        self.doc()
        www = self.path("www")
        shutil.copytree(app, www)
        r = plumb("convert", self.json, "-o", os.path.join(www, "p.speedscope.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(www, "p.speedscope.json")) as f:
            frames = json.load(f)["shared"]["frames"]
        keys = [(fr["name"], fr.get("file")) for fr in frames]
        self.assertEqual(len(keys), len(set(keys)), "one speedscope frame per function")

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=www, **k)

            def log_message(self, *a):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            base = "http://127.0.0.1:%d/" % server.server_address[1]
            url = base + "index.html#profileURL=" + base.replace(":", "%3A").replace("/", "%2F") + \
                "p.speedscope.json&view=sandwich"
            args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + self.path("c"),
                    "--window-size=1400,900", "--virtual-time-budget=8000", "--dump-dom", url]
            dom = subprocess.run(args, capture_output=True, text=True, timeout=120)
        finally:
            server.shutdown()
            server.server_close()
        # the sandwich view's table: one <td title="FILE"> per row, the function's name after its colour swatch
        rows = [html.unescape(m) for m in re.findall(r'<td title="[^"]*" class="[^"]*"><span[^>]*></span>([^<]*)</td>',
                                                     dom.stdout)]
        self.assertIn("spin_for", rows, dom.stdout[-2000:])
        self.assertEqual(len(rows), len(set(rows)), Counter(rows).most_common(3))


class Stripped(Shared):
    """A stripped copy of tests/targets/split, its debug file kept apart (objcopy --only-keep-debug,
    --add-gnu-debuglink), recorded to pprof."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.prog = cls.at("prog")
        cls.debug = cls.at("prog.debug")
        cls.hidden = cls.at("hidden")
        os.mkdir(cls.hidden)
        shutil.copy(target("split"), cls.prog)
        subprocess.run(["objcopy", "--only-keep-debug", cls.prog, cls.debug], check=True)
        subprocess.run(["strip", "-s", cls.prog], check=True)
        subprocess.run(["objcopy", "--add-gnu-debuglink=" + cls.debug, cls.prog], check=True, cwd=cls.dir)
        shutil.move(cls.debug, cls.hidden)  # not beside the program: nothing finds it while recording
        cls.pb = cls.at("s.pb.gz")
        with Busy():
            cls.rec = plumb("record", "-o", cls.pb, "--", cls.prog, "0.6", timeout=180)

    def pprof(self, *args):
        go = needs_tool("go", "Debian golang-go: go tool pprof reads the pprof output")
        self.assertEqual(self.rec.returncode, 0, self.rec.stderr)
        r = subprocess.run([go, "tool", "pprof", *args], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_program_mapping_first_with_build_id_and_real_addresses(self):
        raw = self.pprof("-raw", self.pb)
        maps = re.findall(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+) ?(\S*)", raw.split("Mappings")[1], re.M)
        self.assertEqual(maps[0][4], self.prog, raw[-800:])
        self.assertEqual(maps[0][5], build_id(self.prog))
        start, limit = int(maps[0][1], 16), int(maps[0][2], 16)
        self.assertGreater(limit, start)
        locs = re.findall(r"^\s+\d+: 0x([0-9a-f]+) M=1 (\S+)", raw.split("Mappings")[0], re.M)
        self.assertGreater(len(locs), 2)
        for addr, name in locs:  # nameless (the program is stripped), yet at their real address in the process
            self.assertRegex(name, r"^prog\+0x[0-9a-f]+$")
            self.assertTrue(start <= int(addr, 16) < limit, (addr, name))
        self.assertIn("File: prog", self.pprof("-top", self.pb))

    def test_symbolize_local_names_the_stripped_frames_with_the_debug_file(self):
        top = self.pprof("-symbolize=local", "-top", "-nodefraction=0", self.prog, self.pb)
        self.assertNotRegex(top, r"\b(burn|path_a)\b")  # the stripped file names nothing
        # go tool pprof reads DWARF from the file it is given (it follows no debuglink): the debug file, present
        os.makedirs(self.path("debug"))
        debug = os.path.join(self.path("debug"), "prog.debug")
        shutil.copy(os.path.join(self.hidden, "prog.debug"), debug)
        top = self.pprof("-symbolize=local", "-top", "-nodefraction=0", debug, self.pb)
        names = set(re.findall(r"%\s+(\S+)\s*$", top, re.M))
        self.assertTrue({"burn", "path_a", "path_b", "path_c"} <= names, top)


class Labels(Shared):
    """Labels as perf shows them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cxx = cls.at("cxx.folded")
        cls.cxx_rec = plumb("record", "--full-names", "-o", cls.cxx, "--", target("cxxshapes"), "0.6", timeout=180)

    def cxx_hot(self, *args):
        self.assertEqual(self.cxx_rec.returncode, 0, self.cxx_rec.stderr)
        r = plumb("hot", self.cxx, "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_no_symbol_versions(self):
        doc = self.cxx_hot()
        names = [r["name"] for r in doc["inclusive"]]
        self.assertTrue(any(n.startswith("__libc_start_main ") or n == "__libc_start_main" for n in names), names)
        self.assertEqual([n for n in names if "@@" in n or "@GLIBC" in n], [])

    def test_perf_scripts_symbol_versions_dropped(self):
        """perf script prints a versioned symbol as it finds it (seen here: clock_gettime@@GLIBC_2.17+0x19)."""
        src = self.path("v.perf")
        with open(src, "w") as f:
            for t, leaf in enumerate(("clock_gettime@@GLIBC_2.17+0x19", "memcpy@GLIBC_2.2.5+0x4", "memcpy@plt+0x0")):
                f.write("prog 100 1.%06d:     250000 cpu-clock:ppp: \n" % t)
                f.write("\t           cf439 %s (/usr/lib/x86_64-linux-gnu/libc.so.6)\n" % leaf)
                f.write("\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n")
        r = plumb("hot", src, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = {re.sub(r" \([^()]*\)$", "", row["name"]) for row in json.loads(r.stdout)["leaf"]}  # module or not
        self.assertEqual(names, {"clock_gettime", "memcpy", "memcpy@plt"})

    def test_cxx_names_short_by_default_full_on_request(self):
        short = [r["name"] for r in self.cxx_hot()["inclusive"]]
        self.assertIn("geometry::Polygon::area (targets/cxxshapes.cc)", short)
        self.assertIn("store::Table<int>::lookup (targets/cxxshapes.cc)", short)
        self.assertEqual([n for n in short if re.match(r"^(void|bool|int|long|double) ", n)], [])
        full = [r["name"] for r in self.cxx_hot("--full-names")["inclusive"]]
        self.assertIn("geometry::Polygon::area(int) const (targets/cxxshapes.cc)", full)

    def test_group_by_module_gives_namespaces_and_classes(self):
        doc = self.cxx_hot("--group-by", "module")
        groups = {r["name"] for r in doc["grouped_inclusive"]}
        self.assertTrue({"geometry::Polygon", "store::Table<int>", "std"} <= groups, groups)
        # never the words of a return type ("void std", "bool __gnu_cxx::__ops")
        self.assertEqual([g for g in groups if re.match(r"^(void|bool|int|long|unsigned|double|char|auto|const) ", g)], [])

    def test_sqlite_plt_stubs_named(self):
        sqlite = needs_tool("sqlite3", "Debian sqlite3: a program that calls through its PLT a lot")
        lib = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"
        sections = subprocess.run(["readelf", "-SW", os.path.realpath(lib)], capture_output=True, text=True).stdout
        m = re.search(r"\] \.plt\s+PROGBITS\s+([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+)", sections)
        plt_lo, plt_hi = int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)
        out = self.path("sq.folded")
        query = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<600000) "
                 "SELECT count(*), sum(length(printf('%d-%s', x, hex(x)))) FROM c;")
        r = plumb("record", "--interval", "0.001", "-o", out, "--", sqlite, ":memory:", query, timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr)
        frames = Counter()
        with open(out) as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                for fr in stack.split(";"):
                    frames[fr] += int(n)
        anon = [fr for fr in frames if re.match(r"^libsqlite3\.so[.\d]*\+0x([0-9a-f]+)$", fr) and
                plt_lo <= int(fr.rpartition("0x")[2], 16) < plt_hi]
        self.assertEqual(anon, [], "a frame at the .plt without a name")
        stubs = {fr: n for fr, n in frames.items() if re.match(r"^\w+@plt \(libsqlite3", fr)}
        # ~2% of the samples land in the PLT (>20 at 1 kHz over the query's second of CPU): none at all would mean
        # the stubs are not named
        self.assertGreater(len(stubs), 0, sorted(frames.items(), key=lambda kv: -kv[1])[:10])


if __name__ == "__main__":
    unittest.main()
