"""The ``chaingraph`` command line: a thin twin of the library.

Each command lives in ``chaingraph/cli/<name>.py`` and turns its options into keyword
arguments of one library function. Commands are imported lazily, so ``chaingraph
--help`` stays fast. This is the only place where exceptions become exit codes:
a :class:`~chaingraph.errors.ChaingraphError` prints ``error: <one line>`` on stderr
and exits with its ``exit_code``; Ctrl-C exits 130 after whatever was committed stays
committed.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import click

from chaingraph import __version__
from chaingraph.errors import ChaingraphError

__all__ = ["COMMANDS", "LazyGroup", "cli"]

#: command name -> module under chaingraph.cli that defines a click command of that name
COMMANDS: dict[str, str] = {
    "load": "load",
    "summary": "load",
    "collect": "collect",
    "crosswalk": "crosswalk",
    "expand": "expand",
    "necessity": "necessity",
    "fuse": "fuse",
    "audit": "audit",
    "schema": "schema",
}


_BACKTICKED = re.compile(r"`([a-z_]+)`")


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is used, and maps
    chaingraph errors to exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if self._load(name) is not None)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        module = COMMANDS.get(name)
        if module is None:
            return None
        try:
            mod = importlib.import_module(f"chaingraph.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name == f"chaingraph.cli.{module}":
                return None
            raise
        cmd = getattr(mod, name.replace("-", "_"), None)
        return cmd if isinstance(cmd, click.Command) else None

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
