"""Fill the evidence store from Wikidata dumps: the JSON dump and RDF (N-Triples, Turtle);
or from a directory of Parquet tables written by ``chaingraph export --parquet``
(:mod:`chaingraph.store_parquet`).

:func:`load` picks the reader from the file name (``.json``/``.nt``/``.ttl``, each
optionally ``.gz`` or ``.bz2``), streams every file into the store and reports what was
loaded. The JSON dump is written in batches of entities, one transaction each; RDF is
staged inside DuckDB and its statement model written in one transaction. Either way a bad
line first commits everything before it, then stops with a ``file:line`` error (or is
skipped and counted). Loading the same file twice changes nothing. Both formats produce
the same store content for the same facts (statement ids in JSON form ``Q42$GUID``,
values in :mod:`chaingraph.values`' canonical form).

>>> from chaingraph.resources import data_file
>>> from chaingraph.store import Store
>>> with Store() as store:
...     report = load([data_file("sample/douglas-adams.json")], store)
...     store.entity("Q42").label, report.summary.statements > 100
('Douglas Adams', True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from pathlib import Path

from chaingraph.errors import InvalidInput
from chaingraph.progress import Progress
from chaingraph.settings import DEFAULT_SUMMARY_MEMORY_MB
from chaingraph.sources.loaders.common import FileReport, LoadReport, StoreSummary
from chaingraph.sources.loaders.compression import Format, dump_format
from chaingraph.sources.loaders.json_dump import load_json_dump
from chaingraph.sources.loaders.rdf import load_rdf
from chaingraph.store import Store
from chaingraph.store_memory import setting, used_mb

__all__ = ["FileReport", "LoadReport", "StoreSummary", "load", "load_file", "summarize"]


def _checked_format(path: str | Path) -> Format | None:
    """The dump format of ``path`` from its name, after checking the file exists (``None``
    for a directory written by ``chaingraph export --parquet``)."""
    from chaingraph.store_parquet import is_parquet_export

    if is_parquet_export(path):
        return None
    fmt = dump_format(path)
    if not Path(path).is_file():
        raise InvalidInput(f"{path}: no such file; check the path")
    return fmt


def load_file(path: str | Path, store: Store, *, skip_bad_lines: bool = False,
              progress: Progress | None = None) -> FileReport:
    """Load one dump file (format from its name) into ``store``."""
    fmt = _checked_format(path)
    if fmt is None:
        from chaingraph.store_parquet import load_parquet

        started = time.perf_counter()
        rows = load_parquet(path, store)
        return FileReport(path=str(path), format="parquet", entities=rows.get("entities", 0),
                          properties=rows.get("properties", 0), statements=rows.get("statements", 0),
                          qualifiers=rows.get("qualifiers", 0), references=rows.get("reference_snaks", 0),
                          seconds=time.perf_counter() - started)
    if fmt == "json":
        return load_json_dump(path, store, skip_bad_lines=skip_bad_lines, progress=progress)
    return load_rdf(path, store, fmt=fmt, skip_bad_lines=skip_bad_lines, progress=progress)


def load(paths: Iterable[str | Path], store: Store, *, skip_bad_lines: bool = False,
         progress: Progress | None = None) -> LoadReport:
    """Load dump files into ``store`` in order and summarise the store afterwards.

    Every path is checked (exists, known format) before anything is loaded. A process that
    loads large dumps should call :func:`~chaingraph.store_memory.tune_malloc_for_load` before
    it opens the store, as ``chaingraph load`` does: its memory then stays flatter in the dump's
    size.
    """
    paths = list(paths)
    for p in paths:
        _checked_format(p)
    started = time.perf_counter()
    files = tuple(load_file(p, store, skip_bad_lines=skip_bad_lines, progress=progress) for p in paths)
    return LoadReport(files=files, summary=summarize(store), seconds=time.perf_counter() - started)


def summarize(store: Store) -> StoreSummary:
    """The figures of ``chaingraph summary``: rows per table, statements by value type and rank.

    A store file is summarised within
    :data:`~chaingraph.settings.DEFAULT_SUMMARY_MEMORY_MB` of DuckDB's memory per thread
    beyond what it holds and cannot let go (an entity index read in, say), and the blocks its
    scans read are let go afterwards: the memory a load ends with does not grow with the
    store it has filled.
    """
    store.release_cache()
    threads = int(setting(store.con, "threads"))
    with store.memory_budget() as budget:
        budget.hold(math.ceil(used_mb(store.con)) + DEFAULT_SUMMARY_MEMORY_MB * (threads + 2))
        summary = _summary(store)
    store.release_cache()
    return summary


def _summary(store: Store) -> StoreSummary:
    counts = store.counts()
    return StoreSummary(
        store=str(store.path) if store.path is not None else ":memory:",
        sources=counts["sources"],
        entities=counts["entities"],
        properties=counts["properties"],
        statements=counts["statements"],
        qualifiers=counts["qualifiers"],
        references=store.reference_count(),
        reference_snaks=counts["reference_snaks"],
        statements_by_value_type=store.statements_by_value_type(),
        ranks=store.statements_by_rank(),
    )
