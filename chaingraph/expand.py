"""``expand``: collect a neighbourhood, enumerate valid chains, rank them, write records.

The library twin of ``chaingraph expand`` (DESIGN §3, §4). It collects first and
enumerates second, so results never depend on visiting order:

1. **collect** the neighbourhood of the seeds (breadth-first to ``max_hops``, neighbour
   cap, selector, per-layer budget) from the source — a SPARQL endpoint, an existing
   store, or by default the bundled sample — into a target store (without one, a store
   is read in place: only statement ids are kept while crawling, and the neighbourhood is
   the source's subset of them);
2. build one :class:`~chaingraph.graph.EvidenceGraph` under the traversal policy;
3. per seed, the ``top`` chains by ``s_div`` (:func:`~chaingraph.ranking.top_chains`);
4. a :class:`~chaingraph.records.ChainRecord` per chain, with each step's statement,
   qualifiers, references and provenance read from the store.

>>> result = expand(["Q42"], top=2)
>>> [r.k for r in result.records], result.records[0].seed
([5, 6], 'Q42')
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chaingraph.chains import AcceptAll, Chain, EdgeVerifier, Verdict
from chaingraph.errors import ChainRuleError, InvalidInput, UnknownEntity
from chaingraph.graph import EvidenceGraph
from chaingraph.ids import is_item_id, qid
from chaingraph.progress import Progress, ProgressEvent
from chaingraph.ranking import TypeTable, default_type_table, familiarity, node_types, top_chains
from chaingraph.records import (
    ChainNode,
    ChainParameters,
    ChainRecord,
    ChainStep,
    Provenance,
    ReferenceSnak,
    Snak,
)
from chaingraph.resources import data_file
from chaingraph.settings import ChainBounds, CrawlLimits, EndpointSettings, TraversalPolicy, merged
from chaingraph.store import StatementInfo, Store
from chaingraph.timeline import Timeline, overall

if TYPE_CHECKING:
    from chaingraph.collect import CollectReport
    from chaingraph.crosswalk.relations import RelationClassifier
    from chaingraph.explain import Explanation
    from chaingraph.sources.neighbours import Selector

__all__ = ["SAMPLE", "ExpandResult", "Neighbourhood", "SeedSummary", "StableSteps", "chain_record",
           "chain_records", "evidence_graph", "expand", "explain_path"]

#: The bundled sample neighbourhood (real facts around Douglas Adams, Q42).
SAMPLE = "sample/douglas-adams.json"



@dataclass(frozen=True)
class SeedSummary:
    seed: str
    chains: int
    best_s_div: float | None
    seconds: float


@dataclass(frozen=True)
class ExpandResult:
    """Records (best first within each seed, seeds in the order given) and what produced them."""

    records: tuple[ChainRecord, ...]
    seeds: tuple[SeedSummary, ...]
    parameters: ChainParameters
    graph_vertices: int
    graph_edges: int
    collected: CollectReport | None = None


def _source_description(store: Store | str | Path | None, endpoint: EndpointSettings | None) -> str:
    if endpoint is not None:
        return endpoint.url
    if isinstance(store, Store):
        return str(store.path) if store.path else "store:memory"
    if store is not None:
        return str(store)
    return f"bundled:{SAMPLE}"


def _open_source(store: Store | str | Path | None) -> tuple[Store, bool]:
    """The source store and whether we opened it (and must close it)."""
    if isinstance(store, Store):
        return store, False
    if store is not None:
        path = Path(store)
        if not path.is_file():
            raise InvalidInput(f"store: {path}: no such store file; create one with `chaingraph load` "
                               "or `chaingraph collect`").about("store")
        return Store(path, read_only=True), True
    from chaingraph.sources.loaders import load

    sample = Store()
    load([data_file(SAMPLE)], sample)
    return sample, True


@dataclass(frozen=True)
class Neighbourhood:
    """What :func:`evidence_graph` yields: the graph (with its relation classifier), the
    store behind it and the collection report (``None`` with ``collect=False``)."""

    graph: EvidenceGraph
    store: Store
    collected: CollectReport | None

    @property
    def classifier(self) -> RelationClassifier:
        """The relation classes of the graph's properties (the graph's own)."""
        return self.graph.classifier


def _endpoint(endpoint: EndpointSettings | str | None) -> EndpointSettings | None:
    if endpoint is None or isinstance(endpoint, EndpointSettings):
        return endpoint
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise InvalidInput(f"endpoint: give a SPARQL endpoint URL, got {endpoint!r}").about("endpoint")
    return EndpointSettings(url=endpoint)


@contextmanager
def evidence_graph(seeds: Sequence[str], *, store: Store | str | Path | None = None,
                   endpoint: EndpointSettings | str | None = None, radius: int | None = None,
                   limits: CrawlLimits | None = None, policy: TraversalPolicy | None = None,
                   selector: Selector | None = None, target: Store | None = None, collect: bool = True,
                   progress: Progress | None = None) -> Iterator[Neighbourhood]:
    """Collect the neighbourhood of ``seeds`` and build the evidence graph over it.

    A context manager yielding a :class:`Neighbourhood`: the graph (carrying its relation
    classifier), the store it was built from (statements, qualifiers, references and
    provenance are read from it) and the collection report; stores it opened are closed
    on exit. The source is ``endpoint``, ``store`` (a :class:`Store` or a store file,
    read only) or by default the bundled sample; the crawl goes to ``radius`` (default:
    :class:`~chaingraph.settings.ChainBounds`' ``max_hops``) under ``limits``.
    ``collect=False`` takes the whole source store as the neighbourhood (no caps, so
    ``limits`` and ``selector`` are refused). Collecting from a store without a
    ``target`` reads the store in place (:func:`~chaingraph.collect.collect_subset`): the
    neighbourhood's store is then a read-only subset of the source, with the rows a copy
    would hold.
    """
    seeds = [qid(s, field="seeds") for s in seeds]
    settings = _endpoint(endpoint)
    if settings is not None and store is not None:
        raise InvalidInput("endpoint: give either an endpoint or a store as the source, not both"
                           ).about("endpoint")
    if not collect:
        for name, given in (("limits", limits), ("selector", selector), ("target", target),
                            ("endpoint", settings)):
            if given is not None:
                raise InvalidInput(f"{name}: collect=False takes the whole source store as the "
                                   f"neighbourhood, so {name} cannot apply; drop it or collect").about(name)
    radius = ChainBounds().max_hops if radius is None else radius
    policy = policy or TraversalPolicy()
    with ExitStack() as stack:
        source: Store | None = None
        if settings is None:
            source, opened = _open_source(store)
            if opened:
                stack.callback(source.close)
        built_from: Store
        report: CollectReport | None = None
        if collect:
            from chaingraph.collect import collect as crawl
            from chaingraph.collect import collect_subset

            if progress is not None:
                progress(ProgressEvent("expand", 0, len(seeds), unit="seeds", message=(
                    f"collecting {len(seeds)} seed(s) to radius {radius} from "
                    f"{_source_description(store, settings)}")))
            if target is None and source is not None and not source.is_subset:  # read in place
                built_from, report = collect_subset(seeds, radius, source=source, limits=limits,
                                                    selector=selector, progress=progress)
                stack.callback(built_from.close)
            else:
                if target is None:
                    target = Store()
                    stack.callback(target.close)
                report = crawl(seeds, radius, store=target, source=source, endpoint=settings, limits=limits,
                               selector=selector, progress=progress)
                built_from = target
        else:
            assert source is not None
            built_from = source
        yield Neighbourhood(EvidenceGraph.from_store(built_from, policy=policy), built_from, report)


def _provenance(sources: Sequence[dict[str, Any]]) -> tuple[Provenance, ...]:
    out = []
    for s in sources:
        when = s.get("retrieved_at")
        stamp = None if when is None else str(when.isoformat() if hasattr(when, "isoformat") else when)
        out.append(Provenance(kind=s["kind"], location=s["location"], query_file=s.get("query_file"),
                              query_hash=s.get("query_hash"),
                              retrieved_at=stamp,
                              dump_date=s.get("dump_date"), revision=s.get("revision")))
    return tuple(out)


def chain_record(graph: EvidenceGraph, chain: Chain, *, store: Store | None,
                 parameters: ChainParameters, table: TypeTable | None = None,
                 verifier: EdgeVerifier | None = None, timeline: Timeline | None = None) -> ChainRecord:
    """The :class:`ChainRecord` of one chain: nodes with label, type and familiarity; steps
    with property, relation class and rule (from the graph's classifier, the same one
    ``s_div`` is ranked with), direction, statement, qualifiers, references and provenance
    (from ``store``), each step's time window and sensitivity (from ``timeline``, default
    the graph's or one read from ``store``), verification confidence, k and ``s_div``;
    ``as_of`` from the graph's policy. :func:`chain_records` makes many at once."""
    return chain_records(graph, [chain], store=store, parameters=parameters, table=table, verifier=verifier,
                         timeline=timeline)[0]


def chain_records(graph: EvidenceGraph, chains: Sequence[Chain], *, store: Store | None,
                  parameters: ChainParameters, table: TypeTable | None = None,
                  verifier: EdgeVerifier | None = None, timeline: Timeline | None = None
                  ) -> list[ChainRecord]:
    """:func:`chain_record` of each chain, reading the statements and property labels of
    all of them from ``store`` at once."""
    table = table or default_type_table()
    timeline = timeline or graph.timeline or (Timeline.from_store(store) if store is not None else None)
    edges = {e for chain in chains for e in chain.edges}
    props = sorted({graph.edge_property(e) for e in edges})
    prop_labels = store.labels(props) if store and props else {}
    found = store.statements({graph.edge_statement(e) for e in edges}) if store and edges else {}
    return [_record(graph, chain, found, prop_labels, parameters=parameters, table=table,
                    verifier=verifier or AcceptAll(), timeline=timeline) for chain in chains]


def _record(graph: EvidenceGraph, chain: Chain, found: Mapping[str, StatementInfo],
            prop_labels: Mapping[str, str], *, parameters: ChainParameters,
            table: TypeTable, verifier: EdgeVerifier,
            timeline: Timeline | None) -> ChainRecord:
    from chaingraph.ranking import score_chain

    classifier = graph.classifier
    ranked = score_chain(graph, chain, table)
    types = node_types(graph, table)
    sids = [graph.edge_statement(e) for e in chain.edges]
    infos = {sid: found.get(sid) for sid in sids}
    nodes = []
    for v in chain.nodes:
        name = graph.name(v)
        value = None
        if graph.is_literal(v):
            info = infos.get(name.removesuffix("#value"))
            value = info.value if info is not None else None
        nodes.append(ChainNode(id=name, label=graph.labels.get(name), type=types[v],
                               classes=graph.classes.get(name, ()), familiarity=familiarity(graph, v),
                               literal=graph.is_literal(v), value=value))
    steps = []
    for i, e in enumerate(chain.edges):
        src, dst = chain.nodes[i], chain.nodes[i + 1]
        prop, sid = graph.edge_property(e), graph.edge_statement(e)
        verdict = verifier(graph, e, src)
        info = infos[sid]
        relation, rule = classifier.classes.get(prop, (None, None))
        steps.append(ChainStep(
            property=prop, property_label=prop_labels.get(prop), relation_class=relation, relation_rule=rule,
            direction="forward" if graph.edge_endpoints(e)[0] == src else "backward", statement_id=sid,
            source=graph.name(src), target=graph.name(dst),
            qualifiers=tuple(Snak.model_validate({"property": p, "snaktype": t, "value": val})
                             for p, t, val in info.qualifiers) if info else (),
            references=tuple(ReferenceSnak.model_validate({"reference_hash": h, "property": p,
                                                           "snaktype": t, "value": val})
                             for h, p, t, val in info.references) if info else (),
            provenance=_provenance(info.sources) if info else (),
            verified=verdict.accepted, confidence=verdict.confidence,
            window=timeline.window(sid) if timeline is not None else None,
            time_sensitivity=timeline.sensitivity(sid, prop) if timeline is not None else None))
    return ChainRecord(
        seed=graph.name(chain.nodes[0]), nodes=tuple(nodes), steps=tuple(steps), k=chain.k,
        s_div=ranked.s_div, types=ranked.types, relation_classes=ranked.relation_classes,
        verification_confidence=min((s.confidence for s in steps), default=1.0),
        crosswalk_version=classifier.version, parameters=parameters, as_of=graph.policy.as_of,
        time_sensitivity=overall(s.time_sensitivity for s in steps if s.time_sensitivity is not None)
        if timeline is not None else None)


@dataclass(frozen=True)
class StableSteps:
    """An edge verifier for ``stable_only``: a step is accepted only when its statement is
    time-stable (:mod:`chaingraph.timeline`) and ``inner`` accepts it."""

    timeline: Timeline
    inner: EdgeVerifier

    def __call__(self, graph: EvidenceGraph, edge: int, source: int) -> Verdict:
        reason = self.timeline.sensitivity(graph.edge_statement(edge), graph.edge_property(edge))
        if reason != "stable":
            return Verdict(False, 0.0, f"time-sensitive statement ({reason}); stable_only keeps "
                           "stable steps")
        return self.inner(graph, edge, source)


def expand(seeds: Sequence[str], *, store: Store | str | Path | None = None,
           endpoint: EndpointSettings | str | None = None, bounds: ChainBounds | None = None,
           limits: CrawlLimits | None = None, policy: TraversalPolicy | None = None,
           verifier: EdgeVerifier | None = None, selector: Selector | None = None,
           types: TypeTable | None = None, target: Store | None = None, collect: bool = True,
           progress: Progress | None = None, min_hops: int | None = None, max_hops: int | None = None,
           top: int | None = None, as_of: str | None = None, stable_only: bool = False) -> ExpandResult:
    """Collect, enumerate, rank and record: the ``top`` chains of each seed.

    ``as_of`` (ISO date, month or year; a shortcut for ``policy.as_of``) keeps only
    statements valid on that date — chains, the shortcut proof and the records all use that
    graph (DESIGN §11); ``stable_only`` keeps only chains whose every step is time-stable.

    Source: ``endpoint`` (:class:`~chaingraph.settings.EndpointSettings` or a SPARQL URL),
    ``store`` (a :class:`Store` or the path of a store file, read only), or by default the
    bundled sample. ``limits`` (crawl caps) apply to every source alike; ``bounds`` are
    the chain lengths and ``top`` (``min_hops``, ``max_hops`` and ``top`` are shortcuts
    for its fields); ``policy`` decides which statements are steps. ``target`` receives
    the collected statements (in memory by default).
    """
    seeds = [qid(s, field="seeds") for s in seeds]
    if not seeds:
        raise InvalidInput("seeds: give at least one seed (a Q-id such as Q42)").about("seeds")
    bounds = merged(ChainBounds, bounds, min_hops=min_hops, max_hops=max_hops, top=top)
    policy = merged(TraversalPolicy, policy, as_of=as_of)
    table = types or default_type_table()
    settings = _endpoint(endpoint)
    records: list[ChainRecord] = []
    summaries: list[SeedSummary] = []
    with evidence_graph(seeds, store=store, endpoint=settings, radius=bounds.max_hops, limits=limits,
                        policy=policy, selector=selector, target=target, collect=collect,
                        progress=progress) as hood:
        graph, built_from = hood.graph, hood.store
        parameters = ChainParameters(
            bounds=bounds, limits=hood.collected.limits if hood.collected else None, policy=policy,
            source=_source_description(store, settings), type_table=table.source,
            type_inventory=table.inventory, verifier=type(verifier or AcceptAll()).__name__,
            selector=(getattr(selector, "__name__", type(selector).__name__) if selector else "first_k")
            if collect else None,
            collect_run=hood.collected.run_id if hood.collected else None, stable_only=stable_only)
        timeline = graph.timeline or Timeline.from_store(built_from)
        if stable_only:
            verifier = StableSteps(timeline, verifier or AcceptAll())
        for done, seed in enumerate(seeds):
            started = time.perf_counter()
            if progress is not None:
                note = f"enumerating chains of {bounds.min_hops}-{bounds.max_hops} hops from {seed}"
                progress(ProgressEvent("expand", done, len(seeds), unit="seeds", current=seed, message=note))
            if seed not in graph:
                raise UnknownEntity(seed, "the collected evidence graph",
                                    "check the id, or collect from a source that holds it")
            best = top_chains(graph, seed, bounds.top, bounds.min_hops, bounds.max_hops, verifier=verifier,
                              table=table)
            scope = "neighbourhood" if collect else "source"
            records += [r.model_copy(update={"shortcut_scope": scope}) for r in chain_records(
                graph, [r.chain for r in best], store=built_from, parameters=parameters, table=table,
                verifier=verifier, timeline=timeline)]
            summaries.append(SeedSummary(seed, len(best), best[0].s_div if best else None,
                                         time.perf_counter() - started))
        if progress is not None:
            progress(ProgressEvent("expand", len(seeds), len(seeds), unit="seeds"))
        vcount, ecount = graph.vcount(), graph.ecount()
        collected = hood.collected
    return ExpandResult(tuple(records), tuple(summaries), parameters, vcount, ecount, collected)


def explain_path(path: Sequence[str], *, store: Store | str | Path | None = None,
                 endpoint: EndpointSettings | str | None = None, bounds: ChainBounds | None = None,
                 limits: CrawlLimits | None = None, policy: TraversalPolicy | None = None,
                 verifier: EdgeVerifier | None = None, selector: Selector | None = None,
                 collect: bool = True, progress: Progress | None = None,
                 min_hops: int | None = None, max_hops: int | None = None,
                 as_of: str | None = None) -> Explanation:
    """Collect around the path's first node exactly as :func:`expand` would, then say
    why the path is or is not a valid chain (:func:`~chaingraph.chains.explain_chain`);
    with ``as_of`` (shortcut for ``policy.as_of``) a step whose statement does not hold on
    that date is named with its window.
    ``path`` is a sequence of ids, node first, with optional property ids between nodes."""
    from chaingraph.explain import explain_chain

    items = [p.strip() for p in path if p.strip()]
    if not items or not is_item_id(items[0]):
        raise ChainRuleError(f"path: {','.join(items)}: a path starts with its seed (a Q-id)").about("path")
    bounds = merged(ChainBounds, bounds, min_hops=min_hops, max_hops=max_hops)
    policy = merged(TraversalPolicy, policy, as_of=as_of)
    with evidence_graph([items[0]], store=store, endpoint=endpoint, radius=bounds.max_hops, limits=limits,
                        policy=policy, selector=selector, collect=collect, progress=progress) as hood:
        return explain_chain(hood.graph, items, min_hops=bounds.min_hops, max_hops=bounds.max_hops,
                             verifier=verifier)
