"""What a clue ablation reports (:func:`chaingraph.necessity.check_necessity`): the
answer set of each evaluation, each clue's and each component's verdict, and the whole
:class:`NecessityReport` (schema ``necessity-report``). Frozen pydantic records, so a
report is data a pipeline can keep, compare and serialise.

>>> AnswerSet(count=1, first=("Q3",), target_in=True, unique=True, paths_to_target=1,
...           shortest_path=None).unique
True
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from chaingraph.patterns import PatternResult
from chaingraph.records import Level
from chaingraph.timeline import Sensitivity

__all__ = [
    "NECESSITY_SCHEMA_VERSION",
    "AnswerSet",
    "BatchResult",
    "ClueAblation",
    "ComponentAblation",
    "ComponentCheck",
    "NecessityReport",
    "PathRecord",
    "TaskFailure",
    "Verdict",
]

NECESSITY_SCHEMA_VERSION = "chaingraph.necessity/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid")
Verdict = Literal["redundant", "necessary", "review"]


class PathRecord(BaseModel):
    """A witness match: nodes ``x0..xk`` and per step property, direction, statement id.
    ``hops``: its length with repeated-node detours cut out (``k`` when ``simple``)."""

    model_config = _FROZEN
    nodes: tuple[str, ...]
    steps: tuple[tuple[str, Literal["forward", "backward"], str], ...]
    simple: bool
    hops: int


class AnswerSet(BaseModel):
    """One evaluation: answer-set size, its first members (sorted), the target's place."""

    model_config = _FROZEN
    count: int
    first: tuple[str, ...]
    target_in: bool
    unique: bool
    paths_to_target: int
    shortest_path: PathRecord | None

    @classmethod
    def of(cls, r: PatternResult) -> AnswerSet:
        w = r.witness
        path = None if w is None else PathRecord(nodes=w.nodes, steps=w.steps, simple=w.simple, hops=w.hops)
        return cls(count=r.answer_count, first=r.answers, target_in=r.target_in, unique=r.unique,
                   paths_to_target=r.paths, shortest_path=path)


class ClueAblation(BaseModel):
    """The task without one clue."""

    model_config = _FROZEN
    clue: str
    index: int
    kind: str
    component: str
    text: str
    answers: AnswerSet
    solver_original: bool | None = None
    solver_without: bool | None = None
    verdict: Verdict
    reason: str
    text_only_shortcut: bool = False


class ComponentCheck(BaseModel):
    """One component: its pattern with every clue, and after sequential pruning: the
    redundant clues in the order they were tried (``order``), those removed (in removal
    order), the minimal set ``kept``; with ``minimum``, a minimum-size set and whether
    the bounded search proved it."""

    model_config = _FROZEN
    id: str
    anchor: str
    target: str
    k: int
    anchored: bool
    full: AnswerSet
    pruned: AnswerSet
    order: tuple[str, ...] = ()
    removed: tuple[str, ...]
    kept: tuple[str, ...] = ()
    minimum: tuple[str, ...] | None = None
    minimum_proven: bool | None = None
    evidence_steps: int | None


class ComponentAblation(BaseModel):
    """A fused task without one whole component."""

    model_config = _FROZEN
    component: str
    operation: str
    determined_without: bool
    verdict: Verdict
    reason: str


class NecessityReport(BaseModel):
    """Everything :func:`check_necessity` found (schema ``necessity-report``)."""

    model_config = _FROZEN
    schema_version: str = NECESSITY_SCHEMA_VERSION
    task: str
    file: str | None = None
    policy: dict[str, Any]
    text_only_shortcut: bool
    components: tuple[ComponentCheck, ...]
    clues: tuple[ClueAblation, ...]
    component_ablations: tuple[ComponentAblation, ...] = ()
    redundant: tuple[str, ...]
    necessary: tuple[str, ...]
    review: tuple[str, ...]
    pruned_unique: bool
    evidence_steps: int | None
    difficulty: Level | None
    notes: tuple[str, ...] = ()
    as_of: str | None = None
    time_sensitivity: Sensitivity | None = None
    time_sensitive_steps: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """No redundant or review clue and no redundant component (what ``--strict`` wants)."""
        return not (self.redundant or self.review
                    or any(c.verdict != "necessary" for c in self.component_ablations))


class TaskFailure(BaseModel):
    """A task file that could not be checked, with the one-line error."""

    model_config = _FROZEN
    file: str
    error: str


class BatchResult(BaseModel):
    """The reports of the task files checked, and the files that could not be
    (:func:`chaingraph.necessity.check_necessity_files`)."""

    model_config = _FROZEN
    reports: tuple[NecessityReport, ...]
    failures: tuple[TaskFailure, ...]
