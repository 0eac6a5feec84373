"""Write a chain corpus with chaingraph itself, from a Wikidata dump (notebook, benchmark).

:func:`world_chain_records` loads a dump (e.g. ``../shared/data/world/codex-s.json.gz``)
into an in-memory store, builds the evidence graph under the default traversal policy,
takes seeds in a deterministic order (by numeric Q-id, keeping those that start at least
one valid chain), enumerates each seed's valid chains with
:func:`~chaingraph.chains.enumerate_chains`, takes the best by ``s_div`` with
:func:`~chaingraph.ranking.top_chains` and yields the best ones as
:class:`~chaingraph.records.ChainRecord` values (node types from the type table, step
classes from the crosswalk). :func:`write_jsonl` writes records one per line;
:func:`replicate_jsonl` repeats a file's lines up to a count (for benchmarks that need
more records than the engine finds — callers say so when they use it).
"""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from chaingraph.errors import InvalidInput
from chaingraph.records import ChainNode, ChainParameters, ChainRecord, ChainStep

__all__ = ["replicate_jsonl", "world_chain_records", "write_jsonl"]


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
    from chaingraph.crosswalk import default_crosswalk
    from chaingraph.graph import EvidenceGraph
    from chaingraph.loaders import load
    from chaingraph.ranking import familiarity, node_types, top_chains
    from chaingraph.store import Store

    cw = crosswalk if crosswalk is not None else default_crosswalk()
    with Store() as store:
        load([path], store)
        graph = EvidenceGraph.from_store(store)
    types = node_types(graph)
    params = ChainParameters(
        min_hops=min_hops, max_hops=max_hops, policy=graph.policy.describe(), source=str(path.name)
    )
    classes: dict[str, tuple[str | None, str]] = {}

    def classify(prop: str) -> tuple[str | None, str]:
        if prop not in classes:
            found = cw.classify(prop)
            classes[prop] = (found.relation_class, found.rule)
        return classes[prop]

    names = sorted(
        (graph.name(v) for v in range(graph.vcount()) if not graph.is_literal(v)), key=lambda q: (len(q), q)
    )
    productive = 0
    for seed in names:
        if next(enumerate_chains(graph, seed, min_hops, max_hops), None) is None:
            continue
        productive += 1
        for ranked in top_chains(graph, seed, per_seed, min_hops, max_hops):
            chain = ranked.chain
            nodes = tuple(
                ChainNode(
                    id=graph.name(v),
                    label=graph.labels.get(graph.name(v)),
                    type=types[v],
                    classes=graph.classes.get(graph.name(v), ()),
                    familiarity=familiarity(graph, v),
                )
                for v in chain.nodes
            )
            steps = []
            for e, fwd in zip(chain.edges, chain.forward(graph)):
                prop = graph.edge_property(e)
                relation, rule = classify(prop)
                subject, obj = graph.edge_endpoints(e)
                steps.append(
                    ChainStep(
                        property=prop,
                        relation_class=relation,
                        relation_rule=rule,
                        direction="forward" if fwd else "backward",
                        statement_id=graph.edge_statement(e),
                        source=graph.name(subject),
                        target=graph.name(obj),
                    )
                )
            yield ChainRecord(
                seed=seed,
                nodes=nodes,
                steps=tuple(steps),
                k=chain.k,
                s_div=ranked.s_div,
                types=ranked.types,
                relation_classes=tuple(sorted({s.relation_class for s in steps if s.relation_class})),
                crosswalk_version=cw.version,
                parameters=params,
            )
        if productive >= seeds:
            return


def write_jsonl(records: Iterable[ChainRecord], path: str | Path) -> int:
    """Write records one JSON object a line (``.gz`` compresses); returns how many."""
    path = Path(path)
    count = 0
    with _open_write(path) as fh:
        for record in records:
            fh.write(record.model_dump_json(exclude_none=True))
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
