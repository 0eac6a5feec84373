"""Counting: one authoritative edge sequence per component chain, streamed into counters.

:class:`Tally` takes records one at a time and keeps only counters, so memory does not
grow with the corpus: counters are keyed by relation class, route, property, chain length,
level, entity type and shape (all bounded by the vocabulary, not by the number of
records). The only per-record state is the set of chain keys seen *in that record*.

**Counted once.** A record is one task. Inside a record, a chain that appears more than
once — at top level and again nested in a fused task's component, or twice in one list
— is counted once: the first copy met (top level first, see
:class:`~chaingraph.audit.shapes.TaskShape`) is the authoritative edge sequence and later
copies with the same identity key (:func:`~chaingraph.audit.shapes.parse_chain`) only
raise ``duplicate_chains``. Across records nothing is de-duplicated, on purpose: two tasks
that share a chain both ask a solver to walk it, so both count — an audit describes what
the tasks are made of. (A global key set would also grow with the corpus.)

**Units.** Each directed edge occurrence counts once (a relation used twice in a chain
counts twice). The evidence steps H of a task are the edges summed over its distinct
component chains, and give its level (L1 H < 5, L2 5 ≤ H < 10, L3 H ≥ 10). Anchors are
the first node of each distinct chain; node types are counted per node occurrence.
Problems are all counted, and the first ``max_problems`` are kept for the listing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from chaingraph.audit.classify import NOT_A_RELATION, RELATION_CLASSES, ROUTES, UNCLASSIFIED, EdgeClassifier
from chaingraph.audit.readers import Problem, RawRecord
from chaingraph.audit.report import (
    LEVELS,
    AuditReport,
    ClassRow,
    LengthRow,
    LevelRow,
    ProblemRow,
    PropertyRow,
    RouteRow,
    ShapeRow,
    TimeRow,
    TypeRow,
    UnclassifiedRow,
    level_of,
    percent,
)
from chaingraph.audit.shapes import DEFAULT_SHAPES, Edge, Shape, ShapeError, detect
from chaingraph.audit.timing import UNRECORDED, record_sensitivity
from chaingraph.timeline import SENSITIVITY

__all__ = ["UNTYPED", "Tally"]

UNTYPED = "(untyped)"


def _property_order(pid: str) -> tuple[int, str]:
    return (int(pid[1:]), pid) if pid[1:].isdigit() else (1 << 62, pid)


class Tally:
    """Stream records in with :meth:`add`, then read the :meth:`report`.

    >>> from chaingraph.audit.readers import RawRecord
    >>> class Labels:  # a crosswalk that knows only explicit class names
    ...     def classify_label(self, text):
    ...         return type("C", (), {"relation_class": text, "status": "relation"})()
    ...     def classify(self, pid):
    ...         raise LookupError(pid)
    >>> tally = Tally(EdgeClassifier(Labels()))
    >>> rec = {"chain": [["Q1", "spatial", "Q2"], ["Q2", "spatial", "Q3"]],
    ...        "components": [{"chain": [["Q1", "spatial", "Q2"], ["Q2", "spatial", "Q3"]]}]}
    >>> tally.add(RawRecord("t.json", 1, 1, rec))
    >>> r = tally.report(crosswalk_version="test", files=1)
    >>> r.edges, r.chains, r.duplicate_chains, r.class_counts()["spatial"]
    (2, 1, 1, 2)
    """

    def __init__(
        self,
        classifier: EdgeClassifier,
        shapes: Sequence[Shape] = DEFAULT_SHAPES,
        *,
        max_problems: int = 1000,
    ) -> None:
        self.classifier = classifier
        self.shapes = tuple(shapes)
        self.max_problems = max_problems
        self.records = self.tasks = self.chains = self.duplicates = self.edges = 0
        self.classes: Counter[str] = Counter()
        self.routes: Counter[str] = Counter()
        self.levels: Counter[str] = Counter()
        self.lengths: Counter[int] = Counter()
        self.anchor_types: Counter[str] = Counter()
        self.node_types: Counter[str] = Counter()
        self.properties: Counter[str] = Counter()
        self.shape_counts: Counter[str] = Counter()
        self.unclassified: Counter[str] = Counter()
        self.unclassified_reasons: dict[str, str] = {}
        self.problem_count = 0
        self.problem_kinds: Counter[str] = Counter()
        self.problems: list[Problem] = []
        self.time_tasks: Counter[str] = Counter()
        self.time_steps: Counter[str] = Counter()

    def problem(self, problem: Problem) -> None:
        self.problem_count += 1
        self.problem_kinds[problem.kind] += 1
        if len(self.problems) < self.max_problems:
            self.problems.append(problem)

    def add(self, item: RawRecord | Problem) -> Problem | None:
        """Count one record (or file problem); returns the problem it raised, if any."""
        if isinstance(item, Problem):
            if item.record:
                self.records += 1
            self.problem(item)
            return item
        self.records += 1
        found = self._problem_or_components(item)
        if isinstance(found, Problem):
            self.problem(found)
            return found
        shape, components = found
        seen: set[tuple[str, ...]] = set()
        steps = 0
        for component in components:
            if component.key in seen:
                self.duplicates += 1
                continue
            seen.add(component.key)
            self.chains += 1
            steps += len(component.edges)
            self.lengths[len(component.edges)] += 1
            self._count_edges(component.edges)
            if component.anchor is not None:
                self.anchor_types[component.anchor.type or UNTYPED] += 1
            self.node_types.update(node.type or UNTYPED for node in component.nodes)
        self.tasks += 1
        reason, step_reasons = record_sensitivity(item.value)
        self.time_tasks[reason] += 1
        self.time_steps.update(step_reasons)
        self.shape_counts[shape] += 1
        self.levels[level_of(steps)] += 1
        return None

    def _problem_or_components(self, item: RawRecord) -> Problem | tuple[str, list[Any]]:
        def problem(kind: Any, message: str) -> Problem:
            return Problem(item.file, item.record, item.line, kind, message)

        try:
            found = detect(item.value, self.shapes)
        except ShapeError as exc:
            return problem("bad-record", f"{exc}; fix the record or leave it out")
        if found is None:
            if isinstance(item.value, dict):
                keys = ", ".join(sorted(item.value)[:8]) or "none"
                return problem(
                    "unknown-shape",
                    f"not a chain or task record (keys: {keys}); "
                    "see `chaingraph audit --help` for the shapes it reads",
                )
            return problem("unknown-shape", f"a JSON {type(item.value).__name__}, not a record object")
        shape, components = found
        components = [c for c in components if c.edges]
        if not components:
            return problem("no-chain", f"a {shape} record without any chain edges; nothing to count")
        return shape, components

    def _count_edges(self, edges: Sequence[Edge]) -> None:
        classify = self.classifier
        for edge in edges:
            decision = classify(edge)
            self.classes[decision.relation_class] += 1
            self.routes[decision.route] += 1
            if edge.property:
                self.properties[edge.property] += 1
            if decision.route == "unclassified":
                self.unclassified[decision.subject] += 1
                self.unclassified_reasons.setdefault(decision.subject, decision.reason)
            self.edges += 1

    def _property_class(self, pid: str) -> str:
        return self.classifier(Edge(None, None, property=pid)).relation_class

    def report(self, *, crosswalk_version: str, files: int) -> AuditReport:
        """The counts so far as an :class:`AuditReport`."""
        total = self.edges
        order = [*RELATION_CLASSES, NOT_A_RELATION, UNCLASSIFIED]
        classes = [
            ClassRow(relation_class=c, edges=self.classes[c], percent=percent(self.classes[c], total))
            for c in order
            if c in RELATION_CLASSES or self.classes[c]
        ]
        routes = [
            RouteRow(route=r, edges=self.routes[r], percent=percent(self.routes[r], total)) for r in ROUTES
        ]
        levels = [
            LevelRow(level=lv, rule=rule, tasks=self.levels[lv], percent=percent(self.levels[lv], self.tasks))
            for lv, rule in LEVELS
        ]
        lengths = [
            LengthRow(hops=k, chains=n, percent=percent(n, self.chains))
            for k, n in sorted(self.lengths.items())
        ]
        types = sorted(
            set(self.anchor_types) | set(self.node_types),
            key=lambda t: (t == UNTYPED, -self.node_types[t], -self.anchor_types[t], t),
        )
        entity_types = [
            TypeRow(type=t, anchors=self.anchor_types[t], nodes=self.node_types[t]) for t in types
        ]
        props = sorted(self.properties.items(), key=lambda kv: (-kv[1], _property_order(kv[0])))
        properties = [
            PropertyRow(
                property=p, edges=n, percent=percent(n, total), relation_class=self._property_class(p)
            )
            for p, n in props
        ]
        unclassified = [
            UnclassifiedRow(subject=s, edges=n, reason=self.unclassified_reasons[s])
            for s, n in sorted(self.unclassified.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        shapes = [
            ShapeRow(shape=s, records=n)
            for s, n in sorted(self.shape_counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        problems = [ProblemRow(**p._asdict()) for p in self.problems]
        anchors = sum(self.anchor_types.values())
        nodes = sum(self.node_types.values())
        return AuditReport(
            crosswalk_version=crosswalk_version,
            files=files,
            records=self.records,
            tasks=self.tasks,
            chains=self.chains,
            duplicate_chains=self.duplicates,
            edges=total,
            relation_classes=tuple(classes),
            routes=tuple(routes),
            difficulty=tuple(levels),
            chain_lengths=tuple(lengths),
            entity_types=tuple(entity_types),
            anchors_typed=anchors - self.anchor_types[UNTYPED],
            nodes_typed=nodes - self.node_types[UNTYPED],
            anchors=anchors,
            nodes=nodes,
            properties=tuple(properties),
            unclassified=tuple(unclassified),
            shapes=tuple(shapes),
            problem_count=self.problem_count,
            problems=tuple(problems),
            time_sensitivity=self._time_rows(),
            time_sensitive_tasks=sum(n for r, n in self.time_tasks.items()
                                     if r not in ("stable", UNRECORDED)),
        )

    def _time_rows(self) -> tuple[TimeRow, ...]:
        steps = sum(self.time_steps.values())
        return tuple(
            TimeRow(reason=r, tasks=self.time_tasks[r],
                    task_percent=percent(self.time_tasks[r], self.tasks),
                    steps=self.time_steps[r], step_percent=percent(self.time_steps[r], steps))
            for r in (*SENSITIVITY, UNRECORDED) if self.time_tasks[r] or self.time_steps[r]
        )
