"""Collect Wikidata neighbourhoods breadth-first into the store (DESIGN §3).

One crawl, pluggable sources::

    collect(seeds, radius, store=..., endpoint=EndpointSettings(url=...))   # SPARQL
    collect(seeds, radius, store=..., source=existing_store)              # no network
    collect(seeds, radius, store=..., source=my_neighbour_source)         # a plug-in

From each seed the crawl runs breadth-first. Every entity at depth ``d < radius`` is
*expanded*: its source returns all its item-valued and literal statements (every rank,
with qualifiers and references) and its item-valued in-edges (capped per entity by the
source's ``in_limit``, class properties ``P31``/``P279`` excluded). Entities at depth
``radius`` are not expanded: an edge that could short-cut a path to them was already
retrieved, within the caps, from the entity at its other end. Every retrieved statement
is written to the store, selected or not.

**Neighbour cap** (:func:`keep_neighbours`, deterministic): an expanded entity's item
neighbours, minus deprecated statements, class properties and self-loops, are grouped by
(direction, property); groups are ordered out-edges first, then by numeric property id;
inside a group by numeric neighbour id, then statement id. The groups are read
round-robin (first of each group, then second of each, ...) so that one prolific
property cannot crowd out the others, and each neighbour entity is kept once, up to
``max_neighbours``. Kept neighbours are *described* (label, description, aliases,
sitelinks, ``P31`` statements).

**Selector**: a :class:`Selector` picks at most ``select`` of the kept neighbours to
expand at the next depth; the default :func:`first_k` takes the first ``k`` in the cap's
order. Neighbours already reached at an earlier depth are not offered.

**Layer budget**: at most ``layer_budget`` entities are expanded per depth (seeds are
never cut). When more were selected, those picked by more parents come first, then those
picked earlier in a parent's list, then lower numeric ids.

Each source batch is committed in its own transaction together with the crawl state
(tables ``crawl_runs``, ``crawl_entities``, ``crawl_neighbours``), so an interrupted run
keeps everything and the same call resumes where it stopped. A run is identified by its
source, seeds and caps (``CollectReport.run_id``): repeating a finished run fetches
nothing; other caps or another store start a new one (responses cached in the store are
still reused).

>>> from chaingraph.store import Batch, Store, statement_row
>>> from chaingraph.values import EntityValue
>>> src = Store()
>>> sid = src.add_source("fixture", "doctest")
>>> rows = [statement_row(f"Q{a}$1", f"Q{a}", "P361", EntityValue(id=f"Q{b}")) for a, b in [(1, 2), (2, 3)]]
>>> src.write(Batch(statements=rows, statement_sources=[(r[0], sid) for r in rows]))
>>> target = Store()
>>> report = collect(["Q1"], 2, store=target, source=src)
>>> report.entities_expanded, sorted(e.object for e in target.edges())
(2, ['Q2', 'Q3'])
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from chaingraph.errors import InvalidInput
from chaingraph.ids import qid
from chaingraph.progress import Progress, ProgressEvent
from chaingraph.settings import CrawlLimits, EndpointSettings, merged
from chaingraph.sources.neighbours import (
    Neighbour,
    Neighbourhoods,
    NeighbourSource,
    Selector,
    SourceRef,
    first_k,
    keep_neighbours,
    number,
)
from chaingraph.store import CrawlNeighbour, Store

if TYPE_CHECKING:
    from chaingraph.sources.store_source import StoreSource

__all__ = ["CollectReport", "LayerReport", "collect", "collect_subset"]


class LayerReport(BaseModel):
    """One BFS depth: ``reached`` entities (before the budget cut ``over_budget``),
    ``expanded`` (``entities``, in id order; ``resumed`` of them were done by an earlier,
    interrupted run), ``described`` nodes, and the requests / retries / cache hits spent."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    depth: int
    reached: int
    expanded: int
    over_budget: int
    described: int
    resumed: int
    requests: int
    retries: int
    cache_hits: int
    entities: list[str]


class CollectReport(BaseModel):
    """What a collection did, with the caps and budget in force (recorded in chain records).

    ``run_id`` identifies the crawl (source, seeds and caps) in the store's crawl tables;
    ``statements`` counts the distinct statements this call wrote; ``skipped_values`` the
    values that could not be read (they are left out, never guessed); ``resumed`` the
    entities an earlier interrupted run of the same crawl had already finished.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: str
    source: str
    seeds: list[str]
    radius: int
    max_neighbours: int
    select: int
    layer_budget: int | None
    in_limit: int
    batch_size: int
    offline: bool
    layers: list[LayerReport]
    entities_expanded: int
    entities_described: int
    statements: int
    requests: int
    retries: int
    cache_hits: int
    skipped_values: int
    resumed: int

    @property
    def limits(self) -> CrawlLimits:
        """The crawl caps this run used."""
        return CrawlLimits(max_neighbours=self.max_neighbours, select=self.select,
                           layer_budget=self.layer_budget, in_limit=self.in_limit)


# -- the crawl --------------------------------------------------------------------------------


class _Crawl:
    """Crawl state in the store: which entities of a run are done, what they kept and picked."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store, self.run_id = store, run_id
        self.written: set[str] = set()

    def statements(self) -> int:
        """Distinct statements this crawl wrote."""
        return len(self.written)

    def start(self, source: str, seeds: list[str], params: dict[str, Any]) -> None:
        self.store.start_crawl(self.run_id, source, seeds, params)

    def done(self, stage: str) -> set[str]:
        return self.store.crawled(self.run_id, stage)

    def kept(self, entities: Sequence[str]) -> dict[str, tuple[list[Neighbour], list[Neighbour]]]:
        out: dict[str, tuple[list[Neighbour], list[Neighbour]]] = {e: ([], []) for e in entities}
        for row in self.store.crawl_neighbours(self.run_id, entities):
            n = Neighbour(row.neighbour, row.property, row.statement_id, row.forward)
            out[row.entity][0].append(n)
            if row.selected:
                out[row.entity][1].append(n)
        return out

    def commit(
        self,
        part: Neighbourhoods,
        stage: str,
        depth: int,
        entities: Sequence[str],
        kept: dict[str, tuple[list[Neighbour], list[Neighbour]]],
    ) -> None:
        """Write a batch, its provenance and the crawl state in one transaction."""
        if part.in_place:
            raise InvalidInput("source: this source copies no rows (StoreSource(copy=False)); crawl it "
                               "with collect_subset").about("source")
        with self.store.transaction():
            ids: dict[SourceRef, str] = {}
            refs = {r for _, r in part.provenance} | set(part.sources) | set(part.provenance_refs)
            for ref in sorted(refs, key=lambda r: tuple(map(str, r))):
                ids[ref] = self.store.add_source(
                    ref.kind, ref.location, query_file=ref.query_file, query_hash=ref.query_hash,
                    dump_date=ref.dump_date, revision=ref.revision, retrieved_at=ref.retrieved_at)
            part.batch.statement_sources = [(sid, ids[ref]) for sid, ref in part.provenance]
            if part.provenance_rows is not None:
                source_ids = pa.array([ids[r] for r in part.provenance_refs], type=pa.string())
                part.batch.tables["statement_sources"] = pa.table({
                    "statement_id": part.provenance_rows["statement_id"],
                    "source_id": source_ids.take(part.provenance_rows["ref"])})
            self.store.write(part.batch)
            self.store.mark_crawled(self.run_id, entities, stage, depth=depth)
            rows: list[CrawlNeighbour] = []
            for ent, (keep, sel) in kept.items():
                picked = set(sel)
                rows += [CrawlNeighbour(ent, i, n.entity, n.property, n.statement_id, n.forward, n in picked)
                         for i, n in enumerate(keep)]
            self.store.add_crawl_neighbours(self.run_id, rows)
        self.written.update(part.batch.statement_ids())

    def finish(self) -> None:
        self.store.finish_crawl(self.run_id)


class _Picks:
    """The crawl of a store read in place (:func:`collect_subset`): the source picks the
    statements and entities of each part inside DuckDB (:attr:`Neighbourhoods.in_place`)
    rather than bring rows, and :meth:`finish` makes the source's subset of them. Nothing
    is resumable (the subset starts empty every time)."""

    def __init__(self, source: StoreSource) -> None:
        self.source = source
        self.store: Store | None = None
        self.count = 0

    def start(self, source: str, seeds: list[str], params: dict[str, Any]) -> None:
        """Records no run: a crawl read in place is not resumable (see the class doc)."""

    def done(self, stage: str) -> set[str]:
        return set()

    def kept(self, entities: Sequence[str]) -> dict[str, tuple[list[Neighbour], list[Neighbour]]]:
        return {e: ([], []) for e in entities}

    def commit(self, part: Neighbourhoods, stage: str, depth: int, entities: Sequence[str],
               kept: dict[str, tuple[list[Neighbour], list[Neighbour]]]) -> None:
        if not part.in_place or len(part.batch):
            raise InvalidInput("source: collect_subset needs a source that picks statements in place and "
                               "copies no rows").about("source")

    def finish(self) -> None:
        assert self.source.picks is not None
        self.store = self.source.picks.subset()
        self.count = self.store.statement_count()  # every id picked is a statement of the source

    def statements(self) -> int:
        return self.count


def _chunks(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[i : i + size]) for i in range(0, len(items), max(1, size))]


def _by_number(ids: set[str] | list[str]) -> list[str]:
    return sorted(ids, key=lambda e: (number(e), e))


def _budget(picks: dict[str, list[int]], budget: int | None) -> tuple[list[str], int]:
    """Entities picked for the next depth, cut to ``budget`` (more parents first, then
    earlier picks, then lower ids); returns them in id order and how many were dropped."""
    order = sorted(picks, key=lambda e: (-len(picks[e]), min(picks[e]), number(e), e))
    keep = order if budget is None else order[:budget]
    return _by_number(keep), len(order) - len(keep)


def _check_selection(
    entity: str, chosen: Sequence[Neighbour], kept: list[Neighbour], k: int
) -> list[Neighbour]:
    allowed = set(kept)
    out = list(chosen)
    if len(out) > k or any(n not in allowed for n in out):
        raise InvalidInput(
            f"selector returned {len(out)} neighbours for {entity}, not a subset of the "
            f"{len(kept)} candidates of size at most {k}; fix the selector plug-in"
        )
    return out


def collect(
    seeds: Sequence[str],
    radius: int,
    *,
    store: Store,
    source: NeighbourSource | Store | None = None,
    endpoint: EndpointSettings | str | None = None,
    limits: CrawlLimits | None = None,
    selector: Selector | None = None,
    progress: Progress | None = None,
    max_neighbours: int | None = None,
    select: int | None = None,
    layer_budget: int | None = None,
    in_limit: int | None = None,
) -> CollectReport:
    """Crawl the neighbourhoods of ``seeds`` to ``radius`` into ``store``; see the module doc.

    The source is ``source`` (a :class:`~chaingraph.sources.neighbours.NeighbourSource`,
    or a :class:`Store` read through
    :class:`~chaingraph.sources.store_source.StoreSource`) or a SPARQL ``endpoint``
    (:class:`~chaingraph.settings.EndpointSettings` or a URL; WDQS by default), whose
    responses are cached in ``store``. ``limits`` are the crawl caps; ``max_neighbours``,
    ``select``, ``layer_budget`` and ``in_limit`` are shortcuts for its fields. A setting
    the given source cannot honour is refused, never dropped. Arguments are checked
    before any request is built. ``progress`` receives a
    :class:`~chaingraph.progress.ProgressEvent` per batch: stage ``collect``, item
    ``layer N``, entities expanded of that layer, and the layer's requests, retries and
    cache hits as ``detail``.
    """
    seed_ids = _checked(seeds, radius)
    explicit_in_limit = in_limit is not None or (limits is not None and "in_limit" in limits.model_fields_set)
    limits = merged(CrawlLimits, limits, max_neighbours=max_neighbours, select=select,
                    layer_budget=layer_budget, in_limit=in_limit)
    if source is not None and endpoint is not None:
        raise InvalidInput("endpoint: pass either a source or an endpoint, not both").about("endpoint")
    if isinstance(source, Store):
        from chaingraph.sources.store_source import StoreSource

        source = StoreSource(source, limits=limits)
    elif source is None:
        from chaingraph.sources.sparql_source import SparqlSource  # only a SPARQL crawl pays for it

        source = SparqlSource(endpoint or EndpointSettings(), store_for_cache=store, limits=limits)
    elif explicit_in_limit and limits.in_limit != source.in_limit:
        raise InvalidInput(
            f"in_limit: the given source caps in-edges at {source.in_limit}, not {limits.in_limit}; "
            "build the source with the limits you want").about("in_limit")
    return _crawl(seed_ids, radius, source, limits, selector, progress, lambda run_id: _Crawl(store, run_id))


def _checked(seeds: Sequence[str], radius: int) -> list[str]:
    seed_ids = sorted({qid(s, field="seeds") for s in seeds}, key=lambda e: (number(e), e))
    if not seed_ids:
        raise InvalidInput("seeds: give at least one seed (a Q-id such as Q42)").about("seeds")
    if isinstance(radius, bool) or not isinstance(radius, int) or radius < 0:
        raise InvalidInput(f"radius: must be an integer >= 0, got {radius!r}").about("radius")
    return seed_ids


def collect_subset(seeds: Sequence[str], radius: int, *, source: Store, limits: CrawlLimits | None = None,
                   selector: Selector | None = None, progress: Progress | None = None
                   ) -> tuple[Store, CollectReport]:
    """:func:`collect` from the store ``source`` into a new store, without copying rows:
    the crawl reads ``source`` in place and keeps the statement ids it picks inside DuckDB
    (only the kept neighbours reach Python), and the store it returns is the
    :meth:`Store.subset` of them (it shares ``source``'s database: close it first). Same
    crawl, same rows, same report as collecting into an empty :class:`Store` (DESIGN §13).

    >>> from chaingraph.store import Batch, Store, statement_row
    >>> from chaingraph.values import EntityValue
    >>> src = Store()
    >>> src.write(Batch(statements=[statement_row(f"Q{a}$1", f"Q{a}", "P361", EntityValue(id=f"Q{a + 1}"))
    ...                             for a in (1, 2)]))
    >>> part, report = collect_subset(["Q1"], 2, source=src)
    >>> report.statements, [e.object for e in part.edges()]
    (2, ['Q2', 'Q3'])
    >>> report == collect(["Q1"], 2, store=Store(), source=src)
    True
    >>> part.close()
    """
    from chaingraph.sources.store_source import StoreSource

    seed_ids = _checked(seeds, radius)
    if source.is_subset:
        raise InvalidInput("source: a subset cannot be narrowed in place; collect from it into a "
                           "Store() instead").about("source")
    limits = limits or CrawlLimits()
    reader = StoreSource(source, limits=limits, copy=False)
    picks = _Picks(reader)
    try:
        report = _crawl(seed_ids, radius, reader, limits, selector, progress, lambda run_id: picks)
    except BaseException:
        reader.close()  # the subset was not made: drop what was picked
        raise
    assert picks.store is not None
    return picks.store, report


def _crawl(seed_ids: list[str], radius: int, source: NeighbourSource, limits: CrawlLimits,
           selector: Selector | None, progress: Progress | None,
           sink: Callable[[str], _Crawl | _Picks]) -> CollectReport:
    """The breadth-first crawl of the module doc from ``source``; ``sink(run_id)`` keeps
    what it brings."""
    max_neighbours, select, layer_budget = limits.max_neighbours, limits.select, limits.layer_budget
    pick = selector or first_k
    params = {
        "radius": radius,
        "max_neighbours": max_neighbours,
        "select": select,
        "layer_budget": layer_budget,
        "in_limit": source.in_limit,
    }
    key = json.dumps([source.name, seed_ids, params], sort_keys=True)
    run_id = hashlib.sha1(key.encode()).hexdigest()[:16]
    crawl = sink(run_id)
    crawl.start(source.name, seed_ids, params)
    done_exp, done_desc = crawl.done("expanded"), crawl.done("described")
    resumed = len(done_exp) + len(done_desc)
    totals = {"requests": 0, "retries": 0, "cache_hits": 0, "skipped": 0}
    layers: list[dict[str, Any]] = []
    seen: set[str] = set(seed_ids)
    frontier, over = seed_ids, 0

    def tell(depth: int, done: int, total: int, cost: dict[str, int]) -> None:
        if progress is not None:
            progress(ProgressEvent("collect", done, total, unit="entities", item=f"layer {depth}",
                                   detail=cost))

    for depth in range(radius + 1):
        cost = {"requests": 0, "retries": 0, "cache_hits": 0}

        def account(part: Neighbourhoods, cost: dict[str, int] = cost) -> None:
            for key in cost:
                cost[key] += getattr(part, key)
                totals[key] += getattr(part, key)
            totals["skipped"] += part.skipped

        expand = frontier if depth < radius else []
        todo = [e for e in expand if e not in done_exp]
        kept = crawl.kept([e for e in expand if e in done_exp])
        done = len(expand) - len(todo)
        tell(depth, done, len(expand), cost)
        for chunk in _chunks(todo, source.batch_size):
            part = source.fetch(chunk)
            account(part)
            fresh: dict[str, tuple[list[Neighbour], list[Neighbour]]] = {}
            if part.capped not in (None, max_neighbours):
                raise InvalidInput(f"max_neighbours: the source kept {part.capped} neighbours per entity, "
                                   f"not {max_neighbours}; build the source with the limits you want"
                                   ).about("max_neighbours")
            for ent in chunk:
                found = part.neighbours.get(ent, [])
                keep = found if part.capped is not None else keep_neighbours(ent, found, max_neighbours)
                offer = [n for n in keep if n.entity not in seen]
                fresh[ent] = (keep, _check_selection(ent, pick(ent, offer, select), offer, select))
            crawl.commit(part, "expanded", depth, chunk, fresh)
            kept.update(fresh)
            done += len(chunk)
            tell(depth, done, len(expand), cost)
        # describe this depth's entities and every kept neighbour
        wanted = set(frontier) | {n.entity for keep, _ in kept.values() for n in keep}
        todo_desc = _by_number(wanted - done_desc)
        for chunk in _chunks(todo_desc, source.describe_size):
            part = source.describe(chunk)
            account(part)
            crawl.commit(part, "described", depth, chunk, {})
            done_desc.update(chunk)
            tell(depth, done, len(expand), cost)
        layers.append({"depth": depth, "reached": len(frontier) + over, "expanded": len(expand),
                       "over_budget": over, "described": len(todo_desc), "resumed": len(expand) - len(todo),
                       "entities": expand, **cost})
        if depth == radius:
            break
        picks: dict[str, list[int]] = {}
        for ent in expand:
            for pos, n in enumerate(kept.get(ent, ([], []))[1]):
                if n.entity not in seen:
                    picks.setdefault(n.entity, []).append(pos)
        frontier, over = _budget(picks, layer_budget)
        seen.update(frontier)
        if not frontier:
            break
    crawl.finish()
    # the reports are made once the crawl's short-lived rows are gone, with ids of their own:
    # Python frees a memory page only when every object on it is, and an id kept from a row
    # would keep that row's page (on CoDEx-M the crawl's pages held ~20 MB for 200 KB of ids)
    reports = [LayerReport(**{**lay, "entities": [e.encode().decode() for e in lay["entities"]]})
               for lay in layers]
    return CollectReport(
        run_id=run_id,
        source=source.name,
        seeds=seed_ids,
        radius=radius,
        max_neighbours=max_neighbours,
        select=select,
        layer_budget=layer_budget,
        in_limit=source.in_limit,
        batch_size=source.batch_size,
        offline=bool(getattr(getattr(source, "client", None), "offline", False)),
        layers=reports,
        entities_expanded=sum(lay.expanded for lay in reports),
        entities_described=len(done_desc),
        statements=crawl.statements(),
        requests=totals["requests"],
        retries=totals["retries"],
        cache_hits=totals["cache_hits"],
        skipped_values=totals["skipped"],
        resumed=resumed,
    )
