"""One progress protocol: long library calls tell a callback what they have done.

Every library function that reports progress takes ``progress: Progress | None = None``
and calls it with a :class:`ProgressEvent`; the library never draws anything itself
(the command line turns events into rich progress bars, in :mod:`chaingraph.cli.progress`).
A pipeline can log events, count them, or ignore them:

>>> events: list[ProgressEvent] = []
>>> tell: Progress = events.append
>>> tell(ProgressEvent("load", 512, 1024, unit="bytes", item="dump.json"))
>>> tell(ProgressEvent("collect", 3, 10, unit="entities", item="layer 1",
...                    detail={"requests": 2, "retries": 0, "cache_hits": 1}))
>>> [(e.stage, e.item, e.fraction) for e in events]
[('load', 'dump.json', 0.5), ('collect', 'layer 1', 0.3)]

Events of one ``(stage, item)`` pair describe one piece of work (one file, one crawl
layer): ``done`` grows towards ``total``; ``detail`` carries running counters of it.
``current`` names what is being worked on; ``message`` is a line worth showing on its own
(what is about to happen).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Progress", "ProgressEvent"]


@dataclass(frozen=True)
class ProgressEvent:
    """What a long call has done so far.

    ``stage``: which call or phase (``load``, ``collect``, ``expand``, ``audit``);
    ``done`` of ``total`` (``None`` when unknown) counted in ``unit`` (``bytes``,
    ``entities``, ``seeds``, ``files``); ``item``: which piece of the stage the counts are
    for (a file, ``layer 2``; empty when the stage is one piece); ``current``: what is being
    worked on now (the next file); ``detail``: running counters (``requests``, ``retries``,
    ``cache_hits`` ...); ``message``: a line worth showing on its own.
    """

    stage: str
    done: int
    total: int | None = None
    unit: str = "items"
    item: str = ""
    current: str = ""
    detail: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    message: str = ""

    def __post_init__(self) -> None:
        # an event is a value: freeze the counters it was given
        object.__setattr__(self, "detail", MappingProxyType(dict(self.detail)))

    @property
    def fraction(self) -> float | None:
        """``done / total``, or ``None`` when the total is unknown or zero."""
        return self.done / self.total if self.total else None


#: the callback every long library call accepts as ``progress``
Progress = Callable[[ProgressEvent], None]
