"""Frames that are not plain functions: an always-inlined function shows as its own frame below its caller
(DWARF inline info), and code generated at run time is named from /tmp/perf-PID.map with the _[j] suffix."""
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from plumbtest import TempDir, main, plumb, read_folded, target  # noqa: E402


class Frames(TempDir):
    def test_inlined_function_is_its_own_frame(self):
        for build in ("inlined", "inlined-nofp"):
            out = self.path(build + ".folded")
            r = plumb("record", "--interval", "0.002", "-o", out, "--", target(build), "0.5")
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = read_folded(out)
            total = sum(c for _, c in rows)
            under = 0
            for frames, count in rows:
                names = [f.split(" ")[0] for f in frames]
                if "mix_step" in names and "outer_work" in names and \
                        names.index("outer_work") == names.index("mix_step") - 1:
                    under += count
                    label = frames[names.index("mix_step")]
                    # inlined into outer_work: marked _[i] (docs/design.md §4.1)
                    self.assertRegex(label, r"^mix_step \(targets/inlined\.c:\d+\)_\[i\]$")
            self.assertGreater(under / total, 0.8, (build, rows[:3]))

    def test_jit_code_is_named_from_the_perf_map(self):
        out = self.path("jit.folded")
        r = plumb("record", "--interval", "0.002", "-o", out, "--", target("jit"), "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = re.search(r"jit pid (\d+)", r.stdout).group(1)
        try:
            rows = read_folded(out)
            total = sum(c for _, c in rows)
            jit = sum(c for frames, c in rows if frames[-1] == "jit_hot_loop_[j]")
            self.assertGreater(jit / total, 0.8, rows[:3])
        finally:
            os.unlink(f"/tmp/perf-{pid}.map")

    @unittest.skipUnless(shutil.which("objcopy") and shutil.which("strip"),
                         "objcopy/strip not installed (Debian binutils)")
    def test_separate_debug_info_through_debuglink(self):
        # a stripped binary whose DWARF lives in a separate file named by .gnu_debuglink, as Debian ships them
        exe, dbg = self.path("split-stripped"), self.path("split-stripped.debug")
        shutil.copy(target("split-nofp"), exe)
        subprocess.run(["objcopy", "--only-keep-debug", exe, dbg], check=True)
        subprocess.run(["strip", "--strip-debug", "--strip-unneeded", exe], check=True)
        subprocess.run(["objcopy", "--add-gnu-debuglink=" + dbg, exe], check=True)
        self.assertNotIn(b".debug_info", subprocess.run(["objdump", "-h", exe], capture_output=True).stdout)
        out = self.path("dbg.folded")
        r = plumb("record", "--interval", "0.002", "-o", out, "--", exe, "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        labels = {f for frames, _ in read_folded(out) for f in frames}
        self.assertTrue(any(re.fullmatch(r"path_a \(targets/split\.c:\d+\)", l) for l in labels), labels)
        self.assertTrue(any(re.fullmatch(r"burn \(targets/split\.c:\d+\)", l) for l in labels), labels)


if __name__ == "__main__":
    main()
# plumbtest: alone
