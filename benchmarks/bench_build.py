"""``chaingraph build`` on one machine and on local Ray, against chaining the existing
commands per seed (what a user would script today).

    python benchmarks/bench_build.py [--quick] [--seeds N] [--baseline-seeds M]

Graph: ``world/ilpc-large`` loaded into a DuckDB store (setup, not timed). Seeds: N items
with step statements in a fixed pseudo-random order (md5 of the id; default 100). Work per
seed, the same in every case: the whole store as the neighbourhood (``--no-collect``),
the 2 best chains of 5 hops, a minimal clue set per chain with the anchor screen and the
necessity ablation. Cases (each a fresh output folder, so nothing is resumed; the timed
part includes opening the store and building the whole-store graph, which every process
pays once):

* ``build w1`` / ``build w2``   ``chaingraph.build(..., workers=1|2)``;
* ``build ray``                 ``chaingraph.build(..., ray=True)`` on a local Ray instance
                                (its start-up is part of the time: that is Ray's overhead);
* ``commands``                  per seed, three processes: ``chaingraph expand --seed S
                                --format jsonl``, ``chaingraph task --chain`` and
                                ``chaingraph necessity`` on the tasks (M seeds, default 5:
                                each process rebuilds the whole-store graph).

Before timing, the tasks of the command chain (those with a necessary anchor) are checked
equal to build's tasks for the same seeds (ids, targets and clue sets), and w1, w2 and Ray
give byte-identical ``tasks.jsonl``. Rates: seeds/s and tasks/s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, Result, markdown_table, measure  # noqa: E402

MODULE = "bench_build"
FAST = ["--no-collect", "--top", "2", "--max-hops", "5"]


def make_store(path: Path) -> None:
    from chaingraph.sources.loaders import load
    from chaingraph.store import Store

    with Store(path) as store:
        load([SHARED_DATA / "world" / "ilpc-large.json.gz"], store)


def make_seeds(store: Path, n: int, path: Path) -> None:
    from chaingraph.store import Store

    with Store(store, read_only=True) as st:
        ids = [r[0] for r in st.con.execute(
            "SELECT subject FROM statements WHERE value_type = 'item' AND property NOT IN ('P31', 'P279') "
            "GROUP BY subject ORDER BY md5(subject) LIMIT ?", [n]).fetchall()]
    path.write_text("".join(f"{i}\n" for i in ids))


def _build(store: str, seeds: str, out: Path, **how: Any) -> Any:
    from chaingraph.build import build

    return build(seeds, out=out, store=store, collect=False, top=2, max_hops=5, **how)


def build_case(store: str, seeds: str, workers: int = 1, ray: bool = False) -> Any:
    runs = iter(range(1000))

    def run() -> tuple[int, dict[str, Any]]:
        # in the store's folder, removed with it
        out = Path(store).parent / f"build-{'ray' if ray else workers}-run{next(runs)}"
        result = _build(store, seeds, out, workers=workers, ray=ray)
        seeds_n = sum(1 for line in Path(seeds).read_text().splitlines() if line.strip())
        return seeds_n, {"tasks": result.tasks}
    return run


def _cmd(*args: str, stdout: Any = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "chaingraph", *args], env=env, text=True, check=False,
                          stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE)


def commands_tasks(store: str, seeds: list[str], work: Path) -> list[dict[str, Any]]:
    """expand → task → necessity per seed, as separate processes; the tasks that keep a
    necessary anchor and pass necessity."""
    kept: list[dict[str, Any]] = []
    for seed in seeds:
        chains = work / f"{seed}.chains.jsonl"
        with open(chains, "w") as f:
            _cmd("expand", "--seed", seed, "--store", store, *FAST[:3], "--min-hops", "5", "--max-hops", "5",
                 "--format", "jsonl", stdout=f)
        if not chains.read_text().strip():
            continue
        proposed = _cmd("task", "--chain", str(chains), "--store", store)
        tasks = [json.loads(x) for x in proposed.stdout.splitlines() if x.strip()]
        files = []
        for i, t in enumerate(tasks):
            path = work / f"{seed}.{i}.task.json"
            path.write_text(json.dumps(t))
            files.append(path)
        if files:
            _cmd("necessity", *map(str, files), "--store", store, "--format", "json")
        kept += [t for t in tasks if t.get("anchor_necessary")]
    return kept


def commands_case(store: str, seeds: str, count: int) -> Any:
    todo = [s for s in Path(seeds).read_text().split()][:count]

    runs = iter(range(1000))

    def run() -> tuple[int, dict[str, Any]]:
        work = Path(store).parent / f"commands-run{next(runs)}"  # removed with the store's folder
        work.mkdir()
        return len(todo), {"tasks": len(commands_tasks(store, todo, work))}
    return run


def _key(task: dict[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    return (task["id"].split("-")[0], task["target"]["entity"], tuple(sorted(c["id"] for c in task["clues"])))


def check_equal(store: Path, seeds: Path, count: int, work: Path) -> None:
    """The command chain and build agree on the first ``count`` seeds; w1 = w2 = Ray."""
    sub = work / "sub.txt"
    sub.write_text("".join(f"{s}\n" for s in seeds.read_text().split()[:count]))
    outs = {}
    for name, how in (("w1", {"workers": 1}), ("w2", {"workers": 2}), ("ray", {"ray": True})):
        try:
            _build(str(store), str(sub), work / name, **how)
        except ImportError:
            continue
        outs[name] = (work / name / "tasks.jsonl").read_bytes()
    assert len(set(outs.values())) == 1, f"outputs differ between {sorted(outs)}"
    built = {_key(json.loads(x)["task"]) for x in outs["w1"].decode().splitlines()}
    chained = {_key(t) for t in commands_tasks(str(store), sub.read_text().split(), work)}
    assert built == chained, (sorted(built ^ chained))[:5]
    print(f"checked: {len(built)} tasks equal between build ({', '.join(sorted(outs))}) and the "
          f"command chain on {count} seeds")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 seeds, 3 for the command chain")
    parser.add_argument("--seeds", type=int, default=None, metavar="N",
                        help="seeds to build (default 100; --quick: 20)")
    parser.add_argument("--baseline-seeds", type=int, default=None, metavar="M",
                        help="seeds of the per-seed command chain (default 5; --quick: 3)")
    args = parser.parse_args(argv)
    n = args.seeds if args.seeds is not None else (20 if args.quick else 100)
    m = args.baseline_seeds if args.baseline_seeds is not None else (3 if args.quick else 5)
    with tempfile.TemporaryDirectory(prefix="bench-build-") as folder:  # the store and the builds' outputs
        run(Path(folder), n, m)


def run(work: Path, n: int, m: int) -> None:
    """Build ``n`` seeds' tasks in ``work`` (w1, w2, Ray if installed) beside the command chain on ``m``."""
    store, seeds = work / "ilpc.duckdb", work / "seeds.txt"
    make_store(store)
    make_seeds(store, n, seeds)
    check_equal(store, seeds, m, work)
    given = {"store": str(store), "seeds": str(seeds)}
    cases = [Case("build w1", f"{MODULE}:build_case", given, repeat=1),
             Case("build w2", f"{MODULE}:build_case", {**given, "workers": 2}, repeat=1)]
    try:
        import ray  # noqa: F401

        cases.append(Case("build ray", f"{MODULE}:build_case", {**given, "ray": True}, repeat=1))
    except ImportError:
        print("ray not installed: no Ray case (pip install 'chaingraph[ray]')")
    cases.append(Case("commands", f"{MODULE}:commands_case", {**given, "count": m}, repeat=1))
    results: list[Result] = [measure(c) for c in cases]
    print(markdown_table(f"build on world/ilpc-large ({n} seeds; commands: {m} seeds)", results,
                         baseline="build w1", unit="seeds"))
    by = {r.name: r for r in results}
    for r in results:
        print(f"{r.name}: {r.rate:.3f} seeds/s, {r.extra['tasks'] / r.median:.3f} tasks/s "
              f"({r.extra['tasks']} tasks, {r.median:.1f} s)")
    print(f"scaling 1→2 workers: {by['build w1'].median / by['build w2'].median:.2f}×")
    if "build ray" in by:
        ratio = by["build ray"].median / by["build w2"].median
        print(f"Ray overhead vs 2 local workers: {ratio:.2f}× the time")
    print(f"build w1 vs the command chain, per seed: {by['commands'].median / by['commands'].items:.1f} s vs "
          f"{by['build w1'].median / by['build w1'].items:.1f} s")


if __name__ == "__main__":
    main()
