"""Load Wikidata's JSON dump: ``[``, one entity per line with a trailing comma, ``]``.

Plain JSON Lines (one entity per line, no brackets) reads the same way. The file is
streamed: a reader thread decompresses ahead, entities are parsed into plain columns and
tuples (no per-statement model objects on the hot path) on worker processes
(:mod:`~chaingraph.sources.loaders.json_chunks`), and a writer thread inserts each batch
(Arrow tables of about :data:`BULK_ROWS` statements or :data:`BULK_BYTES` bytes, one
transaction each) while the next
is parsed. What is in memory at once is bounded, whatever the size of the dump: the
statement tables have no primary-key index to grow, and a batch is written without reading
what the earlier ones wrote when no key of it can be there yet (:meth:`Store.bulk_load`;
otherwise :meth:`Store.write_arrow` keeps the keys with an anti-join per batch).

``row_at_a_time`` is the loader as it was: parsed in this process, small batches. The
store is the same either way.

An entity that comes twice — in one dump, whatever the batch boundaries, or in a later
load — is kept whole as its last copy (:meth:`Store.write_arrow` ``replace``): statements
with the same ids are updated and statements the last copy lacks are gone.

Everything the JSON carries that the store models is kept
(:mod:`~chaingraph.sources.loaders.json_rows` turns an entity into rows). A line is read as
one entity object:

>>> parse_line(b' {"type": "item", "id": "Q42"}, ')["id"], parse_line(b"[")
('Q42', None)
"""

from __future__ import annotations

import json
import queue
import re
import threading
import time
import zlib
from collections.abc import Collection, Mapping, Sequence
from contextlib import closing, suppress
from pathlib import Path
from typing import IO, Any, Protocol

import orjson
import pyarrow as pa

from chaingraph.errors import BadDumpLine, ChaingraphError, InvalidInput
from chaingraph.files import lone_surrogate
from chaingraph.progress import Progress
from chaingraph.sources.loaders.common import FileReport, LineGuard, loaded_bytes
from chaingraph.sources.loaders.compression import RawCounter, dump_date, open_dump, read_blocks
from chaingraph.sources.loaders.json_rows import EntityRows, datavalue_columns
from chaingraph.store import Store
from chaingraph.store_load import BulkLoad, whole

__all__ = ["EntityRows", "datavalue_columns", "describe_bad_line", "entity_text", "load_json_dump",
           "parse_line", "parse_text", "plain_text", "unreadable"]


#: the default loader writes batches this large: what waits to be written and what DuckDB
#: works with while it writes are a batch or two each, so smaller batches hold less (the
#: load of codex-m's 10x synthetic dump peaked at 126 MB in the process at 100,000, 107 at
#: 50,000, 105 at 25,000, which took 8% longer). Each batch's statements are row groups of
#: their own (:data:`~chaingraph.store_load.VACUUM_TASKS`): into a store file, a whole one of
#: :data:`~chaingraph.store_file.BATCH_ROW_GROUP_SIZE` rows, which DuckDB compresses as the batch
#: is inserted, and one of the rest, compressed as the batch commits. With
#: DuckDB's 122,880 rows three fitted in two, and the store's close merged them all at once
#: (1.49 GB after the 40x load) until a load ended with a checkpoint of its own and a store
#: file merged one row group at a time (:data:`~chaingraph.store_memory.STORE_VACUUM_TASKS`);
#: then the 40x load and close peaked at 112 MB. A batch reads nothing written before it when
#: its keys cannot be there yet (:class:`~chaingraph.store_load.BulkLoad`); otherwise each one
#: scans the table for them, and twice as many batches scan it twice as often
BULK_ENTITIES = 100_000
BULK_ROWS = 50_000
#: ... and a batch holds at most about this many bytes of rows (the parse workers' Arrow
#: data: a batch ends with the part that reaches it): what DuckDB holds of a batch while it
#: writes it follows its bytes, not its statements, which differ from dump to dump (longer
#: ids, more qualifiers and references). codex-m's 50,000 statements are 5.3-5.4 MB, its
#: 10x synthetic dump's (longer ids) 6.3: with this cap as well the 10x and 20x loads into a
#: store file peaked at 141 and 142 MB in place of 143 and 146 (one memory check each)
BULK_BYTES = 5 << 20


def parse_line(line: bytes, *, plain: bool = False) -> dict[str, Any] | None:
    """One dump line as an entity object, or ``None`` for ``[``, ``]`` and blank lines.

    Raises ``ValueError`` (JSON errors included) for a line that is not an entity.
    ``plain`` says the caller found that the text holds neither a run of 19 digits nor a
    ``\\udXXX`` escape (:func:`plain_text`, for many lines at once), so neither is looked for.
    """
    return parse_text(entity_text(line), plain=plain)


def entity_text(line: bytes) -> bytes:
    """One dump line without its surrounding space and the comma after an entity.

    >>> entity_text(b' {"id": "Q1"} , '), entity_text(b"[")
    (b'{"id": "Q1"}', b'[')
    """
    text = line.strip()
    if text.endswith(b","):
        text = text[:-1].rstrip()
    return text


def parse_text(text: bytes, *, plain: bool = False) -> dict[str, Any] | None:
    """:func:`parse_line` of a line already cut by :func:`entity_text`."""
    if not text or text in (b"[", b"]"):
        return None
    try:
        entity = _loads(text, plain=plain)
    except RecursionError:
        raise InvalidInput("JSON nested too deeply for Python's parser (about 1,000 levels)") from None
    if not isinstance(entity, dict):
        raise InvalidInput(f"expected an entity object, found a JSON {type(entity).__name__}")
    if not plain and lone_surrogate(text, entity):
        raise InvalidInput("a string holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without its "
                           "pair), which is not text")
    return entity


#: digits as zeros, and a run of them long enough to be an integer past 64 bits, which orjson
#: would read as a float (a scan for it after ``translate`` is 10x faster than a regex)
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # as chaingraph.files looks for one


def plain_text(text: bytes) -> bool:
    """Whether ``text`` (lines of a dump) holds neither a run of 19 digits (an integer orjson
    may not read as ``json`` does) nor a ``\\udXXX`` escape (maybe a lone surrogate):
    :func:`parse_line` ``plain``.

    >>> plain_text(b'{"a": 12}'), plain_text(b'{"a": 1234567890123456789}'), plain_text(b'"\\\\udc00"')
    (True, False, False)
    """
    return _LONG_DIGITS not in text.translate(_DIGITS_AS_ZEROS) and _SURROGATE_ESCAPE.search(text) is None


def _loads(text: bytes, *, plain: bool = False) -> Any:
    """``json.loads`` of one line, through orjson (several times faster) when that gives
    the same objects: orjson rejects what only Python's parser reads (NaN, Infinity, numbers
    past a double, lone surrogate escapes, nesting past 1,024 levels), and those lines go to
    ``json`` for its result or its error; a line with an integer that may pass 64 bits
    (orjson turns it into a float) goes to ``json`` directly.

    >>> _loads(b'{"a": 1, "a": 2, "n": 123456789012345678901}'), _loads(b'[NaN]')
    ({'a': 2, 'n': 123456789012345678901}, [nan])
    """
    if plain or _LONG_DIGITS not in text.translate(_DIGITS_AS_ZEROS):
        # orjson refuses some lines json reads (NaN, 1e400, lone surrogates, deep nesting):
        # json decides those, and raises the error the loader reports for a bad line
        with suppress(orjson.JSONDecodeError):
            return orjson.loads(text)
    return json.loads(text)


class _Batch(Protocol):
    ids: set[str]
    prefixed: bool

    def tables(self) -> Mapping[str, pa.Table | Sequence[pa.Table]]: ...

    def unique(self) -> Collection[str]: ...


class _Writer:
    """Writes batches on a second thread, so DuckDB (which releases the GIL) inserts one
    batch while the next is parsed. Errors surface on the next :meth:`submit`/:meth:`drain`.

    One batch may wait while another is written; with ``wait``, :meth:`submit` waits until
    the writer is done instead, so that a load whose writes are slower than its parsing
    (into a store file) holds two batches at once, not three."""

    def __init__(self, store: Store, load: BulkLoad | None = None, *, wait: bool = False) -> None:
        self.store, self.load, self.wait = store, load, wait
        self.pending: queue.Queue[_Batch | None] = queue.Queue(maxsize=1)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="chaingraph-write", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            rows = self.pending.get()
            try:
                if rows is None:
                    return
                if self.error is not None:
                    continue  # an earlier batch failed: nothing after it is written
                if self.load is not None:
                    # the batch's rows are freed once DuckDB has them, before its commit; the
                    # load lets DuckDB's cache go after each batch itself (BulkLoad.write)
                    self.load.write(rows.tables(), replace=rows.ids, unique=rows.unique(),
                                    prefixed=rows.prefixed, consume=True)
                else:
                    self.store.write_arrow(whole(rows.tables()), replace=rows.ids, unique=rows.unique())
                    self.store.release_cache()  # a store file's written blocks: memory stays flat
            except BaseException as exc:
                self.error = exc
            finally:
                self.pending.task_done()

    def submit(self, rows: _Batch) -> None:
        self._raise()
        if self.wait:
            self.pending.join()
            self._raise()
        self.pending.put(rows)

    def drain(self) -> None:
        self.pending.join()
        self._raise()

    def close(self) -> None:
        self.pending.put(None)
        self.thread.join()

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error


def load_json_dump(path: str | Path, store: Store, *, skip_bad_lines: bool = False,
                   progress: Progress | None = None, row_at_a_time: bool = False,
                   workers: int | None = None) -> FileReport:
    """Stream one JSON dump file into ``store``; return what it contributed.

    Lines are parsed on ``workers`` processes (default: two, none for a small file or on
    one CPU; :mod:`~chaingraph.sources.loaders.json_chunks`) and written in large batches;
    ``row_at_a_time`` parses in this process and writes small batches (the loader as it
    was, kept as the reference the benchmark compares with). The store is the same.
    """
    started = time.perf_counter()
    location = str(Path(path).resolve())
    stream, counter = open_dump(path, "json")
    guard = LineGuard(str(path), skip=skip_bad_lines)
    with stream:
        source_id = store.add_source("json-dump", location, dump_date=dump_date(path))
        if row_at_a_time:
            totals = _load_rows(path, stream, counter, store, source_id, guard, progress)
        else:
            from chaingraph.sources.loaders.json_chunks import load_chunks

            totals = load_chunks(path, stream, counter, store, source_id, guard, progress=progress,
                                 workers=workers)
    return FileReport(path=str(path), format="json", bad_lines=guard.count,
                      bad_line_examples=tuple(guard.examples),
                      seconds=time.perf_counter() - started, **totals)


def unreadable(path: str | Path, lineno: int, exc: BaseException) -> BadDumpLine:
    """The error for a dump that cannot be read past line ``lineno`` (truncated or corrupt)."""
    return BadDumpLine(str(path), lineno + 1, f"the file cannot be read past line {lineno} ({exc})",
                       "the file is truncated or corrupt: download it again; everything "
                       "before this line is loaded")


def _load_rows(path: str | Path, stream: IO[bytes], counter: RawCounter, store: Store, source_id: str,
               guard: LineGuard, progress: Progress | None) -> dict[str, int]:
    """The loader as it was: parse here, small batches written on one thread."""
    totals = {"entities": 0, "properties": 0, "statements": 0, "qualifiers": 0, "references": 0}
    rows = EntityRows(source_id)
    writer = _Writer(store)

    def submit() -> None:
        nonlocal rows
        if rows.n_entities:
            for name, n in rows.totals().items():
                totals[name] += n
            writer.submit(rows)
            rows = EntityRows(source_id)
        loaded_bytes(progress, str(path), counter.position(), counter.size)

    def flush() -> None:  # before raising on a bad line: commit everything parsed so far
        submit()
        writer.drain()

    lineno = 0
    try:
        with closing(read_blocks(stream)) as blocks:  # stop the reader before the stream closes
            for block in blocks:
                lines = block.split(b"\n")
                if block.endswith(b"\n"):
                    lines.pop()
                for line in lines:
                    lineno += 1
                    try:
                        entity = parse_line(line)
                        if entity is not None:
                            if entity.get("id") in rows.ids:  # a second copy: the last one wins
                                submit()
                            rows.add(entity)
                    except (ValueError, KeyError, TypeError, AttributeError, ChaingraphError) as exc:
                        guard.bad(lineno, describe_bad_line(exc, line), flush)
                        continue
                    if rows.full():
                        submit()
                loaded_bytes(progress, str(path), counter.position(), counter.size)  # per block
        flush()
    except (EOFError, OSError, zlib.error) as exc:
        flush()
        raise unreadable(path, lineno, exc) from exc
    finally:
        writer.close()
    return totals


def describe_bad_line(exc: Exception, line: bytes) -> str:
    """What is wrong with a dump line, for its ``file:line`` error."""
    if isinstance(exc, json.JSONDecodeError):
        stripped = line.rstrip()
        if stripped and not stripped.endswith((b"}", b"},", b"]", b"[")):
            return f"the line is not complete JSON (truncated?): {exc.msg} at column {exc.colno}"
        return f"the line is not valid JSON: {exc.msg} at column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "the line is not UTF-8 text (is this a binary file?)"
    if isinstance(exc, (KeyError, TypeError, AttributeError)):
        return f"the entity does not have the Wikidata JSON shape ({type(exc).__name__}: {exc})"
    return str(exc)
