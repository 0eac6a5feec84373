"""Write a chain corpus with chaingraph itself, from a Wikidata dump (notebook, benchmark).

:func:`world_chain_records` loads a dump (e.g. ``../shared/data/world/codex-s.json.gz``)
into an in-memory store, builds the evidence graph under the default traversal policy,
takes seeds in a deterministic order (by numeric Q-id, keeping those that start at least
one valid chain), enumerates each seed's valid chains with
:func:`~chaingraph.chains.enumerate_chains`, takes the best by ``s_div`` with
:func:`~chaingraph.ranking.top_chains` and yields the best ones as
:class:`~chaingraph.records.ChainRecord` values (node types from the type table, step
classes from the crosswalk). :func:`fused_tasks` groups such records into fused chaingraph
task records (:class:`~chaingraph.tasks.Task`, one component per chain);
:func:`nested_tasks` writes fused tasks the way some construction batches do — the first
chain at top level *and* again inside the components — so audits can show that nested
copies are counted once. :func:`write_jsonl` writes records one per line;
:func:`replicate_jsonl` repeats a file's lines up to a count (for benchmarks that need
more records than the engine finds — callers say so when they use it).
"""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from chaingraph.errors import InvalidInput
from chaingraph.records import ChainParameters, ChainRecord
from chaingraph.settings import ChainBounds

__all__ = ["fused_tasks", "nested_tasks", "replicate_jsonl", "world_chain_records", "write_jsonl"]


def _open_write(path: Path) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=1)
    return path.open("w", encoding="utf-8")


def world_chain_records(
    dump: str | Path,
    *,
    seeds: int = 5,
    per_seed: int = 50,
    min_hops: int = 5,
    max_hops: int = 6,
    crosswalk: Any = None,
) -> Iterator[ChainRecord]:
    """The top ``per_seed`` chains (by ``s_div``) of the first ``seeds`` productive seeds.

    Arguments are checked now; the dump is loaded when iteration starts.
    """
    path = Path(dump)
    if not path.is_file():
        raise InvalidInput(f"{path}: no such dump file; pass a world graph such as world/codex-s.json.gz")
    if seeds < 1 or per_seed < 1:
        raise InvalidInput(f"seeds={seeds}, per_seed={per_seed}: both must be at least 1")
    if not 1 <= min_hops <= max_hops:
        raise InvalidInput(f"min_hops={min_hops}, max_hops={max_hops}: need 1 <= min_hops <= max_hops")
    return _records(path, seeds, per_seed, min_hops, max_hops, crosswalk)


def _records(
    path: Path, seeds: int, per_seed: int, min_hops: int, max_hops: int, crosswalk: Any
) -> Iterator[ChainRecord]:
    from chaingraph.chains import enumerate_chains
    from chaingraph.crosswalk.relations import relation_classifier
    from chaingraph.expand import chain_record
    from chaingraph.graph import EvidenceGraph
    from chaingraph.ranking import top_chains
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store

    with Store() as store:
        load([path], store)
        classifier = relation_classifier(store.properties_used(), store, crosswalk=crosswalk)
        graph = EvidenceGraph.from_store(store, classifier=classifier)
    params = ChainParameters(
        bounds=ChainBounds(min_hops=min_hops, max_hops=max_hops, top=per_seed), policy=graph.policy,
        source=str(path.name)
    )
    names = sorted(
        (graph.name(v) for v in range(graph.vcount()) if not graph.is_literal(v)), key=lambda q: (len(q), q)
    )
    productive = 0
    for seed in names:
        if next(enumerate_chains(graph, seed, min_hops, max_hops), None) is None:
            continue
        productive += 1
        by_length: dict[int, list[Any]] = {}
        for left, k in enumerate(range(max_hops, min_hops - 1, -1)):  # longest first: rarer
            share = (per_seed - sum(map(len, by_length.values()))) // (max_hops - min_hops + 1 - left)
            by_length[k] = top_chains(graph, seed, share, k, k) if share > 0 else []
        for ranked in [r for k in sorted(by_length) for r in by_length[k]]:
            # store=None: the corpus is for audits, which need no qualifiers or provenance
            yield chain_record(graph, ranked.chain, store=None, parameters=params)
        if productive >= seeds:
            return


def _groups(records: Sequence[ChainRecord], size: int) -> Iterator[list[ChainRecord]]:
    """Groups of ``size`` records with different seeds: records are dealt round-robin over
    their seeds (in first-seen order) and cut into consecutive groups (deterministic)."""
    if size < 1:
        raise InvalidInput(f"size={size}: a fused task needs at least one component")
    buckets: dict[str, list[ChainRecord]] = {}
    for record in records:
        buckets.setdefault(record.seed, []).append(record)
    dealt = [r for layer in itertools.zip_longest(*buckets.values()) for r in layer if r is not None]
    group: list[ChainRecord] = []
    for record in dealt:
        if any(r.seed == record.seed for r in group):
            continue
        group.append(record)
        if len(group) == size:
            yield group
            group = []


def fused_tasks(records: Sequence[ChainRecord], *, size: int = 2) -> list[Any]:
    """Fused chaingraph tasks, one component per chain, from groups of ``size`` records
    with different seeds; each is a validated :class:`~chaingraph.tasks.Task`."""
    from chaingraph.tasks import parse_task

    tasks = []
    for n, group in enumerate(_groups(records, size), 1):
        components = [
            {
                "id": f"c{j}",
                "anchor": r.seed,
                "target": {"entity": r.target},
                "steps": [
                    {
                        "property": s.property,
                        "direction": s.direction,
                        "statement_id": s.statement_id,
                        "source": s.source,
                        "target": s.target,
                    }
                    for s in r.steps
                ],
            }
            for j, r in enumerate(group, 1)
        ]
        tasks.append(
            parse_task(
                {
                    "id": f"fused-{n}",
                    "anchors": [{"entity": r.seed} for r in group],
                    "target": {"entity": group[0].target},
                    "components": components,
                    "clues": [
                        {"kind": "anchor", "component": j, "text": f"the entity in image {j + 1}"}
                        for j in range(len(group))
                    ],
                }
            )
        )
    return tasks


def nested_tasks(records: Sequence[ChainRecord], *, size: int = 2) -> list[dict[str, Any]]:
    """Fused tasks that nest whole chain records under ``components`` and repeat the first
    one at top level (``chain``): the repeated copy must not be counted twice."""
    out = []
    for n, group in enumerate(_groups(records, size), 1):
        chains = [r.model_dump(mode="json", exclude_none=True) for r in group]
        out.append({"id": f"nested-{n}", "chain": chains[0], "components": [{"chain": c} for c in chains]})
    return out


def write_jsonl(records: Iterable[Any], path: str | Path) -> int:
    """Write records (pydantic models or JSON-ready dicts) one JSON object a line
    (``.gz`` compresses); returns how many."""
    import json

    path = Path(path)
    count = 0
    with _open_write(path) as fh:
        for record in records:
            if hasattr(record, "model_dump_json"):
                fh.write(record.model_dump_json(exclude_none=True, by_alias=True))
            else:
                fh.write(json.dumps(record, ensure_ascii=False))
            fh.write("\n")
            count += 1
    return count


def replicate_jsonl(source: str | Path, target: str | Path, count: int) -> int:
    """Write ``count`` lines to ``target`` by cycling over the lines of ``source``."""
    lines = [ln for ln in Path(source).read_text(encoding="utf-8").splitlines() if ln.strip()]
    if not lines:
        raise InvalidInput(f"{source}: no records to replicate")
    with _open_write(Path(target)) as fh:
        for line in itertools.islice(itertools.cycle(lines), count):
            fh.write(line)
            fh.write("\n")
    return count
