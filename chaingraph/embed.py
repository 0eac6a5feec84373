"""Self-contained tasks: the evidence subgraph a task's verdicts rest on (DESIGN §6).

:func:`embed_evidence` copies out of a large evidence graph (a whole store) just the
statements that decide a task's answer sets, so the task can be checked without the
store (``chaingraph task --embed-evidence``, ``chaingraph necessity task.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from chaingraph.graph import EvidenceGraph
from chaingraph.lookups import FactLookup, value_matches
from chaingraph.patterns import PathPattern, compile_pattern, evaluate
from chaingraph.tasks import Evidence, LiteralStatement, Task
from chaingraph.values import EntityValue

__all__ = ["embed_evidence"]


def embed_evidence(graph: EvidenceGraph, task: Task, values: FactLookup | None = None) -> Task:
    """``task`` with the evidence subgraph its verdicts rest on embedded (self-contained):
    the statements of a match reaching the target under every clue, and under each
    single-clue ablation a match reaching the target and one reaching another answer;
    each matched node's ``P31`` classes with the ``P279`` links up to every type clue's
    class, and the statements that satisfy its value clues. Answer sets over the embedded
    evidence are subsets of those over ``graph`` that keep these matches, so the full
    set stays unique and every ablation that had several answers still has several.
    ``P279`` links get synthetic statement ids (``P279:<class>:<superclass>``)."""
    comp = 0
    every = list(range(len(task.clues)))
    target = task.components[comp].target.entity
    assert target is not None
    edges: dict[str, tuple[str, str, str, str]] = {}
    nodes: set[str] = set()

    def take(pattern: PathPattern, end: str) -> None:
        r = evaluate(graph, pattern, target=end, values=values)
        if r.witness is None:
            return
        for (p, d, sid), a, b in zip(r.witness.steps, r.witness.nodes, r.witness.nodes[1:]):
            s, o = (a, b) if d == "forward" else (b, a)
            edges[sid] = (sid, s, p, o)
        nodes.update(r.witness.nodes)

    for drop in [None, *every]:
        pattern = compile_pattern(task, comp, [j for j in every if j != drop])
        take(pattern, target)
        if drop is not None:
            r = evaluate(graph, pattern, target=target, values=values, first=2)
            other = next((a for a in r.answers if a != target), None)
            if other is not None:
                take(pattern, other)
    instance_of = graph.class_statements.get("P31", {}) if graph.class_statements else graph.classes
    supers = graph.class_statements.get("P279", {}) if graph.class_statements else {}
    wanted = {c.class_ for c in task.clues if c.kind == "type" and c.class_ is not None}
    classes = {n: instance_of[n] for n in sorted(nodes) if n in instance_of}
    for cls in sorted({c for cs in classes.values() for c in cs}):
        for path in _up(cls, wanted, supers):
            for a, b in pairwise(path):
                edges[f"P279:{a}:{b}"] = (f"P279:{a}:{b}", a, "P279", b)
    literals = []
    found = values.statements_of(sorted(nodes)) if values is not None else {}
    for clue in task.clues:
        if clue.kind != "value" or clue.property is None:
            continue
        want = clue.entity_value()
        assert want is not None
        for n in sorted(nodes):
            if n not in graph:
                continue
            if isinstance(want, EntityValue):
                for u, e, fwd in graph.neighbours(graph.vertex(n)):
                    if fwd and graph.edge_property(e) == clue.property and graph.name(u) == want.id:
                        edges[graph.edge_statement(e)] = (graph.edge_statement(e), n, clue.property, want.id)
            for sid, p, v in found.get(n, ()):
                if p == clue.property and not isinstance(v, EntityValue) and value_matches(want, v):
                    literals.append(LiteralStatement(statement_id=sid, subject=n, property=p, value=v))
    named = nodes | {o for _sid, _s, _p, o in edges.values()}
    labels = {n: graph.labels[n] for n in sorted(named) if n in graph.labels}
    evidence = Evidence(edges=tuple(sorted(edges.values())), literals=tuple(literals), classes=classes,
                        labels=labels)
    return task.model_copy(update={"evidence": evidence, "store": None})


def _up(cls: str, wanted: set[str], supers: Mapping[str, tuple[str, ...]]) -> list[list[str]]:
    """``P279`` paths from ``cls`` to each wanted class above it (breadth-first, first found)."""
    paths: list[list[str]] = []
    prev: dict[str, str | None] = {cls: None}
    todo = [cls]
    while todo:
        c = todo.pop(0)
        if c in wanted and c != cls:
            path = [c]
            while (p := prev[path[-1]]) is not None:
                path.append(p)
            paths.append(path[::-1])
        for s in supers.get(c, ()):
            if s not in prev:
                prev[s] = c
                todo.append(s)
    return paths
