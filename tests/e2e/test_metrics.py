"""plumb metrics: recording a known process tree (tests/targets/metrics_tree.c) and checking every sample
against the events the tree prints; the bound on samples; readers racing the rewrites; exit codes 1, 3, 5."""
import json
import os
import signal
import stat
import subprocess
import time
import unittest

from plumbtest import PLUMB, TempDir, env, main, plumb, target, wait_until

MiB = 1 << 20


def events(text):
    """The tree's stdout lines: {(event, name): (pid, unix_ms, extra...)}"""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] in ("begin", "touched", "freed", "end", "cpu"):
            out[(parts[0], parts[1])] = tuple(int(x) for x in parts[2:])
    return out


def load(path):
    with open(path) as f:
        return json.load(f)


def procs_by_pid(sample):
    return {p["pid"]: p for p in sample["processes"]}


class MetricsTree(TempDir):
    """One recording of the tree at --every 0.2, checked in several ways."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._home = tempfile.TemporaryDirectory(prefix="plumb-metrics-")
        cls.home = cls._home.name
        cls.run_ = plumb("metrics", "record", "--every", "0.2", "--name", "tree", "--", target("metrics_tree"), "1.5",
                         extra_env={"PLUMB_HOME": cls.home}, timeout=60)
        cls.ev = events(cls.run_.stdout)
        cls.path = os.path.join(cls.home, "metrics", "tree.json")

    @classmethod
    def tearDownClass(cls):
        cls._home.cleanup()

    def test_metrics__tree_recorded(self):
        self.assertEqual(self.run_.returncode, 0, self.run_.stderr)
        self.assertIn("tree.json", self.run_.stderr)
        doc = load(self.path)
        self.assertEqual(doc["schema"], "plumb.metrics.v1")
        self.assertEqual(doc["state"], "ended")
        self.assertEqual(doc["root"]["pid"], self.ev[("begin", "parent")][0])
        self.assertEqual(doc["samples_taken"], len(doc["samples"]))
        self.assertGreaterEqual(len(doc["samples"]), 10)
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o600)
        self.assertEqual(os.listdir(os.path.join(self.home, "metrics")), ["tree.json"])  # no temp file left

    def test_metrics__each_child_while_it_lives(self):
        doc = load(self.path)
        margin = 100  # ms: a sample's scan takes a few ms after its time stamp
        for name in ("mt-alloc", "mt-burn", "mt-sleep"):
            pid, begin = self.ev[("begin", name)][:2]
            end = self.ev[("end", name)][1]
            # samples whose whole scan fell inside the child's life
            inside = [s for s in doc["samples"] if begin + margin <= s["t_ms"] and
                      s["t_ms"] + s["scan_ms"] <= end - margin]
            after = [s for s in doc["samples"] if s["t_ms"] > end + margin]
            gaps = [b["t_ms"] - a["t_ms"] for a, b in zip(doc["samples"], doc["samples"][1:])]
            self.assertGreaterEqual(len(inside), 1, f"{name}: no sample in its life; gaps between samples {gaps}")
            self.assertGreaterEqual(sum(pid in procs_by_pid(s) for s in doc["samples"]), 2, name)
            for s in inside:
                p = procs_by_pid(s).get(pid)
                self.assertIsNotNone(p, f"{name} (pid {pid}, {begin}..{end}) missing from the sample at "
                                        f"{s['t_ms']} (scan {s['scan_ms']} ms): {sorted(procs_by_pid(s))}")
                self.assertEqual(p["role"], "child")
                self.assertEqual(p["name"], name)
                self.assertEqual(p["ppid"], doc["root"]["pid"])
            for s in after:
                self.assertNotIn(pid, procs_by_pid(s), f"{name} still listed after it ended")
        for s in doc["samples"]:
            mains = [p for p in s["processes"] if p["role"] == "main"]
            self.assertEqual([p["pid"] for p in mains], [doc["root"]["pid"]])

    def test_metrics__burner_cpu(self):
        doc = load(self.path)
        pid, begin = self.ev[("begin", "mt-burn")][:2]
        end = self.ev[("end", "mt-burn")][1]
        cpu_ms, wall_ms = self.ev[("cpu", "mt-burn")][2:4]
        truth = 100.0 * cpu_ms / wall_ms  # what the burner really got (about 100 on an idle machine)
        s = doc["samples"]
        # intervals wholly inside the burner's life: the previous sample after it began, this one before it ended
        figures = [procs_by_pid(s[i])[pid]["cpu_pct"] for i in range(1, len(s))
                   if s[i - 1]["t_ms"] >= begin and s[i]["t_ms"] <= end and pid in procs_by_pid(s[i])]
        self.assertGreaterEqual(len(figures), 3, [x["t_ms"] for x in s])
        mean = sum(figures) / len(figures)
        self.assertLess(abs(mean - truth), 10, f"recorded {figures}, the burner measured {truth:.1f}%")
        if truth >= 95:
            self.assertLess(abs(mean - 100), 10)

    def test_metrics__peak_memory_kept_after_free(self):
        doc = load(self.path)
        pid, touched = self.ev[("touched", "mt-alloc")][:2]
        freed = self.ev[("freed", "mt-alloc")][1]
        end = self.ev[("end", "mt-alloc")][1]
        peak = doc["peak"]["memory"]
        self.assertEqual(peak["pid"], pid)
        self.assertEqual(peak["name"], "mt-alloc")
        self.assertGreaterEqual(peak["rss_bytes"], 200 * MiB)
        self.assertTrue(touched - 50 <= peak["t_ms"] <= freed, (touched, peak["t_ms"], freed))
        # ... while the process itself had given the memory back before it ended
        later = [procs_by_pid(s)[pid] for s in doc["samples"]
                 if freed + 100 <= s["t_ms"] <= end - 100 and pid in procs_by_pid(s)]
        self.assertGreaterEqual(len(later), 1)
        for p in later:
            self.assertLess(p["rss_bytes"], 50 * MiB)
            self.assertGreaterEqual(p["peak_rss_bytes"], 200 * MiB)  # VmHWM remembers

        r = plumb("metrics", "--name", "tree", extra_env={"PLUMB_HOME": self.home})
        self.assertEqual(r.returncode, 0, r.stderr)
        line = next(l for l in r.stdout.splitlines() if "peak memory" in l)
        self.assertIn("mt-alloc", line)
        self.assertIn(f"pid {pid}", line)
        mib = float(line.split("most:")[1].split(")")[1].split()[0])
        self.assertGreaterEqual(mib, 200.0)
        self.assertIn("latest sample", r.stdout)
        self.assertIn("peak CPU", r.stdout)
        table = r.stdout.split("top ")[1].splitlines()
        header = table[1]
        self.assertIn("PEAK RSS", header)
        rows = table[2:]
        self.assertEqual(len(rows), 4)  # parent and three children
        widths = {len(row.rstrip()) for row in [header] + rows}
        self.assertEqual(len(widths), 1, "the table is aligned")

        top1 = plumb("metrics", "--path", self.path, "--top", "1", extra_env={"PLUMB_HOME": self.home})
        self.assertEqual(top1.returncode, 0, top1.stderr)
        after = top1.stdout.split("top 1 of 4 processes")[1].splitlines()[1:]
        self.assertEqual(len(after), 2)  # the header and one process
        busiest = max((p["cpu_pct"], p["pid"]) for s in doc["samples"] for p in s["processes"])[1]
        self.assertEqual(int(after[1].split()[0]), busiest)  # ranked by peak CPU

    def test_metrics__json_is_the_raw_document(self):
        r = plumb("metrics", "--json", extra_env={"PLUMB_HOME": self.home})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path) as f:
            self.assertEqual(r.stdout, f.read())


class MetricsBound(TempDir):
    def start_recorder(self, *args):
        return subprocess.Popen([PLUMB, "metrics", "record", *args], env=env(PLUMB_HOME=self.tmp),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_metrics__never_more_than_keep(self):
        sleeper = subprocess.Popen(["sleep", "60"])
        rec = self.start_recorder("--every", "0.05", "--keep", "5", "--name", "bound", "--pid", str(sleeper.pid))
        path = os.path.join(self.tmp, "metrics", "bound.json")
        try:
            counts = []

            def enough():
                try:
                    doc = load(path)
                except (OSError, ValueError):
                    return False
                counts.append(len(doc["samples"]))
                return doc["samples_taken"] >= 15  # three times --keep intervals

            self.assertTrue(wait_until(enough, timeout=30))
            self.assertLessEqual(max(counts), 5)
            rec.send_signal(signal.SIGTERM)
            _, err = rec.communicate(timeout=10)
            self.assertEqual(rec.returncode, 0, err)
            doc = load(path)
            self.assertEqual(doc["state"], "ended")
            self.assertEqual(len(doc["samples"]), 5)
            self.assertGreaterEqual(doc["samples_taken"], 15)
            times = [s["t_ms"] for s in doc["samples"]]
            self.assertEqual(times, sorted(times))
            self.assertTrue(all(s["processes"][0]["pid"] == sleeper.pid for s in doc["samples"]))
        finally:
            if rec.poll() is None:
                rec.kill()
                rec.wait()
            sleeper.kill()
            sleeper.wait()

    def test_metrics__stops_when_pid_exits(self):
        sleeper = subprocess.Popen(["sleep", "0.6"])
        r = plumb("metrics", "record", "--every", "0.1", "--pid", str(sleeper.pid), extra_env={"PLUMB_HOME": self.tmp},
                  timeout=20)
        sleeper.wait()
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = load(os.path.join(self.tmp, "metrics", "sleep.json"))  # named after the process
        self.assertEqual(doc["state"], "ended")
        self.assertGreaterEqual(len(doc["samples"]), 2)

    def test_metrics__readers_never_see_a_torn_file(self):
        tree = subprocess.Popen(["sleep", "60"])  # small, so 10,000 full parses stay cheap
        rec = self.start_recorder("--every", "0.01", "--keep", "20", "--name", "race", "--pid", str(tree.pid))
        path = os.path.join(self.tmp, "metrics", "race.json")
        try:
            self.assertTrue(wait_until(lambda: os.path.exists(path), timeout=10))
            versions = set()
            reads = 0
            deadline = time.monotonic() + 60
            # 10,000 reads, and on a machine so busy that the recorder lags, on until it has rewritten the file
            # 20 times under the reader's feet
            while reads < 10000 or (len(versions) <= 20 and time.monotonic() < deadline):
                reads += 1
                with open(path, "rb") as f:
                    data = f.read()
                doc = json.loads(data)  # raises on a torn or half-written file
                self.assertEqual(doc["schema"], "plumb.metrics.v1")
                self.assertLessEqual(len(doc["samples"]), 20)
                versions.add(doc["updated_ms"])
            self.assertIsNone(rec.poll(), "the recorder was still running")
            self.assertGreater(len(versions), 20, "the file was rewritten while it was being read")
            r = plumb("metrics", "--path", path, extra_env={"PLUMB_HOME": self.tmp})
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            rec.send_signal(signal.SIGINT)
            rec.communicate(timeout=10)
            tree.kill()
            tree.wait()
        self.assertEqual(rec.returncode, 0)
        leftovers = [n for n in os.listdir(os.path.join(self.tmp, "metrics")) if n != "race.json"]
        self.assertEqual(leftovers, [])


VALID = None


class MetricsExitCodes(TempDir):
    def valid_recording(self):
        """A real recording (of `sleep 0.3`) in this test's PLUMB_HOME; returns its path."""
        r = plumb("metrics", "record", "--every", "0.05", "--name", "good", "--", "sleep", "0.3",
                  extra_env={"PLUMB_HOME": self.tmp})
        self.assertEqual(r.returncode, 0, r.stderr)
        return os.path.join(self.tmp, "metrics", "good.json")

    def assert_fails(self, r, code, *words):
        self.assertEqual(r.returncode, code, (r.stdout, r.stderr))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
        self.assertEqual(r.stdout, "")

    def test_metrics__exit_1_switch_off(self):
        self.assert_fails(plumb("metrics", debug=False, extra_env={"PLUMB_HOME": self.tmp}), 1, "PLUMB_DEBUG=1")
        r = plumb("metrics", "record", "--", "true", debug=False, extra_env={"PLUMB_HOME": self.tmp})
        self.assert_fails(r, 1, "PLUMB_DEBUG=1")
        r = plumb("metrics", debug=False, extra_env={"PLUMB_HOME": self.tmp, "PLUMB_DEBUG": "off"})
        self.assertEqual(r.returncode, 1)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "metrics")))

    def test_metrics__exit_3_no_recording(self):
        home = {"PLUMB_HOME": self.tmp}
        self.assert_fails(plumb("metrics", extra_env=home), 3, "no recording found", "PLUMB_DEBUG=1")
        os.makedirs(os.path.join(self.tmp, "metrics"))
        self.assert_fails(plumb("metrics", extra_env=home), 3, "no recording found", "PLUMB_DEBUG=1")
        self.assert_fails(plumb("metrics", "--name", "nope", extra_env=home), 3, "nope.json", "PLUMB_DEBUG=1")
        self.assert_fails(plumb("metrics", "--path", self.path("missing.json"), extra_env=home), 3, "missing.json")
        # the default home is ${XDG_STATE_HOME:-~/.local/state}/plumb
        e = {"XDG_STATE_HOME": self.path("xdg"), "PLUMB_HOME": ""}
        self.assert_fails(plumb("metrics", extra_env=e), 3, self.path("xdg") + "/plumb/metrics")

    def test_metrics__exit_5_bad_files(self):
        good = self.valid_recording()
        with open(good) as f:
            text = f.read()
        doc = json.loads(text)
        doc["schema"] = "plumb.metrics.v2"
        cases = {
            "truncated.json": text[: len(text) // 2],
            "v2.json": json.dumps(doc),
            "notjson.json": "main;work;leaf 12\nmain;idle 3\n",
        }
        words = {"truncated.json": "not valid JSON", "v2.json": "does not understand", "notjson.json": "JSON"}
        for name, content in cases.items():
            p = self.path(name)
            with open(p, "w") as f:
                f.write(content)
            self.assert_fails(plumb("metrics", "--path", p), 5, name, words[name])
            self.assert_fails(plumb("metrics", "--path", p, "--json"), 5, name)
        os.chmod(good, 0)
        if os.geteuid() != 0:  # root reads anything
            self.assert_fails(plumb("metrics", "--path", good), 5)
        os.chmod(good, 0o600)
        # a folder holding only a malformed recording: 5, not 3
        only_bad = self.path("badhome")
        os.makedirs(os.path.join(only_bad, "metrics"))
        with open(os.path.join(only_bad, "metrics", "x.json"), "w") as f:
            f.write(cases["v2.json"])
        r = plumb("metrics", extra_env={"PLUMB_HOME": only_bad})
        self.assertEqual(r.returncode, 5, r.stderr)

    def test_metrics__newest_wins_and_others_are_named(self):
        home = {"PLUMB_HOME": self.tmp}
        self.valid_recording()
        time.sleep(0.01)
        r = plumb("metrics", "record", "--every", "0.05", "--name", "newer", "--", "sleep", "0.2", extra_env=home)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, "metrics", "broken.json"), "w") as f:
            f.write("{")
        r = plumb("metrics", extra_env=home)
        self.assertEqual(r.returncode, 0, r.stderr)
        first = r.stdout.splitlines()[0]
        self.assertIn("newer", first)
        self.assertIn("good", first)  # the other recording is named
        self.assertIn("1 unreadable", first)
        self.assertIn('recording "newer"', r.stdout)
        self.assertIn("broken.json", r.stderr)
        r = plumb("metrics", "--json", extra_env=home)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(json.loads(r.stdout)["name"], "newer")  # stdout holds only the document
        self.assertIn("good", r.stderr)

    def test_metrics__stale_recording_and_earlier_peak(self):
        """A recording whose writer vanished says so; a peak that left the window is still reported."""
        with open(self.valid_recording()) as f:
            doc = json.load(f)
        doc["state"] = "recording"
        doc["updated_ms"] -= 600_000
        oldest = doc["samples"][0]["t_ms"]
        doc["peak_recording"]["memory"] = {"t_ms": oldest - 60_000, "total_cpu_pct": 1.0,
                                           "total_rss_bytes": 300 * MiB, "pid": 4242, "name": "gone-hog",
                                           "cpu_pct": 1.0, "rss_bytes": 290 * MiB}
        p = self.path("stale.json")
        with open(p, "w") as f:
            json.dump(doc, f)
        r = plumb("metrics", "--path", p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no sample for", r.stdout)
        line = next(l for l in r.stdout.splitlines() if "earlier mem" in l)
        self.assertIn("300.0 MiB", line)
        self.assertIn("gone-hog (pid 4242) 290.0 MiB", line)

    def test_metrics__bad_arguments(self):
        home = {"PLUMB_HOME": self.tmp}
        for args in (["record"], ["record", "--pid", "1", "--", "true"], ["record", "--every", "0", "--", "true"],
                     ["record", "--keep", "0", "--", "true"], ["record", "--name", "../x", "--", "true"],
                     ["record", "--", "/nonexistent/program"], ["record", "--pid", "999999999"],
                     ["--name", "a", "--path", "b"], ["--top", "0"], ["extra"]):
            r = plumb("metrics", *args, extra_env=home)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, (args, r.stderr))


# Secret shapes the redactor knows (docs/design.md §3.6); none may reach a recording or anything `plumb metrics`
# prints.
GH_TOKEN = "ghp_" + "A1b2C3d4" * 4 + "zz99"  # a GitHub token shape: ghp_ + 36 letters and digits
SECRETS = ("hunter2", "abc123", GH_TOKEN, GH_TOKEN[:12], "user:")


class MetricsRedaction(TempDir):
    """Command lines, process names and paths of real processes go through the redactor: secrets become
    [REDACTED] in the artifact, in `plumb metrics` and its --json, and the home-directory prefix is dropped."""

    def setUp(self):
        super().setUp()
        self.home = self.path("home")  # the redactor's $HOME, and PLUMB_HOME under it as by default
        os.makedirs(os.path.join(self.home, "bin"))
        self.env = {"HOME": self.home, "PLUMB_HOME": os.path.join(self.home, ".local", "state", "plumb")}
        # a program exec'd under a secret-shaped name: its comm (the process name) is "pwd=hunter2"
        self.secret_sleep = os.path.join(self.home, "bin", "pwd=hunter2")
        os.symlink("/bin/sleep", self.secret_sleep)

    def outputs(self, r, name):
        """Every byte a user can see of recording `name`: the artifact, the table, --json, and the messages."""
        path = os.path.join(self.env["PLUMB_HOME"], "metrics", name + ".json")
        with open(path, "rb") as f:
            artifact = f.read().decode()
        table = plumb("metrics", "--name", name, extra_env=self.env)
        self.assertEqual(table.returncode, 0, table.stderr)
        raw = plumb("metrics", "--name", name, "--json", extra_env=self.env)
        self.assertEqual(raw.returncode, 0, raw.stderr)
        newest = plumb("metrics", extra_env=self.env)  # the folder probe prints the folder's path
        self.assertEqual(newest.returncode, 0, newest.stderr)
        return {"artifact": artifact, "table": table.stdout + table.stderr, "json": raw.stdout + raw.stderr,
                "newest": newest.stdout + newest.stderr, "record": r.stdout + r.stderr}

    def assert_clean(self, outs):
        for where, text in outs.items():
            for secret in SECRETS:
                self.assertNotIn(secret, text, f"{secret!r} in the {where}:\n{text[:3000]}")
            self.assertNotIn(self.home, text, f"the home directory in the {where}")

    def test_metrics__command_line_and_names_redacted(self):
        r = plumb("metrics", "record", "--every", "0.1", "--keep", "5", "--name", "t", "--",
                  "sh", "-c", '"$0" 0.6 & wait', self.secret_sleep, "--password=hunter2", GH_TOKEN,
                  "https://user:hunter2@example.com/x?token=abc123", extra_env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        outs = self.outputs(r, "t")
        self.assert_clean(outs)
        doc = json.loads(outs["artifact"])
        cmd = doc["root"]["command"]
        self.assertTrue(cmd.startswith("sh -c "), cmd)
        self.assertIn("--password=[REDACTED]", cmd)
        self.assertIn("https://[REDACTED]@example.com/x?[REDACTED]", cmd)
        self.assertIn(" [REDACTED] ", cmd)  # the token
        self.assertIn(" bin/pwd=[REDACTED] ", cmd)  # $HOME/ dropped from the path
        # the child exec'd under the secret name: redacted in the samples and in the memory peak it holds
        names = {p["name"] for s in doc["samples"] for p in s["processes"]}
        self.assertIn("pwd=[REDACTED]", names)
        self.assertIn("sh", names)  # an ordinary name is left alone
        self.assertIn("pwd=[REDACTED]", outs["table"])
        self.assertIn("[REDACTED]", outs["json"])
        self.assertEqual(json.loads(plumb("metrics", "--name", "t", "--json", extra_env=self.env).stdout), doc)
        # a path under the home directory reads ~/... in a message (not as a relative path, issue 16)
        self.assertIn("into ~/.local/state/plumb/metrics/t.json", outs["record"])
        self.assertIn('recording "t": ~/.local/state/plumb/metrics/t.json', outs["table"])

    def test_metrics__name_derived_from_a_secret_command(self):
        """Without --name the recording is named after the program, from its redacted form."""
        r = plumb("metrics", "record", "--every", "0.1", "--", self.secret_sleep, "0.3", extra_env=self.env,
                  timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        names = os.listdir(os.path.join(self.env["PLUMB_HOME"], "metrics"))
        self.assertEqual(len(names), 1, names)
        self.assertNotIn("hunter2", names[0])
        name = names[0][: -len(".json")]
        outs = self.outputs(r, name)
        self.assert_clean(outs)
        doc = json.loads(outs["artifact"])
        self.assertEqual(doc["root"]["name"], "pwd=[REDACTED]")
        self.assertEqual(doc["root"]["command"], "bin/pwd=[REDACTED] 0.3")

    def test_metrics__a_taken_name_needs_force(self):
        """Every stored thing: a recording of that name is replaced only with --force (issue 16)."""
        args = ["metrics", "record", "--every", "0.1", "--name", "taken", "--", "sleep", "0.2"]
        r = plumb(*args, extra_env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb(*args, extra_env=self.env, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("a recording named 'taken' exists (--force replaces it", r.stderr)
        r = plumb(*args[:-3], "--force", *args[-3:], extra_env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_metrics__long_command_line_redacted_whole(self):
        """The command line is read whole and redacted before it is cut to what the artifact keeps: a token
        straddling 4 KiB (where a fixed buffer would end) is not left half-visible, and a cut one ends in '...'."""
        for pad_len, cut in ((4060, False), (6000, True)):
            pad = "x" * pad_len
            r = plumb("metrics", "record", "--every", "0.1", "--name", "long", "--force", "--",
                      "sh", "-c", "sleep 0.2", pad, GH_TOKEN, "tail", extra_env=self.env, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            outs = self.outputs(r, "long")
            self.assert_clean(outs)
            cmd = json.loads(outs["artifact"])["root"]["command"]
            if cut:
                self.assertTrue(cmd.startswith("sh -c sleep 0.2 xxx") and cmd.endswith("x..."), cmd[-40:])
                self.assertEqual(len(cmd), 4096 + 3)
            else:
                self.assertEqual(cmd, "sh -c sleep 0.2 " + pad + " [REDACTED] tail")

    def test_metrics__libplumb_recorder_redacts(self):
        """libplumb's own recorder (plumb_init in a linked program) writes the same redacted artifact."""
        prog = os.path.join(self.home, "bin", "key=hunter2")
        os.symlink(target("plumb_api"), prog)
        e = env(True, **self.env, PLUMB_METRICS_EVERY="0.05", PLUMB_SAMPLES=self.path("s.jsonl"),
                PLUMB_STAGES=self.path("st.jsonl"))
        p = subprocess.run([prog, "check", "0.3", "--password=hunter2", GH_TOKEN,
                            "https://user:hunter2@example.com/x?token=abc123"], env=e, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["init"], "ok")
        outs = self.outputs(p, "apitest")
        self.assert_clean(outs)
        doc = json.loads(outs["artifact"])
        self.assertEqual(doc["root"]["name"], "key=[REDACTED]")
        self.assertEqual(doc["root"]["command"], "bin/key=[REDACTED] check 0.3 --password=[REDACTED] [REDACTED] "
                                                 "https://[REDACTED]@example.com/x?[REDACTED]")
        self.assertIn("key=[REDACTED]", {p["name"] for s in doc["samples"] for p in s["processes"]})


if __name__ == "__main__":
    main()
