"""`plumb hot` reads speedscope files: a recording of the split target (50/30/20 across path_a/b/c), converted
to speedscope, gives the same top functions and shares as the folded recording it came from; an evented
speedscope file (as other tools write) is read with its time weights and no samples, which survive a trip through
the Firefox Profiler format; a malformed one is refused with exit 5
and a message naming the key."""
import json
import os
import unittest

from plumbtest import TempDir, plumb, target


class SpeedscopeRead(TempDir):
    def hot_json(self, path):
        r = plumb("hot", path, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_split_round_trip_matches_folded(self):
        folded = self.path("X.folded")
        r = plumb("record", "--interval", "0.002", "-o", folded, "--", target("split"), "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        ss = self.path("Y.speedscope.json")
        r = plumb("convert", folded, "-o", ss)
        self.assertEqual(r.returncode, 0, r.stderr)
        a, b = self.hot_json(folded), self.hot_json(ss)
        self.assertEqual(b["format"], "speedscope")
        self.assertEqual(a["total"], b["total"])
        self.assertGreater(a["total"], 100)
        for key in ("leaf", "inclusive"):
            self.assertEqual([(x["name"], x["count"]) for x in a[key]], [(x["name"], x["count"]) for x in b[key]],
                             key)
        inc = {x["name"].split(" ")[0]: x["share"] for x in b["inclusive"]}
        # the three paths are there and the largest stays above the smallest; how close the shares come to the
        # known split is test_record.py's business (it checks them against what the target measured itself)
        for fn in ("path_a", "path_b", "path_c"):
            self.assertIn(fn, inc)
        self.assertGreater(inc["path_a"], inc["path_c"])

    def test_evented_time_weights(self):
        doc = {"$schema": "https://www.speedscope.app/file-format-schema.json",
               "shared": {"frames": [{"name": "main", "file": "/src/m.c", "line": 4}, {"name": "work"},
                                     {"name": "idle"}]},
               "profiles": [{"type": "evented", "name": "T", "unit": "milliseconds", "startValue": 0,
                             "endValue": 10, "events": [
                                 {"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 1},
                                 {"type": "C", "frame": 1, "at": 8}, {"type": "O", "frame": 2, "at": 8},
                                 {"type": "C", "frame": 2, "at": 9}, {"type": "C", "frame": 0, "at": 10}]}]}
        path = self.path("e.speedscope.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        h = self.hot_json(path)
        self.assertEqual(h["weight_unit"], "nanoseconds")
        self.assertEqual(h["total"], 10_000_000)
        leaf = {x["name"]: x["count"] for x in h["leaf"]}
        self.assertEqual(leaf["work"], 7_000_000)
        self.assertEqual(leaf["idle"], 1_000_000)
        self.assertEqual(leaf["main (src/m.c)"], 2_000_000)
        # an evented profile has no samples: its weight is a time, not a count of its five intervals
        self.assertEqual(h["samples"], 0)
        r = plumb("hot", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(speedscope): 10.0 ms in 1 thread", r.stdout.splitlines()[0])
        # through the Firefox Profiler format and back: time weights go out as "tracing-ms" and come back as the
        # same nanoseconds (not as a count of samples)
        gecko = self.path("e.json.gz")
        r = plumb("convert", path, "-o", gecko, "--to", "gecko")
        self.assertEqual(r.returncode, 0, r.stderr)
        g = self.hot_json(gecko)
        self.assertEqual(g["weight_unit"], "nanoseconds")
        self.assertEqual(g["total"], h["total"])
        self.assertEqual(sorted((x["name"], x["count"]) for x in g["leaf"]),
                         sorted((x["name"], x["count"]) for x in h["leaf"]))

    def test_malformed_is_exit_5_with_where(self):
        path = self.path("bad.speedscope.json")
        with open(path, "w") as f:
            json.dump({"$schema": "https://www.speedscope.app/file-format-schema.json",
                       "shared": {"frames": [{"name": "f"}]},
                       "profiles": [{"type": "sampled", "samples": [[0], [3]], "weights": [1, 1]}]}, f)
        r = plumb("hot", path)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("profiles[0].samples[1][0]", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
