"""Half of the CPU time in a C extension function (zlib.compress of a large buffer), half in Python:
compress_half calls into zlib, spin_half burns in Python. Usage: native.py [SECONDS] (CPU s, default 2)."""
import os
import sys
import time
import zlib

clock = time.thread_time_ns
DATA = os.urandom(1 << 16) * 16  # 1 MiB that compresses (repeats), so deflate does real work


def compress_half(budget):
    end, n = clock() + budget, 0
    while clock() < end:
        n += len(zlib.compress(DATA, 6))
    return n


def spin_half(budget):
    end, x = clock() + budget, 0
    while clock() < end:
        x += 1
    return x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    stop = clock() + int(seconds * 1e9)
    total = 0
    while clock() < stop:
        total += compress_half(20_000_000) + spin_half(20_000_000)
    return 0 if total >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
