"""`make install PREFIX=...` installs plumb, libplumb, plumb.h and a pkg-config file that builds a working
program; the installed plumb finds the installed libplumb for the inprocess backend."""
import os
import subprocess

from plumbtest import BUILD, ROOT, TempDir, env, main, read_folded, target


class Install(TempDir):
    def test_install__prefix_with_pkg_config(self):
        prefix = self.path("prefix")
        p = subprocess.run(["make", "-s", "install", "PREFIX=" + prefix, "BUILD=" + os.path.relpath(BUILD, ROOT)],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        for f in ("bin/plumb", "lib/libplumb.so", "include/plumb.h", "lib/pkgconfig/plumb.pc"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, f)), f)
        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "plumb"], env=pc_env, capture_output=True,
                               text=True, check=True).stdout.split()
        prog = self.path("api")
        p = subprocess.run(["cc", "-o", prog, os.path.join(ROOT, "tests", "targets", "api", "plumb_api.c"), *flags,
                            "-Wl,-rpath," + os.path.join(prefix, "lib")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([prog, "check"], env=env(True, PLUMB_SAMPLES=self.path("s.jsonl"),
                                                    PLUMB_HOME=self.path("home")),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('"sample": "ok"', p.stdout)
        out = self.path("p.folded")
        p = subprocess.run([os.path.join(prefix, "bin", "plumb"), "record", "--backend", "inprocess", "-o", out,
                            "--", target("split"), "0.5"], env=env(True), capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(read_folded(out))


if __name__ == "__main__":
    main()
