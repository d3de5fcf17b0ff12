"""Waiting for subprocesses without a wall-clock deadline (test helper).

A loaded 2-core CI machine can take several times longer than a quiet one, so a fixed deadline
either flakes or is too long to catch a hang. :func:`wait_while_progressing` waits as long as the
processes make progress, i.e. as long as one of their logs grows, and fails only when none has
grown for ``stall`` seconds: a stuck rendezvous or a deadlock, never a slow machine.
"""

import os
import signal
import time

import pytest

STALL = 600.0  # seconds without a byte of output: far above any step of our tiny runs


def log_size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def wait_while_progressing(procs, logs, stall: float = STALL, poll: float = 0.5):
    """Exit codes of ``procs`` (Popen objects started with ``start_new_session=True`` and their
    output going to the files ``logs``). Fails the test, with the logs' tails, when no log has
    grown for ``stall`` seconds. No process is left behind (failure or interrupt)."""
    sizes = [log_size(p) for p in logs]
    last_progress = time.monotonic()
    try:
        while any(p.poll() is None for p in procs):
            time.sleep(poll)
            now = [log_size(p) for p in logs]
            if now != sizes:
                sizes, last_progress = now, time.monotonic()
            elif time.monotonic() - last_progress > stall:
                pytest.fail(f"no output for {stall:.0f} s (stuck):\n" + "\n".join(
                    open(log, errors="replace").read()[-2000:] for log in logs))
        return [p.returncode for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)  # the session it started: p and its children
                p.wait()
