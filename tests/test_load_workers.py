"""The JSON loader's parse workers, kept between loads (``loaders.workers``): the next load
takes them over and writes the same store; a load that ends with chunks in flight, a dead
worker and the keeping time end them; a forked process does not inherit them."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_load_json import CONTENT_TABLES, contents

from chaingraph.errors import BadDumpLine
from chaingraph.resources import data_file
from chaingraph.sources.loaders import json_chunks, workers
from chaingraph.sources.loaders.json_dump import load_json_dump
from chaingraph.store import Store

SAMPLE = data_file("sample/douglas-adams.json")


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_chunks, "CHUNK_BYTES", 512)  # many chunks, several in flight


def _kept() -> list[multiprocessing.process.BaseProcess]:
    kept = workers._kept
    return [proc for proc in kept.procs if proc.is_alive()] if kept else []


def _kept_pids() -> list[int | None]:
    return [proc.pid for proc in _kept()]


def _load(path: Path, **kwargs: object) -> dict[str, list[tuple[object, ...]]]:
    with Store() as store:
        load_json_dump(path, store, workers=2, **kwargs)  # type: ignore[arg-type]
        return contents(store, CONTENT_TABLES)


def _gone(procs: list[multiprocessing.process.BaseProcess], seconds: float = 10.0) -> bool:
    """Whether ``procs`` have all ended within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(proc.is_alive() for proc in procs):
            return True
        time.sleep(0.05)
    return False


def test_the_next_load_takes_the_workers_over_and_writes_the_same_store() -> None:
    first = _load(SAMPLE)
    procs, pids = _kept(), _kept_pids()
    assert len(pids) == 2
    again = _load(SAMPLE)
    assert _kept_pids() == pids  # the same two processes parsed the second load
    workers.release()
    assert _gone(procs) and workers._kept is None
    fresh = _load(SAMPLE)
    assert _kept_pids() and set(_kept_pids()).isdisjoint(pids)
    assert first == again == fresh
    assert sum(len(rows) for rows in first.values()) > 100


def test_a_load_stopped_with_chunks_in_flight_ends_its_workers(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"  # the first entity's line is broken: later chunks are in flight
    bad.write_text(SAMPLE.read_text().replace('"claims"', '"claims" oops', 1))
    _load(SAMPLE)
    procs = _kept()
    with pytest.raises(BadDumpLine):
        _load(bad)
    assert workers._kept is None and _gone(procs)
    assert _load(SAMPLE) == _load(SAMPLE)
    assert _kept_pids() and set(_kept_pids()).isdisjoint(p.pid for p in procs)  # forked anew


def test_a_dead_kept_worker_is_replaced() -> None:
    expected = _load(SAMPLE)
    procs, pids = _kept(), _kept_pids()
    os.kill(procs[0].pid or 0, signal.SIGKILL)
    assert _gone(procs[:1])
    assert _load(SAMPLE) == expected
    assert set(_kept_pids()).isdisjoint(pids)


def test_kept_workers_finish_after_the_keeping_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "KEEP_SECONDS", 0.2)
    _load(SAMPLE)
    procs = _kept()
    assert procs and _gone(procs)
    assert workers._kept is None


def _reports_no_kept_workers(out: multiprocessing.Queue[object]) -> None:
    out.put(workers._kept is None)


def test_a_forked_process_does_not_inherit_the_kept_workers() -> None:
    _load(SAMPLE)
    assert _kept_pids()
    ctx = multiprocessing.get_context("fork")
    out: multiprocessing.Queue[object] = ctx.Queue()
    child = ctx.Process(target=_reports_no_kept_workers, args=(out,))
    child.start()
    child.join(timeout=30)
    assert out.get(timeout=5) is True
    assert len(_kept_pids()) == 2  # still this process's


def _with_pid(task: int) -> tuple[int, int]:
    return task, os.getpid()


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (Linux ``/proc``)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _ended(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def one_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[workers.Workers]:
    """A worker whose children answer two tasks each (forked after the patch)."""
    workers.release()
    monkeypatch.setattr(workers, "TASKS_PER_CHILD", 2)
    pool = workers.Workers(1, _with_pid)
    yield pool
    pool.stop(idle=False)


def test_a_worker_answers_in_children_of_a_few_tasks_each(one_worker: workers.Workers) -> None:
    for task in range(7):
        one_worker.tasks.put(task)
    answers = [one_worker.results.get(timeout=10) for _ in range(7)]
    assert [task for task, _ in answers] == list(range(7))
    pids = [pid for _, pid in answers]
    assert len(set(pids)) == 4 and pids[0] == pids[1] != pids[2] == pids[3]  # two each
    assert one_worker.procs[0].pid not in pids  # the worker itself answers nothing
    one_worker.tasks.put(None)
    one_worker.procs[0].join(timeout=10)
    assert one_worker.procs[0].exitcode == 0 and not _running(pids[-1])


def test_a_worker_whose_child_dies_ends(one_worker: workers.Workers) -> None:
    one_worker.tasks.put(0)
    _, child = one_worker.results.get(timeout=10)
    os.kill(child, signal.SIGKILL)  # killed while it waits for its second task
    assert _gone(one_worker.procs) and not one_worker.alive()


def test_a_worker_ended_ends_its_child(one_worker: workers.Workers) -> None:
    one_worker.tasks.put(0)
    _, child = one_worker.results.get(timeout=10)
    try:
        one_worker.stop(idle=False)
        assert _ended(child)
    finally:
        _kill(child)  # not left behind if the test fails


def test_a_child_ends_with_its_worker_killed(one_worker: workers.Workers) -> None:
    one_worker.tasks.put(0)
    _, child = one_worker.results.get(timeout=10)
    try:
        os.kill(one_worker.procs[0].pid or 0, signal.SIGKILL)  # no chance to end the child itself
        assert _ended(child)
    finally:
        _kill(child)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_a_chunk_reaches_its_worker_as_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the pool hands over from the reader's ring (a ``bytearray``) is parsed in the
    worker as the ``bytes`` it was sent as, not unpickled into a ``bytearray`` and copied."""

    def type_of_chunk(data: object, first_line: int, source_id: str, *,
                      stop_at_bad: bool) -> json_chunks.ChunkResult:
        return json_chunks.ChunkResult(bad=[(first_line, type(data).__name__)])

    workers.release()
    monkeypatch.setattr(json_chunks, "parse_chunk", type_of_chunk)  # in the workers forked next
    pool = json_chunks._Pool(1, "src", stop_at_bad=False)
    try:
        assert not list(pool.submit(bytearray(b'{"id": "Q1"}\n'), 7))
        assert [result.bad for result in pool.finish()] == [[(7, "bytes")]]
    finally:
        pool.close()
        workers.release()  # the kept worker runs the patched parser
