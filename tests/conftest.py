"""Shared fixtures: where the real data lives, tiny stores, the CLI runner.

Real-data tests read ``../shared/data`` (beside the checkout) or ``$CHAINGRAPH_SHARED_DATA``;
files are never copied into the repository. Outside CI a missing folder skips those
tests; under CI (``CI=true``) it fails them, so CI can never pass without the data.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from chaingraph.sources.loaders import workers
from chaingraph.store import Store

REPO = Path(__file__).resolve().parent.parent


def _shared_data() -> Path:
    env = os.environ.get("CHAINGRAPH_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


SHARED_DATA = _shared_data()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real-data folder (``world/``, ``entities_full/``, ``properties/`` ...)."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"shared data folder {SHARED_DATA} is missing in CI")
        pytest.skip(f"shared data folder {SHARED_DATA} not found")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _fresh_parse_workers() -> Iterator[None]:
    """The JSON loader's parse workers are kept between loads (``loaders.workers``) and run
    the code as it was when they were forked: each test's loads fork their own, so a patch
    reaches them."""
    workers.release()
    yield
    workers.release()


@pytest.fixture
def store() -> Iterator[Store]:
    """An empty in-memory store."""
    with Store() as s:
        yield s


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def codex_s_file(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``world/codex-s.json.gz`` loaded once per test process into a DuckDB file (read it,
    do not write it)."""
    from chaingraph.sources.loaders import load

    path = tmp_path_factory.mktemp("world") / "codex-s.duckdb"
    with Store(path) as target:
        load([shared_data / "world" / "codex-s.json.gz"], target)
    return path


@pytest.fixture(scope="session")
def json_entities(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """``entities_full`` (real entities with qualifiers, references and quantities) loaded
    once per test process into an in-memory store (read it, do not write it)."""
    from chaingraph.sources.loaders import load

    link = tmp_path_factory.mktemp("entities-json") / "entities.json.gz"
    link.symlink_to(shared_data / "entities_full" / "wikidata_entities_full.jsonl.gz")
    with Store() as s:
        load([link], s)
        yield s


@pytest.fixture(scope="module")
def story() -> Iterator[Store]:
    """The scoring tests' story world (``score_story``) in an in-memory store, per module."""
    from score_story import build_store

    store = build_store()
    yield store
    store.close()
