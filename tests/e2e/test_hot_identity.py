"""plumb hot on what a profile says about where a sample was: --repo-only --root, which finds a file under the
root whatever the label's shortening kept of its path (a folded label keeps two components, which for a file at
the root's top level include the root's own name); --group-by library, which says when frames name no library;
threads of a folded profile written with --threads."""
import json
import os
import re
import subprocess
import unittest

from plumbtest import TempDir, main, plumb, read_folded, target


def hot_json(path, *args):
    r = plumb("hot", path, "--json", *args)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return json.loads(r.stdout)


def as_dict(rows):
    return {r["name"]: r["count"] for r in rows}


HOT_C = r"""
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noipa)) unsigned long heavy_a(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x ^ 1;
}
__attribute__((noipa)) unsigned long run(unsigned long rounds)
{
	unsigned long acc = 0;
	for (unsigned long k = 0; k < rounds; k++)
		acc += heavy_a(200000);
	return acc ^ 3;
}
int main(int argc, char **argv)
{
	sink = run(argc > 1 ? strtoul(argv[1], NULL, 10) : 2000);
	printf("%lu\n", sink & 1);
	return 0;
}
"""


class RepoOnly(TempDir):
    def test_root_matches_shortened_labels(self):
        """The issue's case: w/hot.c at the top of the root w. Its folded label says `heavy_a (w/hot.c:5)`: the root's
        own name and the file, which is neither a repository path (hot.c) nor the short path of one."""
        w = self.path("w")
        os.makedirs(w)
        with open(os.path.join(w, "hot.c"), "w") as f:
            f.write(HOT_C)
        exe = os.path.join(w, "hot")
        cc = subprocess.run(["cc", "-g", "-O1", "-fno-omit-frame-pointer", "-o", exe, os.path.join(w, "hot.c")],
                            capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        for out in ("p.folded", "p.json"):
            r = plumb("record", "--interval", "0.002", "-o", self.path(out), "--", exe, "3000")
            self.assertEqual(r.returncode, 0, r.stderr)
        labels = [f for frames, _ in read_folded(self.path("p.folded")) for f in frames]
        self.assertTrue(any(re.fullmatch(r"heavy_a \(w/hot\.c:\d+\)", l) for l in labels), labels[:20])
        for out in ("p.folded", "p.json"):
            with self.subTest(out=out):
                doc = hot_json(self.path(out), "--repo-only", "--root", w)
                incl = as_dict(doc["inclusive"])
                self.assertEqual(set(incl), {"heavy_a (w/hot.c)", "run (w/hot.c)", "main (w/hot.c)"}, incl)
                self.assertEqual(doc["attributed"], incl["main (w/hot.c)"])
                # grouped by file, a file the repository knows is named by its path there
                doc = hot_json(self.path(out), "--repo-only", "--root", w, "--group-by", "file")
                self.assertEqual(list(as_dict(doc["grouped_inclusive"])), ["hot.c"])
        # a file elsewhere with the same two last components is not the repository's
        other = self.path("elsewhere")
        os.makedirs(other)
        doc = hot_json(self.path("p.folded"), "--repo-only", "--root", other)
        self.assertEqual(doc["inclusive"], [])


class Library(TempDir):
    def test_group_by_library_says_when_frames_name_no_library(self):
        """Folded stacks name source files, not libraries: grouping by library says so instead of putting every
        user frame under [unknown] silently."""
        p = self.path("p.folded")
        with open(p, "w") as f:
            f.write("main (app/main.c:3);parse (src/parse.c:10) 30\nmain (app/main.c:4);memcpy_[k] 5\n")
        r = plumb("hot", p, "--group-by", "library")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--group-by library: no frame of this profile names its library", r.stderr)
        with open(p, "a") as f:
            f.write("main (app/main.c:3);memcpy (libc.so.6) 10\n")
        r = plumb("hot", p, "--group-by", "library", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"--group-by library: 3 of 4 frames name no library")
        self.assertEqual(as_dict(json.loads(r.stdout)["grouped_leaf"]), {"[unknown]": 30, "libc.so.6": 10,
                                                                         "[kernel]": 5})
        # frames that all name their library (or are the kernel's): no word
        with open(p, "w") as f:
            f.write("main (app);memcpy (libc.so.6) 10\nmain (app);memcpy_[k] 5\n")
        r = plumb("hot", p, "--group-by", "library")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("warning", r.stderr)

    def test_recording_groups_by_its_libraries(self):
        out = self.path("t.json")
        r = plumb("record", "--threads", "--interval", "0.002", "-o", out, "--", target("threads"), "0.3")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = hot_json(out, "--group-by", "library")
        incl = as_dict(doc["grouped_inclusive"])
        self.assertIn("libc.so.6", incl)  # start_thread, not [unknown]
        # every stack but a sample of a thread caught in libc's start before its function ran (1 of 218 once)
        self.assertGreaterEqual(incl["threads"], 0.98 * doc["total"], incl)
        self.assertFalse([k for k in incl if k.isdigit()], incl)  # no thread id reads as a library


class FoldedThreads(TempDir):
    def test_thread_selects_a_root_of_a_threads_folded_file(self):
        """The issue's case: `hot x.folded --thread NAME` on plumb's own --threads output. The root `NAME (TID)`
        reads as the thread (the folded reader's part, issue 14's model work)."""
        out = self.path("t.folded")
        r = plumb("record", "--threads", "--interval", "0.002", "-o", out, "--", target("threads"), "0.3")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = hot_json(out)
        # the main thread only starts and joins them, but its ld.so and pthread_create time (about a millisecond,
        # more on a loaded machine) may take a sample
        names = {t["name"] for t in doc["threads"]}
        self.assertTrue({"worker-a", "worker-b"} <= names <= {"worker-a", "worker-b", "threads"}, names)
        a = hot_json(out, "--thread", "worker-a")
        self.assertGreater(a["total"], 0)
        self.assertLess(a["total"], doc["total"])
        grouped = as_dict(hot_json(out, "--group-by", "library")["grouped_inclusive"])
        self.assertFalse([k for k in grouped if k.isdigit()], grouped)


if __name__ == "__main__":
    main()
