"""The task record (``task.json``): anchors, target, annotated chains, clues, evidence.

A task (DESIGN §6) holds what a question was built from: the visual anchor(s), the
target, one annotated chain per component, and the clues of the question, each mapped
to one constraint of a path pattern over ``x0 … xk``:

==============  ==========================================================================
``anchor``      binds ``x0`` of its component to the component's anchor entity
``relation``    step ``step`` (1-based: ``x{step-1}`` → ``x{step}``) uses the chain's property
                in the chain's direction
``type``        ``x{variable}`` is an instance of ``class`` (through ``P31``/``P279*``)
``value``       ``x{variable}`` has property ``property`` with value ``value``
==============  ==========================================================================

Optionally the task carries its evidence subgraph (self-contained: item edges
``[statement_id, subject, property, object]`` — class edges ``P31``/``P279`` included —
plus literal statements with their values), or names a store to read; optionally paired
Solver results (the original and, per ablated clue, answer and correctness); for fused
tasks the fusion operation over the components.

:func:`load_task` reads a file and turns every problem into one
:class:`~chaingraph.errors.InvalidTask` naming the file and the JSON path
(``clues[3].step``).

>>> task = Task.model_validate({"id": "t1", "anchors": [{"entity": "Q1"}],
...     "target": {"entity": "Q3"},
...     "components": [{"anchor": "Q1", "steps": [{"property": "P361"},
...                                                {"property": "P17", "direction": "backward"}],
...                     "target": {"entity": "Q3"}}],
...     "clues": [{"kind": "anchor", "text": "this logo"},
...               {"kind": "relation", "step": 2, "text": "a country of"}]})
>>> [task.clue_id(i) for i in range(len(task.clues))], task.components[0].k
(['c1', 'c2'], 2)
>>> try:
...     validate_task(task.model_copy(update={"clues": (*task.clues, Clue(kind="relation", step=3))}))
... except InvalidTask as err:
...     print(err.path)
clues[2].step
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from chaingraph.errors import BadFile, InvalidId, InvalidTask
from chaingraph.files import parse_json, read_text
from chaingraph.ids import pid, qid
from chaingraph.settings import TraversalPolicy
from chaingraph.timeline import Sensitivity, TimeWindow
from chaingraph.values import EntityValue, Value

__all__ = [
    "TASK_SCHEMA_VERSION",
    "Anchor",
    "Clue",
    "ClueKind",
    "Component",
    "Evidence",
    "Fusion",
    "LiteralStatement",
    "SolverEvidence",
    "SolverResult",
    "Target",
    "Task",
    "TaskStep",
    "json_path",
    "load_task",
    "parse_task",
    "validate_task",
]

TASK_SCHEMA_VERSION = "chaingraph.task/1"
_FROZEN = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

Direction = Literal["forward", "backward"]
ClueKind = Literal["anchor", "relation", "type", "value"]


class Anchor(BaseModel):
    """A visual anchor: the entity seen in the image and, optionally, where."""

    model_config = _FROZEN
    entity: str
    label: str | None = None
    region: tuple[float, float, float, float] | None = Field(
        default=None, description="bounding box in image pixels: left, top, right, bottom")

    @field_validator("entity")
    @classmethod
    def _entity(cls, value: str) -> str:
        return qid(value)

    @field_validator("region")
    @classmethod
    def _box(cls, box: tuple[float, float, float, float] | None) -> tuple[float, float, float, float] | None:
        if box is not None and not (box[0] < box[2] and box[1] < box[3]):
            raise ValueError("region must be [left, top, right, bottom] with left < right and top < bottom")
        return box


class Target(BaseModel):
    """What the question asks for: an entity, or a value (time, quantity, ...)."""

    model_config = _FROZEN
    entity: str | None = None
    value: Value | None = Field(default=None, discriminator="kind")
    label: str | None = None

    @field_validator("entity")
    @classmethod
    def _entity(cls, value: str | None) -> str | None:
        return None if value is None else qid(value)

    @model_validator(mode="after")
    def _one(self) -> Target:
        if (self.entity is None) == (self.value is None):
            raise ValueError("give exactly one of 'entity' or 'value'")
        return self

    @property
    def key(self) -> str:
        """The entity id, or the value's display key (see :func:`chaingraph.patterns.value_key`)."""
        if self.entity is not None:
            return self.entity
        from chaingraph.lookups import value_key

        assert self.value is not None
        return value_key(self.value)


class TaskStep(BaseModel):
    """One annotated hop of a component chain (``forward`` = subject → object)."""

    model_config = _FROZEN
    property: str
    direction: Direction = "forward"
    statement_id: str | None = None
    source: str | None = None
    target: str | None = None
    window: TimeWindow | None = Field(default=None, description="when the statement holds (DESIGN §11)")
    time_sensitivity: Sensitivity | None = Field(default=None, description=(
        "ended, superseded, changing_property or stable (chaingraph.timeline)"))

    @field_validator("property")
    @classmethod
    def _property(cls, value: str) -> str:
        return pid(value)


class Component(BaseModel):
    """One annotated chain: from its anchor entity over ``steps`` to its target."""

    model_config = _FROZEN
    id: str | None = None
    anchor: str
    steps: tuple[TaskStep, ...] = Field(min_length=1)
    target: Target

    @field_validator("anchor")
    @classmethod
    def _anchor(cls, value: str) -> str:
        return qid(value)

    @property
    def k(self) -> int:
        return len(self.steps)


class Clue(BaseModel):
    """One clue of the question and the pattern constraint it stands for (DESIGN §6)."""

    model_config = _FROZEN
    id: str | None = None
    kind: ClueKind
    text: str = ""
    component: int = Field(default=0, ge=0)
    step: int | None = Field(default=None, description="relation clues: step i joins x(i-1) and x(i)")
    variable: int | None = Field(default=None, description="type and value clues: the constrained x(i)")
    property: str | None = None
    direction: Direction | None = None
    class_: str | None = Field(default=None, alias="class")
    value: Value | str | None = Field(default=None, description="an item id, or a Wikidata value")

    @field_validator("property")
    @classmethod
    def _property(cls, value: str | None) -> str | None:
        return None if value is None else pid(value)

    @field_validator("class_")
    @classmethod
    def _class(cls, value: str | None) -> str | None:
        return None if value is None else qid(value)

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: Any) -> Any:
        if isinstance(value, str):
            return qid(value)
        return value

    def entity_value(self) -> Value | None:
        """The clue's value as a :mod:`chaingraph.values` value (item ids become entities)."""
        if isinstance(self.value, str):
            return EntityValue(id=self.value)
        return self.value


class LiteralStatement(BaseModel):
    """A literal-valued statement of the evidence subgraph (for value clues and value targets)."""

    model_config = _FROZEN
    statement_id: str
    subject: str
    property: str
    value: Value = Field(discriminator="kind")


class Evidence(BaseModel):
    """A self-contained evidence subgraph: item edges (class edges included), literal
    statements, optional ``P31`` classes given per entity, labels."""

    model_config = _FROZEN
    edges: tuple[tuple[str, str, str, str], ...] = Field(
        default=(), description="[statement_id, subject, property, object] item statements")
    literals: tuple[LiteralStatement, ...] = ()
    classes: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="entity -> P31 classes (added as P31 edges)")
    labels: dict[str, str] = Field(default_factory=dict)


class SolverResult(BaseModel):
    model_config = _FROZEN
    answer: str | None = None
    correct: bool


class SolverEvidence(BaseModel):
    """Paired Solver runs: the full question, and the question without each clue (by clue id)."""

    model_config = _FROZEN
    solver: str | None = None
    original: SolverResult
    ablated: dict[str, SolverResult] = Field(default_factory=dict)


class Fusion(BaseModel):
    """How the component values combine (DESIGN §7). ``components`` fixes the order
    (e.g. for ``subtract``); ``values`` overrides a component's value (default: its target
    value)."""

    model_config = _FROZEN
    operation: str
    components: tuple[str, ...] = ()
    minuend: str | None = Field(default=None, description="for subtract: the component subtracted from")
    values: dict[str, Value] = Field(default_factory=dict)
    result: Value | None = Field(default=None, discriminator="kind")


class Task(BaseModel):
    """A ``task.json`` record. Validate cross-references with :func:`validate_task`."""

    model_config = _FROZEN
    schema_version: str = TASK_SCHEMA_VERSION
    id: str
    image: str | None = None
    query: str | None = None
    anchors: tuple[Anchor, ...] = Field(min_length=1)
    target: Target
    components: tuple[Component, ...] = Field(min_length=1)
    clues: tuple[Clue, ...] = ()
    evidence: Evidence | None = None
    store: str | None = None
    policy: TraversalPolicy = Field(
        default_factory=TraversalPolicy,
        description="the policy answer sets are computed under; the hub rule applies only when hub_limit "
        "is given (by default every statement counts, DESIGN §6)")
    solver: SolverEvidence | None = None
    fusion: Fusion | None = None
    time_sensitivity: Sensitivity | None = Field(default=None, description=(
        "stable only when every step and fused value is; else the first of ended, superseded, "
        "changing_property"))
    anchor_necessary: bool | None = Field(
        default=None, description="set by clue proposal: false when no clue set keeps the anchor necessary "
        "(the text alone singles out the target; see anchor_reason), true when the proposal checked it")
    anchor_reason: str | None = Field(default=None, description="why the anchor is not necessary")
    _file: str | None = PrivateAttr(default=None)

    @property
    def file(self) -> str | None:
        """The file the task was loaded from (:func:`load_task`), for error messages."""
        return self._file

    def clue_id(self, index: int) -> str:
        """The id of clue ``index`` (its ``id``, else ``c<index+1>``)."""
        return self.clues[index].id or f"c{index + 1}"

    def component_id(self, index: int) -> str:
        return self.components[index].id or f"component{index + 1}"


def json_path(loc: Sequence[str | int]) -> str:
    """``("clues", 3, "step")`` → ``"clues[3].step"``.

    >>> json_path(("clues", 3, "step")), json_path(()), json_path(("anchors", 0))
    ('clues[3].step', '', 'anchors[0]')
    """
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validate_task(task: Task, *, file: str = "") -> Task:
    """Check what the schema cannot: clue references, ids, duplicates. Returns ``task``."""

    def bad(message: str, path: str) -> InvalidTask:
        return InvalidTask(message, path=path, file=file)

    anchors = {a.entity for a in task.anchors}
    comp_ids: list[str] = []
    for c, comp in enumerate(task.components):
        if comp.anchor not in anchors:
            raise bad(f"anchor {comp.anchor} is not one of the task's anchors", f"components[{c}].anchor")
        comp_ids.append(task.component_id(c))
    if len(set(comp_ids)) != len(comp_ids):
        raise bad("component ids must be unique", "components")
    seen_ids: dict[str, int] = {}
    for i, clue in enumerate(task.clues):
        at = f"clues[{i}]"
        cid = task.clue_id(i)
        if cid in seen_ids:
            raise bad(f"clue id {cid!r} repeats clues[{seen_ids[cid]}]", f"{at}.id")
        seen_ids[cid] = i
        if clue.component >= len(task.components):
            raise bad(f"component {clue.component} does not exist (the task has "
                      f"{len(task.components)})", f"{at}.component")
        comp = task.components[clue.component]
        if clue.kind == "relation":
            if clue.step is None or not 1 <= clue.step <= comp.k:
                raise bad(f"step {clue.step} does not exist: a relation clue names a step 1..{comp.k}",
                          f"{at}.step")
            chain_step = comp.steps[clue.step - 1]
            if clue.property is not None and clue.property != chain_step.property:
                raise bad(f"{clue.property} differs from the chain's step {clue.step} "
                          f"({chain_step.property})",
                          f"{at}.property")
            if clue.direction is not None and clue.direction != chain_step.direction:
                raise bad(f"direction {clue.direction} differs from the chain's step {clue.step}",
                          f"{at}.direction")
        elif clue.kind in ("type", "value"):
            if clue.variable is None or not 0 <= clue.variable <= comp.k:
                raise bad(f"variable {clue.variable} does not exist: a {clue.kind} clue names x0..x{comp.k}",
                          f"{at}.variable")
            if clue.kind == "type" and clue.class_ is None:
                raise bad("a type clue needs 'class' (a Q-id)", f"{at}.class")
            if clue.kind == "value" and (clue.property is None or clue.value is None):
                missing = "property" if clue.property is None else "value"
                raise bad(f"a value clue needs '{missing}'", f"{at}.{missing}")
    if task.solver is not None:
        for key in task.solver.ablated:
            if key not in seen_ids:
                raise bad(f"no clue has id {key!r}", f"solver.ablated.{key}")
    if task.fusion is not None:
        for j, name in enumerate(task.fusion.components):
            if name not in comp_ids:
                raise bad(f"no component has id {name!r}", f"fusion.components[{j}]")
        if task.fusion.minuend is not None and task.fusion.minuend not in comp_ids:
            raise bad(f"no component has id {task.fusion.minuend!r}", "fusion.minuend")
        for name in task.fusion.values:
            if name not in comp_ids:
                raise bad(f"no component has id {name!r}", f"fusion.values.{name}")
    return task


def parse_task(data: Mapping[str, Any] | Any, *, file: str = "") -> Task:
    """Validate a decoded JSON object as a :class:`Task` (schema, then cross-references)."""
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _strip_union_tags(err["loc"])
        msg = err["msg"]
        ctx_err = (err.get("ctx") or {}).get("error")
        if isinstance(ctx_err, InvalidId):
            msg = str(ctx_err)
        raise InvalidTask(f"{msg}; fix the task file (schema: chaingraph schema task)",
                          path=json_path(loc), file=file) from None
    task = validate_task(task, file=file)
    task._file = file or None
    return task


_UNION_TAGS = frozenset({"time", "quantity", "entity", "string", "monolingualtext", "globecoordinate", "str"})


def _strip_union_tags(loc: Sequence[str | int]) -> tuple[str | int, ...]:
    """Drop pydantic's union-member names (``time``, ``TimeValue``, ...) from an error location."""
    out: list[str | int] = []
    for j, part in enumerate(loc):
        after_value = j >= 1 and (loc[j - 1] in ("value", "result") or (j >= 2 and loc[j - 2] == "values"))
        is_tag = isinstance(part, str) and (part in _UNION_TAGS or part.endswith("Value")
                                            or part.startswith("function-"))
        if not (after_value and is_tag):
            out.append(part)
    return tuple(out)


def load_task(path: str | Path) -> Task:
    """Read and validate ``task.json``; every problem is one :class:`InvalidTask` line."""
    file = str(path)
    try:
        data = parse_json(read_text(path, what="task"), where=file, what="task")
    except BadFile as exc:
        raise InvalidTask(exc.problem, file=file) from None
    return parse_task(data, file=file)
