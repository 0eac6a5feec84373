"""The no-shortcut certificate over a whole SPARQL endpoint (DESIGN §4, §10).

:class:`EndpointCertifier` is :class:`~chaingraph.build.certify.StoreCertifier`'s twin
when the source is an endpoint: it proves a chain of k hops from ``s`` to ``t`` is a
valid chain in the endpoint's **whole** graph, under the chain's traversal policy, with
the store certifier's rules in its order:

* ``unsupported``: a node with no step edge on the endpoint, or a step statement that is
  not there (read from the neighbour list of a non-hub end of the step);
* ``policy``: an inner node is a hub there (more step edges than ``hub_limit``);
* ``repeat``, ``too_short``, ``too_long``: the path itself;
* ``shortcut``: a path shorter than k between ``s`` and ``t``, found by a **bidirectional
  bounded search**: breadth-first layers from both ends, the side with the smaller
  frontier first, each layer one batched query per ``batch_size`` items
  (:class:`~chaingraph.sources.endpoint_graph.EndpointGraph`, both directions, hubs
  capped in the query). Only ``s``, ``t`` and non-hubs are walked through, as in the
  evidence graph; a hub end is not expanded (a non-hub's complete list shows its edge to
  it) unless both ends are hubs, and then ``s`` is read in full. The search stops when
  the frontiers meet (the shortest path found is named) or when the two depths add up
  to k − 1 without meeting: no path shorter than k exists, and the chain, itself a path
  of k hops, is a shortest one (so every sub-path is shortest too).

The certificate's ``distance`` is k when it holds and the shorter distance for a
shortcut; when another rule fails first the search is not run and it is ``None``.
A search that would read more than ``budget`` neighbour lists stops undecided
(``reason`` ``undecided``): the chain is then not certified, never certified by default.
Neighbour lists are cached (memory and the build's store), so chains sharing nodes and a
resumed build do not ask again. The certificate's ``scope`` is ``"endpoint"``.
"""

from __future__ import annotations

from collections.abc import Sequence

from chaingraph.build.certify import Certificate
from chaingraph.sources.endpoint_graph import EndpointGraph, NeighbourList, StepEdge
from chaingraph.sources.neighbours import number

__all__ = ["DEFAULT_BUDGET", "EndpointCertifier", "Undecided"]

#: neighbour lists one certificate may read before it gives up undecided
DEFAULT_BUDGET = 50_000

_Parent = dict[str, tuple[str, StepEdge] | None]


class Undecided(Exception):
    """The search read more than its budget of neighbour lists."""


class _Side:
    """One end of the bidirectional search: visited depths, parents, the open frontier."""

    def __init__(self, root: str, expandable: bool) -> None:
        self.root = root
        self.depth: dict[str, int] = {root: 0}
        self.parent: _Parent = {root: None}
        self.frontier = [root] if expandable else []
        self.level = 0

    def path_to_root(self, node: str) -> list[str]:
        """``[node, P, …, root]``: node ids interleaved with properties, towards the root."""
        out = [node]
        step = self.parent[node]
        while step is not None:
            prev, edge = step
            out += [edge.property, prev]
            step = self.parent[prev]
        return out


class EndpointCertifier:
    """Certifies chains against a whole endpoint (see the module docstring)."""

    def __init__(self, graph: EndpointGraph, *, budget: int = DEFAULT_BUDGET) -> None:
        self.graph = graph
        self.source = f"sparql:{graph.endpoint}"
        self.budget = budget

    def certify(self, path: Sequence[str], *, min_hops: int, max_hops: int = 50) -> Certificate:
        """The certificate of ``path`` (node ids interleaved with the step properties)."""
        nodes = [p for p in path if not p.startswith("P")]
        props: list[str | None] = []
        for i, tok in enumerate(path):
            if not tok.startswith("P") and i > 0:
                props.append(path[i - 1] if path[i - 1].startswith("P") else None)
        k = len(nodes) - 1
        lists = self.graph.lists(nodes)
        why = self._path_rules(nodes, props, lists, min_hops, max_hops)
        distance: int | None = None
        if why is None:
            try:
                found = self.shortest(nodes[0], nodes[-1], k - 1, lists)
            except Undecided:
                why = ("undecided", f"the search from {nodes[0]} and {nodes[-1]} read more than "
                                    f"{self.budget:,} neighbour lists without deciding")
            else:
                if found is None:
                    distance = k
                else:
                    distance = (len(found) - 1) // 2
                    why = ("shortcut", f"{nodes[-1]} is {distance} hops from {nodes[0]} on the endpoint "
                                       f"but at hop {k} of this path: {' '.join(found)}")
        return Certificate(
            scope="endpoint",
            source=self.source,
            holds=why is None,
            k=k,
            distance=distance,
            policy=self.graph.policy.describe(),
            reason=why[0] if why else None,
            detail=why[1] if why else None,
        )

    # -- the rules checked on the path itself --------------------------------------------
    def _path_rules(self, nodes: list[str], props: list[str | None], lists: dict[str, NeighbourList],
                    min_hops: int, max_hops: int) -> tuple[str, str] | None:
        for n in nodes:
            if lists[n].degree == 0:
                return "unsupported", f"{n} has no step edge on the endpoint"
        for i in range(1, len(nodes)):
            a, b, prop = nodes[i - 1], nodes[i], props[i - 1]
            known = lists[a] if lists[a].complete else lists[b] if lists[b].complete else None
            if known is None and len(nodes) > 2:
                continue  # an inner end is a hub: the policy rule below refuses the chain
            if known is None:  # a one-hop chain between two hubs: read one in full
                known = self.graph.lists([a], full=True)[a]
            other = b if known.node == a else a
            if not any(e.other == other and (prop is None or e.property == prop) for e in known.edges):
                via = f" with {prop}" if prop else ""
                return "unsupported", f"no step statement {a}–{b}{via} on the endpoint"
        limit = self.graph.policy.hub_limit
        for n in nodes[1:-1]:
            if lists[n].hub:
                return "policy", (f"{n} is a hub (degree {'≥ ' if not lists[n].complete else ''}"
                                  f"{lists[n].degree} > hub limit {limit}); chains may end on it "
                                  "but not pass through it")
        seen: dict[str, int] = {}
        for i, n in enumerate(nodes):
            if n in seen:
                return "repeat", f"{n} appears at positions {seen[n]} and {i}"
            seen[n] = i
        k = len(nodes) - 1
        if k < min_hops:
            return "too_short", f"{k} hops < min_hops {min_hops}"
        if k > max_hops:
            return "too_long", f"{k} hops > max_hops {max_hops}"
        return None

    # -- the bidirectional bounded search -----------------------------------------------
    def shortest(self, s: str, t: str, bound: int,
                 known: dict[str, NeighbourList] | None = None) -> tuple[str, ...] | None:
        """A shortest path of at most ``bound`` hops between ``s`` and ``t`` whose inner
        nodes are not hubs (ids interleaved with properties, from ``s``), or ``None``.
        Raises :class:`Undecided` past the budget."""
        if s == t:
            return (s,)
        info = dict(known or {})
        info.update(self.graph.lists([n for n in (s, t) if n not in info]))
        reads = 0
        if info[s].hub and info[t].hub:
            info[s] = self.graph.lists([s], full=True)[s]  # one end must be walked from
        sides = (_Side(s, info[s].complete), _Side(t, info[t].complete))
        while sides[0].level + sides[1].level < bound:
            open_sides = [x for x in (0, 1) if sides[x].frontier]
            if not open_sides:
                return None
            x = min(open_sides, key=lambda i: (len(sides[i].frontier), i))
            here, there = sides[x], sides[1 - x]
            todo = [n for n in here.frontier if n not in info]
            reads += len(todo)
            if reads > self.budget:
                raise Undecided
            info.update(self.graph.lists(todo))
            met: list[str] = []
            fresh: list[str] = []
            for u in here.frontier:
                if u != here.root and info[u].hub:
                    continue  # a hub is never walked through
                for edge in info[u].edges:
                    w = edge.other
                    if w in here.depth:
                        continue
                    here.depth[w] = here.level + 1
                    here.parent[w] = (u, edge)
                    fresh.append(w)
                    if w in there.depth:
                        met.append(w)
            here.level += 1
            here.frontier = sorted(set(fresh), key=lambda n: (number(n), n))
            inner = [w for w in met if w != there.root and w not in info]
            if inner:
                info.update(self.graph.lists(inner))
            met = [w for w in met if w == there.root or not info[w].hub]
            if met:
                best = min(met, key=lambda w: (here.depth[w] + there.depth[w], number(w), w))
                head, tail = sides[0].path_to_root(best), sides[1].path_to_root(best)
                return tuple(list(reversed(head)) + tail[1:])
        return None
