"""Path patterns over ``x0 … xk`` and their answer sets on an evidence graph (DESIGN §6).

A clue set compiles (:func:`compile_pattern`) to a :class:`PathPattern`: ``k`` steps, each
a property and a direction or a *wildcard* (any step property, either direction), ``x0``
bound to the anchor or free, and per-variable ``type`` (``P31``/``P279*``) and ``value``
(``x_i P v``) constraints. :func:`evaluate` computes its answer set — every binding of
``xk`` — with **SPARQL semantics**: the solutions of the basic graph pattern, distinct,
projected to ``xk``. As in SPARQL, nothing forbids a node to repeat along a match
(``x1 = x3`` is a solution), so a relaxed pattern may be satisfied by a walk that doubles
back; chain validity (no repeats, DESIGN §4) is a different question, answered by the
chain engine.

Two deliberate differences from a literal SPARQL reading, both for the question's sake:
statements of preferred *and* normal rank are facts (``wdt:`` keeps only the best rank;
deprecated ones are out on both sides), and when the target is a value, literal answers
are keyed at the target's precision (a day-precision date counts as its year when the
question asks for a year; see :func:`chaingraph.lookups.value_key`).

The traversal policy of the graph applies exactly as for the chain engine: only step
edges are steps (class edges type the nodes), ``x1 … x(k-1)`` must be passable (no hubs,
no literals), ``x0`` is an entity (it may be a hub: a path may start or end there), and
``xk`` may be anything, literals included.

Evaluation is a layered frontier propagation, never a path enumeration (a frontier is a
sorted vertex array, so a small one costs its touched edges, not the graph): a forward
semi-join from the ``x0`` candidates through the steps (each layer intersected with its
variable's constraint mask), a backward pruning from the target to the nodes that lie on
some match, a dynamic programme over those layers counting the matches that reach the
target (a match is a sequence of nodes with one (property, direction) per step; the
statements of one ``(subject, property, object)`` triple count once, as in ``wdt:``
triples; a self-loop under a wildcard counts once per direction), and a deterministic
witness: the first match in (node id, property) order, preferring one whose nodes do not
repeat.

>>> from chaingraph.graph import EvidenceGraph, TraversalPolicy
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P50", "Q2"), ("s2", "Q2", "P19", "Q3"),
...     ("s3", "Q4", "P19", "Q3"), ("s4", "Q1", "P50", "Q4"), ("s5", "Q3", "P31", "Q515")],
...     policy=TraversalPolicy(hub_limit=None))
>>> p = PathPattern(steps=(Step("P50", "forward"), Step(None, None)), anchor="Q1")
>>> r = evaluate(g, p, target="Q3")
>>> r.answers, r.target_in, r.unique, r.paths
(('Q1', 'Q3'), True, False, 2)
>>> r.witness.nodes, r.witness.simple
(('Q1', 'Q2', 'Q3'), True)
>>> evaluate(g, p.with_type(2, "Q515"), target="Q3").unique
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from chaingraph.errors import InvalidInput
from chaingraph.frontier_index import FrontierIndex, answer_key, frontier_index, member_of
from chaingraph.lookups import EmbeddedValues, StoreValues, ValueLookup, value_key, value_matches
from chaingraph.values import EntityValue, Value

if TYPE_CHECKING:
    from chaingraph.graph import EvidenceGraph
    from chaingraph.tasks import Task

__all__ = [
    "EmbeddedValues",
    "PathPattern",
    "PatternResult",
    "Step",
    "StoreValues",
    "TypeConstraint",
    "ValueConstraint",
    "ValueLookup",
    "Witness",
    "compile_pattern",
    "constraint_mask",
    "evaluate",
    "known_class",
    "start_layer",
    "step_layer",
    "to_sparql",
    "value_key",
    "value_matches",
]

Direction = Literal["forward", "backward"]
FIRST = 10  # answer-set members reported
_WITNESS_BUDGET = 5_000  # node expansions spent looking for a simple witness


# -- patterns -----------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """Step ``i`` joins ``x(i-1)`` and ``x(i)``: ``property`` ``None`` = any step property,
    ``direction`` ``None`` = either way (``forward``: ``x(i-1)`` is the subject)."""

    property: str | None = None
    direction: Direction | None = None


@dataclass(frozen=True)
class TypeConstraint:
    variable: int
    class_id: str


@dataclass(frozen=True)
class ValueConstraint:
    variable: int
    property: str
    value: Value


@dataclass(frozen=True)
class PathPattern:
    """A path pattern over ``x0 … xk`` (``k = len(steps)``)."""

    steps: tuple[Step, ...]
    anchor: str | None = None
    types: tuple[TypeConstraint, ...] = ()
    values: tuple[ValueConstraint, ...] = ()

    def __post_init__(self) -> None:
        if not self.steps:
            raise InvalidInput("a path pattern needs at least one step")
        for var in [t.variable for t in self.types] + [v.variable for v in self.values]:
            if not 0 <= var <= self.k:
                raise InvalidInput(f"constraint on x{var} outside x0..x{self.k}")

    @property
    def k(self) -> int:
        return len(self.steps)

    def with_type(self, variable: int, class_id: str) -> PathPattern:
        return replace(self, types=(*self.types, TypeConstraint(variable, class_id)))


def compile_pattern(task: Task, component: int, clues: Iterable[int] | None = None) -> PathPattern:
    """The pattern of ``component`` under the clues with the given indexes (default: all).

    Steps no clue describes are wildcards; ``x0`` is bound when an anchor clue is kept.
    """
    comp = task.components[component]
    keep = range(len(task.clues)) if clues is None else clues
    steps = [Step() for _ in comp.steps]
    anchor: str | None = None
    types: list[TypeConstraint] = []
    values: list[ValueConstraint] = []
    for i in keep:
        clue = task.clues[i]
        if clue.component != component:
            continue
        if clue.kind == "anchor":
            anchor = comp.anchor
        elif clue.kind == "relation":
            assert clue.step is not None
            chain = comp.steps[clue.step - 1]
            steps[clue.step - 1] = Step(chain.property, chain.direction)
        elif clue.kind == "type":
            assert clue.variable is not None and clue.class_ is not None
            types.append(TypeConstraint(clue.variable, clue.class_))
        else:
            value = clue.entity_value()
            assert clue.variable is not None and clue.property is not None and value is not None
            values.append(ValueConstraint(clue.variable, clue.property, value))
    return PathPattern(tuple(steps), anchor, tuple(types), tuple(values))


def to_sparql(pattern: PathPattern, step_properties: Iterable[str], *,
              blocked: Iterable[str] = ()) -> str:
    """The equivalent SPARQL query over Wikidata truthy triples (``wdt:``).

    ``step_properties`` are the properties a wildcard may use (the graph's step
    properties); ``blocked`` entities may not be passed through (hubs). Only item values
    translate (literal value constraints raise :class:`InvalidInput`).

    >>> print(to_sparql(PathPattern((Step("P50", "backward"),), anchor="Q42"), ["P50"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    PREFIX wd: <http://www.wikidata.org/entity/>
    PREFIX wdt: <http://www.wikidata.org/prop/direct/>
    SELECT DISTINCT ?x1 WHERE {
      VALUES ?x0 { wd:Q42 }
      ?x1 wdt:P50 ?x0 .
    }
    """
    props = " ".join(f"wdt:{p}" for p in sorted(step_properties))
    lines = ["PREFIX wd: <http://www.wikidata.org/entity/>",
             "PREFIX wdt: <http://www.wikidata.org/prop/direct/>",
             f"SELECT DISTINCT ?x{pattern.k} WHERE {{"]
    if pattern.anchor:
        lines.append(f"  VALUES ?x0 {{ wd:{pattern.anchor} }}")
    for i, st in enumerate(pattern.steps, start=1):
        a, b = f"?x{i - 1}", f"?x{i}"
        pred = f"wdt:{st.property}" if st.property else f"?p{i}"
        fwd, bwd = f"{a} {pred} {b} .", f"{b} {pred} {a} ."
        if st.direction == "forward":
            lines.append(f"  {fwd}")
        elif st.direction == "backward":
            lines.append(f"  {bwd}")
        else:
            lines.append(f"  {{ {fwd} }} UNION {{ {bwd} }}")
        if st.property is None:
            lines.append(f"  VALUES ?p{i} {{ {props} }}")
    if not pattern.anchor:
        lines.append("  FILTER(isIRI(?x0))")
    hubs = ", ".join(f"wd:{h}" for h in sorted(blocked))
    for i in range(1, pattern.k):
        lines.append(f"  FILTER(isIRI(?x{i}))")
        if hubs:
            lines.append(f"  FILTER(?x{i} NOT IN ({hubs}))")
    for t in pattern.types:
        lines.append(f"  ?x{t.variable} wdt:P31/wdt:P279* wd:{t.class_id} .")
    for v in pattern.values:
        if not isinstance(v.value, EntityValue):
            raise InvalidInput(f"value constraint x{v.variable} {v.property} {value_key(v.value)} "
                               "has no wdt: translation here; only item values do")
        lines.append(f"  ?x{v.variable} wdt:{v.property} wd:{v.value.id} .")
    lines.append("}")
    return "\n".join(lines)


# -- evaluation ---------------------------------------------------------------------
@dataclass(frozen=True)
class Witness:
    """One match reaching the target: ``nodes`` x0..xk (literals shown by value), and per
    step ``(property, direction, statement_id)``. ``hops`` is the length once repeated-node
    detours are cut out (``k`` for a simple match)."""

    nodes: tuple[str, ...]
    steps: tuple[tuple[str, Direction, str], ...]
    simple: bool
    hops: int


@dataclass(frozen=True)
class PatternResult:
    answer_count: int
    answers: tuple[str, ...]  # the first FIRST answers, sorted
    target_in: bool
    unique: bool
    paths: int
    witness: Witness | None


def known_class(graph: EvidenceGraph, class_id: str) -> bool:
    """Is ``class_id`` the class (``P31`` value) or a superclass of anything in ``graph``?"""
    idx = frontier_index(graph)
    return class_id in idx.members or class_id in idx.children


def _type_mask(graph: EvidenceGraph, idx: FrontierIndex, class_id: str) -> np.ndarray:
    key = ("type", class_id)
    if key not in idx.masks:
        below = {class_id}  # every class c with c P279* class_id
        todo = [class_id]
        while todo:
            for c in idx.children.get(todo.pop(), ()):
                if c not in below:
                    below.add(c)
                    todo.append(c)
        mask = np.zeros(idx.n, dtype=bool)
        for c in below:
            mask[idx.members.get(c, [])] = True
        idx.masks[key] = mask
    return idx.masks[key]


def _value_mask(graph: EvidenceGraph, idx: FrontierIndex, c: ValueConstraint,
                values: ValueLookup | None) -> np.ndarray:
    key = ("value", c.property, c.value.model_dump_json(), values)  # the lookup is part of the key
    if key not in idx.masks:
        subjects: set[str] = set()
        v = c.value
        if isinstance(v, EntityValue) and c.property in graph.policy.class_properties:
            table = graph.class_statements.get(c.property, {})
            subjects = {e for e, cls in table.items() if v.id in cls}
        elif isinstance(v, EntityValue) and c.property in idx.code and v.id in graph:
            ptr, nbr, prop = idx.csr[False]
            o = graph.vertex(v.id)
            sl = slice(ptr[o], ptr[o + 1])
            subjects = {graph.name(int(s)) for s in nbr[sl][prop[sl] == idx.code[c.property]]}
        if values is not None:
            subjects |= values.subjects(c.property, v)
        mask = np.zeros(idx.n, dtype=bool)
        for s in subjects:
            if s in graph:
                mask[graph.vertex(s)] = True
        idx.masks[key] = mask
    return idx.masks[key]


def start_layer(graph: EvidenceGraph, anchor: str | None) -> np.ndarray:
    """The ``x0`` candidates of :func:`evaluate`: the anchor's vertex, or every entity."""
    idx = frontier_index(graph)
    return idx.entities if anchor is None else np.array([graph.vertex(anchor)], dtype=np.int64)


def step_layer(graph: EvidenceGraph, nodes: np.ndarray, step: Step, masks: Sequence[np.ndarray] = (), *,
               inner: bool) -> np.ndarray:
    """One layer of :func:`evaluate`: the sorted vertices one ``step`` from ``nodes`` that
    satisfy every mask (and are passable when ``inner``, i.e. not ``xk``)."""
    idx = frontier_index(graph)
    out = idx.advance(nodes, step)[0]
    keep = idx.passable[out] if inner else None
    for mask in masks:
        keep = mask[out] if keep is None else keep & mask[out]
    return out if keep is None else out[keep]


def constraint_mask(graph: EvidenceGraph, constraint: TypeConstraint | ValueConstraint,
                    values: ValueLookup | None = None) -> np.ndarray:
    """Which vertices of ``graph`` satisfy a type or value constraint (a boolean array by
    vertex index; shared and cached, do not modify)."""
    idx = frontier_index(graph)
    if isinstance(constraint, TypeConstraint):
        return _type_mask(graph, idx, constraint.class_id)
    return _value_mask(graph, idx, constraint, values)


def _literal_keys(graph: EvidenceGraph, verts: np.ndarray, values: ValueLookup | None,
                  like: Value | None) -> dict[int, tuple[str, Value | None]]:
    sids = {int(v): graph.name(int(v)).removesuffix("#value") for v in verts}
    found = values.literal_values(sorted(sids.values())) if values is not None else {}
    out: dict[int, tuple[str, Value | None]] = {}
    for v, sid in sids.items():
        val = found.get(sid)
        out[v] = (value_key(val, like) if val is not None else graph.name(v), val)
    return out


def evaluate(graph: EvidenceGraph, pattern: PathPattern, *, target: str | Value | None = None,
             values: ValueLookup | None = None, first: int = FIRST, paths: bool = True) -> PatternResult:
    """Answer set of ``pattern`` on ``graph``, and how ``target`` (an entity id or a value)
    is reached (with ``paths=False`` the match count and witness are skipped: ``paths`` is
    0 and ``witness`` ``None``). Raises :class:`UnknownEntity` when the anchor is not in the
    graph."""
    idx = frontier_index(graph)
    k = pattern.k
    # layers are sorted unique vertex arrays; constraints are length-n masks read per node
    start = idx.entities if pattern.anchor is None else np.array([graph.vertex(pattern.anchor)],
                                                                 dtype=np.int64)
    masks: dict[int, list[np.ndarray]] = {}
    for t in pattern.types:
        masks.setdefault(t.variable, []).append(_type_mask(graph, idx, t.class_id))
    for vc in pattern.values:
        masks.setdefault(vc.variable, []).append(_value_mask(graph, idx, vc, values))

    def constrain(i: int, nodes: np.ndarray) -> np.ndarray:
        keep = idx.passable[nodes] if 0 < i < k else None
        for mask in masks.get(i, ()):
            keep = mask[nodes] if keep is None else keep & mask[nodes]
        return nodes if keep is None else nodes[keep]

    layers = [constrain(0, start)]
    for i, st in enumerate(pattern.steps, start=1):
        layers.append(constrain(i, idx.advance(layers[-1], st)[0]))
    final = layers[k]
    like = target if not isinstance(target, str) else None
    lit = _literal_keys(graph, final[idx.literal[final]], values, like)
    entities = final[~idx.literal[final]]
    shown = entities[np.argsort(idx.id_rank[entities])[:first]]  # entities sort before values
    literal_keys = sorted({key for key, _v in lit.values()}, key=answer_key)
    answer_count = len(entities) + len(literal_keys)
    answers = tuple([graph.name(int(v)) for v in shown] + literal_keys)[:first]

    hits: list[int] = []
    if isinstance(target, str):
        if target in graph:
            hits.append(graph.vertex(target))
    elif target is not None:
        hits = sorted(v for v, (_key, val) in lit.items() if val is not None and value_matches(target, val))
    tnodes = np.asarray(hits, dtype=np.int64)
    tnodes = tnodes[member_of(tnodes, final)]
    target_in = len(tnodes) > 0
    unique = target_in and len(tnodes) == len(final)  # every binding of xk is the target
    matches, witness = 0, None
    if target_in and paths:
        back = [tnodes]
        for i in range(k, 0, -1):
            prev = idx.advance(back[-1], pattern.steps[i - 1], back=True)[0]
            back.append(prev[member_of(prev, layers[i - 1])])
        back.reverse()
        matches = _count(idx, pattern, back)
        witness = _witness(graph, pattern, back, lit)
    return PatternResult(answer_count, answers, target_in, unique, matches, witness)


def _count(idx: FrontierIndex, pattern: PathPattern, back: list[np.ndarray]) -> int:
    """Matches reaching the target, by dynamic programming over the pruned layers (in
    floats while they are exact, else again in exact integers)."""
    for dtype in (np.float64, object):
        nodes, counts = back[0], np.ones(len(back[0]), dtype=dtype)
        for i, st in enumerate(pattern.steps, start=1):
            nodes, got = idx.advance(nodes, st, counts)
            assert got is not None
            keep = member_of(nodes, back[i])
            nodes, counts = nodes[keep], got[keep]
        if dtype is object:
            return int(counts.sum())
        total = float(counts.sum())
        if total < 2**53:
            return int(total)
    raise AssertionError("unreachable")


def _witness(graph: EvidenceGraph, pattern: PathPattern, back: list[np.ndarray],
             lit: dict[int, tuple[str, Value | None]]) -> Witness:
    """First match in deterministic order, preferring one that repeats no node."""
    k = pattern.k
    idx = frontier_index(graph)

    def moves(v: int, i: int) -> list[tuple[int, int, bool]]:  # (node, edge, forward)
        st = pattern.steps[i]
        us, es, fw = idx.moves(graph, v)
        ok = member_of(us, back[i + 1])
        if st.property is not None:
            ok &= idx.edge_code[es] == idx.code.get(st.property, -1)
        if st.direction is not None:
            ok &= fw == (st.direction == "forward")
        return list(zip(us[ok].tolist(), es[ok].tolist(), fw[ok].tolist(), strict=True))

    first = back[0]
    starts = first[np.argsort(idx.name_rank[first])].tolist()
    budget = _WITNESS_BUDGET
    found: tuple[list[int], list[tuple[int, bool]]] | None = None
    for start in starts:  # depth-first from each start in turn, within one shared budget
        stack: list[tuple[list[int], list[tuple[int, bool]]]] = [([start], [])]
        while stack and budget > 0 and found is None:
            nodes, steps = stack.pop()
            budget -= 1
            if len(nodes) == k + 1:
                found = (nodes, steps)
                break
            for u, e, fwd in reversed(moves(nodes[-1], len(nodes) - 1)):
                if u not in nodes:
                    stack.append(([*nodes, u], [*steps, (e, fwd)]))
        if found is not None or budget <= 0:
            break
    if found is None:  # every match repeats a node (or the budget ran out): greedy first walk
        nodes, steps = [starts[0]], []
        for i in range(k):
            u, e, fwd = moves(nodes[-1], i)[0]
            nodes.append(u)
            steps.append((e, fwd))
        found = (nodes, steps)
    nodes, steps = found
    names = tuple(lit[v][0] if v in lit else graph.name(v) for v in nodes)
    how = tuple((graph.edge_property(e), _way(fwd), graph.edge_statement(e)) for e, fwd in steps)
    return Witness(names, how, len(set(nodes)) == len(nodes), _contracted_hops(nodes))


def _way(forward: bool) -> Direction:
    return "forward" if forward else "backward"


def _contracted_hops(nodes: Sequence[int]) -> int:
    """Hops of a walk once every detour that returns to an earlier node is cut out."""
    out: list[int] = []
    for v in nodes:
        if v in out:
            del out[out.index(v) + 1:]
        else:
            out.append(v)
    return len(out) - 1
