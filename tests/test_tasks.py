"""The task record: schema, cross-reference checks, JSON-path errors, JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaingraph.cli import cli
from chaingraph.errors import InvalidTask
from chaingraph.tasks import Task, json_path, load_task, parse_task

STORY = Path(__file__).parent / "fixtures" / "necessity" / "story"
BASE = json.loads((STORY / "graph-only.json").read_text())


def test_every_fixture_round_trips_through_json() -> None:
    for path in sorted(STORY.glob("*.json")):
        if path.name == "expected.json":
            continue
        task = load_task(path)
        again = Task.model_validate_json(task.model_dump_json(by_alias=True))
        assert again.model_dump() == task.model_dump() and task.file == str(path)


def test_clue_ids_default_to_their_position_and_may_be_named() -> None:
    task = parse_task({**BASE, "clues": [{**BASE["clues"][0], "id": "logo"}, *BASE["clues"][1:]]})
    assert [task.clue_id(i) for i in range(3)] == ["logo", "c2", "c3"]
    with pytest.raises(InvalidTask, match="repeats") as err:
        parse_task({**BASE, "clues": [{**c, "id": "same"} for c in BASE["clues"][:2]]})
    assert err.value.path == "clues[1].id"


def _path(body: dict[str, object]) -> str:
    with pytest.raises(InvalidTask) as err:
        parse_task(body, file="t.json")
    prefix = f"t.json: {err.value.path}: " if err.value.path else "t.json: "
    assert str(err.value).startswith(prefix) and err.value.file == "t.json"
    return err.value.path


def test_errors_name_the_json_path() -> None:
    clues = BASE["clues"]
    comp = BASE["components"][0]
    assert _path({**BASE, "clues": [*clues, {"kind": "relation", "step": 0}]}) == "clues[7].step"
    assert _path({**BASE, "clues": [*clues, {"kind": "relation"}]}) == "clues[7].step"
    assert _path({**BASE, "clues": [*clues, {"kind": "type", "variable": 5, "class": "Q5"}]}) == \
        "clues[7].variable"
    assert _path({**BASE, "clues": [*clues, {"kind": "type", "variable": 1}]}) == "clues[7].class"
    assert _path({**BASE, "clues": [*clues, {"kind": "value", "variable": 1, "value": "Q5"}]}) == \
        "clues[7].property"
    assert _path({**BASE, "clues": [*clues, {"kind": "anchor", "component": 2}]}) == "clues[7].component"
    assert _path({**BASE, "clues": [*clues, {"kind": "relation", "step": 1, "property": "P17"}]}) == \
        "clues[7].property"
    assert _path({**BASE, "clues": [*clues, {"kind": "relation", "step": 2, "direction": "forward"}]}) == \
        "clues[7].direction"
    coarse = {"kind": "time", "time": "+1901-00-00T00:00:00Z"}
    assert _path({**BASE, "clues": [*clues, {"kind": "value", "variable": 1, "property": "P1",
                                             "value": coarse}]}) == "clues[7].value.precision"
    assert _path({**BASE, "components": [{**comp, "steps": []}]}) == "components[0].steps"
    assert _path({**BASE, "components": [{**comp, "anchor": "Q11"}]}) == "components[0].anchor"
    assert _path({**BASE, "components": [{**comp, "steps": [{"property": "X1"}]}]}) == \
        "components[0].steps[0].property"
    assert _path({**BASE, "target": {}}) == "target"
    assert _path({**BASE, "anchors": [{"entity": "Q10", "region": [5, 5, 1, 1]}]}) == "anchors[0].region"
    assert _path({**BASE, "fusion": {"operation": "max", "components": ["nope"]}}) == "fusion.components[0]"
    assert _path({**BASE, "surprise": 1}) == "surprise"
    assert _path([1, 2]) == ""  # type: ignore[arg-type]


def test_json_path_format() -> None:
    assert json_path(("a", 0, "b", 12)) == "a[0].b[12]"


def test_unreadable_or_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidTask, match="cannot read"):
        load_task(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"id": ')
    with pytest.raises(InvalidTask, match="malformed JSON at line 1 column 8"):
        load_task(tmp_path / "bad.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(InvalidTask, match="not UTF-8"):
        load_task(tmp_path / "bin.json")


def test_schema_is_published(runner) -> None:  # type: ignore[no-untyped-def]
    out = runner.invoke(cli, ["schema", "task"])
    assert out.exit_code == 0
    schema = json.loads(out.output)
    assert {"anchors", "components", "clues", "evidence", "solver", "fusion"} <= set(schema["properties"])
    assert "class" in schema["$defs"]["Clue"]["properties"]
    report = json.loads(runner.invoke(cli, ["schema", "necessity-report"]).output)
    assert {"text_only_shortcut", "clues", "difficulty", "evidence_steps"} <= set(report["properties"])
