"""A known split of CPU time between three Python functions: burn_a 50%, burn_b 30%, burn_c 20%.
Each spins until its thread's CPU clock advanced by its share of a round of random length (so the round
cannot alias with a sampler's period), whatever the load. Usage: split.py [SECONDS] (CPU s; 0 = forever)."""
import random
import sys
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


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    stop = clock() + int(seconds * 1e9)
    total = 0
    while seconds == 0 or clock() < stop:
        unit = random.randint(300_000, 1_700_000)
        total += burn_a(unit) + burn_b(unit) + burn_c(unit)
    return 0 if total >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
