"""Many trajectories against many tasks: :func:`score_files` (the library twin of
``chaingraph score``), macro averages and threshold sensitivity.

Tasks come from a task file, a JSON list or JSON Lines of tasks, or a directory of task
files; trajectories from JSON Lines, a JSON list or one object per file. A trajectory for
an unknown task, or a malformed one, becomes a :class:`Failure` naming file, item and
event; the other items are still scored. Macro averages are plain means over every scored
item (a ratio with an empty denominator counts as 0); the round of the first revisit is
averaged over the items that have one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from chaingraph.errors import BadFile, ChaingraphError, InvalidTask, InvalidTrajectory
from chaingraph.files import json_problem, read_text
from chaingraph.lookups import StoreValues
from chaingraph.necessity import GraphCache
from chaingraph.scoring.claims import GraphJudge, SupportJudge
from chaingraph.scoring.reference import Resolver
from chaingraph.scoring.score import ItemScore, Metrics, _score
from chaingraph.scoring.scorer import TaskScorer
from chaingraph.scoring.visual import DEFAULT, Thresholds, visual_metrics
from chaingraph.tasks import Task, load_task, parse_task
from chaingraph.trajectory import AssertEvent, Trajectory, iter_trajectories

if TYPE_CHECKING:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.store import Store

__all__ = [
    "SCORE_SCHEMA_VERSION",
    "SENSITIVITY",
    "Failure",
    "ScoreReport",
    "SensitivityRow",
    "load_tasks",
    "macro_average",
    "score_files",
]

SCORE_SCHEMA_VERSION = "chaingraph.score/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: thresholds varied one at a time, the others at their defaults
SENSITIVITY: dict[str, tuple[float, ...]] = {
    "iou": (0.3, 0.5, 0.7), "coverage": (0.25, 0.5, 0.75), "max_share": (0.25, 0.5, 0.75)}
_VISUAL = ("va_p", "va_r", "nvrc", "dri_ratio", "revisit")


class Failure(BaseModel):
    model_config = _FROZEN
    file: str
    item: int | None = None
    error: str


class SensitivityRow(BaseModel):
    """Macro visual metrics with one threshold changed."""

    model_config = _FROZEN
    parameter: str
    value: float
    metrics: dict[str, float]


class ScoreReport(BaseModel):
    """Per-item scores, macro averages, sensitivity to thresholds, failures
    (schema ``score-report``)."""

    model_config = _FROZEN
    schema_version: str = SCORE_SCHEMA_VERSION
    thresholds: dict[str, float]
    items: tuple[ItemScore, ...]
    macro: dict[str, float | None]
    sensitivity: tuple[SensitivityRow, ...] = ()
    failures: tuple[Failure, ...] = ()


def macro_average(metrics: Sequence[Metrics]) -> dict[str, float | None]:
    """Mean of every metric over the items (``first_revisit_round`` over those that have one).

    >>> m = dict(nc=1.0, rc=0.0, va_p=0, va_r=0, nvrc=0, ea=0, aeba=0, gea=0, dri=0, dri_ratio=0,
    ...          revisit=0, revisits=0, first_revisit_round=None, same_anchor_returns=0,
    ...          other_anchor_returns=0, nodes_required=1, nodes_matched=1, edges_required=0,
    ...          edges_matched=0, claims=0, supported=0, bound=0, anchors=0, predicted_anchors=0,
    ...          matched_anchors=0)
    >>> a = macro_average([Metrics(**m), Metrics(**{**m, "nc": 0.5})])
    >>> a["nc"], a["first_revisit_round"], a["items"]
    (0.75, None, 2.0)
    """
    out: dict[str, float | None] = {"items": float(len(metrics))}
    for name in Metrics.model_fields:
        vals = [getattr(m, name) for m in metrics]
        vals = [v for v in vals if v is not None]
        out[name] = sum(vals) / len(vals) if vals else (None if name == "first_revisit_round" else 0.0)
    return out


def load_tasks(path: str | Path) -> tuple[dict[str, Task], list[Failure]]:
    """Tasks by id from a task file, a JSON list or JSON Lines of tasks, or a directory."""
    p = Path(path)
    tasks: dict[str, Task] = {}
    failures: list[Failure] = []

    def add(task: Task) -> None:
        tasks.setdefault(task.id, task)

    if p.is_dir():
        for f in sorted(p.glob("*.json")):
            try:
                add(load_task(f))
            except InvalidTask as exc:
                failures.append(Failure(file=str(f), error=str(exc)))
        return tasks, failures
    try:
        text = read_text(p, what="tasks file")
    except BadFile as exc:
        raise InvalidTask(exc.problem, file=str(p)) from None
    try:
        data: Any = json.loads(text)
        rows: list[tuple[int | None, Any]] = (list(enumerate(data, start=1)) if isinstance(data, list)
                                              else [(None, data)])
    except (RecursionError, ValueError) as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise InvalidTask(json_problem(exc), file=str(p)) from None
        rows = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((line_no, json.loads(line)))
                except json.JSONDecodeError as exc:
                    error = f"{p}: item {line_no}: malformed JSON at column {exc.colno}: {exc.msg}"
                    failures.append(Failure(file=str(p), item=line_no, error=error))
                except (RecursionError, ValueError) as exc:
                    failures.append(Failure(file=str(p), item=line_no,
                                            error=f"{p}: item {line_no}: {json_problem(exc)}"))
    for item, row in rows:
        try:
            task = parse_task(row, file=str(p) if item is None else f"{p}: item {item}")
            task._file = str(p)
            add(task)
        except InvalidTask as exc:
            failures.append(Failure(file=str(p), item=item, error=str(exc)))
    return tasks, failures


def score_files(tasks: str | Path, trajectories: Iterable[str | Path], *, store: str | Path | None = None,
                thresholds: Thresholds = DEFAULT, judge: SupportJudge | None = None,
                sensitivity: bool = True) -> ScoreReport:
    """Score every trajectory in ``trajectories`` against its task in ``tasks``."""
    known, failures = load_tasks(tasks)
    cache = GraphCache(store=store)
    scorers: dict[str, TaskScorer] = {}
    resolvers = _Resolvers()
    done: list[tuple[TaskScorer, Trajectory, ItemScore]] = []
    try:
        for path in trajectories:
            file = str(path)
            for n, got in iter_trajectories(path):
                if isinstance(got, InvalidTrajectory):
                    failures.append(Failure(file=file, item=n, error=str(got)))
                    continue
                label = f"item {n}" + (f" ({got.id})" if got.id else "")
                task = known.get(got.task)
                if task is None:
                    failures.append(Failure(file=file, item=n, error=f"{file}: {label}: task: no task has id "
                                            f"{got.task!r}; check the trajectory's task or the TASKS path"))
                    continue
                try:
                    sc = scorers.get(task.id)
                    if sc is None:
                        base = Path(task.file).parent if task.file else None
                        graph, values = cache.get(task, base=base, file=task.file or "")
                        st = values.store if isinstance(values, StoreValues) else None
                        sc = TaskScorer(task, graph, values, st, resolver=resolvers.get(st, graph),
                                        judge=judge or GraphJudge())
                        scorers[task.id] = sc
                    item = _score(sc, got, thresholds).model_copy(update={"file": file, "item": n})
                except ChaingraphError as exc:
                    failures.append(Failure(file=file, item=n, error=f"{file}: {label}: {exc}"))
                    continue
                done.append((sc, got, item))
        items = [d[2] for d in done]
        rows = _sensitivity(done, thresholds) if sensitivity and done else []
        return ScoreReport(thresholds={"iou": thresholds.iou, "coverage": thresholds.coverage,
                                       "max_share": thresholds.max_share},
                           items=tuple(items), macro=macro_average([i.metrics for i in items]),
                           sensitivity=tuple(rows), failures=tuple(failures))
    finally:
        cache.close()


class _Resolvers:
    """One :class:`Resolver` per store (or, without one, per graph): it reads every label
    and alias, and its cache of resolved mentions serves every task of the store."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[object, Resolver]] = {}  # id -> (the source, kept alive; its resolver)

    def get(self, store: Store | None, graph: EvidenceGraph) -> Resolver:
        source: object = store if store is not None else graph
        got = self._made.get(id(source))
        if got is None:
            got = self._made[id(source)] = (source, Resolver.for_source(store, graph))
        return got[1]


def _sensitivity(done: list[tuple[TaskScorer, Trajectory, ItemScore]],
                 base: Thresholds) -> list[SensitivityRow]:
    rows = []
    for name, grid in SENSITIVITY.items():
        for value in grid:
            th = Thresholds(**{**base.__dict__, name: value})
            sums = dict.fromkeys(_VISUAL, 0.0)
            for sc, traj, _item in done:
                asserted = {i: sc.resolver.entity(ev.entity)[0]  # type: ignore[union-attr]
                            for i, ev in enumerate(traj.events) if isinstance(ev, AssertEvent)}
                v = visual_metrics(traj, sc.anchors, lambda a, b, sc=sc: sc.same(a, b) is not None,  # type: ignore[misc]
                                   asserted, th)
                for key, x in (("va_p", v.va_p), ("va_r", v.va_r), ("nvrc", v.nvrc),
                               ("dri_ratio", v.dri_ratio), ("revisit", float(v.revisits > 0))):
                    sums[key] += x
            rows.append(SensitivityRow(parameter=name, value=value,
                                       metrics={k: s / len(done) for k, s in sums.items()}))
    return rows
