"""Tests of scripts/check-layers (docs/design.md §10.4) on small synthetic trees: each rule fails on a planted
violation and names its file and line, the allow file silences exactly what it lists and fails on a stale line,
and the real tree passes."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "check-layers")

# Citations are spelt in pieces so that the check, which reads this file too, does not take them for real ones.
DOC = "docs/design" + ".md"
OLD = "DESI" + "GN"
DESIGN = """# design
## 1. One
### 1.1 Sub
## 2. Two
"""


def function(name, body_lines, static=False):
    body = "".join("\tx += %d;\n" % i for i in range(body_lines))
    return "%sint %s(int x)\n{\n%s}\n" % ("static " if static else "", name, body)


class CheckLayers(unittest.TestCase):
    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="plumb-layers-")
        self.root = self._td.name
        self.write("docs/design.md", DESIGN)
        self.write("src/base/err.h", "int base_err(int x);\n")
        self.write("src/base/err.c", '#include "base/err.h"\n' + function("base_err", 3))
        self.write("src/profile/profile.c", '#include "base/err.h"\n' + function("profile_new", 3))
        self.write("src/cmd/hot.c", '#include "profile/profile.h"\n#include "base/err.h"\n' + function("cmd_hot", 3))
        self.write("src/profile/profile.h", '#include "base/err.h"\n')

    def tearDown(self):
        self._td.cleanup()

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def run_check(self, *extra):
        return subprocess.run([sys.executable, SCRIPT, "--root", self.root, *extra], capture_output=True,
                              text=True, timeout=60)

    def assert_fails(self, *needles):
        r = self.run_check()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for n in needles:
            self.assertIn(n, r.stdout)
        return r

    def test_clean_tree_passes(self):
        r = self.run_check()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("keep the layers", r.stdout)

    def test_include_of_a_layer_above_fails_with_file_and_line(self):
        self.write("src/format/folded.c", '#include "base/err.h"\n#include "analyze/analyze.h"\n')
        self.write("src/analyze/analyze.h", "")
        self.assert_fails("src/format/folded.c:2: layer:", "analyze/analyze.h",
                          "layer src/format/folded.c -> analyze/analyze.h")

    def test_include_of_a_lower_layer_passes(self):
        self.write("src/analyze/hot.c", '#include "profile/profile.h"\n#include "base/err.h"\n')
        self.assertEqual(self.run_check().returncode, 0)

    def test_modules_of_one_layer_including_each_other_fail(self):
        self.write("src/symbol/symbol.h", '#include "format/format.h"\n')
        self.write("src/format/format.h", "")
        self.assertEqual(self.run_check().returncode, 0, "one way is allowed")
        self.write("src/format/format.c", '#include "format/format.h"\n\n#include "symbol/symbol.h"\n')
        self.assert_fails("cycle:", "format -> symbol", "symbol -> format", "src/format/format.c:3",
                          "cycle format <-> symbol")

    def test_files_of_one_module_calling_each_other_fail(self):
        self.write("src/sample/a.c", function("sample_a", 2) + "int use_b(void)\n{\n\treturn sample_b(1);\n}\n")
        self.write("src/sample/b.c", function("sample_b", 2))
        self.assertEqual(self.run_check().returncode, 0, "one way is allowed")
        self.write("src/sample/b.c", function("sample_b", 2) + "int use_a(void)\n{\n\treturn sample_a(1);\n}\n")
        self.assert_fails("cycle src/sample/a.c <-> src/sample/b.c", "src/sample/b.c:8")

    def test_a_field_named_like_a_function_is_not_a_use(self):
        self.write("src/sample/a.c", function("sample_a", 2) + "int use_b(void)\n{\n\treturn sample_b(1);\n}\n")
        self.write("src/sample/b.c", function("sample_b", 2) + "struct s { int sample_a; };\n"
                   "int get(struct s *p)\n{\n\treturn p->sample_a;\n}\n")
        self.assertEqual(self.run_check().returncode, 0, self.run_check().stdout)

    def test_a_function_used_by_another_module_carries_its_modules_prefix(self):
        self.write("src/format/folded.c", function("fmt_folded_read", 2) + function("split_line", 2))
        self.write("src/format/other.c", "int f(void)\n{\n\treturn split_line(1);\n}\n")
        self.assertEqual(self.run_check().returncode, 0, "inside its module a name needs no prefix")
        self.write("src/analyze/hot.c", "int g(void)\n{\n\treturn fmt_folded_read(1) + split_line(2);\n}\n")
        r = self.assert_fails("src/format/folded.c:", "prefix: split_line() is used outside format/",
                              "prefix src/format/folded.c:split_line")
        self.assertNotIn("fmt_folded_read() is used", r.stdout)

    def test_long_file_fails(self):
        self.write("src/base/big.c", "/* filler */\n" * 800)
        self.assertEqual(self.run_check().returncode, 0, "800 lines is the limit, not over it")
        self.write("src/base/big.c", "/* filler */\n" * 801)
        self.assert_fails("src/base/big.c:801: file: 801 lines", "file src/base/big.c")

    def test_long_function_fails(self):
        self.write("src/base/long.c", "/* head */\n" + function("just_fits", 120, static=True))
        self.assertEqual(self.run_check().returncode, 0, "120 body lines is the limit, not over it")
        self.write("src/base/long.c", "/* head */\n" + function("too_long", 121, static=True))
        self.assert_fails("src/base/long.c:2: function: too_long() is 121 lines",
                          "function src/base/long.c:too_long")

    def test_function_with_a_wrapped_signature_is_named(self):
        sig = "static enum plumb_err write_extras(const struct profile *prof,\n\t\t\t\t   const char *path)\n"
        self.write("src/base/wrap.c", sig + "{\n" + "\tx();\n" * 130 + "}\n")
        self.assert_fails("src/base/wrap.c:1: function: write_extras() is 130 lines")

    def test_folder_in_no_layer_fails(self):
        self.write("src/gadget/g.c", '#include "base/err.h"\n')
        self.assert_fails("module: src/gadget/ is in no layer")

    def test_allow_file_silences_listed_findings_and_fails_on_stale_ones(self):
        self.write("src/base/big.c", "\n" * 900)
        self.write("scripts/layers-allow.txt", "# comment\nfile src/base/big.c -- TODO(issue 13): split it\n")
        r = self.run_check()
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("1 allowed exceptions", r.stdout)
        self.write("src/base/big.c", "\n" * 10)
        r = self.assert_fails("scripts/layers-allow.txt:2: stale: `file src/base/big.c` matches nothing")

    def test_allow_line_without_a_reason_is_refused(self):
        self.write("scripts/layers-allow.txt", "file src/base/big.c\n")
        r = self.run_check()
        self.assertEqual(r.returncode, 2)
        self.assertIn("no reason", r.stderr)

    def test_citations_must_name_an_existing_section(self):
        self.write("src/base/gate.h", "/* the switch (%s §1.1, §2) */\n" % DOC)
        self.assertEqual(self.run_check().returncode, 0)
        self.write("src/base/gate.h", "/* the switch (%s §1.1, §3) */\n" % DOC)
        self.assert_fails("src/base/gate.h:1: cite: cites docs/design.md §3")

    def test_citation_split_over_comment_lines_and_markdown_links_are_read(self):
        self.write("src/base/gate.h", "/* the switch, see %s\n * §7 */\n" % DOC)
        self.assert_fails("src/base/gate.h:1: cite: cites docs/design.md §7")
        self.write("src/base/gate.h", "")
        self.write("docs/guide.md", "As [design.md](design" + ".md) §9 says.\n")
        self.assert_fails("docs/guide.md:1: cite: cites docs/design.md §9")

    def test_the_old_design_citation_fails(self):
        self.write("src/base/gate.h", "/* the switch (%s §1) */\n" % OLD)
        self.assert_fails("src/base/gate.h:1: cite: cites \"%s §1\"" % OLD)

    def test_the_real_tree_passes(self):
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
