"""Real tasks over ``world/codex-s`` (hand-written fixtures: a seed, a five-hop chain, its
clues), checked through a real DuckDB store loaded from the JSON dump and the CLI, and
every ablation's answer set cross-checked with pyoxigraph on the N-Triples of the same
world: the verdicts must be what the rule gives on the SPARQL answer sets."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyoxigraph  # a test dependency: its absence must fail, not skip, these oracles
import pytest

from chaingraph.cli import cli
from chaingraph.necessity import GraphCache, decide
from chaingraph.patterns import compile_pattern, to_sparql
from chaingraph.tasks import Task, load_task
from chaingraph.values import EntityValue

WORLD = Path(__file__).parent / "fixtures" / "necessity" / "world"
FILES = sorted(WORLD.glob("*.json"))
ENTITY = "http://www.wikidata.org/entity/"
#: ablations whose SPARQL twin is too slow for the suite: x0 free before two occupation hops
#: (~10^5 bag solutions, > 30 s in pyoxigraph, 0.1 s here)
SPARQL_TOO_SLOW = {("codex-s/later-death", "kafka-1")}


@pytest.fixture(scope="module")
def world_store(codex_s_file: Path) -> Path:
    return codex_s_file


@pytest.fixture(scope="module")
def sparql(shared_data: Path) -> Any:
    store = pyoxigraph.Store()
    with gzip.open(shared_data / "world" / "codex-s.nt.gz", "rb") as f:
        store.bulk_load(f.read(), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return store


@pytest.fixture(scope="module")
def reports(world_store: Path, runner_module: Any) -> dict[str, dict[str, Any]]:
    out = runner_module.invoke(cli, ["necessity", *map(str, FILES), "--store", str(world_store),
                                     "--format", "json"])
    assert out.exit_code == 0, out.output
    return {r["task"]: r for r in json.loads(out.output)}


@pytest.fixture(scope="module")
def runner_module() -> Any:
    from click.testing import CliRunner

    return CliRunner()


def _key(term: Any, year_target: bool) -> str:
    if isinstance(term, pyoxigraph.NamedNode):
        return term.value.removeprefix(ENTITY)
    assert year_target and term.datatype.value.endswith("#dateTime")
    return str(int(term.value[:term.value.index("-", 1)]))  # the year (all CE here)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_ablation_agrees_with_sparql(path: Path, world_store: Path, sparql: Any,
                                           reports: dict[str, dict[str, Any]]) -> None:
    task = load_task(path)
    report = reports[task.id]
    cache = GraphCache(store=world_store)
    graph, _ = cache.get(task)
    cache.close()
    props = sorted(set(graph.graph.es["property"]))
    hubs = [graph.name(v) for v in range(graph.vcount()) if not graph.passable(v) and not graph.is_literal(v)]

    def answers(c: int, keep: list[int]) -> set[str]:
        pattern = compile_pattern(task, c, keep)
        year = task.components[c].target.value is not None
        rows = sparql.query(to_sparql(pattern, props, blocked=hubs))
        return {_key(row[f"x{pattern.k}"], year) for row in rows}

    every = list(range(len(task.clues)))
    for c, comp in enumerate(task.components):
        assert answers(c, every) == {comp.target.key}  # each fixture's clues single out its target
        assert report["components"][c]["full"]["unique"]
    for ablation in report["clues"]:
        if (task.id, ablation["clue"]) in SPARQL_TOO_SLOW:
            continue
        i, c = ablation["index"], task.clues[ablation["index"]].component
        want = answers(c, [j for j in every if j != i])
        got = ablation["answers"]
        assert got["count"] == len(want)
        assert list(got["first"]) == sorted(want, key=lambda k: (not k.startswith("Q"), int(k[1:]) if
                                                                 k.startswith("Q") else 0, k))[:10]
        target = task.components[c].target.key
        verdict, _ = decide(graph_unique=want == {target}, answers=len(want), target_in=target in want,
                            base_ok=True)
        assert ablation["verdict"] == verdict


def test_real_tasks_show_shortcuts_redundancy_and_fusion(reports: dict[str, dict[str, Any]]) -> None:
    silverman = reports["codex-s/silverman-religion"]
    assert silverman["text_only_shortcut"]  # the text alone pins Christianity in this graph
    lewis = reports["codex-s/lewis-death-year"]
    assert not lewis["text_only_shortcut"] and lewis["difficulty"] == "L2"
    fused = reports["codex-s/later-death"]
    assert {c["component"]: c["determined_without"] for c in fused["component_ablations"]} == {
        "lewis": False, "kafka": True}  # 1924 is not the later year: that chain does not matter
    assert fused["evidence_steps"] == 10 and fused["difficulty"] == "L3"


def test_witness_paths_are_real_statements(world_store: Path, reports: dict[str, dict[str, Any]]) -> None:
    from chaingraph.store import Store

    checked = 0
    with Store(world_store, read_only=True) as store:
        for report in reports.values():
            for ablation in report["clues"]:
                path = ablation["answers"]["shortest_path"]
                if path is None:
                    continue
                for (prop, direction, sid), a, b in zip(path["steps"], path["nodes"], path["nodes"][1:]):
                    st = store.statement(sid)
                    assert st is not None and st.property == prop
                    subject, other = (a, b) if direction == "forward" else (b, a)
                    assert st.subject == subject
                    if isinstance(st.value, EntityValue):
                        assert st.value.id == other
                    checked += 1
    assert checked > 0  # some ablation has a witness path


def test_one_task_model_for_every_fixture() -> None:
    assert FILES
    for path in FILES:
        task = load_task(path)
        assert isinstance(task, Task) and all(c.k == 5 for c in task.components)
