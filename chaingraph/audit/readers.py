"""Streaming readers: JSON and JSON Lines files and folders, one record at a time.

:func:`corpus_files` expands the paths a user gives into files, in a deterministic order:
each path in the order given; a folder is walked recursively and its files (``*.json``,
``*.jsonl``, ``*.ndjson``, each optionally ``.gz``) are taken in sorted path order. A file
named explicitly is read whatever its suffix. A path that does not exist is an argument
error (:class:`~chaingraph.errors.InvalidInput`, raised at call time).

:func:`read_file` yields the records of one file without holding the file in memory. The
layout comes from the suffix and the first line:

* ``.jsonl`` / ``.ndjson`` files, and any file whose first line is a whole JSON value
  followed by more lines, are JSON Lines: one record a line, blank lines skipped; a line
  that does not parse is a problem and reading resumes at the next line;
* otherwise ``[`` — one JSON array; its elements are the records, decoded one at a time;
* otherwise ``{`` — one or more (pretty-printed) JSON objects separated by whitespace.

Anything that cannot be read becomes a :class:`Problem` (file, record number, line,
kind, message) instead of an exception, so an audit lists bad input and carries on.
Record numbers and line numbers are 1-based; a record that fails to parse still takes
its number, so ``record 3`` is always the third record of the file. A record longer than
:data:`~chaingraph.files.MAX_RECORD_BYTES` or nested deeper than Python's JSON parser
follows is a problem too; a path that names a FIFO or a device is an argument error.

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.jsonl").write_text('{"n": 1}\\n\\n{"n": 2\\n{"n": 3}\\n')
>>> [(type(r).__name__, r.record, r.line) for r in read_file(folder / "a.jsonl")]
[('RawRecord', 1, 1), ('Problem', 2, 3), ('RawRecord', 3, 4)]
>>> _ = (folder / "b.json").write_text(json.dumps([{"n": 4}, {"n": 5}], indent=1))
>>> [r.value for r in read_file(folder / "b.json")]
[{'n': 4}, {'n': 5}]
>>> [p.name for p in corpus_files([folder])]
['a.jsonl', 'b.json']
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

from chaingraph.errors import InvalidInput
from chaingraph.files import MAX_RECORD_BYTES, regular_file

__all__ = ["CORPUS_SUFFIXES", "Problem", "ProblemKind", "RawRecord", "corpus_files", "read_file"]

#: file name endings a folder walk picks up
CORPUS_SUFFIXES: tuple[str, ...] = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz")

ProblemKind = Literal["unreadable", "malformed-json", "unknown-shape", "bad-record", "no-chain"]

_LINES_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
_CHUNK = 1 << 16
_PROBE = 1 << 20  # longest first line tried as a whole JSON value
_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n"


class RawRecord(NamedTuple):
    """One decoded JSON value and where it came from."""

    file: str
    record: int
    line: int
    value: Any


class Problem(NamedTuple):
    """Input that could not be audited: which file, which record, what is wrong.

    ``record`` and ``line`` are 1-based; 0 means "the whole file" / "not known".
    """

    file: str
    record: int
    line: int
    kind: ProblemKind
    message: str

    def describe(self) -> str:
        """``file:line (record n): kind: message`` on one line.

        >>> Problem("a.jsonl", 2, 3, "malformed-json", "Expecting ','").describe()
        "a.jsonl:3 (record 2): malformed-json: Expecting ','"
        """
        where = self.file + (f":{self.line}" if self.line else "")
        if self.record:
            where += f" (record {self.record})"
        return f"{where}: {self.kind}: {self.message}"


def _is_corpus_file(path: Path) -> bool:
    return path.name.lower().endswith(CORPUS_SUFFIXES)


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files to audit, in a deterministic order (validated now, not lazily).

    >>> corpus_files(["/no/such/corpus"])
    Traceback (most recent call last):
    ...
    chaingraph.errors.InvalidInput: /no/such/corpus: no such file or folder; check the path
    """
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and _is_corpus_file(p)))
        elif path.exists():
            files.append(regular_file(path, what="corpus file"))
        else:
            raise InvalidInput(f"{given}: no such file or folder; check the path")
    return files


def _open(path: Path) -> IO[str]:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def read_file(path: str | Path) -> Iterator[RawRecord | Problem]:
    """Yield the records of one file, and a :class:`Problem` for whatever cannot be read."""
    path = Path(path)
    name = str(path)
    try:
        with _open(path) as fh:
            yield from _read(fh, name, path.name.lower().endswith(_LINES_SUFFIXES))
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        yield Problem(name, 0, 0, "unreadable", f"corrupt or truncated gzip data ({exc}); check the file")
    except UnicodeDecodeError as exc:
        yield Problem(name, 0, 0, "unreadable", f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except _RecordTooLarge as exc:
        yield Problem(name, 0, exc.line, "unreadable",
                      f"a record is longer than {MAX_RECORD_BYTES // (1024 * 1024)} MiB, the limit; "
                      "the rest of the file was not read")
    except OSError as exc:
        yield Problem(name, 0, 0, "unreadable", f"{exc.strerror or exc}; check the file and its permissions")


def _read(fh: IO[str], name: str, lines_layout: bool) -> Iterator[RawRecord | Problem]:
    buf = fh.read(_CHUNK)
    line = 1
    while not buf.strip(_BLANK):
        more = fh.read(_CHUNK)
        if not more:
            yield Problem(name, 0, 0, "unreadable", "the file is empty; remove it or add records")
            return
        line += buf.count("\n")
        buf = more
    start = len(buf) - len(buf.lstrip(_BLANK))
    line += buf.count("\n", 0, start)
    first = buf[start]
    if lines_layout:
        yield from _read_lines(fh, name, buf[start:], line)
        return
    if first not in "[{":
        yield Problem(
            name,
            0,
            line,
            "unreadable",
            f"starts with {first!r}, not a JSON object or array; audit JSON or JSON Lines files",
        )
        return
    end = buf.find("\n", start)
    probing = True
    while end < 0 and probing and (more := fh.read(_CHUNK)):
        buf += more
        end = buf.find("\n", start)
        probing = len(buf) - start < _PROBE  # a long one-line array is streamed, not probed
    try:
        one_line = probing and json.loads(buf[start:] if end < 0 else buf[start:end]) is not None
    except (json.JSONDecodeError, RecursionError, ValueError):
        one_line = False
    more_lines = False
    if one_line and end >= 0:
        while not buf[end:].strip(_BLANK) and (more := fh.read(_CHUNK)):
            buf += more
        more_lines = bool(buf[end:].strip(_BLANK))
    if more_lines or (first == "{" and one_line):
        yield from _read_lines(fh, name, buf[start:], line)
    elif first == "[":
        yield from _read_array(fh, name, buf, start + 1, line)
    else:
        yield from _read_values(fh, name, buf, start, line)


def _read_lines(fh: IO[str], name: str, head: str, line: int) -> Iterator[RawRecord | Problem]:
    record = 0
    pending = head
    for text in _lines(fh, pending):
        if text.strip():
            record += 1
            try:
                yield RawRecord(name, record, line, json.loads(text))
            except json.JSONDecodeError as exc:
                yield Problem(name, record, line, "malformed-json", f"{exc.msg} (column {exc.colno})")
            except (RecursionError, ValueError) as exc:
                yield Problem(name, record, line, "malformed-json", _unparsable(exc))
        line += 1


def _lines(fh: IO[str], head: str) -> Iterator[str]:
    parts = head.split("\n")
    tail = parts.pop()
    yield from parts
    number = len(parts)
    while text := fh.readline(MAX_RECORD_BYTES + 1):
        number += 1
        if tail:
            text, tail = tail + text, ""
        if len(text) > MAX_RECORD_BYTES:
            raise _RecordTooLarge(number)
        yield text.rstrip("\n")
    if tail:
        yield tail


class _Cursor:
    """A growing window over a text stream for incremental :meth:`json.JSONDecoder.raw_decode`."""

    def __init__(self, fh: IO[str], buf: str, pos: int, line: int) -> None:
        self.fh, self.buf, self.pos, self.line = fh, buf, pos, line
        self.eof = False

    def more(self) -> bool:
        """Drop what was consumed and read (at least) one more chunk; False at end of file."""
        if self.eof:
            return False
        size = max(_CHUNK, len(self.buf) - self.pos)
        if len(self.buf) - self.pos > MAX_RECORD_BYTES:
            raise _RecordTooLarge(self.line)
        chunk = self.fh.read(size)
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        self.eof = not chunk
        return bool(chunk)

    def advance(self, to: int) -> None:
        self.line += self.buf.count("\n", self.pos, to)
        self.pos = to

    def skip_blank(self) -> str:
        """Skip whitespace; return the next character or '' at end of file."""
        while True:
            n = len(self.buf)
            i = self.pos
            while i < n and self.buf[i] in _BLANK:
                i += 1
            self.advance(i)
            if i < n:
                return self.buf[i]
            if not self.more():
                return ""

    def decode(self) -> Any:
        """Decode one JSON value at the cursor, reading more text while it is incomplete."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if self.more():
                    continue
                raise
            # a number at the very end of the window may continue in the next chunk
            if end == len(self.buf) and not self.eof and self.more():
                continue
            self.advance(end)
            return value


def _decode_record(cur: _Cursor, name: str, record: int) -> RawRecord | Problem:
    """The next JSON value at the cursor as record number ``record``, or the problem that
    ends the file (a value that does not decode stops the reading)."""
    line_at = cur.line
    try:
        return RawRecord(name, record, line_at, cur.decode())
    except json.JSONDecodeError as exc:
        return Problem(
            name, record, line_at, "malformed-json", f"{exc.msg}; the rest of the file was not read"
        )
    except (RecursionError, ValueError) as exc:
        return Problem(name, record, line_at, "malformed-json",
                       f"{_unparsable(exc)}; the rest of the file was not read")


class _RecordTooLarge(Exception):
    """Internal: a record longer than MAX_RECORD_BYTES (reading stops; read_file reports it)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _unparsable(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply for Python's parser (about 1,000 levels)"
    return str(exc).splitlines()[0]


def _read_array(fh: IO[str], name: str, buf: str, pos: int, line: int) -> Iterator[RawRecord | Problem]:
    cur = _Cursor(fh, buf, pos, line)
    record = 0
    expect_value = True
    while True:
        char = cur.skip_blank()
        if char == "]" and (record == 0 or not expect_value):
            return
        if char == "," and not expect_value:
            cur.advance(cur.pos + 1)
            expect_value = True
            continue
        if not char or not expect_value:
            problem = "the array is not closed" if not char else f"expected ',' or ']' but found {char!r}"
            yield Problem(
                name, 0, cur.line, "malformed-json", f"{problem}; the rest of the file was not read"
            )
            return
        record += 1
        item = _decode_record(cur, name, record)
        yield item
        if isinstance(item, Problem):
            return
        expect_value = False


def _read_values(fh: IO[str], name: str, buf: str, pos: int, line: int) -> Iterator[RawRecord | Problem]:
    cur = _Cursor(fh, buf, pos, line)
    record = 0
    while cur.skip_blank():
        record += 1
        item = _decode_record(cur, name, record)
        yield item
        if isinstance(item, Problem):
            return
