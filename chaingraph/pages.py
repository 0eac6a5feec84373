"""Memory pages for the compact graph build: numpy's huge-page advice off while it runs.

On Linux numpy advises the kernel to back every array of 4 MB or more with transparent
huge pages (``madvise(MADV_HUGEPAGE)``; numpy's "Global state" docs). Where the kernel
honours that only for advised memory (``transparent_hugepage/enabled`` = ``madvise``), a
huge-page fault zeroes 2 MB at once and, when no free 2 MB block is at hand, compacts
memory first; in a virtual machine that hands freed memory back to its host (free page
reporting) a fresh 2 MB block is also faulted in by the host. The build's arrays are
written once, front to back (sorts and block-wise passes), so huge pages buy it little,
and on such machines their faults were most of its system time at 10 M edges.

:func:`small_pages` switches numpy's advice off for a ``with`` block (numpy's own
``_set_madvise_hugepage``, which returns the setting it replaces) and puts back what was
there before, also when the block raises. A user who chose numpy's behaviour with the
``NUMPY_MADVISE_HUGEPAGE`` environment variable keeps it: then nothing is switched.
The setting is one per process, so the switch is counted: with builds in several
threads, the first to enter switches it off and the last to leave restores it (arrays
other threads allocate meanwhile get small pages too; nothing else changes for them).

>>> import numpy as np
>>> before = _advice(None)
>>> with small_pages() as switched:
...     inside = _advice(None)
>>> _advice(None) == before, inside is False or not switched
(True, True)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["small_pages"]

#: numpy's environment variable for the advice: set, it is the user's choice, and kept
ENV = "NUMPY_MADVISE_HUGEPAGE"

_lock = threading.Lock()
_depth = 0
_saved: bool | None = None


def _setter() -> Callable[[bool], bool] | None:
    """numpy's ``_set_madvise_hugepage`` (``numpy._core.multiarray`` from numpy 2,
    ``numpy.core.multiarray`` before), or ``None`` where it is missing."""
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy < 2
        from numpy.core import multiarray  # type: ignore[no-redef]
    return getattr(multiarray, "_set_madvise_hugepage", None)


def _advice(value: bool | None) -> bool | None:
    """numpy's current advice (``value`` ``None``: read, by setting it to what it was), or
    set it to ``value`` and return the one it replaced; ``None`` without numpy's switch."""
    setter = _setter()
    if setter is None:
        return None
    if value is None:
        current = setter(False)
        setter(current)
        return current
    return setter(value)


@contextmanager
def small_pages() -> Iterator[bool]:
    """numpy's huge-page advice off inside the block, restored after it (also on error);
    yields whether this call switched it (``False`` when the user set ``NUMPY_MADVISE_HUGEPAGE``
    or numpy has no switch). Nested and concurrent uses count: the outermost restores."""
    global _depth, _saved
    if os.environ.get(ENV) is not None or _setter() is None:
        yield False
        return
    with _lock:
        if _depth == 0:
            _saved = _advice(False)
        _depth += 1
    try:
        yield True
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                _advice(_saved)
                _saved = None
