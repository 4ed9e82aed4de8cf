"""A Python parent whose compiled child does most of the work: it burns CPU in Python (py_burn) for PY_SECONDS,
then runs PROGRAM ARGS... with subprocess.run and waits for it. Usage: native_child.py PY_SECONDS PROGRAM ARGS..."""
import subprocess
import sys
import time


def py_burn(seconds):
    end, x = time.process_time() + seconds, 0
    while time.process_time() < end:
        x += 1
    return x


def main():
    py_burn(float(sys.argv[1]))
    subprocess.run(sys.argv[2:], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
