"""The build's small pages: numpy's huge-page advice off inside, the user's setting kept."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

import chaingraph.compact as compact
from chaingraph.pages import ENV, _advice, small_pages

pytestmark = pytest.mark.skipif(_advice(None) is None, reason="this numpy has no huge-page switch")


@pytest.fixture(autouse=True)
def _keep_advice(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(ENV, raising=False)
    before = _advice(None)
    yield
    _advice(before)


@pytest.mark.parametrize("users", [True, False])
def test_advice_is_off_inside_and_the_users_setting_comes_back(users: bool) -> None:
    _advice(users)
    with small_pages() as switched:
        assert switched and _advice(None) is False
    assert _advice(None) is users


def test_the_users_setting_comes_back_when_the_block_raises() -> None:
    _advice(True)
    with pytest.raises(KeyError), small_pages():
        raise KeyError("x")
    assert _advice(None) is True


def test_nested_blocks_restore_only_when_the_outermost_ends() -> None:
    _advice(True)
    with small_pages():
        with small_pages():
            assert _advice(None) is False
        assert _advice(None) is False
    assert _advice(None) is True


def test_numpys_environment_variable_is_the_users_choice_and_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")
    _advice(True)
    with small_pages() as switched:
        assert not switched and _advice(None) is True


@pytest.mark.parametrize("users", [True, False])
def test_a_build_runs_with_small_pages_and_leaves_the_users_setting(users: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool | None] = []
    build = compact._build_arrays

    def spy(*args: object, **kwargs: object) -> compact.GraphArrays:
        seen.append(_advice(None))
        return build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compact, "_build_arrays", spy)
    _advice(users)
    a = compact.build_arrays(pa.array(["s1"]), pa.array(["Q1"]), pa.array(["P1"]), pa.array(["Q2"]),
                             class_properties=frozenset(), allows=lambda p: True)
    assert seen == [False] and a.src.tolist() == [0]
    assert _advice(None) is users
