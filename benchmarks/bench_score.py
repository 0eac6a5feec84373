"""Trajectory scoring (DESIGN §12): chaingraph's full scorer against a straightforward
pure-Python NC/RC scorer, on the same synthetic trajectories over the same tasks.

    python benchmarks/bench_score.py [--quick]

Graph: ``world/ilpc-large`` (its ``wdt:`` item triples), default traversal policy. Tasks:
five-step chains drawn as random simple walks (seeded), each with an anchor region and one
relation clue per step. Trajectories (10,000; seeded): views (a full-image view, crops
around the anchor), an anchor assertion, searches, claims of most reference statements
(a tenth of them stated the wrong way round), a wrong claim, and in a third of them an
alternative route the graph holds (a simple path of at most four hops from the anchor to
the target, different from the chain), with sources and anchor/component assignments.

* ``baseline NC/RC``   pure Python: the named ids and claimed ``(s, p, o)`` statements as
                       sets, intersected with each task's annotated chain — no name
                       resolution, aliases, equivalent relations or route adjudication;
* ``chaingraph NC/RC, reference only`` :func:`chaingraph.scoring.coverage` with
                       ``alternatives=False`` and a :class:`TaskScorer` per task: names
                       resolved, aliases and equivalent relations matched (each distinct
                       claim once per task, into the task's claim index), no route looked for;
* ``chaingraph NC/RC`` the same with every claimed alternative route found and adjudicated
                       (exactly: the index only passes over items and claims no route can
                       use; verdicts cached per task and route; a route that credits nothing
                       is judged in full — its ClaimedRoute, verdict and reasons — only when
                       the item's ``verdicts`` are read, which NC and RC do not): its ratio to
                       the row above is what adjudication costs;
* ``chaingraph all``   :func:`chaingraph.scoring.score_trajectory`: every §12 metric (claims
                       judged, anchors matched, crops, revisits) and every explanation.

Each builds its per-task state inside the timed run (so route verdicts start cold in every
repeat). Every case's setup ends with ``gc.freeze()``: what it loaded (the parsed trajectories;
for the chaingraph cases also the evidence graph) is long-lived input that the cyclic
collector should not rescan during the timed runs, as a long-running scorer would arrange;
the baseline gets the same treatment so that neither side is charged for the other's
collections. The objects each run makes (chaingraph's per-item results, claim records and
route verdicts) are collected as usual. Before timing, NC and RC of
every item where chaingraph credited no alternative route are asserted equal to the baseline's
(a credited route replaces the reference, which the baseline cannot know); the number of
credited and refused routes is printed.

The table is made of rounds: each round runs every case once, in the order of the table
(baseline, reference only, adjudicated, all), each in a fresh process (its own peak memory),
timed ``repeat`` times after setup (the first run of an adjudicated case builds the graph's
pattern index, on first use: its peak memory counts it, its median leaves that run out).
``--processes`` rounds (default 3) make each case's figures from that many processes spread
over the whole run, alternating with the others, so that a busy minute of the machine weighs
on every case alike instead of on whichever case it fell on. Per case the table gives the
median over its processes of each process's median wall-clock and CPU time
(``time.process_time`` around the same runs) and the largest peak memory; the ratios are
ratios of those medians to the baseline's. The CPU ratio leaves out time spent waiting for a
core. Below the table, the CPU ratio of each adjudicated process to the baseline process of
the same round.

Below that, the baseline and ``chaingraph NC/RC`` are timed once more as pairs back to back
in one process (the first of each pair alternating), in wall-clock and in CPU time: the
median of the pairs' CPU-time ratios is the figure the machine's load moves least (both
halves of a pair see the same minute, and CPU time does not count waiting for a core).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import Case, Result, measure, world_graph  # noqa: E402

MODULE = "bench_score"
Run = Callable[[], tuple[int, dict[str, Any]]]
IMAGE = (1000, 800)


def _cpu_timed(body: Run) -> Run:
    """``body`` with the CPU time of each of its runs kept in the extra ``cpu`` (the harness
    times the same runs in wall-clock)."""
    cpu: list[float] = []

    def run() -> tuple[int, dict[str, Any]]:
        c0 = time.process_time()
        items, extra = body()
        cpu.append(time.process_time() - c0)
        return items, {**extra, "cpu": list(cpu)}

    return run


def _walk(g: Any, rng: random.Random, k: int) -> tuple[list[int], list[tuple[str, str]]] | None:
    v = rng.randrange(g.vcount())
    if g.is_literal(v) or not g.passable(v):
        return None
    nodes, steps = [v], []
    for i in range(k):
        options = [(u, e, f) for u, e, f in g.neighbours(nodes[-1]) if u not in nodes
                   and (i == k - 1 or g.passable(u))]
        if not options:
            return None
        u, e, f = rng.choice(options)
        nodes.append(u)
        steps.append((g.edge_property(e), "forward" if f else "backward"))
    return nodes, steps


def _alternatives(g: Any, nodes: list[int], chain: list[tuple[str, str]], hops: int = 4,
                  budget: int = 20_000) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """Up to three simple paths of at most ``hops`` steps from the anchor to the target
    that differ from the chain."""
    out: list[tuple[list[str], list[tuple[str, str]]]] = []
    goal, left = nodes[-1], [budget]
    chain_key = ([g.name(x) for x in nodes], chain)

    def dfs(path: list[int], steps: list[tuple[str, str]]) -> None:
        left[0] -= 1
        if left[0] < 0 or len(out) >= 3:
            return
        v = path[-1]
        if v == goal:
            found = ([g.name(x) for x in path], list(steps))
            if found != chain_key:
                out.append(found)
            return
        if len(steps) == hops or (len(path) > 1 and not g.passable(v)):
            return
        for u, e, f in g.neighbours(v):
            if u not in path:
                dfs([*path, u], [*steps, (g.edge_property(e), "forward" if f else "backward")])

    dfs([nodes[0]], [])
    return out


def make_data(name: str, tasks: int, items: int, path: Path, seed: int = 17) -> None:
    """Write ``{"tasks": [...], "trajectories": [...]}`` for the cases to read."""
    g = world_graph(name)
    rng = random.Random(seed)
    made: list[dict[str, Any]] = []
    alts: dict[str, list[Any]] = {}
    while len(made) < tasks:
        walk = _walk(g, rng, 5)
        if walk is None:
            continue
        nodes, steps = walk
        names = [g.name(x) for x in nodes]
        x, y = rng.randrange(0, 800), rng.randrange(0, 600)
        tid = f"ilpc/{len(made)}"
        made.append({"id": tid, "anchors": [{"entity": names[0], "region": [x, y, x + 120, y + 120]}],
                     "target": {"entity": names[-1]},
                     "components": [{"anchor": names[0], "target": {"entity": names[-1]}, "steps": [
                         {"property": p, "direction": d, "source": names[i], "target": names[i + 1]}
                         for i, (p, d) in enumerate(steps)]}],
                     "clues": [{"kind": "anchor"}, *({"kind": "relation", "step": i} for i in range(1, 6))]})
        alts[tid] = _alternatives(g, nodes, steps)
    trajs = []
    url = "https://example.org/source"
    for n in range(items):
        task = rng.choice(made)
        comp = task["components"][0]
        (x0, y0, x1, y1) = task["anchors"][0]["region"]
        jitter = rng.randrange(-10, 10)
        events: list[dict[str, Any]] = [
            {"kind": "view", "box": [0, 0, *IMAGE]},
            {"kind": "view", "box": [max(0, x0 - 40), max(0, y0 - 40), x1 + 40, y1 + 40]},
            {"kind": "assert", "box": [x0 + jitter + 10, y0 + 10, x1 + jitter + 10, y1 + 10],
             "entity": comp["anchor"]},
            {"kind": "search", "query": "what is this", "results": [url] if rng.random() < 0.8 else []}]
        for st in comp["steps"]:
            if rng.random() < 0.75:
                d = st["direction"]
                if rng.random() < 0.1:  # stated the wrong way round
                    d = "backward" if d == "forward" else "forward"
                events.append({"kind": "claim", "subject": st["source"], "relation": st["property"],
                               "object": st["target"], "direction": d, "source": url,
                               "anchor": comp["anchor"], "component": "component1"})
        if alts[task["id"]] and rng.random() < 1 / 3:
            nodes, steps = rng.choice(alts[task["id"]])
            events += [{"kind": "claim", "subject": nodes[i], "relation": p, "object": nodes[i + 1],
                        "direction": d, "component": "component1"} for i, (p, d) in enumerate(steps)]
        s, _e, _f = rng.choice(g.neighbours(rng.randrange(g.vcount())) or [(0, 0, True)])
        events.append({"kind": "claim", "subject": g.name(s), "relation": "P17", "object": comp["anchor"]})
        events.append({"kind": "view", "box": [max(0, x0 - 20), max(0, y0 - 20), x1 + 20, y1 + 20]})
        trajs.append({"task": task["id"], "id": f"run-{n}", "image_size": list(IMAGE), "events": events})
    path.write_text(json.dumps({"tasks": made, "trajectories": trajs}))


def _load(data: str) -> tuple[list[Any], list[Any]]:
    from chaingraph.tasks import Task
    from chaingraph.trajectory import parse_trajectory

    raw = json.loads(Path(data).read_text())
    return ([Task.model_validate(t) for t in raw["tasks"]],
            [parse_trajectory(t, item=i) for i, t in enumerate(raw["trajectories"], start=1)])


def baseline_scores(tasks: list[Any], trajs: list[Any]) -> list[tuple[float, float]]:
    """Pure-Python NC/RC: sets of named ids and of claimed statements against the chain."""
    refs: dict[str, tuple[set[str], set[tuple[str, str, str]]]] = {}
    for t in tasks:
        comp = t.components[0]
        nodes = {comp.anchor, *(s.target for s in comp.steps)}
        edges = {(s.source, s.property, s.target) if s.direction == "forward"
                 else (s.target, s.property, s.source) for s in comp.steps}
        refs[t.id] = ({n for n in nodes if n}, edges)  # type: ignore[misc]
    out = []
    for tr in trajs:
        v_req, e_req = refs[tr.task]
        named: set[str] = set()
        claimed: set[tuple[str, str, str]] = set()
        for ev in tr.events:
            if ev.kind == "claim":
                named.add(ev.subject)
                named.add(ev.object)
                claimed.add((ev.subject, ev.relation, ev.object) if ev.direction == "forward"
                            else (ev.object, ev.relation, ev.subject))
            elif ev.kind == "assert":
                named.add(ev.entity)
        out.append((len(named & v_req) / len(v_req), len(claimed & e_req) / len(e_req)))
    return out


def baseline(name: str, data: str) -> Run:
    tasks, trajs = _load(data)
    gc.freeze()

    def run() -> tuple[int, dict[str, Any]]:
        return len(baseline_scores(tasks, trajs)), {}

    return _cpu_timed(run)


def chaingraph_scores(graph: Any, tasks: list[Any], trajs: list[Any]) -> list[Any]:
    from chaingraph.scoring import TaskScorer, score_trajectory

    scorers = {t.id: TaskScorer(t, graph) for t in tasks}
    return [score_trajectory(scorers[tr.task].task, tr, scorer=scorers[tr.task]) for tr in trajs]


def chaingraph(name: str, data: str) -> Run:
    graph = world_graph(name)
    tasks, trajs = _load(data)
    gc.freeze()

    def run() -> tuple[int, dict[str, Any]]:
        items = chaingraph_scores(graph, tasks, trajs)
        return len(items), {"credited": sum(r.credited for i in items for r in i.routes)}

    return _cpu_timed(run)


def chaingraph_coverage(name: str, data: str, alternatives: bool = True) -> Run:
    from chaingraph.scoring import TaskScorer, coverage

    graph = world_graph(name)
    tasks, trajs = _load(data)
    gc.freeze()

    def run() -> tuple[int, dict[str, Any]]:
        scorers = {t.id: TaskScorer(t, graph) for t in tasks}
        items = [coverage(scorers[tr.task], tr, alternatives=alternatives) for tr in trajs]
        # the routes credited (each replaces its reference route): what NC and RC counted
        return len(items), {"credited": sum(r is not ref for tr, i in zip(trajs, items)
                                            for r, ref in zip(i.routes, scorers[tr.task].reference.routes))}

    return _cpu_timed(run)


def paired(name: str, data: str) -> Run:
    """The baseline and the adjudicated NC/RC (as ``chaingraph_coverage``) timed back to back
    in one process, alternating which goes first; every run's times are kept in the extra
    ``pairs``: ``(baseline, chaingraph)`` wall-clock and CPU seconds. A ratio of two cases
    measured minutes apart moves with the machine's load, the ratio within a pair much less,
    and CPU time leaves out the time spent waiting for a core."""
    from chaingraph.scoring import TaskScorer, coverage

    graph = world_graph(name)
    tasks, trajs = _load(data)
    gc.freeze()
    pairs: list[tuple[float, float, float, float]] = []

    def base() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        got = baseline_scores(tasks, trajs)
        del got
        return time.perf_counter() - t0, time.process_time() - c0

    def ours() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        scorers = {t.id: TaskScorer(t, graph) for t in tasks}
        got = [coverage(scorers[tr.task], tr) for tr in trajs]
        del got, scorers
        return time.perf_counter() - t0, time.process_time() - c0

    def run() -> tuple[int, dict[str, Any]]:
        if len(pairs) % 2:
            b = base()
            c = ours()
        else:
            c = ours()
            b = base()
        pairs.append((b[0], c[0], b[1], c[1]))
        return len(trajs), {"pairs": list(pairs)}

    return run


def check_agreement(name: str, data: str) -> tuple[int, int, int]:
    """NC/RC equal to the baseline's wherever no route was credited; (agreeing, credited, refused)."""
    graph = world_graph(name)
    tasks, trajs = _load(data)
    base = baseline_scores(tasks, trajs)
    ours = chaingraph_scores(graph, tasks, trajs)
    agree = credited = refused = 0
    for (nc, rc), item in zip(base, ours):
        credited += sum(r.credited for r in item.routes)
        refused += sum(not r.credited for r in item.routes)
        if any(r.credited for r in item.routes):
            continue
        assert (item.metrics.nc, item.metrics.rc) == (nc, rc), (item.trajectory, nc, rc, item.metrics)
        agree += 1
    return agree, credited, refused


#: the table's cases: name, prepare function, extra parameters; the first is the baseline
CASES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("baseline NC/RC", "baseline", {}),
    ("chaingraph NC/RC, reference only", "chaingraph_coverage", {"alternatives": False}),
    ("chaingraph NC/RC", "chaingraph_coverage", {}),
    ("chaingraph all", "chaingraph", {}))


def rounds(params: dict[str, Any], processes: int, repeat: int) -> dict[str, list[Result]]:
    """Every case in ``processes`` rounds, one fresh process per case and round, the cases
    alternating (the table's order in every round): per case its results, by round."""
    out: dict[str, list[Result]] = {name: [] for name, _f, _p in CASES}
    for _ in range(processes):
        for name, func, extra in CASES:
            out[name].append(measure(Case(name, f"{MODULE}:{func}", {**params, **extra}, repeat=repeat)))
    return out


def rounds_table(title: str, runs: dict[str, list[Result]]) -> str:
    """Markdown: per case the median over its processes of their median wall-clock and CPU
    seconds, the rate, the largest peak, and the ratios of the medians to the baseline's."""
    rows = []
    for name, results in runs.items():
        wall = statistics.median(r.median for r in results)
        cpu = statistics.median(statistics.median(r.extra["cpu"]) for r in results)
        rows.append((name, len(results), sum(len(r.seconds) for r in results), wall, cpu,
                     results[0].items / wall, max(r.peak_mb for r in results)))
    base_wall, base_cpu = rows[0][3], rows[0][4]
    lines = [f"### {title}", "", "| implementation | processes × runs | median wall s | items/s "
             "| median CPU s | peak MB | wall ratio | CPU ratio |", "|---|" + "---:|" * 7]
    for name, procs, n, wall, cpu, rate, peak in rows:
        lines.append(f"| {name} | {procs} × {n // procs} | {wall:.4f} | {rate:,.0f} | {cpu:.4f} | "
                     f"{peak:,.1f} | {wall / base_wall:.2f}× | {cpu / base_cpu:.2f}× |")
    return "\n".join(lines) + "\n"


def round_ratios(runs: dict[str, list[Result]], name: str) -> list[float]:
    """CPU ratio of ``name``'s process to the baseline process of the same round, per round."""
    base = runs[CASES[0][0]]
    return sorted(statistics.median(r.extra["cpu"]) / statistics.median(b.extra["cpu"])
                  for r, b in zip(runs[name], base, strict=True))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 trajectories over 20 tasks, 1 round")
    parser.add_argument("--processes", type=int, default=None,
                        help="rounds: fresh processes per case, alternating (default 3; --quick: 1)")
    args = parser.parse_args(argv)
    name = "ilpc-large"
    tasks, items = (20, 1_000) if args.quick else (100, 10_000)
    repeat = 3 if args.quick else 5
    processes = args.processes or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "score.json"
        make_data(name, tasks, items, data)
        agree, credited, refused = check_agreement(name, str(data))
        print(f"{items:,} trajectories over {tasks} tasks: NC/RC equal to the baseline on all {agree:,} "
              f"items without a credited route; alternative routes adjudicated: {credited:,} credited, "
              f"{refused:,} refused\n")
        params = {"name": name, "data": str(data)}
        runs = rounds(params, processes, repeat)
        # one untimed pair first (the graph's pattern index is built on first use), then the pairs
        pairs = measure(Case("paired", f"{MODULE}:paired", params, repeat=2 * repeat + 1,
                             warmup=1)).extra["pairs"][1:]
    print(rounds_table(f"Scoring {items:,} trajectories ({name}, {tasks} five-step tasks; {processes} "
                       "round(s) of fresh processes, the cases alternating)", runs))
    per_round = round_ratios(runs, "chaingraph NC/RC")
    print(f"chaingraph NC/RC against the baseline process of the same round, CPU time: "
          f"{', '.join(f'{r:.2f}×' for r in per_round)}")
    for what, b_at in (("wall-clock", 0), ("CPU", 2)):
        ratios = sorted(p[b_at + 1] / p[b_at] for p in pairs)
        base_s, ours_s = (statistics.median(p[b_at + i] for p in pairs) for i in (0, 1))
        print(f"chaingraph NC/RC against the baseline, back to back in one process ({len(pairs)} pairs, the "
              f"first of each alternating), {what} time: median {statistics.median(ratios):.2f}×, range "
              f"{ratios[0]:.2f}–{ratios[-1]:.2f}× (medians: baseline {base_s:.4f} s, "
              f"chaingraph {ours_s:.4f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
