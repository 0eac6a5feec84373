"""Why is a path not a valid chain? Every rule of DESIGN §4 it breaks, with evidence.

:func:`explain_chain` checks a path given as node ids (optionally with the property of
each step) against the same evidence graph, traversal policy and edge verifier that
:func:`~chaingraph.chains.enumerate_chains` uses, and names each broken rule:
``unsupported`` (no such node or statement, or the verifier rejects it), ``policy`` (a
class edge or class node, an excluded property, a hub or literal passed through, a
statement not valid on the policy's ``as_of`` date, with its window),
``repeat``, ``too_short`` / ``too_long`` (rule 1) and ``shortcut`` (with a shorter path).

>>> from chaingraph.graph import EvidenceGraph
>>> g = EvidenceGraph.from_edges([("s1", "Q1", "P1", "Q2"), ("s2", "Q2", "P2", "Q3"),
...                               ("s4", "Q1", "P4", "Q3")])
>>> why = explain_chain(g, ["Q1", "Q2", "Q3"], min_hops=1)
>>> why.reason, why.violations[0].shorter_path
('shortcut', ('Q1', 'P4', 'Q3'))
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from chaingraph.chains import AcceptAll, Chain, EdgeVerifier, chain_ids, distances, validate_bounds
from chaingraph.errors import ChainRuleError
from chaingraph.graph import EvidenceGraph
from chaingraph.ids import is_item_id
from chaingraph.timeline import parse_as_of

__all__ = ["REASONS", "Explanation", "Violation", "explain_chain"]

#: Every reason a path can fail to be a valid chain, in the order they are checked.
REASONS = ("unsupported", "policy", "repeat", "too_short", "too_long", "shortcut")


class Violation(NamedTuple):
    """One broken rule: ``reason`` in :data:`REASONS`, a one-line ``detail``, the step
    (1-based hop number) or node position concerned, and for ``shortcut`` the shorter
    path found (node ids interleaved with properties)."""

    reason: str
    detail: str
    position: int | None = None
    shorter_path: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Explanation:
    """Whether a path is a valid chain and, if not, every rule it breaks (first = main)."""

    path: tuple[str, ...]
    valid: bool
    violations: tuple[Violation, ...]
    chain: Chain | None = None

    @property
    def reason(self) -> str | None:
        return self.violations[0].reason if self.violations else None

    def describe(self) -> str:
        """``valid: Q1 -P19- Q2 - Q3`` (properties between nodes where known), then one
        line per broken rule."""
        parts: list[str] = []
        for tok in self.path:
            if tok[:1] == "P" and tok[1:].isdigit():
                parts.append(f" -{tok}- ")
            else:
                if parts and not parts[-1].endswith("- "):
                    parts.append(" - ")
                parts.append(tok)
        head = "".join(parts)
        if self.valid:
            return f"valid: {head}"
        return "\n".join([f"invalid: {head}"] + [f"  {v.reason}: {v.detail}" for v in self.violations])


def _parse_path(path: Sequence[str]) -> tuple[list[str], list[str | None]]:
    """Split ``[Q…, (P…,) Q…, …]`` into nodes and the property of each step (or None)."""
    items = [p.strip() for p in path if p.strip()]
    nodes: list[str] = []
    props: list[str | None] = []
    pending: str | None = None
    for item in items:
        if item[:1] in "Pp" and item[1:].isdigit():
            if not nodes or pending is not None:
                raise ChainRuleError(f"path {','.join(items)}: property {item} must sit between two nodes")
            pending = item.upper()
        else:
            if nodes:
                props.append(pending)
            pending = None
            nodes.append(item)
    if pending is not None:
        raise ChainRuleError(f"path {','.join(items)}: a path must end on a node, not a property")
    if not nodes:
        raise ChainRuleError("empty path; give node ids such as Q42,Q5,… (optionally with P-ids between)")
    return nodes, props


def _shortest_to(graph: EvidenceGraph, dist: np.ndarray, target: int) -> tuple[str, ...]:
    """One shortest seed→target path under the policy (deterministic), as ids."""
    out = [graph.name(target)]
    v = target
    while dist[v] > 0:
        for u, e, _f in graph.neighbours(v):
            if dist[u] == dist[v] - 1 and (dist[u] == 0 or graph.passable(u)):
                out += [graph.edge_property(e), graph.name(u)]
                v = u
                break
    return tuple(reversed(out))


def explain_chain(graph: EvidenceGraph, path: Sequence[str], *, min_hops: int = 5, max_hops: int = 7,
                  verifier: EdgeVerifier | None = None) -> Explanation:
    """Say which rules of DESIGN §4 the path breaks, or that it is a valid chain.

    ``path`` is node ids (``Q…`` or literal ids), optionally with the property of each step
    between them (``["Q1", "P69", "Q2", …]``). Without a property, any step edge between
    the two nodes will do (the first one the verifier accepts, in deterministic order).
    Reasons: ``unsupported`` (no such node or statement, or the verifier rejects it),
    ``policy`` (a class edge, an excluded property, or a hub / literal passed through),
    ``repeat``, ``too_short`` / ``too_long`` (rule 1), ``shortcut`` (with a shorter path).
    """
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    verifier = verifier or AcceptAll()
    nodes, props = _parse_path(path)
    violations: list[Violation] = []
    shown = tuple(x for pair in zip(nodes, [*props, None]) for x in pair if x is not None)
    missing = [n for n in nodes if n not in graph]
    class_values = {c for cs in graph.classes.values() for c in cs} if missing else set()
    for n in missing:
        if n in class_values:
            violations.append(Violation("policy", f"{n} is only a class here (a value of "
                                        f"{'/'.join(sorted(graph.policy.class_properties))}): it types "
                                        "nodes, it is not a chain node", nodes.index(n)))
        else:
            violations.append(Violation("unsupported", f"{n} is not in the evidence graph", nodes.index(n)))
    edges: list[int] = []
    if not missing:
        vs = [graph.vertex(n) for n in nodes]
        for i, (a, b) in enumerate(itertools.pairwise(vs)):
            found = _step_edge(graph, a, b, props[i], verifier)
            if isinstance(found, Violation):
                violations.append(found._replace(position=i + 1))
            else:
                edges.append(found)
        for i, v in enumerate(vs[1:-1], start=1):
            if not graph.passable(v):
                what = "a literal node" if graph.is_literal(v) else f"a hub (degree {graph.degree(v)} > " \
                       f"hub limit {graph.policy.hub_limit})"
                violations.append(Violation("policy", f"{nodes[i]} is {what}; chains may end on it "
                                            "but not pass through it", i))
    seen: dict[str, int] = {}
    for i, n in enumerate(nodes):
        if n in seen:
            violations.append(Violation("repeat", f"{n} appears at positions {seen[n]} and {i}", i))
        seen.setdefault(n, i)
    k = len(nodes) - 1
    if k < min_hops:
        violations.append(Violation("too_short", f"{k} hops < min_hops {min_hops}"))
    if k > max_hops:
        violations.append(Violation("too_long", f"{k} hops > max_hops {max_hops}"))
    if not missing and not graph.is_literal(graph.vertex(nodes[0])):
        dist = distances(graph, nodes[0])
        for i, n in enumerate(nodes[1:], start=1):
            d = int(dist[graph.vertex(n)])
            if 0 <= d < i:
                violations.append(Violation(
                    "shortcut", f"{n} is {d} hops from {nodes[0]} but at hop {i} of this path", i,
                    _shortest_to(graph, dist, graph.vertex(n))))
                break
    chain = None
    if not violations:
        chain = Chain(tuple(graph.vertex(n) for n in nodes), tuple(edges))
        shown = chain_ids(graph, chain)
    return Explanation(shown, not violations, tuple(violations), chain)


def _step_edge(graph: EvidenceGraph, a: int, b: int, prop: str | None, verifier: EdgeVerifier
               ) -> int | Violation:
    na, nb = graph.name(a), graph.name(b)
    candidates = [e for v, e, _f in graph.neighbours(a) if v == b and (prop is None or
                                                                        graph.edge_property(e) == prop)]
    rejected = ""
    for e in candidates:
        verdict = verifier(graph, e, a)
        if verdict.accepted:
            return e
        rejected = verdict.reason or "rejected by the edge verifier"
    if candidates:
        return Violation("unsupported", f"{na}–{nb} via {graph.edge_property(candidates[0])}: {rejected}")
    label = f" with {prop}" if prop else ""
    for sid, s, p, o in (*graph.excluded_edges, *graph.time_excluded_edges):
        if {s, o} == {na, nb} and (prop is None or p == prop):
            if sid in graph.time_excluded and graph.timeline is not None and graph.policy.as_of:
                why = graph.timeline.why_invalid(sid, parse_as_of(graph.policy.as_of))
                return Violation("policy", f"step {na}–{nb} ({p}, statement {sid}) {why}")
            return Violation("policy", f"{na}–{nb}: statement {sid} ({p}) is excluded by the "
                             "traversal policy")
    for x, y in ((na, nb), (nb, na)):
        if y in graph.classes.get(x, ()) and (prop is None or prop in graph.policy.class_properties):
            return Violation("policy", f"{x}–{y} is a class edge "
                             f"({'/'.join(sorted(graph.policy.class_properties))}): it types {x}, "
                             "it is not a chain step")
    if is_item_id(na) and is_item_id(nb):
        return Violation("unsupported", f"no statement{label} links {na} and {nb} in the evidence graph")
    return Violation("unsupported", f"no statement{label} links {na} and {nb}")
