"""Clue ablation: chaingraph's full necessity report against the same answer sets computed
by pyoxigraph (SPARQL) and by DuckDB (SQL joins), on the same tasks over the same graph.

    python benchmarks/bench_necessity.py [--quick]

Graph: ``world/codex-m`` (17,050 entities; its ``wdt:`` item triples), under chaingraph's
default traversal policy (class edges type, hubs of degree > 1000 are not passed through).
Tasks: six-step chains drawn as random simple walks (seeded), each with ten clues —
the anchor, six relations, two types (``P31``) and one item value — whose full clue set
singles out the target. Per task the work is the base pattern plus one ablation per clue
(eleven answer sets):

* ``chaingraph``   :func:`chaingraph.necessity.check_necessity` — the whole report
                   (answer sets, match counts, witnesses, verdicts, pruned pattern, H);
* ``pyoxigraph``   the eleven queries of :func:`chaingraph.patterns.to_sparql` on an
                   in-memory ``pyoxigraph.Store`` holding all 1.39 M triples of the world;
* ``duckdb SQL``   the eleven patterns as SQL joins over an ``edges(s, p, o)`` table of the
                   same step edges (plus ``classes`` and ``hubs``), in an in-memory DuckDB.

Graph, store and tables are built in setup (not timed). Before timing, every answer set of
every pattern is computed by all three and asserted equal. A second table times
chaingraph alone on a batch of 100 tasks (ms per task, tasks per second).

**Clue proposal** (``--propose`` runs only this part): :func:`chaingraph.propose.propose_clues`
for 100 chains of ``codex-m`` — the best five-hop chain of seeds drawn deterministically,
found by the chain engine — with answer sets over every statement of the loaded store
(ms per chain, wall clock and CPU, candidates, evaluations). Then the first sequential
pruning pass of 10 proposals (the full candidate set, then each clue tried in the
documented order) is computed by chaingraph, by pyoxigraph (nested ``SELECT DISTINCT``
per variable) and by DuckDB (one ``DISTINCT`` CTE per variable), answers asserted equal
first, with ratios. Proposals whose candidates include literal values are left out of
the peer comparison (the peers' queries translate item values only).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import SHARED_DATA, Case, markdown_table, measure, world_graph, world_store  # noqa: E402

MODULE = "bench_necessity"
Run = Callable[[], tuple[int, dict[str, Any]]]
ENTITY = "http://www.wikidata.org/entity/"
DIRECT = "http://www.wikidata.org/prop/direct/"


def _world(name: str) -> Path:
    return SHARED_DATA / "world" / f"{name}.nt.gz"


def _tasks(path: str, count: int) -> list[Any]:
    from chaingraph.tasks import Task

    return [Task.model_validate(t) for t in json.loads(Path(path).read_text())[:count]]


def _patterns(task: Any) -> list[Any]:
    from chaingraph.patterns import compile_pattern

    every = list(range(len(task.clues)))
    return [compile_pattern(task, 0, every)] + [compile_pattern(task, 0, [j for j in every if j != i])
                                                for i in every]


def make_tasks(name: str, count: int, path: Path, seed: int = 6) -> None:
    """Draw ``count`` six-step tasks with ten clues whose full clue set is unique.

    Consecutive steps use different properties: a zig-zag through one symmetric property
    (``P530`` diplomatic relation four times) is answered by chaingraph in a millisecond but
    takes pyoxigraph minutes (50 s for the base pattern, 500 s without the anchor, measured),
    which would make the comparison a measurement of one pathological task."""
    from chaingraph.patterns import compile_pattern, evaluate
    from chaingraph.tasks import Task

    g = world_graph(name)
    rng = random.Random(seed)
    starts = [v for v in range(g.vcount()) if g.degree(v) and g.passable(v)]
    tasks: list[dict[str, Any]] = []
    while len(tasks) < count:
        walk = [rng.choice(starts)]
        steps: list[dict[str, str]] = []
        for i in range(6):
            nbrs = [t for t in g.neighbours(walk[-1]) if t[0] not in walk and (i == 5 or g.passable(t[0]))
                    and not (steps and g.edge_property(t[1]) == steps[-1]["property"])]
            if not nbrs:
                break
            u, e, fwd = rng.choice(nbrs)
            walk.append(u)
            steps.append({"property": g.edge_property(e), "direction": "forward" if fwd else "backward"})
        names = [g.name(v) for v in walk]
        facts = [(g.edge_property(e), g.name(u)) for u, e, fwd in g.neighbours(walk[min(3, len(walk) - 1)])
                 if fwd and u not in walk]
        if len(steps) < 6 or not facts or any(not g.classes.get(n) for n in (names[2], names[4])):
            continue
        last = [u for u, e, fwd in g.neighbours(walk[5]) if g.edge_property(e) == steps[5]["property"]
                and ("forward" if fwd else "backward") == steps[5]["direction"]]
        if len(set(last)) != 1:  # the last hop must be functional for the target to be unique
            continue
        prop, obj = rng.choice(facts)
        clues = [{"kind": "anchor"}] + [{"kind": "relation", "step": i} for i in range(1, 7)] + [
            {"kind": "type", "variable": 2, "class": g.classes[names[2]][0]},
            {"kind": "type", "variable": 4, "class": g.classes[names[4]][0]},
            {"kind": "value", "variable": 3, "property": prop, "value": obj}]
        body = {"id": f"{name}/walk-{len(tasks)}", "anchors": [{"entity": names[0]}],
                "target": {"entity": names[-1]},
                "components": [{"anchor": names[0], "steps": steps, "target": {"entity": names[-1]}}],
                "clues": clues}
        task = Task.model_validate(body)
        if evaluate(g, compile_pattern(task, 0), target=names[-1]).unique:
            tasks.append(body)
    path.write_text(json.dumps(tasks))


# -- the three implementations ---------------------------------------------------------
def chaingraph_reports(name: str, tasks: str, count: int) -> Run:
    from chaingraph.necessity import check_necessity

    graph, todo = world_graph(name), _tasks(tasks, count)
    check_necessity(todo[0], graph)  # build the array index once, as a long-running process would

    def run() -> tuple[int, dict[str, Any]]:
        reports = [check_necessity(t, graph) for t in todo]
        return len(reports), {"redundant": sum(len(r.redundant) for r in reports)}
    return run


def _sparql_answers(store: Any, graph: Any, pattern: Any) -> set[str]:
    from chaingraph.patterns import to_sparql

    props = sorted(set(graph.graph.es["property"]))
    hubs = [graph.name(v) for v in range(graph.vcount()) if not graph.passable(v)]
    var = f"x{pattern.k}"
    query = to_sparql(pattern, props, blocked=hubs)
    return {sol[var].value.removeprefix(ENTITY) for sol in store.query(query)}


def _oxigraph(name: str) -> Any:
    import pyoxigraph

    store = pyoxigraph.Store()
    with gzip.open(_world(name), "rb") as f:
        store.bulk_load(f.read(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return store


def pyoxigraph_answers(name: str, tasks: str, count: int) -> Run:
    graph, todo, store = world_graph(name), _tasks(tasks, count), _oxigraph(name)

    def run() -> tuple[int, dict[str, Any]]:
        sets = [len(_sparql_answers(store, graph, p)) for t in todo for p in _patterns(t)]
        return len(todo), {"answers": sum(sets)}
    return run


def _duckdb(graph: Any) -> Any:
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    el = graph.graph.get_edgelist()
    names = graph.graph.vs["name"]
    edge_rows = pa.table({"s": [names[s] for s, _o in el], "p": graph.graph.es["property"],  # noqa: F841
                          "o": [names[o] for _s, o in el]})
    con.execute("CREATE TABLE edges AS SELECT DISTINCT s, p, o FROM edge_rows")
    class_rows = pa.table({"e": [e for e, cs in graph.classes.items() for _c in cs],  # noqa: F841
                           "c": [c for _e, cs in graph.classes.items() for c in cs]})
    con.execute("CREATE TABLE classes AS SELECT * FROM class_rows")
    con.execute("CREATE TABLE und AS SELECT s AS a, o AS b FROM edges "
                "UNION ALL SELECT o AS a, s AS b FROM edges")
    hubs = [graph.name(v) for v in range(graph.vcount()) if not graph.passable(v)]
    hub_rows = pa.table({"h": hubs})  # noqa: F841
    con.execute("CREATE TABLE hubs AS SELECT * FROM hub_rows")
    return con


def _sql(pattern: Any) -> tuple[str, list[Any]]:
    """The pattern as one SQL join: step ``i`` is a relation ``s{i}(a, b)`` from x(i-1) to x(i),
    hubs already removed from its inner ends (filters pushed into each step)."""
    froms, where, params = [], [], []
    for i, st in enumerate(pattern.steps, start=1):
        inner = []
        if i > 1:
            inner.append("a NOT IN (SELECT h FROM hubs)")
        if i < pattern.k:
            inner.append("b NOT IN (SELECT h FROM hubs)")
        if st.property is None:
            rel = "SELECT a, b FROM und"
        else:
            a, b = ("s", "o") if st.direction == "forward" else ("o", "s")
            rel = f"SELECT {a} AS a, {b} AS b FROM edges WHERE p = ?"
            params.append(st.property)
        cond = " AND ".join(inner)
        froms.append(f"(SELECT * FROM ({rel}) WHERE {cond or 'true'}) s{i}")
        if i > 1:
            where.append(f"s{i - 1}.b = s{i}.a")

    def var(i: int) -> str:
        return "s1.a" if i == 0 else f"s{i}.b"
    if pattern.anchor:
        where.append("s1.a = ?")
        params.append(pattern.anchor)
    for t in pattern.types:
        where.append(f"{var(t.variable)} IN (SELECT e FROM classes WHERE c = ?)")
        params.append(t.class_id)
    for v in pattern.values:
        where.append(f"{var(v.variable)} IN (SELECT s FROM edges WHERE p = ? AND o = ? "
                     f"UNION SELECT e FROM classes WHERE ? = 'P31' AND c = ?)")
        params += [v.property, v.value.id, v.property, v.value.id]
    sql = f"SELECT DISTINCT {var(pattern.k)} FROM {', '.join(froms)} WHERE {' AND '.join(where) or 'true'}"
    return sql, params


def duckdb_answers(name: str, tasks: str, count: int) -> Run:
    graph, todo = world_graph(name), _tasks(tasks, count)
    con = _duckdb(graph)

    def run() -> tuple[int, dict[str, Any]]:
        total = 0
        for t in todo:
            for p in _patterns(t):
                sql, params = _sql(p)
                total += len(con.execute(sql, params).fetchall())
        return len(todo), {"answers": total}
    return run


# -- agreement, then timing ------------------------------------------------------------
def check_agreement(name: str, tasks: str, count: int) -> tuple[int, list[str]]:
    """Every answer set of every pattern, by all three; returns how many were compared and a
    per-task timing line (one untimed-harness pass: chaingraph median of 3, peers one run)."""
    import statistics
    import time

    from chaingraph.necessity import check_necessity
    from chaingraph.patterns import evaluate

    graph, todo = world_graph(name), _tasks(tasks, count)
    store, con = _oxigraph(name), _duckdb(graph)
    check_necessity(todo[0], graph)
    n, lines = 0, []
    for task in todo:
        spent = []
        for _ in range(3):
            t0 = time.perf_counter()
            report = check_necessity(task, graph)
            spent.append(time.perf_counter() - t0)
        ours_s = statistics.median(spent)
        ox_s = sql_s = 0.0
        counts = [report.components[0].full.count] + [a.answers.count for a in report.clues]
        for pattern, reported in zip(_patterns(task), counts):
            ours = set(evaluate(graph, pattern, first=10**9).answers)
            sql, params = _sql(pattern)
            t0 = time.perf_counter()
            ox = _sparql_answers(store, graph, pattern)
            t1 = time.perf_counter()
            rows = {row[0] for row in con.execute(sql, params).fetchall()}
            ox_s, sql_s = ox_s + t1 - t0, sql_s + time.perf_counter() - t1
            assert ours == ox, (task.id, pattern)
            assert ours == rows, (task.id, pattern)
            assert reported == len(ours)
            n += 1
        steps = " ".join(s.property for s in task.components[0].steps)
        lines.append(f"| {task.id} | {steps} | {1000 * ours_s:.1f} | {1000 * ox_s:.0f} | "
                     f"{1000 * sql_s:.0f} | {ox_s / ours_s:.1f}× |")
    return n, lines


# -- clue proposal ---------------------------------------------------------------------
def _proposal_setup(name: str, count: int) -> tuple[Any, Any, dict[str, Any], list[Any]]:
    """Store, graph over every statement (no hub limit), lookups, and ``count`` chains: the best
    five-hop chain of seeds drawn deterministically, as the chain engine (default policy) finds them."""
    from chaingraph.graph import EvidenceGraph
    from chaingraph.lookups import StoreValues
    from chaingraph.propose import ChainPath
    from chaingraph.ranking import top_chains
    from chaingraph.settings import TraversalPolicy
    from chaingraph.store import Store

    store = Store(world_store(name), read_only=True)
    engine = EvidenceGraph.from_store(store)
    graph = EvidenceGraph.from_store(store, policy=TraversalPolicy(hub_limit=None))
    datatypes = store.datatypes()
    lookups = {"values": StoreValues(store), "datatypes": datatypes,
               "labels": {**graph.labels, **store.labels(sorted(datatypes))}}
    rng = random.Random(13)
    seeds = sorted(engine.name(v) for v in range(engine.vcount()) if 4 <= engine.degree(v) <= 60)
    chains: list[Any] = []
    for seed in rng.sample(seeds, len(seeds)):
        for ranked in top_chains(engine, seed, 1, 5, 5):
            ch = ranked.chain
            chains.append(ChainPath(
                nodes=tuple(engine.name(v) for v in ch.nodes),
                properties=tuple(engine.edge_property(e) for e in ch.edges),
                directions=tuple("forward" if engine.edge_endpoints(e)[0] == a else "backward"
                                 for e, a in zip(ch.edges, ch.nodes)),
                statements=tuple(engine.edge_statement(e) for e in ch.edges)))
        if len(chains) == count:
            break
    return store, graph, lookups, chains


def chaingraph_proposals(name: str, count: int) -> Run:
    from chaingraph.propose import propose_clues

    _st, graph, lookups, chains = _proposal_setup(name, count)
    propose_clues(graph, chains[0], **lookups)  # build the array index once

    def run() -> tuple[int, dict[str, Any]]:
        got, cpu = [], []
        for c in chains:
            t0 = time.process_time()
            got.append(propose_clues(graph, c, **lookups))
            cpu.append(time.process_time() - t0)
        return len(got), {"tasks": sum(p.task is not None for p in got),
                          "cpu_ms": 1000 * statistics.median(cpu),
                          "found_by": dict(Counter(p.record.anchor_found_by for p in got if p.task)),
                          "anchor_necessary": sum(p.record.anchor_necessary for p in got if p.task),
                          "candidates": statistics.median(len(p.record.candidates) for p in got),
                          "evaluations": statistics.median(p.record.evaluations for p in got)}
    return run


def _first_pass(graph: Any, values: Any, proposal: Any) -> list[tuple[frozenset[int], Any]]:
    """The patterns of the proposal's first sequential pruning pass, in order: the full set,
    then each clue of the documented order tried against the clues kept so far (as
    chaingraph decides uniqueness; the peers must agree on every answer set)."""
    from chaingraph.patterns import evaluate
    from chaingraph.propose import chain_pattern

    rec = proposal.record
    ids = [c.id for c in rec.candidates]
    kept = frozenset(range(len(ids)))
    out = [(kept, chain_pattern(rec.candidates, kept, rec.chain))]
    for cid in rec.order:
        trial = kept - {ids.index(cid)}
        pattern = chain_pattern(rec.candidates, trial, rec.chain)
        out.append((trial, pattern))
        if evaluate(graph, pattern, target=rec.chain.nodes[-1], values=values, paths=False).unique:
            kept = trial
    return out


def _layered_sparql(pattern: Any, props: list[str]) -> str:
    """One nested ``SELECT DISTINCT`` per variable (the same answer set as the flat query)."""
    def layer(i: int) -> str:
        if i == 0:
            return f"VALUES ?x0 {{ wd:{pattern.anchor} }}" if pattern.anchor else ""
        below = f"{{ SELECT DISTINCT ?x{i - 1} WHERE {{ {layer(i - 1)} }} }}" if i > 1 else layer(0)
        st, a, b = pattern.steps[i - 1], f"?x{i - 1}", f"?x{i}"
        if st.property is None:
            step = (f"{{ {a} ?p{i} {b} }} UNION {{ {b} ?p{i} {a} }} "
                    f"VALUES ?p{i} {{ {' '.join(f'wdt:{p}' for p in props)} }}")
        else:
            s_, o_ = (a, b) if st.direction == "forward" else (b, a)
            step = f"{s_} wdt:{st.property} {o_} ."
        parts = [below, step, f"FILTER(isIRI({b}))"]
        parts += [f"{b} wdt:P31/wdt:P279* wd:{t.class_id} ." for t in pattern.types if t.variable == i]
        parts += [f"{b} wdt:{v.property} wd:{v.value.id} ." for v in pattern.values if v.variable == i]
        return " ".join(parts)
    return (f"PREFIX wd: <{ENTITY}> PREFIX wdt: <{DIRECT}> "
            f"SELECT DISTINCT ?x{pattern.k} WHERE {{ {layer(pattern.k)} }}")


def _layered_sql(pattern: Any) -> tuple[str, list[Any]]:
    """One ``SELECT DISTINCT`` CTE per variable over ``edges``/``und``/``types``."""
    params: list[Any] = []
    if pattern.anchor:
        ctes = ["l0 AS (SELECT ? AS v)"]
        params.append(pattern.anchor)
    else:
        ctes = ["l0 AS (SELECT DISTINCT a AS v FROM und)"]
    for i, st in enumerate(pattern.steps, start=1):
        if st.property is None:
            rel = "und"
        else:
            a, b = ("s", "o") if st.direction == "forward" else ("o", "s")
            rel = f"(SELECT {a} AS a, {b} AS b FROM edges WHERE p = ?)"
            params.append(st.property)
        where = []
        for t in pattern.types:
            if t.variable == i:
                where.append("e.b IN (SELECT e FROM types WHERE c = ?)")
                params.append(t.class_id)
        for v in pattern.values:
            if v.variable == i:
                where.append("e.b IN (SELECT s FROM edges WHERE p = ? AND o = ?)")
                params += [v.property, v.value.id]
        ctes.append(f"l{i} AS (SELECT DISTINCT e.b AS v FROM l{i - 1} JOIN {rel} e ON e.a = l{i - 1}.v"
                    f"{' WHERE ' + ' AND '.join(where) if where else ''})")
    return f"WITH {', '.join(ctes)} SELECT v FROM l{pattern.k}", params


def _duckdb_all(graph: Any) -> Any:
    """``edges``/``und`` of every step edge and ``types`` (P31 closed under P279*)."""
    import pyarrow as pa

    con = _duckdb(graph)
    cs = graph.class_statements
    supers = cs.get("P279", {})
    pairs = []
    for e, classes in cs.get("P31", {}).items():
        todo, seen = list(classes), set(classes)
        while todo:
            for s_ in supers.get(todo.pop(), ()):
                if s_ not in seen:
                    seen.add(s_)
                    todo.append(s_)
        pairs += [(e, c) for c in sorted(seen)]
    type_rows = pa.table({"e": [e for e, _c in pairs], "c": [c for _e, c in pairs]})  # noqa: F841
    con.execute("CREATE TABLE types AS SELECT * FROM type_rows")
    return con


def _peer_patterns(name: str, count: int) -> tuple[Any, Any, list[list[Any]]]:
    from chaingraph.propose import propose_clues

    _s, graph, lookups, chains = _proposal_setup(name, count)
    work = []
    for c in chains:
        p = propose_clues(graph, c, **lookups)
        literal = any(cl.kind == "value" and not isinstance(cl.value, str) for cl in p.record.candidates)
        if p.task is None or literal:
            continue  # the peers here translate item values only
        work.append([pat for _k, pat in _first_pass(graph, lookups["values"], p)])
    return graph, lookups, work


def chaingraph_pruning(name: str, count: int) -> Run:
    from chaingraph.patterns import evaluate

    graph, lookups, work = _peer_patterns(name, count)

    def run() -> tuple[int, dict[str, Any]]:
        n = sum(evaluate(graph, pat, values=lookups["values"], paths=False).answer_count
                for pats in work for pat in pats)
        return len(work), {"answers": n, "patterns": sum(map(len, work))}
    return run


def pyoxigraph_pruning(name: str, count: int) -> Run:
    graph, _lookups, work = _peer_patterns(name, count)
    store, props = _oxigraph(name), sorted(set(graph.graph.es["property"]))

    def run() -> tuple[int, dict[str, Any]]:
        n = sum(len(list(store.query(_layered_sparql(pat, props)))) for pats in work for pat in pats)
        return len(work), {"answers": n}
    return run


def duckdb_pruning(name: str, count: int) -> Run:
    graph, _lookups, work = _peer_patterns(name, count)
    con = _duckdb_all(graph)

    def run() -> tuple[int, dict[str, Any]]:
        n = sum(len(con.execute(*_layered_sql(pat)).fetchall()) for pats in work for pat in pats)
        return len(work), {"answers": n}
    return run


def check_pruning_agreement(name: str, count: int) -> int:
    """Every answer set of every first-pass pattern, by all three; returns how many."""
    from chaingraph.patterns import evaluate

    graph, lookups, work = _peer_patterns(name, count)
    store, con = _oxigraph(name), _duckdb_all(graph)
    props = sorted(set(graph.graph.es["property"]))
    n = 0
    for pats in work:
        for pat in pats:
            ours = set(evaluate(graph, pat, values=lookups["values"], first=10**9).answers)
            sols = store.query(_layered_sparql(pat, props))
            ox = {sol[f"x{pat.k}"].value.removeprefix(ENTITY) for sol in sols}
            rows = {r[0] for r in con.execute(*_layered_sql(pat)).fetchall()}
            assert ours == ox == rows, pat
            n += 1
    return n


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 tasks against the peers, batch of 20, 20 chains to propose for, 2 repeats")
    parser.add_argument("--propose", action="store_true", help="only the clue-proposal part")
    args = parser.parse_args(argv)
    name, peers, batch, repeat = ("codex-m", 2, 20, 2) if args.quick else ("codex-m", 5, 100, 3)
    if not args.propose:
        necessity_tables(name, peers, batch, repeat)
    chains, peer_chains = (20, 3) if args.quick else (100, 10)
    propose = measure(Case("chaingraph", f"{MODULE}:chaingraph_proposals", {"name": name, "count": chains},
                           repeat=repeat))
    x = propose.extra
    print(markdown_table(f"Clue proposal for {chains} chains (5 hops) of {name}, answer sets over every "
                         "statement", [propose], baseline="chaingraph", unit="chains"))
    print(f"* {1000 * propose.median / propose.items:.1f} ms per chain wall clock; median CPU time per "
          f"chain {x['cpu_ms']:.1f} ms (median candidate clues {x['candidates']}, median pattern "
          f"evaluations {x['evaluations']}); {x['tasks']} tasks, {x['anchor_necessary']} with a necessary "
          f"anchor (found by: {x['found_by']})\n")
    compared = check_pruning_agreement(name, peer_chains)
    print(f"Sequential pruning (first pass of each proposal): {compared} answer sets equal across "
          f"chaingraph, pyoxigraph (nested SELECT DISTINCT) and DuckDB (one DISTINCT CTE per variable).\n")
    same = {"name": name, "count": peer_chains}
    results = [measure(Case("chaingraph", f"{MODULE}:chaingraph_pruning", same, repeat=repeat)),
               measure(Case("pyoxigraph", f"{MODULE}:pyoxigraph_pruning", same, repeat=repeat)),
               measure(Case("duckdb SQL", f"{MODULE}:duckdb_pruning", same, repeat=repeat))]
    print(markdown_table(f"Sequential pruning answer sets of {peer_chains} proposals, {name}", results,
                         baseline="chaingraph", unit="chains"))
    for r in results:
        print(f"* {r.name}: {1000 * r.median / r.items:.1f} ms per chain")


def necessity_tables(name: str, peers: int, batch: int, repeat: int) -> None:
    tasks = Path(tempfile.gettempdir()) / f"chaingraph-bench-necessity-{name}-{batch}.json"
    if not tasks.exists():
        make_tasks(name, batch, tasks)
    compared, lines = check_agreement(name, str(tasks), peers)
    print(f"Answer sets equal across chaingraph, pyoxigraph and DuckDB: {compared} patterns "
          f"({peers} tasks × 11).\n")
    print("### Per task (one pass; chaingraph = the whole report, peers = the eleven answer sets)\n")
    print("| task | chain | chaingraph ms | pyoxigraph ms | duckdb ms | pyoxigraph / chaingraph |")
    print("|---|---|---:|---:|---:|---:|")
    print("\n".join(lines) + "\n")
    same = {"name": name, "tasks": str(tasks), "count": peers}
    results = [measure(Case("chaingraph", f"{MODULE}:chaingraph_reports", same, repeat=repeat)),
               measure(Case("pyoxigraph", f"{MODULE}:pyoxigraph_answers", same, repeat=repeat)),
               measure(Case("duckdb SQL", f"{MODULE}:duckdb_answers", same, repeat=repeat))]
    print(markdown_table(f"Full ablation of {peers} tasks (6 steps, 10 clues, 11 answer sets each), {name}",
                         results, baseline="chaingraph", unit="tasks"))
    for r in results:
        print(f"* {r.name}: {1000 * r.median / r.items:.1f} ms per task")
    big = measure(Case("chaingraph", f"{MODULE}:chaingraph_reports",
                       {"name": name, "tasks": str(tasks), "count": batch}, repeat=repeat))
    print()
    print(markdown_table(f"chaingraph, batch of {batch} tasks, {name}", [big], baseline="chaingraph",
                         unit="tasks"))
    print(f"* {1000 * big.median / big.items:.1f} ms per task, {big.rate:.1f} tasks/s "
          f"({big.extra['redundant']} redundant clues found)")


if __name__ == "__main__":
    main(sys.argv[1:])
