"""One progress protocol: every library call reports through a ``ProgressEvent`` callback,
and only the command line draws (rich appears only in chaingraph/cli/)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from chaingraph.cli.progress import progress_bars
from chaingraph.progress import ProgressEvent

PACKAGE = Path(__file__).resolve().parents[1] / "chaingraph"


def _modules() -> list[tuple[str, ast.Module]]:
    return [(p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(PACKAGE.rglob("*.py"))]


def test_an_event_is_a_frozen_value() -> None:
    counters = {"requests": 1}
    event = ProgressEvent("collect", 1, 4, unit="entities", item="layer 0", detail=counters)
    counters["requests"] = 99
    assert event.detail == {"requests": 1} and event.fraction == 0.25
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.done = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        event.detail["requests"] = 3  # type: ignore[index]
    assert ProgressEvent("audit", 0, None).fraction is None and ProgressEvent("audit", 0, 0).fraction is None


def test_every_progress_parameter_is_the_one_callback_type() -> None:
    found = {}
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in [*node.args.args, *node.args.kwonlyargs]:
                    if arg.arg == "progress":
                        found[f"{path}:{node.name}"] = ast.unparse(arg.annotation) if arg.annotation else None
    library = {k: v for k, v in found.items() if not k.startswith("cli/")}
    # the calls that report progress today; each takes the same optional callback
    for name in ("collect.py:collect", "expand.py:expand", "expand.py:explain_path",
                 "expand.py:evidence_graph", "sources/loaders/__init__.py:load", "audit/__init__.py:audit"):
        assert name in library
    assert set(library.values()) == {"Progress | None"}, library


def test_rich_is_imported_only_by_the_command_line() -> None:
    users = set()
    for path, tree in _modules():
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "rich" or n.startswith("rich.") for n in names):
                users.add(path)
    assert users and all(p.startswith("cli/") for p in users), sorted(users)


def test_the_cli_adapter_draws_bars_per_stage_and_item_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bars(True) as tell:
        assert tell is not None
        tell(ProgressEvent("expand", 0, 1, unit="seeds", message="collecting 1 seed(s)"))
        for done in (0, 2, 3):
            tell(ProgressEvent("collect", done, 3, unit="entities", item="layer 0",
                               detail={"requests": done, "cache_hits": 1}))
        tell(ProgressEvent("collect", 0, 0, unit="entities", item="layer 1"))
        tell(ProgressEvent("load", 1_500_000, 3_000_000, unit="bytes", item="/data/dump.json.gz"))
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert "collecting 1 seed(s)" in err
    assert "collect layer 0" in err and "3/3 entities" in err and "requests 3 · cache hits 1" in err
    assert "collect layer 1" in err and "0/0 entities" in err
    assert "load dump.json.gz" in err and "1.5/3.0 MB" in err


def test_the_cli_adapter_is_off_unless_asked_or_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bars(False) as off:
        assert off is None
    with progress_bars(None) as default:  # stderr is captured, not a terminal
        assert default is None
    assert capsys.readouterr().err == ""
