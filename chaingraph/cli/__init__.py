"""The ``chaingraph`` command line: a thin twin of the library.

Each command lives in ``chaingraph/cli/<name>.py`` and turns its options into keyword
arguments of one library function. A command's module is imported only when that command
runs (or prints its own help): ``chaingraph --help`` takes each command's one-line help
from :data:`COMMANDS`, so it imports none of them (a test checks the lines equal the
commands' own), and command modules import the heavy libraries (igraph, DuckDB, pint,
matplotlib) inside the command function. This is the only place where exceptions become exit codes:
a :class:`~chaingraph.errors.ChaingraphError` prints ``error: <one line>`` on stderr
and exits with its ``exit_code``; Ctrl-C exits 130 after whatever was committed stays
committed.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any, NamedTuple

import click

from chaingraph import __version__
from chaingraph.errors import ChaingraphError

__all__ = ["COMMANDS", "CommandEntry", "LazyGroup", "cli"]


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
    "crosswalk": CommandEntry(
        "crosswalk",
        "Print the relation class, deciding rule and reason of property ids and relation labels.",
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

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ChaingraphError as exc:
            click.echo(f"error: {self._in_cli_terms(ctx, exc)}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted: everything committed so far is kept in the store", err=True)
            sys.exit(130)

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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="chaingraph")
def cli() -> None:
    """chaingraph: prove multi-hop Wikidata tasks sound, deterministically."""
