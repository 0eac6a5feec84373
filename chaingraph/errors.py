"""One error hierarchy for chaingraph; every exception a user can see is here.

Each class carries the process exit code the CLI maps it to (``exit_code``), and
inherits the builtin it resembles, so library callers can catch either::

    ChaingraphError (Exception)                       exit 2
    ├── InvalidId (ValueError)                        exit 2   bad Q/P id
    ├── UnknownEntity (LookupError)                   exit 2   id not in store / graph
    ├── InvalidInput (ValueError)                     exit 2   a file, record or argument is wrong
    │   ├── BadDumpLine                               exit 2   a dump line cannot be parsed
    │   ├── BadFile                                   exit 2   an input file cannot be read as given
    │   ├── UnsupportedFormat                         exit 2   wrong file type / compression
    │   ├── InvalidTask                               exit 2   task.json violates the schema
    │   ├── InvalidSpec                               exit 2   fusion spec violates the schema
    │   ├── InvalidTrajectory                         exit 2   an agent trajectory is malformed
    │   ├── CorpusProblem                             exit 2   audit --strict: an unreadable record
    │   ├── UnknownUnit                               exit 2   unit item not in data/units.tsv
    │   └── IncompatibleUnits                         exit 2   units of different dimensions
    ├── StoreError (RuntimeError)                     exit 3   DuckDB store cannot be opened/written
    ├── EndpointError (ConnectionError)               exit 4   SPARQL endpoint failure
    │   ├── EndpointUnavailable                       exit 4   unreachable after retries
    │   └── EndpointResponseError                     exit 4   truncated / non-JSON body after retries
    ├── OfflineCacheMiss (LookupError)                exit 4   --offline and the answer is not cached
    ├── ChainRuleError (ValueError)                   exit 2   bad enumeration bounds / arguments
    ├── MissingExtra (ImportError)                    exit 5   an optional extra is not installed
    └── InternalError (RuntimeError)                  exit 70  a bug: anything not foreseen above

Messages are one line, name the offending file, field or id, and say what to do.

The exit-code contract of the command line (mapped in one place, ``chaingraph.cli``):

====  ======================================================================
0     success
1     a refusal that is a normal outcome (fusion refused) or a ``--strict`` failure
2     bad input: a file, record, id, option or argument (click usage errors too)
3     the store cannot be opened, read or written
4     the SPARQL endpoint failed, or ``--offline`` lacks a cached answer
5     an optional extra is needed and not installed (``--ray`` without ``chaingraph[ray]``)
70    internal error (a bug): one line to report, no traceback
130   interrupted (Ctrl-C); whatever was committed stays committed
====  ======================================================================

>>> err = InvalidId("Q12x", field="--seed")
>>> str(err)
"--seed: 'Q12x' is not a Wikidata id (expected Q or P followed by digits, e.g. Q42)"
>>> err.exit_code, isinstance(err, ValueError)
(2, True)
"""

from __future__ import annotations

from typing import TypeVar

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REFUSED",
    "BadDumpLine",
    "BadFile",
    "ChainRuleError",
    "ChaingraphError",
    "CorpusProblem",
    "EndpointError",
    "EndpointResponseError",
    "EndpointUnavailable",
    "IncompatibleUnits",
    "InternalError",
    "InvalidId",
    "InvalidInput",
    "InvalidSpec",
    "InvalidTask",
    "InvalidTrajectory",
    "MissingExtra",
    "OfflineCacheMiss",
    "StoreError",
    "UnknownEntity",
    "UnknownUnit",
    "UnsupportedFormat",
    "forget_interrupt",
]


EXIT_OK = 0
#: a refusal that is a normal outcome (fusion) or a ``--strict`` failure
EXIT_REFUSED = 1
#: an interrupt (SIGINT): 128 + 2, as shells report it
EXIT_INTERRUPTED = 130
#: EX_SOFTWARE of sysexits.h: an internal error, i.e. a bug to report
EXIT_INTERNAL = 70


def forget_interrupt() -> None:
    """Let a handled Ctrl-C exit with its status (130), not die by the signal.

    CPython marks a KeyboardInterrupt that ends code run from a *string* (``exec`` of
    source text, as ``namedtuple`` and ``dataclasses`` do when a module first defines
    one) as unhandled, even when a caller catches it; under ``python -m`` the interpreter
    then kills itself with SIGINT as it exits, whatever exit status the program chose.
    A Ctrl-C that lands while a command imports its libraries did exactly that (exit -2
    after the one line saying what was kept). The mark is cleared when the next string
    runs, so running one empty string before exiting clears it.

    >>> forget_interrupt()
    """
    exec("")  # the string run is what clears CPython's mark


_E = TypeVar("_E", bound="ChaingraphError")


class ChaingraphError(Exception):
    """Base of every chaingraph error. ``exit_code`` is what the CLI exits with.

    ``parameter`` names the library parameter an error is about; its message then starts
    with ``"<parameter>: "``, and the CLI names its own option instead (``--seed``, not
    ``seeds``), so each caller reads its own language.
    """

    exit_code: int = 2
    parameter: str | None = None

    def about(self: _E, parameter: str) -> _E:
        """Mark the error as being about the library ``parameter`` (returns the error)."""
        self.parameter = parameter
        return self


class InvalidId(ValueError, ChaingraphError):
    """A string that should be a Wikidata id (``Q``/``P`` + digits) is not one."""

    def __init__(self, value: object, *, field: str | None = None, expected: str = "Q or P") -> None:
        self.value = value
        self.field = field
        self.parameter = field
        where = f"{field}: " if field else ""
        super().__init__(
            f"{where}{value!r} is not a Wikidata id "
            f"(expected {expected} followed by digits, e.g. {'P31' if expected == 'P' else 'Q42'})"
        )


class UnknownEntity(LookupError, ChaingraphError):
    """An id is valid but absent from the store or graph being used."""

    def __init__(self, entity_id: str, where: str = "the evidence graph", hint: str = "") -> None:
        self.entity_id = entity_id
        self.where = where
        msg = f"{entity_id} is not in {where}"
        super().__init__(f"{msg}; {hint}" if hint else msg)

    def __str__(self) -> str:  # LookupError would repr() the message
        return str(self.args[0])


class InvalidInput(ValueError, ChaingraphError):
    """A file, record or argument cannot be used as given."""


class BadDumpLine(InvalidInput):
    """A line of a dump file cannot be parsed. Carries ``path`` and ``line`` (1-based)."""

    def __init__(self, path: str, line: int, problem: str, hint: str = "") -> None:
        self.path = path
        self.line = line
        self.problem = problem
        hint = hint or "fix or remove the line, or pass `skip_bad_lines` to skip and count such lines"
        super().__init__(f"{path}:{line}: {problem}; {hint}")


class BadFile(InvalidInput):
    """An input file is not a regular file, too large, not UTF-8 or not JSON.
    Carries ``path`` and ``problem`` (the message without the path)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class UnsupportedFormat(InvalidInput):
    """A file is not of a type or compression chaingraph reads."""


class InvalidTask(InvalidInput):
    """A task record violates the task schema. ``path`` is a JSON path such as ``clues[3].step``."""

    def __init__(self, message: str, *, path: str = "", file: str = "") -> None:
        self.path = path
        self.file = file
        prefix = ": ".join(p for p in (file, path) if p)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class InvalidSpec(InvalidTask):
    """A fusion spec violates the fusion-spec schema."""


class InvalidTrajectory(InvalidInput):
    """An agent trajectory cannot be scored: ``file``, ``item`` (``item 3 (run-7)``) and the
    JSON ``path`` of the offending event field (``events[5].box``)."""

    def __init__(self, message: str, *, file: str = "", item: str = "", path: str = "") -> None:
        self.file = file
        self.item = item
        self.path = path
        prefix = ": ".join(p for p in (file, item, path) if p)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class UnknownUnit(InvalidInput):
    """A quantity's unit item is not in the unit table (``data/units.tsv``)."""

    def __init__(self, unit: str, hint: str = "") -> None:
        self.unit = unit
        hint = hint or "add a row for it to data/units.tsv (or pass a table that has it)"
        super().__init__(f"unit {unit} is not in the unit table; {hint}")


class IncompatibleUnits(InvalidInput):
    """Two units measure different dimensions (or are different currencies)."""

    def __init__(self, a: str, b: str, detail: str = "") -> None:
        self.units = (a, b)
        msg = f"units {a} and {b} measure different dimensions"
        super().__init__(f"{msg} ({detail})" if detail else msg)


class StoreError(RuntimeError, ChaingraphError):
    """The DuckDB store cannot be opened, read or written."""

    exit_code = 3


class EndpointError(ConnectionError, ChaingraphError):
    """A SPARQL endpoint failed."""

    exit_code = 4


class EndpointUnavailable(EndpointError):
    """The endpoint could not be reached or kept failing after the retry budget."""


class EndpointResponseError(EndpointError):
    """The endpoint answered with a truncated or non-SPARQL-JSON body after every retry."""


class OfflineCacheMiss(LookupError, ChaingraphError):
    """``offline`` mode needs a response that is not in the store's cache."""

    exit_code = 4

    def __str__(self) -> str:
        return str(self.args[0])


class ChainRuleError(ValueError, ChaingraphError):
    """Arguments to chain enumeration or checking are inconsistent (e.g. min_hops > max_hops)."""


class MissingExtra(ImportError, ChaingraphError):
    """An optional dependency is needed; the message names the extra to install
    (``build(ray=True)`` without ``pip install 'chaingraph[ray]'``)."""

    exit_code = 5


class CorpusProblem(InvalidInput):
    """``audit(strict=True)``: a corpus file or record that cannot be audited.

    ``problem`` carries the audit's own description of it (file, record index, kind)."""

    def __init__(self, message: str, problem: object = None) -> None:
        self.problem = problem
        super().__init__(message)


class InternalError(RuntimeError, ChaingraphError):
    """Something chaingraph did not foresee: a bug. The CLI prints one line to report
    (no traceback; ``CHAINGRAPH_DEBUG=1`` shows it) and exits 70."""

    exit_code = EXIT_INTERNAL
