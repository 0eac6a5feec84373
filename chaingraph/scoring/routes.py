"""Alternative routes: find the one an agent claimed, and adjudicate it on the evidence graph.

An agent may reach a component's target by a route other than the reference chain. Its
claims for that component (claims naming the component, or none) form a small graph; the
*claimed route* is the first shortest path in it from the component's anchor to its target
(claims in trajectory order break ties). When its statements are not all reference
statements it is an *alternative route*, credited only when all three hold (DESIGN §12):

* **sufficient** — every step is a statement of the evidence graph, so the route reaches
  the target in the graph (a value target: the last step's statement has a matching value);
* **non-circular** — every step's premise (the claim's subject) is the node the route has
  already reached, never the target or a later node of the route, and the steps were
  claimed in route order (no premise used before the agent had reached it);
* **target-preserving** — the route as a path pattern (anchor bound, each step's property
  and direction, and the task's type and value clues on the nodes the route shares with
  the reference chain, the target's always) still has the target as its unique answer
  (:func:`chaingraph.patterns.evaluate`).

The graph half of the verdict (sufficiency, uniqueness) depends only on the task and the
route, so :class:`RouteJudge` caches it per ``(task, component, route)``, and the answers of
a route's pattern per pattern (routes through other middle nodes by the same steps ask it
once). The whole verdict depends besides only on the events that claimed the route's steps
and their premises, so items that claimed a route alike share one verdict object (fewer
objects for the collector to scan in a scorer holding many items).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from chaingraph.patterns import PathPattern, PatternResult, Step, TypeConstraint, ValueConstraint, evaluate
from chaingraph.scoring.claims import Evidence, ResolvedClaim
from chaingraph.scoring.reference import Route, make_route

if TYPE_CHECKING:
    from chaingraph.tasks import Task
    from chaingraph.values import Value

__all__ = ["ClaimedRoute", "RouteJudge", "RouteVerdict", "claimed_route", "shortest_path",
           "shortest_path_few"]

Direction = Literal["forward", "backward"]
N = TypeVar("N", bound=Hashable)  # a node of a claim graph: its name, or a number standing for it


@dataclass(frozen=True)
class ClaimedRoute:
    """A path of claims ``nodes[0] → … → nodes[-1]``; ``claims[i]`` made step ``i + 1``."""

    nodes: tuple[str, ...]
    steps: tuple[tuple[str, Direction], ...]
    claims: tuple[ResolvedClaim, ...]
    premises: tuple[str, ...]  # each claim's subject, as the reference node it is equivalent to


@dataclass(frozen=True)
class RouteVerdict:
    credited: bool
    sufficient: bool
    non_circular: bool
    target_preserving: bool
    reasons: tuple[str, ...]


def claimed_route(claims: Sequence[ResolvedClaim], start: str, target: str,
                  node: dict[str, str]) -> ClaimedRoute | None:
    """The first shortest path of claims from ``start`` to ``target`` (``node`` maps a
    claimed node to the reference node it is equivalent to), or ``None``."""
    ends: list[tuple[str, str] | None] = []
    for cl in claims:
        if cl.statement is None or cl.premise is None or cl.conclusion is None:
            ends.append(None)
        else:
            ends.append((node.get(cl.premise, cl.premise), node.get(cl.conclusion, cl.conclusion)))
    path = shortest_path(ends, start, target)
    if path is None:
        return None
    nodes, at = path
    used = [claims[j] for j in at]
    steps: list[tuple[str, Direction]] = []
    for i, cl in enumerate(used):
        assert cl.statement is not None
        subject = node.get(cl.statement[0], cl.statement[0])
        # the walk nodes[i] -> nodes[i+1] is forward when nodes[i] is the statement's subject
        steps.append((cl.statement[1], "forward" if subject == nodes[i] else "backward"))
    premises = tuple(ends[j][0] for j in at)  # type: ignore[index]
    return ClaimedRoute(nodes, tuple(steps), tuple(used), premises)


def shortest_path(ends: Sequence[tuple[N, N] | None], start: N,
                  target: N) -> tuple[tuple[N, ...], list[int]] | None:
    """The first shortest path from ``start`` to ``target`` over claims given by their ends
    ``(premise, conclusion)`` (``None``: the claim states no statement), walked either way;
    claims earlier in ``ends`` break ties. Returns the nodes and the positions of the claims
    that made each step.

    >>> shortest_path([("a", "b"), None, ("c", "b"), ("a", "c")], "a", "c")
    (('a', 'c'), [3])
    """
    adj: dict[N, list[tuple[N, int]]] = {}
    for j, e in enumerate(ends):
        if e is None:
            continue
        a, b = e
        if a == b:
            continue
        if a in adj:
            adj[a].append((b, j))
        else:
            adj[a] = [(b, j)]
        if b in adj:
            adj[b].append((a, j))
        else:
            adj[b] = [(a, j)]
    if start not in adj or target not in adj:
        return None
    prev: dict[N, tuple[N, int] | None] = {start: None}
    queue = [start]
    for u in queue:  # breadth first; the target's first discovery fixes its path
        for v, j in adj[u]:
            if v not in prev:
                prev[v] = (u, j)
                queue.append(v)
        if target in prev:
            break
    if target not in prev:
        return None
    nodes, used = [target], []
    while (back := prev[nodes[-1]]) is not None:
        nodes.append(back[0])
        used.append(back[1])
    nodes.reverse()
    used.reverse()
    return tuple(nodes), used


def shortest_path_few(ends: Sequence[tuple[N, N]], start: N,
                      target: N) -> tuple[tuple[N, ...], list[int]] | None:
    """:func:`shortest_path` over a few claims that each state a statement (no ``None``),
    ``start`` and ``target`` among their ends: each node reached scans the claims in order
    (the order :func:`shortest_path`'s adjacency lists keep), so no adjacency is built. For
    the handful of claims of a typical item it is the faster of the two.

    >>> shortest_path_few([("a", "b"), ("c", "b"), ("a", "c")], "a", "c")
    (('a', 'c'), [2])
    """
    prev: dict[N, int] = {start: -1}  # node -> the claim that reached it
    queue = [start]
    for u in queue:  # breadth first; the target's first discovery fixes its path
        for j, (a, b) in enumerate(ends):
            if a == u:
                if b not in prev:
                    prev[b] = j
                    queue.append(b)
            elif b == u and a not in prev:
                prev[a] = j
                queue.append(a)
        if target in prev:
            break
    else:
        return None
    node, nodes, used = target, [target], []
    while node != start:
        j = prev[node]
        a, b = ends[j]
        node = a if b == node else b
        nodes.append(node)
        used.append(j)
    nodes.reverse()
    used.reverse()
    return tuple(nodes), used


#: the graph half of a verdict: sufficient, target-preserving, and the reasons against it
#: (per insufficient step: its number and the text before the event that claimed it)
GraphHalf = tuple[bool, bool, tuple[tuple[int, str], ...], str]


@dataclass
class RouteJudge:
    """Adjudicates claimed routes of one task, caching the graph half per route (and the
    step edges per claimed step)."""

    task: Task
    evidence: Evidence
    _cache: dict[tuple[object, ...], GraphHalf] = field(default_factory=dict)
    _routes: dict[tuple[object, ...], Route] = field(default_factory=dict)
    _steps: dict[tuple[object, ...], tuple[str, Direction] | None] = field(default_factory=dict)
    _why_not: dict[tuple[object, ...], str] = field(default_factory=dict)  # an insufficient step's reason
    _verdicts: dict[tuple[object, ...], RouteVerdict] = field(default_factory=dict)
    #: answers of a route's pattern: routes through other nodes by the same steps share it
    _answers: dict[tuple[PathPattern, object], PatternResult] = field(default_factory=dict)

    def judge(self, component: int, route: ClaimedRoute, reference: Route) -> RouteVerdict:
        """The verdict on ``route`` as a replacement of the reference route of ``component``
        (one object per route and item half: items that claimed a route's steps at the same
        events with the same premises share it)."""
        events = tuple([cl.event for cl in route.claims])
        whole = (component, route.nodes, route.steps, route.premises, events)
        got = self._verdicts.get(whole)
        if got is None:
            got = self._verdicts[whole] = self._judge(component, route, reference)
        return got

    def _judge(self, component: int, route: ClaimedRoute, reference: Route) -> RouteVerdict:
        sufficient, preserving, failed, unpreserved = self.graph_half(component, route.nodes, route.steps,
                                                                      reference)
        # the graph half is the route's; the events that claimed its steps are this item's
        why = [f"{text} (step {i}, event {route.claims[i - 1].event})" for i, text in failed]
        circular = _circularity(route)
        reasons = (*why, *((unpreserved,) if unpreserved else ()), *circular)
        ok = sufficient and not circular and preserving
        return RouteVerdict(ok, sufficient, not circular, preserving, reasons)

    def as_reference(self, component: int, route: ClaimedRoute) -> Route:
        """The route as a reference route (cached)."""
        key = (component, route.nodes, route.steps)
        got = self._routes.get(key)
        if got is None:
            got = self._routes[key] = make_route(self.evidence.relations, component, route.nodes, route.steps,
                                                 "claimed")
        return got

    def graph_half(self, c: int, nodes: tuple[str, ...], steps: tuple[tuple[str, Direction], ...],
                   reference: Route) -> GraphHalf:
        """The graph half of the verdict on a route of component ``c`` with these ``nodes``
        and ``steps`` (cached): what the route's claims and their events do not change."""
        key = (c, nodes, steps)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = self._graph_half(c, nodes, steps, reference)
        return got

    def _graph_half(self, c: int, nodes: tuple[str, ...], steps: tuple[tuple[str, Direction], ...],
                    reference: Route) -> GraphHalf:
        task, ev = self.task, self.evidence
        comp = task.components[c]
        target_value: Value | None = comp.target.value
        failed: list[tuple[int, str]] = []
        walk: list[tuple[str, Direction]] = []
        for i, (prop, way) in enumerate(steps, start=1):
            a, b = nodes[i - 1], nodes[i]
            step = (c, a, b, prop, way)  # the component's: a value target's precision is its own
            held = self.held(*step)
            if held is not None:
                walk.append(held)
                continue
            why = self._why_not.get(step)
            if why is None:
                shown = f"{a} {prop} {b}" if way == "forward" else f"{b} {prop} {a}"
                s, o = (a, b) if way == "forward" else (b, a)
                known = not b.startswith("value:") and ev.statements(ev.relations.key(s, prop, o))
                why = self._why_not[step] = "not sufficient: " + shown + (
                    " is not a step under the traversal policy" if known
                    else " is not a statement of the evidence graph")
            failed.append((i, why))
        if failed:
            return False, False, tuple(failed), ""
        preserving, why = self._preserving(c, nodes, tuple(walk), reference, target_value)
        return True, preserving, (), "" if preserving else why

    def held(self, c: int, a: str, b: str, prop: str, way: Direction) -> tuple[str, Direction] | None:
        """The graph step edge ``(property, direction)`` that makes the step ``a → b`` by
        ``(prop, way)`` of a route of component ``c`` (cached; ``None``: the step is not
        sufficient, and neither is a route that takes it)."""
        step = (c, a, b, prop, way)
        if step in self._steps:
            return self._steps[step]
        got = self._steps[step] = self._step(a, b, prop, way, self.task.components[c].target.value)
        return got

    def _step(self, a: str, b: str, prop: str, way: Direction,
              target_value: Value | None) -> tuple[str, Direction] | None:
        """The graph step edge (property, direction) that walks ``a → b`` and states the
        claimed fact (any equivalent form), or ``None``."""
        g, rel = self.evidence.graph, self.evidence.relations
        if a not in g:
            return None
        va = g.vertex(a)
        if b.startswith("value:"):
            for u, e, fwd in g.neighbours(va):
                p = g.edge_property(e)
                if (fwd and g.is_literal(u) and rel.canonical(p) == rel.canonical(prop)
                        and target_value is not None and self._value_ok(g.name(u), target_value)):
                    return p, "forward"
            return None
        if b not in g:
            return None
        vb = g.vertex(b)
        want = rel.key(a, prop, b) if way == "forward" else rel.key(b, prop, a)
        for e, a_first in g.arcs_between(va, vb):  # a_first: the statement's subject is a
            p = g.edge_property(e)
            s, o = (a, b) if a_first else (b, a)
            if rel.key(s, p, o) == want:
                return p, "forward" if a_first else "backward"
        return None

    def _value_ok(self, literal: str, target_value: Value) -> bool:
        from chaingraph.lookups import value_matches

        lookup = self.evidence.values
        if lookup is None:
            return False
        sid = literal.removesuffix("#value")
        got = lookup.literal_values([sid]).get(sid)
        return got is not None and value_matches(target_value, got)

    def _preserving(self, c: int, nodes: tuple[str, ...], walk: tuple[tuple[str, Direction], ...],
                    reference: Route, target_value: Value | None) -> tuple[bool, str]:
        task, graph = self.task, self.evidence.graph
        if nodes[0] not in graph:
            return False, f"not target-preserving: the anchor {nodes[0]} is not in the evidence graph"
        at = {n: j for j, n in enumerate(nodes)}
        k = len(walk)
        types, values = [], []
        for clue in task.clues:
            if clue.component != c or clue.kind not in ("type", "value") or clue.variable is None:
                continue
            var = k if clue.variable == len(reference.nodes) - 1 else at.get(reference.nodes[clue.variable])
            if var is None:
                continue
            if clue.kind == "type" and clue.class_ is not None:
                types.append(TypeConstraint(var, clue.class_))
            elif clue.property is not None and (v := clue.entity_value()) is not None:
                values.append(ValueConstraint(var, clue.property, v))
        pattern = PathPattern(tuple(Step(p, d) for p, d in walk), anchor=nodes[0],
                              types=tuple(types), values=tuple(values))
        comp = task.components[c]
        aim: str | Value = comp.target.entity if comp.target.entity is not None else target_value  # type: ignore[assignment]
        r = self._answers.get((pattern, aim))
        if r is None:
            r = self._answers[pattern, aim] = evaluate(graph, pattern, target=aim,
                                                       values=self.evidence.values, paths=False)
        if r.unique:
            return True, ""
        if not r.target_in:
            return False, ("not target-preserving: under the traversal policy the route's pattern does not "
                           f"reach the target ({r.answer_count} other answers)")
        others = [a for a in r.answers if a != comp.target.key][:3]
        return False, (f"not target-preserving: with the task's other clues the route has {r.answer_count} "
                       f"answers, not only the target (also {', '.join(others)})")


def _circularity(route: ClaimedRoute) -> tuple[str, ...]:
    out = []
    target = route.nodes[-1]
    last_event = -1
    for i, cl in enumerate(route.claims, start=1):
        premise, reached = route.nodes[i - 1], route.nodes[i]
        if route.premises[i - 1] != premise:
            what = "the target" if reached == target else "a later node of the route"
            out.append(f"circular: step {i} (event {cl.event}) uses {what} {reached} as a premise")
        elif cl.event < last_event:
            out.append(f"circular: step {i} (event {cl.event}) is claimed before its premise {premise} was "
                       f"reached (event {last_event})")
        last_event = max(last_event, cl.event)
    return tuple(out)
