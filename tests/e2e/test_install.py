"""`make install` installs plumb, libplumb (real file, soname link, -lplumb link), the preloaded sampler,
plumb.h, a pkg-config file that builds a working program, the man pages, the bash and zsh completions and the
documents; the installed plumb finds the installed sampler
for the inprocess backend; a staged install (DESTDIR) has the same layout with links that stay inside it."""
import os
import subprocess

from plumbtest import BUILD, ROOT, TempDir, env, main, read_folded, target

with open(os.path.join(ROOT, "VERSION")) as f:
    VERSION = f.read().strip()
REAL = "libplumb.so.1." + VERSION


def make_install(*args):
    return subprocess.run(["make", "-s", "install", "BUILD=" + os.path.relpath(BUILD, ROOT), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def soname(lib):
    out = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(SONAME)" in line]


def clean_env(debug, **extra):
    e = env(debug, **extra)
    e.pop("PLUMB_PRELOAD", None)  # the installed plumb must find its sampler by itself
    return e


class Install(TempDir):
    def assert_layout(self, root):
        lib = os.path.join(root, "lib")
        for f in ("bin/plumb", "lib/" + REAL, "lib/plumb/libplumb-preload.so", "include/plumb.h",
                  "lib/pkgconfig/plumb.pc", "share/man/man1/plumb.1", "share/man/man1/plumb-record.1",
                  "share/man/man1/plumb-bench.1", "share/bash-completion/completions/plumb",
                  "share/zsh/site-functions/_plumb", "share/doc/plumb/README.md", "share/doc/plumb/design.md"):
            path = os.path.join(root, f)
            self.assertTrue(os.path.isfile(path) and not os.path.islink(path), f)
        # the usual links, relative so that they survive a staged install being moved into place
        self.assertEqual(os.readlink(os.path.join(lib, "libplumb.so.1")), REAL)
        self.assertEqual(os.readlink(os.path.join(lib, "libplumb.so")), "libplumb.so.1")
        self.assertEqual(soname(os.path.join(lib, REAL)), ["libplumb.so.1"])

    def test_install__prefix_with_pkg_config(self):
        prefix = self.path("prefix")
        p = make_install("PREFIX=" + prefix)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_layout(prefix)
        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        modversion = subprocess.run(["pkg-config", "--modversion", "plumb"], env=pc_env, capture_output=True,
                                    text=True, check=True).stdout.strip()
        self.assertEqual(modversion, VERSION)
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "plumb"], env=pc_env, capture_output=True,
                               text=True, check=True).stdout.split()
        prog = self.path("api")
        p = subprocess.run(["cc", "-o", prog, os.path.join(ROOT, "tests", "targets", "api", "plumb_api.c"), *flags,
                            "-Wl,-rpath," + os.path.join(prefix, "lib")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        needed = subprocess.run(["readelf", "-d", prog], capture_output=True, text=True, check=True).stdout
        self.assertIn("[libplumb.so.1]", needed)  # programs load the soname, not the development link
        self.assertNotIn("libplumb-preload", needed)
        p = subprocess.run([prog, "check"], env=clean_env(True, PLUMB_SAMPLES=self.path("s.jsonl"),
                                                          PLUMB_HOME=self.path("home")),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"sample": "ok"', p.stdout)
        self.assertIn('"version": "%s"' % VERSION, p.stdout)
        installed = os.path.join(prefix, "bin", "plumb")
        p = subprocess.run([installed, "--version"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.stdout, "plumb %s\n" % VERSION)
        out = self.path("p.folded")
        p = subprocess.run([installed, "record", "--backend", "inprocess", "-o", out, "--", target("split"), "0.5"],
                           env=clean_env(True), capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(read_folded(out))
        # without its sampler the installed plumb says where it looked
        os.rename(os.path.join(prefix, "lib", "plumb"), self.path("aside"))
        p = subprocess.run([installed, "record", "--backend", "inprocess", "-o", self.path("q.folded"), "--",
                            target("split"), "0.1"], env=clean_env(True), capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("libplumb-preload.so not found", p.stderr)
        self.assertIn(os.path.join(prefix, "bin", "..", "lib", "plumb", "libplumb-preload.so"), p.stderr)

    def test_install__staged_with_destdir(self):
        stage = self.path("stage")
        p = make_install("DESTDIR=" + stage, "PREFIX=/opt/plumb")
        self.assertEqual(p.returncode, 0, p.stderr)
        root = os.path.join(stage, "opt", "plumb")
        self.assert_layout(root)
        with open(os.path.join(root, "lib", "pkgconfig", "plumb.pc")) as f:
            pc = f.read()
        self.assertIn("prefix=/opt/plumb\n", pc)
        self.assertIn("Version: %s\n" % VERSION, pc)
        self.assertNotIn("@", pc)


if __name__ == "__main__":
    main()
