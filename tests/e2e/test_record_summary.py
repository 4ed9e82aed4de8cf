"""Profile, summarize, slice by stages and keep, in one command (docs/design.md §5.7): `record --summary` takes every
summary option `hot` takes and writes the summary `hot --json` gives with the same options on the same recording;
profile baselines are never overwritten without --force, say where they went, and are listed, shown and removed
with `plumb baseline` as bench baselines are with `plumb bench baseline`."""
import json
import os
import unittest

from plumbtest import ROOT, TempDir, plumb, target

SUMMARY_OPTS = ["--group-by", "module", "--module-depth", "2", "--repo-only", "--top-threads", "8"]


class OneCommand(TempDir):
    def setUp(self):
        super().setUp()
        self.home = self.path("home")
        os.mkdir(self.home)
        self.env = {"PLUMB_HOME": self.home}

    def test_record_summary_equals_hot_with_the_same_options(self):
        rec, s, st = self.path("rec.json"), self.path("s.json"), self.path("st.json")
        r = plumb("record", "-o", rec, "--summary", s, *SUMMARY_OPTS, "--stages", st, "--save-baseline", "one",
                  "--", target("stages2"), cwd=ROOT, extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        h = plumb("hot", rec, *SUMMARY_OPTS, "--stages", st, "--json", cwd=ROOT, extra_env=self.env)
        self.assertEqual(h.returncode, 0, h.stderr)
        with open(s) as f:
            summary = json.load(f)
        self.assertEqual(summary, json.loads(h.stdout))
        # the options took effect: grouped by module, sliced by the program's two stages plus `command`
        self.assertEqual(summary["group_by"], "module")
        self.assertEqual([x["name"] for x in summary["stages"]], ["command", "parse", "render"])
        # the baseline is that summary, saved where the message says
        saved = os.path.join(self.home, "baselines", "profiles", "one.json")
        with open(saved) as f:
            self.assertEqual(json.load(f), summary)
        self.assertIn("Saved profile baseline one to ", r.stderr)

    def test_summary_options_need_a_summary(self):
        r = plumb("record", "--group-by", "module", "-o", self.path("x.folded"), "--", "true")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("go with --summary or --save-baseline", r.stderr)

    def test_save_baseline_never_overwrites_without_force(self):
        out = self.path("p.folded")
        args = ["record", "-o", out, "--save-baseline", "b"]
        cmd = ["--", target("split"), "0.4"]
        r = plumb(*args, *cmd, extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        saved = os.path.join(self.home, "baselines", "profiles", "b.json")
        before = open(saved).read()
        os.unlink(out)
        r = plumb(*args, *cmd, extra_env=self.env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("a profile baseline named 'b' exists (--force replaces it", r.stderr)
        self.assertFalse(os.path.exists(out), "the run happened although the name was taken")
        self.assertEqual(open(saved).read(), before)
        r = plumb(*args, "--force", *cmd, extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_saves_print_where_under_home_as_tilde(self):
        home = self.path("userhome")
        os.mkdir(home)
        env = {"HOME": home, "XDG_STATE_HOME": "", "PLUMB_HOME": ""}
        r = plumb("record", "-o", self.path("t.folded"), "--save-baseline", "t", "--", target("split"), "0.3",
                  extra_env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Saved profile baseline t to ~/.local/state/plumb/baselines/profiles/t.json", r.stderr)

    def test_baseline_list_show_rm(self):
        folded = self.path("f.folded")
        with open(folded, "w") as f:
            f.write("main;parse;lex 30\nmain;parse 20\nmain;eval 50\n")
        r = plumb("baseline", "save", folded, "--name", "f", extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("saved profile baseline f to ", r.stdout)
        r = plumb("baseline", "list", extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"(?m)^f\s+\S+ \S+\s+100 samples\s+.*f\.folded \(function\)$")
        r = plumb("baseline", "show", "f", extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("eval", r.stdout)
        r = plumb("baseline", "show", "f", "--json", extra_env=self.env)
        self.assertEqual(json.loads(r.stdout)["schema"], "plumb.hot.v1")
        d = plumb("diff", "f", folded, extra_env=self.env)  # diff takes the name in place of a path
        self.assertEqual(d.returncode, 0, d.stderr)
        r = plumb("baseline", "rm", "f", extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("baseline", "show", "f", extra_env=self.env)
        self.assertEqual(r.returncode, 3, r.stderr)


if __name__ == "__main__":
    unittest.main()
