"""speedscope's own importer, run in headless Chromium: loads a profile into speedscope's app (from its npm
package, tests/consumers/node_modules/speedscope) the way its command line does (`speedscope.loadFileFromBase64`),
then exports it with the app's own Export button and returns what speedscope made of the file — its profiles
in speedscope's file format — or None when speedscope refused it. Talks the DevTools protocol over
--remote-debugging-pipe (file descriptors 3 and 4, NUL-terminated JSON), so it needs nothing but Chromium."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
APP = os.path.join(HERE, "..", "consumers", "node_modules", "speedscope", "dist", "release", "index.html")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def available():
    return chromium() is not None and os.path.exists(APP)


class Speedscope:
    """One browser and one page; import(path) per file."""

    def __init__(self, timeout=60):
        self.timeout = timeout
        self.profile_dir = tempfile.mkdtemp(prefix="plumb-speedscope-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [chromium(), "--headless=new", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run",
             "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--allow-file-access-from-files",
             "--user-data-dir=" + self.profile_dir, "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buf = b""
        self.next_id = 0
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"][0]
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True,
                                 session=False)["sessionId"]
        self.call("Browser.setDownloadBehavior", behavior="deny", session=False)
        self.call("Page.enable")
        self.call("Runtime.enable")

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def call(self, method, session=True, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            while b"\0" not in self.buf:
                if time.monotonic() > deadline:
                    raise TimeoutError("no answer from Chromium to " + method)
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply["result"]

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("JavaScript failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def _fresh_page(self):
        # the hash makes the app define window.speedscope.loadFileFromBase64, as its command line does
        url = "file://" + os.path.abspath(APP) + "#localProfilePath=/nonexistent-plumb.js"
        self.call("Page.navigate", url="about:blank")
        self.call("Page.navigate", url=url)
        self._wait("window.speedscope && typeof window.speedscope.loadFileFromBase64 === 'function'")
        self.js("""window.__plumb = {exported: null, alerts: []};
                   window.alert = m => window.__plumb.alerts.push(String(m));
                   const blobUrl = URL.createObjectURL.bind(URL);
                   URL.createObjectURL = b => { b.text().then(t => window.__plumb.exported = t); return blobUrl(b) };
                   true""")

    def _wait(self, cond):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.js("!!(%s)" % cond):
                return
            time.sleep(0.05)
        raise TimeoutError("speedscope did not reach: " + cond)

    def import_file(self, path):
        """speedscope's profiles for the file (speedscope's file format, as its Export writes them), or None
        when speedscope refused it (an alert, or its error screen)."""
        self._fresh_page()
        with open(path, "rb") as f:
            data = base64.b64encode(f.read()).decode()
        self.js("speedscope.loadFileFromBase64(%s, %s); true" % (json.dumps(os.path.basename(path)),
                                                                json.dumps(data)))
        exported = ("[...document.querySelectorAll('div,span,button')].some(e => /^\\W{0,3}Export$/u"
                    ".test(e.textContent.trim()))")
        failed = ("window.__plumb.alerts.length || /Something went wrong|Unrecognized format/i"
                  ".test(document.body.innerText)")
        self._wait("(%s) || (%s)" % (exported, failed))
        if self.js(failed):
            return None
        self.js("""(() => { const all = [...document.querySelectorAll('div,span,button')];
                   const b = all.filter(e => /^\W{0,3}Export$/u.test(e.textContent.trim())).pop();
                   b.click(); return true })()""")
        self._wait("window.__plumb.exported !== null || window.__plumb.alerts.length")
        text = self.js("window.__plumb.exported")
        return json.loads(text) if text is not None else None


def totals(doc):
    """Per profile of a speedscope document: its unit, its total weight (for an evented profile, the time its
    frames are open; for a sampled one, the sum of the weights) and each frame name's self weight."""
    frames = doc["shared"]["frames"]
    out = []
    for prof in doc["profiles"]:
        self_w = {}
        total = 0.0
        if prof["type"] == "evented":
            open_ = []
            last = prof["startValue"]
            for ev in prof["events"]:
                if open_:
                    d = ev["at"] - last
                    total += d
                    name = frames[open_[-1]]["name"]
                    self_w[name] = self_w.get(name, 0.0) + d
                last = ev["at"]
                if ev["type"] == "O":
                    open_.append(ev["frame"])
                else:
                    open_.pop()
        else:
            for stack, w in zip(prof["samples"], prof["weights"]):
                total += w
                if stack:
                    name = frames[stack[-1]]["name"]
                    self_w[name] = self_w.get(name, 0.0) + w
        out.append({"name": prof.get("name"), "unit": prof["unit"], "total": total, "self": self_w,
                    "type": prof["type"]})
    return out


def corpus_files(root):
    """The corpus's profiles (relative paths), without LICENSE, ORIGIN, the totals file and speedscope's exports."""
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            if rel not in ("LICENSE", "ORIGIN", "speedscope-totals.json") and not rel.startswith("exported/"):
                out.append(rel)
    return sorted(out)


def corpus_bytes(root, rel):
    """A corpus file's bytes as speedscope's repository has them (the big ones are kept gzipped here), and the
    name speedscope is given (it picks some importers by the name)."""
    import gzip
    with open(os.path.join(root, rel), "rb") as f:
        data = f.read()
    if rel.endswith(".gz"):
        return gzip.decompress(data), rel[:-3]
    return data, rel


def import_corpus(s, root, rel):
    data, name = corpus_bytes(root, rel)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, os.path.basename(name))
        with open(path, "wb") as f:
            f.write(data)
        doc = s.import_file(path)
    return None if doc is None else totals(doc)


if __name__ == "__main__":
    # python3 speedscope_import.py --write CORPUS_DIR: what speedscope makes of every corpus file, into
    # CORPUS_DIR/speedscope-totals.json (tests/e2e/test_speedscope_corpus.py reads it and checks part of it live)
    import sys
    if sys.argv[1:2] == ["--write"]:
        root = sys.argv[2]
        out = {}
        with Speedscope() as s:
            for rel in corpus_files(root):
                out[rel] = import_corpus(s, root, rel)
                print(rel, "REFUSED" if out[rel] is None else [(t["unit"], t["total"]) for t in out[rel]])
        version = json.load(open(os.path.join(os.path.dirname(APP), "..", "..", "package.json")))["version"]
        with open(os.path.join(root, "speedscope-totals.json"), "w") as f:
            json.dump({"speedscope": version, "files": out}, f, indent=1, sort_keys=True)
            f.write("\n")
    else:
        with Speedscope() as s:
            for p in sys.argv[1:]:
                d = s.import_file(p)
                print(p, "REFUSED" if d is None else [(t["name"], t["unit"], round(t["total"], 3))
                                                      for t in totals(d)])
