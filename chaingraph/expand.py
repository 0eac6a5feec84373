"""``expand``: collect a neighbourhood, enumerate valid chains, rank them, write records.

The library twin of ``chaingraph expand`` (DESIGN §3, §4). It collects first and
enumerates second, so results never depend on visiting order:

1. **collect** the neighbourhood of the seeds (breadth-first to ``max_hops``, neighbour
   cap, selector, per-layer budget) from the source — a SPARQL endpoint, an existing
   store, or by default the bundled sample — into a target store (in memory unless given);
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chaingraph.chains import AcceptAll, Chain, EdgeVerifier, Verdict, validate_bounds
from chaingraph.errors import ChainRuleError, InvalidInput, UnknownEntity
from chaingraph.explain import Explanation, explain_chain
from chaingraph.graph import EvidenceGraph, TraversalPolicy
from chaingraph.ids import is_item_id, qid
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
from chaingraph.store import Store
from chaingraph.timeline import Timeline, overall, parse_as_of

if TYPE_CHECKING:
    from chaingraph.collect import CollectReport
    from chaingraph.crosswalk import Crosswalk
    from chaingraph.sources.neighbours import Selector

__all__ = ["SAMPLE", "ExpandResult", "Neighbourhood", "RelationClassifier", "SeedSummary", "StableSteps",
           "chain_record", "evidence_graph", "expand", "explain_path", "relation_classifier"]

#: The bundled sample neighbourhood (real facts around Douglas Adams, Q42).
SAMPLE = "sample/douglas-adams.json"

Progress = Callable[[str], None]


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


@dataclass(frozen=True)
class RelationClassifier:
    """Relation class and deciding rule per property, from the crosswalk (DESIGN §5)."""

    version: str
    classes: dict[str, tuple[str | None, str | None]]

    def relation(self, prop: str) -> str | None:
        return self.classes.get(prop, (None, None))[0]


def relation_classifier(properties: Sequence[str], store: Store | None = None, *,
                        crosswalk: Crosswalk | None = None) -> RelationClassifier:
    """Classify ``properties`` once (class and deciding rule) with ``crosswalk`` (default: the
    shipped one), telling it what ``store`` knows of each property (label, aliases,
    description, datatype)."""
    from chaingraph.crosswalk import default_crosswalk, facts_from_store

    cw = crosswalk if crosswalk is not None else default_crosswalk()
    known = facts_from_store(store) if store is not None else {}
    out: dict[str, tuple[str | None, str | None]] = {}
    for p in sorted(set(properties)):
        c = cw.classify(known[p]) if p in known else cw.classify(p)
        out[p] = (c.relation_class, c.rule)
    return RelationClassifier(cw.version, out)


def _source_description(store: Store | str | Path | None, endpoint: str | None) -> str:
    if endpoint is not None:
        return endpoint
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
            raise InvalidInput(f"--store {path}: no such store file; create one with `chaingraph load` "
                               "or `chaingraph collect`")
        return Store(path, read_only=True), True
    from chaingraph.sources.loaders import load

    sample = Store()
    load([data_file(SAMPLE)], sample)
    return sample, True


def _collect(seeds: Sequence[str], *, source: Store | None, endpoint: str | None, radius: int,
             max_neighbours: int, select: int, layer_budget: int | None, selector: Selector | None,
             in_limit: int, user_agent: str | None, target: Store, progress: bool) -> CollectReport:
    """Collect the seeds' neighbourhood into ``target`` (DESIGN §3, :mod:`chaingraph.collect`)."""
    from chaingraph.collect import collect
    from chaingraph.sources.store_source import StoreSource

    extra: dict[str, Any] = {} if user_agent is None else {"user_agent": user_agent}
    return collect(list(seeds), radius, store=target,
                   source=StoreSource(source, in_limit=in_limit) if source is not None else None,
                   endpoint=endpoint, max_neighbours=max_neighbours, select=select,
                   layer_budget=layer_budget, selector=selector, in_limit=in_limit, progress=progress,
                   **extra)


@dataclass(frozen=True)
class Neighbourhood:
    """What :func:`evidence_graph` yields: the graph, the store behind it, the crosswalk
    used and the collection report (``None`` with ``collect=False``)."""

    graph: EvidenceGraph
    store: Store
    classifier: RelationClassifier
    collected: CollectReport | None


@contextmanager
def evidence_graph(seeds: Sequence[str], *, store: Store | str | Path | None = None,
                   endpoint: str | None = None, max_hops: int = 7, max_neighbours: int = 30,
                   select: int = 10, layer_budget: int | None = 1000,
                   policy: TraversalPolicy | None = None, selector: Selector | None = None,
                   target: Store | None = None, collect: bool = True, in_limit: int = 100,
                   user_agent: str | None = None, progress: Progress | None = None
                   ) -> Iterator[Neighbourhood]:
    """Collect the neighbourhood of ``seeds`` and build the evidence graph over it.

    A context manager yielding a :class:`Neighbourhood`: the graph, the store it was
    built from (statements, qualifiers, references and provenance are read from it), the
    crosswalk used and the collection report; stores it opened are closed on exit.
    ``collect=False`` takes the whole source store as the neighbourhood (no caps).
    """
    seeds = [qid(s, field="--seed") for s in seeds]
    if endpoint is not None and store is not None:
        raise InvalidInput("give either --endpoint or --store as the source, not both")
    policy = policy or TraversalPolicy()
    with ExitStack() as stack:
        source: Store | None = None
        if endpoint is None:
            source, opened = _open_source(store)
            if opened:
                stack.callback(source.close)
        built_from: Store
        report: CollectReport | None = None
        if collect:
            if target is None:
                target = Store()
                stack.callback(target.close)
            if progress:
                progress(f"collecting {len(seeds)} seed(s) to radius {max_hops} from "
                         f"{_source_description(store, endpoint)}")
            report = _collect(seeds, source=source, endpoint=endpoint, radius=max_hops,
                              max_neighbours=max_neighbours, select=select, layer_budget=layer_budget,
                              selector=selector, in_limit=in_limit, user_agent=user_agent,
                              target=target, progress=progress is not None)
            built_from = target
        else:
            if source is None:
                raise InvalidInput("collect=False needs a store as the source, not an endpoint")
            built_from = source
        props = [row[0] for row in built_from.con.execute(
            "SELECT DISTINCT property FROM statements ORDER BY 1").fetchall()]
        classifier = relation_classifier(props, built_from)
        graph = EvidenceGraph.from_store(built_from, policy=policy, classify=classifier.relation)
        yield Neighbourhood(graph, built_from, classifier, report)


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


def chain_record(graph: EvidenceGraph, chain: Chain, *, store: Store | None, classifier: RelationClassifier,
                 parameters: ChainParameters, table: TypeTable | None = None,
                 verifier: EdgeVerifier | None = None, timeline: Timeline | None = None) -> ChainRecord:
    """The :class:`ChainRecord` of one chain: nodes with label, type and familiarity; steps
    with property, relation class and rule, direction, statement, qualifiers, references
    and provenance (from ``store``), each step's time window and sensitivity (from
    ``timeline``, default the graph's or one read from ``store``), verification confidence,
    k and ``s_div``; ``as_of`` from the graph's policy."""
    from chaingraph.ranking import score_chain

    table = table or default_type_table()
    verifier = verifier or AcceptAll()
    timeline = timeline or graph.timeline or (Timeline.from_store(store) if store is not None else None)
    ranked = score_chain(graph, chain, table)
    types = node_types(graph, table)
    prop_labels = store.labels(sorted({graph.edge_property(e) for e in chain.edges})) if store else {}
    infos = {graph.edge_statement(e): store.statement(graph.edge_statement(e)) if store else None
             for e in chain.edges}
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
            return Verdict(False, 0.0, f"time-sensitive statement ({reason}); --stable-only keeps "
                           "stable steps")
        return self.inner(graph, edge, source)


def expand(seeds: Sequence[str], *, store: Store | str | Path | None = None, endpoint: str | None = None,
           min_hops: int = 5, max_hops: int = 7, max_neighbours: int = 30, select: int = 10,
           layer_budget: int | None = 1000, top: int = 20, policy: TraversalPolicy | None = None,
           verifier: EdgeVerifier | None = None, selector: Selector | None = None,
           types: TypeTable | None = None, target: Store | None = None, collect: bool = True,
           in_limit: int = 100, user_agent: str | None = None, progress: Progress | None = None,
           as_of: str | None = None, stable_only: bool = False) -> ExpandResult:
    """Collect, enumerate, rank and record: the ``top`` chains of each seed.

    ``as_of`` (ISO date, month or year) keeps only statements valid on that date — chains,
    the shortcut proof and the records all use that graph (DESIGN §11); ``stable_only``
    keeps only chains whose every step is time-stable.

    Source: ``endpoint`` (SPARQL URL), ``store`` (a :class:`Store` or the path of a store
    file, read only), or by default the bundled sample. The neighbour cap
    (``max_neighbours``), ``select``, ``layer_budget`` and the in-edge cap ``in_limit``
    apply to every source alike; ``user_agent`` is sent to SPARQL endpoints.
    ``target`` receives the collected statements (in memory by default).
    """
    seeds = [qid(s, field="--seed") for s in seeds]
    if not seeds:
        raise InvalidInput("give at least one --seed (a Q-id such as Q42)")
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ChainRuleError(f"--top must be a positive integer, got {top!r}")
    policy = policy or TraversalPolicy()
    if as_of is not None:
        policy = replace(policy, as_of=parse_as_of(as_of).text)
    table = types or default_type_table()
    records: list[ChainRecord] = []
    summaries: list[SeedSummary] = []
    with evidence_graph(seeds, store=store, endpoint=endpoint, max_hops=max_hops,
                        max_neighbours=max_neighbours, select=select, layer_budget=layer_budget,
                        policy=policy, selector=selector, target=target, collect=collect,
                        in_limit=in_limit, user_agent=user_agent, progress=progress) as hood:
        graph, built_from, classifier = hood.graph, hood.store, hood.classifier
        parameters = ChainParameters.model_validate({
            "min_hops": min_hops, "max_hops": max_hops,
            "max_neighbours": max_neighbours if collect else None, "select": select if collect else None,
            "layer_budget": layer_budget if collect else None, "policy": policy.describe(),
            "source": _source_description(store, endpoint), "top": top, "type_table": table.source,
            "verifier": type(verifier or AcceptAll()).__name__,
            "selector": getattr(selector, "__name__", type(selector).__name__) if selector else "first_k",
            "in_limit": hood.collected.in_limit if hood.collected else None,
            "collect_run": hood.collected.run_id if hood.collected else None, "stable_only": stable_only})
        timeline = graph.timeline or Timeline.from_store(built_from)
        if stable_only:
            verifier = StableSteps(timeline, verifier or AcceptAll())
        for seed in seeds:
            started = time.perf_counter()
            if progress:
                progress(f"enumerating chains of {min_hops}-{max_hops} hops from {seed}")
            if seed not in graph:
                raise UnknownEntity(seed, "the collected evidence graph",
                                    "check the id, or collect from a source that holds it")
            best = top_chains(graph, seed, top, min_hops, max_hops, verifier=verifier, table=table)
            records += [chain_record(graph, r.chain, store=built_from, classifier=classifier,
                                     parameters=parameters, table=table, verifier=verifier,
                                     timeline=timeline) for r in best]
            summaries.append(SeedSummary(seed, len(best), best[0].s_div if best else None,
                                         time.perf_counter() - started))
        vcount, ecount = graph.vcount(), graph.ecount()
        collected = hood.collected
    return ExpandResult(tuple(records), tuple(summaries), parameters, vcount, ecount, collected)


def explain_path(path: Sequence[str], *, store: Store | str | Path | None = None, endpoint: str | None = None,
                 min_hops: int = 5, max_hops: int = 7, max_neighbours: int = 30,
                 select: int = 10, layer_budget: int | None = 1000,
                 policy: TraversalPolicy | None = None, verifier: EdgeVerifier | None = None,
                 selector: Selector | None = None, collect: bool = True, in_limit: int = 100,
                 user_agent: str | None = None, progress: Progress | None = None,
                 as_of: str | None = None) -> Explanation:
    """Collect around the path's first node exactly as :func:`expand` would, then say
    why the path is or is not a valid chain (:func:`~chaingraph.chains.explain_chain`);
    with ``as_of``, a step whose statement does not hold on that date is named with its window."""
    items = [p.strip() for p in path if p.strip()]
    if not items or not is_item_id(items[0]):
        raise ChainRuleError(f"--explain {','.join(items)}: a path starts with its seed (a Q-id)")
    min_hops, max_hops = validate_bounds(min_hops, max_hops)
    if as_of is not None:
        policy = replace(policy or TraversalPolicy(), as_of=parse_as_of(as_of).text)
    with evidence_graph([items[0]], store=store, endpoint=endpoint, max_hops=max_hops,
                        max_neighbours=max_neighbours, select=select, layer_budget=layer_budget,
                        policy=policy, selector=selector, collect=collect, in_limit=in_limit,
                        user_agent=user_agent, progress=progress) as hood:
        return explain_chain(hood.graph, items, min_hops=min_hops, max_hops=max_hops, verifier=verifier)
