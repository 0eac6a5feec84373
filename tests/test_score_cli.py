"""``chaingraph score`` through the real CLI on a real DuckDB file: formats, explanations,
the plot, and bad input — one line per bad item naming file, item and event, the other
items still scored."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from score_story import TASK, WIDGET, build_store, claim, trajectory, view

from chaingraph.cli import cli
from chaingraph.errors import InvalidTrajectory
from chaingraph.scoring import score_files
from chaingraph.trajectory import iter_trajectories, parse_trajectory


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("score")
    build_store(str(root / "story.duckdb")).close()
    (root / "tasks.json").write_text(json.dumps([{**TASK, "store": "story.duckdb"}]))
    good = [
        trajectory(claim("Q1", "P176", "Q2"), claim("Q2", "P159", "Q3"), claim("Q3", "P17", "Q4"),
                   claim("Q20", "P176", "Q2"), id="perfect"),
        trajectory(claim("Q1", "P127", "Q5"), claim("Q5", "P361", "Q4"), view(WIDGET), id="part-of"),
    ]
    bad: list[Any] = [
        {**trajectory(), "task": "story/unknown", "id": "lost"},
        trajectory({"kind": "claim", "subject": "Q1", "object": "Q2"}, id="no-relation"),
        trajectory(view((0, 0, 10, 10)), view((90, 90, 120, 100)), id="outside"),
        {**trajectory(view((0, 0, 10, 10))), "image_size": [-100, 100], "id": "negative"},
        trajectory({"kind": "view", "box": [-5, 0, 10, 10]}, id="negative-box"),
    ]
    lines = [json.dumps(t) for t in good[:1] + bad + good[1:]] + ["{not json"]
    (root / "runs.jsonl").write_text("\n".join(lines) + "\n")
    (root / "good.jsonl").write_text("\n".join(json.dumps(t) for t in good) + "\n")
    return {"root": root, "tasks": root / "tasks.json", "runs": root / "runs.jsonl",
            "good": root / "good.jsonl"}


def test_json_report_has_items_macro_and_sensitivity(files: dict[str, Path]) -> None:
    out = CliRunner().invoke(cli, ["score", str(files["tasks"]), str(files["good"]), "--format", "json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    perfect, part = report["items"]
    assert (perfect["metrics"]["nc"], perfect["metrics"]["rc"]) == (1.0, 1.0)
    assert part["routes"][0]["credited"] is False
    # macro NC: (1 + 2/5) / 2; RC: (1 + 0) / 2
    assert report["macro"]["nc"] == pytest.approx(0.7) and report["macro"]["rc"] == 0.5
    assert {(r["parameter"], r["value"]) for r in report["sensitivity"]} >= {("iou", 0.3), ("coverage", 0.75)}


def test_table_explains_misses_and_route_verdicts(files: dict[str, Path]) -> None:
    out = CliRunner().invoke(cli, ["score", str(files["tasks"]), str(files["good"])])
    assert out.exit_code == 0, out.output
    assert "macro" in out.output
    assert "route Q1 → Q5 → Q4 [component1]: REFUSED: not target-preserving" in out.output
    assert "edge Q1 P176 Q2 [component1]: not claimed" in out.output


def test_csv_and_markdown(files: dict[str, Path]) -> None:
    out = CliRunner().invoke(cli, ["score", str(files["tasks"]), str(files["good"]), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert [r["trajectory"] for r in rows] == ["perfect", "part-of", "2 item(s)"]
    assert rows[1]["nvrc"] == "0.333"
    md = CliRunner().invoke(cli, ["score", str(files["tasks"]), str(files["good"]), "--format", "md"])
    assert md.output.startswith("| task | trajectory | nc |") and "| iou | 0.3 |" in md.output


def test_plot_is_written(files: dict[str, Path]) -> None:
    png = files["root"] / "scores.png"
    out = CliRunner().invoke(cli, ["score", str(files["tasks"]), str(files["good"]), "--plot", str(png)])
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_items_are_named_one_line_each_and_the_others_are_scored(files: dict[str, Path]) -> None:
    out = CliRunner().invoke(cli, ["score", str(files["tasks"]), str(files["runs"]), "--format", "json"])
    assert out.exit_code == 2
    assert "Traceback" not in out.output
    runs = str(files["runs"])
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error: ")]
    assert errors[:-1] == [
        f"error: {runs}: item 2 (lost): task: no task has id 'story/unknown'; check the trajectory's task "
        "or the TASKS path",
        f"error: {runs}: item 3 (no-relation): events[0].relation: Field required; fix the trajectory "
        "(schema: chaingraph schema trajectory)",
        f"error: {runs}: item 4 (outside): events[1].box: box [90, 90, 120, 100] lies outside the 100×100 "
        "image; fix the box or image_size",
        f"error: {runs}: item 5 (negative): image_size: Value error, image_size [-100.0, 100.0] must be "
        "[width, height], both positive; fix the trajectory (schema: chaingraph schema trajectory)",
        f"error: {runs}: item 6 (negative-box): events[0].box: Value error, box [-5.0, 0.0, 10.0, 10.0] "
        "must be [left, top, right, bottom] with 0 <= left < right and 0 <= top < bottom; fix the "
        "trajectory (schema: chaingraph schema trajectory)",
        f"error: {runs}: item 8: malformed JSON at column 2: Expecting property name enclosed in double "
        "quotes",
    ]
    assert errors[-1] == "error: 6 item(s) could not be scored (see the errors above)"
    scored = json.loads(out.stdout)
    assert [(i["trajectory"], i["item"]) for i in scored["items"]] == [("perfect", 1), ("part-of", 7)]


def test_library_twin_reports_the_same_failures(files: dict[str, Path]) -> None:
    report = score_files(files["tasks"], [files["runs"]], sensitivity=False)
    assert [f.item for f in report.failures] == [2, 3, 4, 5, 6, 8]
    assert len(report.items) == 2 and report.sensitivity == ()


def test_a_missing_task_store_is_one_error_per_item(files: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps({**TASK, "store": "missing.duckdb"}))
    report = score_files(tmp_path / "tasks.json", [files["good"]])
    assert len(report.failures) == 2 and "missing.duckdb does not exist" in report.failures[0].error


def test_unreadable_trajectory_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidTrajectory, match="cannot read the file"):
        list(iter_trajectories(tmp_path / "nope.jsonl"))


def test_a_pretty_printed_single_trajectory_is_one_item(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(trajectory(view(WIDGET)), indent=2))
    assert [(n, type(t).__name__) for n, t in iter_trajectories(path)] == [(1, "Trajectory")]


def test_a_box_needs_an_image_size() -> None:
    with pytest.raises(InvalidTrajectory, match=r"item 1: events\[0\].image_size: a box needs the image"):
        parse_trajectory({"task": "t", "events": [view(WIDGET)]}, item=1)


def test_schema_is_published() -> None:
    out = CliRunner().invoke(cli, ["schema", "trajectory"])
    schema = json.loads(out.output)
    assert set(schema["$defs"]) >= {"ViewEvent", "AssertEvent", "SearchEvent", "RetrieveEvent", "ClaimEvent"}
    out = CliRunner().invoke(cli, ["schema", "score-report"])
    assert "ItemScore" in json.loads(out.output)["$defs"]


def test_sensitivity_rows_move_with_their_threshold(files: dict[str, Path], tmp_path: Path) -> None:
    # the widget predicted 2 px off on each side: IoU 400/576 = 0.69, so it matches at IoU 0.3
    # and 0.5, not at 0.7; a 60x60 crop (36 % of the image) is local unless crops must be <= 25 %
    run = trajectory({"kind": "assert", "box": [8, 8, 32, 32], "entity": "Q1"}, view((0, 0, 60, 60)))
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(run))
    report = score_files(files["tasks"], [path])
    rows = {(r.parameter, r.value): r.metrics for r in report.sensitivity}
    assert [rows[("iou", v)]["va_r"] for v in (0.3, 0.5, 0.7)] == [1 / 3, 1 / 3, 0.0]
    assert [rows[("max_share", v)]["nvrc"] for v in (0.25, 0.5, 0.75)] == [0.0, 2 / 3, 2 / 3]
    assert report.macro["va_r"] == 1 / 3


def test_tasks_may_be_a_directory_of_task_files_with_relative_stores(files: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    import shutil

    shutil.copy(files["root"] / "story.duckdb", tmp_path / "story.duckdb")
    (tmp_path / "widget.json").write_text(json.dumps({**TASK, "store": "story.duckdb"}))
    (tmp_path / "broken.json").write_text("{")
    report = score_files(tmp_path, [files["good"]])
    assert [i.metrics.nc for i in report.items] == [1.0, 0.4]
    assert [f.file for f in report.failures] == [str(tmp_path / "broken.json")]
