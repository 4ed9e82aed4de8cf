"""plumb.h / libplumb: off without PLUMB_DEBUG (no thread, file or timer, and under strace no system call),
samples and stages as JSON lines with it, target lock files created and removed, the stage lines turned into
plumb's stage file; the library exports plumb.h and nothing else, under its soname, and the sampler is apart."""
import json
import os
import re
import shutil
import subprocess
import unittest

from plumbtest import BUILD, PLUMB, ROOT, TempDir, env, main, plumb, read_folded, target, wait_until

MARK_MAIN = "close(-1001"  # tests/targets/api/plumb_quiet.c, once main has started


def strace(prog, e, out):
    """Runs prog under `strace -f` (threads and children followed); returns [(pid, syscall, line)] in order."""
    assert shutil.which("strace"), "strace is missing (scripts/setup installs it)"
    p = subprocess.run(["strace", "-f", "-qq", "-o", out, "--", prog], env=e, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    calls = []
    with open(out) as f:
        for line in f:
            m = re.match(r"(?:(\d+) +)?([a-z_0-9]+)\(", line)
            if m:  # "<... NAME resumed>", "--- SIG... ---" and "+++ exited +++" lines continue or end a call
                calls.append((m.group(1), m.group(2), line.rstrip("\n")))
    return calls


def after(calls, marker):
    """The calls from the one whose line starts with marker to the end (the marker included)."""
    pattern = r"(\d+ +)?" + re.escape(marker) + r"[) ]"  # "close(-1001)" or, threads interleaving, "close(-1001 <unf"
    starts = [i for i, (_, _, line) in enumerate(calls) if re.match(pattern, line)]
    assert len(starts) == 1, (marker, "\n".join(line for _, _, line in calls))
    return calls[starts[0]:]


def dynamic(path, tag):
    """Values of one tag (NEEDED, SONAME) of an ELF file's dynamic section, from readelf."""
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [re.search(r"\[(.*)\]", line).group(1) for line in out.splitlines() if "(%s)" % tag in line]


def names(calls):
    return [name for _, name, _ in calls]


def exported(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


class LibPlumb(TempDir):
    def run_api(self, debug, *args):
        e = env(debug, PLUMB_HOME=self.path("home"), PLUMB_SAMPLES=self.path("samples.jsonl"),
                PLUMB_STAGES=self.path("stages.jsonl"))
        p = subprocess.run([target("plumb_api"), *args], env=e, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_libplumb__off_does_nothing(self):
        for value in (None, "0", "false", "OFF", ""):
            extra = {} if value is None else {"PLUMB_DEBUG": value}
            e = env(False, PLUMB_HOME=self.path("home"), PLUMB_SAMPLES=self.path("samples.jsonl"),
                    PLUMB_STAGES=self.path("stages.jsonl"), **extra)
            p = subprocess.run([target("plumb_api"), "check"], env=e, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            r = json.loads(p.stdout)
            self.assertEqual(r["threads_after"], r["threads_before"], value)
            self.assertEqual(r["threads_after"], 1)
            self.assertEqual(r["fds_after"], r["fds_before"])
            self.assertEqual(r["timers_after"], 0)
            self.assertFalse(r["stage"])
            for k in ("init", "announce", "sample", "tagged", "stage_end"):
                self.assertTrue(r[k].startswith("switched off"), (k, r[k]))
            self.assertEqual(os.listdir(self.tmp), [], "the library created files with the switch off")

    def test_libplumb__off_makes_no_system_call(self):
        """Linked and switched off, a program makes, from main on, exactly the system calls of the same program
        without libplumb: none between its first and last plumb.h call, no thread at load or later."""
        bare = self.path("bare")
        subprocess.run(["cc", "-O2", "-DPLUMB_QUIET_BARE", os.path.join(ROOT, "tests/targets/api/plumb_quiet.c"),
                        "-o", bare], check=True)
        self.assertNotIn("libplumb.so.1", dynamic(bare, "NEEDED"))
        self.assertIn("libplumb.so.1", dynamic(target("plumb_quiet"), "NEEDED"))
        off_env = env(False, PLUMB_HOME=self.path("home"), PLUMB_SAMPLES=self.path("samples.jsonl"),
                      PLUMB_STAGES=self.path("stages.jsonl"))
        linked = strace(target("plumb_quiet"), off_env, self.path("linked.trace"))
        plain = strace(bare, off_env, self.path("bare.trace"))
        self.assertTrue(any("libplumb.so.1" in line for _, _, line in linked), "libplumb was not loaded")
        self.assertEqual(names(after(linked, MARK_MAIN)), names(after(plain, MARK_MAIN)),
                         "\n".join(line for _, _, line in after(linked, MARK_MAIN)))
        self.assertEqual(names(after(linked, MARK_MAIN))[:2], ["close", "close"])  # nothing between the marks
        self.assertEqual({pid for pid, _, _ in linked}, {linked[0][0]}, "another thread or process ran")
        self.assertFalse({"clone", "clone3", "fork", "vfork"} & set(names(linked)))
        # the same program switched on: the trace sees the library at work (files, the recorder's thread)
        on = strace(target("plumb_quiet"), env(True, PLUMB_HOME=self.path("home"),
                                               PLUMB_SAMPLES=self.path("samples.jsonl"),
                                               PLUMB_STAGES=self.path("stages.jsonl")), self.path("on.trace"))
        busy = set(names(after(on, MARK_MAIN)))
        self.assertTrue({"clone", "clone3"} & busy and "openat" in busy and "write" in busy, busy)

    def test_libplumb__exports_plumb_h_under_its_soname(self):
        """libplumb.so exports every plumb.h function and nothing else, under the soname programs record; the
        sampler library exports only what it interposes (its pthread_create wrapper, and the allocator's entry points
        and anonymous mmap for --mode alloc, docs/alloc.md) and no program links it."""
        with open(os.path.join(ROOT, "include", "plumb.h")) as f:
            declared = set(re.findall(r"^PLUMB_API [^(]*?\b(plumb_\w+)\(", f.read(), re.M))
        self.assertIn("plumb_version", declared)
        lib = os.path.join(BUILD, "libplumb.so")
        self.assertEqual(exported(lib), declared)
        self.assertEqual(dynamic(lib, "SONAME"), ["libplumb.so.1"])
        self.assertEqual(os.readlink(lib), "libplumb.so.1")
        self.assertEqual(exported(os.path.join(BUILD, "libplumb-preload.so")),
                         {"pthread_create", "malloc", "free", "calloc", "realloc", "reallocarray", "memalign",
                          "aligned_alloc", "posix_memalign", "valloc", "pvalloc", "malloc_usable_size", "mmap",
                          "mmap64", "munmap"})
        needed = dynamic(target("plumb_api"), "NEEDED")
        self.assertIn("libplumb.so.1", needed)
        self.assertFalse([n for n in needed if "preload" in n], needed)

    def test_libplumb__never_prints(self):
        """The libraries link only the pieces they reach of base/, os/ and metrics/ (docs/design.md §10): neither
        imports stderr, a function that prints on standard output or stderr, or the terminal's questions (files,
        and `-` for standard output, are written through os/atomic)."""
        printing = {"stderr", "printf", "vprintf", "puts", "perror", "psignal", "isatty", "ioctl", "tcgetattr"}
        for name in ("libplumb.so", "libplumb-preload.so"):
            out = subprocess.run(["nm", "-D", "--undefined-only", os.path.join(BUILD, name)], capture_output=True,
                                 text=True, check=True).stdout
            imported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
            self.assertGreater(len(imported), 10, out)
            self.assertEqual(imported & printing, set(), name)

    def test_libplumb__version_from_one_place(self):
        with open(os.path.join(ROOT, "VERSION")) as f:
            version = f.read().strip()
        self.assertRegex(version, r"^\d+\.\d+\.\d+$")
        self.assertEqual(self.run_api(False, "check")["version"], version)  # plumb_version(), switch off
        self.assertEqual(plumb("--version").stdout, "plumb %s\n" % version)
        self.assertTrue(os.path.isfile(os.path.join(BUILD, "libplumb.so.1." + version)))

    def test_libplumb__on_writes_samples_stages_and_lock(self):
        r = self.run_api(True, "check")
        for k in ("init", "announce", "sample", "tagged", "stage_end"):
            self.assertEqual(r[k], "ok", k)
        self.assertTrue(r["lock_exists"])
        self.assertEqual(r["timers_after"], 0)  # plumb.h starts no sampler by itself
        with open(self.path("samples.jsonl")) as f:
            samples = [json.loads(line) for line in f]
        self.assertEqual(samples[0], {"name": "parse", "kind": "latency", "unit": "ms", "value": 12.5, "tags": {}})
        self.assertEqual(samples[1]["tags"], {"input": 'big "file"', "run": "1"})
        self.assertEqual(samples[1]["value"], 300.25)
        with open(self.path("stages.jsonl")) as f:
            stages = [json.loads(line) for line in f]
        self.assertEqual(len(stages), 1)
        self.assertEqual(stages[0]["name"], "work")
        self.assertGreaterEqual(stages[0]["end_ns"] - stages[0]["start_ns"], 50_000_000)
        # the locks were removed at exit
        self.assertEqual(os.listdir(self.path("home/targets")), [])
        self.assertEqual(os.stat(self.path("samples.jsonl")).st_mode & 0o777, 0o600)

    def test_libplumb__lock_names_the_live_process(self):
        e = env(True, PLUMB_HOME=self.path("home"))
        p = subprocess.Popen([target("plumb_api"), "hold", "svc"], env=e, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
            with open(self.path("home/targets/svc.lock")) as f:
                self.assertEqual(int(f.read().split()[0]), p.pid)
            # a second process cannot take a live name
            q = subprocess.run([target("plumb_api"), "hold", "svc"], env=e, input="", capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(q.returncode, 1)
            self.assertIn("another live process", q.stdout)
        finally:
            p.stdin.close()
            p.wait(timeout=30)
        self.assertFalse(os.path.exists(self.path("home/targets/svc.lock")))

    def test_libplumb__stale_lock_is_replaced(self):
        os.makedirs(self.path("home/targets"))
        with open(self.path("home/targets/svc.lock"), "w") as f:
            f.write("999999999 1\n")  # no such process
        e = env(True, PLUMB_HOME=self.path("home"))
        p = subprocess.Popen([target("plumb_api"), "hold", "svc"], env=e, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
        finally:
            p.stdin.close()
            p.wait(timeout=30)


    def test_libplumb__stage_and_sample_round_trip_through_record(self):
        stages = self.path("stages.json")
        p = plumb("record", "--backend", "inprocess", "--stages", stages, "-o", self.path("p.folded"), "--",
                  target("plumb_api"), "check", "0.3",
                  extra_env={"PLUMB_SAMPLES": self.path("samples.jsonl"), "PLUMB_HOME": self.path("home")})
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(stages) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "plumb.stages.v1")
        self.assertEqual((doc["time_unit"], doc["time_origin"]), ("ms", "profile_start"))
        names = [s["name"] for s in doc["stages"]]
        self.assertEqual(names, ["command", "work"])
        command, work = doc["stages"]
        self.assertEqual(command["start_ms"], 0.0)
        self.assertGreaterEqual(work["end_ms"] - work["start_ms"], 300.0)
        self.assertLessEqual(work["end_ms"], command["end_ms"])
        with open(self.path("samples.jsonl")) as f:
            self.assertEqual(json.loads(f.readline())["value"], 12.5)
        self.assertTrue(any(any(fr.startswith("work ") for fr in frames) for frames, _ in
                            read_folded(self.path("p.folded"))))

    def test_libplumb__record_an_announced_target(self):
        e = env(True, PLUMB_HOME=self.path("home"))
        p = subprocess.Popen([target("plumb_api"), "hold", "svc"], env=e, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
            extra = {"PLUMB_HOME": self.path("home")}
            r = plumb("record", "--target", "svc", "--seconds", "1", "-o", self.path("t.folded"), extra_env=extra)
            self.assertNotEqual(r.returncode, 2, r.stderr)  # found (an idle target may sample nothing: exit 1)
            r = plumb("record", "--target", "nope", "--seconds", "1", "-o", self.path("n.folded"), extra_env=extra)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("svc (pid %d)" % p.pid, r.stderr)
        finally:
            p.stdin.close()
            p.wait(timeout=30)


if __name__ == "__main__":
    main()
