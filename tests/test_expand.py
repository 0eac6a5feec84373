"""``expand``: collect, enumerate, rank, record — library, CLI in-process and as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from chaingraph.chains import chain_ids, enumerate_chains
from chaingraph.cli import cli
from chaingraph.errors import InvalidId, InvalidInput, UnknownEntity
from chaingraph.expand import evidence_graph, expand, explain_path
from chaingraph.graph import EvidenceGraph
from chaingraph.records import ChainRecord
from chaingraph.settings import ChainBounds, CrawlLimits, TraversalPolicy
from chaingraph.sources.loaders import load
from chaingraph.store import Store

WORLD = Path(__file__).parent / "fixtures" / "chains" / "world.json"
HUB5 = TraversalPolicy(hub_limit=5)


def record_ids(rec: ChainRecord) -> tuple[str, ...]:
    return (*(x for s in rec.steps for x in (s.source, s.property)), rec.target)


@pytest.fixture(scope="module")
def world_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The story world in a real DuckDB file."""
    path = tmp_path_factory.mktemp("expand") / "world.duckdb"
    with Store(path) as s:
        load([WORLD], s)
    return path


@pytest.fixture(scope="module")
def full_world() -> Iterator[EvidenceGraph]:
    with Store() as s:
        load([WORLD], s)
        yield EvidenceGraph.from_store(s, policy=HUB5)


def test_bundled_sample_is_the_default_source() -> None:
    out = expand(["Q42"], top=3)
    assert [r.seed for r in out.records] == ["Q42"] * 3
    best = out.records[0]
    assert best.k >= 5 and best.nodes[0].label == "Douglas Adams" and best.nodes[0].familiarity == 129
    assert [r.s_div for r in out.records] == sorted((r.s_div for r in out.records), reverse=True)
    assert best.crosswalk_version and all(s.relation_class for s in best.steps)
    assert best.parameters.source == "bundled:sample/douglas-adams.json"
    assert best.parameters.limits == CrawlLimits() and best.parameters.bounds == ChainBounds(top=3)
    assert best.parameters.policy == TraversalPolicy()
    assert out.collected is not None and out.collected.entities_expanded > 0
    step = best.steps[0]
    assert step.statement_id.startswith("q42$") or step.statement_id.startswith("Q42$")
    assert step.provenance and step.provenance[0].kind
    assert out.seeds[0].chains == 3


def test_records_round_trip_through_json() -> None:
    out = expand(["Q42"], top=5)
    assert len(out.records) == 5  # the loop below must check something
    for rec in out.records:
        again = ChainRecord.model_validate_json(rec.model_dump_json())
        assert again == rec
        assert rec.k == len(rec.steps) == len(rec.nodes) - 1
        assert all(a.target == b.source for a, b in zip(rec.steps, rec.steps[1:]))


def test_store_file_source_with_the_collector_equals_the_full_world(world_file: Path,
                                                                    full_world: EvidenceGraph) -> None:
    out = expand(["Q1001"], store=world_file, policy=HUB5, top=50)
    got = {record_ids(r) for r in out.records}
    want = {chain_ids(full_world, c) for c in enumerate_chains(full_world, "Q1001")}
    assert got == want and len(out.records) == 8
    assert out.records[0].parameters.source == str(world_file)


def test_neighbour_cap_applies_to_store_sources(world_file: Path) -> None:
    full = expand(["Q1001"], store=world_file, policy=HUB5, top=50)
    with Store() as target:
        capped = expand(["Q1001"], store=world_file, policy=HUB5, top=50, target=target,
                        limits=CrawlLimits(max_neighbours=2, select=1))
        assert capped.graph_edges < full.graph_edges
        assert capped.collected is not None and capped.collected.max_neighbours == 2
        # the records are exactly the valid chains of what was collected
        g = EvidenceGraph.from_store(target, policy=HUB5)
        want = {chain_ids(g, c) for c in enumerate_chains(g, "Q1001")}
    got = {record_ids(r) for r in capped.records}
    assert got == want and got
    assert all(r.parameters.limits == CrawlLimits(max_neighbours=2, select=1) for r in capped.records)


def test_no_collect_uses_the_whole_store(world_file: Path) -> None:
    out = expand(["Q1001"], store=world_file, policy=HUB5, collect=False, top=50)
    assert len(out.records) == 8 and out.collected is None
    assert out.records[0].parameters.limits is None


def test_literal_ends_carry_their_value(world_file: Path) -> None:
    out = expand(["Q1001"], store=world_file, top=50, collect=False,
                 policy=TraversalPolicy(hub_limit=5, include_literals=True))
    ends = [r.nodes[-1] for r in out.records if r.nodes[-1].literal]
    assert ends and all(n.type == "Value" and n.value is not None for n in ends)
    assert {n.value.model_dump()["time"] for n in ends} == {"+1892-01-03T00:00:00Z", "+1937-09-21T00:00:00Z"}


def test_explain_path_collects_like_expand(world_file: Path) -> None:
    why = explain_path(["Q1001", "Q1003", "Q1004", "Q1006", "Q1008", "Q1010"], store=world_file, policy=HUB5)
    assert why.reason == "shortcut"
    ok = explain_path(["Q1001", "Q1002", "Q1005", "Q1007", "Q1009", "Q1011"], store=world_file, policy=HUB5)
    assert ok.valid


def test_bad_input_is_refused_before_work(world_file: Path) -> None:
    with pytest.raises(InvalidId, match="Q12x"):
        expand(["Q12x"])
    with pytest.raises(InvalidInput, match=r"^max_hops: 5 is smaller than min_hops \(6\)"):
        expand(["Q42"], min_hops=6, max_hops=5)
    with pytest.raises(InvalidInput, match=r"^top: ") as caught:
        expand(["Q42"], top=0)
    assert caught.value.parameter == "top"
    with pytest.raises(InvalidInput, match=r"^limits: collect=False"):
        expand(["Q1001"], store=world_file, collect=False, limits=CrawlLimits(select=1))
    with pytest.raises(InvalidInput, match="no such store"):
        expand(["Q42"], store=world_file.parent / "missing.duckdb")
    with pytest.raises(InvalidInput, match="not both"):
        expand(["Q42"], store=world_file, endpoint="http://127.0.0.1:1/sparql")
    with pytest.raises(UnknownEntity, match="Q999999"):
        expand(["Q999999"], store=world_file)
    with pytest.raises(InvalidInput, match="at least one"):
        expand([])


def test_evidence_graph_closes_what_it_opened(world_file: Path) -> None:
    with evidence_graph(["Q1001"], store=world_file, policy=HUB5) as hood:
        assert "Q1011" in hood.graph
    # the file is free again: a writer can open it
    with Store(world_file) as s:
        assert s.counts()["statements"] == 51


# -- the command line --------------------------------------------------------------------------
def test_cli_jsonl(runner: CliRunner) -> None:
    res = runner.invoke(cli, ["expand", "--seed", "Q42", "--top", "2", "--format", "jsonl"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    recs = [ChainRecord.model_validate_json(ln) for ln in lines]
    assert len(recs) == 2 and recs[0].seed == "Q42"
    assert "Q42: 2 chain(s)" in res.stderr
    assert "enumerating" not in res.stderr  # progress only on a terminal or when asked
    shown = runner.invoke(cli, ["expand", "--seed", "Q42", "--top", "1", "--format", "jsonl", "--progress"])
    assert shown.exit_code == 0 and "enumerating chains of 5-7 hops from Q42" in shown.stderr


def test_cli_table_and_policy_options(runner: CliRunner, world_file: Path) -> None:
    res = runner.invoke(cli, ["expand", "--seed", "Q1001", "--store", str(world_file), "--hub-limit", "5",
                              "--format", "table", "--exclude-property", "P460"])
    assert res.exit_code == 0, res.output
    # the table wraps labels ("Difference Engine" never appears on one line): look for the id
    assert "Tolkien (Q1011)" in res.stdout and "(Q1017)" not in res.stdout
    assert "Q1001: 6 chain(s)" in res.stderr


def test_cli_explain(runner: CliRunner, world_file: Path) -> None:
    res = runner.invoke(cli, ["expand", "--store", str(world_file), "--hub-limit", "5",
                              "--explain", "Q1001,Q1003,Q1004,Q1006,Q1008,Q1010"])
    assert res.exit_code == 0, res.output
    assert "shortcut" in res.stdout and "shorter path: Q1001 P19 Q1002 P19 Q1012 P98 Q1010" in res.stdout
    path = "Q1001,P19,Q1002,Q1005,Q1007,Q1009,P1416,Q1011"
    ok = runner.invoke(cli, ["expand", "--store", str(world_file), "--hub-limit", "5", "--explain", path])
    assert ok.exit_code == 0 and ok.stdout.startswith("valid: Q1001 -P19- Q1002 -P206- Q1005")
    # without the hub limit the United Kingdom is a shortcut to the University of Oxford
    hub = runner.invoke(cli, ["expand", "--store", str(world_file), "--hub-limit", "0", "--explain", path])
    assert "shorter path: Q1001 P19 Q1002 P17 Q1015 P17 Q1009" in hub.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--seed", "Q12x"], "--seed: 'Q12x' is not a Wikidata id"),
    (["--seed", "Q42", "--min-hops", "6", "--max-hops", "5"], "--max-hops: 5 is smaller than min_hops (6)"),
    (["--seed", "Q42", "--top", "0"], "--top: Input should be greater than or equal to 1"),
    ([], "give at least one --seed"),
    (["--seed", "Q42", "--exclude-property", "X1"], "--exclude-property"),
    (["--explain", "P19,Q42"], "a path starts with its seed"),
])
def test_cli_errors_are_one_line(runner: CliRunner, args: list[str], message: str) -> None:
    res = runner.invoke(cli, ["expand", *args])
    assert res.exit_code == 2
    assert message in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_cli_as_a_subprocess() -> None:
    proc = subprocess.run([sys.executable, "-m", "chaingraph", "expand", "--seed", "Q42", "--top", "1"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout.splitlines()[0])  # not a terminal: jsonl by default
    assert rec["seed"] == "Q42" and rec["k"] >= 5
    assert rec["nodes"][0]["label"] == "Douglas Adams"
    bad = subprocess.run([sys.executable, "-m", "chaingraph", "expand", "--seed", "Q0x"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr


def test_chain_schema_is_published(runner: CliRunner) -> None:
    res = runner.invoke(cli, ["schema", "chain"])
    assert res.exit_code == 0
    schema = json.loads(res.stdout)
    assert {"seed", "nodes", "steps", "k", "s_div", "crosswalk_version"} <= set(schema["properties"])
