"""Running a build: seeds on this process, local worker processes or Ray; resume; assembly.

:func:`build` (the library twin of ``chaingraph build``) reads and resolves the seeds,
runs :func:`~chaingraph.build.corpus.build_seed` for every seed not finished yet and
assembles the corpus. Layout of ``out``::

    .build/parameters.json    the parameters and resolved seeds of the run (resume checks them)
    .build/seeds/NNNNNN.json  one finished seed (SeedResult), committed atomically
    tasks.jsonl               kept tasks, by seed (file order) then rank; fused tasks last
    rejected.jsonl            every dropped candidate with the rule that dropped it
    funnel.md                 the funnel as a markdown table
    manifest.json             inputs, parameters, versions, counts, timings, failed seeds
    audit.md, audit.png       the corpus audit (DESIGN §8) of tasks.jsonl

**Deterministic and resumable.** A seed's result is written to a temporary file and
renamed into place (an atomic commit), so an interrupted run (Ctrl-C, ``kill -9``) leaves
only whole results; the next run with the same seeds and parameters skips them, and the
corpus files are always assembled from the committed results alone, in seed order — the
output is byte-identical whatever the number of workers or interruptions. A run with
other parameters in the same ``out`` is refused. A seed that fails is committed with its
error (it is not retried on resume: delete its file to retry).

**Scale out.** ``workers`` > 1 runs seeds on that many local processes (each opens the
store and builds the whole-store graph once); ``ray=True`` runs the same function as Ray
tasks (``ray.init(ray_address)``; no address: a local Ray instance). The store path must
be readable by every worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaingraph import __version__
from chaingraph.build.corpus import (
    DEFAULT_MAX_FAMILIARITY,
    FUNNEL,
    BuildParameters,
    CorpusTask,
    Rejection,
    SeedResult,
    build_seed,
    open_context,
)
from chaingraph.build.seeds import Resolution, read_seeds, resolve_names
from chaingraph.errors import InvalidInput, MissingExtra
from chaingraph.progress import Progress, ProgressEvent
from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy, merged
from chaingraph.store import Store

__all__ = ["BuildResult", "FunnelRow", "build", "funnel_markdown"]

_STATE = ".build"


@dataclass(frozen=True)
class FunnelRow:
    """One funnel stage: how many got through, and how many the rule dropped there."""

    stage: str
    count: int
    dropped: int = 0
    rule: str = ""


@dataclass(frozen=True)
class BuildResult:
    """What :func:`build` did: the output folder, counts, the funnel, failed seeds."""

    out: Path
    tasks: int
    fused: int
    rejected: int
    funnel: tuple[FunnelRow, ...]
    failed: tuple[tuple[str, str], ...]
    unresolved: tuple[str, ...]
    resumed: int
    seconds: float


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _state(out: Path, parameters: BuildParameters, seeds: Sequence[Resolution]) -> Path:
    """The run's state folder; refuses an ``out`` holding a run with other parameters."""
    state = out / _STATE
    (state / "seeds").mkdir(parents=True, exist_ok=True)
    want = json.dumps(
        {
            "parameters": parameters.model_dump(mode="json"),
            "seeds": [r.qid for r in seeds if r.qid is not None],
        },
        indent=1,
    )
    given = state / "parameters.json"
    if given.is_file() and given.read_text(encoding="utf-8") != want:
        raise InvalidInput(
            f"out: {out} holds a build with other seeds or parameters; use a new folder, or "
            f"delete {given.parent} to start over"
        ).about("out")
    _atomic_write(given, want)
    return state


def _finished(state: Path, index: int) -> SeedResult | None:
    path = state / "seeds" / f"{index:06d}.json"
    if not path.is_file():
        return None
    return SeedResult.model_validate_json(path.read_text(encoding="utf-8"))


def _run_local(
    parameters: BuildParameters, todo: Sequence[tuple[int, str]], workers: int, cache: Path | None = None
) -> Iterator[SeedResult]:
    if workers <= 1:
        for index, seed in todo:
            yield build_seed(parameters, seed, index, cache=cache)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(build_seed, parameters, seed, index) for index, seed in todo]
        try:
            for future in as_completed(futures):
                yield future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _run_ray(
    parameters: BuildParameters, todo: Sequence[tuple[int, str]], address: str | None
) -> Iterator[SeedResult]:
    try:
        import ray
    except ImportError:
        raise MissingExtra("ray: Ray is not installed; pip install 'chaingraph[ray]'").about("ray") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False)
    try:
        remote: Any = ray.remote(build_seed)
        pending = [remote.remote(parameters, seed, index) for index, seed in todo]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


def _funnel(
    resolutions: Sequence[Resolution],
    results: Sequence[SeedResult],
    rejected: Sequence[Rejection],
    fusion: dict[str, Any] | None,
) -> tuple[FunnelRow, ...]:
    by_rule = Counter(r.rule for r in rejected)
    resolved = sum(r.qid is not None for r in resolutions)
    ok = sum(r.error is None for r in results)
    rows = [
        FunnelRow("seeds", len(resolutions)),
        FunnelRow("resolved", resolved, len(resolutions) - resolved, "unresolved_name, duplicate_seed"),
        FunnelRow("seeds built", ok, resolved - ok, "seed_failed"),
    ]
    totals = {stage: sum(r.funnel.get(stage, 0) for r in results) for stage in FUNNEL}
    rules = {
        "familiarity": "familiarity",
        "time_stable": "time_sensitive",
        "no_shortcut_in_source": "shortcut_in_source",
        "unique_minimal_clues": "not_unique",
        "anchor_necessary": "text_only_shortcut",
        "kept": "necessity",
    }
    rows.append(FunnelRow("chains", totals["chains"]))
    for stage in FUNNEL[1:]:
        rows.append(FunnelRow(stage, totals[stage], by_rule[rules[stage]], rules[stage]))
    if fusion is not None:
        rows.append(FunnelRow("fused pairs tried", fusion["tried"]))
        for reason, n in sorted(fusion["refused"].items()):
            rows.append(FunnelRow(f"fused refused: {reason}", n))
        rows.append(
            FunnelRow("fused kept", fusion["kept"], sum(fusion["refused"].values()), "fusion refusal")
        )
    return tuple(rows)


def funnel_markdown(rows: Sequence[FunnelRow]) -> str:
    """The funnel as a markdown table."""
    out = ["| stage | count | dropped | by rule |", "|---|---:|---:|---|"]
    out += [f"| {r.stage} | {r.count:,} | {r.dropped:,} | {r.rule} |" for r in rows]
    return "\n".join(out) + "\n"


def _audit(out: Path, tasks_file: Path, any_tasks: bool) -> None:
    if not any_tasks:
        (out / "audit.md").write_text(
            "## Corpus audit\n\nNo tasks were kept, so there is nothing to audit.\n", encoding="utf-8"
        )
        (out / "audit.png").unlink(missing_ok=True)
        return
    from chaingraph.audit import audit
    from chaingraph.audit.plots import plot_report
    from chaingraph.audit.report import to_markdown

    report = audit([tasks_file])
    (out / "audit.md").write_text(to_markdown(report), encoding="utf-8")
    plot_report(report, out / "audit.png")


def _seed_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(
    seeds: str | Path,
    *,
    out: str | Path,
    store: str | Path | None = None,
    endpoint: str | None = None,
    bounds: ChainBounds | None = None,
    limits: CrawlLimits | None = None,
    policy: TraversalPolicy | None = None,
    collect: bool = True,
    max_familiarity: int | None = DEFAULT_MAX_FAMILIARITY,
    stable_only: bool = False,
    task_hub_limit: int | None = None,
    max_values: int = 8,
    budget: int = 30,
    fuse: bool = False,
    workers: int = 1,
    ray: bool = False,
    ray_address: str | None = None,
    progress: Progress | None = None,
    min_hops: int | None = None,
    max_hops: int | None = None,
    top: int | None = None,
    hub_limit: int | None = None,
) -> BuildResult:
    """Build a certified task corpus from a seed file into the folder ``out`` (see the
    module docstring). The source is ``store`` (the whole store is the certificate's
    scope) or ``endpoint``, a SPARQL endpoint URL (the whole endpoint is, through a
    bidirectional bounded search: :mod:`chaingraph.build.endpoint_seed`; seeds then run in
    this process, their responses cached in ``out/cache.duckdb``, and ``fuse``,
    ``collect=False``, ``workers`` > 1 and ``ray`` are refused).
    ``bounds``/``limits``/``policy``/``collect`` are :func:`~chaingraph.expand.expand`'s
    (``min_hops``, ``max_hops``, ``top`` and ``hub_limit`` are shortcuts);
    ``task_hub_limit`` is the necessity policy (default: every statement counts).
    """
    started = time.perf_counter()
    if store is not None and endpoint is not None:
        raise InvalidInput("endpoint: give either a store or an endpoint as the source, not both").about(
            "endpoint")
    if store is None and endpoint is None:
        raise InvalidInput(
            "store: give the source to build from: a store (a file made by `chaingraph load` or "
            "`chaingraph collect`) or a SPARQL endpoint"
        ).about("store")
    if not isinstance(workers, int) or workers < 1:
        raise InvalidInput(f"workers: must be a positive integer, got {workers!r}").about("workers")
    bounds = merged(ChainBounds, bounds, min_hops=min_hops, max_hops=max_hops, top=top)
    policy = merged(TraversalPolicy, policy, hub_limit=hub_limit)
    if not collect and limits is not None:
        raise InvalidInput(
            "limits: collect=False takes the whole store as the neighbourhood, so crawl caps "
            "cannot apply; drop them or collect"
        ).about("limits")
    if endpoint is not None:
        _check_endpoint_build(endpoint, policy, collect=collect, fuse=fuse, workers=workers, ray=ray)
    else:
        assert store is not None
        if not Path(store).is_file():
            raise InvalidInput(
                f"store: {store}: no such store file; create one with `chaingraph load`"
            ).about("store")
    parameters = BuildParameters(
        store=None if store is None else str(store),
        endpoint=endpoint,
        bounds=bounds,
        limits=(limits or CrawlLimits()) if collect else None,
        policy=policy,
        collect=collect,
        max_familiarity=max_familiarity,
        stable_only=stable_only,
        task_hub_limit=task_hub_limit,
        max_values=max_values,
        budget=budget,
        fuse=fuse,
    )
    seed_lines = read_seeds(seeds)
    out = Path(out)
    cache: Path | None = None
    try:
        if endpoint is not None:
            from chaingraph.build.endpoint_seed import CACHE_FILE, open_endpoint_context
            from chaingraph.sources.endpoint_names import EndpointNames

            out.mkdir(parents=True, exist_ok=True)
            cache = out / CACHE_FILE
            ectx = open_endpoint_context(parameters, cache)
            resolutions = resolve_names(seed_lines, EndpointNames(ectx.settings, cache=ectx.cache))
        else:
            with Store(Path(str(store)), read_only=True) as st:
                resolutions = resolve_names(seed_lines, st)
        return _run(out, seeds, parameters, resolutions, workers=workers, ray=ray, ray_address=ray_address,
                    progress=progress, started=started, cache=cache)
    finally:
        if endpoint is not None:
            from chaingraph.build.endpoint_seed import close_endpoint_contexts

            close_endpoint_contexts()


def _check_endpoint_build(endpoint: str, policy: TraversalPolicy, *, collect: bool, fuse: bool,
                          workers: int, ray: bool) -> None:
    """Refuse what an endpoint build cannot do, one line each, before any request."""
    from chaingraph.settings import EndpointSettings, settings
    from chaingraph.sources.endpoint_graph import check_endpoint_policy

    settings(EndpointSettings, url=endpoint)
    check_endpoint_policy(policy)
    for name, bad, why in (
        ("collect", not collect, "collect=False takes a whole store as the neighbourhood"),
        ("fuse", fuse, "fused tasks read target values from a whole store"),
        ("workers", workers > 1, "one process holds the build's response cache (and the Wikidata "
                                 "Query Service asks for one request in flight)"),
        ("ray", ray, "one process holds the build's response cache"),
    ):
        if bad:
            raise InvalidInput(
                f"{name}: not available with an endpoint: {why}; drop it, or `chaingraph collect` "
                "the region into a store and build with store"
            ).about(name)


def _run(
    out: Path,
    seeds: str | Path,
    parameters: BuildParameters,
    resolutions: Sequence[Resolution],
    *,
    workers: int,
    ray: bool,
    ray_address: str | None,
    progress: Progress | None,
    started: float,
    cache: Path | None,
) -> BuildResult:
    state = _state(out, parameters, resolutions)
    todo: list[tuple[int, str]] = []
    results: dict[int, SeedResult] = {}
    for index, r in enumerate(resolutions):
        if r.qid is None:
            continue
        done = _finished(state, index)
        if done is not None and done.seed == r.qid:
            results[index] = done
        else:
            todo.append((index, r.qid))
    resumed = len(results)
    total = sum(r.qid is not None for r in resolutions)
    if todo and not ray and workers <= 1 and parameters.store is not None:
        open_context(parameters)  # fail early on a bad store, before any seed
    runs = (
        _run_ray(parameters, todo, ray_address) if ray else _run_local(parameters, todo, workers, cache)
    )
    for result in runs:
        _atomic_write(state / "seeds" / f"{result.index:06d}.json", result.model_dump_json())
        results[result.index] = result
        if progress is not None:
            fresh, left = len(results) - resumed, total - len(results)
            eta = round((time.perf_counter() - started) / fresh * left) if fresh else 0
            progress(
                ProgressEvent(
                    "build",
                    len(results),
                    total,
                    unit="seeds",
                    current=result.seed,
                    detail={
                        "tasks_kept": sum(len(x.tasks) for x in results.values()),
                        "failed": sum(x.error is not None for x in results.values()),
                        "resumed": resumed,
                        "eta_s": eta,
                    },
                )
            )
    ordered = [results[i] for i in sorted(results)]
    return _assemble(out, seeds, parameters, resolutions, ordered, resumed, started)


def _assemble(
    out: Path,
    seeds: str | Path,
    parameters: BuildParameters,
    resolutions: Sequence[Resolution],
    results: Sequence[SeedResult],
    resumed: int,
    started: float,
) -> BuildResult:
    tasks: list[CorpusTask] = [t for r in results for t in r.tasks]
    rejected: list[Rejection] = [
        Rejection(
            seed=r.seed.text,
            rule="duplicate_seed" if r.status == "duplicate" else "unresolved_name",
            detail=r.message,
        )
        for r in resolutions
        if r.qid is None
    ]
    rejected += [Rejection(seed=r.seed, rule="seed_failed", detail=r.error) for r in results if r.error]
    rejected += [x for r in results for x in r.rejected]
    fusion: dict[str, Any] | None = None
    fused: list[CorpusTask] = []
    if parameters.fuse:
        from chaingraph.build.fusing import fuse_tasks

        fused, fusion = fuse_tasks(open_context(parameters), tasks)
    lines = [t.model_dump_json(by_alias=True, exclude_none=True) for t in tasks]
    lines += [f.model_dump_json(by_alias=True, exclude_none=True) for f in fused]
    tasks_file = out / "tasks.jsonl"
    _atomic_write(tasks_file, "".join(line + "\n" for line in lines))
    _atomic_write(out / "rejected.jsonl", "".join(x.model_dump_json() + "\n" for x in rejected))
    rows = _funnel(resolutions, results, rejected, fusion)
    _atomic_write(out / "funnel.md", "## Build funnel\n\n" + funnel_markdown(rows))
    _audit(out, tasks_file, bool(lines))
    failed = tuple((r.seed, r.error) for r in results if r.error)
    seconds = time.perf_counter() - started
    manifest = {
        "schema_version": "chaingraph.build-manifest/1",
        "inputs": {
            "seeds": str(seeds),
            "seeds_sha256": _seed_hash(Path(seeds)),
            "store": parameters.store,
            "endpoint": parameters.endpoint,
            "resolved": [
                {"line": r.seed.line, "text": r.seed.text, "qid": r.qid, "status": r.status}
                for r in resolutions
            ],
        },
        "parameters": parameters.model_dump(mode="json"),
        "versions": {"chaingraph": __version__, "python": platform.python_version()},
        "counts": {
            "seeds": len(resolutions),
            "resolved": sum(r.qid is not None for r in resolutions),
            "tasks": len(tasks),
            "fused": len(fused),
            "rejected": len(rejected),
            "failed": len(failed),
            "rejected_by_rule": dict(sorted(Counter(x.rule for x in rejected).items())),
        },
        "funnel": [row.__dict__ for row in rows],
        "fusion": fusion,
        "failed": [{"seed": s, "error": e} for s, e in failed],
        "timings": {
            "seconds": round(seconds, 3),
            "resumed_seeds": resumed,
            "seed_seconds": {r.seed: round(r.seconds, 3) for r in results},
        },
    }
    _atomic_write(out / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return BuildResult(
        out,
        len(tasks),
        len(fused),
        len(rejected),
        rows,
        failed,
        tuple(r.seed.text for r in resolutions if r.qid is None),
        resumed,
        seconds,
    )
