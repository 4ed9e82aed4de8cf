"""A known split of CPU time between three Python functions: burn_a 50%, burn_b 30%, burn_c 20%.
Each spins until its thread's CPU clock advanced by its share of a 10 ms round, whatever the load.
Usage: split.py [SECONDS] (CPU seconds, default 2; 0 = until killed)."""
import sys
import time

clock = time.thread_time_ns


def burn_a():
    end, x = clock() + 5_000_000, 0
    while clock() < end:
        x += 1
    return x


def burn_b():
    end, x = clock() + 3_000_000, 0
    while clock() < end:
        x += 1
    return x


def burn_c():
    end, x = clock() + 2_000_000, 0
    while clock() < end:
        x += 1
    return x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    stop = clock() + int(seconds * 1e9)
    total = 0
    while seconds == 0 or clock() < stop:
        total += burn_a() + burn_b() + burn_c()
    return 0 if total >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
