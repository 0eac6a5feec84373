"""Audit readers and shape detectors: every layout and shape read, bad input listed, never a crash."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from chaingraph.audit.readers import Problem, RawRecord, corpus_files, read_file
from chaingraph.audit.shapes import DEFAULT_SHAPES, ShapeError, detect, parse_chain
from chaingraph.errors import InvalidInput

RECORDS = [{"n": i, "text": "x" * (i * 7000)} for i in range(12)]  # records larger than a read chunk


def _values(path: Path) -> list[object]:
    out = []
    for item in read_file(path):
        assert isinstance(item, RawRecord), item
        out.append(item.value)
    return out


@pytest.mark.parametrize("layout", ["array", "array-pretty", "jsonl", "values-pretty", "single"])
@pytest.mark.parametrize("gz", [False, True])
def test_every_layout_yields_the_same_records(tmp_path: Path, layout: str, gz: bool) -> None:
    records = RECORDS[:1] if layout == "single" else RECORDS
    text = {
        "array": json.dumps(records),
        "array-pretty": json.dumps(records, indent=2),
        "jsonl": "\n".join(json.dumps(r) for r in records) + "\n",
        "values-pretty": "\n".join(json.dumps(r, indent=2) for r in records),
        "single": json.dumps(records[0], indent=2),
    }[layout]
    path = tmp_path / ("corpus.json.gz" if gz else "corpus.json")
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    assert _values(path) == records


def test_a_long_one_line_array_is_streamed_not_probed(tmp_path: Path) -> None:
    records = [{"n": i, "pad": "y" * 1000} for i in range(3000)]  # ~3 MB on one line
    path = tmp_path / "big.json"
    path.write_text(json.dumps(records))
    assert _values(path) == records


def test_jsonl_suffix_means_one_record_a_line_even_when_a_line_is_an_array(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("[1, 2]\n")
    (tmp_path / "b.json").write_text('[1, 2]\n{"a": 1}\n')
    (tmp_path / "c.json").write_text("[1, 2]\n")
    assert _values(tmp_path / "a.jsonl") == [[1, 2]]
    assert _values(tmp_path / "b.json") == [[1, 2], {"a": 1}]
    assert _values(tmp_path / "c.json") == [1, 2]


def test_jsonl_numbers_records_and_lines_and_resumes_after_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"a": 1}\n\n{"a": \n{"a": 3}\n[1, 2]\n')
    items = list(read_file(path))
    assert [(type(i).__name__, i.record, i.line) for i in items] == [
        ("RawRecord", 1, 1),
        ("Problem", 2, 3),
        ("RawRecord", 3, 4),
        ("RawRecord", 4, 5),
    ]
    assert isinstance(items[1], Problem) and items[1].kind == "malformed-json"


def test_array_element_lines_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('[\n {"a": 1},\n {"a": 2},\n {"a" 3}\n]\n')
    items = list(read_file(path))
    assert [(type(i).__name__, i.record, i.line) for i in items] == [
        ("RawRecord", 1, 2),
        ("RawRecord", 2, 3),
        ("Problem", 3, 4),
    ]


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"", "unreadable"),
        (b"   \n", "unreadable"),
        (b"hello", "unreadable"),
        (b"\xff\xfe{garbage", "unreadable"),
        (b'[{"a": 1}, {"a": 2}', "malformed-json"),
        (b'[{"a": 1} {"a": 2}]', "malformed-json"),
    ],
)
def test_unreadable_files_become_problems(tmp_path: Path, content: bytes, kind: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    problems = [i for i in read_file(path) if isinstance(i, Problem)]
    assert [p.kind for p in problems] == [kind]
    assert str(path) in problems[0].describe()


def test_a_corrupt_gzip_file_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n' * 1000)[:60])
    items = list(read_file(path))
    assert items[-1].kind == "unreadable"  # type: ignore[union-attr]


def test_folders_are_walked_recursively_in_sorted_order(tmp_path: Path) -> None:
    for name in ("b/z.jsonl", "a.json", "b/a.ndjson.gz", "c/readme.txt", "c/d/e.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    explicit = tmp_path / "c" / "readme.txt"
    files = corpus_files([tmp_path, explicit])
    assert [p.relative_to(tmp_path).as_posix() for p in files] == [
        "a.json",
        "b/a.ndjson.gz",
        "b/z.jsonl",
        "c/d/e.jsonl",
        "c/readme.txt",
    ]


def test_a_missing_path_is_an_argument_error_at_call_time() -> None:
    with pytest.raises(InvalidInput, match="no such file or folder"):
        corpus_files(["/definitely/not/here.jsonl"])


def test_shapes_default_order_and_names() -> None:
    assert [s.name for s in DEFAULT_SHAPES] == ["chaingraph-chain", "chaingraph-task", "task", "chain"]
    chain = {"schema_version": "chaingraph.chain/1", "nodes": ["Q1", "Q2"], "steps": [{"property": "P1"}]}
    task = {
        "schema_version": "chaingraph.task/1",
        "components": [{"anchor": "Q1", "steps": [{"property": "P1"}]}],
    }
    assert detect(chain)[0] == "chaingraph-chain"  # type: ignore[index]
    assert detect(task)[0] == "chaingraph-task"  # type: ignore[index]
    assert detect({"clues": [], "chain": [["Q1", "P1", "Q2"]]})[0] == "chaingraph-task"  # type: ignore[index]
    assert detect({"chains": [[["Q1", "P1", "Q2"]]]})[0] == "task"  # type: ignore[index]
    assert detect({"path": ["Q1", "P1", "Q2"]})[0] == "chain"  # type: ignore[index]
    assert detect({"question": "?"}) is None and detect([1, 2]) is None


def test_edge_annotations_are_told_apart_by_value() -> None:
    chain = parse_chain(
        {
            "edges": [
                {"head": "Q1", "relation": "P361", "tail": "Q2"},
                {"head": "Q2", "relation": "part_of", "tail": "Q3"},
                {"head": "Q3", "predicate": "http://www.wikidata.org/prop/direct/P131", "tail": "Q4"},
                {"head": "Q4", "subject_role": "part", "object_role": "whole", "tail": "Q5"},
                {"head": "Q5", "role": "located_in", "tail": "Q6", "direction": "backward"},
            ]
        }
    )
    assert [(e.label, e.property, e.role) for e in chain.edges] == [
        (None, "P361", None),
        ("part_of", None, None),
        (None, "P131", None),
        (None, None, "part/whole"),
        (None, None, "located_in"),
    ]
    assert chain.key == (
        "Q1",
        "P361",
        "Q2",
        "label:partof",
        "Q3",
        "P131",
        "Q4",
        "role:part/whole",
        "Q5",
        "role:located_in<",
        "Q6",
    )


def test_nodes_give_the_walk_order_of_a_chain_record() -> None:
    # steps in Wikidata direction: the second step is walked backward
    chain = parse_chain(
        {
            "nodes": [{"id": "Q1", "type": "Person"}, "Q2", "Q3"],
            "steps": [
                {"property": "P19", "source": "Q1", "target": "Q2"},
                {"property": "P131", "source": "Q3", "target": "Q2", "direction": "backward"},
            ],
        }
    )
    assert chain.key == ("Q1", "P19", "Q2", "P131<", "Q3")
    assert chain.anchor is not None and chain.anchor.type == "Person"


@pytest.mark.parametrize(
    "record",
    [
        {"chain": [["Q1", "P1"]]},
        {"chain": [5]},
        {"chain": {"nodes": []}},
        {"components": {"chain": []}},
        {"path": ["Q1", "P1"]},
        {"steps": [{"source": ["Q1"], "property": "P1"}]},
    ],
)
def test_malformed_records_of_a_known_shape_name_the_json_path(record: dict[str, object]) -> None:
    with pytest.raises(ShapeError, match=r"^\$"):
        detect(record)


def test_the_chain_record_fast_path_agrees_with_the_general_parser() -> None:
    from chaingraph.audit.shapes import ChaingraphChainShape

    fixture = Path(__file__).resolve().parent / "fixtures" / "audit" / "chaingraph" / "chains.jsonl"
    for line in fixture.read_text().splitlines():
        record = json.loads(line)
        assert ChaingraphChainShape().components(record) == [parse_chain(record)]
        odd = {**record, "steps": [{**record["steps"][0], "relation_class": "P361"}, *record["steps"][1:]]}
        assert ChaingraphChainShape().components(odd) == [parse_chain(odd)]
