"""`plumb record --stages/--summary/--save-baseline`: one command profiles, summarizes and keeps; a recording
with timestamps sliced by the stages the program emitted through plumb.h puts each stage's hot function first."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from plumbtest import TempDir, main, plumb, target  # noqa: E402


class RecordStages(TempDir):
    def test_stage_slices_put_each_stage_hot_function_first(self):
        prof, stages = self.path("p.json"), self.path("stages.json")
        r = plumb("record", "--interval", "0.002", "--stages", stages, "-o", prof, "--", target("stages2"), "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(stages) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "plumb.stages.v1")
        self.assertEqual(doc["time_origin"], "profile_start")
        self.assertEqual([s["name"] for s in doc["stages"]], ["command", "parse", "render"])
        parse, render = doc["stages"][1], doc["stages"][2]
        self.assertLessEqual(parse["end_ms"], render["start_ms"])
        self.assertGreater(parse["start_ms"], 0)
        h = plumb("hot", prof, "--stages", stages, "--json", debug=False)
        self.assertEqual(h.returncode, 0, h.stderr)
        summary = json.loads(h.stdout)
        by_name = {s["name"]: s for s in summary["stages"]}
        for stage, hot in (("parse", "parse_work"), ("render", "render_work")):
            leaf = by_name[stage]["leaf"]
            top = leaf[0]["name"] if isinstance(leaf[0], dict) else leaf[0][0]
            self.assertTrue(top.startswith(hot), (stage, leaf[:3]))

    def test_summary_and_baseline_in_one_command(self):
        summary = self.path("s.json")
        home = self.path("home")
        r = plumb("record", "--interval", "0.002", "--summary", summary, "--save-baseline", "split-base",
                  "-o", self.path("p.folded"), "--", target("split"), "1", extra_env={"PLUMB_HOME": home})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(summary) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "plumb.hot.v1")
        saved = os.path.join(home, "baselines", "profiles", "split-base.json")
        self.assertTrue(os.path.exists(saved))
        # the baseline name works in place of a path
        d = plumb("diff", "split-base", summary, debug=False, extra_env={"PLUMB_HOME": home})
        self.assertEqual(d.returncode, 0, d.stderr)

    def test_bad_baseline_name_is_exit_2(self):
        r = plumb("record", "--save-baseline", "../x", "-o", self.path("p.folded"), "--", "true")
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    main()
