"""The memory helpers of the store (:mod:`chaingraph.store_memory`): the key check that
groups by hash, and settings held for a block."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from chaingraph import store_memory
from chaingraph.store import Store
from chaingraph.store_file import ROW_GROUP_SIZE
from chaingraph.store_memory import STORE_VACUUM_TASKS, held_settings, memory_limit, repeats, setting, used_mb

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
    with pytest.raises(RuntimeError), held_settings(con, {"checkpoint_threshold": "4MiB"}):
        assert setting(con, "checkpoint_threshold") == "4.0 MiB"
        raise RuntimeError("the block failed")
    assert setting(con, "checkpoint_threshold") == before


def test_held_settings_hold_across_a_reconnect_and_are_set_back(tmp_path: Path) -> None:
    """A block that attaches the store file again (a bulk load reconnects every few batches)
    keeps its settings, and gets them back at its end."""
    with Store(tmp_path / "s.duckdb") as store:
        before = setting(store.con, "checkpoint_threshold")
        with held_settings(store.con, {"checkpoint_threshold": "4MiB"}):
            assert store.reconnect()
            assert setting(store.con, "checkpoint_threshold") == "4.0 MiB"  # carried over
        assert setting(store.con, "checkpoint_threshold") == before


ARENAS = """
import ctypes, os, sys, threading
from chaingraph.store_memory import tune_malloc_for_load
capped = "arenas" in tune_malloc_for_load() if sys.argv[1] == "cap" else None
together = threading.Barrier(6)
def work():  # each new thread's first malloc takes an arena; all six live at once
    buffers = [ctypes.create_string_buffer(64 * 1024) for _ in range(8)]
    together.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print(capped, flush=True)
ctypes.CDLL("libc.so.6").malloc_stats()  # an "Arena N:" line per arena, on stderr
"""


def _arenas(how: str, arena_max: str | None = None) -> tuple[str, int]:
    """Whether ``tune_malloc_for_load`` capped the arenas (``how="cap"``) and how many arenas glibc made, in a
    fresh process with ``MALLOC_ARENA_MAX`` set to ``arena_max`` (or unset)."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    if arena_max is not None:
        env["MALLOC_ARENA_MAX"] = arena_max
    done = subprocess.run([sys.executable, "-c", ARENAS, how], capture_output=True, text=True, env=env,
                          check=True)
    return done.stdout.strip(), len(re.findall(r"^Arena \d+:", done.stderr, re.M))


glibc = pytest.mark.skipif(store_memory.glibc() is None, reason="the arena cap is glibc's")


@glibc
def test_the_arena_cap_holds_threads_to_two_arenas() -> None:
    assert _arenas("none") == ("None", 7)  # the main thread's and one per thread
    assert _arenas("cap") == ("True", store_memory.LOAD_ARENAS)


@glibc
def test_an_arena_count_in_the_environment_wins_over_the_cap() -> None:
    assert _arenas("cap", "3") == ("False", 3)


THRESHOLD = """
import ctypes, sys
from chaingraph.store_memory import tune_malloc_for_load
libc = ctypes.CDLL("libc.so.6")
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
made = tune_malloc_for_load() if sys.argv[1] == "tune" else []
def mapped(size):  # whether a block of that size is a mapping of its own
    block = libc.malloc(size)
    own = libc.mallinfo2().hblkhd >= size
    libc.free(block)
    return own
print(sorted(made), [mapped(size) for size in (1 << 20, 3 << 20, 3 << 20, 20 << 20, 3 << 20)])
"""


def _mapped(how: str, **environ: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | environ
    done = subprocess.run([sys.executable, "-c", THRESHOLD, how], capture_output=True, text=True, env=env,
                          check=True)
    return done.stdout.strip()


@glibc
def test_a_load_maps_large_blocks_of_their_own_however_large_the_blocks_freed_before() -> None:
    """glibc maps a 1 MB block at first, but raises its mapping threshold to the size of each
    mapped block freed: after a 3 MB block (and after a 20 MB one), a 3 MB block comes from
    the heap. Tuned for a load, the threshold stays at 2 MiB (and the trim threshold is set
    beside it): each block from 2 MiB on is mapped and given back whole, each below comes
    from the heap."""
    assert _mapped("none") == "[] [True, True, False, True, False]"
    assert _mapped("tune") == "['arenas', 'mmap_threshold', 'trim_threshold'] [False, True, True, True, True]"


@glibc
def test_a_malloc_threshold_in_the_environment_wins_over_the_load_s() -> None:
    assert _mapped("tune", MALLOC_MMAP_THRESHOLD_=str(32 << 20)) == \
        "['arenas', 'trim_threshold'] [False, False, False, False, False]"


def test_a_store_file_merges_small_row_groups_a_row_group_at_a_checkpoint(tmp_path: Path) -> None:
    """A load leaves each batch's rows in row groups of their own, and a checkpoint after a
    later write merges runs of small row groups in memory, as many as its vacuum tasks reach
    (DuckDB's default of 100 merged 90 entity row groups into 8 at 142 MB on codex-m's 40x
    store): a store file chaingraph writes merges one row group's worth a checkpoint."""
    with Store(tmp_path / "s.duckdb") as store:
        con = store.con

        def row_groups() -> int:
            return int(con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('t')")
                       .fetchall()[0][0])

        assert setting(con, "max_vacuum_tasks") == str(STORE_VACUUM_TASKS)
        with held_settings(con, {"max_vacuum_tasks": 0}):  # as a load writes
            con.execute("CREATE TABLE t (x VARCHAR)")
            for _ in range(60):
                con.execute("INSERT INTO t SELECT repeat('x', 20) FROM range(4000)")
                con.execute("CHECKPOINT")
        assert row_groups() == 60
        con.execute("INSERT INTO t VALUES ('y')")
        con.execute("CHECKPOINT")
        one_task = row_groups()
        con.execute("SET max_vacuum_tasks = 100")
        con.execute("INSERT INTO t VALUES ('z')")
        con.execute("CHECKPOINT")
        assert 25 <= one_task < 60 and row_groups() == -(-240_002 // ROW_GROUP_SIZE)  # as few as hold it
    with Store() as memory:
        assert setting(memory.con, "max_vacuum_tasks") == "100"


def test_a_budget_evicts_the_blocks_duckdb_caches_and_keeps_its_limit(tmp_path: Path) -> None:
    """Under a budget DuckDB keeps every block it read until the limit is reached: evicted
    after each batch of a load (``BulkLoad.write``), the cache is emptied and the limit
    held as it was. Nothing is evicted before a limit is held, nor under a limit set by hand
    (the budget holds nothing then)."""
    with Store(tmp_path / "s.duckdb") as store:
        con = store.con
        con.execute("CREATE TABLE t AS SELECT range AS x, range::VARCHAR AS s FROM range(2000000)")
        con.execute("CHECKPOINT")

        def cached() -> float:
            con.execute("SELECT sum(x), max(s) FROM t").fetchall()  # reads every block of t
            return used_mb(con)

        with store.memory_budget() as budget:
            before = cached()
            budget.evict()  # nothing held yet
            assert used_mb(con) == pytest.approx(before, abs=1)
            budget.hold(256)
            before = cached()
            budget.evict()
            assert before > 4 and used_mb(con) < before / 4
            assert memory_limit(con) == "256.0 MiB"
        con.execute("SET memory_limit = '1GiB'")
        with store.memory_budget() as budget:
            budget.hold(256)
            before = cached()
            budget.evict()
            assert memory_limit(con) == "1.0 GiB" and used_mb(con) == pytest.approx(before, abs=1)
