"""Inputs read as bounded streams (docs/design.md §6.6): memory bounded by what the profile holds on a gzip that
expands to 10 GiB of one repeated folded line, in every reading command. Apart from test_inputs.py so that the two
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
        # 10 GiB through the reader every command shares (hot), 2 GiB (93 million lines) through diff's, convert's
        # and flame's own work: a byte of memory per line would be 93 MB more than the bound
        line = b"main;work;inner;leaf 1\n"
        member = gzip.compress(line * ((64 << 20) // len(line)), 9)
        big, small = self.bomb(160, member), self.bomb(32, member)
        for args in (["hot", big], ["diff", small, small], ["convert", small, "-o", self.path("o.folded")],
                     ["flame", small, "-o", self.path("o.svg")]):
            with self.subTest(cmd=args[0]):
                rc, err, secs, rss = run_measured(args, timeout=300)
                self.assertIn(rc, (0, 5), err)
                if rc == 5:
                    self.assertIn("cap", err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertLess(rss, 300, (args[0], rss))


if __name__ == "__main__":
    main()
# plumbtest: slow
