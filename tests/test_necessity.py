"""Clue ablation on the hand-written story world: every branch of the DESIGN §6 rule,
anchors, value targets, fused components, the CLI (in-process and as a subprocess), bad
input, real DuckDB stores and shared graphs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from chaingraph.cli import cli
from chaingraph.errors import InvalidTask
from chaingraph.lookups import StoreValues
from chaingraph.necessity import (
    GraphCache,
    NecessityReport,
    check_necessity,
    check_necessity_files,
    decide,
    default_fusion_check,
)
from chaingraph.store import Batch, Store, entity_row, statement_row
from chaingraph.tasks import Fusion, SolverResult, Task, load_task
from chaingraph.values import EntityValue, QuantityValue, TimeValue, Value

STORY = Path(__file__).parent / "fixtures" / "necessity" / "story"
EXPECTED = json.loads((STORY / "expected.json").read_text())
NAMES = sorted(k for k in EXPECTED if not k.startswith("_"))


def story(name: str) -> Task:
    return load_task(STORY / f"{name}.json")


@pytest.mark.parametrize("name", NAMES)
def test_story_task_verdicts_match_the_hand_derived_ones(name: str) -> None:
    report = check_necessity(story(name))
    want = EXPECTED[name]
    assert {a.clue: a.verdict for a in report.clues} == want["verdicts"]
    assert report.text_only_shortcut is want["shortcut"]
    assert report.evidence_steps == want["H"]
    h = want["H"]  # null: the pruned pattern has no match, so no H and no level
    assert report.difficulty == (None if h is None else "L1" if h < 5 else "L2" if h < 10 else "L3")  # DESIGN
    assert report.pruned_unique is want["pruned_unique"]
    assert {c.component: c.verdict for c in report.component_ablations} == want.get("components", {})
    assert set(report.redundant) == {c for c, v in want["verdicts"].items() if v == "redundant"}
    assert set(report.review) == {c for c, v in want["verdicts"].items() if v == "review"}


def test_ablation_reports_answers_paths_and_a_witness() -> None:
    report = check_necessity(story("graph-only"))
    by = {a.clue: a for a in report.clues}
    anchor = by["c1"].answers  # x0 free: the Freiburg chain from the other brewery appears
    assert (anchor.count, anchor.first, anchor.target_in, anchor.unique) == (2, ("Q50", "Q51"), True, False)
    assert anchor.paths_to_target == 1
    assert anchor.shortest_path is not None
    assert anchor.shortest_path.nodes == ("Q10", "Q20", "Q30", "Q40", "Q50")
    last = by["c7"].answers  # last step any property either way: Anna herself is reached too
    assert last.first == ("Q30", "Q50")
    assert [s[0] for s in last.shortest_path.steps] == ["P159", "P19", "P69", "P131"]  # type: ignore[union-attr]
    assert [s[1] for s in last.shortest_path.steps] == ["forward", "backward", "forward", "forward"]  # type: ignore[union-attr]
    full = report.components[0].full
    assert (full.count, full.unique, full.paths_to_target) == (1, True, 1)


def test_solver_branches_carry_their_reasons() -> None:
    by = {a.clue: a for a in check_necessity(story("solver-paired")).clues}
    assert by["c2"].reason.startswith("paired recovery") and "graph agrees" in by["c2"].reason
    assert by["c3"].reason.startswith("conflict")
    assert "although the graph then has 2 answers" in by["c4"].reason
    assert by["c7"].reason.endswith("the Solver also failed without it")
    assert by["c1"].reason.endswith("no Solver run without this clue")
    assert (by["c3"].solver_original, by["c3"].solver_without) == (True, False)
    failed = {a.clue: a for a in check_necessity(story("solver-failed")).clues}
    assert failed["c4"].verdict == "necessary" and "do not count" in failed["c4"].reason


@pytest.mark.parametrize(("kw", "verdict"), [
    ({"base_ok": False, "base_problem": "ambiguous"}, "review"),
    ({"base_ok": False, "base_problem": "x", "original": SolverResult(correct=True),
      "without": SolverResult(correct=True)}, "redundant"),
    ({"base_ok": True, "graph_unique": True}, "redundant"),
    ({"base_ok": True, "graph_unique": True, "original": SolverResult(correct=True),
      "without": SolverResult(correct=False)}, "review"),
    ({"base_ok": True, "graph_unique": True, "original": SolverResult(correct=False),
      "without": SolverResult(correct=False)}, "redundant"),
    ({"base_ok": True, "graph_unique": False, "original": SolverResult(correct=True),
      "without": SolverResult(correct=True)}, "redundant"),
    ({"base_ok": True, "graph_unique": False, "original": SolverResult(correct=False),
      "without": SolverResult(correct=True)}, "necessary"),
    ({"base_ok": True, "graph_unique": False}, "necessary"),
])
def test_decide_covers_every_branch(kw: dict[str, object], verdict: str) -> None:
    args = {"graph_unique": False, "answers": 3, "target_in": True, **kw}
    assert decide(**args)[0] == verdict  # type: ignore[arg-type]


def _fused(operation: str, minuend: str | None = None) -> NecessityReport:
    task = story("fused-max")
    assert task.fusion is not None
    fusion = Fusion(operation=operation, components=task.fusion.components, minuend=minuend)
    return check_necessity(task.model_copy(update={"fusion": fusion}))


def test_fused_components_are_ablated_whole() -> None:
    mx = {c.component: c for c in _fused("max").component_ablations}
    assert mx["anna"].determined_without and mx["anna"].verdict == "redundant"
    assert "1903" in mx["anna"].reason
    assert not mx["clara"].determined_without
    mn = {c.component: c.verdict for c in _fused("min").component_ablations}
    assert mn == {"anna": "necessary", "clara": "redundant"}
    diff = {c.component: c.verdict for c in _fused("year_difference", minuend="clara").component_ablations}
    assert diff == {"anna": "necessary", "clara": "necessary"}
    assert not _fused("max").clean


def test_cli_highlights_a_component_that_is_not_needed(runner) -> None:  # type: ignore[no-untyped-def]
    out = runner.invoke(cli, ["necessity", str(STORY / "fused-max.json")])
    assert out.exit_code == 0
    assert "!! COMPONENT NOT NEEDED: anna (max is 1903 with or without anna)" in out.output
    assert "COMPONENT NOT NEEDED: clara" not in out.output


def test_fusion_check_is_pluggable() -> None:
    seen: list[tuple[str, tuple[str, ...], str]] = []

    def never(operation: str, values: Sequence[tuple[str, Value]], dropped: str, *,
              minuend: str | None = None) -> tuple[bool, str]:
        seen.append((operation, tuple(c for c, _v in values), dropped))
        return False, "custom"

    report = check_necessity(story("fused-max"), fusion_check=never)
    assert {c.verdict for c in report.component_ablations} == {"necessary"}
    assert seen == [("max", ("anna", "clara"), "anna"), ("max", ("anna", "clara"), "clara")]


def test_default_fusion_check_on_quantities_and_ties() -> None:
    q = [("a", QuantityValue(amount="+5", unit="Q11573")), ("b", QuantityValue(amount="+7", unit="Q11573"))]
    assert default_fusion_check("max", q, "a")[0] is True
    assert default_fusion_check("max", q, "b")[0] is False
    assert default_fusion_check("add", q, "a")[0] is False
    tie = [("a", QuantityValue(amount="+7")), ("b", QuantityValue(amount="+7")),
           ("c", QuantityValue(amount="+1"))]
    ok, reason = default_fusion_check("max", tie, "c")
    assert not ok and "cannot be computed" in reason  # a tie leaves the ordering undefined
    dates = [("a", TimeValue.make(1901, precision=9)), ("b", EntityValue(id="Q5"))]
    assert default_fusion_check("max", dates, "a")[0] is False


def test_text_only_shortcut_is_flagged_and_highlighted(runner) -> None:  # type: ignore[no-untyped-def]
    report = check_necessity(story("anchor-shortcut"))
    assert report.text_only_shortcut
    assert [a.clue for a in report.clues if a.text_only_shortcut] == ["c1"]
    out = runner.invoke(cli, ["necessity", str(STORY / "anchor-shortcut.json")])
    assert out.exit_code == 0, out.output
    assert "TEXT-ONLY SHORTCUT" in out.output and "anchor (shortcut!)" in out.output
    plain = runner.invoke(cli, ["necessity", str(STORY / "graph-only.json")])
    assert "TEXT-ONLY SHORTCUT" not in plain.output


def test_component_without_anchor_clue_is_a_shortcut_by_construction() -> None:
    task = story("anchor-shortcut")
    task = task.model_copy(update={"clues": task.clues[1:]})
    report = check_necessity(task)
    assert report.text_only_shortcut and not report.components[0].anchored
    assert any("no anchor clue" in n for n in report.notes)


def test_cli_json_round_trips_and_strict_sets_the_exit_code(runner) -> None:  # type: ignore[no-untyped-def]
    out = runner.invoke(cli, ["necessity", str(STORY / "graph-only.json"), "--format", "json"])
    assert out.exit_code == 0
    report = NecessityReport.model_validate_json(out.output)
    assert report == check_necessity(story("graph-only"), file=str(STORY / "graph-only.json"))
    strict = runner.invoke(cli, ["necessity", str(STORY / "graph-only.json"), "--strict"])
    assert strict.exit_code == 1
    many = runner.invoke(cli, ["necessity", *(str(STORY / f"{n}.json") for n in NAMES), "--format", "json"])
    assert many.exit_code == 0
    assert [r["task"] for r in json.loads(many.output)] == NAMES


def test_clean_task_passes_strict(runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = json.loads((STORY / "graph-only.json").read_text())
    body["clues"] = [c for i, c in enumerate(body["clues"]) if i in (0, 3, 6)]  # the necessary ones
    (tmp_path / "t.json").write_text(json.dumps(body))
    out = runner.invoke(cli, ["necessity", str(tmp_path / "t.json"), "--strict"])
    assert out.exit_code == 0, out.output
    assert "redundant: none; review: none" in out.output


def _write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def _bad(body: dict[str, object], **change: object) -> str:
    return json.dumps({**body, **change})


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda b: "{not json", "malformed JSON at line 1"),
    (lambda b: _bad(b, anchors=[{"entity": "Q10x"}]), "anchors[0].entity"),
    (lambda b: _bad(b, clues=[*b["clues"], {"kind": "relation", "step": 9}]), "clues[7].step"),
    (lambda b: _bad(b, clues=[*b["clues"], {"kind": "type", "variable": 2, "class": "Q999"}]),
     "clues[7].class"),
    (lambda b: _bad(b, clues=[*b["clues"], {"kind": "sound"}]), "clues[7].kind"),
    (lambda b: _bad(b, anchors=[{"entity": "Q999"}],
                    components=[{**b["components"][0], "anchor": "Q999"}]), "anchors[0].entity"),
    (lambda b: _bad(b, components=[{**b["components"][0], "target": {"entity": "Q998"}}]),
     "components[0].target.entity"),
    (lambda b: _bad(b, solver={"original": {"correct": True}, "ablated": {"c99": {"correct": True}}}),
     "solver.ablated.c99"),
])
def test_bad_task_is_one_line_with_file_and_json_path(runner, tmp_path: Path, mutate, where: str) -> None:  # type: ignore[no-untyped-def]
    body = json.loads((STORY / "graph-only.json").read_text())
    path = _write(tmp_path, "bad.json", mutate(body))
    out = runner.invoke(cli, ["necessity", path])
    assert out.exit_code == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"error: {path}: ")
    assert where in out.stderr
    assert "Traceback" not in out.stderr
    with pytest.raises(InvalidTask) as err:
        check_necessity(load_task(path))
    assert err.value.file == path


def test_one_bad_task_does_not_stop_the_batch(runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = _write(tmp_path, "bad.json", "[1, 2")
    good = str(STORY / "graph-only.json")
    out = runner.invoke(cli, ["necessity", bad, good, str(tmp_path / "missing.json"), good])
    assert out.exit_code == 2
    assert out.stdout.count("task graph-only") == 2
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 3 and "2 of 4 task file(s)" in errors[-1]
    result = check_necessity_files([bad, good])
    assert [f.file for f in result.failures] == [bad] and len(result.reports) == 1


def _story_store(path: Path) -> None:
    task = story("birth-year")
    assert task.evidence is not None
    ev = task.evidence
    with Store(path) as store:
        store.write(Batch(
            entities=[entity_row(q, label) for q, label in ev.labels.items()],
            statements=[statement_row(sid, s, p, EntityValue(id=o)) for sid, s, p, o in ev.edges]
            + [statement_row(lit.statement_id, lit.subject, lit.property, lit.value) for lit in ev.literals]))


def test_store_backed_task_equals_the_embedded_one(runner, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _story_store(tmp_path / "story.duckdb")
    for name in ("graph-only", "birth-year", "anchor-shortcut"):
        body = json.loads((STORY / f"{name}.json").read_text())
        embedded = check_necessity(Task.model_validate(body))
        del body["evidence"]
        body["store"] = "story.duckdb"  # relative to the task file
        path = _write(tmp_path, f"{name}.json", json.dumps(body))
        from_store = check_necessity_files([path]).reports[0]
        assert from_store.clues == embedded.clues and from_store.components == embedded.components
    out = runner.invoke(cli, ["necessity", str(STORY / "graph-only.json"), "--store",
                              str(tmp_path / "story.duckdb"), "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["redundant"] == ["c2", "c3", "c5", "c6"]


def test_store_values_read_each_literal_statement_once(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _story_store(tmp_path / "story.duckdb")
    ev = story("birth-year").evidence
    assert ev is not None and ev.literals
    sids = [lit.statement_id for lit in ev.literals]
    store = Store(tmp_path / "story.duckdb", read_only=True)
    try:
        values = StoreValues(store)
        got = values.literal_values([*sids, "no-such-statement"])
        assert set(got) == set(sids)
        assert values.literal_values(sids[:1]) == {sids[0]: got[sids[0]]}
        queries: list[object] = []
        monkeypatch.setattr(store, "statement_values", lambda **kw: queries.append(kw) or [])
        assert values.literal_values([*sids, "no-such-statement"]) == got and not queries
    finally:
        store.close()


def test_tasks_share_one_graph_per_evidence_and_policy() -> None:
    cache = GraphCache()
    g1, _ = cache.get(story("graph-only"))
    g2, _ = cache.get(story("solver-paired"))
    g3, _ = cache.get(story("birth-year"))  # a value target turns literal nodes on: another policy
    assert g1 is g2 and g3 is not g1 and g3.policy.include_literals
    cache.close()


def test_missing_evidence_and_store_is_an_error(tmp_path: Path) -> None:
    body = json.loads((STORY / "graph-only.json").read_text())
    del body["evidence"]
    with pytest.raises(InvalidTask, match="neither 'evidence' nor 'store'") as err:
        check_necessity(Task.model_validate(body))
    assert err.value.path == "evidence"


def test_cli_runs_as_a_subprocess(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "chaingraph", "necessity", str(STORY / "fused-max.json"),
                           "--format", "json"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert {c["component"]: c["determined_without"] for c in report["component_ablations"]} == {
        "anna": True, "clara": False}
    bad = _write(tmp_path, "bad.json", "{}")
    proc = subprocess.run([sys.executable, "-m", "chaingraph", "necessity", bad],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {bad}: ")
    assert "Traceback" not in proc.stderr
