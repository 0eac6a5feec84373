"""Batched SPARQL collection vs one entity per request, on a local Oxigraph (``world/codex-m``).

For a low-, a median- and a high-degree seed (degree in the world's item graph), collect
the radius-3 neighbourhood twice from the same loopback Oxigraph server:

* **chaingraph**: :func:`chaingraph.collect.collect` with the default batched
  :class:`~chaingraph.sources.sparql_source.SparqlSource` (``VALUES`` batches of 50 entities to
  expand, 200 to describe);
* **one-per-request**: the same crawl and queries with one entity per request, the
  reference pipeline's approach (``batch_size=1, describe_size=1``).

Both crawls visit the same entities and store the same statements (checked); the table
gives requests sent and wall time (median of ``--repeat`` runs, fresh store and no cache
each run) and their ratios. Run ``python benchmarks/bench_collect.py [--quick]``. The
default caps (12 kept, 5 selected) keep the one-per-request side to a few hundred requests
per seed; ``--max-neighbours 30 --select 10`` is the library default (thousands).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from sparql_server import OxigraphServer  # noqa: E402

from chaingraph.collect import CollectReport, collect  # noqa: E402
from chaingraph.settings import EndpointSettings  # noqa: E402
from chaingraph.sources.sparql_source import SparqlSource  # noqa: E402
from chaingraph.store import Store  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "world"
CAPS: dict[str, Any] = {"max_neighbours": 12, "select": 5, "layer_budget": 1000}


def pick_seeds(world: str) -> dict[str, tuple[str, int]]:
    """Low / median / high degree items of the world's TSV triples (positives only)."""
    import duckdb

    tsv = REPO.parent / "shared" / "data" / "codex" / f"{world}.tsv.gz"
    rows = duckdb.sql(
        f"""WITH t AS (SELECT head, tail FROM read_csv('{tsv}', delim='\t', header=true)
                      WHERE split IN ('train', 'valid', 'test')),
                d AS (SELECT e, count(*) AS n FROM (SELECT head AS e FROM t UNION ALL SELECT tail FROM t)
                      GROUP BY e)
           SELECT e, n FROM d ORDER BY n, e""").fetchall()
    return {"low": tuple(rows[len(rows) // 10]), "median": tuple(rows[len(rows) // 2]),  # type: ignore[dict-item]
            "high": tuple(rows[-1])}


def crawl(url: str, seed: str, radius: int, batched: bool) -> tuple[CollectReport, float, int]:
    with Store() as store:
        source = (SparqlSource(url, store_for_cache=store) if batched
                  else SparqlSource(EndpointSettings(url=url, batch_size=1), store_for_cache=store,
                                    describe_size=1))
        start = time.perf_counter()
        report = collect([seed], radius, store=store, source=source, **CAPS)
        seconds = time.perf_counter() - start
        statements = store.counts()["statements"]
    return report, seconds, statements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="codex-s, radius 2, one repeat")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--radius", type=int, default=3)
    parser.add_argument("--max-neighbours", type=int, default=CAPS["max_neighbours"])
    parser.add_argument("--select", type=int, default=CAPS["select"])
    args = parser.parse_args()
    CAPS.update(max_neighbours=args.max_neighbours, select=args.select)
    world = "codex-s" if args.quick else "codex-m"
    radius = 2 if args.quick else args.radius
    repeat = 1 if args.quick else args.repeat
    seeds = pick_seeds(world)
    lines = [f"### Radius-{radius} collection from a local Oxigraph loaded with world/{world} "
             f"(max_neighbours {CAPS['max_neighbours']}, select {CAPS['select']}, "
             f"layer_budget {CAPS['layer_budget']}; median of {repeat})", "",
             "| seed (degree) | entities expanded / described | statements | requests batched | "
             "requests one-per-request | request ratio | s batched | s one-per-request | time ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp, OxigraphServer([DATA / f"{world}.nt.gz"], Path(tmp)) as server:
        for kind, (seed, degree) in seeds.items():
            runs: dict[bool, list[tuple[CollectReport, float, int]]] = {True: [], False: []}
            for _ in range(repeat):
                for batched in (True, False):
                    runs[batched].append(crawl(server.url, seed, radius, batched))
            (b, _, nb), (o, _, no) = runs[True][0], runs[False][0]
            if [lay.entities for lay in b.layers] != [lay.entities for lay in o.layers] or nb != no:
                raise SystemExit(f"{seed}: batched and one-per-request crawls differ")
            tb = statistics.median(t for _, t, _ in runs[True])
            to = statistics.median(t for _, t, _ in runs[False])
            lines.append(f"| {kind}: {seed} ({degree}) | {b.entities_expanded:,} / "
                         f"{b.entities_described:,} | {nb:,} | {b.requests:,} | {o.requests:,} | "
                         f"{o.requests / b.requests:.1f}× | "
                         f"{tb:.2f} | {to:.2f} | {to / tb:.1f}× |")
            print(lines[-1], file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
