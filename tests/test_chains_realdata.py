"""Chains on real Wikidata graphs: ILPC'22 large (long shortest paths) and CoDEx-M (dense).

Graphs are built straight from the shared TSVs (true triples only: ILPC ``train``, CoDEx
``train``/``valid``/``test``, never the CoDEx hard negatives). Checks are independent of
the engine: igraph's all-shortest-paths and networkx BFS distances.
"""

from __future__ import annotations

import csv
import gzip
import random
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

from chaingraph.chains import chain_ids, distances, enumerate_chains
from chaingraph.explain import explain_chain
from chaingraph.graph import EvidenceGraph
from chaingraph.settings import TraversalPolicy

pytestmark = pytest.mark.slow


def _graph(path: Path, splits: set[str], hub_limit: int | None) -> EvidenceGraph:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t")
        next(rows)
        edges = [(f"{h}|{p}|{t}", h, p, t) for split, h, p, t in rows if split in splits]
    return EvidenceGraph.from_edges(edges, policy=TraversalPolicy(hub_limit=hub_limit))


@pytest.fixture(scope="module")
def ilpc(shared_data: Path) -> EvidenceGraph:
    return _graph(shared_data / "ilpc2022" / "ilpc2022-large.tsv.gz", {"train"}, None)


@pytest.fixture(scope="module")
def codex(shared_data: Path) -> EvidenceGraph:
    return _graph(shared_data / "codex" / "codex-m.tsv.gz", {"train", "valid", "test"}, None)


def _igraph_paths(g: EvidenceGraph, seed: str, lo: int, hi: int) -> Counter[tuple[int, ...]]:
    und = g.graph.as_undirected(mode="each")
    v = g.vertex(seed)
    dist = und.distances(source=v)[0]
    targets = [t for t, d in enumerate(dist) if lo <= d <= hi]
    return Counter(tuple(p) for p in und.get_all_shortest_paths(v, to=targets))


def test_ilpc_long_chains_are_exactly_igraphs_shortest_paths(ilpc: EvidenceGraph) -> None:
    seed = "Q262"  # 99th-percentile degree; ~184k chains of 5–6 hops
    chains = list(enumerate_chains(ilpc, seed, 5, 6))
    assert len(chains) > 100_000
    assert Counter(c.nodes for c in chains) == _igraph_paths(ilpc, seed, 5, 6)
    # independent BFS: every chain ends at networkx distance k; steps join their nodes
    nxg = nx.Graph(ilpc.graph.get_edgelist())
    dist = nx.single_source_shortest_path_length(nxg, ilpc.vertex(seed))
    for c in chains[::97]:
        assert dist[c.nodes[-1]] == c.k
        assert all({a, b} == set(ilpc.edge_endpoints(e)) for a, b, e in zip(c.nodes, c.nodes[1:], c.edges))


def test_ilpc_has_seven_hop_chains(ilpc: EvidenceGraph) -> None:
    seed = "Q63512"  # degree 2; seven entities lie seven hops away
    seven = []
    for c in enumerate_chains(ilpc, seed, 7, 7):
        seven.append(c)
        if len(seven) == 200:
            break
    assert len(seven) == 200
    d = distances(ilpc, seed)
    assert all(d[c.nodes[-1]] == 7 and len(set(c.nodes)) == 8 for c in seven)


def test_codex_dense_graph_rejects_random_walks_as_shortcuts(codex: EvidenceGraph) -> None:
    seed = "Q476294"  # median degree; CoDEx-M's eccentricity is 4-5, so 5-hop walks rarely survive
    valid = {chain_ids(codex, c) for c in enumerate_chains(codex, seed, 5, 5)}
    assert len(valid) > 0
    rnd = random.Random(7)
    reasons: Counter[str] = Counter()
    v0 = codex.vertex(seed)
    for _ in range(300):
        path, props = [v0], []
        while len(path) < 6:
            u, e, _f = rnd.choice(codex.neighbours(path[-1]))
            if u in path:
                break
            path.append(u)
            props.append(codex.edge_property(e))
        if len(path) < 6:
            continue
        ids = [codex.name(path[0])]
        for p, u in zip(props, path[1:]):
            ids += [p, codex.name(u)]
        why = explain_chain(codex, ids)
        reasons[why.reason or "valid"] += 1
        assert (why.reason is None) == (tuple(ids) in valid)
        if why.reason == "shortcut":
            shorter = why.violations[0].shorter_path
            assert shorter is not None and len(shorter) // 2 < why.violations[0].position  # type: ignore[operator]
            for i in range(0, len(shorter) - 2, 2):  # every step of the shorter path exists
                a, p, b = shorter[i: i + 3]
                assert any(codex.name(u) == b and codex.edge_property(e) == p
                           for u, e, _f in codex.neighbours(codex.vertex(a)))
    assert reasons["shortcut"] > 0.9 * sum(reasons.values())


def test_codex_hub_limit_keeps_hubs_at_the_ends(shared_data: Path, codex: EvidenceGraph) -> None:
    g = _graph(shared_data / "codex" / "codex-m.tsv.gz", {"train", "valid", "test"}, 1000)
    hubs = {v for v in range(g.vcount()) if not g.passable(v)}
    assert hubs  # CoDEx-M has entities with more than 1000 statements (countries, professions)
    chains = list(enumerate_chains(g, "Q505957", 5, 6))
    assert chains and all(not (set(c.nodes[1:-1]) & hubs) for c in chains)
    # no 5-6 hop chain reaches a hub here, so show the "at the ends" half on short chains
    short = list(enumerate_chains(g, "Q505957", 1, 3))
    assert any(c.nodes[-1] in hubs for c in short)
    assert all(not (set(c.nodes[1:-1]) & hubs) for c in short)
    # hubs are not walked through, so distances only grow compared with no limit
    open_ = codex
    d_hub, d_open = distances(g, "Q505957"), distances(open_, "Q505957")
    reached = d_hub >= 0
    assert (d_hub[reached] >= d_open[[open_.vertex(g.name(v)) for v in range(g.vcount())]][reached]).all()
