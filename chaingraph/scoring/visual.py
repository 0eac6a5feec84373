"""The visual half of §12: anchor precision/recall, NVRC, DRI and revisits, from boxes alone.

Given the reference anchors (box, entity, whether some component needs it) and the
trajectory's events, with a function deciding whether two entities are the same:

* **VA-P / VA-R** — ``|M| / |Â|`` and ``|M| / |A|``, ``M`` a maximum one-to-one matching of
  predicted anchors (distinct ``assert`` events: box and entity) to reference anchors; a
  pair may match when the entities are the same and the boxes' IoU ≥ ``iou``.
* **eligible local interaction** — a ``view`` whose box covers at most ``max_share`` of the
  image; it *covers* an anchor when it holds ≥ ``coverage`` of the anchor's area.
* **NVRC** — share of reference anchors covered by an eligible interaction, whatever
  entity was asserted.
* **DRI** — distinct regions of necessary anchors so covered; ``DRI / m``.
* **revisit** — an inspection (eligible view covering reference anchors), then at least
  one evidence-producing search (one that returned results, or a retrieved source), then
  an inspection of the same anchor or of another necessary anchor not yet resolved (no
  correct ``assert`` for it so far). A view identical to the event right before it is an
  immediate duplicate and is ignored. The first revisit's round is reported.

Every ratio with an empty denominator is 0.

>>> from chaingraph.trajectory import parse_trajectory
>>> t = parse_trajectory({"task": "t", "image_size": [100, 100], "events": [
...     {"kind": "view", "box": [0, 0, 20, 20]}, {"kind": "search", "results": ["u"]},
...     {"kind": "view", "box": [0, 0, 20, 20]}]})
>>> v = visual_metrics(t, [RefAnchor("Q1", (0, 0, 10, 10), True)], lambda a, b: a == b, {})
>>> v.nvrc, v.dri, v.revisits, v.first_revisit_round
(1.0, 1, 1, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from chaingraph.trajectory import AssertEvent, Box, Trajectory, ViewEvent, area
from chaingraph.trajectory import coverage as covered_share
from chaingraph.trajectory import iou as box_iou

__all__ = ["DEFAULT", "RefAnchor", "Thresholds", "VisualMetrics", "max_matching", "visual_metrics"]


@dataclass(frozen=True)
class Thresholds:
    """IoU for an anchor match; share of an anchor a crop must hold; largest share of the
    image a crop may cover and still be a local interaction."""

    iou: float = 0.5
    coverage: float = 0.5
    max_share: float = 0.5


#: the thresholds of the paper: IoU 0.5, coverage 0.5, crops of at most half the image
DEFAULT = Thresholds()


@dataclass(frozen=True)
class RefAnchor:
    entity: str
    box: Box
    necessary: bool


@dataclass(frozen=True)
class VisualMetrics:
    va_p: float
    va_r: float
    matched: int
    predicted: int
    nvrc: float
    dri: int
    dri_ratio: float
    revisits: int
    first_revisit_round: int | None
    same_anchor_returns: int
    other_anchor_returns: int


def max_matching(edges: Sequence[Sequence[int]], right: int) -> int:
    """Size of a maximum matching; ``edges[i]`` lists the right vertices left ``i`` may take.

    >>> max_matching([[0, 1], [0]], 2)
    2
    """
    owner = [-1] * right

    def augment(i: int, seen: list[bool]) -> bool:
        for j in edges[i]:
            if not seen[j]:
                seen[j] = True
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, [False] * right) for i in range(len(edges)))


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def visual_metrics(traj: Trajectory, anchors: Sequence[RefAnchor], same: Callable[[str, str], bool],
                   asserted: Mapping[int, str | None], thresholds: Thresholds | None = None) -> VisualMetrics:
    """The visual metrics of ``traj``; ``asserted`` maps an assert event's index to its
    resolved entity (``None``: unresolved, it can match nothing)."""
    th = thresholds or DEFAULT
    preds = list(dict.fromkeys((ev.box, asserted.get(i)) for i, ev in enumerate(traj.events)
                               if ev.kind == "assert"))
    edges = [[j for j, a in enumerate(anchors) if ent is not None and same(ent, a.entity)
              and box_iou(box, a.box) >= th.iou] for box, ent in preds]
    matched = max_matching(edges, len(anchors))

    def size(ev: ViewEvent | AssertEvent) -> tuple[float, float]:
        s = ev.image_size or traj.image_size
        assert s is not None  # parse_trajectory guarantees it
        return s

    def local(ev: ViewEvent) -> bool:
        w, h = size(ev)
        return area(ev.box) <= th.max_share * w * h

    covered: set[int] = set()
    revisits, first, same_n, other_n = 0, None, 0, 0
    resolved: set[int] = set()
    last: set[int] | None = None
    searches = 0
    for i, ev in enumerate(traj.events):
        duplicate = traj.immediate_duplicate(i)
        if ev.kind == "search" or ev.kind == "retrieve":  # kind tags: pydantic's isinstance is slow
            if last is not None and (ev.kind == "retrieve" or ev.results):
                searches += 1
        elif ev.kind == "assert":
            ent = asserted.get(i)
            resolved |= {j for j, a in enumerate(anchors) if ent is not None and same(ent, a.entity)
                         and box_iou(ev.box, a.box) >= th.iou}
        elif ev.kind == "view" and not duplicate and local(ev):
            seen = {j for j, a in enumerate(anchors) if covered_share(ev.box, a.box) >= th.coverage}
            if not seen:
                continue
            covered |= seen
            if last is not None and searches:
                back = seen & last
                other = {j for j in seen - last if anchors[j].necessary and j not in resolved}
                if back or other:
                    revisits += 1
                    first = traj.round_of(i) if first is None else first
                    same_n += bool(back)
                    other_n += not back
            last, searches = seen, 0
    m = len(anchors)
    regions = {anchors[j].box for j in covered if anchors[j].necessary}
    dri = len(regions)
    return VisualMetrics(
        va_p=_ratio(matched, len(preds)), va_r=_ratio(matched, m), matched=matched, predicted=len(preds),
        nvrc=_ratio(len(covered), m), dri=dri, dri_ratio=_ratio(dri, m), revisits=revisits,
        first_revisit_round=first, same_anchor_returns=same_n, other_anchor_returns=other_n)
