"""Two multiprocessing workers (fork context) each burn CPU in worker_burn while the parent waits in
Pool.map. Each worker spins until its own CPU clock advanced by SECONDS, whatever the load, and returns its
pid and the CPU time it used; the parent prints one line per worker, "pid cpu_seconds", then its own CPU time
as "parent cpu_seconds". Usage: pool.py [SECONDS [DELAY]] (default 1.5 s of CPU per worker; with DELAY, it
prints "ready" and sleeps DELAY seconds before starting the pool, so that a profiler can attach first)."""
import multiprocessing
import os
import sys
import time


def worker_burn(seconds):
    start = time.process_time()
    end, x = start + seconds, 0
    while time.process_time() < end:
        x += 1
    return os.getpid(), time.process_time() - start


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    if len(sys.argv) > 2:
        print("ready", flush=True)
        time.sleep(float(sys.argv[2]))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map(worker_burn, [seconds, seconds], chunksize=1)
    for pid, cpu in results:
        print(pid, "%.3f" % cpu)
    print("parent", "%.3f" % time.process_time())
    return 0


if __name__ == "__main__":
    sys.exit(main())
