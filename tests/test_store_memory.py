"""The memory helpers of the store (:mod:`chaingraph.store_memory`): the key check that
groups by hash, and settings held for a block."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from chaingraph.store import Store
from chaingraph.store_memory import held_settings, repeats, setting

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
