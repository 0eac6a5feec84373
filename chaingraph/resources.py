"""Paths to the packaged ``queries/`` and ``data/`` folders.

In an installed wheel they live inside the package (``chaingraph/queries``,
``chaingraph/data``); in a source checkout they are the repository's top-level folders.

>>> (queries_dir() / "README.md").is_file() or queries_dir().is_dir()
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_dir", "data_file", "queries_dir", "query_file"]

_PKG = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    inside = _PKG / name
    if inside.is_dir():
        return inside
    return _PKG.parent / name


def queries_dir() -> Path:
    return _find("queries")


def data_dir() -> Path:
    return _find("data")


def query_file(name: str) -> Path:
    """``queries/<name>`` (``.rq`` added when missing)."""
    return queries_dir() / (name if name.endswith(".rq") else name + ".rq")


def data_file(name: str) -> Path:
    return data_dir() / name
