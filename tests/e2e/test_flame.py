"""plumb flame: interactive SVG flame graphs. Every folded input of inferno's flamegraph suite renders (or is
refused with one clear line), the SVG is well-formed XML, the same input gives the same bytes, and the boxes
carry the profile's numbers."""
import glob
import os
import re
import subprocess
import unittest
import xml.etree.ElementTree as ET

from plumbtest import FIXTURES, TempDir, needs_tool, plumb

INF = os.path.join(FIXTURES, "inferno")
FG = os.path.join(FIXTURES, "flamegraph")
SVG = "{http://www.w3.org/2000/svg}"


def geometry(path):
    """[(label, samples, x, y, width, fill, text fill)] of every box, in document order."""
    out = []
    root = ET.parse(path).getroot()
    frames = [g for g in root.iter(SVG + "g") if g.get("id") == "frames"][0]
    for g in frames:
        title, rect, text = g.find(SVG + "title").text, g.find(SVG + "rect"), g.find(SVG + "text")
        m = re.match(r"^(.*) \(([\d,]+) [a-z]+", title)
        out.append((m.group(1), int(m.group(2).replace(",", "")), float(rect.get("x")), float(rect.get("y")),
                    float(rect.get("width")), rect.get("fill"), text.get("fill", "rgb(0,0,0)")))
    return out


def paths_drawn(path, inverted=False):
    """{frames from the base (root excluded): samples} of the drawn boxes, each box's parent found by geometry: the
    box one row nearer the base whose span holds it."""
    bs = geometry(path)
    rows = {}
    for b in bs:
        rows.setdefault(b[3], []).append(b)
    ys = sorted(rows, reverse=not inverted)  # base row first
    known = {id(rows[ys[0]][0]): ()}
    out = {}
    for prev, y in zip(ys, ys[1:]):
        for b in rows[y]:
            parent = [p for p in rows[prev] if p[2] <= b[2] + 0.02 and p[2] + p[4] >= b[2] + b[4] - 0.02]
            assert len(parent) == 1, (b, parent)
            known[id(b)] = known[id(parent[0])] + (b[0],)
            out[known[id(b)]] = out.get(known[id(b)], 0) + b[1]
    return out


def merged(lines, reverse=False):
    """{every prefix of every stack (reversed first with reverse): samples}, computed here from folded lines."""
    out = {}
    for line in lines:
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if reverse:
            frames.reverse()
        for i in range(1, len(frames) + 1):
            out[tuple(frames[:i])] = out.get(tuple(frames[:i]), 0) + int(n)
    return out


def rgb(text):
    return [int(v) for v in re.findall(r"\d+", text)]


def contrast(a, b):
    """WCAG 2 contrast ratio of two sRGB colours, written here from the W3C formula."""
    def lum(c):
        ch = [v / 255 for v in c]
        ch = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in ch]
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]
    la, lb = sorted((lum(a), lum(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def boxes(path):
    """{label: (samples, share)} of every box, from the <title> of each frame group."""
    out = {}
    root = ET.parse(path).getroot()
    frames = [g for g in root.iter(SVG + "g") if g.get("id") == "frames"][0]
    for g in frames:
        title = g.find(SVG + "title").text
        m = re.match(r"^(.*) \(([\d,]+) [a-z]+, ([\d.]+)%", title)
        label, n, share = m.group(1), int(m.group(2).replace(",", "")), float(m.group(3))
        prev = out.get(label, (0, 0.0))
        out[label] = (prev[0] + n, prev[1] + share)
    return out


class FlameInputs(TempDir):
    def test_every_inferno_input_renders_or_is_refused(self):
        inputs = sorted(glob.glob(os.path.join(INF, "flamegraph", "*", "*")))
        self.assertGreater(len(inputs), 15)
        rendered = 0
        for i, inp in enumerate(inputs):
            with self.subTest(inp=os.path.relpath(inp, INF)):
                out = self.path("out%d.svg" % i)
                r = plumb("flame", inp, "-o", out)
                self.assertNotIn(r.returncode, (-11, -6, 134, 139), r.stderr)
                if r.returncode == 0:
                    ET.parse(out)  # well-formed
                    rendered += 1
                else:
                    self.assertEqual(r.returncode, 5, r.stderr)
                    self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                    self.assertFalse(os.path.exists(out), "a refused input leaves no file")
        self.assertGreater(rendered, 15)

    def test_bad_lines_warn_once_and_render_the_rest(self):
        r = plumb("flame", os.path.join(INF, "flamegraph", "bad-lines", "bad-lines.txt"), "-o", self.path("b.svg"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("warning"), 1, r.stderr)
        self.assertTrue(boxes(self.path("b.svg")))

    def test_empty_profile_says_so(self):
        # an empty input is exit 5 (docs/design.md §3.2), as flamegraph.pl and inferno fail on it too
        r = plumb("flame", os.path.join(INF, "flamegraph", "empty", "empty.txt"), "-o", self.path("e.svg"))
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("empty.txt is empty", r.stderr)
        self.assertFalse(os.path.exists(self.path("e.svg")))

    def test_xmllint(self):
        needs_tool("xmllint", "Debian libxml2-utils")
        for name in ("base/flames.txt", "fractional-samples/tricky-stack.txt", "colors/async-profiler-collapsed-part.txt"):
            out = self.path("x.svg")
            r = plumb("flame", os.path.join(INF, "flamegraph", name), "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            x = subprocess.run(["xmllint", "--noout", out], capture_output=True, text=True)
            self.assertEqual(x.returncode, 0, x.stderr)


class FlameContent(TempDir):
    def setUp(self):
        super().setUp()
        self.folded = self.path("in.folded")
        with open(self.folded, "w") as f:
            f.write("main;parse;lex 30\nmain;parse 10\nmain;eval;add 45\nmain;eval;mul 15\nother 0\n")

    def test_numbers_and_shares(self):
        r = plumb("flame", self.folded, "-o", self.path("f.svg"), "--title", "T & <x>")
        self.assertEqual(r.returncode, 0, r.stderr)
        b = boxes(self.path("f.svg"))
        self.assertEqual(b["all"], (100, 100.0))
        self.assertEqual(b["main"][0], 100)
        self.assertEqual(b["eval"], (60, 60.0))
        self.assertEqual(b["parse"], (40, 40.0))
        self.assertEqual(b["lex"][0], 30)
        with open(self.path("f.svg")) as f:
            svg = f.read()
        self.assertIn("T &amp; &lt;x&gt;", svg)
        for feature in ("function zoom(", "function search(", "Matched: ", "Reset Zoom"):
            self.assertIn(feature, svg)

    def test_script_parses(self):
        """The embedded JavaScript is valid (node --check), and its functions run against a minimal DOM:
        zoom rescales the clicked box to the full width, search reports the matched share."""
        node = needs_tool("node", "Debian nodejs: it checks the SVG's script")
        svg = self.path("f.svg")
        self.assertEqual(plumb("flame", self.folded, "-o", svg).returncode, 0)
        with open(svg) as f:
            text = f.read()
        script = text.split("<![CDATA[", 1)[1].split("]]>", 1)[0]
        js = self.path("s.js")
        harness = script + """
function El(tag, attrs, kids) { this.tagName = tag; this.attrs = attrs || {}; this.kids = kids || [];
  this.classList = { s: {}, add: function (c) { this.s[c] = 1; }, remove: function (c) { delete this.s[c]; } };
  this.textContent = attrs && attrs._text || ''; this.firstChild = { nodeValue: '' }; var me = this;
  this.kids.forEach(function (k) { k.parentNode = me; }); }
El.prototype.getAttribute = function (k) { return this.attrs[k]; };
El.prototype.setAttribute = function (k, v) { this.attrs[k] = String(v); };
El.prototype.getElementsByTagName = function (t) { var out = []; (function walk(e) { e.kids.forEach(function (k) {
  if (k.tagName === t) out.push(k); walk(k); }); })(this); return out; };
El.prototype.addEventListener = function () {};
var groups = JSON.parse(process.argv[2]).map(function (b) { return new El('g', {}, [
  new El('title', { _text: b[0] }), new El('rect', { x: b[1], y: b[2], width: b[3], fill: 'red' }), new El('text', {})]); });
var framesEl = new El('g', { id: 'frames', 'data-icicle': '0' }, groups);
var ids = { frames: framesEl, details: new El('text'), matched: new El('text'), unzoom: new El('text'), search: new El('text') };
global.document = { documentElement: new El('svg', { width: '1200' }), getElementById: function (i) { return ids[i]; } };
global.window = { addEventListener: function () {} };
init({});
var evalg = groups.filter(function (g) { return g.kids[0].textContent.indexOf('eval ') === 0; })[0];
zoom(evalg);
search('^(add|mul)$');
console.log(JSON.stringify({ w: +evalg.kids[1].getAttribute('width'), matched: ids.matched.firstChild.nodeValue }));
"""
        with open(js, "w") as f:
            f.write(harness)
        chk = subprocess.run([node, "--check", js], capture_output=True, text=True)
        self.assertEqual(chk.returncode, 0, chk.stderr)
        root = ET.parse(svg).getroot()
        data = []
        for g in root.iter(SVG + "g"):
            t, r = g.find(SVG + "title"), g.find(SVG + "rect")
            if t is not None and r is not None:
                data.append([t.text, r.get("x"), r.get("y"), r.get("width")])
        import json
        run = subprocess.run([node, js, json.dumps(data)], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        res = json.loads(run.stdout)
        self.assertAlmostEqual(res["w"], 1180, delta=0.1)
        self.assertEqual(res["matched"], "Matched: 60.0%")

    def test_same_input_same_bytes(self):
        for args in ([], ["--inverted"], ["--reverse"], ["--colors", "mem"], ["--flamechart"]):
            a, b = self.path("a.svg"), self.path("b.svg")
            self.assertEqual(plumb("flame", self.folded, "-o", a, *args).returncode, 0)
            self.assertEqual(plumb("flame", self.folded, "-o", b, *args).returncode, 0)
            with open(a, "rb") as fa, open(b, "rb") as fb:
                self.assertEqual(fa.read(), fb.read(), args)

    def test_icicle_puts_the_root_on_top(self):
        def y_of(path, label):
            root = ET.parse(path).getroot()
            for g in root.iter(SVG + "g"):
                t = g.find(SVG + "title")
                if t is not None and t.text.startswith(label + " ("):
                    return float(g.find(SVG + "rect").get("y"))
        plumb("flame", self.folded, "-o", self.path("f.svg"))
        r = plumb("flame", self.folded, "-o", self.path("i.svg"), "--inverted")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(y_of(self.path("f.svg"), "all"), y_of(self.path("f.svg"), "lex"))
        self.assertLess(y_of(self.path("i.svg"), "all"), y_of(self.path("i.svg"), "lex"))
        # an icicle is the same tree upside down
        self.assertEqual(paths_drawn(self.path("i.svg"), inverted=True), paths_drawn(self.path("f.svg")))

    def test_reverse_merges_from_the_leaf(self):
        """--reverse is flamegraph.pl's: stacks reversed, merged from the leaf, so a leaf reached from two callers
        is one box at the base with its callers above (the callers' view); --inverted --reverse draws it hanging."""
        lines = ["main;a;burn 30", "main;b;burn 10", "main;b;idle 5", "main;burn 5"]
        folded = self.path("r.folded")
        with open(folded, "w") as f:
            f.write("\n".join(lines) + "\n")
        for extra, inverted in (([], False), (["--inverted"], True)):
            out = self.path("r.svg")
            r = plumb("flame", folded, "-o", out, "--reverse", *extra)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(paths_drawn(out, inverted), merged(lines, reverse=True), extra)
            self.assertEqual(paths_drawn(out, inverted)[("burn",)], 45)
        # and the plain graph is the stacks as they are
        plumb("flame", folded, "-o", self.path("p.svg"))
        self.assertEqual(paths_drawn(self.path("p.svg")), merged(lines))
        # a flame chart keeps time order: it cannot be reversed
        self.assertEqual(plumb("flame", folded, "-o", self.path("x.svg"), "--reverse", "--flamechart").returncode, 2)

    def test_text_reads_on_every_fill(self):
        """Every box's text has a WCAG contrast of at least 4.5:1 against its fill: in a differential graph whose
        changes run from a large shrink (the darkest blue) to a large growth, and in every palette."""
        before, after = self.path("b.folded"), self.path("a.folded")
        names = ["f%d" % i for i in range(40)]
        with open(before, "w") as f:
            f.write("".join("main;%s %d\n" % (n, 10 + 5 * i) for i, n in enumerate(names)))
        with open(after, "w") as f:
            f.write("".join("main;%s %d\n" % (n, 10 + 5 * (39 - i)) for i, n in enumerate(names)))
        runs = [("d.svg", ["--diff", before]), ("dr.svg", ["--diff", before, "--reverse"])]
        for pal in ("hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "red", "green", "blue", "aqua",
                    "yellow", "purple", "orange"):
            runs.append(("p-%s.svg" % pal, ["--colors", pal]))
        inp = os.path.join(INF, "flamegraph", "base", "flames.txt")
        for name, args in runs:
            out = self.path(name)
            r = plumb("flame", after if "--diff" in args else inp, "-o", out, *args)
            self.assertEqual(r.returncode, 0, r.stderr)
            worst = min((contrast(rgb(b[5]), rgb(b[6])), b[0], b[5]) for b in geometry(out))
            self.assertGreaterEqual(worst[0], 4.5, (name, worst))
        fills = {b[5] for b in geometry(self.path("d.svg"))}
        self.assertIn("rgb(0,0,255)", fills)  # the darkest blue is drawn, with text that reads on it

    def test_min_width_drops_narrow_boxes(self):
        with open(self.folded, "a") as f:
            f.write("main;tiny 1\n")
        plumb("flame", self.folded, "-o", self.path("w.svg"), "--width", "200", "--min-width", "5")
        self.assertNotIn("tiny", boxes(self.path("w.svg")))
        plumb("flame", self.folded, "-o", self.path("w.svg"), "--width", "200", "--min-width", "0")
        self.assertIn("tiny", boxes(self.path("w.svg")))

    def test_flamechart_keeps_time_order(self):
        folded = self.path("chart.folded")
        with open(folded, "w") as f:
            f.write("main;b 1\nmain;a 1\nmain;b 1\n")
        plumb("flame", folded, "-o", self.path("c.svg"), "--flamechart")
        root = ET.parse(self.path("c.svg")).getroot()
        bs = [(float(g.find(SVG + "rect").get("x")), g.find(SVG + "title").text.split(" (")[0])
              for g in root.iter(SVG + "g") if g.find(SVG + "title") is not None]
        order = [label for _, label in sorted(bs) if label in ("a", "b")]
        self.assertEqual(order, ["b", "a", "b"])

    def test_differential(self):
        before = self.path("before.folded")
        with open(before, "w") as f:
            f.write("main;parse;lex 60\nmain;parse 10\nmain;eval;add 15\nmain;eval;mul 15\n")
        r = plumb("flame", self.folded, "--diff", before, "-o", self.path("d.svg"))
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.parse(self.path("d.svg")).getroot()
        fills = {}
        for g in root.iter(SVG + "g"):
            t = g.find(SVG + "title")
            if t is not None and g.find(SVG + "rect") is not None:
                fills[t.text.split(" (")[0]] = g.find(SVG + "rect").get("fill")
        r_, g_, b_ = map(int, re.findall(r"\d+", fills["eval"]))
        self.assertTrue(r_ == 255 and b_ < 255, fills["eval"])  # grew: red
        r_, g_, b_ = map(int, re.findall(r"\d+", fills["lex"]))
        self.assertTrue(b_ == 255 and r_ < 255, fills["lex"])  # shrank: blue

    def test_perf_script_input(self):
        r = plumb("flame", os.path.join(FG, "test", "perf-funcab-cmd-01.txt"), "-o", self.path("p.svg"), "--all")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("func_a", boxes(self.path("p.svg")))

    def test_bad_options(self):
        for args in (["--colors", "plaid"], ["--width", "3"], ["--diff", self.folded, "--flamechart"]):
            r = plumb("flame", self.folded, "-o", self.path("x.svg"), *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertFalse(os.path.exists(self.path("x.svg")))

    def test_no_progress_line_into_a_pipe(self):
        """The progress line (base/progress.h) is drawn on a terminal only: stderr here is a pipe."""
        for args in (["flame", self.folded, "-o", self.path("p.svg")], ["hot", self.folded]):
            r = plumb(*args, extra_env={"TERM": "xterm"})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("\r", r.stderr)
            self.assertNotIn("\x1b[", r.stderr)

    def test_missing_input(self):
        r = plumb("flame", self.path("nope.folded"), "-o", self.path("x.svg"))
        self.assertEqual(r.returncode, 3)


if __name__ == "__main__":
    unittest.main()
