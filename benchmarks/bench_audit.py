"""Corpus audit speed and memory on chain records that chaingraph wrote from a world graph.

    python benchmarks/bench_audit.py [--quick]

The corpus is generated once (cached under the system temp folder): chain records from
``../shared/data/world/codex-s.json.gz`` by :func:`chaingraph.sample_corpus.world_chain_records`
(the best chains by ``s_div`` of 5 and 6 hops of the first productive seeds). If the engine
yields fewer distinct chains than asked, the file is filled by repeating them, and the
output says so. Cases (each in a fresh process, median of repeats, peak RSS above the
post-setup baseline):

* ``chaingraph audit``         :func:`chaingraph.audit.audit` — streaming, counters only;
* ``json.load + Counter``      the naive peer: read every record into a list, then count
                               relation classes with :class:`collections.Counter` (no shapes,
                               no de-duplication, no problems list);
* ``DuckDB read_json``         the SQL peer: ``unnest`` the steps and ``GROUP BY`` class.

The same corpus is audited at two sizes (``N/10`` and ``N`` records) to show that
chaingraph's peak memory does not grow with the corpus while the naive peer's does.
Every peer's class counts are checked against chaingraph's.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, markdown_table, measure  # noqa: E402

MODULE = "bench_audit"
Run = Callable[[], tuple[int, dict[str, Any]]]
CACHE = Path(tempfile.gettempdir()) / "chaingraph-bench-audit"


def _shared() -> Path:
    return SHARED_DATA


WORLD = _shared() / "world" / "codex-s.json.gz"


def corpus(n: int) -> tuple[Path, int]:
    """``(path, distinct)``: a JSONL file of ``n`` chain records and how many are distinct."""
    from chaingraph.sample_corpus import replicate_jsonl, world_chain_records, write_jsonl

    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"chains-{n}.jsonl"
    distinct_file = CACHE / f"chains-{n}.distinct"
    if not path.exists() or not distinct_file.exists():
        raw = CACHE / f"chains-{n}.raw.jsonl"
        records = world_chain_records(WORLD, seeds=max(1, n // 1500), per_seed=2000, min_hops=5, max_hops=6)
        distinct = write_jsonl(itertools.islice(records, n), raw)
        if distinct < n:
            replicate_jsonl(raw, path, n)
            raw.unlink()
        else:
            raw.replace(path)
        distinct_file.write_text(str(distinct))
    return path, int(distinct_file.read_text())


def head(path: Path, n: int) -> Path:
    """The first ``n`` lines of ``path`` as their own file (cached)."""
    out = path.with_name(f"{path.stem}-head{n}.jsonl")
    if not out.exists():
        with path.open() as src, out.open("w") as dst:
            dst.writelines(itertools.islice(src, n))
    return out


def chaingraph_audit(path: str) -> Run:
    from chaingraph.audit import audit
    from chaingraph.crosswalk import default_crosswalk

    crosswalk = default_crosswalk()

    def run() -> tuple[int, dict[str, Any]]:
        report = audit([path], crosswalk=crosswalk)
        return report.records, {"classes": report.class_counts(), "edges": report.edges}

    return run


def naive_json_counter(path: str) -> Run:
    import json

    def run() -> tuple[int, dict[str, Any]]:
        with open(path) as fh:
            records = [json.loads(line) for line in fh]
        classes = Counter(s.get("relation_class") or "unclassified" for r in records for s in r["steps"])
        return len(records), {"classes": dict(classes), "edges": sum(classes.values())}

    return run


def duckdb_sql(path: str) -> Run:
    import duckdb

    def run() -> tuple[int, dict[str, Any]]:
        con = duckdb.connect()
        rows = con.execute(
            "SELECT coalesce(s.relation_class, 'unclassified') AS c, count(*) FROM "
            "(SELECT unnest(steps) AS s FROM read_json(?, format='newline_delimited', "
            "maximum_object_size=16777216)) GROUP BY c", [path]).fetchall()
        n = con.execute("SELECT count(*) FROM read_json(?, format='newline_delimited', "
                        "maximum_object_size=16777216)", [path]).fetchone()
        con.close()
        classes = {c: int(k) for c, k in rows}
        return int(n[0]) if n else 0, {"classes": classes, "edges": sum(classes.values())}

    return run


def _check(results: list[Any]) -> None:
    base = {k: v for k, v in results[0].extra["classes"].items() if v}
    for r in results[1:]:
        got = {k: v for k, v in r.extra["classes"].items() if v}
        assert got == base, f"{r.name} counts {got} differ from chaingraph's {base}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 records instead of 100,000, 2 repeats")
    parser.add_argument("--generate", type=int, metavar="N",
                        help="only write the N-record corpus to the cache (what the benchmark runs first)")
    args = parser.parse_args(argv)
    if args.generate is not None:
        corpus(args.generate)
        return 0
    n = 10_000 if args.quick else 100_000
    repeat = 2 if args.quick else 3
    # generate in a child process: Linux carries a process's peak RSS across fork+exec into
    # the spawned benchmark processes, so this process must stay small
    subprocess.run([sys.executable, __file__, "--generate", str(n)], check=True)
    big, distinct = corpus(n)
    small = head(big, n // 10)
    note = (f"{distinct:,} distinct chains written by chaingraph" +
            (f", repeated to fill {n:,} records" if distinct < n else ""))
    print(f"Corpus: {n:,} chain records from world/codex-s ({note}); {big.stat().st_size / 2**20:,.0f} MB "
          f"of JSON Lines.\n")
    for path, size in ((small, n // 10), (big, n)):
        cases = [
            Case("chaingraph audit", f"{MODULE}:chaingraph_audit", {"path": str(path)}, repeat),
            Case("json.load + Counter", f"{MODULE}:naive_json_counter", {"path": str(path)}, repeat),
            Case("DuckDB read_json", f"{MODULE}:duckdb_sql", {"path": str(path)}, repeat),
        ]
        results = [measure(c) for c in cases]
        _check(results)
        print(markdown_table(f"Audit of {size:,} chain records", results, baseline="chaingraph audit",
                             unit="records"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
