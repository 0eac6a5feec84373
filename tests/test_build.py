"""``chaingraph build`` on the bundled sample and on bad seed files: seed files in three
formats, name resolution (a duplicate name, an unknown one), the output files and the
funnel, refusals with one-line errors naming the line."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from chaingraph.build import read_seeds, resolve_names
from chaingraph.build.corpus import DEFAULT_MAX_FAMILIARITY, FUNNEL, CorpusTask
from chaingraph.build.seeds import pick
from chaingraph.cli import cli
from chaingraph.errors import InvalidInput
from chaingraph.resources import data_file
from chaingraph.store import Store


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from chaingraph.sources.loaders import load

    path = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    with Store(path) as store:
        load([data_file("sample/douglas-adams.json")], store)
    return path


def test_seed_files_in_three_formats(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("# comment\nQ42\n\nq350\nDouglas Adams\nQ42\n")
    (tmp_path / "s.csv").write_text("name,note\nDouglas Adams,x\nQ350,y\n")
    (tmp_path / "s.jsonl").write_text('{"qid": "Q42"}\n"Douglas Adams"\n')
    assert [(s.line, s.text, s.qid) for s in read_seeds(tmp_path / "s.txt")] == [
        (2, "Q42", "Q42"), (4, "q350", "Q350"), (5, "Douglas Adams", None)]
    assert [(s.line, s.text) for s in read_seeds(tmp_path / "s.csv")] == [(2, "Douglas Adams"), (3, "Q350")]
    assert [(s.line, s.text) for s in read_seeds(tmp_path / "s.jsonl")] == [(1, "Q42"), (2, "Douglas Adams")]


@pytest.mark.parametrize(("name", "content", "where"), [
    ("empty.txt", b"", "no seeds"),
    ("comments.txt", b"# only a comment\n\n", "no seeds"),
    ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "line 1: binary data"),
    ("latin1.txt", b"Q42\nQ350\nCaf\xe9\n", "line 3: not UTF-8"),
    ("junk.txt", b"Q42\nDouglas Adams\nQ1\x07bell\n", "line 3:"),
    ("junk.jsonl", b'{"qid": "Q42"}\n{"qid": \n', "line 2: not JSON"),
    ("nokey.jsonl", b'{"qid": "Q42"}\n{"colour": "red"}\n', "line 2: no seed"),
    ("short.csv", b"seed,note\nQ42,a\n,\n\"x\"\n", None),
])
def test_bad_seed_files_name_the_line(tmp_path: Path, name: str, content: bytes, where: str | None) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    if where is None:  # a blank CSV row is skipped, a one-column row is a name
        assert [s.text for s in read_seeds(path)] == ["Q42", "x"]
        return
    with pytest.raises(InvalidInput) as err:
        read_seeds(path)
    assert where in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_seed_file_on_the_command_is_one_line_exit_2(tmp_path: Path, sample_store: Path) -> None:
    bad = tmp_path / "seeds.txt"
    bad.write_bytes(b"Q42\nQ350\n\x01\x02junk\n")
    args = ["build", str(bad), "--store", str(sample_store), "--out", str(tmp_path / "o")]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: SEEDS: ") and "line 3" in lines[0], out.output
    assert "Traceback" not in out.output


def test_names_resolve_through_labels_and_aliases(sample_store: Path, tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("douglas adams\nQ42\nNo Such Thing Anywhere\n")
    with Store(sample_store, read_only=True) as store:
        got = resolve_names(read_seeds(tmp_path / "s.txt"), store)
        assert [(r.qid, r.status) for r in got] == [("Q42", "name"), (None, "duplicate"), (None, "unknown")]
        label, aliases = store.con.execute(
            "SELECT label, aliases FROM entities WHERE id = 'Q42'").fetchall()[0]
    assert label == "Douglas Adams" and aliases  # resolution went through the label
    (tmp_path / "a.txt").write_text(f"{aliases[0]}\n")
    with Store(sample_store, read_only=True) as store:
        (by_alias,) = resolve_names(read_seeds(tmp_path / "a.txt"), store)
    assert by_alias.qid == "Q42" and by_alias.candidates[0][3] in ("alias", "label")
    assert "line 2" in got[1].message and "line 1" in got[1].message


def test_the_best_known_candidate_wins_only_when_clearly_better_known() -> None:
    assert pick([("Q2", "X", 30, "label"), ("Q1", "X", 14, "alias")]) == "Q2"  # 30 >= 2*14, +16
    assert pick([("Q2", "X", 30, "label"), ("Q1", "X", 16, "label")]) is None  # not twice
    assert pick([("Q2", "X", 12, "label"), ("Q1", "X", 5, "label")]) is None  # twice but only +7
    assert pick([("Q2", "X", None, "label"), ("Q1", "X", None, "label")]) is None
    assert pick([("Q7", "X", None, "alias")]) == "Q7"


def test_build_on_the_sample_writes_a_corpus_whose_funnel_adds_up(sample_store: Path, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q42\nDouglas Adams\nNo Such Thing Anywhere\nQ84\n")  # Q84: only a class here
    out = tmp_path / "corpus"
    result = CliRunner().invoke(cli, ["build", str(seeds), "--store", str(sample_store), "--out", str(out),
                                      "--top", "6"])
    assert result.exit_code == 0, result.output
    for name in ("tasks.jsonl", "rejected.jsonl", "manifest.json", "funnel.md", "audit.md", "audit.png"):
        assert (out / name).is_file(), name
    tasks = [CorpusTask.model_validate_json(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
    manifest = json.loads((out / "manifest.json").read_text())
    rules = Counter(r["rule"] for r in rejected)
    assert rules["duplicate_seed"] == 1 and rules["unresolved_name"] == 1 and rules["seed_failed"] == 1
    funnel = {row["stage"]: row for row in manifest["funnel"]}
    assert funnel["seeds"]["count"] == 4 and funnel["resolved"]["count"] == 2
    assert funnel["seeds built"]["count"] == 1
    assert funnel["chains"]["count"] == 6
    stages = list(FUNNEL)
    for before, after in itertools.pairwise(stages):  # each stage loses exactly what its rule dropped
        assert funnel[before]["count"] - funnel[after]["count"] == funnel[after]["dropped"]
        assert funnel[after]["dropped"] == rules[funnel[after]["rule"]]
    assert funnel["kept"]["count"] == len(tasks) == manifest["counts"]["tasks"] > 0
    assert [t.rank for t in tasks] == sorted(t.rank for t in tasks)
    for t in tasks:
        assert t.task.anchor_necessary and t.necessity.necessary and not t.necessity.redundant
        assert t.chains[0].shortcut_scope == "source" and t.certificates[0].holds
        assert t.certificates[0].distance == t.chains[0].k
        assert t.level is not None and t.evidence_steps == t.necessity.evidence_steps
        assert t.parameters.max_familiarity == DEFAULT_MAX_FAMILIARITY
    assert "Q42" in (out / "funnel.md").read_text() or "| kept |" in (out / "funnel.md").read_text()
    assert "Relation classes" in (out / "audit.md").read_text()


def test_max_familiarity_drops_chains_through_well_known_nodes(sample_store: Path, tmp_path: Path) -> None:
    import shutil

    from chaingraph.store import Batch, entity_row

    # the sample gives sitelinks for Q42 only; Cambridge (Q350, on most of its chains) has
    # ~200 on Wikidata: record that in a copy of the store
    store_file = tmp_path / "famous.duckdb"
    shutil.copy(sample_store, store_file)
    with Store(store_file) as store:
        store.write(Batch(entities=[entity_row("Q350", sitelinks=200)]))
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q42\n")
    out = CliRunner().invoke(cli, ["build", str(seeds), "--store", str(store_file), "--out",
                                   str(tmp_path / "o"), "--top", "6", "--max-familiarity", "150"])
    assert out.exit_code == 0, out.output
    rejected = [json.loads(x) for x in (tmp_path / "o" / "rejected.jsonl").read_text().splitlines()]
    lines = (tmp_path / "o" / "tasks.jsonl").read_text().splitlines()
    tasks = [CorpusTask.model_validate_json(x) for x in lines]
    dropped = [r for r in rejected if r["rule"] == "familiarity"]
    assert dropped and all(r["detail"].startswith("Q350 ") for r in dropped)
    assert all("Q350" in r["path"] for r in dropped)
    assert all("Q350" not in [n.id for n in t.chains[0].nodes] for t in tasks)  # the seed (129) is exempt


def test_cli_default_familiarity_is_the_library_default() -> None:
    from chaingraph.cli import build as cli_build

    assert cli_build._MAX_FAMILIARITY == DEFAULT_MAX_FAMILIARITY


@pytest.mark.parametrize(("extra", "option"), [
    (["--workers", "2"], "--workers"), (["--fuse"], "--fuse"), (["--no-collect"], "--collect"),
    (["--as-of", "2001"], "--as-of"), (["--store", "x.duckdb"], "--endpoint")])
def test_what_an_endpoint_build_cannot_do_is_refused_with_one_line(tmp_path: Path, extra: list[str],
                                                                   option: str) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q42\n")
    out = CliRunner().invoke(cli, ["build", str(seeds), "--endpoint", "http://127.0.0.1:9/sparql",
                                   "--out", str(tmp_path / "o"), *extra])
    assert out.exit_code == 2 and out.output.startswith(f"error: {option}: "), out.output
    assert len(out.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_other_parameters_in_the_same_folder_are_refused(sample_store: Path, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q84\n")  # fails fast: not a node of the graph
    args = ["build", str(seeds), "--store", str(sample_store), "--out", str(tmp_path / "o")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    again = CliRunner().invoke(cli, [*args, "--top", "3"])
    assert again.exit_code == 2 and "--out" in again.output and "other seeds or parameters" in again.output


def _founders_store(path: Path) -> Path:
    """Three logos, each made by a company founded by a person (a 2-hop world): the
    founders of Q101's and Q201's makers were born in 1920 and 1950; Q301's maker's
    founder has two birth dates on record (so the calculator must refuse it)."""
    from chaingraph.store import Batch, entity_row, property_row, statement_row
    from chaingraph.values import EntityValue, TimeValue

    def item(sid: str, s: str, p: str, o: str) -> tuple[object, ...]:
        return statement_row(sid, s, p, EntityValue(id=o))

    def born(sid: str, s: str, year: int) -> tuple[object, ...]:
        return statement_row(sid, s, "P569", TimeValue.make(year, 5, 1, precision=11))

    with Store(path) as store:
        store.write(Batch(
            properties=[property_row("P176", "manufacturer", datatype="wikibase-item"),
                        property_row("P112", "founded by", datatype="wikibase-item"),
                        property_row("P569", "date of birth", datatype="time")],
            entities=[entity_row(q, f"item {q}") for q in ("Q101", "Q102", "Q103", "Q201", "Q202", "Q203",
                                                           "Q301", "Q302", "Q303")],
            statements=[item("s1", "Q101", "P176", "Q102"), item("s2", "Q102", "P112", "Q103"),
                        item("s3", "Q201", "P176", "Q202"), item("s4", "Q202", "P112", "Q203"),
                        item("s5", "Q301", "P176", "Q302"), item("s6", "Q302", "P112", "Q303"),
                        born("b1", "Q103", 1920), born("b2", "Q203", 1950),
                        born("b3", "Q303", 1931), born("b4", "Q303", 1932)]))
    return path


def test_fuse_pairs_targets_with_dates_and_counts_refusals(tmp_path: Path) -> None:
    from chaingraph.fusion import FusionSpec, fuse_spec
    from chaingraph.necessity import check_necessity

    store = _founders_store(tmp_path / "founders.duckdb")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q301\nQ101\nQ201\n")
    out = CliRunner().invoke(cli, ["build", str(seeds), "--store", str(store), "--out", str(tmp_path / "o"),
                                   "--min-hops", "2", "--max-hops", "2", "--fuse"])
    assert out.exit_code == 0, out.output
    lines = (tmp_path / "o" / "tasks.jsonl").read_text().splitlines()
    tasks = [CorpusTask.model_validate_json(x) for x in lines]
    assert [t.id for t in tasks] == ["Q301-r1", "Q101-r1", "Q201-r1", "fused:Q101-r1+Q201-r1"]
    fused = tasks[-1]
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    # Q301 is tried with Q101 and Q201 and refused twice (two birth dates); Q101 + Q201 fuse
    assert manifest["fusion"] == {"tried": 3, "refused": {"multi_valued": 2}, "kept": 1}
    assert fused.fusion is not None and fused.fusion["result"]["result"].startswith("+30")
    assert fused.task.fusion is not None and fused.task.fusion.operation == "year_difference"
    # recomputed from the files and the store alone
    with Store(store, read_only=True) as st:
        again = fuse_spec(FusionSpec.model_validate(fused.fusion["spec"]), store=st)
    assert again.model_dump(mode="json", exclude_none=True) == fused.fusion["result"]
    from chaingraph.necessity import GraphCache

    cache = GraphCache(store=store)
    report = check_necessity(fused.task, cache=cache)
    cache.close()
    assert [c.verdict for c in report.component_ablations] == ["necessary", "necessary"]
    assert not report.redundant and not report.text_only_shortcut
    assert fused.evidence_steps == tasks[1].evidence_steps + tasks[2].evidence_steps  # type: ignore[operator]
    funnel = {row["stage"]: row["count"] for row in manifest["funnel"]}
    assert funnel["fused pairs tried"] == 3 and funnel["fused refused: multi_valued"] == 2
    assert funnel["fused kept"] == 1


def test_policy_json_is_the_same_in_every_process() -> None:
    # sets serialised in iteration order made tasks.jsonl differ between worker processes
    import os
    import subprocess
    import sys

    code = ("from chaingraph.settings import TraversalPolicy; print(TraversalPolicy("
            "excluded_properties=['P17', 'P131', 'P5', 'P150', 'P47'], properties=['P1', 'P2', 'P3', 'P4'])"
            ".model_dump_json())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
    assert len(outs) == 1, outs


def test_as_of_dates_every_graph_of_the_build(sample_store: Path, tmp_path: Path) -> None:
    """Q42 was educated at St John's College (P69) from 1971 to 1974: a build as of 2000 never
    steps on that statement, one without a date may, and the dated records say their date."""
    studied = "q42$0E9C4724-C954-4698-84A7-5CE0D296A6F2"
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q42\n")

    def steps(*extra: str) -> tuple[list[CorpusTask], set[str]]:
        out = tmp_path / ("corpus" + "-".join(extra))
        args = ["build", str(seeds), "--store", str(sample_store), "--out", str(out), "--top", "20"]
        result = CliRunner().invoke(cli, [*args, "--no-collect", *extra])
        assert result.exit_code == 0, result.output
        tasks = [CorpusTask.model_validate_json(line)
                 for line in (out / "tasks.jsonl").read_text().splitlines()]
        rejected = (out / "rejected.jsonl").read_text()
        used = {s.statement_id for t in tasks for c in t.chains for s in c.steps}
        return tasks, used | ({studied} if studied in rejected else set())

    _, undated = steps()
    assert studied in undated  # the statement is a candidate step without a date
    dated, used = steps("--as-of", "2000")
    assert dated and studied not in used
    assert all(c.as_of is not None and c.as_of.startswith("2000") for t in dated for c in t.chains)


def test_stable_only_drops_time_sensitive_chains_and_counts_them(sample_store: Path, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q42\n")
    runs = {}
    for extra in ((), ("--stable-only",)):
        out = tmp_path / ("corpus" + "".join(extra))
        args = ["build", str(seeds), "--store", str(sample_store), "--out", str(out), "--top", "20"]
        result = CliRunner().invoke(cli, [*args, "--no-collect", *extra])
        assert result.exit_code == 0, result.output
        manifest = json.loads((out / "manifest.json").read_text())
        lines = (out / "tasks.jsonl").read_text().splitlines()
        tasks = [CorpusTask.model_validate_json(line) for line in lines]
        rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
        runs[extra] = ({row["stage"]: row for row in manifest["funnel"]}, tasks, rejected)
    plain, stable = runs[()], runs[("--stable-only",)]
    assert plain[0]["time_stable"]["dropped"] == 0
    sensitive = [r for r in stable[2] if r["rule"] == "time_sensitive"]
    assert sensitive and stable[0]["time_stable"]["dropped"] == len(sensitive)
    assert all(c.time_sensitivity == "stable" for t in stable[1] for c in t.chains)


@pytest.mark.parametrize("as_of", [None, "1990"])
def test_the_task_graph_shares_the_whole_graph_and_equals_one_built_anew(sample_store: Path, as_of: str | None
                                                                         ) -> None:
    """Answer sets are read on the whole-store graph under the necessity policy's hub limit:
    made from the whole graph (its arrays shared, not a second whole-store graph in memory),
    it must be the graph building anew under that policy gives: the same vertices, arcs,
    passable vertices and time exclusions."""
    import numpy as np

    from chaingraph.build.corpus import BuildParameters, _task_graph
    from chaingraph.graph import EvidenceGraph
    from chaingraph.settings import TraversalPolicy

    p = BuildParameters(store=str(sample_store), policy=TraversalPolicy(hub_limit=3, as_of=as_of),
                        task_hub_limit=None)
    with Store(sample_store, read_only=True) as store:
        whole = EvidenceGraph.from_store(store, policy=p.policy)
        shared = _task_graph(whole, p)
        anew = EvidenceGraph.from_store(store, policy=p.policy.model_copy(update={"hub_limit": None}))
    assert shared.arrays is whole.arrays and shared.policy == anew.policy
    assert shared.arrays.names.equals(anew.arrays.names)
    for field in ("indptr", "nbr", "arc_edge", "fwd", "prop"):
        assert np.array_equal(getattr(shared.arrays, field), getattr(anew.arrays, field))
    assert np.array_equal(shared.passable_mask, anew.passable_mask)
    assert not np.array_equal(shared.passable_mask, whole.passable_mask)  # the hub limit told
    assert shared.time_excluded == anew.time_excluded and shared.classifier == anew.classifier
