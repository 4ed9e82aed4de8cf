"""A parent that runs a second interpreter with subprocess.run([sys.executable, ...]) (fork + exec: the child
has its own address space, found and read on its own) and waits for it. The child burns CPU in child_burn
until its own CPU clock advanced by SECONDS and prints "pid cpu_seconds"; the parent passes that line on and
then prints "parent cpu_seconds". With PARENT_SECONDS the parent too burns that much CPU (in parent_burn), after
its child, so that it has samples of its own whatever its start cost. Usage: spawn.py [SECONDS [CHILD_PYTHON
[PARENT_SECONDS]]] (default 1.0 s, this interpreter, 0)."""
import os
import subprocess
import sys
import time


def burn(seconds):
    start = time.process_time()
    end, x = start + seconds, 0
    while time.process_time() < end:
        x += 1
    return time.process_time() - start


def child_burn(seconds):
    return burn(seconds)


def parent_burn(seconds):
    return burn(seconds)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        cpu = child_burn(float(sys.argv[2]))
        print(os.getpid(), "%.3f" % cpu)
        return 0
    seconds = sys.argv[1] if len(sys.argv) > 1 else "1.0"
    child = sys.argv[2] if len(sys.argv) > 2 else sys.executable
    out = subprocess.run([child, __file__, "--child", seconds], capture_output=True, text=True, check=True)
    sys.stdout.write(out.stdout)
    if len(sys.argv) > 3:
        parent_burn(float(sys.argv[3]))
    print("parent", "%.3f" % time.process_time())
    return 0


if __name__ == "__main__":
    sys.exit(main())
