"""Clue proposal: from a chain to a task whose clues are a minimal set (DESIGN §6).

:func:`propose_clues` takes an evidence graph (built over the whole store, or a task's
embedded evidence), a statement-value lookup and a chain (:class:`ChainPath`: nodes,
and per step property, direction and statement) and returns a :class:`Proposal`: a
:class:`~chaingraph.tasks.Task` in the published schema and a :class:`ProposalRecord`
saying how its clues were chosen.

**Candidates** (:func:`candidate_clues`), for the chain ``x0 … xk``:

* the anchor (binds ``x0``);
* each step's relation and direction;
* each node's ``P31`` classes (matched through ``P279*`` wherever the graph has subclass
  statements) for ``x1 … xk`` (``x0`` is bound by the anchor, so clues on it never matter);
* value clues from each node's other statements: item values from the graph's own
  edges ("x2's country is France") and literal values from the lookup (a date at year
  precision, a quantity with its unit, a string or monolingual text), never naming a
  chain node; at most ``max_values`` per node, one per property first, in property order.

**Selection.** The full candidate set must make the target the unique answer (SPARQL
semantics under the graph's policy; with no hub limit an agent may walk anywhere), or
there is no task: :attr:`Proposal.cannot` says why. Then the clues other than the
anchor are removed **one at a time**, each only if the target stays unique: value and
type clues from the most specific (fewest entities satisfy it) to the broadest, then
relations by step — a minimal set. The anchor must be **necessary** (no text-only
shortcut). If the pruned set still singles out the target without it, three searches
look, in turn, for a set where it is: around a *rival* answer of the relation pattern
with ``x0`` free (keep only clues a match ending at the rival satisfies, so the text
alone stays ambiguous), by growing from the anchor and the relations with the broadest
clues, and by a bounded search (:func:`chaingraph.minimal.largest_removal`, ``budget``
evaluations); pruning then runs again from the set found. When none is found the task
keeps its anchor clue and says ``"anchor_necessary": false`` with the reason; the record
says which step found it (``anchor_found_by``).

Uniqueness is decided on the forward layers of :func:`chaingraph.patterns.evaluate`
(the same answer sets), each layer remembered by the clues up to its variable, so clue
sets that differ in a clue near the target share the work before it.

>>> from chaingraph.graph import EvidenceGraph
>>> from chaingraph.settings import TraversalPolicy
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P50", "Q2"), ("s2", "Q2", "P19", "Q3"),
...     ("s3", "Q4", "P19", "Q5"), ("s4", "Q7", "P50", "Q4"), ("s5", "Q2", "P27", "Q6"),
...     ("s6", "Q3", "P31", "Q515"), ("s7", "Q5", "P31", "Q515")], policy=TraversalPolicy(hub_limit=None))
>>> p = propose_clues(g, resolve_path(g, ["Q1", "Q2", "Q3"]))
>>> [c.id for c in p.task.clues], p.record.anchor_necessary, p.record.evidence_steps
(['anchor', 'step2'], True, 2)
>>> p.record.order, p.record.removed
(('value1:P27=Q6', 'type2:Q515', 'step1', 'step2'), ('value1:P27=Q6', 'type2:Q515', 'step1'))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from chaingraph.errors import ChainRuleError, InvalidInput
from chaingraph.graph import EvidenceGraph
from chaingraph.ids import is_item_id
from chaingraph.lookups import FactLookup, ValueLookup, value_key
from chaingraph.minimal import largest_removal, prune_sequential
from chaingraph.patterns import (
    PathPattern,
    PatternResult,
    Step,
    TypeConstraint,
    ValueConstraint,
    constraint_mask,
    evaluate,
    start_layer,
    step_layer,
)
from chaingraph.records import ChainRecord, Level, difficulty_level
from chaingraph.tasks import (
    Anchor,
    Clue,
    Component,
    Target,
    Task,
    TaskStep,
)
from chaingraph.values import (
    EntityValue,
    MonolingualValue,
    QuantityValue,
    StringValue,
    TimeValue,
    Value,
)

__all__ = ["ChainPath", "Proposal", "ProposalRecord", "candidate_clues", "chain_pattern",
           "propose_clues", "propose_tasks", "resolve_path"]

Direction = Literal["forward", "backward"]
#: which step found the clue set with a necessary anchor: the first pruning pass, a rival
#: answer, growing from the relations, the bounded search, or none
AnchorSearch = Literal["pruning", "rival", "grow", "search", "none"]
_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: datatypes whose statements may become literal value clues (others: ids, URLs, media)
VALUE_DATATYPES = frozenset({"time", "quantity", "string", "monolingualtext", "wikibase-item"})


class ChainPath(BaseModel):
    """A chain as clue proposal needs it: ``nodes`` ``x0 … xk`` and per step its property,
    direction (``forward``: ``x(i-1)`` is the subject) and statement id."""

    model_config = _FROZEN
    nodes: tuple[str, ...]
    properties: tuple[str, ...]
    directions: tuple[Direction, ...]
    statements: tuple[str | None, ...] = ()

    @property
    def k(self) -> int:
        return len(self.properties)

    @classmethod
    def from_record(cls, record: ChainRecord) -> ChainPath:
        """The chain of a chain record (``chaingraph expand --format jsonl``)."""
        return cls(nodes=tuple(n.id for n in record.nodes),
                   properties=tuple(s.property for s in record.steps),
                   directions=tuple(s.direction for s in record.steps),
                   statements=tuple(s.statement_id for s in record.steps))


def resolve_path(graph: EvidenceGraph, path: Sequence[str]) -> ChainPath:
    """A path ``Q…,[P…,]Q…`` (the syntax of ``expand --explain``) as a :class:`ChainPath`.

    Any path whose statements exist is accepted; between two nodes the statement is the
    first of: the given property (else any step property, in property-id order), forward
    before backward, in statement-id order — so where a property links two nodes both
    ways, the forward statement is used.
    """
    from chaingraph.explain import _parse_path

    nodes, props = _parse_path(path)
    if len(nodes) < 2:
        raise ChainRuleError(f"path {','.join(path)}: a chain needs at least two nodes")
    for want in props:
        if want is not None and want in graph.policy.class_properties:
            raise InvalidInput(f"path {','.join(path)}: {want} is a class property: it types nodes, "
                               "it is not a step (give a type clue instead)")
    for n in nodes:
        if not is_item_id(n):
            raise InvalidInput(f"path node {n!r} is not an item id (Q…); value targets are not proposed")
        if n not in graph:
            raise InvalidInput(f"path node {n} is not in the evidence graph; check the id or the store")
    properties: list[str] = []
    directions: list[Direction] = []
    sids: list[str | None] = []
    for a, b, want in zip(nodes, nodes[1:], props):
        va, vb = graph.vertex(a), graph.vertex(b)
        found = sorted((graph.edge_property(e), not fwd, graph.edge_statement(e))
                       for e, fwd in graph.arcs_between(va, vb)
                       if want is None or graph.edge_property(e) == want)
        if not found:
            how = f"{want} statement" if want else "step statement"
            raise InvalidInput(f"no {how} links {a} and {b} in the evidence graph")
        prop, back, sid = found[0]
        properties.append(prop)
        directions.append("backward" if back else "forward")
        sids.append(sid)
    return ChainPath(nodes=tuple(nodes), properties=tuple(properties), directions=tuple(directions),
                     statements=tuple(sids))


class ProposalRecord(BaseModel):
    """How the clues of a proposed task were chosen: every candidate (in the order they
    were tried), which were removed (in removal order) and kept, the anchor screen (the
    answer count without the anchor in the final set), ``H``, the level and the work."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    chain: ChainPath
    policy: dict[str, object]
    candidates: tuple[Clue, ...]
    order: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]
    anchor_necessary: bool
    anchor_reason: str | None = None
    answers_without_anchor: int
    evidence_steps: int | None
    difficulty: Level | None
    evaluations: int
    search_proven: bool | None = None
    anchor_found_by: AnchorSearch = "none"


class Proposal(BaseModel):
    """The result of :func:`propose_clues`: the task, or (``task`` ``None``) why there is
    none in ``cannot``; the record either way."""

    model_config = _FROZEN
    task: Task | None
    cannot: str | None = None
    record: ProposalRecord


# -- candidates ---------------------------------------------------------------------
def _label(labels: Mapping[str, str], ident: str) -> str:
    text = labels.get(ident)
    return f"{text} ({ident})" if text else ident


def _value_clue_value(value: Value) -> Value | str | None:
    """The clue form of a statement value, or ``None`` when it makes no value clue."""
    if isinstance(value, EntityValue):
        return value.id
    if isinstance(value, TimeValue):
        if value.precision < 9:
            return None
        return TimeValue.make(value.year, precision=9, calendar=value.calendar)
    if isinstance(value, QuantityValue | StringValue | MonolingualValue):
        return value
    return None


def candidate_clues(graph: EvidenceGraph, chain: ChainPath, facts: FactLookup | None, *,
                    labels: Mapping[str, str] | None = None, datatypes: Mapping[str, str] | None = None,
                    max_values: int = 8) -> tuple[Clue, ...]:
    """Every candidate clue of ``chain`` (see the module docstring), with ids and text."""
    labels = labels if labels is not None else graph.labels
    out: list[Clue] = [Clue(id="anchor", kind="anchor", text=f"x0 is the entity in the image "
                            f"({_label(labels, chain.nodes[0])})")]
    for i, (p, d) in enumerate(zip(chain.properties, chain.directions), start=1):
        a, b = (f"x{i - 1}", f"x{i}") if d == "forward" else (f"x{i}", f"x{i - 1}")
        out.append(Clue(id=f"step{i}", kind="relation", step=i, property=p, direction=d,
                        text=f"{a}'s {_label(labels, p)} is {b}"))
    instance_of = graph.class_statements.get("P31", {}) if graph.class_statements else graph.classes
    for i in range(1, chain.k + 1):
        for c in instance_of.get(chain.nodes[i], ()):
            out.append(Clue.model_validate({"id": f"type{i}:{c}", "kind": "type", "variable": i, "class": c,
                                            "text": f"x{i} is a {_label(labels, c)}"}))
    on_chain = set(chain.nodes)
    found = facts.statements_of(list(chain.nodes[1:])) if facts is not None else {}
    for i in range(1, chain.k + 1):
        node = chain.nodes[i]
        # item values from the graph's own edges; literal values from the lookup
        stated: list[tuple[str, Value]] = [
            (graph.edge_property(e), EntityValue(id=graph.name(u))) for u, e, fwd in
            graph.neighbours(graph.vertex(node)) if fwd and not graph.is_literal(u)]
        stated += [(p, v) for _sid, p, v in found.get(node, ()) if not isinstance(v, EntityValue)]
        seen: set[tuple[str, str]] = set()
        per_property: dict[str, int] = {}
        values: list[tuple[int, str, str, Value | str]] = []
        for p, v in sorted(stated, key=lambda t: (t[0], value_key(t[1]))):
            if p in graph.policy.class_properties or not graph.policy.allows(p):
                continue
            if datatypes is not None and datatypes.get(p, "wikibase-item") not in VALUE_DATATYPES:
                continue
            if isinstance(v, EntityValue) and v.id in on_chain:
                continue
            clue_value = _value_clue_value(v)
            if clue_value is None:
                continue
            key = clue_value if isinstance(clue_value, str) else value_key(clue_value)
            if (p, key) in seen:
                continue
            seen.add((p, key))
            values.append((per_property.get(p, 0), p, key, clue_value))
            per_property[p] = per_property.get(p, 0) + 1
        for _n, p, key, clue_value in sorted(values, key=lambda t: (t[0], t[1]))[:max_values]:
            shown = _label(labels, key) if isinstance(clue_value, str) else key
            out.append(Clue(id=f"value{i}:{p}={key}", kind="value", variable=i, property=p, value=clue_value,
                            text=f"x{i}'s {_label(labels, p)} is {shown}"))
    return tuple(out)


def _constraint(c: Clue) -> TypeConstraint | ValueConstraint:
    if c.kind == "type":
        assert c.variable is not None and c.class_ is not None
        return TypeConstraint(c.variable, c.class_)
    value = c.entity_value()
    assert c.variable is not None and c.property is not None and value is not None
    return ValueConstraint(c.variable, c.property, value)


def chain_pattern(clues: Sequence[Clue], kept: frozenset[int], chain: ChainPath,
             constraints: Mapping[int, TypeConstraint | ValueConstraint] | None = None) -> PathPattern:
    """The pattern of the clues ``kept`` (the mapping of :func:`chaingraph.patterns.compile_pattern`);
    ``constraints``: the type and value constraint of each such clue, when already known."""
    steps = [Step() for _ in range(chain.k)]
    anchor = None
    types: list[TypeConstraint] = []
    values: list[ValueConstraint] = []
    for i in sorted(kept):
        c = clues[i]
        if c.kind == "anchor":
            anchor = chain.nodes[0]
        elif c.kind == "relation":
            assert c.step is not None
            steps[c.step - 1] = Step(c.property, c.direction)
        else:
            got = constraints[i] if constraints is not None else _constraint(c)
            (types if isinstance(got, TypeConstraint) else values).append(got)  # type: ignore[arg-type]
    return PathPattern(tuple(steps), anchor, tuple(types), tuple(values))


# -- the proposal -------------------------------------------------------------------
class _Layers:
    """Answer counts of clue subsets by the forward layers of :func:`~chaingraph.patterns.evaluate`
    (the same answer set), each layer remembered by the clues that shape it up to its
    variable: subsets that differ only in a clue on ``x_i`` share the layers before ``i``."""

    def __init__(self, graph: EvidenceGraph, chain: ChainPath, clues: Sequence[Clue],
                 constraints: Mapping[int, TypeConstraint | ValueConstraint],
                 values: ValueLookup | None) -> None:
        self.graph, self.chain = graph, chain
        self.masks = {i: constraint_mask(graph, con, values) for i, con in constraints.items()}
        self.on: dict[int, tuple[int, ...]] = {}
        for i, con in sorted(constraints.items()):
            self.on[con.variable] = (*self.on.get(con.variable, ()), i)
        self.relation = {c.step: i for i, c in enumerate(clues) if c.kind == "relation"}
        self.anchor = next(i for i, c in enumerate(clues) if c.kind == "anchor")
        self.target = graph.vertex(chain.nodes[-1])
        self.cache: dict[tuple[object, ...], np.ndarray] = {}

    def count(self, kept: frozenset[int]) -> int:
        """1 when the target is the unique answer, 0 when it is not an answer, else the
        number of answers (at least 2)."""
        cons = tuple(j for j in self.on.get(0, ()) if j in kept)
        key: tuple[object, ...] = (self.anchor in kept, cons)
        layer = self.cache.get(key)
        if layer is None:
            layer = start_layer(self.graph, self.chain.nodes[0] if self.anchor in kept else None)
            for j in cons:
                layer = layer[self.masks[j][layer]]
            self.cache[key] = layer
        k = self.chain.k
        for i in range(1, k + 1):
            rel = self.relation.get(i)
            step = (Step(self.chain.properties[i - 1], self.chain.directions[i - 1])
                    if rel is not None and rel in kept else Step())
            cons = tuple(j for j in self.on.get(i, ()) if j in kept)
            key = (key, step, cons)
            got = self.cache.get(key)
            if got is None:
                got = self.cache[key] = (step_layer(self.graph, layer, step, [self.masks[j] for j in cons],
                                                    inner=i < k) if len(layer) else layer)
            layer = got
        at = int(np.searchsorted(layer, self.target))
        if at >= len(layer) or layer[at] != self.target:
            return 0
        return 1 if len(layer) == 1 else max(2, len(layer))


def _order(graph: EvidenceGraph, clues: Sequence[Clue], values: ValueLookup | None) -> tuple[int, ...]:
    """The order in which proposal tries to remove clues: value and type clues from the
    most specific (fewest entities satisfy it) to the broadest, then relations by step;
    ties in candidate order. The anchor is never tried."""
    support: dict[int, int] = {}
    for i, c in enumerate(clues):
        if c.kind in ("type", "value"):
            support[i] = int(constraint_mask(graph, _constraint(c), values).sum())
    return tuple(sorted(support, key=lambda i: (support[i], i))) + tuple(
        i for i, c in enumerate(clues) if c.kind == "relation")


_RIVAL_POOL = 5000  # answers of the relation pattern scored as rivals


def _rival_start(graph: EvidenceGraph, chain: ChainPath, clues: Sequence[Clue],
                 constraints: Mapping[int, TypeConstraint | ValueConstraint], values: ValueLookup | None,
                 count: Callable[[frozenset[int]], int],
                 run: Callable[[frozenset[int], str], PatternResult], *,
                 rivals: int) -> frozenset[int] | None:
    """A clue set that keeps the anchor necessary, built around a *rival*: another answer
    ``y`` of a relation pattern with ``x0`` free — every relation, then every relation but
    one (the last step first). Every clue kept is one that a match ending at ``y``
    satisfies, so ``y`` stays an answer without the anchor: the set is the anchor, the
    relations, and the clues of ``y``'s match. Per relation pattern, at most ``rivals``
    rivals are tried, those sharing most of the target's own ``xk`` clues first (then in
    id order); ``None`` when none gives a unique target with the anchor."""
    k, target = chain.k, chain.nodes[-1]
    every = [i for i, c in enumerate(clues) if c.kind == "relation"]
    masks = {i: constraint_mask(graph, con, values) for i, con in constraints.items()}
    last = [i for i, con in constraints.items() if con.variable == k]
    for drop in [None, *reversed(every)]:
        relations = frozenset(i for i in every if i != drop)
        pool = run(relations, target).answers
        score = {y: sum(bool(masks[i][graph.vertex(y)]) for i in last)
                 for y in pool if y != target and y in graph}
        for y in sorted(score, key=lambda y: -score[y])[:rivals]:
            vy = graph.vertex(y)
            shared = frozenset(i for i in last if masks[i][vy])
            match = run(relations | shared, y).witness
            if match is None:
                continue
            on = {j: graph.vertex(n) for j, n in enumerate(match.nodes) if n in graph}
            inner = frozenset(i for i, con in constraints.items()
                              if 0 < con.variable < k and con.variable in on and masks[i][on[con.variable]])
            kept = frozenset({0}) | relations | shared | inner
            if count(kept) == 1:
                return kept
    return None


def _grow(clues: Sequence[Clue], order: Sequence[int], count: Callable[[frozenset[int]], int],
          anchor: int) -> frozenset[int] | None:
    """A clue set that keeps the anchor necessary, grown from the anchor and every relation
    by adding the broadest clues first, each only if it narrows the answers with the anchor
    and leaves the text alone ambiguous; ``None`` if that does not reach uniqueness."""
    kept = frozenset({anchor, *(i for i in order if clues[i].kind == "relation")})
    if count(kept - {anchor}) == 1:
        return None
    for i in reversed([i for i in order if clues[i].kind != "relation"]):
        if count(kept) == 1:
            break
        more = kept | {i}
        if 0 < count(more) < count(kept) and count(more - {anchor}) != 1:
            kept = more
    return kept if count(kept) == 1 else None


def propose_clues(graph: EvidenceGraph, chain: ChainPath, *, values: FactLookup | None = None,
                  labels: Mapping[str, str] | None = None, datatypes: Mapping[str, str] | None = None,
                  max_values: int = 8, budget: int = 30, rivals: int = 3, task_id: str | None = None,
                  store: str | None = None) -> Proposal:
    """Propose a minimal clue set for ``chain`` that keeps its target the unique answer
    and its anchor necessary (see the module docstring). Deterministic.

    ``values`` lists each node's statements (value clues) and resolves value constraints;
    ``labels`` and ``datatypes`` (property → Wikidata datatype, to skip external ids and
    URLs) come from the store; ``rivals`` and ``budget`` bound the search for a clue set
    with a necessary anchor (rival answers tried; evaluations of the last-resort search);
    ``store`` is recorded in the task (where necessity should read the evidence).
    """
    for n in chain.nodes:
        if n not in graph:
            raise InvalidInput(f"chain node {n} is not in the evidence graph; check the id or the store")
    if len(chain.directions) != chain.k or len(chain.nodes) != chain.k + 1 or chain.k < 1:
        raise InvalidInput("a chain needs k >= 1 steps, k directions and k + 1 nodes")
    clues = candidate_clues(graph, chain, values, labels=labels, datatypes=datatypes, max_values=max_values)
    target = chain.nodes[-1]
    spent = 0

    answers: dict[frozenset[int], int] = {}
    constraints = {i: _constraint(c) for i, c in enumerate(clues) if c.kind in ("type", "value")}
    layers = _Layers(graph, chain, clues, constraints, values)

    def count(kept: frozenset[int]) -> int:
        """Answers of the clues ``kept``; 1 means the target alone (0 if it is not reached)."""
        nonlocal spent
        if kept not in answers:
            spent += 1
            answers[kept] = layers.count(kept)
        return answers[kept]

    def unique(kept: frozenset[int]) -> bool:
        return count(kept) == 1

    every = frozenset(range(len(clues)))
    anchor = 0
    order = _order(graph, clues, values)
    ids = [c.id or "" for c in clues]

    def record(kept: frozenset[int], removed: Sequence[int], *, necessary: bool, reason: str | None,
               without: int, h: int | None, proven: bool | None,
               found: AnchorSearch = "none") -> ProposalRecord:
        return ProposalRecord(
            chain=chain, policy=graph.policy.describe(), candidates=clues, order=tuple(ids[i] for i in order),
            removed=tuple(ids[i] for i in removed), kept=tuple(ids[i] for i in sorted(kept)),
            anchor_necessary=necessary, anchor_reason=reason, answers_without_anchor=without,
            evidence_steps=h, difficulty=None if h is None else difficulty_level(h), evaluations=spent,
            search_proven=proven, anchor_found_by=found)

    if not unique(every):
        full = evaluate(graph, chain_pattern(clues, every, chain), target=target, values=values, paths=False)
        blocked = [f"x{i} {why}" for i, n in enumerate(chain.nodes[1:-1], start=1)
                   if (why := graph.blocked(graph.vertex(n))) is not None]
        if blocked:
            reason = f"the chain cannot match under the policy: {'; '.join(blocked)}"
        elif not full.target_in:
            reason = "the chain's own statements do not match its clues (check the path and the store)"
        else:
            shown = ", ".join(a for a in full.answers if a != target)
            reason = (f"no clue set makes {target} the unique answer: with all {len(clues)} candidate clues "
                      f"the pattern has {full.answer_count} answers (also {shown}"
                      f"{' …' if full.answer_count > len(full.answers) else ''})")
        return Proposal(task=None, cannot=reason, record=record(
            every, (), necessary=False, reason=None, without=full.answer_count, h=None, proven=None))

    pruned = prune_sequential(every, order, unique)
    kept = frozenset(pruned.kept)
    removed: tuple[int, ...] = pruned.removed
    without = count(kept - {anchor})
    necessary = without != 1
    shortcut: str | None = None
    proven: bool | None = None
    found: AnchorSearch = "pruning" if necessary else "none"
    if not necessary:
        def run(kept: frozenset[int], end: str) -> PatternResult:
            nonlocal spent
            spent += 1
            return evaluate(graph, chain_pattern(clues, kept, chain, constraints), target=end, values=values,
                            first=_RIVAL_POOL)

        start = _rival_start(graph, chain, clues, constraints, values, count, run, rivals=rivals)
        how: AnchorSearch = "rival"
        if start is None:
            start, how = _grow(clues, order, count, anchor), "grow"
        if start is None:
            how = "search"

            def ambiguous_without_anchor(k: frozenset[int]) -> bool:
                return count(k - {anchor}) != 1

            best = largest_removal(order, every, unique, goal=ambiguous_without_anchor, budget=budget)
            proven = best.proven
            start = None if best.removed is None else every - frozenset(best.removed)
        if start is not None:
            again = prune_sequential(start, order, unique)
            kept = frozenset(again.kept)
            removed = (*(i for i in order if i not in start), *again.removed)
            without, necessary = count(kept - {anchor}), True
            found = how
        else:
            shortcut = ("the text alone singles out the target: every clue set that makes it unique does "
                        "so without the anchor too" if proven else
                        "no clue set keeping the anchor necessary was found (rival answers, growth from the "
                        f"relations, and a search of {budget} evaluations)")
    final = evaluate(graph, chain_pattern(clues, kept, chain), target=target, values=values)
    spent += 1
    h = final.witness.hops if final.witness is not None else None
    rec = record(kept, removed, necessary=necessary, reason=shortcut, without=without, h=h,
                 proven=proven, found=found)
    return Proposal(task=_task(graph, chain, clues, kept, rec, task_id=task_id, store=store,
                               labels=labels if labels is not None else graph.labels), record=rec)


def _task(graph: EvidenceGraph, chain: ChainPath, clues: Sequence[Clue], kept: frozenset[int],
          rec: ProposalRecord, *, task_id: str | None, store: str | None, labels: Mapping[str, str]) -> Task:
    nodes = chain.nodes
    steps = tuple(TaskStep(property=p, direction=d, statement_id=sid, source=a, target=b)
                  for p, d, sid, a, b in zip(chain.properties, chain.directions,
                                             chain.statements or (None,) * chain.k, nodes, nodes[1:]))
    policy = graph.policy.model_copy(update={"hub_limit": graph.policy.hub_limit})  # stated, not defaulted
    return Task(id=task_id or "-".join(nodes), anchors=(Anchor(entity=nodes[0], label=labels.get(nodes[0])),),
                target=Target(entity=nodes[-1], label=labels.get(nodes[-1])),
                components=(Component(anchor=nodes[0], steps=steps, target=Target(entity=nodes[-1])),),
                clues=tuple(clues[i] for i in sorted(kept)), store=store, policy=policy,
                anchor_necessary=rec.anchor_necessary, anchor_reason=rec.anchor_reason)


# -- from a store ---------------------------------------------------------------------
def propose_tasks(chains: Sequence[ChainPath | Sequence[str]], *, store: str | Path,
                  hub_limit: int | None = None, embed: bool = False, max_values: int = 8,
                  budget: int = 30) -> tuple[Proposal, ...]:
    """Propose a task for each chain (a :class:`ChainPath`, or a path ``[Q…, (P…,) Q…]``)
    with answer sets over every statement of ``store`` (or under ``hub_limit``); the
    library twin of ``chaingraph task``. ``embed``: each task carries its evidence."""
    from chaingraph.embed import embed_evidence
    from chaingraph.lookups import StoreValues
    from chaingraph.settings import TraversalPolicy
    from chaingraph.store import Store

    path = Path(store)
    if not path.is_file():
        raise InvalidInput(f"store: {path}: no such store file; create one with `chaingraph load`"
                           ).about("store")
    with Store(path, read_only=True) as st:
        graph = EvidenceGraph.from_store(st, policy=TraversalPolicy(hub_limit=hub_limit))
        values = StoreValues(st)
        datatypes = st.datatypes()
        labels = {**graph.labels, **st.labels(sorted(datatypes))}
        out = []
        for chain in chains:
            resolved = chain if isinstance(chain, ChainPath) else resolve_path(graph, chain)
            got = propose_clues(graph, resolved, values=values, labels=labels, datatypes=datatypes,
                                max_values=max_values, budget=budget, store=str(path))
            if embed and got.task is not None:
                got = got.model_copy(update={"task": embed_evidence(graph, got.task, values)})
            out.append(got)
    return tuple(out)
