"""Alternative routes on real data (``world/codex-s``): every simple route of at most three
hops that the evidence graph holds from the anchor of ``silverman-religion`` to its target
(Christianity) is claimed by an agent and adjudicated; each verdict must be what pyoxigraph
says on the N-Triples of the same world — credited exactly when the route's pattern (anchor
bound, the route's steps, the target's type clue) has the target as its only SPARQL answer.
One route is credited: Silverman speaks English, the official language of Malta, whose
religion is Christianity."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph  # a test dependency: its absence must fail, not skip, this oracle
import pytest
from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.graph import EvidenceGraph
from chaingraph.necessity import GraphCache
from chaingraph.patterns import PathPattern, Step, TypeConstraint, to_sparql
from chaingraph.scoring import TaskScorer, score_trajectory
from chaingraph.tasks import Task, load_task
from chaingraph.trajectory import parse_trajectory

TASK = Path(__file__).parent / "fixtures" / "necessity" / "world" / "silverman-religion.json"
ENTITY = "http://www.wikidata.org/entity/"
MALTA = ("Q229013", "Q1860", "Q233", "Q5043")


@pytest.fixture(scope="module")
def world(codex_s_file: Path) -> Path:
    return codex_s_file


@pytest.fixture(scope="module")
def scored(world: Path) -> Iterator[tuple[Task, EvidenceGraph, TaskScorer]]:
    task = load_task(TASK)
    cache = GraphCache(store=world)
    graph, values = cache.get(task)
    yield task, graph, TaskScorer(task, graph, values, values.store)  # type: ignore[attr-defined]
    cache.close()


@pytest.fixture(scope="module")
def sparql(shared_data: Path) -> Any:
    store = pyoxigraph.Store()
    with gzip.open(shared_data / "world" / "codex-s.nt.gz", "rb") as f:
        store.bulk_load(f.read(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return store


def routes(graph: EvidenceGraph, source: str, target: str, hops: int) -> list[tuple[list[str], list[Any]]]:
    """Every simple path of at most ``hops`` step edges (hubs only at the ends)."""
    out: list[tuple[list[str], list[Any]]] = []
    goal = graph.vertex(target)

    def walk(path: list[int], steps: list[tuple[str, str]]) -> None:
        v = path[-1]
        if v == goal:
            out.append(([graph.name(x) for x in path], list(steps)))
            return
        if len(steps) == hops or (len(path) > 1 and not graph.passable(v)):
            return
        for u, e, fwd in graph.neighbours(v):
            if u not in path:
                walk([*path, u], [*steps, (graph.edge_property(e), "forward" if fwd else "backward")])

    walk([graph.vertex(source)], [])
    return out


def test_every_claimed_route_is_adjudicated_as_sparql_says(scored: tuple[Task, EvidenceGraph, TaskScorer],
                                                           sparql: Any) -> None:
    task, graph, sc = scored
    k = task.components[0].k
    target_type = next(c.class_ for c in task.clues if c.kind == "type" and c.variable == k)
    assert target_type is not None
    hubs = [graph.name(v) for v in range(graph.vcount()) if not graph.passable(v) and not graph.is_literal(v)]
    props = sorted(set(graph.graph.es["property"]))
    found = routes(graph, "Q229013", "Q5043", 3)
    assert len(found) > 50
    credited = []
    for nodes, steps in found:
        events = [{"kind": "claim", "subject": nodes[i], "relation": p, "object": nodes[i + 1],
                   "direction": d} for i, (p, d) in enumerate(steps)]
        item = score_trajectory(task, parse_trajectory({"task": task.id, "events": events}), scorer=sc)
        (route,) = item.routes
        assert route.nodes == tuple(nodes) and route.sufficient and route.non_circular
        pattern = PathPattern(tuple(Step(p, d) for p, d in steps), anchor=nodes[0],  # type: ignore[arg-type]
                              types=(TypeConstraint(len(steps), target_type),))
        answers = {str(s[f"x{len(steps)}"].value).removeprefix(ENTITY)
                   for s in sparql.query(to_sparql(pattern, props, blocked=hubs))}
        assert "Q5043" in answers  # the route reaches the target in the SPARQL world too
        assert route.target_preserving == (answers == {"Q5043"}), (nodes, steps, sorted(answers)[:5])
        assert route.credited == (answers == {"Q5043"})
        if route.credited:
            credited.append(tuple(nodes))
            assert item.metrics.nc == item.metrics.rc == 1.0  # the route replaced the reference
        else:
            assert route.reasons[0].startswith("not target-preserving: with the task's other clues the route "
                                               f"has {len(answers)} answers")
    assert credited == [MALTA]


def test_the_cli_scores_the_real_task_from_its_store(world: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    malta = [{"kind": "claim", "subject": "Q229013", "relation": "P1412", "object": "Q1860"},
             {"kind": "claim", "subject": "Q1860", "relation": "P37", "object": "Q233",
              "direction": "backward"},
             {"kind": "claim", "subject": "Q233", "relation": "P140", "object": "Q5043"}]
    reference = [{"kind": "claim", "subject": s["source"], "relation": s["property"], "object": s["target"],
                  "direction": s.get("direction", "forward")}
                 for s in json.loads(TASK.read_text())["components"][0]["steps"]]
    runs.write_text("\n".join(json.dumps({"task": "codex-s/silverman-religion", "id": name, "events": ev})
                              for name, ev in (("malta", malta), ("reference", reference[:3]))))
    out = CliRunner().invoke(cli, ["score", str(TASK), str(runs), "--store", str(world), "--format", "json"])
    assert out.exit_code == 0, out.output
    malta_item, ref_item = json.loads(out.output)["items"]
    assert malta_item["routes"][0]["credited"] and malta_item["metrics"]["rc"] == 1.0
    # three of the five reference statements: RC = 3/5; nodes x0..x3 of six: NC = 4/6
    assert (ref_item["metrics"]["rc"], ref_item["metrics"]["nc"]) == (0.6, pytest.approx(4 / 6))


def test_a_value_target_matches_a_claimed_value_at_the_target_precision(world: Path) -> None:
    # lewis-death-year: ... -P737-> C. S. Lewis -P570-> 1963 (year); the agent claims the day
    task = load_task(TASK.parent / "lewis-death-year.json")
    cache = GraphCache(store=world)
    graph, values = cache.get(task)
    sc = TaskScorer(task, graph, values, values.store)  # type: ignore[attr-defined]
    steps = task.components[0].steps
    events: list[dict[str, Any]] = [
        {"kind": "claim", "subject": s.source, "relation": s.property, "object": s.target,
         "direction": s.direction} for s in steps[:-1]]
    day = {"kind": "time", "time": "+1963-11-22T00:00:00Z", "precision": 11}
    events.append({"kind": "claim", "subject": "Q9204", "relation": "P570", "value": day})
    events.append({"kind": "claim", "subject": "Q9204", "relation": "P570",
                   "value": {**day, "time": "+1964-11-22T00:00:00Z"}})
    item = score_trajectory(task, parse_trajectory({"task": task.id, "events": events}), scorer=sc)
    cache.close()
    # six nodes (x0..x4 and the year), five statements, all claimed; the 1964 claim is unsupported
    assert (item.metrics.nc, item.metrics.rc) == (1.0, 1.0)
    assert (item.metrics.claims, item.metrics.supported) == (6, 5)
    assert item.claims[-1].reason == "the evidence holds no statement Q9204 P570 value:1964-11-22"
