"""The `plumb dump` test's CPython target (tests/e2e/test_dump.py): thread "lockwaiter" blocked in
lock.acquire() on a lock the main thread holds, thread "sleeper" in time.sleep(), and the main thread joining
the first. Prints "ready" once both threads have started; runs until killed."""
import threading
import time

lock = threading.Lock()
lock.acquire()


def wait_for_lock():
    lock.acquire()


def nap():
    time.sleep(3600)


def main():
    a = threading.Thread(target=wait_for_lock, name="lockwaiter")
    a.start()
    b = threading.Thread(target=nap, name="sleeper")
    b.start()
    print("ready", flush=True)
    a.join()


main()
