"""Loading Wikidata dumps: chaingraph's store against pyoxigraph, rdflib and DuckDB, same facts.

    python benchmarks/bench_load.py [--quick] [--json | --nt] [--memory] [--tags] [--plot PNG] [--scale N]
                                     [--before ROOT [--paired N [--at SCALE]]] [--shuffled SCALE]

Input: ``world/codex-m`` (227,878 statements; the JSON dump and its N-Triples, 1.39 M
triples) — ``--quick`` uses ``world/codex-s`` (39,985 statements). Every case runs in a
fresh process, starts from an empty in-memory store (the ``(store file)`` cases: a new
store file), and is timed end to end from the file on disk (decompression included); the
rate is *statements* per second for every case, so the columns compare the same facts:

* ``chaingraph JSON dump``          :func:`chaingraph.sources.loaders.load` on ``NAME.json.gz``;
* ``chaingraph JSON (row at a time)`` the loader as it was before bulk writes
                                    (``load_json_dump(..., row_at_a_time=True)``: parsed in
                                    one process, 30k-row batches, each key looked up before
                                    it is written) into a store with the schema as it was,
                                    primary-key indexes on the statement tables
                                    (``KEYED_SCHEMA``);
* ``DuckDB read_json + unnest``     plain SQL a DuckDB user would write: ``read_json`` of the
                                    same ``.json.gz`` (``format='array'``, an explicit column
                                    schema) and ``unnest`` of the claims into one table of
                                    (statement id, subject, property, rank, object id) — no
                                    qualifiers, references, values or checks;
* ``chaingraph N-Triples``          :func:`chaingraph.sources.loaders.load` on ``NAME.nt.gz``;
* ``chaingraph N-Triples (numpy)``  the same with the compiled loops off (``CHAINGRAPH_NATIVE=0``,
                                    as on a machine without a C compiler at install);
* ``pyoxigraph bulk_load``          ``pyoxigraph.Store().bulk_load`` of the same ``.nt.gz``
                                    through a gzip stream (the baseline);
* ``pyoxigraph bulk_load (plain)``  the same from the decompressed ``.nt`` file (prepared
                                    in setup, not timed), where Oxigraph parses in parallel;
* ``chaingraph N-Triples (plain)``  chaingraph from that same decompressed file;
* ``rdflib Graph.parse``            ``rdflib.Graph().parse`` of the same ``.nt.gz`` (one run:
                                    it is slow);
* ``chaingraph Parquet``            :func:`chaingraph.sources.loaders.load` of the directory
                                    ``chaingraph export --parquet`` wrote from the loaded
                                    JSON dump (export prepared in setup, not timed);
* ``chaingraph JSON dump (store file)``, ``chaingraph N-Triples (store file)`` the two dumps
                                    into a new store file, as a dump's load writes: DuckDB's
                                    budgets, checkpoints and compression on disk.

``--before ROOT`` adds ``chaingraph N-Triples (before)`` and ``chaingraph JSON dump (before)``,
in memory and into a store file: those cases with the chaingraph package of the checkout
at ``ROOT`` (``git worktree add --detach ROOT main``), to time a change against main in the
same run.

``--before ROOT --paired N`` runs only a paired comparison (:func:`paired_table`): each of
the four loads (both formats, in memory and into a store file) against the same load of the
checkout at ``ROOT``, the two measured back to back in ``N`` rounds, and the ratio of each
round's medians; on a shared machine whose speed drifts over minutes, the ratio of two
medians taken minutes apart swings with it, a ratio taken within a round much less.
``--at SCALE`` pairs the two loads into a store file of the synthetic dump ``SCALE`` times
larger instead (one run each a round): a dump's load at scale.

``--json`` runs only the JSON-dump cases (chaingraph both ways and DuckDB) and the memory check;
``--nt`` only the N-Triples cases (chaingraph, pyoxigraph, plain and ``--before``) and their
memory check, with pyoxigraph's gzip case as the baseline.

Then the memory check, for the JSON dump and for N-Triples: the dump and synthetic dumps
2, ``--scale`` and twice ``--scale`` times larger (default 10 and 20: the dump's items repeated
with every ``Q`` id shifted by a multiple of 10⁹, so statement ids stay unique; written once
to the bench cache, not timed), and the dump with every ``Q`` id shifted as in copy 1 (its
ids have ten digits, as in all but the first copy of the larger dumps, so its rows are as
large as theirs: the row that tells growth with the dump's size from growth with the ids'
length; the 2× dump is between the dump and the 10×, where a size the larger ones skip can
peak above them: before 6fb0b05 the 2× N-Triples dump did), each loaded into a new store
*file* in two rounds (the second in reverse order; the table shows the higher peak, the
comments each run's). The larger ones should reach about the same peak (the README has the
latest figures, ``LOADING.md`` beside this file how they came about): the loaders stream
within fixed DuckDB budgets, spilling to disk beyond them (N-Triples builds a new store file
a chunk of 300,000 staged rows at a time, attaching the file again after each and opening
its database again every third; JSON batches are written within one budget, the store file
attached again every 4 batches and its database opened again every 64), so that what DuckDB
keeps of the row groups written does not pile up. The dump itself comes near, not as high:
at the last count the JSON 10x peaked 3 MB above it and 1 MB above the dump's peak drawn as
often (the row described below), as a longer load meets its highest moments more often and
its level is about 2 MB higher. The
last row loads twice ``--scale`` as two parts of ``--scale`` (copies 0 to ``scale - 1`` and
``scale`` to ``2 scale - 1``), one file after the other into the same store: the second goes
into a store that has statements, so every key it writes is checked against the table.
After the JSON table comes each batch's peak (lowest / median / highest, both runs; see
:func:`_batch_peaks`), the spread a load's peak is drawn from: a load ten times as long
draws from it ten times as often, so its highest batch is higher even where the spread is
the same. So the JSON table's third row is the dump loaded again, a fresh process each time,
until its loads have written as many batches as ``--scale``'s two runs, with the highest peak
of them all (:func:`_as_often`): the dump's peak drawn as often, the row a larger dump that
uses no more memory stays at. ``--plot PNG`` draws each load's memory over its time (process
and parse workers, sampled every 20 ms; the run with the higher peak), a panel per format, as
the README shows it.
``--shuffled SCALE`` runs only the synthetic JSON dump ``SCALE`` times larger into a new
store file in id order and with its items shuffled (:func:`shuffled_table`): the entities'
key index, which DuckDB cannot spill, is then touched all over by every batch, and the load
raises its DuckDB budget as far as the index needs (the README's figures: ``--shuffled 40``).
``--scale 20`` checks 20× and 40×; ``--memory`` runs the memory check alone; ``--tags`` adds
the peak of each kind of DuckDB's memory to each run's comment (see
:func:`chaingraph_file_load`: sampling them can raise the peak).

Peak MB is the resident-memory high-water mark above the process's post-setup baseline;
in the memory check, the JSON loader's parse workers' peak is added to it (the pages that
are theirs alone, together, sampled every 20 ms: forked, they share the rest with the
process, whose peak has it), so a load's figure is all of its memory, an upper bound as the
two need not peak at once.
Every case (but rdflib) is measured in two rounds, the second in reverse order, and the
table shows the median over both rounds' repeats: the machine is shared, and a case that
always ran in the same slot would carry that slot's load.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import gzip
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import (  # noqa: E402
    BENCH_CACHE,
    SHARED_DATA,
    Case,
    Result,
    child_pids,
    markdown_table,
    measure,
    rss_mb,
    status_mb,
)

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


def chaingraph_load(name: str, ext: str, plain: bool = False, file: bool = False, scale: int = 1) -> Run:
    """Load the world dump into an in-memory store, or with ``file`` into a new store file
    (in the bench cache, removed before each run): what a dump's load writes to, budgets,
    checkpoints and all. ``scale`` > 1 loads the synthetic dump that many times larger
    (:func:`synthetic_dump`, :func:`synthetic_ntriples`; made in setup, not timed)."""
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store

    if scale > 1:
        path = synthetic_dump(name, scale) if ext == "json.gz" else synthetic_ntriples(name, scale)
    else:
        path = _plain_copy(name) if plain else _world(name, ext)
    store_path = BENCH_CACHE / f"speed-{name}-x{scale}-{ext}.duckdb" if file else None

    def run() -> tuple[int, dict[str, Any]]:
        if store_path is not None:
            store_path.unlink(missing_ok=True)
        with Store(store_path) as store:
            report = load([path], store)
            return report.summary.statements, {"qualifiers": report.summary.qualifiers}
    return run


def chaingraph_load_numpy(name: str, ext: str) -> Run:
    """:func:`chaingraph_load` with the N-Triples loader's compiled loops off
    (``CHAINGRAPH_NATIVE=0``: numpy computes the same)."""
    from chaingraph.sources.loaders import nt_native

    os.environ[nt_native.ENV] = "0"
    nt_native.library.cache_clear()
    return chaingraph_load(name, ext)


def chaingraph_load_from(root: str, name: str, ext: str, file: bool = False, scale: int = 1) -> Run:
    """:func:`chaingraph_load` with the chaingraph of another checkout (``--before ROOT``)."""
    sys.path.insert(0, root)
    import chaingraph

    if not Path(chaingraph.__file__).resolve().is_relative_to(Path(root).resolve()):
        raise RuntimeError(f"chaingraph was imported from {chaingraph.__file__}, not from {root}")
    return chaingraph_load(name, ext, file=file, scale=scale)


#: the loads :func:`paired_table` sets against the checkout's: label, dump, into a store file
PAIRED_LOADS = [("JSON dump", "json.gz", False), ("JSON dump, into a store file", "json.gz", True),
                ("N-Triples", "nt.gz", False), ("N-Triples, into a store file", "nt.gz", True)]


def paired_table(root: str, name: str, rounds: int, repeat: int = 3, scale: int = 1) -> str:
    """Each of :data:`PAIRED_LOADS` against the same load with the chaingraph of the checkout
    at ``root``, in ``rounds`` rounds of the two back to back (each ``repeat`` runs in a
    process of its own; the order alternates from round to round): a markdown table of the
    ratio of the two medians of each round, their median and range, and the same of the CPU
    seconds. ``scale`` > 1: the loads into a store file only, of the synthetic dump that many
    times larger, a dump's load at scale."""
    dump = f"world/{name}" if scale == 1 else f"world/{name} × {scale} (synthetic)"
    lines = [f"### Load {dump}: each loader against the checkout's, {rounds} rounds of the two back "
             f"to back ({repeat} run{'s' if repeat > 1 else ''} each)", "",
             "| load | median s | before s | ratio (median of rounds) | lowest–highest | CPU ratio |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, ext, file in PAIRED_LOADS:
        if scale > 1 and not file:
            continue
        params = {"name": name, "ext": ext, "file": file, "scale": scale}
        pair = [Case("before", f"{MODULE}:chaingraph_load_from", {"root": root, **params}, repeat),
                Case("now", f"{MODULE}:chaingraph_load", params, repeat)]
        got: dict[str, list[Result]] = {"before": [], "now": []}
        for k in range(rounds):
            for case in pair if k % 2 == 0 else pair[::-1]:
                got[case.name].append(measure(case))
            before, now = got["before"][-1], got["now"][-1]
            print(f"<!-- {label}, round {k + 1}: before {before.median:.3f} s (CPU {before.median_cpu:.2f}), "
                  f"now {now.median:.3f} s (CPU {now.median_cpu:.2f}): {before.median / now.median:.2f}x -->",
                  file=sys.stderr, flush=True)
        ratios = sorted(b.median / n.median for b, n in zip(got["before"], got["now"]))
        cpu = statistics.median(b.median_cpu / n.median_cpu for b, n in zip(got["before"], got["now"]))
        lines.append(f"| {label} | {statistics.median(r.median for r in got['now']):.3f} | "
                     f"{statistics.median(r.median for r in got['before']):.3f} | "
                     f"{statistics.median(ratios):.2f}× | {ratios[0]:.2f}–{ratios[-1]:.2f}× | {cpu:.2f}× |")
    return "\n".join(lines) + "\n"


def chaingraph_rows(name: str) -> Run:
    """The JSON loader as it was: small batches, every key looked up before it is written,
    into the store as it was (primary-key indexes on the statement tables)."""
    from chaingraph.sources.loaders.json_dump import load_json_dump
    from chaingraph.store import Store
    from chaingraph.store_schema import INDEXLESS, KEYED_SCHEMA

    path = _world(name, "json.gz")

    def run() -> tuple[int, dict[str, Any]]:
        with Store() as store:
            for table in INDEXLESS:
                store.con.execute(f"DROP TABLE {table}")
            store.con.execute(KEYED_SCHEMA)
            load_json_dump(path, store, row_at_a_time=True)
            counts = store.counts()
            return counts["statements"], {"qualifiers": counts["qualifiers"]}
    return run


#: what the DuckDB peer reads of an entity: its id and, per claim, the statement id, rank
#: and main snak (property and entity-value id)
_DUCKDB_COLUMNS = {
    "id": "VARCHAR",
    "claims": "MAP(VARCHAR, STRUCT(id VARCHAR, rank VARCHAR, mainsnak STRUCT(property VARCHAR, "
              "datavalue STRUCT(value STRUCT(id VARCHAR))))[])",
}


def duckdb_read_json(name: str) -> Run:
    import duckdb

    path = _world(name, "json.gz")
    columns = "{" + ", ".join(f"'{k}': '{v}'" for k, v in _DUCKDB_COLUMNS.items()) + "}"
    sql = f"""
        CREATE OR REPLACE TABLE stmts AS
        SELECT st.id AS statement_id, id AS subject, st.mainsnak.property AS property, st.rank AS rank,
               st.mainsnak.datavalue.value.id AS object
        FROM (SELECT id, unnest(grp) AS st
              FROM (SELECT id, unnest(map_values(claims)) AS grp
                    FROM read_json('{path}', format='array', columns={columns},
                                   maximum_object_size=1073741824)))"""

    def run() -> tuple[int, dict[str, Any]]:
        con = duckdb.connect()
        con.execute(sql)
        n = con.execute("SELECT count(*) FROM stmts").fetchone()
        con.close()
        return int(n[0]) if n else 0, {}
    return run


_QID = re.compile(rb'"Q([1-9][0-9]{0,8})(?=[$"])')


def _synthetic_path(name: str, scale: int, first: int, ext: str) -> Path:
    return BENCH_CACHE / f"synthetic-{name}-x{scale}{f'-from{first}' if first else ''}.{ext}"


def _dump_lines(path: Path) -> list[bytes]:
    """The entity lines of a gzipped JSON dump, without the array's brackets and commas."""
    with gzip.open(path, "rb") as src:
        return [line.rstrip(b",\n") for line in src if line.strip() not in (b"[", b"]", b"")]


def _is_property(line: bytes) -> bool:
    """Whether a dump line (as :func:`_dump_lines` gives it) is a property's."""
    return b'"type":"property"' in line[:40]


def synthetic_dump(name: str, scale: int, *, first: int = 0) -> Path:
    """``world/NAME.json.gz`` made ``scale`` times larger: its properties once, its items
    ``scale`` times, copy ``k`` with every quoted ``Q`` id (entity, statement and value ids)
    shifted by ``k`` × 10⁹, so the copies are distinct entities with distinct statements.

    The copies are ``first`` to ``first + scale - 1``: ``scale=1, first=1`` is the dump with
    every ``Q`` id as long as the larger dumps' (ten digits), their rows' size at 1×."""
    target = _synthetic_path(name, scale, first, "json.gz")
    if target.exists():
        return target
    BENCH_CACHE.mkdir(parents=True, exist_ok=True)
    lines = _dump_lines(_world(name, "json.gz"))
    partial = target.with_suffix(".partial")
    with gzip.open(partial, "wb", compresslevel=1) as out:
        out.write(b"[\n")
        opening = True  # the first line written takes no comma
        for k in range(first, first + scale):
            shift = k * 10**9
            for line in lines:
                if k > first and _is_property(line):
                    continue
                if shift:
                    line = _QID.sub(lambda m: b'"Q%d' % (int(m.group(1)) + shift), line)  # noqa: B023
                out.write(line if opening else b",\n" + line)
                opening = False
        out.write(b"\n]\n")
    partial.rename(target)
    return target


def shuffled_dump(name: str, scale: int) -> Path:
    """:func:`synthetic_dump` with its items in no id order (shuffled with a fixed seed; the
    properties first, as in Wikidata's dumps): every batch's entities then spread over the
    whole of the entities' key index, which DuckDB cannot spill."""
    target = BENCH_CACHE / f"synthetic-{name}-x{scale}-shuffled.json.gz"
    if target.exists():
        return target
    lines = _dump_lines(synthetic_dump(name, scale))
    properties = [line for line in lines if _is_property(line)]
    items = [line for line in lines if not _is_property(line)]
    random.Random(scale).shuffle(items)
    partial = target.with_suffix(".partial")
    with gzip.open(partial, "wb", compresslevel=1) as out:
        out.write(b"[\n" + b",\n".join(properties + items) + b"\n]\n")
    partial.rename(target)
    return target


_NT_QID = re.compile(rb"(/entity/|/entity/statement/|/Special:EntityData/)Q([1-9][0-9]{0,8})(?=[>-])")
_NT_PROPERTY_LINE = re.compile(rb"^<http://www\.wikidata\.org/entity/(?:statement/)?P[0-9]", re.MULTILINE)


def synthetic_ntriples(name: str, scale: int, *, first: int = 0) -> Path:
    """``world/NAME.nt.gz`` made ``scale`` times larger the way :func:`synthetic_dump` does
    it for the JSON dump: the properties' triples once, every other triple ``scale`` times,
    copy ``k`` (``first`` to ``first + scale - 1``) with every ``Q`` id in an entity,
    statement or entity-data IRI shifted by ``k`` × 10⁹ (value and reference nodes are
    shared, as a dump shares them)."""
    target = _synthetic_path(name, scale, first, "nt.gz")
    if target.exists():
        return target
    BENCH_CACHE.mkdir(parents=True, exist_ok=True)
    with gzip.open(_world(name, "nt.gz"), "rb") as src:
        lines = src.read().splitlines(keepends=True)
    items = b"".join(line for line in lines if not _NT_PROPERTY_LINE.match(line))
    partial = target.with_suffix(".partial")
    with gzip.open(partial, "wb", compresslevel=1) as out:
        # the properties' triples, with copy 0's items as the file has them when it is a copy
        out.write(b"".join(line for line in lines if first == 0 or _NT_PROPERTY_LINE.match(line)))
        for k in range(max(first, 1), first + scale):
            shift = k * 10**9
            out.write(_NT_QID.sub(lambda m: b"%sQ%d" % (m.group(1), int(m.group(2)) + shift), items))  # noqa: B023
    partial.rename(target)
    return target


MEMORY_TAGS = "SELECT tag, memory_usage_bytes FROM duckdb_memory()"


def _children_private_mb() -> float:
    """The memory of this process's descendants that is their own (``Private_Clean`` and
    ``Private_Dirty``: pages no other process maps), MB: the JSON loader's parse workers and
    the children they parse in, which the process's own peak leaves out. Forked, they share
    the rest with this process, whose resident memory has it already."""
    total = 0
    for pid in child_pids():
        with contextlib.suppress(OSError):  # a worker that has just ended
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Private_"):
                    total += int(line.split()[1])
    return total / 1024


def _anon_mb() -> float:
    """This process's anonymous resident memory (``RssAnon``), MB: its resident memory less
    the pages of files it maps (the libraries' code and data, ~36 MB of a load's peak above
    its baseline as DuckDB's, Arrow's and numpy's code is paged in the first time it runs)."""
    return status_mb("RssAnon") or 0.0


def chaingraph_file_load(path: str, tags: bool = False) -> Run:
    """Load ``path`` (or the files it names joined by ``os.pathsep``, one after another, the
    parts of a dump) into a new store file (in the bench cache) and report its statements,
    with the peak of the parse workers' own memory together (``workers MB``) in the extras,
    what the process's peak leaves out, and the process's peak of anonymous memory above its
    start (``anon MB``, :func:`_anon_mb`: the peak without the libraries' pages); ``tags``
    (``--tags``) adds the peak of each kind of DuckDB's own memory (``duckdb_memory()``, MB):
    what in DuckDB grows if the peak does. All are sampled every 20 ms, the DuckDB tags on a
    cursor of the store's connection. That
    cursor can keep the database open across the load's reconnects, and with it the memory
    they let go: a 10x N-Triples load so sampled peaked at 135 MB in one run and 168 in the
    next, so the tags are only read when asked for."""
    import threading

    import duckdb

    from chaingraph import store_load
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store
    from chaingraph.store_memory import tune_malloc_for_load

    tune_malloc_for_load()  # as `chaingraph load` does, before a store is opened
    paths = path.split(os.pathsep)
    store_path = BENCH_CACHE / f"load-{Path(paths[0]).name}{'-parts' if len(paths) > 1 else ''}.duckdb"

    def run() -> tuple[int, dict[str, Any]]:
        store_path.unlink(missing_ok=True)
        peaks: dict[str, float] = {}
        workers = [0.0]
        anon = [0.0]
        timeline: list[tuple[float, float]] = []  # (seconds, MB above the start: process + workers)
        written: list[float] = []  # (seconds) as each JSON batch's write ends
        done = threading.Event()
        start, base, anon_base = time.perf_counter(), rss_mb(), _anon_mb()
        write = store_load.BulkLoad.write

        def timed(self: store_load.BulkLoad, *args: Any, **kwargs: Any) -> None:
            write(self, *args, **kwargs)
            written.append(time.perf_counter() - start)

        with contextlib.ExitStack() as restore:
            store_load.BulkLoad.write = timed  # type: ignore[method-assign]
            restore.callback(setattr, store_load.BulkLoad, "write", write)  # also if the store fails to open
            store = restore.enter_context(Store(store_path))

            def sample() -> None:
                # a cursor of its own, taken again when the load reconnects (every few
                # batches, closing the cursors of the connection it had; a sample then caught
                # in the act is lost). Not a cursor a sample: taking one is a call on the
                # store's connection, and DuckDB refuses a call of the load's meanwhile
                cursor = None
                while not done.wait(0.02):
                    own = _children_private_mb()
                    workers[0] = max(workers[0], own)
                    anon[0] = max(anon[0], _anon_mb() - anon_base)
                    timeline.append((time.perf_counter() - start, rss_mb() - base + own))
                    if not tags:
                        continue
                    try:
                        cursor = cursor or store.con.cursor()
                        rows = cursor.execute(MEMORY_TAGS).fetchall()
                    except duckdb.Error:
                        cursor = None
                        continue
                    for tag, used in rows:
                        peaks[tag] = max(peaks.get(tag, 0.0), used / 2**20)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            try:
                for part in paths:  # a load() each, as a pipeline loading parts as they come would
                    report = load([part], store)
            finally:
                done.set()
                sampler.join()
        store_path.unlink(missing_ok=True)
        held = [f.raised_memory_mb for f in report.files if f.raised_memory_mb is not None]
        return report.summary.statements, {"duckdb MB": {t: round(v, 1) for t, v in peaks.items() if v >= 1},
                                           "budget raised to MiB": max(held) if held else None,
                                           "workers MB": round(workers[0], 1), "anon MB": round(anon[0]),
                                           "fifths MB": _fifths(timeline),
                                           "batches MB": _batch_peaks(timeline, written),
                                           "timeline": _thinned(timeline)}
    return run


def _as_often(dump: Result, larger: Result, path: Path, scale: int, tags: bool) -> Result:
    """``dump`` (the dump's two runs) loaded again, each time in a fresh process as every run
    is, until its loads have written as many batches as ``larger``'s two runs (``scale``
    times the dump), as one result whose peak is the highest of all its runs: the dump's peak
    drawn as often as the larger dump's. A load's peak is the highest of its batches' (a
    spread: :func:`_batch_peaks`), so a load ten times as long meets its highest moment more
    often even where it uses no more memory: at or below this row, a larger dump's peak is
    no more than that; above it, it uses more."""
    per_load = max(1, len(dump.extra["batches MB"]) // 2)
    loads = -(-len(larger.extra["batches MB"]) // per_load)
    runs = [measure(Case(dump.name, f"{MODULE}:chaingraph_file_load", {"path": str(path), "tags": tags}, 1))
            for _ in range(max(0, loads - 2))]
    extra = {**dump.extra,
             "workers MB": max([dump.extra["workers MB"]] + [r.extra["workers MB"] for r in runs]),
             "batches MB": dump.extra["batches MB"] + [mb for r in runs for mb in r.extra["batches MB"]]}
    return Result(f"1× (the world dump), {len(runs) + 2} loads: as many batches as {scale}×'s two runs",
                  dump.seconds + [t for r in runs for t in r.seconds], dump.items,
                  max([dump.peak_mb] + [r.peak_mb for r in runs]), extra,
                  dump.cpu + [c for r in runs for c in r.cpu])


def _fifths(timeline: list[tuple[float, float]]) -> list[float]:
    """The highest sample in each fifth of a load's time (MB): flat in the dump size, a load
    reaches its level early and stays there."""
    end = timeline[-1][0] if timeline else 0.0
    fifths = [0.0] * 5
    for t, mb in timeline:
        k = min(4, int(5 * t / end)) if end else 0
        fifths[k] = max(fifths[k], mb)
    return [round(mb) for mb in fifths]


def _batch_peaks(timeline: list[tuple[float, float]], written: list[float]) -> list[float]:
    """The highest sample between the ends of each two consecutive batch writes (MB; a JSON
    load's batches from the second on, each a stretch of the same work): the spread a load's
    peak is drawn from, whatever its length. Empty for a load without batches (N-Triples).

    >>> _batch_peaks([(0.1, 50.0), (0.3, 80.0), (0.5, 82.0), (0.7, 79.0), (0.9, 60.0)], [0.2, 0.6, 0.8])
    [82.0, 79.0]
    """
    peaks = [0.0] * max(0, len(written) - 1)
    for t, mb in timeline:
        k = bisect.bisect_left(written, t) - 1  # the batch whose write ends next, from the second
        if 0 <= k < len(peaks):
            peaks[k] = max(peaks[k], mb)
    return [round(mb, 1) for mb in peaks]


def _spread(peaks: list[float]) -> str:
    """``peaks``' lowest, median and highest, and how many.

    >>> _spread([80.0, 84.0, 82.0])
    '80 / 82 / 84 (3)'
    """
    return f"{min(peaks):.0f} / {statistics.median(peaks):.0f} / {max(peaks):.0f} ({len(peaks)})"


def _thinned(timeline: list[tuple[float, float]], points: int = 400) -> list[tuple[float, float]]:
    """At most ``points`` samples: the highest of each run of consecutive ones (for the plot)."""
    step = max(1, -(-len(timeline) // points))
    return [(timeline[i][0], max(mb for _, mb in timeline[i:i + step]))
            for i in range(0, len(timeline), step)]


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
                store.bulk_load(cast(IO[bytes], stream), format=pyoxigraph.RdfFormat.N_TRIPLES)
        return STATEMENTS[name], {"triples": len(store)}
    return run


def rdflib_parse(name: str) -> Run:
    import rdflib

    path = _world(name, "nt.gz")

    def run() -> tuple[int, dict[str, Any]]:
        graph = rdflib.Graph()
        with gzip.open(path, "rb") as stream:
            graph.parse(cast(IO[bytes], stream), format="nt")
        return STATEMENTS[name], {"triples": len(graph)}
    return run


def _rounds(cases: list[Case], *, slow_once: bool = True) -> list[Result]:
    """Every case in two rounds, the second in reverse order, with the median over both: the
    machine is shared, so no case always runs in the same slot. A case of one repeat runs
    in the first round only, unless not ``slow_once``."""
    runs: dict[str, list[Result]] = {case.name: [] for case in cases}
    for order in (cases, cases[::-1]):
        for case in order:
            if case.repeat == 1 and runs[case.name] and slow_once:
                continue  # the slow peer runs once
            result = measure(case)
            runs[case.name].append(result)
            shown = {k: v for k, v in result.extra.items() if k not in ("timeline", "batches MB")}
            if result.extra.get("batches MB"):
                shown["batches MB"] = _spread(result.extra["batches MB"])
            print(f"<!-- {case.name}: {', '.join(f'{s:.3f}' for s in result.seconds)} s; "
                  f"CPU {', '.join(f'{s:.2f}' for s in result.cpu)} s; peak {result.peak_mb:.0f} MB; "
                  f"{shown} -->",
                  file=sys.stderr, flush=True)
    return [Result(name, [s for r in rs for s in r.seconds], rs[0].items, max(r.peak_mb for r in rs),
                   _extras(rs), [c for r in rs for c in r.cpu]) for name, rs in runs.items()]


def _extras(runs: list[Result]) -> dict[str, Any]:
    """The first run's extras, with the parse workers' peak the highest of all runs'."""
    extra = dict(runs[0].extra)
    if "workers MB" in extra:
        extra["workers MB"] = max(r.extra["workers MB"] for r in runs)
    if "batches MB" in extra:  # every run's batches: the spread the peaks are drawn from
        extra["batches MB"] = [mb for r in runs for mb in r.extra["batches MB"]]
    if "timeline" in extra:  # the plot's: of the run with the higher peak
        extra["timeline"] = max(runs, key=lambda r: r.peak_mb + r.extra["workers MB"]).extra["timeline"]
    return extra


def _plot_memory(panels: list[tuple[str, list[Result]]], path: Path, name: str) -> None:
    """Each load's memory over its time (the run with the higher peak; process and parse
    workers, sampled every 20 ms), a panel per format: flat in the dump size, the larger
    dumps level off where the dump itself ends."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (label, results) in zip(axes[0], panels, strict=True):
        for r in results:
            t, mb = zip(*r.extra["timeline"], strict=True) if r.extra["timeline"] else ((), ())
            ax.plot(t, mb, label=f"{r.name}: peak {r.peak_mb:.0f} MB", linewidth=1)
        ax.set_title(f"{label} of world/{name} into a new store file")
        ax.set_xlabel("seconds into the load")
        ax.set_ylabel("MB above the start (process + parse workers)")
        ax.set_xscale("symlog", linthresh=2)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"memory over time: {path}")


def _with_workers(runs: list[Result]) -> list[Result]:
    """The whole load's memory: each run's peak with its parse workers' (JSON) added, an
    upper bound, as the two need not peak at once."""
    return [Result(r.name, r.seconds, r.items, r.peak_mb + r.extra["workers MB"], r.extra, r.cpu)
            for r in runs]


def shuffled_table(name: str, scale: int) -> str:
    """The synthetic JSON dump ``scale`` times larger loaded into a new store file in id order
    and shuffled (:func:`shuffled_dump`), in two rounds in alternating order, one fresh process
    a load: seconds, the peak (the process's and its parse workers' added), and the DuckDB
    budget the load held when the entities' key index outgrew its own."""
    sizes = [(f"{scale}× (synthetic), in id order", synthetic_dump(name, scale)),
             (f"{scale}× (synthetic), its items shuffled", shuffled_dump(name, scale))]
    runs = _with_workers(_rounds([Case(size, f"{MODULE}:chaingraph_file_load", {"path": str(path)}, 1)
                                  for size, path in sizes], slow_once=False))
    table = markdown_table(f"world/{name} JSON dump {scale}× into a new store file, in id order and shuffled "
                           "(peak: the higher of two runs; the process's and its parse workers' added)", runs,
                           baseline=runs[0].name, unit="statements")
    # imported here: a --before run's children must import chaingraph from the other checkout
    from chaingraph.settings import DEFAULT_BULK_LOAD_MEMORY_MB

    budgets = "\n".join(f"* {r.name}: {r.extra['budget raised to MiB'] or DEFAULT_BULK_LOAD_MEMORY_MB} MiB"
                         for r in runs)
    return f"{table}\nThe load's DuckDB budget (first run):\n\n{budgets}\n"


def _load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="world/codex-s instead of codex-m, 3 repeats")
    parser.add_argument("--scale", type=int, default=10, metavar="N",
                        help="memory check: synthetic dumps N and 2N times larger (default 10)")
    parser.add_argument("--before", metavar="ROOT",
                        help="also time the loads with the chaingraph package of the checkout at ROOT")
    parser.add_argument("--paired", type=int, metavar="N",
                        help="only the four loads against --before's, back to back in N rounds")
    parser.add_argument("--at", type=int, default=1, metavar="SCALE",
                        help="with --paired: the store-file loads of the synthetic dump SCALE times larger")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--json", action="store_true", help="only the JSON-dump cases and memory check")
    only.add_argument("--nt", action="store_true", help="only the N-Triples cases and memory check")
    parser.add_argument("--memory", action="store_true", help="only the memory check (no load table)")
    parser.add_argument("--tags", action="store_true",
                        help="memory check: add the peak of each kind of DuckDB's memory to the comments")
    parser.add_argument("--plot", type=Path, metavar="FILE",
                        help="plot the memory check's memory over time into FILE (PNG)")
    parser.add_argument("--shuffled", type=int, metavar="SCALE",
                        help="only the synthetic JSON dump SCALE times larger in id order and shuffled, "
                             "into a new store file")
    args = parser.parse_args(argv)
    if args.paired is not None and args.before is None:
        parser.error("--paired N compares with a checkout: give --before ROOT too")
    scale = args.scale
    name = "codex-s" if args.quick else "codex-m"
    repeat = 3 if args.quick else 5
    if args.shuffled is not None:  # entities in no id order against the same dump in order
        print(shuffled_table(name, args.shuffled))
        return 0
    if args.paired is not None:  # the four loads against the checkout's, back to back, alone
        print(paired_table(args.before, name, args.paired, repeat=1 if args.at > 1 else 3, scale=args.at))
        return 0
    cases = [
        Case("chaingraph JSON (row at a time)", f"{MODULE}:chaingraph_rows", {"name": name}, repeat),
        Case("chaingraph JSON dump", f"{MODULE}:chaingraph_load", {"name": name, "ext": "json.gz"}, repeat),
        Case("DuckDB read_json + unnest", f"{MODULE}:duckdb_read_json", {"name": name}, repeat),
        Case("pyoxigraph bulk_load", f"{MODULE}:pyoxigraph_bulk_load", {"name": name}, repeat),
        Case("chaingraph N-Triples", f"{MODULE}:chaingraph_load", {"name": name, "ext": "nt.gz"}, repeat),
        Case("chaingraph N-Triples (numpy)", f"{MODULE}:chaingraph_load_numpy",
             {"name": name, "ext": "nt.gz"}, repeat),
        Case("pyoxigraph bulk_load (plain)", f"{MODULE}:pyoxigraph_bulk_load",
             {"name": name, "plain": True}, repeat),
        Case("chaingraph N-Triples (plain)", f"{MODULE}:chaingraph_load",
             {"name": name, "ext": "nt", "plain": True}, repeat),
        Case("chaingraph Parquet", f"{MODULE}:chaingraph_parquet", {"name": name}, repeat),
        Case("rdflib Graph.parse", f"{MODULE}:rdflib_parse", {"name": name}, 1),
    ]
    # into a store file, as a dump's load is: budgets, checkpoints and compression on disk
    cases += [Case("chaingraph JSON dump (store file)", f"{MODULE}:chaingraph_load",
                   {"name": name, "ext": "json.gz", "file": True}, repeat),
              Case("chaingraph N-Triples (store file)", f"{MODULE}:chaingraph_load",
                   {"name": name, "ext": "nt.gz", "file": True}, repeat)]
    if args.before is not None:  # the loaders of another checkout, e.g. a worktree of main
        root = args.before
        cases.append(Case("chaingraph JSON dump (before, store file)", f"{MODULE}:chaingraph_load_from",
                          {"root": root, "name": name, "ext": "json.gz", "file": True}, repeat))
        cases.append(Case("chaingraph N-Triples (before, store file)", f"{MODULE}:chaingraph_load_from",
                          {"root": root, "name": name, "ext": "nt.gz", "file": True}, repeat))
        cases.insert(4, Case("chaingraph N-Triples (before)", f"{MODULE}:chaingraph_load_from",
                             {"root": root, "name": name, "ext": "nt.gz"}, repeat))
        cases.insert(2, Case("chaingraph JSON dump (before)", f"{MODULE}:chaingraph_load_from",
                             {"root": root, "name": name, "ext": "json.gz"}, repeat))
    if args.json:
        cases = [c for c in cases if "JSON" in c.name.upper()]
    if args.nt:  # the N-Triples cases and their peers only
        cases = [c for c in cases if "N-Triples" in c.name or c.name.startswith("pyoxigraph")]
    print(f"<!-- load average before: {_load_average()} -->", file=sys.stderr, flush=True)
    if not args.memory:
        results = _rounds(cases)
        baseline = "pyoxigraph bulk_load" if args.nt else "chaingraph JSON (row at a time)"
        print(markdown_table(f"Load world/{name} ({STATEMENTS[name]:,} statements) into a store",
                             results, baseline=baseline, unit="statements"))
    # memory flat in the dump size: the dump and one `scale` times larger, each into a store file
    formats = [] if args.nt else [("JSON dump", "json.gz", synthetic_dump)]
    if not args.json:
        formats.append(("N-Triples", "nt.gz", synthetic_ntriples))
    tags = args.tags
    panels: list[tuple[str, list[Result]]] = []
    for label, ext, synthetic in formats:
        sizes: list[tuple[str, Path | str]] = [
            ("1× (the world dump)", _world(name, ext)),
            ("1× (ids as long as the copies')", synthetic(name, 1, first=1))]
        scales = sorted({2, scale, 2 * scale})
        sizes += [(f"{n}× (synthetic)", synthetic(name, n)) for n in scales]
        sizes.append((f"{2 * scale}× in two {scale}× parts, one after another",
                      os.pathsep.join(str(synthetic(name, scale, first=k)) for k in (0, scale))))
        memory = _rounds([Case(size, f"{MODULE}:chaingraph_file_load", {"path": str(path), "tags": tags}, 1)
                          for size, path in sizes], slow_once=False)
        plotted = {r.name for r in memory}  # the as-often row is a table's, not a plot's
        if memory[0].extra.get("batches MB"):  # JSON: the dump's peak drawn as often as scale×'s
            larger = next(r for r in memory if r.name == f"{scale}× (synthetic)")
            memory.insert(2, _as_often(memory[0], larger, _world(name, ext), scale, tags))
        memory = _with_workers(memory)
        loaded = ", ".join(f"{n}×" for n in [1, *scales[:-1]]) + f" and {scales[-1]}×"
        print(markdown_table(f"Peak memory, world/{name} {label} {loaded} into a "
                             "new store file (peak: the higher of two runs; the process's and its parse "
                             "workers' added)", memory,
                             baseline="1× (the world dump)", unit="statements"))
        spreads = [f"{r.name}: {_spread(r.extra['batches MB'])}" for r in memory if r.extra.get("batches MB")]
        if spreads:
            print("Each batch's peak (process and workers sampled together every 20 ms, from each "
                  "load's second batch on, both runs), lowest / median / highest MB, and batches:\n\n"
                  + "\n".join(f"* {line}" for line in spreads) + "\n")
        panels.append((label, [r for r in memory if r.name in plotted]))
    if args.plot is not None and panels:
        _plot_memory(panels, args.plot, name)
    print(f"load average after: {_load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
