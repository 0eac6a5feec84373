"""A fast start: ``chaingraph --help`` imports no command module, and no command imports a heavy
library (igraph, matplotlib, DuckDB, pint, ...) before it runs. Behavioural checks of what a
fresh process imports (``python -X importtime``), never timings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from chaingraph.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parent.parent

#: libraries that cost a tenth of a second or more to import and that no command needs
#: before it does its work (numpy and pyarrow come with DuckDB and igraph)
HEAVY = ("igraph", "matplotlib", "duckdb", "pint", "pyarrow", "numpy", "networkx", "rdflib")


def _imported(*args: str) -> set[str]:
    """Every module a fresh ``python -X importtime ARGS`` process imports (top-level names too)."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    assert "click" in names or "chaingraph" in names, "importtime printed nothing: the check is blind"
    return names


def _heavy(names: set[str]) -> list[str]:
    return sorted({n.split(".")[0] for n in names} & set(HEAVY))


def test_importing_the_cli_imports_no_heavy_library_and_no_command_module() -> None:
    names = _imported("-c", "import chaingraph.cli")
    assert _heavy(names) == []
    assert not {f"chaingraph.cli.{entry.module}" for entry in COMMANDS.values()} & names


def test_top_level_help_imports_no_command_module_and_no_heavy_library() -> None:
    names = _imported("-m", "chaingraph", "--help")
    assert _heavy(names) == []
    assert sorted(n for n in names if n.startswith("chaingraph.cli.")) == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_own_help_imports_no_heavy_library(command: str) -> None:
    assert _heavy(_imported("-m", "chaingraph", command, "--help")) == []


def test_crosswalk_of_a_tabled_property_imports_no_heavy_library() -> None:
    assert _heavy(_imported("-m", "chaingraph", "crosswalk", "P131")) == []


def test_the_heavy_check_sees_a_heavy_import() -> None:
    """The check above is not blind: a command that does need DuckDB shows it."""
    assert "duckdb" in _heavy(_imported("-c", "import chaingraph.store"))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_short_help_table_equals_the_commands_own_short_help(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None and command.name == name
    assert COMMANDS[name].short_help == command.get_short_help_str(limit=10_000)


def test_help_lists_every_command_as_a_group_of_the_loaded_commands_would() -> None:
    eager = click.Group(
        "cli", help=cli.help, params=cli.params, context_settings=cli.context_settings,
        commands=[cli.get_command(click.Context(cli), name) for name in sorted(COMMANDS)],  # type: ignore[misc]
    )
    lazy_help = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    eager_help = CliRunner().invoke(eager, ["--help"], terminal_width=80)
    assert lazy_help.exit_code == 0 and lazy_help.output == eager_help.output
    assert all(f"  {name} " in lazy_help.output for name in COMMANDS)


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["frobnicate"])
    assert result.exit_code == 2 and "No such command 'frobnicate'" in result.output
