"""The ``chaingraph`` command line: a thin twin of the library.

Each command lives in ``chaingraph/cli/<name>.py`` and turns its options into keyword
arguments of one library function. A command's module is imported only when that command
runs (or prints its own help): ``chaingraph --help`` takes each command's one-line help
from :data:`COMMANDS`, so it imports none of them (a test checks the lines equal the
commands' own), and command modules import the heavy libraries (igraph, DuckDB, pint,
matplotlib) inside the command function. This is the only place where exceptions become
exit codes (:func:`exit_status`; the table is in :mod:`chaingraph.errors`): a
:class:`~chaingraph.errors.ChaingraphError` prints ``error: <one line>`` on stderr and
exits with its ``exit_code``; Ctrl-C exits 130 after whatever was committed stays
committed; anything unforeseen is a bug and prints one ``internal error:`` line (exit 70;
``CHAINGRAPH_DEBUG=1`` prints the traceback too).

>>> exit_status(KeyboardInterrupt())[0], exit_status(ValueError("x"))[0]
(130, 70)
>>> from chaingraph.errors import InvalidInput
>>> code, line = exit_status(InvalidInput("label \x1b]0;title\x07"))
>>> code, "\x1b" in line
(2, False)
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any, NamedTuple

import click

from chaingraph import __version__
from chaingraph.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, ChaingraphError, forget_interrupt
from chaingraph.terminal import safe_text

__all__ = ["COMMANDS", "CommandEntry", "LazyGroup", "cli", "exit_status"]


class CommandEntry(NamedTuple):
    """Where a command is defined, and its one-line help for ``chaingraph --help``."""

    module: str  # module under chaingraph.cli that defines a click command of that name
    short_help: str  # the first sentence of the command's docstring, word for word


#: command name -> its module and short help (tests/test_cli_startup.py checks each line
#: equals the command's own ``get_short_help_str``, so the two cannot drift)
COMMANDS: dict[str, CommandEntry] = {
    "audit": CommandEntry(
        "audit", "Audit the relation classes, difficulty levels and chain lengths of a corpus."
    ),
    "collect": CommandEntry(
        "collect",
        "Collect the Wikidata neighbourhoods of seeds over SPARQL into a store (batched, "
        "capped, cached; an interrupted run resumes when repeated).",
    ),
    "build": CommandEntry(
        "build",
        "Build a certified task corpus from SEEDS (a text, CSV or JSON Lines file of Q-ids or "
        "names): collect, rank, filter by familiarity, certify no shortcut in the whole store or endpoint, "
        "propose minimal clues, screen the anchor, record H and the level (DESIGN §10).",
    ),
    "crosswalk": CommandEntry(
        "crosswalk",
        "Print the relation class, deciding rule and reason of property ids and relation labels.",
    ),
    "export": CommandEntry(
        "export", "Write every store table as Parquet (plus a manifest) for DuckDB, Polars, Spark, ..."
    ),
    "expand": CommandEntry(
        "expand", "Collect around seeds and print their best evidence chains (DESIGN §3, §4)."
    ),
    "fuse": CommandEntry(
        "fuse", "Fuse component values exactly as SPEC says (JSON; `chaingraph schema fusion-spec`)."
    ),
    "load": CommandEntry(
        "load", "Load Wikidata dumps (JSON dump, N-Triples, Turtle; .gz/.bz2) into a store."
    ),
    "necessity": CommandEntry(
        "necessity", "Decide which clues of each task are necessary, by clue ablation on the evidence graph."
    ),
    "schema": CommandEntry(
        "schema", "Print the JSON Schema of a record type (chain, task, fusion-spec, ...)."
    ),
    "score": CommandEntry(
        "score", "Score agent trajectories against their tasks' evidence graphs (DESIGN §12)."
    ),
    "task": CommandEntry(
        "task",
        "Propose a task (task.json) for a chain: a minimal clue set that keeps the target the unique "
        "answer and the anchor necessary.",
    ),
    "summary": CommandEntry(
        "load",
        "Print what a store holds: entities, statements, qualifiers, references, literals by type.",
    ),
}


_BACKTICKED = re.compile(r"`([a-z_]+)`")


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is used, lists the
    commands from :data:`COMMANDS` without importing any, and maps chaingraph errors to
    exit codes."""

    #: run as the ``chaingraph`` program (not called by a library or a test): see :meth:`main`
    _as_program = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        command: click.Command = getattr(importlib.import_module(f"chaingraph.cli.{entry.module}"), name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The ``Commands:`` section, shortened exactly as click shortens a command's own help."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=COMMANDS[name].short_help).get_short_help_str(limit))
                for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, args: Sequence[str] | None = None, *rest: Any, **kwargs: Any) -> Any:
        """Run as the ``chaingraph`` program (``args`` from ``sys.argv``): once the command
        has returned or failed, a Ctrl-C is ignored. The interpreter then only shuts down
        (freeing modules, closing files): everything is done and written (or the command has
        said what was kept), and Python's own handler would otherwise let a late or second
        signal kill the process with no exit status of ours (-2 instead of 130)."""
        program = args is None and threading.current_thread() is threading.main_thread()
        self._as_program = program
        try:
            return super().main(args, *rest, **kwargs)
        finally:
            self._as_program = False
            if program:
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    def invoke(self, ctx: click.Context) -> Any:
        watching = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, _note_interrupt) if watching else None
        _INTERRUPTS.clear()
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a full disk or closed pipe fails here, not at interpreter exit
            return result
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # click's own: --help, ctx.exit(n), usage errors (exit 2)
        except BaseException as exc:  # the one place exceptions become exit codes
            if isinstance(exc, SystemExit):
                raise
            named = self._in_cli_terms(ctx, exc) if isinstance(exc, ChaingraphError) else None
            # Ctrl-C is 130 whatever the library or DuckDB turned the interrupt into on its way out
            code, message = exit_status(KeyboardInterrupt() if _INTERRUPTS else exc, named)
            if code == EXIT_INTERNAL and os.environ.get("CHAINGRAPH_DEBUG"):
                traceback.print_exception(exc)
            _quiet_stdout()
            click.echo(message, err=True)
            if code == EXIT_INTERRUPTED:
                forget_interrupt()  # exit 130, not death by SIGINT (see forget_interrupt)
            sys.exit(code)
        finally:
            # the program ignores Ctrl-C once its command is done or on its way out (see main)
            if previous is not None:
                signal.signal(signal.SIGINT, signal.SIG_IGN if self._as_program else previous)

    def _in_cli_terms(self, ctx: click.Context, exc: ChaingraphError) -> str:
        """The error's message in the command's terms: the parameter it is about (its
        leading ``name:``) and every parameter it names in backticks (`` `store` ``) become
        the command's options (``--store``), so a pipeline reads ``seeds`` and a shell
        user ``--seed``."""
        message = str(exc)
        cmd = self.get_command(ctx, ctx.invoked_subcommand) if ctx.invoked_subcommand else None
        flags: dict[str, str] = {}
        for param in cmd.params if cmd is not None else ():
            if isinstance(param, click.Option) and param.name and param.opts:
                flags[param.name] = max(param.opts, key=len)
            elif isinstance(param, click.Argument) and param.name:
                flags[param.name] = param.human_readable_name
        name = exc.parameter
        if name and name in flags and message.startswith(f"{name}:"):
            message = flags[name] + message[len(name):]
        return _BACKTICKED.sub(lambda m: flags.get(m.group(1), m.group(1)), message)


#: SIGINTs received while a command ran (see :func:`_note_interrupt`)
_INTERRUPTS: list[int] = []


def _note_interrupt(signum: int, frame: Any) -> None:
    """Remember the interrupt, then raise it as Python's default handler would — the first
    one only: after it the command is on its way out, and its cleanup must not be cut short."""
    _INTERRUPTS.append(signum)
    if len(_INTERRUPTS) == 1:
        raise KeyboardInterrupt


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, also when DuckDB turned it into ``Query interrupted`` and a module wrapped that."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt) or type(current).__name__ == "InterruptException":
            return True
        if "Query interrupted" in str(current).split("\n", 1)[0]:
            return True
        current = current.__cause__ or current.__context__
    return False


def exit_status(exc: BaseException, message: str | None = None) -> tuple[int, str]:
    """The exit code and the one line to print for an exception that ended a command
    (``message``: a chaingraph error's text in the command's terms, when not ``str(exc)``)."""
    if _interrupted(exc):
        return EXIT_INTERRUPTED, "interrupted: everything committed so far is kept in the store"
    if isinstance(exc, ChaingraphError):
        return exc.exit_code, _one_line(f"error: {message if message is not None else exc}")
    if type(exc).__module__.endswith("duckdb"):  # a DuckDB error no module wrapped: the store's
        from chaingraph.store_memory import duckdb_problem  # duckdb is imported: its error is here

        first = duckdb_problem(exc) if str(exc) else type(exc).__name__
        return 3, _one_line(f"error: the store failed: {first}")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        what = exc.strerror or str(exc) or type(exc).__name__
        return 2, _one_line(f"error: cannot read or write {where or 'the output: '}{what}")
    if isinstance(exc, MemoryError):
        return EXIT_INTERNAL, ("internal error: out of memory; this input needs a limit chaingraph "
                               "does not have yet: please report it with the command line")
    detail = str(exc).split("\n", 1)[0][:300]
    return EXIT_INTERNAL, _one_line(
        f"internal error: {type(exc).__name__}: {detail} (a bug in chaingraph {__version__}; please "
        "report it with the command line; CHAINGRAPH_DEBUG=1 shows the traceback)")


def _one_line(message: str) -> str:
    return safe_text(message)


def _quiet_stdout() -> None:
    """Send whatever stdout still buffers nowhere, so a broken output cannot fail again at exit."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        # a test runner's captured stdout has no file descriptor to redirect
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="chaingraph")
def cli() -> None:
    """chaingraph: prove multi-hop Wikidata tasks sound, deterministically."""
