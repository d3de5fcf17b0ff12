"""The one worker pool of every step that takes ``--workers``: results in input order, a bounded
read-ahead, and a command that fails, never hangs, when a worker dies.

:func:`ordered_map` runs a function over items in spawned processes
(``concurrent.futures.ProcessPoolExecutor``, which raises where ``multiprocessing.Pool`` waits for
a killed worker forever). A worker killed by a signal (the OOM killer, ``kill -9``) or exiting on
its own is :class:`WorkerDied`, one line naming the step and the signal; Ctrl-C and SIGTERM (to
the command or to its process group) end every worker on the way out. docs/design.md, "Worker
processes", says how.

Standard library only.
"""

import collections
import multiprocessing
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator, Optional

from .errors import HierError

#: exit signals that also reach the main process when they are sent to the process group
_GROUP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class WorkerDied(HierError):
    """A worker process of a step ended without returning its result."""


def _init_worker(initializer: Optional[Callable], initargs: tuple) -> None:
    # Ctrl-C reaches the whole process group: the main process alone answers it (and ends the
    # workers), so that a worker prints no KeyboardInterrupt traceback of its own. SIGTERM keeps
    # its default: the executor ends a broken pool's workers with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if initializer is not None:
        initializer(*initargs)


def exit_description(exitcode: Optional[int]) -> str:
    """How a process ended, from its ``multiprocessing`` exit code: ``killed by SIGKILL``."""
    if exitcode is None:
        return "ended"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


class _Pool:
    """A spawned ``ProcessPoolExecutor`` and every process it started (the executor forgets them
    when it shuts down; the one that died is named from this list)."""

    def __init__(self, step: str, workers: int, initializer, initargs):
        self.step = step
        self.executor = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker, initargs=(initializer, initargs))
        self.processes = {}

    def submit(self, fn, item):
        # a worker may be started here: it inherits SIGINT blocked, so that Ctrl-C cannot reach
        # it before _init_worker ignores it (a pending one stays pending here, not lost)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            future = self.executor.submit(fn, item)
        except BrokenProcessPool:  # a worker died before this item was handed out
            raise self._death() from None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self.processes.update(self.executor._processes or {})
        return future

    def result(self, future):
        try:
            return future.result()
        except BrokenProcessPool:
            raise self._death() from None

    def _death(self) -> WorkerDied:
        """The error for a broken pool: the first worker that did not end by SIGTERM (the
        executor ends the survivors of a broken pool with it), else one that did."""
        for p in self.processes.values():
            p.join(timeout=5)
        codes = [(pid, p.exitcode) for pid, p in self.processes.items()]
        dead = [(pid, c) for pid, c in codes if c is not None and c != -signal.SIGTERM] or \
            [(pid, c) for pid, c in codes if c is not None] or [(None, None)]
        pid, code = dead[0]
        if code is not None and code < 0 and -code in _GROUP_SIGNALS:
            # the signal was probably sent to the whole process group: the main process's own
            # copy, if one is on its way, turns this into "interrupted" (exit 128 + signal)
            time.sleep(0.5)
        who = f"worker process {pid}" if pid is not None else "a worker process"
        hint = " (out of memory? the kernel log, dmesg, says)" if code == -signal.SIGKILL else ""
        return WorkerDied(f"{self.step}: {who} was {exit_description(code)}{hint}; stopped "
                          f"without writing the output")

    def stop(self, graceful: bool) -> None:
        """Shut the pool down: wait for idle workers to exit (``graceful``), or kill them all
        first (an error or a signal on the way out)."""
        if not graceful:
            for p in self.processes.values():
                if p.exitcode is None:
                    try:
                        p.kill()
                    except (OSError, ValueError):  # already reaped or closed
                        pass
        self.executor.shutdown(wait=True, cancel_futures=True)


def ordered_map(fn: Callable, items: Iterable, workers: int, step: str,
                in_flight: Optional[int] = None, initializer: Optional[Callable] = None,
                initargs: tuple = ()) -> Iterator:
    """``fn(item)`` for each item, yielded in the order of ``items``.

    With ``workers <= 1`` it runs in this process (``initializer(*initargs)`` first). Otherwise
    ``workers`` spawned processes run it, ``fn``, the items and the results being pickled; at
    most ``in_flight`` items (default two per worker) are read ahead, so that an input larger
    than memory streams. An exception raised by ``fn`` is raised here as it is (a
    :class:`HierError` keeps its one line). A worker that dies raises :class:`WorkerDied`
    naming ``step`` and how the worker ended. Whatever ends the iteration early (an error, a
    signal, the caller closing the generator) kills the workers before it returns."""
    if workers <= 1:
        if initializer is not None:
            initializer(*initargs)
        yield from map(fn, items)
        return
    in_flight = in_flight or 2 * workers
    pool = _Pool(step, workers, initializer, initargs)
    graceful = False
    try:
        pending = collections.deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= in_flight:
                yield pool.result(pending.popleft())
        while pending:
            yield pool.result(pending.popleft())
        graceful = True
    finally:
        pool.stop(graceful)
