"""plumb hot on what a profile says about where a sample was: --repo-only --root, which finds a file under the
root whatever the label's shortening kept of its path (a folded label keeps two components, which for a file at
the root's top level include the root's own name)."""
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


if __name__ == "__main__":
    main()
