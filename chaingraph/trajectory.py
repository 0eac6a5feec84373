"""The agent trajectory record (``chaingraph schema trajectory``) and the box geometry of §12.

A trajectory is what an agent did on one task, in time order (DESIGN §12): the regions
of the image it looked at, the entities it asserted for regions, the searches it issued
and sources it retrieved, and the atomic claims it made. ``chaingraph score`` compares it
with the task's reference graph (:mod:`chaingraph.scoring`).

============  ==================================================================================
``view``      a region viewed (crop / zoom): ``box`` in image pixels ``[left, top, right, bottom]``
``assert``    an entity asserted for a region: ``box`` and ``entity`` (a Q-id or a label)
``search``    a search issued: ``query`` and the ``results`` (URLs) it returned
``retrieve``  a source retrieved: ``url``
``claim``     an atomic claim: ``subject`` ``relation`` ``object`` (or ``value``), ``direction``
              (``forward``: the statement is ``subject relation object`` in Wikidata's direction;
              ``backward``: it is ``object relation subject`` — the agent walked against it), the
              cited ``source`` (URL), the ``anchor`` (entity) and ``component`` (id) it serves
============  ==================================================================================

Entities are Q-ids or labels (resolved later through the store's labels and aliases);
relations are property ids (``P69``, ``wdt:P69``) or labels. A box needs the image size:
the event's ``image_size`` or the trajectory's. :func:`parse_trajectory` turns every problem
into one :class:`~chaingraph.errors.InvalidTrajectory` line naming file, item and event.

>>> t = parse_trajectory({"task": "t1", "image_size": [100, 80], "events": [
...     {"kind": "view", "box": [0, 0, 50, 40]},
...     {"kind": "claim", "subject": "Q1", "relation": "P361", "object": "Q2"}]})
>>> [e.kind for e in t.events], iou((0, 0, 10, 10), (5, 0, 15, 10))
(['view', 'claim'], 0.3333333333333333)
>>> try:
...     parse_trajectory({"task": "t1", "events": [{"kind": "view", "box": [0, 0, 500, 40],
...                                                  "image_size": [100, 80]}]}, file="a.jsonl", item=3)
... except InvalidTrajectory as err:
...     print(err)
a.jsonl: item 3: events[0].box: box [0, 0, 500, 40] lies outside the 100×80 image; fix the box or image_size
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chaingraph.errors import BadFile, InvalidTrajectory
from chaingraph.files import json_problem, read_text
from chaingraph.tasks import json_path
from chaingraph.values import Value

__all__ = [
    "TRAJECTORY_SCHEMA_VERSION",
    "AssertEvent",
    "Box",
    "ClaimEvent",
    "Event",
    "RetrieveEvent",
    "SearchEvent",
    "Trajectory",
    "ViewEvent",
    "area",
    "coverage",
    "iou",
    "iter_trajectories",
    "parse_trajectory",
]

TRAJECTORY_SCHEMA_VERSION = "chaingraph.trajectory/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid")
Box = tuple[float, float, float, float]


def _check_box(box: Box | None) -> Box | None:
    if box is not None and not (0 <= box[0] < box[2] and 0 <= box[1] < box[3]):
        raise ValueError(f"box {list(box)} must be [left, top, right, bottom] with 0 <= left < right "
                         "and 0 <= top < bottom")
    return box


def _check_size(size: tuple[float, float] | None) -> tuple[float, float] | None:
    if size is not None and not (size[0] > 0 and size[1] > 0):
        raise ValueError(f"image_size {list(size)} must be [width, height], both positive")
    return size


class _Event(BaseModel):
    model_config = _FROZEN
    id: str | None = Field(default=None, description="free identifier; never affects scores")
    round: int | None = Field(default=None, ge=0, description="agent turn (default: event position, 1-based)")


class _Boxed(_Event):
    box: Box = Field(description="image pixels: left, top, right, bottom")
    image_size: tuple[float, float] | None = Field(default=None, description="width, height")

    @field_validator("box")
    @classmethod
    def _box(cls, box: Box) -> Box | None:
        return _check_box(box)

    @field_validator("image_size")
    @classmethod
    def _size(cls, size: tuple[float, float] | None) -> tuple[float, float] | None:
        return _check_size(size)


class ViewEvent(_Boxed):
    """A region viewed: a crop or zoom of the image."""

    kind: Literal["view"] = "view"


class AssertEvent(_Boxed):
    """An entity (Q-id or label) asserted for a region."""

    kind: Literal["assert"] = "assert"
    entity: str = Field(min_length=1)


class SearchEvent(_Event):
    """A search issued; it produced evidence when it returned at least one result."""

    kind: Literal["search"] = "search"
    query: str = ""
    results: tuple[str, ...] = Field(default=(), description="URLs the search returned")


class RetrieveEvent(_Event):
    """A source retrieved (evidence-producing)."""

    kind: Literal["retrieve"] = "retrieve"
    url: str = Field(min_length=1)


class ClaimEvent(_Event):
    """An atomic claim; ``object`` (entity) or ``value`` (a Wikidata value), not both."""

    kind: Literal["claim"] = "claim"
    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    object: str | None = None
    value: Value | None = Field(default=None, discriminator="kind")
    direction: Literal["forward", "backward"] = "forward"
    source: str | None = Field(default=None, description="cited source URL")
    anchor: str | None = Field(default=None, description="the anchor entity (Q-id or label) it serves")
    component: str | None = Field(default=None, description="the component chain id it serves")

    @model_validator(mode="after")
    def _one(self) -> ClaimEvent:
        if (self.object is None) == (self.value is None):
            raise ValueError("give exactly one of 'object' or 'value'")
        return self


Event = Annotated[ViewEvent | AssertEvent | SearchEvent | RetrieveEvent | ClaimEvent,
                  Field(discriminator="kind")]


class Trajectory(BaseModel):
    """One agent run on one task: its events in time order."""

    model_config = _FROZEN
    schema_version: str = TRAJECTORY_SCHEMA_VERSION
    id: str | None = None
    task: str = Field(min_length=1, description="the task id")
    image_size: tuple[float, float] | None = Field(default=None, description="width, height")
    answer: str | None = None
    events: tuple[Event, ...] = ()

    @field_validator("image_size")
    @classmethod
    def _size(cls, size: tuple[float, float] | None) -> tuple[float, float] | None:
        return _check_size(size)

    def round_of(self, index: int) -> int:
        """The round of event ``index``: its own, else its 1-based position, where a view
        repeating the view right before it (an immediate duplicate crop) shares its round."""
        r = self.events[index].round
        if r is not None:
            return r
        position = 0
        for i in range(index + 1):
            position += not self.immediate_duplicate(i)
        return max(position, 1)

    def immediate_duplicate(self, index: int) -> bool:
        """Is event ``index`` a view of the same box as the event right before it?"""
        ev = self.events[index]
        prev = self.events[index - 1] if index > 0 else None
        return ev.kind == "view" and prev is not None and prev.kind == "view" and prev.box == ev.box


# -- geometry -------------------------------------------------------------------------
def area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _overlap(a: Box, b: Box) -> float:
    return area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes."""
    inter = _overlap(a, b)
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def coverage(crop: Box, region: Box) -> float:
    """Share of ``region``'s area inside ``crop``.

    >>> coverage((0, 0, 10, 10), (5, 5, 15, 15))
    0.25
    """
    a = area(region)
    return _overlap(crop, region) / a if a > 0 else 0.0


# -- reading ----------------------------------------------------------------------------
def _label(item: int | None, ident: str | None) -> str:
    if item is None:
        return ""
    return f"item {item}" + (f" ({ident})" if ident else "")


def parse_trajectory(data: Mapping[str, Any] | Any, *, file: str = "", item: int | None = None) -> Trajectory:
    """Validate one decoded trajectory: the schema, then every box against its image."""
    ident = data.get("id") if isinstance(data, Mapping) and isinstance(data.get("id"), str) else None
    where = _label(item, ident)
    try:
        traj = Trajectory.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [p for p in err["loc"] if not (isinstance(p, str) and (p in ("view", "assert", "search",
               "retrieve", "claim", "time", "quantity", "entity", "string", "monolingualtext",
               "globecoordinate") or p.startswith("function-")))]
        raise InvalidTrajectory(f"{err['msg']}; fix the trajectory (schema: chaingraph schema trajectory)",
                                file=file, item=where, path=json_path(loc)) from None
    for i, ev in enumerate(traj.events):
        if isinstance(ev, ViewEvent | AssertEvent):
            size = ev.image_size or traj.image_size
            if size is None:
                raise InvalidTrajectory("a box needs the image size; give image_size on the event or the "
                                        "trajectory", file=file, item=where, path=f"events[{i}].image_size")
            if ev.box[2] > size[0] or ev.box[3] > size[1]:
                raise InvalidTrajectory(
                    f"box {[_num(x) for x in ev.box]} lies outside the {_num(size[0])}×{_num(size[1])} "
                    "image; fix the box or image_size", file=file, item=where, path=f"events[{i}].box")
    return traj


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def iter_trajectories(path: str | Path) -> Iterator[tuple[int, Trajectory | InvalidTrajectory]]:
    """Every trajectory of a file — JSON Lines (one per line), a JSON list, or one object —
    as ``(item, trajectory or its error)``, items numbered from 1; a bad item does not stop
    the others. An unreadable file raises :class:`InvalidTrajectory` at once."""
    file = str(path)
    try:
        text = read_text(path, what="file")
    except BadFile as exc:
        raise InvalidTrajectory(exc.problem, file=file) from None
    items: list[tuple[int, Any]] = []
    stripped = text.lstrip()
    whole: Any = None
    try:  # a JSON list, or one (possibly pretty-printed) object
        whole = json.loads(text) if stripped.startswith(("[", "{")) else None
    except json.JSONDecodeError as exc:
        if stripped.startswith("["):
            raise InvalidTrajectory(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                                    file=file) from None
    except (RecursionError, ValueError) as exc:  # 100k-deep nesting; a 5,000-digit integer
        raise InvalidTrajectory(json_problem(exc), file=file) from None
    if isinstance(whole, list):
        items = list(enumerate(whole, start=1))
    elif whole is not None:
        items = [(1, whole)]
    else:  # JSON Lines: item n is line n
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                items.append((n, InvalidTrajectory(f"malformed JSON at column {exc.colno}: {exc.msg}",
                                                   file=file, item=f"item {n}")))
            except (RecursionError, ValueError) as exc:
                items.append((n, InvalidTrajectory(json_problem(exc), file=file, item=f"item {n}")))
    for n, data in items:
        if isinstance(data, InvalidTrajectory):
            yield n, data
            continue
        try:
            yield n, parse_trajectory(data, file=file, item=n)
        except InvalidTrajectory as err:
            yield n, err
