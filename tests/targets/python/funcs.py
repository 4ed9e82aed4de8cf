"""50 / 30 / 20% of the CPU in func_a, func_b (called by mid_b) and func_c, each spinning until its thread's
CPU clock advanced by its share of a round of random length (so rounds cannot alias with a sampler's period).
Runs on every CPython 3 (no f-strings, no walrus). Usage: funcs.py [SECONDS] (CPU s; 0 = until killed, with a
second thread named "idler" that only sleeps, printing "ready" once both run)."""
import random
import sys
import threading
import time

clock = time.thread_time if hasattr(time, "thread_time") else time.process_time


def spin(seconds):
    end, x = clock() + seconds, 0
    while clock() < end:
        x += 1
    return x


def func_a(unit):
    return spin(5 * unit)


def func_b(unit):
    return spin(3 * unit)


def mid_b(unit):
    return func_b(unit) + 1


def func_c(unit):
    return spin(2 * unit)


def idle():
    while True:
        time.sleep(0.05)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    if seconds == 0:
        threading.Thread(target=idle, name="idler", daemon=True).start()
        sys.stdout.write("ready\n")
        sys.stdout.flush()
    stop = clock() + seconds
    total = 0
    while seconds == 0 or clock() < stop:
        unit = random.uniform(0.0003, 0.0017)
        total += func_a(unit) + mid_b(unit) + func_c(unit)
    return 0 if total >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
