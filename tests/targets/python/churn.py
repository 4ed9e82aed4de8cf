"""Creates and frees code objects all the time while it runs, so a freed code object's address is soon given
to a new one: functions compiled with exec (gen_a_N, gen_b_N, alternately) and modules written, imported and
dropped (mod_a_N / mod_b_N, whose run() is called once). Each of them spends its time in leaf_a or leaf_b
(by its letter), so a sample names its frames right when every gen_X_* / mod_X_* frame sits right above
leaf_X. Usage: churn.py SECONDS TMPDIR (CPU s). Prints the number of code objects it created."""
import gc
import os
import sys
import time

clock = time.thread_time if hasattr(time, "thread_time") else time.process_time


def leaf_a(seconds):
    end, x = clock() + seconds, 0
    while clock() < end:
        x += 1
    return x


def leaf_b(seconds):
    end, x = clock() + seconds, 0
    while clock() < end:
        x += 1
    return x


GEN = "def gen_%(k)s_%(n)d(seconds):\n    return leaf_%(k)s(seconds) + %(n)d\n"
MOD = "import churn\n\n\ndef run(seconds):\n    return churn.leaf_%(k)s(seconds) + %(n)d\n"


def main():
    seconds, tmp = float(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, tmp)
    sys.modules["churn"] = sys.modules[__name__]
    stop, n, made = clock() + seconds, 0, 0
    while clock() < stop:
        k = "ab"[n % 2]
        ns = {"leaf_a": leaf_a, "leaf_b": leaf_b}
        exec(compile(GEN % {"k": k, "n": n}, "<gen-%s-%d>" % (k, n), "exec"), ns)
        ns["gen_%s_%d" % (k, n)](0.001)
        made += 2  # the function's code and the module code exec ran
        del ns
        if n % 10 == 0:
            name = "mod_%s_%d" % (k, n)
            path = os.path.join(tmp, name + ".py")
            with open(path, "w") as f:
                f.write(MOD % {"k": k, "n": n})
            mod = __import__(name)
            mod.run(0.001)
            del sys.modules[name], mod
            os.unlink(path)
            made += 2
        n += 1
        if n % 50 == 0:
            gc.collect()
    sys.stdout.write("%d code objects created\n" % made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
