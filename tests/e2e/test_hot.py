"""plumb hot / plumb diff end to end: the Firefox Profiler reader on real files (versions 41, 49, 58, 66) against
an independent computation written here, samply sidecar symbolication, stage slicing, diffs and baselines."""
import gzip
import json
import os
import re
import shutil
import unittest

from plumbtest import FIXTURES, TempDir, main, plumb, target

GECKO = os.path.join(FIXTURES, "gecko")
FILES = ["profiler-edit-unsymbolicated.v49.json", "samply-ls-linux-profile.v41.json",
         "profiler-argument-values.v58.json", "fxprof-profile_without_js.v66.json"]


def short_path(path):
    parts = path.split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 and parts[-2] else parts[-1]


def expected_tables(path, sidecar=None):
    """Independent leaf/inclusive computation: {label: weight} for leaf and inclusive, and the total."""
    with open(path) as f:
        doc = json.load(f)
    shared = doc.get("shared", {})
    libs = doc.get("libs", [])
    syms = {}
    if sidecar:
        st = sidecar["string_table"]
        for lib in sidecar["data"]:
            table = sorted((e["rva"], e.get("size"), st[e["symbol"]],
                            st[e["frames"][-1]["file"]] if e.get("frames") else None) for e in lib["symbol_table"])
            syms[lib["debug_id"].replace("-", "").upper()] = table
    leaf, incl, total = {}, {}, 0

    def table(thread, name):
        return thread[name] if name in thread else shared[name]

    for th in doc["threads"]:
        strings = th.get("stringArray", shared.get("stringArray"))
        stk, frm, fn, res = (table(th, n) for n in ("stackTable", "frameTable", "funcTable", "resourceTable"))
        sources = shared.get("sources")

        def label(f):
            func = frm["func"][f]
            name = strings[fn["name"][func]]
            file = None
            if fn.get("fileName") and fn["fileName"][func] is not None:
                file = strings[fn["fileName"][func]]
            elif fn.get("source") and fn["source"][func] is not None and sources:
                file = strings[sources["filename"][fn["source"][func]]]
            module = None
            r = fn["resource"][func]
            lib = None
            if r is not None and r >= 0:
                li = res["lib"][r]
                if li is not None and li >= 0:
                    lib = libs[li]
                    module = lib.get("path") or lib.get("name")
                else:
                    module = strings[res["name"][r]]
            addr = frm["address"][f]
            key = (lib or {}).get("breakpadId", "")[:32]
            if lib and name.startswith("0x") and key in syms and addr is not None and addr >= 0:
                for rva, size, sym, sym_file in syms[key]:
                    if rva <= addr and (size is None or addr < rva + size):
                        name, file = sym, sym_file or file
            if file:
                lab = "%s (%s)" % (name, short_path(file))
            elif module:
                lab = "%s (%s)" % (name, module.split("/")[-1])
            else:
                lab = name
            # a kernel frame: a kernel module, or the Kernel category (a .ko module is kernel code)
            cats = [c.get("name") for c in doc.get("meta", {}).get("categories", [])]
            cat = frm.get("category", [None] * (f + 1))[f]
            kernel = cat is not None and cat < len(cats) and cats[cat] == "Kernel"
            if module == "[kernel.kallsyms]":  # the kernel's own image: a kind, not a module
                lab = name if not file else lab
            if (module and (module.startswith("[kernel") or "vmlinux" in module) or kernel) and not file:
                lab += "_[k]"
            return lab

        def prefix(i):
            if "prefix" in stk:
                return stk["prefix"][i]
            off = stk["prefixOffset"][i]
            return i - off if off else None

        samples = th["samples"]
        weights = samples.get("weight")
        for i, s in enumerate(samples["stack"]):
            if s is None:
                continue
            w = weights[i] if weights else 1
            total += w
            chain = []
            node = s
            while node is not None:
                chain.append(label(stk["frame"][node]))
                node = prefix(node)
            leaf[chain[0]] = leaf.get(chain[0], 0) + w
            for lab in set(chain):
                incl[lab] = incl.get(lab, 0) + w
    return leaf, incl, total


def hot_json(*args, **kw):
    r = plumb("hot", *args, "--json", **kw)
    if r.returncode != 0:
        raise AssertionError("plumb hot failed (%d): %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout)


def as_dict(rows):
    return {r["name"]: r["count"] for r in rows}


class Units(TempDir):
    """hot says what a weight is: a time weight (perf script's periods) as milliseconds beside its sample count,
    samples with a known period as samples beside the time they stand for (issue 14: "1187187186 samples")."""

    def test_perf_script_periods_read_as_time_and_samples(self):
        src = self.path("t.perf")
        with open(src, "w") as f:
            for t, stack in ((0, ("work", "main")), (250, ("work", "main")), (500, ("main",))):
                f.write("prog 100 1.000%03d:     250000 cpu-clock:pppH: \n" % t)
                for i, fn in enumerate(stack):
                    f.write("\t          40%d000 %s+0x10 (/usr/bin/prog)\n" % (i + 1, fn))
                f.write("\n")
        r = plumb("hot", src)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(perf-script): 0.750 ms (3 samples) in 1 thread", r.stdout)
        self.assertRegex(r.stdout, r"ms   share  function\n +0\.500   66\.7%  work\n")
        self.assertNotIn("nanoseconds", r.stdout)

    def test_samples_with_a_period_say_the_time_they_stand_for(self):
        src = self.path("r.json")
        r = plumb("record", "--interval", "0.002", "-o", src, "--", target("split"), "0.3")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("hot", src)
        m = re.search(r"\(gecko\): (\d+) samples \(([\d.]+) ms at one per 2 ms\)", r.stdout)
        self.assertTrue(m, r.stdout[:300])
        self.assertAlmostEqual(float(m.group(2)), 2.0 * int(m.group(1)), delta=0.1)


class GeckoReader(TempDir):
    def check(self, path, sidecar=None, extra=()):
        leaf, incl, total = expected_tables(path, sidecar)
        doc = hot_json(path, *extra)
        self.assertEqual(doc["schema"], "plumb.hot.v1")
        self.assertEqual(doc["format"], "gecko")
        self.assertEqual(doc["total"], total)
        self.assertEqual(sum(r["count"] for r in doc["leaf"]), total)  # every sample has exactly one leaf
        self.assertEqual(as_dict(doc["leaf"]), leaf)
        self.assertEqual(as_dict(doc["inclusive"]), incl)
        # top rows in order: largest count first
        counts = [r["count"] for r in doc["inclusive"]]
        self.assertEqual(counts, sorted(counts, reverse=True))
        self.assertEqual(doc["inclusive"][0]["count"], max(incl.values()))
        return doc

    def test_versions_41_49_58_66_match_an_independent_count(self):
        for f in FILES:
            with self.subTest(file=f):
                self.check(os.path.join(GECKO, f))

    def test_gzipped_profile_reads_the_same(self):
        src = os.path.join(GECKO, FILES[0])
        gz = self.path("p.json.gz")
        with open(src, "rb") as i, gzip.open(gz, "wb") as o:
            o.write(i.read())
        self.assertEqual(hot_json(gz)["leaf"], hot_json(src)["leaf"])

    def test_sidecar_symbolicates_the_v49_names(self):
        src = os.path.join(GECKO, "profiler-edit-unsymbolicated.v49.json")
        prof = self.path("prof.json")
        shutil.copy(src, prof)
        with open(src) as f:
            doc = json.load(f)
        addrs = {}
        for th in doc["threads"]:
            fn, frm, res = th["funcTable"], th["frameTable"], th["resourceTable"]
            for f in range(len(frm["func"])):
                lib = res["lib"][fn["resource"][frm["func"][f]]]
                addrs.setdefault(doc["libs"][lib]["debugName"], set()).add(frm["address"][f])
        breakpad = {lib["debugName"]: lib["breakpadId"] for lib in doc["libs"]}
        strings = ["UNKNOWN"]
        data = []
        for li, (lib, aset) in enumerate(sorted(addrs.items())):
            table, known = [], []
            groups = sorted({a // 256 for a in aset})
            for g in groups:
                members = sorted(a for a in aset if a // 256 == g)
                strings.append("%s_fn_%x" % (lib.replace(".", "_"), g))
                entry = {"rva": members[0], "size": members[-1] - members[0] + 1, "symbol": len(strings) - 1}
                if g % 3 == 0:  # an inline chain, innermost first: the outermost frame's file is the function's
                    strings += ["inner_%x" % g, "src/inline.h", "lib/%s/fn_%x.c" % (lib, g)]
                    entry["frames"] = [{"function": len(strings) - 3, "file": len(strings) - 2, "line": 4},
                                       {"function": entry["symbol"], "file": len(strings) - 1, "line": 9}]
                table.append(entry)
                if g % 2 == 0:  # half through known_addresses, half through the range lookup
                    known.extend([a, len(table) - 1] for a in members)
            # samply writes debug ids in debugid form; the profile has breakpad ids
            b = breakpad[lib]
            debug_id = "%s-%s-%s-%s-%s" % (b[0:8], b[8:12], b[12:16], b[16:20], b[20:32])
            if int(b[32:] or "0", 16):
                debug_id += "-%x" % int(b[32:], 16)
            data.append({"debug_name": lib if li % 2 else "renamed-" + lib, "debug_id": debug_id.lower(),
                         "code_id": "", "symbol_table": table, "known_addresses": sorted(known)})
        sidecar = {"string_table": strings, "data": data}
        with open(self.path("prof.json.syms.json"), "w") as f:
            json.dump(sidecar, f)
        out = self.check(prof, sidecar)  # found beside the profile
        names = [r["name"] for r in out["inclusive"]]
        self.assertFalse([n for n in names if n.startswith("0x")], names)
        self.assertTrue(any("a_out_fn_" in n for n in names), names)
        self.assertTrue(any(n.endswith(".c)") and "_fn_" in n for n in names), names)
        # --syms points at a moved sidecar
        os.rename(self.path("prof.json.syms.json"), self.path("elsewhere.json"))
        self.assertTrue(any(r["name"].startswith("0x") for r in hot_json(prof)["leaf"]))
        self.check(prof, sidecar, ("--syms", self.path("elsewhere.json")))

    def test_malformed_input_is_exit_5_with_the_place(self):
        with open(os.path.join(GECKO, FILES[0])) as f:
            src = f.read()
        bad = self.path("bad.json")
        at = src.index('"stack": [') + 10
        for text, where in ((src[:at] + "x" + src[at:], "byte %d in threads[0].samples" % len(src[:at].encode())),
                            (src[:len(src) // 2], "malformed Firefox profile at byte"),
                            (src.replace('"stack": [3,', '"stack": [3000,', 1), "samples.stack[0]")):
            with open(bad, "w") as f:
                f.write(text)
            r = plumb("hot", bad)
            self.assertEqual(r.returncode, 5, r.stderr)
            self.assertIn(where, r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1)
        with open(bad, "w") as f:
            f.write(src.replace('"preprocessedProfileVersion": 49', '"preprocessedProfileVersion": 99', 1))
        r = plumb("hot", bad)
        self.assertEqual(r.returncode, 5)
        self.assertIn("version 99", r.stderr)


def gecko_two_stages(alpha_ms, beta_ms):
    """A small v66-shaped profile (shared tables, timeDeltas, keys in odd order): main -> alpha for the first
    stage, main -> beta for the second, with a little noise of the other in each."""
    strings = ["main", "alpha", "beta", "prog"]
    stacks, deltas = [], []
    t = 0
    for i in range(200):
        ms = i * 1.0
        if ms < alpha_ms:
            stacks.append(1 if i % 10 else 2)
        elif ms < beta_ms:
            stacks.append(2 if i % 10 else 1)
        deltas.append(1.0 if i else 0.5)
    deltas = deltas[:len(stacks)]
    return {
        "threads": [{"samples": {"weightType": "samples", "weight": None, "timeDeltas": deltas, "stack": stacks,
                                 "length": len(stacks)},
                     "tid": 7, "pid": 7, "name": "prog"}],
        "shared": {
            "stringArray": strings,
            "stackTable": {"prefixOffset": [0, 1, 2], "frame": [0, 1, 2], "length": 3},
            "frameTable": {"length": 3, "func": [0, 1, 2], "address": [-1, -1, -1], "inlineDepth": [0, 0, 0],
                           "line": [None, 10, 20]},
            "funcTable": {"length": 3, "name": [0, 1, 2], "resource": [0, 0, 0], "fileName": [None, None, None],
                          "source": [None, None, None], "lineNumber": [None, None, None]},
            "resourceTable": {"length": 1, "lib": [0], "name": [3]},
        },
        "libs": [{"name": "prog", "path": "/opt/prog", "debugName": "prog", "breakpadId": "X", "codeId": "x"}],
        "meta": {"version": 24, "preprocessedProfileVersion": 66, "interval": 1, "startTime": 1.0},
    }


class Stages(TempDir):
    def test_each_stage_has_its_own_hot_function_first(self):
        prof = self.path("p.json")
        with open(prof, "w") as f:
            json.dump(gecko_two_stages(100, 200), f)
        stages = self.path("stages.json")
        with open(stages, "w") as f:
            json.dump({"schema": "plumb.stages.v1", "time_unit": "ms", "time_origin": "profile_start",
                       "stages": [{"name": "load", "start_ms": 0.0, "end_ms": 100.0},
                                  {"name": "save", "start_ms": 100.0, "end_ms": 250.0}]}, f)
        doc = hot_json(prof, "--stages", stages)
        self.assertEqual([s["name"] for s in doc["stages"]], ["load", "save"])
        load, save = doc["stages"]
        self.assertTrue(load["leaf"][0]["name"].startswith("alpha "), load["leaf"])
        self.assertTrue(save["leaf"][0]["name"].startswith("beta "), save["leaf"])
        self.assertEqual(load["total"] + save["total"], doc["total"])
        self.assertEqual(load["total"], 100)
        # the human tables say which stage is which
        r = plumb("hot", prof, "--stages", stages)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("stage load", r.stdout)
        self.assertIn("stage save", r.stdout)

    def test_a_profile_without_times_is_refused(self):
        folded = self.path("p.folded")
        with open(folded, "w") as f:
            f.write("main;alpha 10\n")
        stages = self.path("stages.json")
        with open(stages, "w") as f:
            json.dump({"schema": "plumb.stages.v1", "stages": [{"name": "a", "start_ms": 0, "end_ms": 1}]}, f)
        r = plumb("hot", folded, "--stages", stages)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no sample times", r.stderr)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Grouping(TempDir):
    def test_group_filters_and_threads_on_a_folded_profile(self):
        p = self.path("p.folded")
        write(p, "main (app/main.c:3);parse (src/parse.c:10);lex (src/lex.c:5) 30\n"
                 "main (app/main.c:3);parse (src/parse.c:12) 20\n"
                 "main (app/main.c:4);memcpy (libc.so.6) 50\n")
        doc = hot_json(p, "--group-by", "file")
        self.assertEqual(as_dict(doc["grouped_leaf"]), {"src/lex.c": 30, "src/parse.c": 20, "[libc.so.6]": 50})
        self.assertEqual(as_dict(doc["grouped_inclusive"])["app/main.c"], 100)
        # lines are merged: parse is one row
        self.assertEqual(as_dict(doc["inclusive"])["parse (src/parse.c)"], 50)
        doc = hot_json(p, "--exclude", "memcpy|lex")
        self.assertEqual(as_dict(doc["leaf"]), {"parse (src/parse.c)": 50, "main (app/main.c)": 50})
        self.assertEqual(doc["total"], 100)
        doc = hot_json(p, "--include", "^parse")
        self.assertEqual(as_dict(doc["leaf"]), {"parse (src/parse.c)": 50})
        self.assertEqual(doc["attributed"], 50)

    def test_module_depth_over_rust_names_and_collapsed_generics(self):
        p = self.path("p.folded")
        write(p, "main;tokio::runtime::task::poll<F> 10\n"
                 "main;tokio::runtime::task::poll<G> 5\n"
                 "main;app::db::query::run<Conn> 20\n")
        doc = hot_json(p, "--group-by", "module", "--module-depth", "2", "--collapse-generics")
        self.assertEqual(as_dict(doc["grouped_leaf"]), {"app::db": 20, "tokio::runtime": 15})
        self.assertEqual(as_dict(doc["leaf"])["tokio::runtime::task::poll<...>"], 15)
        doc = hot_json(p, "--group-by", "module", "--module-depth", "3")
        self.assertEqual(as_dict(doc["grouped_leaf"]), {"app::db::query": 20, "tokio::runtime::task": 15})
        self.assertEqual(len(doc["leaf"]), 3)  # without --collapse-generics the copies stay apart

    def test_repo_only_keeps_frames_under_the_root(self):
        os.makedirs(self.path("repo/src"))
        write(self.path("repo/src/parse.c"), "")
        p = self.path("p.folded")
        write(p, "main (other/main.c:3);parse (src/parse.c:10);memcpy (libc.so.6) 10\n")
        doc = hot_json(p, "--repo-only", "--root", self.path("repo"))
        self.assertEqual(as_dict(doc["leaf"]), {"parse (src/parse.c)": 10})
        self.assertEqual(as_dict(doc["inclusive"]), {"parse (src/parse.c)": 10})

    def test_thread_selection(self):
        prof = self.path("p.json")
        d = gecko_two_stages(100, 200)
        t2 = json.loads(json.dumps(d["threads"][0]))
        t2.update(name="helper", tid=8)
        t2["samples"]["stack"] = t2["samples"]["stack"][:30]
        t2["samples"]["timeDeltas"] = t2["samples"]["timeDeltas"][:30]
        d["threads"].append(t2)
        write(prof, json.dumps(d))
        doc = hot_json(prof)
        self.assertEqual([(t["name"], t["count"]) for t in doc["threads"]], [("prog", 200), ("helper", 30)])
        self.assertEqual(hot_json(prof, "--thread", "help")["total"], 30)
        self.assertEqual(hot_json(prof, "--top-threads", "1")["total"], 200)


class Diff(TempDir):
    def test_diff_of_two_profiles_and_of_a_baseline(self):
        a, b = self.path("a.folded"), self.path("b.folded")
        write(a, "main;slow 60\nmain;fast 40\n")
        write(b, "main;slow 30\nmain;fast 60\nmain;new 10\n")
        r = plumb("diff", a, b, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        rows = {x["name"]: x for x in d["rows"]}
        self.assertAlmostEqual(rows["slow"]["delta_points"], 30 - 60, places=3)
        self.assertAlmostEqual(rows["fast"]["delta_points"], 60 - 40, places=3)
        self.assertEqual(rows["new"]["delta_count"], 10)
        self.assertEqual(d["rows"][0]["name"], "slow")  # largest absolute change first
        r = plumb("diff", a, b)
        self.assertIn("-30.0", r.stdout)
        self.assertIn("+20.0", r.stdout)
        # a summary on one side, a saved baseline name on the other
        home = self.path("home")
        os.makedirs(os.path.join(home, "baselines", "profiles"))
        r = plumb("hot", a, "--json")
        write(os.path.join(home, "baselines", "profiles", "before.json"), r.stdout)
        r = plumb("diff", "before", b, "--json", "--table", "inclusive", extra_env={"PLUMB_HOME": home})
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {x["name"]: x for x in json.loads(r.stdout)["rows"]}
        self.assertEqual(rows["main"]["delta_points"], 0)
        self.assertEqual(rows["slow"]["before"]["count"], 60)
        r = plumb("diff", "missing-baseline", b, extra_env={"PLUMB_HOME": home})
        self.assertEqual(r.returncode, 3)
        self.assertIn("before", r.stderr)  # lists what is saved
        r = plumb("diff", a, b, "--folded")  # handed to the differential folded writer: "stack BEFORE AFTER" lines
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout and all(len(l.rsplit(" ", 2)) == 3 for l in r.stdout.splitlines()), r.stdout)


if __name__ == "__main__":
    main()
