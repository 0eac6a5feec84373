"""Read Turtle into the staging tables of :mod:`chaingraph.sources.loaders.ntriples`.

Turtle has no line-per-triple shape to split in bulk: a streaming parser (pyoxigraph, else
rdflib) yields the triples as N-Triples terms, which are staged in batches the way the
N-Triples reader stages the lines it reads one by one. Triples are numbered in file order
(the "line" of a Turtle triple is its number).
"""

from __future__ import annotations

import importlib.util
import zlib
from collections.abc import Callable, Iterator
from typing import IO

from chaingraph.sources.loaders.common import LineGuard
from chaingraph.sources.loaders.ntriples import ReadError, _rows_table, _Stager
from chaingraph.store_memory import Connection

__all__ = ["stage_turtle"]


def _turtle_terms(stream: IO[bytes]) -> Iterator[tuple[str, str, str]]:
    """Triples of a Turtle stream as N-Triples terms: pyoxigraph's streaming parser when it
    is installed, else rdflib (which builds the whole graph in memory first; literal
    normalisation is switched off so lexical forms stay as written)."""
    if importlib.util.find_spec("pyoxigraph") is not None:
        import pyoxigraph

        for quad in pyoxigraph.parse(stream, format=pyoxigraph.RdfFormat.TURTLE):
            yield str(quad.subject), str(quad.predicate), str(quad.object)
        return
    import rdflib

    previous, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
    try:
        graph = rdflib.Graph()
        try:
            graph.parse(stream, format="turtle")
        except Exception as exc:  # rdflib's BadSyntax is not a SyntaxError
            if type(exc).__name__ != "BadSyntax":
                raise
            error = SyntaxError(str(exc).splitlines()[0] if str(exc) else "bad syntax")
            error.lineno = int(getattr(exc, "lines", 0)) + 1
            raise error from exc
    finally:
        rdflib.NORMALIZE_LITERALS = previous
    for subject, predicate, obj in graph:
        yield subject.n3(), predicate.n3(), obj.n3()


def stage_turtle(stream: IO[bytes], con: Connection, table: str, guard: LineGuard,
                 flush: Callable[[], None], tick: Callable[[], None] | None = None,
                 batch: int = 200_000) -> int:
    """Stage a Turtle stream (see :func:`_turtle_terms`); return the number of triples read.

    A syntax error is reported at its line; with ``skip_bad_lines`` the rest of the file
    is skipped (Turtle cannot be resynchronised line by line) and counted as one bad line.
    """
    stager = _Stager(con, table, guard)
    rows: list[tuple[int, str, str, str]] = []
    count = 0
    try:
        for subject, predicate, obj in _turtle_terms(stream):
            count += 1
            rows.append((count, subject, predicate, obj))
            if len(rows) >= batch:
                stager._append(_rows_table(rows))
                rows = []
                if tick is not None:
                    tick()
    except (EOFError, OSError, zlib.error) as exc:
        stager._append(_rows_table(rows))
        raise ReadError(count + 1, exc) from exc
    except SyntaxError as exc:
        stager._append(_rows_table(rows))
        rows = []
        line = getattr(exc, "lineno", None) or 0
        guard.bad(int(line), f"Turtle syntax error: {str(exc).splitlines()[0]}", flush)
    stager._append(_rows_table(rows))
    return count
