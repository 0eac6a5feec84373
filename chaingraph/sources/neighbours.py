"""The vocabulary shared by the crawl and its sources: neighbours, batches, plug-in points.

A :class:`NeighbourSource` (SPARQL endpoint, existing store, ...) turns a batch of
entities into :class:`Neighbourhoods`: rows for the store, their provenance, and every
item :class:`Neighbour` of each entity. :func:`keep_neighbours` applies the deterministic
neighbour cap and a :class:`Selector` (default :func:`first_k`) picks what to expand.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, Protocol, runtime_checkable

import pyarrow as pa

from chaingraph.ids import is_item_id
from chaingraph.store import Batch

__all__ = [
    "CLASS_PROPERTIES",
    "KEPT_DATATYPES",
    "LITERAL_TYPES",
    "Neighbour",
    "NeighbourSource",
    "Neighbourhoods",
    "Selector",
    "SourceRef",
    "first_k",
    "keep_neighbours",
    "number",
]

#: properties that type a node (never neighbours, never in-edges to follow)
CLASS_PROPERTIES = frozenset({"P31", "P279"})
#: value types of literal statements a crawl keeps (plus items, somevalue and novalue)
LITERAL_TYPES = frozenset({"time", "quantity", "string", "monolingualtext", "globecoordinate"})
#: property datatypes (JSON spelling) whose statements a crawl keeps
KEPT_DATATYPES = frozenset(
    {"wikibase-item", "time", "quantity", "string", "monolingualtext", "globe-coordinate"}
)


class Neighbour(NamedTuple):
    """An item next to ``entity`` over one statement; ``forward``: entity is the subject."""

    entity: str
    property: str
    statement_id: str
    forward: bool
    rank: str = "normal"


class SourceRef(NamedTuple):
    """Provenance of rows, as a ``sources`` row (the store assigns its id)."""

    kind: str
    location: str
    query_file: str | None = None
    query_hash: str | None = None
    retrieved_at: datetime | None = None
    dump_date: str | None = None
    revision: str | None = None


@dataclass
class Neighbourhoods:
    """What a source returns for one batch: rows to store, their provenance, and, for
    :meth:`NeighbourSource.fetch`, every item neighbour of each requested entity.

    Provenance comes as ``(statement id, source)`` pairs, or, from bulk sources, as
    ``provenance_rows`` (an Arrow table ``statement_id``, ``ref``) indexing
    ``provenance_refs``."""

    batch: Batch = field(default_factory=Batch)
    provenance: list[tuple[str, SourceRef]] = field(default_factory=list)
    provenance_refs: list[SourceRef] = field(default_factory=list)
    provenance_rows: pa.Table | None = None
    sources: list[SourceRef] = field(default_factory=list)
    neighbours: dict[str, list[Neighbour]] = field(default_factory=dict)
    #: from a source that copies nothing (a store read in place): the source picked the
    #: statements this part brings itself, in place of rows
    in_place: bool = False
    #: set when the source applied :func:`keep_neighbours` itself with this ``max_neighbours``:
    #: ``neighbours`` then holds each entity's kept neighbours, in order
    capped: int | None = None
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0
    skipped: int = 0


@runtime_checkable
class NeighbourSource(Protocol):
    """Where neighbourhoods come from. ``fetch`` expands a batch of entities (statements,
    qualifiers, references, capped in-edges, properties); ``describe`` returns node facts
    (labels, sitelinks, ``P31`` statements). ``batch_size`` entities go to one call;
    ``in_limit`` caps in-edges per entity; ``name`` identifies the source in reports."""

    name: str
    batch_size: int
    describe_size: int
    in_limit: int

    def fetch(self, entities: Sequence[str]) -> Neighbourhoods: ...

    def describe(self, entities: Sequence[str]) -> Neighbourhoods: ...


class Selector(Protocol):
    """Pick at most ``k`` of ``candidates`` (already capped and ordered) to expand next."""

    def __call__(self, entity: str, candidates: Sequence[Neighbour], k: int) -> Sequence[Neighbour]: ...


def first_k(entity: str, candidates: Sequence[Neighbour], k: int) -> Sequence[Neighbour]:
    """The default selector: the first ``k`` candidates in the cap's deterministic order."""
    return list(candidates[:k])


def number(ident: str) -> int:
    """Numeric part of a Q/P id, for numeric ordering (``Q9 < Q10``)."""
    return int(ident[1:]) if ident[1:].isdigit() else sys.maxsize


def keep_neighbours(entity: str, candidates: Sequence[Neighbour], max_neighbours: int) -> list[Neighbour]:
    """At most ``max_neighbours`` distinct neighbour entities in the documented order.

    >>> n = [Neighbour("Q9", "P27", "s1", True), Neighbour("Q3", "P27", "s2", True),
    ...      Neighbour("Q7", "P19", "s3", True), Neighbour("Q4", "P50", "s4", False),
    ...      Neighbour("Q5", "P31", "s5", True), Neighbour("Q3", "P19", "s6", True)]
    >>> [x.entity for x in keep_neighbours("Q1", n, 10)]
    ['Q3', 'Q4', 'Q7', 'Q9']
    """
    groups: dict[tuple[bool, str], list[Neighbour]] = {}
    for n in candidates:
        if (
            n.rank == "deprecated"
            or n.property in CLASS_PROPERTIES
            or n.entity == entity
            or not is_item_id(n.entity)
        ):
            continue
        groups.setdefault((n.forward, n.property), []).append(n)
    ordered = [
        sorted(g, key=lambda n: (number(n.entity), n.statement_id))
        for _, g in sorted(groups.items(), key=lambda kv: (not kv[0][0], number(kv[0][1])))
    ]
    kept: list[Neighbour] = []
    seen: set[str] = set()
    for i in range(max((len(g) for g in ordered), default=0)):
        for g in ordered:
            if i < len(g) and g[i].entity not in seen:
                if len(kept) >= max_neighbours:
                    return kept
                seen.add(g[i].entity)
                kept.append(g[i])
    return kept
