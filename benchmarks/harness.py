"""A tiny benchmark harness: every case runs in a fresh process, timed several times.

A case is a module-level function ``setup(**params) -> state`` and ``run(state) -> n``
(``n`` = items processed, for a rate). Each case is measured in its own spawned process
so that peak memory (``VmHWM`` above the post-setup baseline) belongs to it alone, and
so does the CPU time of each run (user and system, of the process's threads and its child
processes together: :func:`cpu_seconds`), which says how much of the machine a case takes
beside how long it takes. Tables print medians and ratios against a named baseline, in
markdown.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import multiprocessing as mp
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

__all__ = ["BENCH_CACHE", "SHARED_DATA", "Case", "Result", "child_pids", "cpu_seconds", "markdown_table",
           "measure", "world_edges", "world_graph", "world_store"]

#: The shared real-data folder: ``$CHAINGRAPH_SHARED_DATA``, else ``../shared/data`` beside the
#: repository (the same rule as ``tests/conftest.py``).
SHARED_DATA = Path(os.environ.get("CHAINGRAPH_SHARED_DATA")
                   or Path(__file__).resolve().parent.parent.parent / "shared" / "data")


@dataclass(frozen=True)
class Case:
    """``target`` is ``"module:function"`` returning ``(callable, n_items)`` after setup."""

    name: str
    target: str
    params: dict[str, Any]
    repeat: int = 5
    #: untimed runs first (first-call costs: page faults, lazy imports, a database's plan cache)
    warmup: int = 0


@dataclass(frozen=True)
class Result:
    name: str
    seconds: list[float]
    items: int
    peak_mb: float
    extra: dict[str, Any]
    #: CPU seconds of each run (:func:`cpu_seconds`), when measured
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)

    @property
    def rate(self) -> float:
        return self.items / self.median if self.median else float("inf")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _reset_peak() -> None:
    """Reset ``VmHWM`` to the current RSS (Linux ``clear_refs`` code 5); harmless elsewhere."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def status_mb(field: str) -> float | None:
    """A memory line of this process's ``/proc/self/status`` (``VmHWM``, ``RssAnon``), MB;
    ``None`` where there is no such file or line (not Linux)."""
    with contextlib.suppress(OSError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return None


def _peak_mb() -> float:
    """Peak RSS of this address space (``VmHWM``). Unlike ``ru_maxrss`` it is reset by
    ``exec``, so a spawned child does not inherit its parent's peak."""
    peak = status_mb("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_pids() -> list[str]:
    """The pids of this process's live descendants: its children, theirs, and so on (Linux,
    from ``/proc``; none elsewhere)."""
    pids: list[str] = []
    parents = ["self"]
    while parents:
        found: list[str] = []
        for parent in parents:
            with contextlib.suppress(OSError):  # a process or thread that has just ended
                for task in Path(f"/proc/{parent}/task").iterdir():
                    with contextlib.suppress(OSError):
                        found += (task / "children").read_text().split()
        pids += found
        parents = found
    return pids


def cpu_seconds() -> float:
    """CPU seconds (user and system) used so far by this process's threads, the children it
    has reaped and its live descendants with those they have reaped (Linux, from ``/proc``).
    What a run used is the difference of two readings: a child reaped in between moves from
    its own share to its parent's whole, and a new child counts from zero. Work other
    processes do for a run outside this tree (a server it queries) is not in it."""
    reaped = os.times()  # in clock ticks; this process's own time finer (all its threads)
    total = time.process_time() + reaped.children_user + reaped.children_system
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for pid in child_pids():
        with contextlib.suppress(OSError, ValueError, IndexError):  # a child that has just ended
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / ticks  # utime, stime, cutime, cstime
    return total


def _child(case: Case, queue: Any) -> None:
    module, _, func = case.target.partition(":")
    prepare = getattr(importlib.import_module(module), func)
    run = prepare(**case.params)  # -> callable returning (items, extra dict)
    for _ in range(case.warmup):
        run()
    _reset_peak()  # so the peak below belongs to the timed runs, not to setup
    base = rss_mb()
    seconds: list[float] = []
    cpu: list[float] = []
    items, extra = 0, {}
    for _ in range(case.repeat):
        c0 = cpu_seconds()
        t0 = time.perf_counter()
        items, extra = run()
        seconds.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds() - c0)
    peak = _peak_mb()
    queue.put(Result(case.name, seconds, items, max(0.0, peak - base), extra, cpu))


def measure(case: Case) -> Result:
    """Run ``case`` in a fresh spawned process and return its timings."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(case, queue))
    proc.start()
    while True:  # poll, so a child that dies in setup is reported instead of hanging forever
        try:
            result: Result = queue.get(timeout=1.0)
            break
        except Empty:
            if not proc.is_alive():
                raise RuntimeError(f"benchmark case {case.name!r} died (exit code {proc.exitcode})") from None
    proc.join()
    return result


def markdown_table(title: str, results: Sequence[Result], *, baseline: str, unit: str = "items") -> str:
    """Markdown table of medians, rates, peak memory and the ratio to ``baseline``, with the
    median CPU seconds of a run (``CPU s``) when every result has them."""
    base = next(r for r in results if r.name == baseline)
    cpu = all(r.cpu for r in results)
    cpu_head, cpu_rule = (" CPU s |", "---:|") if cpu else ("", "")
    lines = [f"### {title}", "",
             f"| implementation | median s |{cpu_head} {unit}/s | peak MB | ratio vs {baseline} |",
             f"|---|---:|{cpu_rule}---:|---:|---:|"]
    for r in results:
        rate = f"{r.rate:,.0f}" if r.rate >= 100 else f"{r.rate:.3g}"
        lines.append(f"| {r.name} | {r.median:.4f} |{f' {r.median_cpu:.2f} |' if cpu else ''} {rate} | "
                     f"{r.peak_mb:,.1f} | {r.median / base.median:.2f}× |")
    return "\n".join(lines) + "\n"


#: where benchmarks keep stores they build once: ``$CHAINGRAPH_BENCH_CACHE`` or the temp folder
BENCH_CACHE = Path(os.environ.get("CHAINGRAPH_BENCH_CACHE", Path(tempfile.gettempdir()) / "chaingraph-bench"))


def world_store(world: str) -> Path:
    """``world/<world>.json.gz`` loaded once into a DuckDB file in :data:`BENCH_CACHE`."""
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store

    path = BENCH_CACHE / f"{world}.duckdb"
    if not path.exists():
        BENCH_CACHE.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".partial")
        part.unlink(missing_ok=True)
        with Store(part) as store:
            load([SHARED_DATA / "world" / f"{world}.json.gz"], store)
        part.rename(path)
    return path


_ENTITY = "http://www.wikidata.org/entity/"
_DIRECT = "http://www.wikidata.org/prop/direct/"


def world_edges(world: str) -> list[tuple[str, str, str, str]]:
    """``world/<world>.nt.gz``'s ``wdt:`` item triples as ``(statement_id, subject, property,
    object)`` (statement ids ``t<line>``), read without chaingraph (the peers' input too)."""
    out = []
    with gzip.open(SHARED_DATA / "world" / f"{world}.nt.gz", "rt") as f:
        for i, line in enumerate(f):
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1].startswith(f"<{_DIRECT}") and parts[2].startswith(f"<{_ENTITY}Q"):
                out.append((f"t{i}", parts[0][len(_ENTITY) + 1:-1], parts[1][len(_DIRECT) + 1:-1],
                            parts[2][len(_ENTITY) + 1:].split(">", 1)[0]))
    return out


def world_graph(world: str) -> Any:
    """The evidence graph of :func:`world_edges` under the default traversal policy."""
    from chaingraph.graph import EvidenceGraph

    return EvidenceGraph.from_edges(world_edges(world))
