"""What /proc says a process used while plumb sampled (for the whole-machine and live views' tests,
docs/design.md §12: shares are checked against the CPU time the target really got).

ProcWatch polls, every few milliseconds, whether plumb holds perf_event descriptors and how much CPU each watched
process has used (utime + stime of /proc/PID/stat). The sampling window is from the first poll that saw plumb's
perf descriptors to the first one after that saw none (plumb closes them as sampling ends, before it writes), so
the CPU a process used in that window is measured, not guessed from plumb's start and end."""
import os
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_ticks(pid):
    """utime + stime of pid in clock ticks, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after the comm


def holds_perf_events(pid):
    """True when process pid has a perf_event descriptor open."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]":
                return True
        except OSError:
            pass
    return False


class ProcWatch:
    """Polls plumb's perf descriptors and the watched processes' CPU in a thread until stop()."""

    def __init__(self, pids, step=0.005):
        self.pids, self.step = list(pids), step
        self.plumb_pid = None
        self.polls = []  # (monotonic time, plumb holds perf events, {pid: ticks})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self, plumb_pid):
        self.plumb_pid = plumb_pid
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            held = holds_perf_events(self.plumb_pid)
            self.polls.append((time.monotonic(), held, {p: proc_cpu_ticks(p) for p in self.pids}))
            time.sleep(self.step)

    def stop(self):
        self._stop.set()
        self._thread.join()

    def window(self):
        """(first poll with perf events, first poll without them after it); AssertionError when never seen."""
        first = next((i for i, p in enumerate(self.polls) if p[1]), None)
        assert first is not None, "plumb never held perf_event descriptors"
        last = next((i for i in range(first, len(self.polls)) if not self.polls[i][1]), len(self.polls) - 1)
        return self.polls[first], self.polls[last]

    def cpu_percent(self, pid, seconds=None):
        """CPU pid used in the sampling window, or in its first `seconds` (the span a live view's session covered),
        in percent of one CPU."""
        start, end = self.window()
        if seconds is not None:
            end = min((p for p in self.polls if p[0] >= start[0]), key=lambda p: abs(p[0] - start[0] - seconds))
        t0, t1 = start[0], end[0]
        c0, c1 = start[2][pid], end[2][pid]
        assert c0 is not None and c1 is not None, f"process {pid} ended during the window"
        return 100.0 * (c1 - c0) / CLK_TCK / (t1 - t0)
