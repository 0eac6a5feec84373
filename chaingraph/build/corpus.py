"""The per-seed step of ``build`` and the records it writes (DESIGN §10).

:func:`build_seed` is the unit of work a build runs once per seed, in this process, a
local worker process or a Ray task (and the function a pipeline calls from its own
Ray Data or Dask job): given the :class:`BuildParameters` and a seed it

1. collects the seed's neighbourhood from the store under the crawl caps (or, with
   ``collect=False``, takes the whole store), enumerates the ``top`` chains by ``s_div``
   and writes their chain records;
2. **familiarity**: drops a chain with a node other than the seed whose sitelink count is
   above ``max_familiarity`` (the seed is the visual anchor: it is seen, not guessed;
   nodes without a sitelink count pass);
   with ``stable_only``, **time_stable** then drops a chain with a time-sensitive step
   (DESIGN §11: ended, superseded or a changing property);
3. **whole-source certificate**: drops a chain that is not a valid chain in the whole
   store (:mod:`chaingraph.build.certify`), e.g. because a shorter path exists there;
4. **clue proposal**: :func:`~chaingraph.propose.propose_clues` over every statement of
   the store (no hub rule unless ``task_hub_limit``); no clue set making the target the
   unique answer → dropped (``not_unique``);
5. **anchor screen**: a proposal whose anchor is not necessary is a text-only shortcut →
   dropped (``text_only_shortcut``);
6. **necessity certificate**: :func:`~chaingraph.necessity.check_necessity` re-ablates the
   kept clues; every clue must be necessary (``necessity``), and H and the level come
   from it.

The result (:class:`SeedResult`) holds the kept :class:`CorpusTask` records in rank
order, every :class:`Rejection`, the funnel counts and the error, if the seed failed.
Everything in it is deterministic (no times, no run ids) except ``seconds``.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chaingraph import __version__
from chaingraph.build.certify import Certificate, StoreCertifier
from chaingraph.errors import ChaingraphError, InvalidInput
from chaingraph.graph import EvidenceGraph
from chaingraph.records import ChainParameters, ChainRecord, Level
from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy
from chaingraph.store import Store
from chaingraph.tasks import Task

if TYPE_CHECKING:
    from chaingraph.build.endpoint_seed import EndpointContext

__all__ = [
    "CORPUS_TASK_VERSION",
    "DEFAULT_MAX_FAMILIARITY",
    "FUNNEL",
    "BuildParameters",
    "Certifier",
    "CorpusTask",
    "NecessityCertificate",
    "Rejection",
    "SeedContext",
    "SeedResult",
    "SeedView",
    "build_seed",
    "open_context",
]

CORPUS_TASK_VERSION = "chaingraph.corpus-task/1"
#: default familiarity ceiling: a chain node (not the seed) with more sitelinks is too well
#: known (a country, a capital, a world-famous person), so its hop is guessable
DEFAULT_MAX_FAMILIARITY = 150
#: per-chain funnel stages, in order (each counts the chains that passed it)
FUNNEL = (
    "chains",
    "familiarity",
    "time_stable",
    "no_shortcut_in_source",
    "unique_minimal_clues",
    "anchor_necessary",
    "kept",
)
_FROZEN = ConfigDict(frozen=True, extra="forbid")


class BuildParameters(BaseModel):
    """Every parameter of a build (recorded in each task and in the manifest). The source
    is ``store`` (a store file) or ``endpoint`` (a SPARQL endpoint URL), exactly one;
    ``bounds``/``limits``/``policy`` are expand's (``limits`` ``None`` with
    ``collect=False``); ``task_hub_limit`` the necessity policy (``None``: answer sets
    over every statement); ``max_values``/``budget`` clue proposal's."""

    model_config = _FROZEN
    store: str | None = None
    endpoint: str | None = None
    bounds: ChainBounds = ChainBounds()
    limits: CrawlLimits | None = CrawlLimits()
    policy: TraversalPolicy = TraversalPolicy()
    collect: bool = True
    max_familiarity: int | None = Field(default=DEFAULT_MAX_FAMILIARITY, ge=0)
    stable_only: bool = False
    task_hub_limit: int | None = Field(default=None, ge=0)
    max_values: int = Field(default=8, ge=0)
    budget: int = Field(default=30, ge=1)  # propose_clues and `chaingraph task` use 30 too
    fuse: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> BuildParameters:
        if (self.store is None) == (self.endpoint is None):
            raise ValueError("give exactly one source: store or endpoint")
        return self

    @property
    def source(self) -> str:
        """The source as provenance names it: ``store:PATH`` or ``sparql:URL``."""
        return f"store:{self.store}" if self.store is not None else f"sparql:{self.endpoint}"


class Rejection(BaseModel):
    """A candidate the build dropped and the rule that dropped it."""

    model_config = _FROZEN
    seed: str
    rank: int | None = None
    rule: str
    detail: str
    path: tuple[str, ...] = ()


class NecessityCertificate(BaseModel):
    """What the necessity check said about the kept clues (all necessary, no shortcut)."""

    model_config = _FROZEN
    policy: dict[str, Any]
    necessary: tuple[str, ...]
    redundant: tuple[str, ...]
    review: tuple[str, ...]
    text_only_shortcut: bool
    evidence_steps: int | None
    difficulty: Level | None


class CorpusTask(BaseModel):
    """One line of ``tasks.jsonl``: the task (published task schema, minimal clues), its
    chain record(s), how the clues were chosen, the no-shortcut and necessity
    certificates, the fusion record (fused tasks), H, the level, provenance and every
    parameter."""

    model_config = _FROZEN
    schema_version: str = CORPUS_TASK_VERSION
    id: str
    seed: str
    rank: int
    task: Task
    chains: tuple[ChainRecord, ...]
    clue_selection: dict[str, Any] = Field(default_factory=dict)
    certificates: tuple[Certificate, ...] = ()
    necessity: NecessityCertificate
    fusion: dict[str, Any] | None = None
    evidence_steps: int | None
    level: Level | None
    provenance: dict[str, Any]
    parameters: BuildParameters


class SeedResult(BaseModel):
    """Everything one seed produced (see the module docstring)."""

    model_config = _FROZEN
    index: int
    seed: str
    tasks: tuple[CorpusTask, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    funnel: dict[str, int] = Field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0


@dataclass
class SeedContext:
    """What every seed of a build reads, opened once per process: the store, the
    whole-store graphs (chain policy for the certificate, necessity policy for answer
    sets), statement values, datatypes and labels."""

    parameters: BuildParameters
    store: Store
    certifier: StoreCertifier
    task_graph: EvidenceGraph
    values: Any
    datatypes: dict[str, str]
    labels: dict[str, str]

    def close(self) -> None:
        self.store.close()


_CONTEXTS: dict[str, SeedContext] = {}


def open_context(parameters: BuildParameters) -> SeedContext:
    """The :class:`SeedContext` of ``parameters`` (a store build), opened once per process
    and reused."""
    key = parameters.model_dump_json()
    ctx = _CONTEXTS.get(key)
    if ctx is not None:
        return ctx
    from chaingraph.lookups import StoreValues

    if parameters.store is None:
        raise InvalidInput("store: an endpoint build has no whole-store context; open it with "
                           "chaingraph.build.endpoint_seed.open_endpoint_context").about("store")
    path = Path(parameters.store)
    if not path.is_file():
        raise InvalidInput(f"store: {path}: no such store file; create one with `chaingraph load`").about(
            "store"
        )
    store = Store(path, read_only=True)
    whole = EvidenceGraph.from_store(store, policy=parameters.policy)
    task_graph = _task_graph(whole, parameters)
    datatypes = store.datatypes()
    labels = {**whole.labels, **store.labels(sorted(datatypes))}
    ctx = SeedContext(
        parameters,
        store,
        StoreCertifier(whole, source=parameters.source),
        task_graph,
        StoreValues(store),
        datatypes,
        labels,
    )
    _CONTEXTS[key] = ctx
    return ctx


def _task_graph(graph: EvidenceGraph, p: BuildParameters) -> EvidenceGraph:
    """The graph answer sets are read on: ``graph`` under the necessity policy's hub limit,
    its arrays shared (:meth:`EvidenceGraph.with_policy`; built again from the store, a
    second whole-store graph doubled the build's memory: 1.7 GB for 4.6 M statements)."""
    task_policy = p.policy.model_copy(update={"hub_limit": p.task_hub_limit})
    return graph if task_policy == p.policy else graph.with_policy(task_policy)


class Certifier(Protocol):
    """What checks a chain's no-shortcut certificate: a whole store or a whole endpoint."""

    def certify(self, path: Sequence[str], *, min_hops: int, max_hops: int = 50) -> Certificate: ...


@dataclass
class SeedView:
    """What one seed's chains are built and checked on: its chain records, the certifier
    (whole store or whole endpoint) and its ``scope``, the graph, values, datatypes and
    labels answer sets are read from, the store recorded in tasks and, for an endpoint
    build, where answer sets were read (``answer_sets``)."""

    records: list[ChainRecord]
    certifier: Certifier
    scope: Literal["source", "endpoint"]
    task_graph: EvidenceGraph
    values: Any
    datatypes: dict[str, str]
    labels: dict[str, str]
    task_store: str | None
    answer_sets: str | None = None


def _path(record: ChainRecord) -> tuple[str, ...]:
    out = [record.nodes[0].id]
    for step, node in zip(record.steps, record.nodes[1:]):
        out += [step.property, node.id]
    return tuple(out)


def _records(p: BuildParameters, seed: str, graph: EvidenceGraph, built_from: Store,
             limits: CrawlLimits | None) -> list[ChainRecord]:
    """The ``top`` chain records of ``seed`` in ``graph``, as ``expand`` would write them
    (without the crawl's run id, which names a run rather than a result)."""
    from chaingraph.expand import chain_records
    from chaingraph.ranking import default_type_table, top_chains

    table = default_type_table()
    params = ChainParameters(
        bounds=p.bounds,
        limits=limits,
        policy=p.policy,
        source=p.store if p.store is not None else p.endpoint,
        type_table=table.source,
        type_inventory=table.inventory,
        verifier="AcceptAll",
        selector="first_k" if p.collect else None,
    )
    if seed not in graph:
        from chaingraph.errors import UnknownEntity

        where = f"store {p.store}" if p.store is not None else f"endpoint {p.endpoint}"
        raise UnknownEntity(
            seed,
            f"the evidence graph of {where}",
            "it has no step statement there (absent, or only a class); check the id",
        )
    best = top_chains(graph, seed, p.bounds.top, p.bounds.min_hops, p.bounds.max_hops, table=table)
    scope = "neighbourhood" if p.collect else "source"
    return [
        record.model_copy(update={"shortcut_scope": scope})
        for record in chain_records(graph, [r.chain for r in best], store=built_from, parameters=params,
                                    table=table)
    ]


@contextmanager
def _store_view(ctx: SeedContext, seed: str) -> Iterator[SeedView]:
    from chaingraph.expand import evidence_graph

    p = ctx.parameters

    def view(records: list[ChainRecord]) -> SeedView:
        return SeedView(records, ctx.certifier, "source", ctx.task_graph, ctx.values, ctx.datatypes,
                        ctx.labels, p.store)

    if not p.collect:
        yield view(_records(p, seed, ctx.certifier.graph, ctx.store, None))
        return
    with evidence_graph(
        [seed], store=ctx.store, radius=p.bounds.max_hops, limits=p.limits, policy=p.policy
    ) as hood:
        limits = hood.collected.limits if hood.collected else p.limits
        yield view(_records(p, seed, hood.graph, hood.store, limits))


@contextmanager
def _endpoint_view(ctx: EndpointContext, seed: str) -> Iterator[SeedView]:
    from chaingraph.collect import collect
    from chaingraph.lookups import StoreValues
    from chaingraph.sources.sparql_source import SparqlSource

    p = ctx.parameters
    with Store() as hood:
        source = SparqlSource(ctx.settings, store_for_cache=ctx.cache, limits=p.limits)
        report = collect([seed], p.bounds.max_hops, store=hood, source=source, limits=p.limits)
        graph = EvidenceGraph.from_store(hood, policy=p.policy)
        datatypes = hood.datatypes()
        yield SeedView(
            _records(p, seed, graph, hood, report.limits),
            ctx.certifier,
            "endpoint",
            _task_graph(graph, p),
            StoreValues(hood),
            datatypes,
            {**graph.labels, **hood.labels(sorted(datatypes))},
            None,
            "neighbourhood",
        )


def _too_familiar(record: ChainRecord, ceiling: int | None) -> str | None:
    if ceiling is None:
        return None
    for node in record.nodes[1:]:
        if node.familiarity is not None and node.familiarity > ceiling:
            name = f"{node.id} ({node.label or '?'})"
            return f"{name} has {node.familiarity} sitelinks > max_familiarity {ceiling}"
    return None


def _certify_clues(view: SeedView, task: Task) -> NecessityCertificate:
    from chaingraph.necessity import check_necessity

    report = check_necessity(task, view.task_graph, values=view.values)
    return NecessityCertificate(
        policy=report.policy,
        necessary=report.necessary,
        redundant=report.redundant,
        review=report.review,
        text_only_shortcut=report.text_only_shortcut,
        evidence_steps=report.evidence_steps,
        difficulty=report.difficulty,
    )


def _seed_tasks(
    p: BuildParameters, view: SeedView, seed: str
) -> tuple[list[CorpusTask], list[Rejection], dict[str, int]]:
    from chaingraph.propose import ChainPath, propose_clues

    funnel = dict.fromkeys(FUNNEL, 0)
    kept: list[CorpusTask] = []
    rejected: list[Rejection] = []
    for rank, record in enumerate(view.records, start=1):
        path = _path(record)
        funnel["chains"] += 1

        def drop(rule: str, detail: str, rank: int = rank, path: tuple[str, ...] = path) -> None:
            rejected.append(Rejection(seed=seed, rank=rank, rule=rule, detail=detail, path=path))

        if (why := _too_familiar(record, p.max_familiarity)) is not None:
            drop("familiarity", why)
            continue
        funnel["familiarity"] += 1
        if p.stable_only and record.time_sensitivity != "stable":
            drop("time_sensitive", f"a step is time-sensitive ({record.time_sensitivity or 'unrecorded'}); "
                                   "stable_only keeps only chains whose every step is stable")
            continue
        funnel["time_stable"] += 1
        cert = view.certifier.certify(path, min_hops=p.bounds.min_hops, max_hops=p.bounds.max_hops)
        if not cert.holds:
            drop("shortcut_in_source", f"{cert.reason}: {cert.detail}")
            continue
        funnel["no_shortcut_in_source"] += 1
        task_id = f"{seed}-r{rank}"
        proposal = propose_clues(
            view.task_graph,
            ChainPath.from_record(record),
            values=view.values,
            labels=view.labels,
            datatypes=view.datatypes,
            max_values=p.max_values,
            budget=p.budget,
            task_id=task_id,
            store=view.task_store,
        )
        if proposal.task is None:
            drop("not_unique", proposal.cannot or "no clue set makes the target the unique answer")
            continue
        funnel["unique_minimal_clues"] += 1
        if not proposal.record.anchor_necessary:
            drop(
                "text_only_shortcut",
                proposal.record.anchor_reason or "the target is unique without the anchor",
            )
            continue
        funnel["anchor_necessary"] += 1
        necessity = _certify_clues(view, proposal.task)
        if necessity.redundant or necessity.review or necessity.text_only_shortcut:
            drop(
                "necessity",
                f"clues not all necessary: redundant {list(necessity.redundant)}, "
                f"review {list(necessity.review)}",
            )
            continue
        funnel["kept"] += 1
        rec = proposal.record
        kept.append(
            CorpusTask(
                id=task_id,
                seed=seed,
                rank=rank,
                task=proposal.task,
                chains=(record.model_copy(update={"shortcut_scope": view.scope}),),
                clue_selection={
                    "candidates": len(rec.candidates),
                    "order": list(rec.order),
                    "removed": list(rec.removed),
                    "kept": list(rec.kept),
                    "answers_without_anchor": rec.answers_without_anchor,
                    "evaluations": rec.evaluations,
                },
                certificates=(cert,),
                necessity=necessity,
                evidence_steps=necessity.evidence_steps,
                level=necessity.difficulty,
                provenance={
                    "chaingraph": __version__,
                    "source": p.source,
                    "crosswalk": record.crosswalk_version,
                    **({"answer_sets": view.answer_sets} if view.answer_sets else {}),
                },
                parameters=p,
            )
        )
    return kept, rejected, funnel


def build_seed(parameters: BuildParameters, seed: str, index: int = 0, *,
               cache: str | Path | None = None) -> SeedResult:
    """Run the per-seed step (see the module docstring) for ``seed``, the ``index``-th
    seed of the build. An endpoint build needs ``cache``, its per-run store
    (:mod:`chaingraph.build.endpoint_seed`). Never raises for a seed's own failure (an
    unknown id, an endpoint error after its retries): the result then carries the error
    (one line) and no tasks; bad ``parameters`` (no such store) do raise."""
    started = time.perf_counter()
    view: AbstractContextManager[SeedView]
    if parameters.endpoint is not None:
        from chaingraph.build.endpoint_seed import open_endpoint_context

        if cache is None:
            raise InvalidInput("cache: an endpoint build needs its per-run store file").about("cache")
        view = _endpoint_view(open_endpoint_context(parameters, cache), seed)
    else:
        view = _store_view(open_context(parameters), seed)
    try:
        with view as v:
            tasks, rejected, funnel = _seed_tasks(parameters, v, seed)
    except ChaingraphError as exc:
        return SeedResult(
            index=index,
            seed=seed,
            error=f"{type(exc).__name__}: {exc}",
            seconds=time.perf_counter() - started,
        )
    except Exception as exc:  # a bug must not stop a long build; it is recorded with its place
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return SeedResult(
            index=index,
            seed=seed,
            error=f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:{where.lineno})",
            seconds=time.perf_counter() - started,
        )
    return SeedResult(
        index=index,
        seed=seed,
        tasks=tuple(tasks),
        rejected=tuple(rejected),
        funnel=funnel,
        seconds=time.perf_counter() - started,
    )
