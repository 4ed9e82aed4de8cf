"""speedscope's own corpus of sample profiles (tests/fixtures/speedscope-corpus, MIT, see its ORIGIN): every file
speedscope imports of the kinds plumb reads — Chrome's and Node's .cpuprofile, Chrome traces with Profile and
ProfileChunk events, V8 .heapprofile, Firefox's unprocessed Gecko profiles, speedscope's own files, pprof, perf
script text and folded stacks — is read by `plumb hot` with the totals speedscope shows, and every file speedscope
refuses is refused by plumb with exit 5. speedscope's totals are its importer's own (speedscope-totals.json, made by
tests/e2e/speedscope_import.py from speedscope's npm package); test_stored_totals_are_speedscopes checks them
against the installed speedscope again. Where speedscope and the profile's own tool differ by design, the test says
so: speedscope weighs a CPU profile's samples by the time to the next sample and gives the last one none (DevTools,
and plumb, give it the time to the profile's end); it drops "(idle)"; for Firefox it keeps only the main thread's
JavaScript frames; for perf script text its weights are times between samples, so the count perf itself reports
(one per event) is the truth there."""
import gzip
import json
import os
import re
import unittest

from plumbtest import FIXTURES, plumb, skip_missing

CORPUS = os.path.join(FIXTURES, "speedscope-corpus")
UNIT_NS = {"nanoseconds": 1, "microseconds": 1e3, "milliseconds": 1e6, "seconds": 1e9}


def load(rel):
    with open(os.path.join(CORPUS, rel), "rb") as f:
        data = f.read()
    return gzip.decompress(data) if rel.endswith(".gz") else data


def base_name(label):
    """A plumb label without its location ("gamma (javascript/simple.js)" -> "gamma")."""
    m = re.match(r"^(.*\S) \([^()]*\)$", label)
    return m.group(1) if m else label


def ss_name(name):
    # speedscope names a function without a name "(anonymous FILE:LINE)"; DevTools (and plumb) "(anonymous)"
    return "(anonymous)" if name.startswith("(anonymous") else name


def v8_profiles(doc):
    """The CPU profiles in a .cpuprofile or a trace, as (node ids, samples) pairs, assembled as Chrome does."""
    if isinstance(doc, dict) and ("nodes" in doc or "head" in doc):
        if "nodes" in doc:
            return [({n["id"] for n in doc["nodes"]}, doc["samples"])]
        ids, todo = set(), [doc["head"]]
        while todo:
            n = todo.pop()
            ids.add(n["id"])
            todo.extend(n.get("children", []))
        return [(ids, doc["samples"])]
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    profs = {}
    for ev in sorted(events, key=lambda e: e.get("ts", 0)):
        key = ev.get("id") or "%s:%s" % (ev.get("pid"), ev.get("tid"))
        data = (ev.get("args") or {}).get("data") or {}
        if ev.get("name") == "CpuProfile" and "cpuProfile" in data:
            cp = data["cpuProfile"]
            profs[key] = ({n["id"] for n in cp["nodes"]}, list(cp["samples"]))
        elif ev.get("name") == "Profile":
            profs[key] = (set(), [])
        elif ev.get("name") == "ProfileChunk" and key in profs:
            cp = data.get("cpuProfile") or {}
            profs[key][0].update(n["id"] for n in cp.get("nodes", []))
            profs[key][1].extend(cp.get("samples", []))
    return list(profs.values())


class SpeedscopeCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(CORPUS, "speedscope-totals.json")) as f:
            cls.totals = json.load(f)["files"]
        cls.hot = {}
        for rel in cls.totals:
            r = plumb("hot", os.path.join(CORPUS, rel), "--json")
            cls.hot[rel] = (r.returncode, json.loads(r.stdout) if r.returncode == 0 else None, r.stderr)

    def files(self, *dirs, ext=None):
        out = [rel for rel in sorted(self.totals) if rel.split("/")[0] in dirs
               and (ext is None or rel.replace(".gz", "").endswith(ext))]
        self.assertTrue(out, dirs)
        return out

    def read(self, rel):
        rc, doc, err = self.hot[rel]
        self.assertEqual(rc, 0, "%s: %s" % (rel, err))
        return doc

    def test_refused_by_speedscope_refused_by_plumb(self):
        refused = [rel for rel, t in sorted(self.totals.items()) if t is None]
        # the two invalid speedscope files and Node's raw --prof log, at least
        self.assertGreaterEqual(len(refused), 3, refused)
        for rel in refused:
            rc, _, err = self.hot[rel]
            self.assertEqual(rc, 5, "%s: speedscope refuses it, plumb gave exit %d: %s" % (rel, rc, err))
            self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_v8_cpu_profiles_as_speedscope_reads_them(self):
        rels = [rel for rel in self.files("Chrome", "node")
                if self.totals[rel] and self.totals[rel][0]["unit"] == "microseconds"]
        self.assertGreaterEqual(len(rels), 9, rels)
        for rel in rels:
            with self.subTest(rel):
                hot = self.read(rel)
                self.assertIn(hot["format"], ("cpuprofile", "chrome-trace"))
                self.assertEqual(hot["weight_unit"], "nanoseconds")
                # one sample per sample of the file (those whose node the file has: a chunk without data
                # leaves some without)
                profs = v8_profiles(json.loads(load(rel)))
                self.assertEqual(hot["samples"], sum(sum(1 for s in smp if s in ids) for ids, smp in profs))
                ss, mine = {}, {}
                for prof in self.totals[rel]:
                    for name, w in prof["self"].items():
                        ss[ss_name(name)] = ss.get(ss_name(name), 0) + round(w * 1000)
                for row in hot["leaf"]:
                    mine[base_name(row["name"])] = mine.get(base_name(row["name"]), 0) + row["count"]
                self.assertNotIn("(root)", mine)
                ss = {n: w for n, w in ss.items() if w}
                self.assertTrue(all(n in mine for n in ss), (set(ss) - set(mine)))
                # every function's self time is speedscope's, but for the leaf of each profile's last sample,
                # which plumb gives the time to the profile's end and speedscope none; "(idle)" speedscope drops
                differ = {n: (mine.get(n, 0), ss.get(n, 0)) for n in set(ss) | set(mine)
                          if n != "(idle)" and abs(mine.get(n, 0) - ss.get(n, 0)) > 1000}
                self.assertLessEqual(len(differ), len(self.totals[rel]), differ)
                for n, (a, b) in differ.items():
                    self.assertGreater(a, b, n)

    def test_heap_profiles_in_bytes(self):
        rels = self.files("Chrome", "node", ext=".heapprofile")
        self.assertEqual(len(rels), 2)
        for rel in rels:
            with self.subTest(rel):
                hot = self.read(rel)
                self.assertEqual(hot["format"], "heapprofile")
                self.assertEqual(hot["weight_unit"], "bytes")
                (prof,) = self.totals[rel]
                self.assertEqual(prof["unit"], "bytes")
                self.assertEqual(hot["total"], prof["total"])
                ss = {}
                for name, w in prof["self"].items():
                    if w:
                        ss[ss_name(name)] = ss.get(ss_name(name), 0) + w
                mine = {}
                for row in hot["leaf"]:
                    mine[base_name(row["name"])] = mine.get(base_name(row["name"]), 0) + row["count"]
                self.assertEqual(mine, ss)

    def test_firefox_gecko_profiles(self):
        rels = self.files("Firefox")
        self.assertEqual(len(rels), 4)
        for rel in rels:
            with self.subTest(rel):
                hot = self.read(rel)
                self.assertEqual(hot["format"], "gecko-raw")
                doc = json.loads(load(rel))
                threads = doc["profile"]["threads"]
                main = threads[0] if len(threads) == 1 else [t for t in threads if t["name"] == "GeckoMain"][0]
                col = main["samples"]["schema"]["stack"]
                n = sum(1 for s in main["samples"]["data"] if s[col] is not None)
                self.assertEqual(hot["samples"], n)
                self.assertEqual(hot["total"], n)  # one per sample, at meta.interval each
                self.assertEqual(hot["interval_ns"], round(doc["profile"]["meta"]["interval"] * 1e6))
                # speedscope keeps the JavaScript frames of the main thread only: each is a function plumb names
                inclusive = {base_name(r["name"]) for r in hot["inclusive"]}
                names = {n for prof in self.totals[rel] for n in prof["self"]}
                self.assertTrue(names, rel)
                self.assertLessEqual(names, inclusive)

    def test_speedscope_files(self):
        rels = [rel for rel in self.files("speedscope") if self.totals[rel]]
        self.assertEqual(len(rels), 4)
        for rel in rels:
            with self.subTest(rel):
                hot = self.read(rel)
                total = sum(p["total"] * UNIT_NS.get(p["unit"], 1) for p in self.totals[rel])
                self.assertEqual(hot["total"], round(total))
                units = {p["unit"] for p in self.totals[rel]}
                self.assertEqual(hot["weight_unit"], "samples" if units == {"none"} else "nanoseconds")

    def test_pprof(self):
        (rel,) = self.files("pprof")
        hot = self.read(rel)
        (prof,) = self.totals[rel]
        self.assertEqual(hot["total"], round(prof["total"] * UNIT_NS[prof["unit"]]))
        mine = {base_name(r["name"]): r["count"] for r in hot["leaf"]}
        self.assertEqual(mine, {n: round(w * UNIT_NS[prof["unit"]]) for n, w in prof["self"].items() if w})

    def test_speedscope_export_of_pprof_is_a_time_without_samples(self):
        """speedscope's own export (evented) of the Go profile: the same time per function as the profile, and no
        made-up sample count (it has none: it read "1500.0 ms (9 samples)" for 150 samples)."""
        exported = os.path.join(CORPUS, "exported", "simple.prof.speedscope.json")
        r = plumb("hot", exported)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(speedscope): 1500.0 ms in 1 thread", r.stdout.splitlines()[0])
        r = plumb("hot", exported, "--json")
        ev = json.loads(r.stdout)
        src = self.read("pprof/simple.prof")
        self.assertEqual(ev["samples"], 0)
        self.assertEqual(ev["total"], src["total"])
        self.assertEqual({base_name(x["name"]): x["count"] for x in ev["leaf"]},
                         {base_name(x["name"]): x["count"] for x in src["leaf"]})

    def test_perf_script_counts_every_event(self):
        rels = self.files("linux-perf")
        self.assertEqual(len(rels), 7)
        for rel in rels:
            with self.subTest(rel):
                self.assertIsNotNone(self.totals[rel])
                hot = self.read(rel)
                text = load(rel).decode()
                events = sum(1 for line in text.splitlines()
                             if line.strip() and not line[0].isspace() and not line.startswith("#"))
                self.assertEqual(hot["samples"], events)

    def test_folded_files(self):
        rels = self.files("stackcollapse")
        self.assertEqual(len(rels), 9)
        for rel in rels:
            with self.subTest(rel):
                hot = self.read(rel)
                (prof,) = self.totals[rel]
                self.assertEqual(hot["total"], prof["total"])

    def test_stored_totals_are_speedscopes(self):
        """The stored totals are what the installed speedscope makes of the files: a CPU profile and a refused
        file, imported again now (each import costs a page load of the app in Chromium)."""
        import speedscope_import as si
        if not si.available():
            skip_missing("speedscope (npm) or chromium", "scripts/setup installs them")
        with si.Speedscope() as s:
            for rel in ("Chrome/65/simple.cpuprofile", "speedscope/invalid/out-of-order-events.json"):
                self.assertEqual(si.import_corpus(s, CORPUS, rel), self.totals[rel], rel)


if __name__ == "__main__":
    unittest.main()
