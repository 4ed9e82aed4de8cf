"""A long-running Python service for attach tests. It loops over a known split of CPU time between three
functions (burn_a 50%, burn_b 30%, burn_c 20%: each spins until its thread's CPU clock advanced by its share
of a round of random length, so rounds cannot alias with a sampler's period) and reports its progress on
stdout about every 0.1 s as "<monotonic seconds> <process CPU seconds> <loop iterations done>".
A second thread, "idler", only sleeps. Runs until killed."""
import random
import sys
import threading
import time
clock = time.thread_time_ns


def burn_a(unit):
    end, x = clock() + 5 * unit, 0
    while clock() < end:
        x += 1
    return x


def burn_b(unit):
    end, x = clock() + 3 * unit, 0
    while clock() < end:
        x += 1
    return x


def burn_c(unit):
    end, x = clock() + 2 * unit, 0
    while clock() < end:
        x += 1
    return x


def idle():
    while True:
        time.sleep(0.05)


def main():
    threading.Thread(target=idle, name="idler", daemon=True).start()
    done, next_report = 0, time.monotonic()
    while True:
        unit = random.randint(300_000, 1_700_000)
        done += burn_a(unit) + burn_b(unit) + burn_c(unit)
        now = time.monotonic()
        if now >= next_report:
            sys.stdout.write("%.6f %.6f %d\n" % (now, time.process_time(), done))
            sys.stdout.flush()
            next_report = now + 0.1


if __name__ == "__main__":
    main()
