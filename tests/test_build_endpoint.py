"""``chaingraph build --endpoint``: a real Oxigraph on loopback serving ``world/codex-s``
against the same world loaded into a store (``--store``).

* the endpoint's neighbour lists are the whole-store graph's edges and hub flags, and the
  whole-endpoint certificate agrees with the whole-store one on every chain;
* a build over the endpoint gives the store build's chains, the same certificate verdicts
  (the same chains dropped as ``shortcut_in_source``, the shorter path named and checked
  in the store) and the same funnel up to the certificate;
* the per-run store answers a repeated run without one request to the server;
* an endpoint error for one seed is recorded and the others are built;
* names resolve on the endpoint as they do in the store.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sparql_server import FaultServer, OxigraphServer, codex_s_server  # noqa: F401  (session fixture)

from chaingraph.build import build, read_seeds, resolve_names
from chaingraph.build.certify import StoreCertifier
from chaingraph.build.corpus import CorpusTask, _path
from chaingraph.build.endpoint_certify import EndpointCertifier
from chaingraph.chains import distances
from chaingraph.cli import cli
from chaingraph.expand import expand
from chaingraph.graph import EvidenceGraph
from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy
from chaingraph.sources.endpoint_graph import EndpointGraph
from chaingraph.sources.endpoint_names import EndpointNames
from chaingraph.store import Store

pytestmark = [pytest.mark.server, pytest.mark.slow]

#: small caps (as tests/test_expand_sparql.py): the crawl over SPARQL stays quick, and the
#: capped neighbourhoods hide shortcuts the whole graph has
CAPS: dict[str, Any] = {"bounds": ChainBounds(min_hops=4, max_hops=4, top=4),
                        "limits": CrawlLimits(max_neighbours=6, select=2, layer_budget=40, in_limit=2000)}
SEEDS = ("Q78487", "Q1373347", "Q153232")


def _seed_file(tmp: Path, *lines: str) -> Path:
    path = tmp / "seeds.txt"
    path.write_text("".join(f"{x}\n" for x in lines))
    return path


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def whole(codex_s_file: Path) -> EvidenceGraph:
    with Store(codex_s_file, read_only=True) as st:
        return EvidenceGraph.from_store(st, policy=TraversalPolicy(hub_limit=200))


@pytest.mark.parametrize("policy", [None, TraversalPolicy(hub_limit=200, excluded_properties={"P27", "P106"}),
                                    TraversalPolicy(hub_limit=60, properties={"P27", "P463", "P530", "P31"})],
                         ids=["hub-limit", "excluded", "allowed"])
def test_neighbour_lists_are_the_whole_store_graph(codex_s_server: OxigraphServer,  # noqa: F811
                                                   codex_s_file: Path, whole: EvidenceGraph,
                                                   policy: TraversalPolicy | None) -> None:
    if policy is not None:
        with Store(codex_s_file, read_only=True) as st:
            whole = EvidenceGraph.from_store(st, policy=policy)
    names = sorted(whole.name(v) for v in range(whole.vcount()))
    busiest = sorted(names, key=lambda n: -whole.degree(whole.vertex(n)))[:20]
    sample = sorted(set(random.Random(7).sample(names, 130)) | set(busiest))
    lists = EndpointGraph(codex_s_server.url, whole.policy).lists(sample)
    hubs = 0
    for n in sample:
        v, got = whole.vertex(n), lists[n]
        assert got.hub == (not whole.passable(v)), n
        hubs += got.hub
        if got.complete:
            want = sorted((whole.name(u), whole.edge_property(e), whole.edge_statement(e), f)
                          for u, e, f in whole.neighbours(v))
            assert sorted((e.other, e.property, e.statement_id, e.forward) for e in got.edges) == want, n
    assert 0 < hubs < len(sample)  # both kinds were compared


def test_endpoint_certificate_agrees_with_the_whole_store(codex_s_server: OxigraphServer,  # noqa: F811
                                                          codex_s_file: Path, whole: EvidenceGraph) -> None:
    policy = whole.policy
    records = expand(list(SEEDS), store=codex_s_file, policy=policy, **CAPS).records
    by_store = StoreCertifier(whole, source="store")
    by_endpoint = EndpointCertifier(EndpointGraph(codex_s_server.url, policy))
    verdicts = []
    for r in records:
        a, b = (c.certify(list(_path(r)), min_hops=4, max_hops=4) for c in (by_store, by_endpoint))
        assert (a.holds, a.reason) == (b.holds, b.reason), _path(r)
        # the bounded search decides the distance only when it is k or a shortcut
        assert b.distance == (a.distance if a.reason in (None, "shortcut") else None)
        assert b.scope == "endpoint"
        verdicts.append(a.reason)
    assert {None, "shortcut", "policy"} <= set(verdicts)  # every verdict was compared


def _funnel(out: Path) -> dict[str, int]:
    return {row["stage"]: row["count"] for row in json.loads((out / "manifest.json").read_text())["funnel"]}


def test_endpoint_build_matches_the_store_build(codex_s_server: OxigraphServer,  # noqa: F811
                                                codex_s_file: Path, whole: EvidenceGraph,
                                                tmp_path: Path) -> None:
    seeds = _seed_file(tmp_path, *SEEDS, "douglas adams")
    over_store = build(seeds, out=tmp_path / "s", store=codex_s_file, **CAPS)
    over_endpoint = build(seeds, out=tmp_path / "e", endpoint=codex_s_server.url, **CAPS)
    fs, fe = _funnel(tmp_path / "s"), _funnel(tmp_path / "e")
    upto = ["seeds", "resolved", "seeds built", "chains", "familiarity", "time_stable",
            "no_shortcut_in_source"]
    assert [fs[k] for k in upto] == [fe[k] for k in upto] and fs["resolved"] == 4
    assert over_store.failed == over_endpoint.failed == ()
    shortcut = {}
    for side in ("s", "e"):
        shortcut[side] = [(x["seed"], x["rank"], tuple(x["path"]), x["detail"])
                          for x in _jsonl(tmp_path / side / "rejected.jsonl")
                          if x["rule"] == "shortcut_in_source"]
    assert shortcut["e"] and [x[:3] for x in shortcut["s"]] == [x[:3] for x in shortcut["e"]]
    # every candidate was shortcut-free in its capped neighbourhood (expand enumerated it
    # there); the endpoint names a shorter path, and it is one in the whole store
    for _seed, _rank, path, detail in shortcut["e"]:
        assert detail.startswith("shortcut: ") and " on the endpoint but at hop 4 " in detail
        shorter = detail.rsplit(": ", 1)[1].split()
        nodes, props = shorter[::2], shorter[1::2]
        assert nodes[0] == path[0] and nodes[-1] == path[-1] and len(nodes) - 1 < 4
        dist = distances(whole.with_policy(TraversalPolicy()), nodes[0])
        assert int(dist[whole.vertex(nodes[-1])]) == len(nodes) - 1
        for a, p, b in zip(nodes, props, nodes[1:]):
            assert any(whole.name(u) == b and whole.edge_property(e) == p
                       for u, e, _f in whole.neighbours(whole.vertex(a))), (a, p, b)
    kept_s, kept_e = _jsonl(tmp_path / "s" / "tasks.jsonl"), _jsonl(tmp_path / "e" / "tasks.jsonl")
    for t in kept_e:
        CorpusTask.model_validate(t)  # the endpoint scope reads back
        assert t["certificates"][0]["scope"] == "endpoint" and t["certificates"][0]["holds"]
        assert t["chains"][0]["shortcut_scope"] == "endpoint"
        assert t["provenance"]["source"] == f"sparql:{codex_s_server.url}"
        assert t["provenance"]["answer_sets"] == "neighbourhood"
    assert all(t["certificates"][0]["scope"] == "source" for t in kept_s)


def test_a_repeated_run_asks_the_server_nothing(codex_s_server: OxigraphServer,  # noqa: F811
                                                tmp_path: Path) -> None:
    seeds = _seed_file(tmp_path, SEEDS[0], "Douglas Adams")
    with FaultServer(codex_s_server.url) as proxy:
        first = build(seeds, out=tmp_path / "o", endpoint=proxy.url, **CAPS)
        asked = len(proxy.requests)
        tasks = (tmp_path / "o" / "tasks.jsonl").read_bytes()
        rejected = (tmp_path / "o" / "rejected.jsonl").read_bytes()
        shutil.rmtree(tmp_path / "o" / ".build")  # forget the finished seeds, keep cache.duckdb
        again = build(seeds, out=tmp_path / "o", endpoint=proxy.url, **CAPS)
        assert asked > 0 and len(proxy.requests) == asked
    assert first.resumed == 0 and again.resumed == 0
    assert (tmp_path / "o" / "tasks.jsonl").read_bytes() == tasks
    assert (tmp_path / "o" / "rejected.jsonl").read_bytes() == rejected


def test_neighbour_lists_are_asked_once(codex_s_server: OxigraphServer, tmp_path: Path) -> None:  # noqa: F811
    nodes = ["Q78487", "Q1373347", "Q153232", "Q42"]
    with Store(tmp_path / "cache.duckdb") as cache:
        graph = EndpointGraph(codex_s_server.url, TraversalPolicy(), cache=cache)
        first = graph.lists(nodes)
        asked = graph.requests
        assert asked == 1 and graph.lists(nodes[:2]) == {n: first[n] for n in nodes[:2]}
        assert graph.requests == asked
        again = EndpointGraph(codex_s_server.url, TraversalPolicy(), cache=cache)
        assert again.lists(nodes) == first and again.requests == 0 and again.cached == len(nodes)
        other = EndpointGraph(codex_s_server.url, TraversalPolicy(hub_limit=5), cache=cache)
        other.lists(nodes[:1])
        assert other.requests == 1  # another policy asks again: its lists differ


def test_an_endpoint_error_fails_one_seed_and_the_run_goes_on(codex_s_server: OxigraphServer,  # noqa: F811
                                                              tmp_path: Path) -> None:
    seeds = _seed_file(tmp_path, SEEDS[0], SEEDS[1])
    with FaultServer(codex_s_server.url) as proxy:
        proxy.script = ["400"]  # the first seed's first query is rejected
        result = build(seeds, out=tmp_path / "o", endpoint=proxy.url, **CAPS)
    assert [s for s, _ in result.failed] == [SEEDS[0]]
    assert "rejected the query: HTTP 400" in result.failed[0][1]
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["counts"]["failed"] == 1 and manifest["inputs"]["endpoint"] == proxy.url
    assert _funnel(tmp_path / "o")["chains"] > 0  # the second seed was built
    failed = [x for x in _jsonl(tmp_path / "o" / "rejected.jsonl") if x["rule"] == "seed_failed"]
    assert [x["seed"] for x in failed] == [SEEDS[0]]


def test_names_resolve_on_the_endpoint_as_in_the_store(codex_s_server: OxigraphServer,  # noqa: F811
                                                       codex_s_file: Path, tmp_path: Path) -> None:
    lines = read_seeds(_seed_file(tmp_path, "douglas adams", "United States of America", "english",
                                  "no such thing at all", "Q42"))
    with Store(codex_s_file, read_only=True) as st:
        in_store = resolve_names(lines, st)
    on_endpoint = resolve_names(lines, EndpointNames(codex_s_server.url))

    def shown(rs: tuple[Any, ...]) -> list[Any]:  # the JSON dump says 0 sitelinks, the RDF has none
        return [(r.seed, r.qid, r.status, [(i, lab, links or 0, how) for i, lab, links, how in r.candidates])
                for r in rs]

    assert shown(on_endpoint) == shown(in_store)
    assert [r.status for r in on_endpoint] == ["name", "name", "ambiguous", "unknown", "duplicate"]
    assert on_endpoint[0].qid == "Q42" and len(on_endpoint[2].candidates) == 2


def test_cli_build_over_an_endpoint(codex_s_server: OxigraphServer, tmp_path: Path) -> None:  # noqa: F811
    seeds = _seed_file(tmp_path, SEEDS[2])
    args = ["build", str(seeds), "--endpoint", codex_s_server.url, "--out", str(tmp_path / "o"),
            "--min-hops", "4", "--max-hops", "4", "--top", "2", "--max-neighbours", "6", "--select", "2",
            "--layer-budget", "40", "--in-limit", "2000", "--no-progress"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "o" / "cache.duckdb").is_file() and (tmp_path / "o" / "manifest.json").is_file()
    again = CliRunner().invoke(cli, [*args, "--workers", "2"])
    assert again.exit_code == 2 and again.output.startswith("error: --workers: ")


def test_bounded_search_finds_the_store_distance_between_hubs_too(codex_s_server: OxigraphServer,  # noqa: F811
                                                                  whole: EvidenceGraph) -> None:
    """Pairs of hubs, of a hub and a non-hub, and of non-hubs under a low hub limit: the
    search finds a path exactly when the store's distance is within the bound, of that
    length, passing through no hub."""
    graph = whole.with_policy(TraversalPolicy(hub_limit=40))
    search = EndpointCertifier(EndpointGraph(codex_s_server.url, graph.policy))
    rng = random.Random(11)
    names = sorted(graph.name(v) for v in range(graph.vcount()))
    hubs = [n for n in names if not graph.passable(graph.vertex(n))]
    plain = [n for n in names if graph.passable(graph.vertex(n))]
    pairs = [tuple(rng.sample(hubs, 2)) for _ in range(6)] + [(rng.choice(hubs), rng.choice(plain))
                                                              for _ in range(6)]
    pairs += [tuple(rng.sample(plain, 2)) for _ in range(6)]
    seen = set()
    for s, t in pairs:
        d = int(distances(graph, s)[graph.vertex(t)])
        found = search.shortest(s, t, 3)
        if found is None:
            assert d < 0 or d > 3, (s, t, d)
            continue
        nodes = found[::2]
        assert (nodes[0], nodes[-1], len(nodes) - 1) == (s, t, d)
        assert all(graph.passable(graph.vertex(n)) for n in nodes[1:-1])
        seen.add(d)
    assert len(seen) >= 2  # paths of several lengths were found


def test_a_search_past_its_budget_is_undecided_not_certified(codex_s_server: OxigraphServer,  # noqa: F811
                                                             codex_s_file: Path) -> None:
    records = expand([SEEDS[2]], store=codex_s_file, **CAPS).records
    certifier = EndpointCertifier(EndpointGraph(codex_s_server.url, TraversalPolicy()), budget=1)
    certs = [certifier.certify(list(_path(r)), min_hops=4, max_hops=4) for r in records]
    assert certs and all(not c.holds for c in certs)
    assert "undecided" in {c.reason for c in certs}
