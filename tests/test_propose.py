"""Sequential pruning, the hub rule and clue proposal on small hand-written worlds (DESIGN §6).

The pruning world: Ann (Q1) wrote a book (Q2) set in two places — Lyon (Q3, a city in
France) and a farm (Q7). Another author (Q8) wrote a book (Q9) set in Nice (Q10, a city
in France). The clue "x2 is a city" and the clue "x2 is in France" each single out Lyon
when the other is there, so each is redundant alone — but not both together.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chaingraph.cli import cli
from chaingraph.embed import embed_evidence
from chaingraph.graph import EvidenceGraph
from chaingraph.lookups import EmbeddedValues
from chaingraph.minimal import largest_removal, prune_sequential, removal_order
from chaingraph.necessity import check_necessity
from chaingraph.patterns import compile_pattern, evaluate
from chaingraph.propose import ChainPath, propose_clues, resolve_path
from chaingraph.settings import TraversalPolicy
from chaingraph.store import Batch, Store, entity_row, statement_row
from chaingraph.tasks import Task
from chaingraph.values import EntityValue, TimeValue

EDGES = [("s1", "Q1", "P50", "Q2"), ("s2", "Q2", "P840", "Q3"), ("s3", "Q2", "P840", "Q7"),
         ("s4", "Q3", "P17", "Q142"), ("s5", "Q3", "P31", "Q515"), ("s6", "Q7", "P31", "Q131596"),
         ("s7", "Q8", "P50", "Q9"), ("s8", "Q9", "P840", "Q10"), ("s9", "Q10", "P31", "Q515"),
         ("s10", "Q10", "P17", "Q142")]


def pruning_task(**extra: Any) -> Task:
    return Task.model_validate({
        "id": "jointly-necessary", "anchors": [{"entity": "Q1"}], "target": {"entity": "Q3"},
        "components": [{"anchor": "Q1", "target": {"entity": "Q3"},
                        "steps": [{"property": "P50", "target": "Q2"},
                                  {"property": "P840", "target": "Q3"}]}],
        "clues": [{"kind": "anchor"}, {"kind": "relation", "step": 1}, {"kind": "relation", "step": 2},
                  {"kind": "type", "variable": 2, "class": "Q515"},
                  {"kind": "value", "variable": 2, "property": "P17", "value": "Q142"}],
        "evidence": {"edges": EDGES}, **extra})


def unique(task: Task, kept: list[int]) -> bool:
    graph = EvidenceGraph.from_edges(task.evidence.edges if task.evidence else (),
                                     policy=TraversalPolicy(hub_limit=None))
    return evaluate(graph, compile_pattern(task, 0, kept), target="Q3").unique


def test_two_clues_each_redundant_alone_are_not_both_removed() -> None:
    task = pruning_task()
    report = check_necessity(task)
    assert {a.clue: a.verdict for a in report.clues} == {
        "c1": "necessary", "c2": "redundant", "c3": "redundant", "c4": "redundant", "c5": "redundant"}
    assert not unique(task, [0, 1, 2])  # without both the type and the value: Lyon and the farm
    comp = report.components[0]
    assert comp.order == ("c5", "c4", "c2", "c3")  # item value, type, relations (documented order)
    assert comp.removed == ("c5", "c2", "c3") and comp.kept == ("c1", "c4")
    assert report.pruned_unique and comp.pruned.unique and report.evidence_steps == 2
    kept = [0, 3]
    assert unique(task, kept)
    for j in kept:  # minimal: every remaining clue is necessary within the pruned set
        assert not unique(task, [i for i in kept if i != j])


def test_minimum_search_proves_the_smallest_set() -> None:
    report = check_necessity(pruning_task(), minimum=True)
    comp = report.components[0]
    assert comp.minimum_proven and comp.minimum is not None and len(comp.minimum) == 2
    task = pruning_task()
    sizes = [len(s) for n in range(1, 6) for s in itertools.combinations(range(5), n)
             if unique(task, list(s))]
    assert min(sizes) == 2  # brute force agrees


def test_minimum_search_stops_at_its_budget() -> None:
    best = largest_removal([1, 2, 3, 4], frozenset(range(5)), lambda kept: 0 in kept, budget=3)
    assert not best.proven and best.evaluations == 3


def test_sequential_pruning_matches_brute_force_minimality() -> None:
    needs = [{0, 1, 4}, {0, 2, 3}, {0, 5}]
    clues = list(range(6))

    def ok(kept: frozenset[int]) -> bool:
        return any(n <= kept for n in needs)

    for order in itertools.permutations([1, 2, 3, 4, 5]):
        r = prune_sequential(clues, order, ok)
        assert ok(frozenset(r.kept))
        assert all(not ok(frozenset(r.kept) - {j}) for j in r.kept)


def test_removal_order_is_values_types_relations_anchor() -> None:
    task = pruning_task()
    assert removal_order(task.clues) == (4, 3, 1, 2, 0)


# -- the hub rule -------------------------------------------------------------------
def test_a_hub_on_the_own_chain_is_named_and_no_level_is_reported() -> None:
    task = pruning_task()  # Q2 has 3 step edges
    blocked = check_necessity(task, hub_limit=2)
    assert blocked.policy["hub_limit"] == 2
    assert any("x1 Q2 has 3 step edges > hub limit 2" in n for n in blocked.notes)
    assert blocked.evidence_steps is None and blocked.difficulty is None
    assert all(a.verdict == "review" for a in blocked.clues)
    free = check_necessity(task)
    assert free.policy["hub_limit"] is None and free.evidence_steps == 2 and free.difficulty == "L1"
    asked = check_necessity(pruning_task(policy={"hub_limit": 2}))  # the task's own policy field
    assert asked.evidence_steps is None and asked.policy["hub_limit"] == 2
    lifted = check_necessity(pruning_task(policy={"hub_limit": 2}), hub_limit=None)
    assert lifted.evidence_steps == 2


def test_hub_limit_flag_on_the_command(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(pruning_task().model_dump_json(by_alias=True))
    out = CliRunner().invoke(cli, ["necessity", str(path), "--hub-limit", "2", "--format", "json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["policy"]["hub_limit"] == 2 and report["evidence_steps"] is None
    bad = CliRunner().invoke(cli, ["necessity", str(path), "--hub-limit", "many"])
    assert bad.exit_code == 2 and "--hub-limit" in bad.output


# -- clue proposal ------------------------------------------------------------------
def world() -> tuple[EvidenceGraph, EmbeddedValues]:
    born = TimeValue.make(1901, 5, 4, precision=11)
    graph = EvidenceGraph.from_edges(EDGES, policy=TraversalPolicy(hub_limit=None),
                                     literals=[("l1", "Q3", "P571")])
    return graph, EmbeddedValues([("l1", "Q3", "P571", born),
                                  *((sid, s, p, EntityValue(id=o)) for sid, s, p, o in EDGES)])


def test_proposal_is_minimal_keeps_the_anchor_and_passes_necessity() -> None:
    graph, values = world()
    chain = resolve_path(graph, ["Q1", "Q2", "Q3"])
    assert chain.properties == ("P50", "P840") and chain.directions == ("forward", "forward")
    got = propose_clues(graph, chain, values=values)
    assert got.task is not None and got.record.anchor_necessary
    ids = [c.id for c in got.record.candidates]
    assert {"anchor", "step1", "step2", "type2:Q515", "value2:P17=Q142", "value2:P571=1901"} <= set(ids)
    assert "value1:P840=Q3" not in ids  # never a value clue naming a chain node (the target here)
    kinds = {c.id: c.kind for c in got.task.clues}
    assert kinds["anchor"] == "anchor"
    report = check_necessity(embed_evidence(graph, got.task, values))
    assert report.necessary == tuple(c.id for c in got.task.clues)  # every clue necessary
    assert not report.text_only_shortcut and report.difficulty == got.record.difficulty


def test_a_node_with_no_literal_statements_gets_no_literal_clues() -> None:
    graph, values = world()
    got = propose_clues(graph, resolve_path(graph, ["Q8", "Q9", "Q10"]), values=values)
    literal = [c for c in got.record.candidates if c.kind == "value" and not isinstance(c.value, str)]
    assert literal == []  # Nice has no literal statement in this world
    assert got.task is not None


def test_no_clue_set_makes_the_target_unique() -> None:
    graph = EvidenceGraph.from_edges([("s1", "Q1", "P50", "Q2"), ("s2", "Q1", "P50", "Q3"),
                                      ("s3", "Q2", "P31", "Q5"), ("s4", "Q3", "P31", "Q5")],
                                     policy=TraversalPolicy(hub_limit=None))
    got = propose_clues(graph, resolve_path(graph, ["Q1", "Q2"]))
    assert got.task is None
    assert got.cannot is not None and "no clue set makes Q2 the unique answer" in got.cannot
    assert "Q3" in got.cannot


def test_anchor_that_cannot_be_necessary_is_flagged_and_kept() -> None:
    # Q1 wrote Q2 and Q4; only the type tells them apart, and Q2 is the only Q5 in the world:
    # every clue set that singles out Q2 does so without the anchor too
    graph = EvidenceGraph.from_edges([("s1", "Q1", "P50", "Q2"), ("s2", "Q1", "P50", "Q4"),
                                      ("s3", "Q2", "P31", "Q5")], policy=TraversalPolicy(hub_limit=None))
    got = propose_clues(graph, resolve_path(graph, ["Q1", "Q2"]))
    assert got.record.search_proven
    assert got.task is not None and got.task.anchor_necessary is False
    assert got.task.anchor_reason and "text alone" in got.task.anchor_reason
    assert got.task.clues[0].kind == "anchor"
    report = check_necessity(got.task, graph)
    assert report.text_only_shortcut and report.redundant == ("anchor",)


def test_either_direction_where_a_property_links_both_ways() -> None:
    graph = EvidenceGraph.from_edges([("s1", "Q1", "P3373", "Q2"), ("s2", "Q2", "P3373", "Q1"),
                                      ("s3", "Q2", "P19", "Q3")], policy=TraversalPolicy(hub_limit=None))
    chain = resolve_path(graph, ["Q1", "P3373", "Q2", "Q3"])
    assert chain.directions[0] == "forward" and chain.statements[0] == "s1"
    backward = ChainPath(nodes=("Q1", "Q2", "Q3"), properties=("P3373", "P19"),
                         directions=("backward", "forward"), statements=("s2", "s3"))
    got = propose_clues(graph, backward)
    assert got.task is not None and got.task.components[0].steps[0].direction == "backward"


def test_a_path_without_statements_is_refused() -> None:
    graph, _ = world()
    with pytest.raises(Exception, match="no P19 statement links Q1 and Q2"):
        resolve_path(graph, ["Q1", "P19", "Q2"])
    with pytest.raises(Exception, match="class property"):
        resolve_path(graph, ["Q3", "P31", "Q515"])


def test_proposal_is_deterministic() -> None:
    graph, values = world()
    chain = resolve_path(graph, ["Q1", "Q2", "Q3"])
    assert propose_clues(graph, chain, values=values) == propose_clues(graph, chain, values=values)


# -- the command --------------------------------------------------------------------
@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    rows = [statement_row(sid, s, p, EntityValue(id=o)) for sid, s, p, o in EDGES]
    rows += [statement_row("x1", "Q11", "P50", EntityValue(id="Q12")),
             statement_row("x2", "Q11", "P50", EntityValue(id="Q13"))]
    with Store(path) as store:
        store.write(Batch(statements=rows, entities=[entity_row("Q1", "Ann"), entity_row("Q3", "Lyon")]))
    return path


def test_task_command_prints_a_task_that_necessity_accepts(store_file: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["task", "--path", "Q1,P50,Q2,Q3", "--store", str(store_file)])
    assert out.exit_code == 0, out.output
    task = json.loads(out.output)
    assert task["schema_version"] == "chaingraph.task/1"
    assert task["target"] == {"entity": "Q3", "label": "Lyon"}
    (tmp_path / "t.json").write_text(out.output)
    rep = CliRunner().invoke(cli, ["necessity", str(tmp_path / "t.json"), "--format", "json", "--strict"])
    assert rep.exit_code == 0, rep.output


def test_task_command_cannot(store_file: Path) -> None:
    out = CliRunner().invoke(cli, ["task", "--path", "Q11,Q12", "--store", str(store_file)])
    assert out.exit_code == 1
    assert out.output.strip().startswith("cannot: no clue set makes Q12 the unique answer")
    assert len(out.output.strip().splitlines()) == 1


def test_task_command_reads_chain_records(store_file: Path, tmp_path: Path) -> None:
    from chaingraph.records import ChainNode, ChainRecord, ChainStep

    def record(nodes: list[str], props: list[str], sids: list[str]) -> str:
        steps = tuple(ChainStep(property=p, direction="forward", statement_id=sid, source=a, target=b)
                      for p, sid, a, b in zip(props, sids, nodes, nodes[1:]))
        return ChainRecord(seed=nodes[0], nodes=tuple(ChainNode(id=n) for n in nodes), k=len(props),
                           s_div=0.0, crosswalk_version="test", steps=steps).model_dump_json()

    chains = tmp_path / "chains.jsonl"
    chains.write_text(record(["Q1", "Q2", "Q3"], ["P50", "P840"], ["s1", "s2"]) + "\n"
                      + record(["Q11", "Q12"], ["P50"], ["x1"]) + "\n")
    out = CliRunner().invoke(cli, ["task", "--chain", str(chains), "--store", str(store_file),
                                   "--embed-evidence"])
    assert out.exit_code == 1
    printed = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(printed) == 1 and printed[0]["evidence"]["edges"]
    assert "chain 2 (Q11 → Q12): cannot:" in out.stderr and "1 of 2 chain(s)" in out.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    out = CliRunner().invoke(cli, ["task", "--chain", str(bad), "--store", str(store_file)])
    assert out.exit_code == 2 and "line 1 is not a chain record" in out.output


def test_cached_layers_give_the_answer_sets_of_evaluate() -> None:
    from chaingraph.propose import _constraint, _Layers, candidate_clues, chain_pattern

    graph, values = world()
    chain = resolve_path(graph, ["Q1", "Q2", "Q3"])
    clues = candidate_clues(graph, chain, values)
    constraints = {i: _constraint(c) for i, c in enumerate(clues) if c.kind in ("type", "value")}
    layers = _Layers(graph, chain, clues, constraints, values)
    outcomes = set()
    for n in range(len(clues) + 1):
        for kept in map(frozenset, itertools.combinations(range(len(clues)), n)):
            r = evaluate(graph, chain_pattern(clues, kept, chain), target="Q3", values=values)
            want = 1 if r.unique else 0 if not r.target_in else r.answer_count
            assert layers.count(kept) == want, kept
            outcomes.add(want)
    assert {1, 2} <= outcomes  # both unique and ambiguous subsets were compared
