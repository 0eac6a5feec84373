"""Step edges of single items, straight from a SPARQL endpoint, under a traversal policy.

The whole-endpoint no-shortcut search (:mod:`chaingraph.build.endpoint_certify`) needs,
for an item, exactly what the evidence graph built over the whole source would hold
there: its step edges in both directions (item-valued, not deprecated, a property the
:class:`~chaingraph.settings.TraversalPolicy` allows) and whether it is a hub (more step
edges than ``hub_limit``: never walked through). :class:`EndpointGraph` asks
``queries/neighbours.rq`` for a batch of items at a time, capping each item and direction
at ``hub_limit + 1`` rows inside the query, so a hub costs at most that many rows and its
list is flagged incomplete (``complete=False``); :meth:`EndpointGraph.lists` with
``full=True`` asks without the cap (for the rare search that must start from a hub).

Every list is cached in memory and in a store (:meth:`~chaingraph.store.Store.cache_neighbour_lists`,
keyed by endpoint, the policy and the item), so chains sharing nodes and a resumed build
never ask twice. Policies with ``as_of`` or ``include_literals`` are refused: their edges
depend on qualifiers and literal statements this query does not read.

>>> render_neighbours(["Q42"], TraversalPolicy(hub_limit=10)).count("LIMIT 11")
2
>>> "p:P31, p:P279" in render_neighbours(["Q42"], TraversalPolicy())
True
>>> "FILTER(?claim IN (p:P50))" in render_neighbours(["Q42"], TraversalPolicy(properties=["P50", "P31"]))
True
>>> "FILTER(false)" in render_neighbours(["Q42"], TraversalPolicy(properties=["P31"]))
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chaingraph.errors import InvalidInput
from chaingraph.ids import from_iri, pid, qid, statement_id_from_rdf
from chaingraph.settings import EndpointSettings, TraversalPolicy
from chaingraph.sources.neighbours import number
from chaingraph.sources.sparql import SparqlClient
from chaingraph.sources.sparql_source import render_query

if TYPE_CHECKING:
    from chaingraph.store import Store

__all__ = ["EndpointGraph", "NeighbourList", "StepEdge", "check_endpoint_policy", "policy_key",
           "render_neighbours"]

_CLAIM = "http://www.wikidata.org/prop/"
_PS = "http://www.wikidata.org/prop/statement/"


@dataclass(frozen=True, order=True)
class StepEdge:
    """One step edge at an item: the item at its other end, the property, the statement
    id (JSON form) and ``forward`` (True when the edge runs item → other)."""

    other: str
    property: str
    statement_id: str
    forward: bool


@dataclass(frozen=True)
class NeighbourList:
    """An item's step edges. ``degree`` counts them (a lower bound when not ``complete``);
    ``hub`` says it has more than the hub limit; ``complete`` that ``edges`` holds all."""

    node: str
    edges: tuple[StepEdge, ...]
    degree: int
    hub: bool
    complete: bool

    def payload(self) -> str:
        return json.dumps({"d": self.degree, "h": self.hub, "c": self.complete,
                           "e": [[e.other, e.property, e.statement_id, e.forward] for e in self.edges]},
                          separators=(",", ":"))

    @classmethod
    def from_payload(cls, node: str, text: str) -> NeighbourList:
        doc = json.loads(text)
        return cls(node, tuple(StepEdge(o, p, s, bool(f)) for o, p, s, f in doc["e"]), int(doc["d"]),
                   bool(doc["h"]), bool(doc["c"]))


def check_endpoint_policy(policy: TraversalPolicy) -> None:
    """Refuse a policy whose step edges an endpoint search cannot reproduce."""
    if policy.as_of is not None:
        raise InvalidInput(
            "as_of: a whole-endpoint certificate cannot apply a date (statement windows need the "
            "qualifiers, which the search does not read); drop as_of, or build from a store"
        ).about("as_of")
    if policy.include_literals:
        raise InvalidInput(
            "include_literals: a whole-endpoint certificate counts item edges only; drop "
            "include_literals, or build from a store"
        ).about("include_literals")


def _filters(policy: TraversalPolicy) -> str:
    excluded = sorted(policy.class_properties | policy.excluded_properties, key=number)
    lines = []
    if excluded:
        lines.append(f"FILTER(?claim NOT IN ({', '.join(f'p:{pid(p)}' for p in excluded)}))")
    if policy.properties is not None:
        allowed = sorted(policy.properties - set(excluded), key=number)
        listed = ", ".join(f"p:{pid(p)}" for p in allowed)
        lines.append(f"FILTER(?claim IN ({listed}))" if allowed else "FILTER(false)")
    return " ".join(lines)  # one line: the header comment names {{filters}} too


def render_neighbours(items: Sequence[str], policy: TraversalPolicy, *, full: bool = False) -> str:
    """``queries/neighbours.rq`` for ``items`` under ``policy`` (no cap with ``full`` or no hub limit)."""
    cap = None if full or policy.hub_limit is None else policy.hub_limit + 1
    text = render_query("neighbours", items=items, limit=cap or 0).replace("{{filters}}", _filters(policy))
    return text.replace(" LIMIT 0\n", "\n") if cap is None else text


def policy_key(policy: TraversalPolicy, *, full: bool = False) -> str:
    """The cache key of a policy's neighbour lists (what changes the rows asked for)."""
    desc = json.dumps(policy.describe(), sort_keys=True)
    return hashlib.sha256(desc.encode()).hexdigest()[:16] + ("/full" if full else "")


def _parse(rows: Iterable[dict[str, Any]], items: Sequence[str], policy: TraversalPolicy,
           full: bool) -> dict[str, NeighbourList]:
    edges: dict[str, set[StepEdge]] = {i: set() for i in items}
    counts: dict[tuple[str, str], int] = {}
    for b in rows:
        item, other = from_iri(b["item"]["value"]), from_iri(b["other"]["value"])
        claim, ps, st, way = b["claim"]["value"], b["ps"]["value"], b["st"]["value"], b["dir"]["value"]
        if item not in edges or other is None or not claim.startswith(_CLAIM):
            continue
        counts[item, way] = counts.get((item, way), 0) + 1
        prop = claim[len(_CLAIM):]
        if ps != _PS + prop:
            continue
        try:
            sid = statement_id_from_rdf(st)
        except InvalidInput:
            continue
        edges[item].add(StepEdge(other, prop, sid, way == "out"))
    limit = policy.hub_limit
    out = {}
    for item, found in edges.items():
        capped = not full and limit is not None and any(counts.get((item, w), 0) > limit
                                                        for w in ("out", "in"))
        degree = len(found)
        hub = capped or (limit is not None and degree > limit)
        ordered = tuple(sorted(found, key=lambda e: (number(e.other), e.other, number(e.property),
                                                     e.statement_id, not e.forward)))
        out[item] = NeighbourList(item, ordered, degree, hub, full or not hub or not capped)
    return out


class EndpointGraph:
    """Neighbour lists of items on one endpoint under one policy (see the module docstring).

    ``cache`` is the store that keeps them across runs (``None``: this process only);
    ``requests`` counts the queries sent, ``cached`` the lists read from the store.
    """

    def __init__(self, endpoint: EndpointSettings | str, policy: TraversalPolicy, *,
                 cache: Store | None = None, client: SparqlClient | None = None,
                 batch_size: int | None = None) -> None:
        check_endpoint_policy(policy)
        settings = endpoint if isinstance(endpoint, EndpointSettings) else EndpointSettings(url=endpoint)
        self.settings = settings
        self.policy = policy
        self.client = client or SparqlClient(
            settings.url, cache=None, user_agent=settings.user_agent, timeout=settings.timeout,
            retry=settings.retry, offline=settings.offline, max_response_bytes=settings.max_response_bytes,
            deadline=settings.deadline)
        self.endpoint = self.client.endpoint
        self.cache = cache
        self.batch_size = batch_size or settings.batch_size
        self.cached = 0
        self._memory: dict[tuple[bool, str], NeighbourList] = {}

    @property
    def requests(self) -> int:
        return self.client.requests

    def lists(self, nodes: Iterable[str], *, full: bool = False) -> dict[str, NeighbourList]:
        """The neighbour list of every item in ``nodes`` (memory, then store, then endpoint)."""
        wanted = sorted({qid(n) for n in nodes}, key=lambda n: (number(n), n))
        out = {n: self._memory[full, n] for n in wanted if (full, n) in self._memory}
        todo = [n for n in wanted if n not in out]
        key = policy_key(self.policy, full=full)
        if todo and self.cache is not None:
            for node, text in self.cache.cached_neighbour_lists(self.endpoint, key, todo).items():
                out[node] = self._memory[full, node] = NeighbourList.from_payload(node, text)
                self.cached += 1
            todo = [n for n in todo if n not in out]
        size = 1 if full else self.batch_size
        for i in range(0, len(todo), size):
            chunk = todo[i : i + size]
            resp = self.client.select(render_neighbours(chunk, self.policy, full=full),
                                      query_file="neighbours.rq")
            got = _parse(resp.bindings, chunk, self.policy, full)
            if self.cache is not None:
                self.cache.cache_neighbour_lists(self.endpoint, key, {n: v.payload() for n, v in got.items()})
            for node, found in got.items():
                out[node] = self._memory[full, node] = found
        return out
