"""The whole-endpoint no-shortcut certificate (``build --endpoint``) on a local Oxigraph.

    python benchmarks/bench_certify_endpoint.py [--quick] [--seeds N] [--repeat R]

Graph: ``world/ilpc-large`` (``--quick``: ``world/codex-s``) served by a loopback Oxigraph
and, for the reference answers, loaded into a DuckDB store (setup, not timed). Chains:
``expand --store`` with the default caps, the 5 best per seed for N seeds (default 8, md5
order of the ids). Each case certifies every chain against the **whole** graph:

* ``store``: :class:`~chaingraph.build.certify.StoreCertifier` on the whole-store graph
  (the graph is built once, outside the timing: what a store build pays once per process);
* ``endpoint bidirectional (cold)``: :class:`~chaingraph.build.endpoint_certify.EndpointCertifier`,
  a fresh cache each run, so every neighbour list is asked for;
* ``endpoint bidirectional (cached)``: the same, its neighbour lists already in the store
  (a resumed build);
* ``endpoint one-sided (cold)``: the peer a user would script: breadth-first from the seed
  only, to depth k − 1, with the same batched neighbour query and hub rule.

Before timing, every case's verdicts (holds, rule, distance where decided) are checked
equal to the store's. Printed: median seconds of ``--repeat`` runs, chains/s, the requests
sent and the ratio to the bidirectional cold case.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from sparql_server import OxigraphServer  # noqa: E402

from chaingraph.build.certify import StoreCertifier  # noqa: E402
from chaingraph.build.corpus import _path  # noqa: E402
from chaingraph.build.endpoint_certify import EndpointCertifier  # noqa: E402
from chaingraph.expand import expand  # noqa: E402
from chaingraph.graph import EvidenceGraph  # noqa: E402
from chaingraph.settings import TraversalPolicy  # noqa: E402
from chaingraph.sources.endpoint_graph import EndpointGraph  # noqa: E402
from chaingraph.store import Store  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "world"
Verdict = tuple[bool, Any, Any]


def one_sided(graph: EndpointGraph, path: Sequence[str]) -> Verdict:
    """The peer: BFS from the seed only, to depth k - 1 (same query, same hub rule)."""
    nodes = [p for p in path if not p.startswith("P")]
    s, t, k = nodes[0], nodes[-1], len(nodes) - 1
    inner = graph.lists(nodes[1:-1])
    if any(inner[n].hub for n in nodes[1:-1]):
        return False, "policy", None
    seen, frontier = {s}, [s]
    for depth in range(1, k):
        lists = graph.lists(frontier)
        if depth == 1 and not lists[s].complete:
            lists = graph.lists([s], full=True)  # a hub seed is read in full
        fresh = []
        for u in frontier:
            if u != s and lists[u].hub:
                continue
            for e in lists[u].edges:
                if e.other == t:
                    return False, "shortcut", depth
                if e.other not in seen:
                    seen.add(e.other)
                    fresh.append(e.other)
        frontier = fresh
    return True, None, k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="world/codex-s, 3 seeds, one repeat")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    world = "codex-s" if args.quick else "ilpc-large"
    n_seeds, repeat = (3, 1) if args.quick else (args.seeds, args.repeat)
    policy = TraversalPolicy()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        from chaingraph.sources.loaders import load

        with Store(tmp / "world.duckdb") as st:
            load([DATA / f"{world}.json.gz"], st)
            seeds = [r[0] for r in st.con.execute(
                "SELECT subject FROM statements WHERE value_type = 'item' "
                "AND property NOT IN ('P31', 'P279') "
                "GROUP BY subject ORDER BY md5(subject) LIMIT ?", [n_seeds]).fetchall()]
            whole = EvidenceGraph.from_store(st, policy=policy)
        paths = [list(_path(r)) for r in expand(seeds, store=tmp / "world.duckdb", top=5).records]
        lo = min(len(p) for p in paths) // 2
        hi = max(len(p) for p in paths) // 2
        store_cert = StoreCertifier(whole, source="store")

        def reference(p: list[str]) -> Verdict:
            c = store_cert.certify(p, min_hops=lo, max_hops=hi)
            return c.holds, c.reason, c.distance if c.reason in (None, "shortcut") else None

        want = [reference(p) for p in paths]
        with OxigraphServer([DATA / f"{world}.nt.gz"], tmp) as server:
            warm = Store(tmp / "warm.duckdb")  # filled by the answer check below
            runs: list[EndpointGraph] = []  # the graphs of the current case (their requests)

            def bidirectional(cache: Store | None) -> Callable[[list[str]], Verdict]:
                cert = EndpointCertifier(EndpointGraph(server.url, policy, cache=cache))
                runs.append(cert.graph)

                def check(p: list[str]) -> Verdict:
                    c = cert.certify(p, min_hops=lo, max_hops=hi)
                    return c.holds, c.reason, c.distance
                return check

            def peer(cache: Store | None) -> Callable[[list[str]], Verdict]:
                graph = EndpointGraph(server.url, policy, cache=cache)
                runs.append(graph)
                return lambda p: one_sided(graph, p)

            cases: dict[str, Callable[[], Callable[[list[str]], Verdict]]] = {
                "store": lambda: reference,
                "endpoint bidirectional (cold)": lambda: bidirectional(None),
                "endpoint bidirectional (cached)": lambda: bidirectional(warm),
                "endpoint one-sided (cold)": lambda: peer(None),
            }
            for name, make in cases.items():
                got = [make()(p) for p in paths]
                if got != want:
                    bad = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
                    raise SystemExit(f"{name}: verdict differs from the store on {paths[bad]}: "
                                     f"{got[bad]} != {want[bad]}")
            results: dict[str, tuple[float, int]] = {}
            for name, make in cases.items():
                times, asked = [], 0
                for _ in range(repeat):
                    runs.clear()
                    check = make()
                    start = time.perf_counter()
                    for p in paths:
                        check(p)
                    times.append(time.perf_counter() - start)
                    asked = sum(g.requests for g in runs)
                results[name] = (statistics.median(times), asked)
                print(name, results[name], file=sys.stderr)
            warm.close()
    base = results["endpoint bidirectional (cold)"][0]
    held = sum(w[0] for w in want)
    print(f"### No-shortcut certificate over the whole world/{world} ({len(paths)} chains of {lo}-{hi} "
          f"hops from {len(seeds)} seeds, {held} certified; median of {repeat})\n")
    print("| case | median s | chains/s | requests | ratio vs bidirectional cold |")
    print("|---|---:|---:|---:|---:|")
    for name, (sec, asked) in results.items():
        print(f"| {name} | {sec:.3f} | {len(paths) / sec:,.1f} | {asked:,} | {sec / base:.2f}× |")


if __name__ == "__main__":
    main()
