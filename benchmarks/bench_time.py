"""``--as-of``: what the date filter costs, and its answer sets against SPARQL.

    python benchmarks/bench_time.py [--quick]

Worlds: ``world/wikipeople`` (10,580 real time qualifiers) and ``world/codex-m`` (376),
each loaded from its JSON dump into a DuckDB store (setup, cached in the temp folder).
Per world, with and without ``as_of`` (the same date for both worlds):

* ``expand``     :func:`chaingraph.expand.expand` on the whole store (``collect=False``:
                 graph build, timeline and edge filter, enumeration, records) from 3 seeds;
* ``necessity``  one graph (:class:`~chaingraph.necessity.GraphCache`, built inside the timed
                 run) and the full report of 10 tasks with 10 clues each (anchor, six relations,
                 two types, one value), drawn as random walks in the world, unique unfiltered;
* ``pyoxigraph`` the answer sets of the same tasks' anchored, wildcard-free patterns (the
                 full clue set and each type/value ablation) as SPARQL over ``p:``/``ps:``
                 statements with the ``pq:`` P580/P582/P585 filters of the date, on an
                 in-memory pyoxigraph store of the world's N-Triples. Before timing, every such
                 answer set is asserted equal to chaingraph's under ``as_of``.

Ratios: ``as_of`` / unfiltered for chaingraph (target ≤ 1.2×), pyoxigraph / chaingraph.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, Result, markdown_table, measure, world_store  # noqa: E402

MODULE = "bench_time"
AS_OF = "2000-06-30"
ENTITY = "http://www.wikidata.org/entity/"
PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""


def _seeds(name: str, n: int = 3) -> list[str]:
    from chaingraph.store import Store

    with Store(world_store(name), read_only=True) as s:  # subjects of dated statements, most dated first
        rows = s.con.execute("SELECT subject FROM statements JOIN qualifiers USING (statement_id) "
                             "WHERE qualifiers.property IN ('P580', 'P582', 'P585') GROUP BY subject "
                             "ORDER BY count(*) DESC, subject LIMIT ?", [n]).fetchall()
    return [r[0] for r in rows]


# -- tasks ------------------------------------------------------------------------------
def make_tasks(name: str, count: int, path: Path, seed: int = 16) -> None:
    """``count`` six-step tasks with ten clues, unique on the unfiltered graph, whose steps
    include dated statements where the walk can find them (anchor and target exist on
    :data:`AS_OF` too)."""
    from chaingraph.graph import EvidenceGraph
    from chaingraph.patterns import compile_pattern, evaluate
    from chaingraph.settings import TraversalPolicy
    from chaingraph.store import Store
    from chaingraph.tasks import Task
    from chaingraph.timeline import Timeline

    with Store(world_store(name), read_only=True) as store:
        g = EvidenceGraph.from_store(store)
        on_date = EvidenceGraph.from_store(store, policy=TraversalPolicy(as_of=AS_OF))
        dated = set(Timeline.from_store(store).statement_id.tolist())
    rng = random.Random(seed)
    touched = {g.name(u) for e in range(g.ecount()) if g.edge_statement(e) in dated
               for u in g.edge_endpoints(e)}
    starts = [g.vertex(s) for s in sorted(touched) if g.passable(g.vertex(s))]
    tasks: list[dict[str, Any]] = []
    tries = 0
    while len(tasks) < count and tries < 200_000:
        tries += 1
        walk = [rng.choice(starts)]
        steps: list[dict[str, str]] = []
        for i in range(6):
            nbrs = [t for t in g.neighbours(walk[-1]) if t[0] not in walk and (i == 5 or g.passable(t[0]))
                    and not (steps and g.edge_property(t[1]) == steps[-1]["property"])]
            if not nbrs:
                break
            timed = [t for t in nbrs if g.edge_statement(t[1]) in dated]
            u, e, fwd = rng.choice(timed if timed and rng.random() < 0.7 else nbrs)
            walk.append(u)
            steps.append({"property": g.edge_property(e), "direction": "forward" if fwd else "backward"})
        if len(steps) < 6 or g.name(walk[0]) not in on_date or g.name(walk[-1]) not in on_date:
            continue  # anchor and target must exist on the date too, or the dated check refuses the task
        names = [g.name(v) for v in walk]
        facts = [(g.edge_property(e), g.name(u)) for u, e, fwd in g.neighbours(walk[3])
                 if fwd and u not in walk]
        if not facts or any(not g.classes.get(n) for n in (names[2], names[4])):
            continue
        prop, obj = rng.choice(facts)
        clues = [{"kind": "anchor"}] + [{"kind": "relation", "step": i} for i in range(1, 7)] + [
            {"kind": "type", "variable": 2, "class": g.classes[names[2]][0]},
            {"kind": "type", "variable": 4, "class": g.classes[names[4]][0]},
            {"kind": "value", "variable": 3, "property": prop, "value": obj}]
        body = {"id": f"{name}/walk-{len(tasks)}", "anchors": [{"entity": names[0]}],
                "target": {"entity": names[-1]}, "store": str(world_store(name)),
                "components": [{"anchor": names[0], "steps": steps, "target": {"entity": names[-1]}}],
                "clues": clues}
        if evaluate(g, compile_pattern(Task.model_validate(body), 0), target=names[-1]).unique:
            tasks.append(body)
    path.write_text(json.dumps(tasks))


def _tasks(name: str, count: int = 10) -> list[Any]:
    from chaingraph.tasks import Task

    path = Path(tempfile.gettempdir()) / f"chaingraph-bench-time-{name}-tasks.json"
    if not path.exists():
        make_tasks(name, count, path)
    return [Task.model_validate(t) for t in json.loads(path.read_text())[:count]]


# -- the timed runs -----------------------------------------------------------------------
def expand_run(name: str, as_of: str | None) -> Any:
    from chaingraph.expand import expand

    path, seeds = world_store(name), _seeds(name)

    def run() -> tuple[int, dict[str, Any]]:
        out = expand(seeds, store=path, collect=False, top=10, min_hops=5, max_hops=5, as_of=as_of)
        return len(out.records), {"edges": out.graph_edges}
    return run


def necessity_run(name: str, as_of: str | None) -> Any:
    from chaingraph.necessity import GraphCache, check_necessity

    todo = _tasks(name)

    def run() -> tuple[int, dict[str, Any]]:
        cache = GraphCache(as_of=as_of)
        try:
            reports = [check_necessity(t, cache=cache, as_of=as_of) for t in todo]
        finally:
            cache.close()
        return len(reports), {"unique": sum(r.components[0].full.unique for r in reports)}
    return run


def _lit(d: date) -> str:
    return f'"{d.isoformat()}T00:00:00Z"^^xsd:dateTime'


def _holds(st: str, day: date) -> str:
    """SPARQL: statement ``st`` holds on ``day`` by its pq:P580/P582/P585 at their precision
    (widest window; P585 alone an event holding from then on)."""
    y = day.year

    def exists(q: str, cond: str) -> str:
        return f"EXISTS {{ {st} pq:{q} ?v_{q} ; pqv:{q} ?n_{q} . ?n_{q} wikibase:timePrecision ?p_{q} . " \
               f"FILTER({cond.replace('V', f'?v_{q}').replace('PR', f'?p_{q}')}) }}"

    starts = (f"((PR >= 9 && V <= {_lit(day)}) || (PR = 8 && V < {_lit(date((y // 10 + 1) * 10, 1, 1))}) "
              f"|| (PR < 8))")
    ends = (f"((PR = 11 && V >= {_lit(day)}) || (PR = 10 && V >= {_lit(day.replace(day=1))}) || "
            f"(PR = 9 && V >= {_lit(date(y, 1, 1))}) || (PR = 8 && V >= {_lit(date(y // 10 * 10, 1, 1))}) "
            f"|| (PR < 8))")

    def has(q: str) -> str:
        return f"EXISTS {{ {st} pq:{q} ?any_{q} }}"
    return (f"IF({has('P580')} || {has('P582')}, (!{has('P580')} || {exists('P580', starts)}) && "
            f"(!{has('P582')} || {exists('P582', ends)}), !{has('P585')} || {exists('P585', starts)})")


def _sparql(pattern: Any, hubs: list[str], day: date | None) -> str:
    """An anchored, wildcard-free pattern over statements (``p:``/``ps:``), each step held on ``day``."""
    lines, filters = [], []
    for i, step in enumerate(pattern.steps, start=1):
        a, b = (f"?x{i - 1}", f"?x{i}") if step.direction == "forward" else (f"?x{i}", f"?x{i - 1}")
        lines.append(f"{a} p:{step.property} ?s{i} . ?s{i} ps:{step.property} {b} . "
                     f"?s{i} wikibase:rank ?r{i} . FILTER(?r{i} != wikibase:DeprecatedRank)")
        if day is not None:
            filters.append(_holds(f"?s{i}", day))
        if 0 < i < pattern.k and hubs:
            filters.append(f"?x{i} NOT IN ({', '.join('wd:' + h for h in hubs)})")
    for t in pattern.types:
        lines.append(f"?x{t.variable} wdt:P31/wdt:P279* wd:{t.class_id} .")
    for v in pattern.values:
        lines.append(f"?x{v.variable} p:{v.property} ?vs{v.variable} . ?vs{v.variable} ps:{v.property} "
                     f"wd:{v.value.id} .")
        if day is not None:
            filters.append(_holds(f"?vs{v.variable}", day))
    body = "\n".join(lines + [f"FILTER({f})" for f in filters])
    head = f"SELECT DISTINCT ?x{pattern.k} WHERE {{ VALUES ?x0 {{ wd:{pattern.anchor} }}"
    return PREFIXES + f"{head}\n{body}\n}}"


def _patterns(task: Any) -> list[Any]:
    """The full clue set and each type or value ablation (anchored, no wildcard step)."""
    from chaingraph.patterns import compile_pattern

    every = list(range(len(task.clues)))
    keep = [i for i, c in enumerate(task.clues) if c.kind in ("type", "value")]
    return [compile_pattern(task, 0, every)] + [compile_pattern(task, 0, [j for j in every if j != i])
                                                for i in keep]


def _oxigraph(name: str) -> Any:
    import pyoxigraph

    store = pyoxigraph.Store()
    with gzip.open(SHARED_DATA / "world" / f"{name}.nt.gz", "rb") as f:
        store.bulk_load(f.read(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return store


def _hubs(name: str, as_of: str | None) -> list[str]:
    from chaingraph.necessity import GraphCache

    cache = GraphCache(as_of=as_of)
    graph, _ = cache.get(_tasks(name)[0])
    cache.close()
    return [graph.name(v) for v in range(graph.vcount()) if not graph.passable(v) and not graph.is_literal(v)]


def pyoxigraph_run(name: str, as_of: str | None) -> Any:
    store, todo = _oxigraph(name), _tasks(name)
    day = date.fromisoformat(as_of) if as_of else None
    queries = [_sparql(p, _hubs(name, as_of), day) for t in todo for p in _patterns(t)]

    def run() -> tuple[int, dict[str, Any]]:
        answers = sum(len(list(store.query(q))) for q in queries)
        return len(todo), {"answers": answers}
    return run


def check_agreement(name: str) -> int:
    """Every wildcard-free anchored answer set of every task, as of the date, by both."""
    from chaingraph.necessity import GraphCache
    from chaingraph.patterns import evaluate
    from chaingraph.timeline import Timeline

    store, todo, hubs = _oxigraph(name), _tasks(name), _hubs(name, AS_OF)
    cache = GraphCache(as_of=AS_OF)
    graph, values = cache.get(todo[0])
    timeline = graph.timeline
    assert isinstance(timeline, Timeline)
    assert not (timeline.kind == 3).any(), "superseding windows: the SPARQL filter above does not model them"
    assert not timeline.preferred.any(), "preferred ranks: the SPARQL filter above does not model them"
    n = 0
    for task in todo:
        for pattern in _patterns(task):
            ours = set(evaluate(graph, pattern, values=values, first=10**9).answers)
            theirs = {s[f"x{pattern.k}"].value.removeprefix(ENTITY)
                      for s in store.query(_sparql(pattern, hubs, date.fromisoformat(AS_OF)))}
            assert ours == theirs, (task.id, pattern, sorted(ours ^ theirs)[:5])
            n += 1
    cache.close()
    return n


def filter_run(name: str) -> Any:
    """The date filter alone: the store's timeline and the edge mask of every item statement."""
    from chaingraph.store import Store
    from chaingraph.timeline import DatedStatements

    store = Store(world_store(name), read_only=True)
    cols = store.edge_arrays()

    def run() -> tuple[int, dict[str, Any]]:
        kept = DatedStatements(store, AS_OF).keep(cols)
        return len(cols["statement_id"]), {"kept": len(kept["statement_id"])}
    return run


def interleaved(cases: list[Case], repeat: int) -> list[Result]:
    """Each case ``repeat`` times, one fresh process per run, the cases alternating (ABAB…) so
    that a change in the machine's load falls on all of them alike."""
    runs: dict[str, list[Result]] = {c.name: [] for c in cases}
    for _ in range(repeat):
        for c in cases:
            runs[c.name].append(measure(Case(c.name, c.target, c.params, repeat=1)))
    return [Result(name, [r.seconds[0] for r in rs], rs[-1].items, max(r.peak_mb for r in rs), rs[-1].extra)
            for name, rs in runs.items()]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="world/wikipeople only, 3 repeats instead of 7")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 7
    worlds = ["wikipeople"] if args.quick else ["wikipeople", "codex-m"]
    for name in worlds:
        world_store(name)
        todo = _tasks(name)
        compared = check_agreement(name)
        print(f"{name}: answer sets as of {AS_OF} equal between chaingraph and pyoxigraph (p:/ps: statements "
              f"with pq: P580/P582/P585 filters) for {compared} patterns of {len(todo)} tasks.\n")
        same = {"name": name}
        exp = interleaved([Case("expand", f"{MODULE}:expand_run", {**same, "as_of": None}),
                           Case(f"expand --as-of {AS_OF}", f"{MODULE}:expand_run", {**same, "as_of": AS_OF})],
                          repeat)
        print(markdown_table(f"expand from {len(_seeds(name))} seeds, whole store, {name}", exp,
                             baseline="expand", unit="chains"))
        nec = interleaved([Case("necessity", f"{MODULE}:necessity_run", {**same, "as_of": None}),
                           Case(f"necessity --as-of {AS_OF}", f"{MODULE}:necessity_run",
                                {**same, "as_of": AS_OF}),
                           Case(f"pyoxigraph answer sets --as-of {AS_OF}", f"{MODULE}:pyoxigraph_run",
                                {**same, "as_of": AS_OF})], repeat)
        print(markdown_table(f"necessity reports of {len(todo)} tasks (10 clues; graph built in the run), "
                             f"{name}", nec, baseline="necessity", unit="tasks"))
        alone = measure(Case("date filter alone", f"{MODULE}:filter_run", same, repeat=repeat))
        print(f"* as_of / unfiltered: expand {exp[1].median / exp[0].median:.2f}×, necessity "
              f"{nec[1].median / nec[0].median:.2f}× (target ≤ 1.2×); graph edges "
              f"{exp[0].extra['edges']:,} → {exp[1].extra['edges']:,}")
        print(f"* the date filter alone (timeline of the store + edge mask of {alone.items:,} item "
              f"statements, {alone.extra['kept']:,} kept): median {1000 * alone.median:.0f} ms\n")


if __name__ == "__main__":
    main(sys.argv[1:])
