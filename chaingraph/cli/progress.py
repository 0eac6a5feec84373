"""The one place progress is drawn: :class:`~chaingraph.progress.ProgressEvent` s become rich
progress bars on stderr (one bar per ``(stage, item)``; messages print above the bars)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath
from typing import Any

from chaingraph.progress import Progress, ProgressEvent
from chaingraph.terminal import safe_markup

__all__ = ["progress_bars"]


def _count(done: int, total: int | None, unit: str) -> str:
    """``3/10 entities``; bytes in decimal units (``1.2/3.4 MB``).

    >>> _count(3, 10, "entities"), _count(5, None, "files"), _count(999, 2_500_000, "bytes")
    ('3/10 entities', '5 files', '0.0/2.5 MB')
    >>> _count(500, 700, "bytes")
    '500/700 bytes'

    """
    if unit == "bytes":
        scale = max(done, total or 0)
        div, name = next(((d, n) for d, n in ((10**9, "GB"), (10**6, "MB"), (10**3, "kB")) if scale >= d),
                         (1, "bytes"))
        shown = f"{done / div:.1f}" if div > 1 else str(done)
        if total is not None:
            shown += f"/{total / div:.1f}" if div > 1 else f"/{total}"
        return f"{shown} {name}"
    return f"{done} {unit}" if total is None else f"{done}/{total} {unit}"


def _detail(detail: dict[str, int]) -> str:
    return " · ".join(f"{k.replace('_', ' ')} {v}" for k, v in detail.items())


@contextmanager
def progress_bars(enabled: bool | None, *, transient: bool = False) -> Iterator[Progress | None]:
    """A :data:`~chaingraph.progress.Progress` callback drawing on stderr while the block
    runs, or ``None`` when off (``enabled=None``: only when stderr is a terminal).
    ``transient`` bars vanish when the block ends; others stay as a summary."""
    if not (sys.stderr.isatty() if enabled is None else enabled):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, TaskID, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    bars = Bars(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                console=Console(stderr=True), transient=transient)
    tasks: dict[tuple[str, str], TaskID] = {}

    def show(event: ProgressEvent) -> None:
        if event.message:
            bars.console.print(f"[dim]{safe_markup(event.message)}[/dim]", highlight=False)
        key = (event.stage, event.item)
        total, done = event.total, event.done
        if total == 0:  # nothing to do is done
            total, done = 1, 1
        fields: dict[str, Any] = {"count": _count(event.done, event.total, event.unit),
                                  "detail": _detail(dict(event.detail))}
        what = event.current or event.item
        shown = PurePath(what).name if "/" in what else what
        fields["description"] = safe_markup(f"{event.stage} {shown}".strip())
        if key not in tasks:
            tasks[key] = bars.add_task(total=total, **fields)
        bars.update(tasks[key], completed=done, total=total, **fields)

    with bars:
        yield show
