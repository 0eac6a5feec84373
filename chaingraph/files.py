"""Reading the files users give chaingraph, within documented bounds.

Every input file a command reads — a task, a fusion spec, an audit corpus, a property
list, a crosswalk table — is checked here first: it must be a **regular file** (a FIFO
would hang the reader, ``/dev/zero`` would grow without end), and formats without a
natural bound have a size limit:

=========================  ==========================================================
:data:`MAX_DOCUMENT_BYTES`  one JSON document read whole (a task, a spec): 64 MiB
:data:`MAX_RECORD_BYTES`    one record of a streamed corpus (a JSON Lines line or one
                            array element of an audit file): 64 MiB
:data:`MAX_JSON_DEPTH`      JSON nesting deeper than Python's parser can follow is
                            refused with one line (about 1,000 levels; real records
                            nest fewer than 20)
=========================  ==========================================================

Dumps are streamed line by line and bounded by the line (see the loaders).

>>> regular_file("/dev/null", what="task")
Traceback (most recent call last):
...
chaingraph.errors.BadFile: /dev/null: not a regular file (a character device); give the task as a file
>>> parse_json('{"a": [1, 2]}', where="spec.json")
{'a': [1, 2]}
>>> parse_json("[" * 100_000, where="spec.json")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
chaingraph.errors.BadFile: spec.json: JSON nested too deeply (more than about 1000 levels); ...
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from chaingraph.errors import BadFile

__all__ = ["MAX_DOCUMENT_BYTES", "MAX_JSON_DEPTH", "MAX_RECORD_BYTES", "has_lone_surrogate", "json_problem",
           "lone_surrogate", "parse_json", "read_text", "regular_file"]

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_RECORD_BYTES = 64 * 1024 * 1024
#: what Python's JSON parser follows (its recursion limit); deeper input is refused
MAX_JSON_DEPTH = 1000

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def regular_file(path: str | Path, *, what: str = "input") -> Path:
    """``path`` if it names a regular file (symlinks followed), else :class:`~chaingraph.errors.BadFile`."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise BadFile(str(path), f"cannot read the {what}: no such file; check the path") from None
    except OSError as exc:
        raise BadFile(str(path), f"cannot read the {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise BadFile(str(path), f"not a regular file ({kind}); give the {what} as a file")
    return Path(path)


def read_text(path: str | Path, *, what: str = "input", limit: int = MAX_DOCUMENT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (``-`` reads stdin)."""
    if str(path) == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        p = regular_file(path, what=what)
        try:
            with p.open("rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            raise BadFile(str(path), f"cannot read the {what} ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise BadFile(str(path), f"the {what} is larger than {limit // (1024 * 1024)} MiB, the limit "
                      "for one document; split it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadFile(str(path), f"not UTF-8 text (byte {exc.start}); the {what} must be JSON") from None


def parse_json(text: str | bytes, *, where: str, what: str = "document") -> Any:
    """``json.loads`` whose every failure is one :class:`BadFile` line naming ``where``.

    Malformed JSON, nesting deeper than :data:`MAX_JSON_DEPTH`, integers longer than
    Python converts (4,300 digits) and lone UTF-16 surrogates (not text) are refused.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadFile(where, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg} "
                             f"(not JSON; a {what} is one JSON document)") from None
    except RecursionError:
        raise BadFile(where, f"JSON nested too deeply (more than about {MAX_JSON_DEPTH} levels); "
                             "no chaingraph record nests like this") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise BadFile(where, str(exc).splitlines()[0]) from None
    if lone_surrogate(text, data):
        raise BadFile(where, "a string holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without "
                             "its pair), which is not text; fix the producer of this file")
    return data


def json_problem(exc: Exception) -> str:
    """One line for why ``json.loads`` failed beyond a syntax error: nesting too deep
    (``RecursionError``) or an integer too long to convert (``ValueError``).

    >>> json_problem(RecursionError())
    'JSON nested too deeply (more than about 1000 levels)'
    """
    if isinstance(exc, RecursionError):
        return f"JSON nested too deeply (more than about {MAX_JSON_DEPTH} levels)"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def lone_surrogate(raw: str | bytes, data: Any) -> bool:
    """True if ``data``, parsed from the JSON text ``raw``, holds a lone UTF-16 surrogate;
    fast for the usual text without any ``\\udXXX`` escape."""
    found = (_SURROGATE_ESCAPE.search(raw) if isinstance(raw, str) else _SURROGATE_BYTES.search(raw))
    return found is not None and has_lone_surrogate(data)


def has_lone_surrogate(data: Any) -> bool:
    """True if a string anywhere in parsed JSON holds a lone UTF-16 surrogate (``"\\ud800"``),
    which no UTF-8 file, database or terminal can hold.

    >>> has_lone_surrogate(json.loads('["\\\\ud800"]')), has_lone_surrogate(["\\U0001f600"])
    (True, False)
    """
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
