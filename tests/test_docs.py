"""Docs that cannot drift: every command has help and a README section; ``__all__`` is honest."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import chaingraph
from chaingraph.cli import COMMANDS, cli

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(chaingraph.__path__, "chaingraph."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help_and_a_readme_section(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    section = re.search(rf"^### `chaingraph {command}`\n(.*?)(?=^##)", README, re.S | re.M)
    assert section is not None, f"README has no section for chaingraph {command}"
    assert len(section.group(1).strip()) > 40, f"README section for chaingraph {command} is empty"


def test_readme_starts_with_exactly_two_setup_commands() -> None:
    block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert block is not None
    lines = [ln for ln in block.group(1).splitlines() if ln.strip()]
    assert len(lines) == 2
    assert "chaingraph expand" in lines[0] and "pytest" in lines[1]


def test_ci_runs_the_readme_test_command() -> None:
    test_command = re.search(r"```bash\n.*\n(.*pytest.*)\n```", README).group(1)  # type: ignore[union-attr]
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert test_command.strip() in ci


@pytest.mark.parametrize("module", _modules())
def test_all_lists_exactly_the_public_names(module: str) -> None:
    mod = importlib.import_module(module)
    exported = getattr(mod, "__all__", None)
    if exported is None:  # only command modules may go without: their API is the command
        assert module.startswith("chaingraph.cli."), f"library module {module} has no __all__"
        commands = [o for o in vars(mod).values() if isinstance(o, click.Command)]
        assert commands, f"command module {module} defines no click command"
        return
    for name in exported:
        assert hasattr(mod, name), f"{module}.__all__ names missing {name}"
    public = {
        name for name, obj in vars(mod).items()
        if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == module
    }
    assert public <= set(exported), f"{module}: public but not in __all__: {sorted(public - set(exported))}"


def test_python_dash_m_runs_the_cli() -> None:
    out = subprocess.run([sys.executable, "-m", "chaingraph", "--version"], capture_output=True,
                         text=True, check=True)
    assert chaingraph.__version__ in out.stdout


def test_readme_python_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks, "the README has no library example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_readme_lists_every_published_schema() -> None:
    from chaingraph.cli.schema import SCHEMAS

    section = re.search(r"^### `chaingraph schema`\n(.*?)(?=^##)", README, re.S | re.M)
    assert section is not None
    for name in SCHEMAS:
        assert f"`{name}`" in section.group(1), f"schema {name} is not listed in the README"
