"""The memory helpers of the store (:mod:`chaingraph.store_memory`): the key check that
groups by hash, and settings held for a block."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from chaingraph import store_memory
from chaingraph.errors import StoreError
from chaingraph.store import Store
from chaingraph.store_memory import held_settings, reopen, repeats, setting

TWO = "(VALUES ('Q1$a'), ('Q1$b'), ('Q2$a')) t(x)"
TWICE = "(VALUES ('Q1$a'), ('Q1$b'), ('Q1$a')) t(x)"


@pytest.mark.parametrize("colliding", [False, True])
def test_repeats_compares_the_values_whose_hashes_repeat(colliding: bool) -> None:
    """Distinct values that share a hash are not a repeat: ``hash`` shadowed by a macro
    that gives every value the same one takes the branch that compares the values."""
    con = duckdb.connect()
    if colliding:
        con.execute("CREATE TEMP MACRO hash(x) AS 0")
        assert con.execute("SELECT hash('Q1$a') = hash('Q1$b')").fetchall() == [(True,)]
    assert repeats(con, TWO, "x") is False
    assert repeats(con, TWICE, "x") is True


def test_held_settings_are_set_back_after_an_error() -> None:
    con = duckdb.connect()
    before = setting(con, "checkpoint_threshold")
    with pytest.raises(RuntimeError), held_settings(lambda: con, {"checkpoint_threshold": "4MiB"}):
        assert setting(con, "checkpoint_threshold") == "4.0 MiB"
        raise RuntimeError("the block failed")
    assert setting(con, "checkpoint_threshold") == before


def test_held_settings_are_set_back_on_the_connection_current_at_the_end(tmp_path: Path) -> None:
    """A block that opens the store file again (a bulk load reconnects every few batches)
    still gets its settings back, on the new connection; the old one is closed."""
    with Store(tmp_path / "s.duckdb") as store:
        before = setting(store.con, "checkpoint_threshold")
        with held_settings(lambda: store.con, {"checkpoint_threshold": "4MiB"}):
            first = store.con
            assert store.reconnect()
            assert store.con is not first
            assert setting(store.con, "checkpoint_threshold") == "4.0 MiB"  # carried over
        assert setting(store.con, "checkpoint_threshold") == before


def test_reopen_names_a_setting_that_will_not_go_back(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A setting that DuckDB does not take back (here: every ``SET threads`` ignored) stops
    :func:`reopen` with the setting's name after one try, instead of trying forever, and
    :meth:`Store.reconnect` says so in one line without blaming another process."""
    real_set = store_memory._set
    tries: list[str | None] = []

    def set_but_threads(con: duckdb.DuckDBPyConnection, name: str, value: str | None) -> None:
        if name == "threads":
            tries.append(value)
        else:
            real_set(con, name, value)

    path = tmp_path / "s.duckdb"
    con = duckdb.connect(str(path))
    con.execute("SET threads = 1")
    con.execute("SET checkpoint_threshold = '4MiB'")
    con = reopen(con, str(path))
    # as it is, both go back
    assert (setting(con, "threads"), setting(con, "checkpoint_threshold")) == ("1", "4.0 MiB")
    con.close()
    monkeypatch.setattr(store_memory, "_set", set_but_threads)
    con = duckdb.connect(str(path))
    con.execute("SET threads = 1")
    with pytest.raises(ValueError, match="DuckDB's threads cannot be set back to '1'"):
        reopen(con, str(path))
    assert tries == ["1"]  # one try, then the error
    with Store(path) as s:
        s.con.execute("SET threads = 1")
        with pytest.raises(StoreError, match="again with its settings: DuckDB's threads") as raised:
            s.reconnect()
        assert "another process" not in str(raised.value) and "\n" not in str(raised.value)
