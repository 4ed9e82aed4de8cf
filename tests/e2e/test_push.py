"""plumb's figures into Prometheus (docs/bench.md "Prometheus"): Debian's prometheus-pushgateway and prometheus
run on 127.0.0.1 on ports of their own, Prometheus scraping the gateway every second with a configuration of its
own; `bench run --push` and `bench push` send an artifact, `metrics push` a recording, and Prometheus' HTTP API
says what arrived: the p50 of the artifact, its labels, one series per commit, redacted label values and sanitised
names. A gateway that is down or never answers ends the push with exit 6 in bounded time, the artifact written.
A small HTTP server of the test's own checks what plumb sends (the credentials, the retry). Only loopback."""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, env, skip_missing, wait_until  # noqa: E402

GATEWAY_BIN = shutil.which("prometheus-pushgateway")
PROMETHEUS_BIN = shutil.which("prometheus")
SECRET = "ghp_" + "Zq8" * 12  # a GitHub-shaped token: the redactor knows its prefix

SUITE = """[suite]
name = {name}
repeats = 5
warmup = 0

[case parse]
run = sh emit.sh

[case render]
run = sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
"""

# a sample with a token in one tag and a tag key no Prometheus label name may have
EMIT = "cat >> \"$PLUMB_SAMPLES\" <<'EOF'\n%s\nEOF\n" % json.dumps(
    {"name": "app.ready ms/µ", "kind": "latency", "unit": "ms", "value": 4.25,
     "tags": {"endpoint": "https://ci.example/hook?token=" + SECRET, "hit-rate.%": "high"}}, ensure_ascii=False)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read().decode())


def plumb_env(**extra):
    e = env(**extra)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        e.pop(k, None)  # loopback only: no proxy in between
    return e


def run(args, cwd, timeout=60, **extra):
    return subprocess.run([PLUMB, *args], cwd=cwd, env=plumb_env(**extra), capture_output=True, text=True,
                          timeout=timeout)


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


class Stack:
    """A Pushgateway and a Prometheus scraping it, started in a temp dir and stopped by pid."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="plumb-prom-")
        self.gw_port, self.prom_port = free_port(), free_port()
        self.gateway = "http://127.0.0.1:%d" % self.gw_port
        self.prom = "http://127.0.0.1:%d" % self.prom_port
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n"
                    "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % self.gw_port)
        self.procs = []
        log = open(os.path.join(self.dir, "gateway.log"), "w")
        self.procs.append(subprocess.Popen(
            [GATEWAY_BIN, "--web.listen-address=127.0.0.1:%d" % self.gw_port, "--persistence.file="],
            stdout=log, stderr=log, cwd=self.dir))
        log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.procs.append(subprocess.Popen(
            [PROMETHEUS_BIN, "--config.file=" + os.path.join(self.dir, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(self.dir, "data"),
             "--web.listen-address=127.0.0.1:%d" % self.prom_port, "--log.level=warn",
             "--web.enable-remote-write-receiver"],
            stdout=log, stderr=log, cwd=self.dir))

        def up(url):
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False
        if not wait_until(lambda: up(self.gateway + "/-/ready") and up(self.prom + "/-/ready"), 30, 0.1):
            self.stop()
            raise AssertionError("the pushgateway or prometheus did not start (logs in a removed temp dir)")

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def query(self, q):
        return get_json(self.prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q}))["data"]["result"]

    def series(self, match, since_s=600):
        now = time.time()
        qs = urllib.parse.urlencode({"match[]": match, "start": now - since_s, "end": now + 1})
        return get_json(self.prom + "/api/v1/series?" + qs)["data"]

    def wait_query(self, q, pred, timeout=20):
        """Polls q until pred(result) holds (Prometheus scrapes the gateway every second); returns the result."""
        last = [None]

        def check():
            last[0] = self.query(q)
            return pred(last[0])
        wait_until(check, timeout, 0.2)
        return last[0]


class PushTest(unittest.TestCase):
    stack = None

    @classmethod
    def setUpClass(cls):
        if not GATEWAY_BIN:
            skip_missing("prometheus-pushgateway")
        if not PROMETHEUS_BIN:
            skip_missing("prometheus")
        for attempt in range(3):  # a port found free can be taken by another program before the server binds it
            try:
                cls.stack = Stack()
                break
            except AssertionError:
                if attempt == 2:
                    raise

    @classmethod
    def tearDownClass(cls):
        if cls.stack:
            cls.stack.stop()

    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="plumb-test-")
        self.tmp = self._td.name

    def tearDown(self):
        self._td.cleanup()

    def suite_repo(self, name):
        """A git checkout holding a two-case suite; returns its first commit."""
        with open(os.path.join(self.tmp, "suite.ini"), "w") as f:
            f.write(SUITE.format(name=name))
        with open(os.path.join(self.tmp, "emit.sh"), "w") as f:
            f.write(EMIT)
        git(self.tmp, "init", "-q")
        git(self.tmp, "add", ".")
        git(self.tmp, "commit", "-qm", "one")
        return self.head()

    def head(self):
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=self.tmp, capture_output=True, text=True,
                              check=True).stdout.strip()

    def report_p50(self, artifact, metric):
        r = run(["bench", "report", artifact, "--json"], self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)["metrics"]
        row = [m for m in rows if m["name"] == metric]
        self.assertEqual(len(row), 1, "no %s in the report" % metric)
        return row[0]["p50"]

    def test_run_push_reaches_prometheus(self):
        """The p50 in Prometheus is the report's; every context label is there; a second commit is a second
        series; a token in a tag is redacted; a tag key with illegal characters becomes a legal label name."""
        st = self.stack
        first = self.suite_repo("pushe2e")
        r = run(["bench", "run", "suite.ini", "--out", "a.json", "--push", st.gateway, "--push-label", "branch=main"],
                self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pushed", r.stderr)
        p50 = self.report_p50(os.path.join(self.tmp, "a.json"), "parse.wall_ms")
        q = 'plumb_bench_wall_ms{suite="pushe2e",case="parse",stat="p50"}'
        res = st.wait_query(q, lambda v: any(s["metric"].get("git_commit") == first for s in v))
        mine = [s for s in res if s["metric"].get("git_commit") == first]
        self.assertEqual(len(mine), 1, res)
        self.assertAlmostEqual(float(mine[0]["value"][1]), p50, delta=abs(p50) * 1e-9)  # the report prints 15 digits
        # and exactly the artifact's: the median of its five raw values (the middle one), bit for bit
        with open(os.path.join(self.tmp, "a.json")) as f:
            raw = sorted(x["value"] for x in json.load(f)["samples"] if x["name"] == "parse.wall_ms")
        self.assertEqual(len(raw), 5)
        self.assertEqual(float(mine[0]["value"][1]), raw[2])
        labels = mine[0]["metric"]
        for k in ("suite", "case", "stat", "git_commit", "git_dirty", "machine", "trust", "branch"):
            self.assertIn(k, labels)
        self.assertEqual(labels["job"], "plumb_bench")
        self.assertEqual(labels["git_dirty"], "false")
        self.assertEqual(labels["machine"], socket.gethostname())
        count = st.query('plumb_bench_wall_ms{suite="pushe2e",case="render",stat="count"}')
        self.assertEqual([float(s["value"][1]) for s in count], [5.0])
        # the runner's unqueued_ms (when the run's waits for a CPU are known) is a family of its own, as the report
        # states it, never one of the program's samples
        r = run(["bench", "report", os.path.join(self.tmp, "a.json"), "--json"], self.tmp)
        if any(m["name"] == "parse.unqueued_ms" for m in json.loads(r.stdout)["metrics"]):
            unq = self.report_p50(os.path.join(self.tmp, "a.json"), "parse.unqueued_ms")
            res = st.query('plumb_bench_unqueued_ms{suite="pushe2e",case="parse",stat="p50"}')
            self.assertEqual(len(res), 1, res)
            self.assertAlmostEqual(float(res[0]["value"][1]), unq, delta=abs(unq) * 1e-9)

        samples = st.query('plumb_bench_sample{suite="pushe2e",stat="p50"}')
        self.assertEqual(len(samples), 1, samples)
        m = samples[0]["metric"]
        self.assertEqual(m["name"], "app.ready ms/µ")  # a label value: kept as it is
        self.assertEqual(float(samples[0]["value"][1]), 4.25)
        self.assertIn("tag_hit_rate__", m)  # "hit-rate.%": sanitised to a legal label name
        self.assertIn("[REDACTED]", m["tag_endpoint"])
        text = urllib.request.urlopen(st.gateway + "/metrics", timeout=5).read().decode()
        self.assertNotIn(SECRET, text)

        # another commit: a second series; the first is no longer current
        with open(os.path.join(self.tmp, "change.txt"), "w") as f:
            f.write("two\n")
        git(self.tmp, "add", ".")
        git(self.tmp, "commit", "-qm", "two")
        second = self.head()
        # runs are ordered by their artifact's creation second: the second run begins in a later second
        with open(os.path.join(self.tmp, "a.json")) as f:
            created = json.load(f)["created"]
        wait_until(lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > created, 3, 0.05)
        r = run(["bench", "run", "suite.ini", "--out", "b.json", "--push", st.gateway, "--push-label", "branch=main"],
                self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        res = st.wait_query(q, lambda v: [s["metric"].get("git_commit") for s in v] == [second])
        self.assertEqual([s["metric"].get("git_commit") for s in res], [second])
        p50 = self.report_p50(os.path.join(self.tmp, "b.json"), "parse.wall_ms")
        self.assertAlmostEqual(float(res[0]["value"][1]), p50, delta=abs(p50) * 1e-9)
        commits = {s.get("git_commit") for s in st.series(q)}
        self.assertEqual(commits, {first, second})

        # the documented question "which commit made it slower": one value per commit, newest run last
        per_commit = st.query('max by (git_commit) (last_over_time(%s[10m]))' % q)
        self.assertEqual({s["metric"]["git_commit"] for s in per_commit}, {first, second})
        # and "the p50 of a case over the last N runs on main" (docs/bench.md), with N = 1 and 30
        last_runs = ('last_over_time(plumb_bench_wall_ms{suite="pushe2e", case="parse", stat="p50", branch="main"}[10m])'
                     ' and on (git_commit, machine) topk(%d, last_over_time('
                     'plumb_bench_run_timestamp_seconds{suite="pushe2e", branch="main"}[10m]))')
        self.assertEqual({s["metric"]["git_commit"] for s in st.query(last_runs % 30)}, {first, second})
        newest = st.query(last_runs % 1)
        self.assertEqual([s["metric"]["git_commit"] for s in newest], [second])

    def test_push_artifact_redacts_what_it_was_given(self):
        """`bench push` of an artifact holding secrets in raw form (written by hand, not by plumb): every label
        value arrives redacted, and the push names nothing secret on the terminal."""
        st = self.stack
        self.suite_repo("pushraw")
        r = run(["bench", "run", "suite.ini", "--out", "raw.json"], self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        path = os.path.join(self.tmp, "raw.json")
        with open(path) as f:
            doc = json.load(f)
        for s in doc["samples"]:
            if s["name"].startswith("parse.app"):
                s["tags"] = {"endpoint": "https://ci.example/hook?token=" + SECRET, "note": "key " + SECRET}
        doc["machine"]["hostname"] = "builder-" + SECRET
        with open(path, "w") as f:
            json.dump(doc, f)
        r = run(["bench", "push", path, "--to", st.gateway, "--label", "pipeline=nightly " + SECRET], self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(SECRET, r.stderr)
        res = st.wait_query('plumb_bench_sample{suite="pushraw",stat="count"}', lambda v: len(v) == 1)
        self.assertEqual(len(res), 1, res)
        m = res[0]["metric"]
        for k in ("tag_endpoint", "tag_note", "machine", "pipeline"):
            self.assertIn("[REDACTED]", m[k], k)
        self.assertNotIn(SECRET, json.dumps(res))
        text = urllib.request.urlopen(st.gateway + "/metrics", timeout=5).read().decode()
        self.assertNotIn(SECRET, text)

    def test_remote_write(self):
        """--push-format remote-write: the same series straight into Prometheus' remote-write receiver (protobuf
        and snappy), with the job a gateway's grouping key would have added."""
        st = self.stack
        commit = self.suite_repo("pushrw")
        r = run(["bench", "run", "suite.ini", "--out", "rw.json"], self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run(["bench", "push", "rw.json", "--to", st.prom + "/api/v1/write", "--push-format", "remote-write",
                 "--label", "pipeline=rw"], self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("remote-write", r.stderr)
        p50 = self.report_p50(os.path.join(self.tmp, "rw.json"), "render.cpu_ms")
        res = st.wait_query('plumb_bench_cpu_ms{suite="pushrw",case="render",stat="p50"}', lambda v: len(v) == 1, 10)
        self.assertEqual(len(res), 1, res)
        m = res[0]["metric"]
        self.assertEqual((m["job"], m["pipeline"], m["git_commit"]), ("plumb_bench", "rw", commit))
        self.assertAlmostEqual(float(res[0]["value"][1]), p50, delta=abs(p50) * 1e-9)
        tagged = st.query('plumb_bench_sample{suite="pushrw",stat="count"}')
        self.assertEqual(len(tagged), 1, tagged)
        self.assertIn("[REDACTED]", tagged[0]["metric"]["tag_endpoint"])
        self.assertEqual(float(tagged[0]["value"][1]), 5.0)
        # the receiver down: exit 6, as for a gateway
        r = run(["bench", "push", "rw.json", "--to", "http://127.0.0.1:%d/api/v1/write" % free_port(),
                 "--push-format", "remote-write"], self.tmp)
        self.assertEqual(r.returncode, 6, r.stderr)
        r = run(["bench", "push", "rw.json", "--to", st.prom, "--push-format", "carrier-pigeon"], self.tmp)
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_gateway_down_keeps_the_artifact(self):
        """Nothing listening: the artifact is written, the push fails with exit 6 and says so, quickly. A gateway
        that accepts and never answers: the same within twice the timeout (one retry)."""
        self.suite_repo("pushdown")
        dead = "http://127.0.0.1:%d" % free_port()
        t0 = time.monotonic()
        r = run(["bench", "run", "suite.ini", "--out", "d.json", "--push", dead], self.tmp)
        elapsed = time.monotonic() - t0
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("pushing", r.stderr)
        self.assertIn("tried twice", r.stderr)
        self.assertIn("d.json", r.stderr)
        self.assertTrue(os.path.getsize(os.path.join(self.tmp, "d.json")) > 0)
        self.assertLess(elapsed, 30)

        with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
            silent.bind(("127.0.0.1", 0))
            silent.listen(8)
            url = "http://127.0.0.1:%d" % silent.getsockname()[1]
            t0 = time.monotonic()
            r = run(["bench", "push", "d.json", "--to", url], self.tmp, PLUMB_PUSH_TIMEOUT="1")
            elapsed = time.monotonic() - t0
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("tried twice", r.stderr)
        self.assertLess(elapsed, 2 * 1 + 0.5 + 3)  # two attempts of 1 s, the pause, and start-up on a loaded machine
        self.assertGreater(elapsed, 2.0)

    def test_bad_push_urls_are_refused_before_the_run(self):
        self.suite_repo("pushbad")
        for url, why in (("https://user:hunter2@127.0.0.1:1", "credentials"), ("ftp://127.0.0.1/", "http://"),
                         ("http://127.0.0.1:1/?token=x", "query")):
            r = run(["bench", "run", "suite.ini", "--out", "x.json", "--push", url], self.tmp)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(why, r.stderr)
            self.assertNotIn("hunter2", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.json")), "the run went ahead")
        r = run(["bench", "run", "suite.ini", "--push", self.stack.gateway, "--push-label", "case=x"], self.tmp)
        self.assertEqual(r.returncode, 2, r.stderr)
        r = run(["bench", "run", "suite.ini", "--push", self.stack.gateway], self.tmp,
                PLUMB_PUSH_BEARER_TOKEN_FILE=os.path.join(self.tmp, "absent"))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("PLUMB_PUSH_BEARER_TOKEN_FILE", r.stderr)

    def test_metrics_push(self):
        """A recording's latest totals and worst sample, as `plumb metrics --json` holds them."""
        st = self.stack
        home = os.path.join(self.tmp, "home")
        os.mkdir(home, 0o700)
        r = run(["metrics", "record", "--every", "0.1", "--name", "pushrec", "--", "sh", "-c",
                 "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], self.tmp, PLUMB_HOME=home)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(run(["metrics", "--name", "pushrec", "--json"], self.tmp, PLUMB_HOME=home).stdout)
        r = run(["metrics", "push", "--name", "pushrec", "--to", st.gateway], self.tmp, PLUMB_HOME=home)
        self.assertEqual(r.returncode, 0, r.stderr)
        res = st.wait_query('plumb_metrics_resident_bytes{recording="pushrec"}', lambda v: len(v) == 2)
        by = {s["metric"]["sample"]: float(s["value"][1]) for s in res}
        last = doc["samples"][-1]["totals"]
        self.assertEqual(by["latest"], float(last["rss_bytes"]))
        self.assertEqual(by["worst"], float(max(s["totals"]["rss_bytes"] for s in doc["samples"])))
        cpu = st.query('plumb_metrics_cpu_percent{recording="pushrec",sample="latest"}')
        self.assertAlmostEqual(float(cpu[0]["value"][1]), last["cpu_pct"], places=6)
        self.assertEqual(len(st.query('plumb_metrics_worst_process_cpu_percent{recording="pushrec"}')), 1)
        r = run(["metrics", "push", "--name", "pushrec", "--to", "http://127.0.0.1:%d" % free_port()], self.tmp,
                PLUMB_HOME=home)
        self.assertEqual(r.returncode, 6, r.stderr)


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next status of `statuses` and keeps what it was sent."""
    statuses = []
    seen = []

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Recorder.seen.append((self.path, dict(self.headers), body.decode()))
        status = Recorder.statuses.pop(0) if Recorder.statuses else 202
        self.send_response(status)
        self.end_headers()
        if status >= 400:
            self.wfile.write(b"pushed metrics are invalid: \x1b[31mred\n")

    def log_message(self, *args):
        pass


class RequestTest(unittest.TestCase):
    """What plumb sends, seen by a server of the test's own: the bearer token from a file (not from argv, not
    in any message), one retry after a 5xx and none after a 4xx, and the server's answer made harmless."""

    def setUp(self):
        self.server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        Recorder.seen.clear()
        Recorder.statuses = []
        self._td = tempfile.TemporaryDirectory(prefix="plumb-test-")
        self.tmp = self._td.name
        with open(os.path.join(self.tmp, "s.ini"), "w") as f:
            f.write("[suite]\nname = req\nrepeats = 2\nwarmup = 0\n[case one]\nrun = true\n")
        r = run(["bench", "run", "s.ini", "--out", "r.json"], self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self._td.cleanup()

    def test_bearer_token_from_a_file(self):
        tok = os.path.join(self.tmp, "token")
        with open(tok, "w") as f:
            f.write(SECRET + "\n")
        os.chmod(tok, 0o600)
        r = run(["bench", "push", "r.json", "--to", self.url + "/"], self.tmp, PLUMB_PUSH_BEARER_TOKEN_FILE=tok)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(SECRET, r.stderr)
        self.assertEqual(len(Recorder.seen), 1)
        path, headers, body = Recorder.seen[0]
        self.assertEqual(headers.get("Authorization"), "Bearer " + SECRET)
        self.assertTrue(headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"))
        self.assertTrue(path.startswith("/metrics/job/plumb_bench/suite/req/machine/"), path)
        self.assertIn("# TYPE plumb_bench_wall_ms gauge", body)

    def test_cases_never_see_the_token(self):
        """bench run --push reads the token before the cases run and keeps it from their environment."""
        with open(os.path.join(self.tmp, "env.ini"), "w") as f:
            f.write("[suite]\nname = envcheck\nrepeats = 1\nwarmup = 0\n[case dump]\nrun = env > seen.txt\n")
        r = run(["bench", "run", "env.ini", "--out", "e.json", "--push", self.url], self.tmp,
                PLUMB_PUSH_BEARER_TOKEN=SECRET)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, "seen.txt")) as f:
            seen = f.read()
        self.assertIn("PLUMB_SAMPLES", seen)  # the case's environment, as the runner gave it
        self.assertNotIn(SECRET, seen)
        self.assertEqual(Recorder.seen[-1][1].get("Authorization"), "Bearer " + SECRET)

    def test_basic_auth_and_retry_after_5xx(self):
        Recorder.statuses = [503, 202]
        r = run(["bench", "push", "r.json", "--to", self.url], self.tmp, PLUMB_PUSH_USERNAME="ci",
                PLUMB_PUSH_PASSWORD="hunter2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(Recorder.seen), 2)
        self.assertEqual(Recorder.seen[1][1].get("Authorization"), "Basic Y2k6aHVudGVyMg==")  # ci:hunter2
        self.assertNotIn("hunter2", r.stderr)

    def test_tls_checks_the_server(self):
        """https: the gateway's certificate is checked — refused (exit 6) against the system's CAs, accepted with
        PLUMB_PUSH_CA_FILE naming the CA that signed it."""
        import ssl
        openssl = shutil.which("openssl")
        if not openssl:
            skip_missing("openssl")
        key, cert = os.path.join(self.tmp, "k.pem"), os.path.join(self.tmp, "c.pem")
        subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=60)
        tls = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
        threading.Thread(target=tls.serve_forever, daemon=True).start()
        try:
            url = "https://127.0.0.1:%d" % tls.server_address[1]
            r = run(["bench", "push", "r.json", "--to", url], self.tmp)
            self.assertEqual(r.returncode, 6, r.stderr)
            self.assertIn("certificate", r.stderr)
            self.assertEqual(Recorder.seen, [])
            r = run(["bench", "push", "r.json", "--to", url], self.tmp, PLUMB_PUSH_CA_FILE=cert)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(Recorder.seen), 1)
        finally:
            tls.shutdown()
            tls.server_close()

    def test_refused_push_is_exit_6_with_the_answer(self):
        Recorder.statuses = [400, 400]
        r = run(["bench", "push", "r.json", "--to", self.url], self.tmp)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertEqual(len(Recorder.seen), 1, "a 4xx is not retried")
        self.assertIn("HTTP 400", r.stderr)
        self.assertIn("pushed metrics are invalid", r.stderr)
        self.assertNotIn("\x1b", r.stderr)
        self.assertIn("r.json", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "r.json")))


if __name__ == "__main__":
    unittest.main()
# plumbtest: light
