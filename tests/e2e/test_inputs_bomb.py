"""Inputs read as bounded streams (docs/design.md §6.6): memory bounded by what the profile holds on a gzip that
expands to 10 GiB of one repeated folded line (stopped at the stream cap), and the same peak for 4 times the lines
in every other reading command. Apart from test_inputs.py so that the two
slowest checks of the inputs run beside each other (make check -j2)."""
import gzip

from plumbtest import TempDir, main, skip_sanitized
from test_inputs import run_measured


class GzipBomb(TempDir):
    def bomb(self, members, member):
        """A gzip that expands to `members` × 64 MiB of one repeated folded line (`member`, one 64 MiB of it)."""
        path = self.path("bomb%d.folded.gz" % members)
        with open(path, "wb") as f:
            for _ in range(members):
                f.write(member)
        return path

    def test_ten_gib_gzip_stays_small(self):
        skip_sanitized("the sanitizer's own memory is not plumb's")
        # 10 GiB through the reader every command shares (hot): it stops at the 4 GiB stream cap (exit 5, 187
        # million lines, past where a 32-bit count of bytes would wrap) under the bound
        line = b"main;work;inner;leaf 1\n"
        member = gzip.compress(line * ((64 << 20) // len(line)), 9)
        rc, err, secs, rss = run_measured(["hot", self.bomb(160, member)], timeout=300)
        self.assertEqual(rc, 5, err)
        self.assertIn("cap", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertLess(rss, 300, rss)

    def test_memory_does_not_follow_lines(self):
        skip_sanitized("the sanitizer's own memory is not plumb's")
        # diff's, convert's and flame's own work over 64 MiB and 256 MiB of one repeated line: 8.75 million
        # lines more must not cost memory (a byte a line would be 8.75 MB; plumb's peak is ~8 MB either way)
        line = b"main;work;inner;leaf 1\n"
        member = gzip.compress(line * ((64 << 20) // len(line)), 9)
        small, big = self.bomb(1, member), self.bomb(4, member)
        for cmd in ("diff", "convert", "flame"):
            with self.subTest(cmd=cmd):
                peaks = []
                for src in (small, big):
                    args = {"diff": ["diff", src, src], "convert": ["convert", src, "-o", self.path("o.folded")],
                            "flame": ["flame", src, "-o", self.path("o.svg")]}[cmd]
                    rc, err, secs, rss = run_measured(args, timeout=300)
                    self.assertEqual(rc, 0, err)
                    self.assertLess(rss, 300, (cmd, rss))
                    peaks.append(rss)
                self.assertLess(peaks[1] - peaks[0], 6, (cmd, peaks))


if __name__ == "__main__":
    main()
# plumbtest: slow
