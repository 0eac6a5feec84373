"""Loading Wikidata dumps: chaingraph's store against pyoxigraph and rdflib, same facts.

    python benchmarks/bench_load.py [--quick]

Input: ``world/codex-m`` (227,878 statements; the JSON dump and its N-Triples, 1.39 M
triples) — ``--quick`` uses ``world/codex-s`` (39,985 statements). Every case runs in a
fresh process, starts from an empty in-memory store, and is timed end to end from the
file on disk (decompression included); the rate is *statements* per second for every
case, so the columns compare the same facts:

* ``chaingraph JSON dump``          :func:`chaingraph.sources.loaders.load` on ``NAME.json.gz``;
* ``chaingraph N-Triples``          :func:`chaingraph.sources.loaders.load` on ``NAME.nt.gz``;
* ``pyoxigraph bulk_load``          ``pyoxigraph.Store().bulk_load`` of the same ``.nt.gz``
                                    through a gzip stream (the baseline);
* ``pyoxigraph bulk_load (plain)``  the same from the decompressed ``.nt`` file (prepared
                                    in setup, not timed), where Oxigraph parses in parallel;
* ``chaingraph N-Triples (plain)``  chaingraph from that same decompressed file;
* ``rdflib Graph.parse``            ``rdflib.Graph().parse`` of the same ``.nt.gz`` (one run:
                                    it is slow);
* ``chaingraph Parquet``            :func:`chaingraph.sources.loaders.load` of the directory
                                    ``chaingraph export --parquet`` wrote from the loaded
                                    JSON dump (export prepared in setup, not timed).

Peak MB is the resident-memory high-water mark above the process's post-setup baseline.
Every case (but rdflib) is measured in two rounds, the second in reverse order, and the
table shows the median over both rounds' repeats: the machine is shared, and a case that
always ran in the same slot would carry that slot's load.
"""

from __future__ import annotations

import gzip
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, Result, markdown_table, measure  # noqa: E402

MODULE = "bench_load"
Run = Callable[[], tuple[int, dict[str, Any]]]
STATEMENTS = {"codex-m": 227_878, "codex-s": 39_985}


def _world(name: str, ext: str) -> Path:
    return SHARED_DATA / "world" / f"{name}.{ext}"


def _plain_copy(name: str) -> Path:
    target = Path(tempfile.gettempdir()) / f"chaingraph-bench-{name}.nt"
    if not target.exists():
        with gzip.open(_world(name, "nt.gz"), "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return target


def chaingraph_load(name: str, ext: str, plain: bool = False) -> Run:
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store

    path = _plain_copy(name) if plain else _world(name, ext)

    def run() -> tuple[int, dict[str, Any]]:
        with Store() as store:
            report = load([path], store)
            return report.summary.statements, {"qualifiers": report.summary.qualifiers}
    return run


def _parquet_copy(name: str) -> Path:
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store
    from chaingraph.store_parquet import export

    target = Path(tempfile.gettempdir()) / f"chaingraph-bench-{name}-parquet"
    if not (target / "manifest.json").exists():
        with Store() as store:
            load([_world(name, "json.gz")], store)
            export(store, parquet=target)
    return target


def chaingraph_parquet(name: str) -> Run:
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store

    path = _parquet_copy(name)

    def run() -> tuple[int, dict[str, Any]]:
        with Store() as store:
            report = load([path], store)
            return report.summary.statements, {"qualifiers": report.summary.qualifiers}
    return run


def pyoxigraph_bulk_load(name: str, plain: bool = False) -> Run:
    import pyoxigraph

    path = _plain_copy(name) if plain else _world(name, "nt.gz")

    def run() -> tuple[int, dict[str, Any]]:
        store = pyoxigraph.Store()
        if plain:
            store.bulk_load(path=str(path), format=pyoxigraph.RdfFormat.N_TRIPLES)
        else:
            with gzip.open(path, "rb") as stream:
                store.bulk_load(stream, format=pyoxigraph.RdfFormat.N_TRIPLES)
        return STATEMENTS[name], {"triples": len(store)}
    return run


def rdflib_parse(name: str) -> Run:
    import rdflib

    path = _world(name, "nt.gz")

    def run() -> tuple[int, dict[str, Any]]:
        graph = rdflib.Graph()
        with gzip.open(path, "rb") as stream:
            graph.parse(stream, format="nt")
        return STATEMENTS[name], {"triples": len(graph)}
    return run


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    name = "codex-s" if quick else "codex-m"
    repeat = 3 if quick else 5
    cases = [
        Case("pyoxigraph bulk_load", f"{MODULE}:pyoxigraph_bulk_load", {"name": name}, repeat),
        Case("chaingraph N-Triples", f"{MODULE}:chaingraph_load", {"name": name, "ext": "nt.gz"}, repeat),
        Case("chaingraph JSON dump", f"{MODULE}:chaingraph_load", {"name": name, "ext": "json.gz"}, repeat),
        Case("pyoxigraph bulk_load (plain)", f"{MODULE}:pyoxigraph_bulk_load",
             {"name": name, "plain": True}, repeat),
        Case("chaingraph N-Triples (plain)", f"{MODULE}:chaingraph_load",
             {"name": name, "ext": "nt", "plain": True}, repeat),
        Case("chaingraph Parquet", f"{MODULE}:chaingraph_parquet", {"name": name}, repeat),
        Case("rdflib Graph.parse", f"{MODULE}:rdflib_parse", {"name": name}, 1),
    ]
    # The machine is shared: measure every case in two rounds, the second in reverse order,
    # and take the median over both, so no case always runs in the same slot.
    runs: dict[str, list[Result]] = {case.name: [] for case in cases}
    for order in (cases, cases[::-1]):
        for case in order:
            if case.repeat == 1 and runs[case.name]:
                continue  # the slow peer runs once
            result = measure(case)
            runs[case.name].append(result)
            print(f"<!-- {case.name}: {', '.join(f'{s:.3f}' for s in result.seconds)} s; {result.extra} -->",
                  file=sys.stderr, flush=True)
    results = [Result(name, [s for r in rs for s in r.seconds], rs[0].items, max(r.peak_mb for r in rs),
                      rs[0].extra) for name, rs in runs.items()]
    print(markdown_table(f"Load world/{name} ({STATEMENTS[name]:,} statements) into a store",
                         results, baseline="pyoxigraph bulk_load", unit="statements"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
