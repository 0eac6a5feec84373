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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chaingraph import __version__
from chaingraph.build.certify import Certificate, StoreCertifier
from chaingraph.errors import ChaingraphError, InvalidInput
from chaingraph.graph import EvidenceGraph
from chaingraph.records import ChainParameters, ChainRecord, Level
from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy
from chaingraph.store import Store
from chaingraph.tasks import Task

__all__ = [
    "CORPUS_TASK_VERSION",
    "DEFAULT_MAX_FAMILIARITY",
    "FUNNEL",
    "BuildParameters",
    "CorpusTask",
    "NecessityCertificate",
    "Rejection",
    "SeedContext",
    "SeedResult",
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
    """Every parameter of a build (recorded in each task and in the manifest). ``store``
    is the source (a store file); ``bounds``/``limits``/``policy`` are expand's (``limits``
    ``None`` with ``collect=False``); ``task_hub_limit`` the necessity policy (``None``:
    answer sets over every statement); ``max_values``/``budget`` clue proposal's."""

    model_config = _FROZEN
    store: str
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
    """The :class:`SeedContext` of ``parameters``, opened once per process and reused."""
    key = parameters.model_dump_json()
    ctx = _CONTEXTS.get(key)
    if ctx is not None:
        return ctx
    from chaingraph.lookups import StoreValues

    path = Path(parameters.store)
    if not path.is_file():
        raise InvalidInput(f"store: {path}: no such store file; create one with `chaingraph load`").about(
            "store"
        )
    store = Store(path, read_only=True)
    whole = EvidenceGraph.from_store(store, policy=parameters.policy)
    task_policy = parameters.policy.model_copy(update={"hub_limit": parameters.task_hub_limit})
    task_graph = (
        whole if task_policy == parameters.policy else EvidenceGraph.from_store(store, policy=task_policy)
    )
    datatypes = store.datatypes()
    labels = {**whole.labels, **store.labels(sorted(datatypes))}
    ctx = SeedContext(
        parameters,
        store,
        StoreCertifier(whole, source=f"store:{parameters.store}"),
        task_graph,
        StoreValues(store),
        datatypes,
        labels,
    )
    _CONTEXTS[key] = ctx
    return ctx


def _path(record: ChainRecord) -> tuple[str, ...]:
    out = [record.nodes[0].id]
    for step, node in zip(record.steps, record.nodes[1:]):
        out += [step.property, node.id]
    return tuple(out)


def _chains(ctx: SeedContext, seed: str) -> list[ChainRecord]:
    """The ``top`` chain records of ``seed``, as ``expand`` would write them (without the
    crawl's run id, which names a run rather than a result)."""
    from chaingraph.expand import chain_records, evidence_graph
    from chaingraph.ranking import default_type_table, top_chains

    p = ctx.parameters
    table = default_type_table()

    def records(graph: EvidenceGraph, built_from: Store, limits: CrawlLimits | None) -> list[ChainRecord]:
        params = ChainParameters(
            bounds=p.bounds,
            limits=limits,
            policy=p.policy,
            source=p.store,
            type_table=table.source,
            type_inventory=table.inventory,
            verifier="AcceptAll",
            selector="first_k" if p.collect else None,
        )
        if seed not in graph:
            from chaingraph.errors import UnknownEntity

            raise UnknownEntity(
                seed,
                f"the evidence graph of store {p.store}",
                "it has no step statement there (absent, or only a class); check the id",
            )
        best = top_chains(graph, seed, p.bounds.top, p.bounds.min_hops, p.bounds.max_hops, table=table)
        scope = "neighbourhood" if p.collect else "source"
        return [
            record.model_copy(update={"shortcut_scope": scope})
            for record in chain_records(graph, [r.chain for r in best], store=built_from, parameters=params,
                                        table=table)
        ]

    if not p.collect:
        return records(ctx.certifier.graph, ctx.store, None)
    with evidence_graph(
        [seed], store=ctx.store, radius=p.bounds.max_hops, limits=p.limits, policy=p.policy
    ) as hood:
        return records(hood.graph, hood.store, hood.collected.limits if hood.collected else p.limits)


def _too_familiar(record: ChainRecord, ceiling: int | None) -> str | None:
    if ceiling is None:
        return None
    for node in record.nodes[1:]:
        if node.familiarity is not None and node.familiarity > ceiling:
            name = f"{node.id} ({node.label or '?'})"
            return f"{name} has {node.familiarity} sitelinks > max_familiarity {ceiling}"
    return None


def _certify_clues(ctx: SeedContext, task: Task) -> NecessityCertificate:
    from chaingraph.necessity import check_necessity

    report = check_necessity(task, ctx.task_graph, values=ctx.values)
    return NecessityCertificate(
        policy=report.policy,
        necessary=report.necessary,
        redundant=report.redundant,
        review=report.review,
        text_only_shortcut=report.text_only_shortcut,
        evidence_steps=report.evidence_steps,
        difficulty=report.difficulty,
    )


def _seed_tasks(ctx: SeedContext, seed: str) -> tuple[list[CorpusTask], list[Rejection], dict[str, int]]:
    from chaingraph.propose import ChainPath, propose_clues

    p = ctx.parameters
    funnel = dict.fromkeys(FUNNEL, 0)
    kept: list[CorpusTask] = []
    rejected: list[Rejection] = []
    for rank, record in enumerate(_chains(ctx, seed), start=1):
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
        cert = ctx.certifier.certify(path, min_hops=p.bounds.min_hops, max_hops=p.bounds.max_hops)
        if not cert.holds:
            drop("shortcut_in_source", f"{cert.reason}: {cert.detail}")
            continue
        funnel["no_shortcut_in_source"] += 1
        task_id = f"{seed}-r{rank}"
        proposal = propose_clues(
            ctx.task_graph,
            ChainPath.from_record(record),
            values=ctx.values,
            labels=ctx.labels,
            datatypes=ctx.datatypes,
            max_values=p.max_values,
            budget=p.budget,
            task_id=task_id,
            store=p.store,
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
        necessity = _certify_clues(ctx, proposal.task)
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
                chains=(record.model_copy(update={"shortcut_scope": "source"}),),
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
                    "source": f"store:{p.store}",
                    "crosswalk": record.crosswalk_version,
                },
                parameters=p,
            )
        )
    return kept, rejected, funnel


def build_seed(parameters: BuildParameters, seed: str, index: int = 0) -> SeedResult:
    """Run the per-seed step (see the module docstring) for ``seed``, the ``index``-th
    seed of the build. Never raises for a seed's own failure: the result then carries the
    error (one line) and no tasks; bad ``parameters`` (no such store) do raise."""
    started = time.perf_counter()
    ctx = open_context(parameters)
    try:
        tasks, rejected, funnel = _seed_tasks(ctx, seed)
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
