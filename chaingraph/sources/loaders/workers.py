"""Worker processes forked once and kept between loads (the JSON dump's parse workers).

A process forked from a process that has already loaded a dump allocates into that
process's freed heap, and every page it writes to becomes a copy of its own: loading a 20×
synthetic dump as two 10× parts, one after the other in one process, the first part's two
parse workers peaked at 26 MB of their own each and the second's at 40–44 (the ``[heap]``
part 11 against 24 MB; one run). So the workers a load started are kept when it ends with
every task answered, and the next load within :data:`KEEP_SECONDS` takes them over: they
are the first load's processes, forked before it. After that time they are told to finish,
so a process that loads once does not keep them.

A kept worker runs the code as it was when it was forked: :func:`release` stops the kept
workers at once (after patching what a worker runs, as the tests do).

A worker does not answer the tasks itself. It forks a child that answers
:data:`TASKS_PER_CHILD` of them and ends, then forks the next, and so on: its own heap is
never used, so each child starts from the same clean copy of it, not from the litter of
every chunk parsed before. A process that parses without end keeps more of its heap the
longer it runs (a parse worker by itself: 47 MB of anonymous memory after 10 of the 10x
dump's chunks, 50 after 100), and the workers' memory grew with the dump: the two workers
of a load that writes nothing held 33-35 MB of their own with codex-m's dump and 38-39
with its 10x synthetic dump; in children of 16 tasks, 34-35 and 36-37, and the 10x load
into a store file peaked at 142-144 MB against 144-147 (several runs each). A child's
first task is slower (23 ms against 14: the pages it writes are copied from the worker's),
so children of 8 tasks, flatter still by ~1 MB, cost twice as much time; at 16 the load of
codex-m's dump took 4 % longer into a store file and 1 % into memory (medians of four
paired rounds).

>>> workers = take(1, abs)
>>> workers.tasks.put(-42); workers.results.get(timeout=10)
42
>>> keep(workers); take(1, abs) is workers
True
>>> keep(workers); release(); workers.alive()
False
>>> fresh = take(1, abs); fresh is workers
False
>>> keep(fresh); release()
"""

from __future__ import annotations

import atexit
import gc
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from chaingraph.store_memory import glibc

__all__ = ["KEEP_SECONDS", "TASKS_PER_CHILD", "Workers", "keep", "release", "take"]

#: seconds kept workers wait for the next load before they are told to finish
KEEP_SECONDS = 60.0
#: tasks a worker's child answers before it ends and the worker forks the next
TASKS_PER_CHILD = 16
#: a child's exit status when it took the ``None`` that tells its worker to finish
_STOPPED = 3
#: ``prctl``'s option for the signal a process gets when its parent ends (Linux)
_PR_SET_PDEATHSIG = 1


class Workers:
    """``count`` processes forked from this one, each answering the tasks of :attr:`tasks`
    with ``handle(task)`` on :attr:`results` (in children of its own, a few tasks each)
    until one takes ``None``."""

    def __init__(self, count: int, handle: Callable[[Any], Any], name: str = "chaingraph-worker") -> None:
        ctx = multiprocessing.get_context("fork")
        self.handle = handle
        self.tasks: Any = ctx.Queue()
        self.results: Any = ctx.Queue()
        self.procs = [ctx.Process(target=_serve, args=(self.tasks, self.results, handle),
                                  name=f"{name}-{i}", daemon=True) for i in range(count)]
        for proc in self.procs:
            proc.start()

    def alive(self) -> bool:
        """Whether every worker is running."""
        return all(proc.is_alive() for proc in self.procs)

    def stop(self, *, idle: bool) -> None:
        """Stop the workers: told to finish when ``idle`` (every task answered), else ended."""
        for proc in self.procs:
            if idle:
                self.tasks.put(None)
            else:
                proc.terminate()
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for q in (self.tasks, self.results):
            q.cancel_join_thread()
            q.close()


def _serve(tasks: Any, results: Any, handle: Callable[[Any], Any]) -> None:
    """A worker: fork a child for every :data:`TASKS_PER_CHILD` tasks until one of them is
    told to stop (``None``). A child that fails ends the worker, so :meth:`Workers.alive`
    tells; a worker told to end (``SIGTERM``) ends its child first."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    gc.freeze()  # the parent's objects: never scanned here (nor copied by the scans)
    gc.set_threshold(50_000, 20, 20)  # parsed entities hold no cycles: collect rarely
    child = 0

    def end(signum: int, frame: object) -> None:
        if child:
            os.kill(child, signal.SIGKILL)
        os._exit(1)

    signal.signal(signal.SIGTERM, end)
    worker = os.getpid()
    while True:
        child = os.fork()  # this process has no thread but this one: safe to fork
        if child == 0:
            _child(tasks, results, handle, worker)
        status = os.waitpid(child, 0)[1]
        child = 0
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == _STOPPED:
            return
        if status != 0:
            os._exit(1)


def _child(tasks: Any, results: Any, handle: Callable[[Any], Any], worker: int) -> None:
    """A child of process ``worker``: answer :data:`TASKS_PER_CHILD` tasks (fewer if told to
    stop), see its answers sent, and end (never returns)."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _end_with(worker)
        code = 0
        for _ in range(TASKS_PER_CHILD):
            task = tasks.get()
            if task is None:
                code = _STOPPED
                break
            results.put(handle(task))
        results.close()
        results.join_thread()  # the answers are in the pipe before the process ends
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _end_with(parent: int) -> None:
    """Have the kernel end this process when its parent, process ``parent``, ends (Linux;
    elsewhere nothing)."""
    libc = glibc()
    if libc is not None and hasattr(libc, "prctl"):
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != parent:  # the parent ended before the call
            os._exit(1)


_lock = threading.Lock()
_kept: Workers | None = None
_timer: threading.Timer | None = None


def take(count: int, handle: Callable[[Any], Any], name: str = "chaingraph-worker") -> Workers:
    """The kept workers if they are ``count`` running ``handle``, all alive; else new ones
    (the kept ones, if any, stopped)."""
    global _kept
    with _lock:
        kept, _kept = _kept, None
        _cancel()
    if kept is not None and len(kept.procs) == count and kept.handle is handle and kept.alive():
        return kept
    if kept is not None:
        kept.stop(idle=kept.alive())
    return Workers(count, handle, name)


def keep(workers: Workers) -> None:
    """Keep ``workers`` (every task answered) for the next :func:`take` within
    :data:`KEEP_SECONDS`; any workers kept before are stopped."""
    global _kept, _timer
    with _lock:
        before, _kept = _kept, workers
        _cancel()
        _timer = threading.Timer(KEEP_SECONDS, release)
        _timer.daemon = True
        _timer.start()
    if before is not None and before is not workers:
        before.stop(idle=True)


def release() -> None:
    """Stop the kept workers now (if any)."""
    global _kept
    with _lock:
        kept, _kept = _kept, None
        _cancel()
    if kept is not None:
        kept.stop(idle=True)


def _cancel() -> None:  # under _lock
    global _timer
    if _timer is not None:
        _timer.cancel()
        _timer = None


def _forgotten_in_child() -> None:
    """A process forked from this one has neither the workers nor the timer (they are this
    one's), and its lock is new (the timer's thread may have held this one's)."""
    global _lock, _kept, _timer
    _lock, _kept, _timer = threading.Lock(), None, None


os.register_at_fork(after_in_child=_forgotten_in_child)
atexit.register(release)  # told to finish before multiprocessing's exit ends them
