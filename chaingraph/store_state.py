"""The store's bookkeeping tables: crawl state and the SPARQL response cache.

These are :class:`~chaingraph.store.Store` methods (the classes here are mixins of
``Store``; import ``Store`` from :mod:`chaingraph.store`). They hold no Wikidata facts:
``crawl_runs`` / ``crawl_entities`` / ``crawl_neighbours`` let an interrupted
:func:`chaingraph.collect.collect` resume where it stopped, and ``responses`` keeps every
SPARQL response body by query hash so that a repeated or offline crawl replays it.

>>> from chaingraph.store import Store
>>> s = Store()
>>> s.start_crawl("run1", "store:x", ["Q1"], {"radius": 1})
>>> s.mark_crawled("run1", ["Q1"], "expanded", depth=0)
>>> s.add_crawl_neighbours("run1", [CrawlNeighbour("Q1", 0, "Q2", "P361", "Q1$a", True, True)])
>>> s.crawled("run1", "expanded"), [n.neighbour for n in s.crawl_neighbours("run1", ["Q1"])]
({'Q1'}, ['Q2'])
>>> s.finish_crawl("run1")
>>> s.cached_response("abc") is None
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

import duckdb
import pyarrow as pa

__all__ = ["CachedResponse", "CrawlNeighbour", "CrawlState", "NeighbourCache", "ResponseCache"]


class CrawlNeighbour(NamedTuple):
    """One kept neighbour of an expanded entity in a crawl run (a ``crawl_neighbours`` row).

    ``position`` orders an entity's kept neighbours; ``forward`` is True for an out-edge
    (``entity → neighbour`` in Wikidata's direction); ``selected`` marks the neighbours the
    selector picked for the next depth.
    """

    entity: str
    position: int
    neighbour: str
    property: str
    statement_id: str
    forward: bool
    selected: bool


class CachedResponse(NamedTuple):
    """A SPARQL response body as cached, and when it was retrieved."""

    body: str
    retrieved_at: datetime


def _now() -> datetime:
    return datetime.now(timezone.utc)


class CrawlState:
    """Crawl runs, the entities each run has finished, and what each expanded entity kept.

    Every write joins the current :meth:`Store.transaction`, so a crawl commits a batch of
    statements together with its crawl state.
    """

    con: duckdb.DuckDBPyConnection

    if TYPE_CHECKING:
        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...

    def start_crawl(self, run_id: str, source: str, seeds: Sequence[str], params: Mapping[str, Any]) -> None:
        """Register a run (its source name, seeds and JSON-able caps); a known run is left as it is."""
        with self.transaction():
            self.con.execute("INSERT OR IGNORE INTO crawl_runs VALUES (?, ?, ?, ?, ?, NULL)",
                             [run_id, source, list(seeds), json.dumps(dict(params), sort_keys=True), _now()])

    def crawled(self, run_id: str, stage: str) -> set[str]:
        """Entities of run ``run_id`` committed at ``stage`` (``expanded`` or ``described``)."""
        rows = self.con.execute("SELECT entity FROM crawl_entities WHERE run_id = ? AND stage = ?",
                                [run_id, stage]).fetchall()
        return {r[0] for r in rows}

    def mark_crawled(self, run_id: str, entities: Sequence[str], stage: str, *, depth: int) -> None:
        """Record ``entities`` as committed at ``stage`` and ``depth`` (repeats are ignored)."""
        with self.transaction():
            self.con.execute("INSERT OR IGNORE INTO crawl_entities SELECT ?, UNNEST(?), ?, ?, ?",
                             [run_id, list(entities), stage, depth, _now()])

    def add_crawl_neighbours(self, run_id: str, rows: Iterable[CrawlNeighbour]) -> None:
        """Record the kept neighbours of expanded entities (a known ``(entity, position)`` is kept)."""
        columns = list(zip(*rows))
        if not columns:
            return
        # an Arrow table, not list parameters (DuckDB converts those value by value)
        types = (pa.string(), pa.int32(), pa.string(), pa.string(), pa.string(), pa.bool_(), pa.bool_())
        table = pa.table({f"c{i}": pa.array(c, type=t) for i, (c, t) in enumerate(zip(columns, types))})
        with self.transaction():
            self.con.register("_cg_kept", table)
            try:
                self.con.execute("INSERT OR IGNORE INTO crawl_neighbours "
                                 "SELECT ?, c0, c1, c2, c3, c4, c5, c6 FROM _cg_kept", [run_id])
            finally:
                self.con.unregister("_cg_kept")

    def crawl_neighbours(self, run_id: str, entities: Sequence[str]) -> list[CrawlNeighbour]:
        """The kept neighbours of ``entities`` in run ``run_id``, by entity and position."""
        rows = self.con.execute(
            "SELECT entity, position, neighbour, property, statement_id, forward, selected "
            "FROM crawl_neighbours WHERE run_id = ? AND entity IN (SELECT UNNEST(?)) "
            "ORDER BY entity, position", [run_id, list(entities)]).fetchall()
        return [CrawlNeighbour(e, pos, nb, p, sid, bool(fwd), bool(sel))
                for e, pos, nb, p, sid, fwd, sel in rows]

    def finish_crawl(self, run_id: str) -> None:
        """Stamp run ``run_id`` as complete."""
        with self.transaction():
            self.con.execute("UPDATE crawl_runs SET finished_at = ? WHERE run_id = ?", [_now(), run_id])


class ResponseCache:
    """SPARQL response bodies keyed by query hash (see :func:`chaingraph.sources.sparql.query_hash`)."""

    con: duckdb.DuckDBPyConnection

    if TYPE_CHECKING:
        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...

    def cached_response(self, query_hash: str) -> CachedResponse | None:
        """The cached response for ``query_hash``, or ``None``."""
        rows = self.con.execute("SELECT body, retrieved_at FROM responses WHERE query_hash = ?",
                                [query_hash]).fetchall()
        return CachedResponse(*rows[0]) if rows else None

    def cache_response(self, query_hash: str, *, endpoint: str, query_file: str | None, query: str,
                       body: str, retrieved_at: datetime) -> None:
        """Cache (or replace) the response to ``query`` from ``endpoint``.

        >>> from chaingraph.store import Store
        >>> s = Store()
        >>> when = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> s.cache_response("h", endpoint="http://x/sparql", query_file="q.rq", query="ASK {}",
        ...                  body="{}", retrieved_at=when)
        >>> s.cached_response("h").body
        '{}'
        """
        with self.transaction():
            self.con.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                             [query_hash, endpoint, query_file, query, body, retrieved_at])


class NeighbourCache:
    """Per-item neighbour lists an endpoint returned, keyed by endpoint, a policy key and
    the item; the payload is opaque text (the certifier's JSON)."""

    con: duckdb.DuckDBPyConnection

    if TYPE_CHECKING:
        def transaction(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...

    def cached_neighbour_lists(self, endpoint: str, policy: str, nodes: Sequence[str]) -> dict[str, str]:
        """The cached payloads of ``nodes`` (those not cached are left out).

        >>> from chaingraph.store import Store
        >>> s = Store()
        >>> s.cache_neighbour_lists("http://x/sparql", "p1", {"Q1": "[]"})
        >>> s.cached_neighbour_lists("http://x/sparql", "p1", ["Q1", "Q2"]), \\
        ...     s.cached_neighbour_lists("http://x/sparql", "p2", ["Q1"])
        ({'Q1': '[]'}, {})
        """
        rows = self.con.execute(
            "SELECT node, payload FROM neighbour_lists WHERE endpoint = ? AND policy = ? "
            "AND node IN (SELECT UNNEST(?))", [endpoint, policy, list(nodes)]).fetchall()
        return {str(n): str(p) for n, p in rows}

    def cache_neighbour_lists(self, endpoint: str, policy: str, payloads: Mapping[str, str]) -> None:
        """Cache (or replace) the payload of each item."""
        if not payloads:
            return
        when = _now()
        with self.transaction():
            self.con.executemany("INSERT OR REPLACE INTO neighbour_lists VALUES (?, ?, ?, ?, ?)",
                                 [[endpoint, policy, n, p, when] for n, p in sorted(payloads.items())])
