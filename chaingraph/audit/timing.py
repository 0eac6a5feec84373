"""Time sensitivity of a corpus record: the reason codes chaingraph wrote (DESIGN §11).

A chain record carries ``time_sensitivity`` on each step and on the chain; a task record on
the steps of each component and on the task. :func:`record_sensitivity` reads them back,
whatever the record's nesting: the record's own reason (else the first reason of
:data:`~chaingraph.timeline.SENSITIVITY` among its steps), and the reason of every step
that has one. Records written without time information count as ``unrecorded``.

>>> record_sensitivity({"time_sensitivity": "ended", "steps": [
...     {"time_sensitivity": "stable"}, {"time_sensitivity": "ended"}]})
('ended', ['stable', 'ended'])
>>> record_sensitivity({"components": [{"steps": [{"time_sensitivity": "superseded"}]}]})
('superseded', ['superseded'])
>>> record_sensitivity({"steps": [["Q1", "P31", "Q2"]]})
('unrecorded', [])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chaingraph.timeline import SENSITIVITY, overall

__all__ = ["UNRECORDED", "record_sensitivity"]

#: the reason of a record or step written without time information
UNRECORDED = "unrecorded"
_KEYS = ("steps", "edges", "components", "chains", "chain")


def _steps(value: Any, out: list[str], depth: int = 0) -> None:
    if depth > 8:
        return
    if isinstance(value, Mapping):
        reason = value.get("time_sensitivity")
        if depth and reason in SENSITIVITY and not any(k in value for k in _KEYS):
            out.append(reason)
        for key in _KEYS:
            if key in value:
                _steps(value[key], out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _steps(item, out, depth + 1)


def record_sensitivity(record: Any) -> tuple[str, list[str]]:
    """``(record reason, step reasons)``; the record reason is ``unrecorded`` when neither
    the record nor any step carries one."""
    steps: list[str] = []
    _steps(record, steps)
    own = record.get("time_sensitivity") if isinstance(record, Mapping) else None
    if own in SENSITIVITY:
        return own, steps
    return (overall(steps) if steps else UNRECORDED), steps
