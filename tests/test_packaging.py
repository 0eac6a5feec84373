"""A complete install: every third-party package the library imports is a declared dependency
(an optional one only where the import is guarded and the package is in an extra)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: imported only after checking it is installed (chaingraph.sources.loaders.ntriples falls back on rdflib)
OPTIONAL = {"pyoxigraph"}

tomllib = pytest.importorskip("tomllib")


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _imported_top_level(package: Path) -> dict[str, str]:
    """Top-level names of absolute imports in ``package`` -> one file that imports each."""
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_imported_third_party_package_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for group in project["optional-dependencies"].values() for r in group}
    distributions = importlib.metadata.packages_distributions()
    imported = _imported_top_level(ROOT / "chaingraph")
    third_party = {
        name: where for name, where in imported.items()
        if name not in sys.stdlib_module_names and name != "chaingraph"
    }
    assert "numpy" in third_party and "click" in third_party, "the import scan found nothing"
    for name, where in sorted(third_party.items()):
        dists = {d.lower().replace("_", "-") for d in distributions.get(name, [name])}
        declared = extras if name in OPTIONAL else required
        assert dists & declared, f"{where} imports {name} but pyproject.toml does not declare {sorted(dists)}"


def test_every_package_the_tests_and_benchmarks_import_is_declared_in_an_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in project["dependencies"]}
    declared |= {_name(r) for group in project["optional-dependencies"].values() for r in group}
    local = {p.stem for folder in ("tests", "benchmarks") for p in (ROOT / folder).glob("*.py")}
    distributions = importlib.metadata.packages_distributions()
    for folder in ("tests", "benchmarks"):
        for name, where in sorted(_imported_top_level(ROOT / folder).items()):
            if name in sys.stdlib_module_names or name in local or name == "chaingraph":
                continue
            dists = {d.lower().replace("_", "-") for d in distributions.get(name, [name])}
            assert dists & declared, f"{where} imports {name} but no extra of pyproject.toml declares it"
