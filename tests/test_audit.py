"""Golden corpora, one per record shape plus a mixed one, against hand-computed tables.

Each expected table below was computed by hand from the fixture files in
``tests/fixtures/audit/`` (the arithmetic is in the comments); the crosswalk answers they
rely on are the shipped table's (P131/P17/P30/P276 spatial, P361 part-whole, P463/P31/P279
member-collection, P155 temporal, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chaingraph.audit import AuditReport, CorpusProblem, audit
from chaingraph.audit.classify import EdgeClassifier, RoleTable
from chaingraph.audit.shapes import Edge
from chaingraph.crosswalk import CROSSWALK_VERSION, default_crosswalk
from chaingraph.errors import InvalidInput

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "audit"
SEVEN = ("part-whole", "member-collection", "causal", "temporal", "spatial", "comparative", "attributive")


def _classes(report: AuditReport) -> dict[str, tuple[int, float]]:
    return {r.relation_class: (r.edges, r.percent) for r in report.relation_classes}


def _check(report: AuditReport, expected: dict[str, Any]) -> None:
    classes = {c: (0, 0.0) for c in SEVEN} | expected["classes"]
    assert _classes(report) == classes
    assert sum(n for n, _ in classes.values()) == report.edges == expected["edges"]
    assert {r.route: (r.edges, r.percent) for r in report.routes if r.edges} == expected["routes"]
    assert {r.level: (r.tasks, r.percent) for r in report.difficulty} == expected["levels"]
    assert {r.hops: (r.chains, r.percent) for r in report.chain_lengths} == expected["lengths"]
    assert (report.tasks, report.chains, report.duplicate_chains) == expected["counts"]
    assert {r.subject: r.edges for r in report.unclassified} == expected.get("unclassified", {})
    assert report.crosswalk_version == CROSSWALK_VERSION


def test_explicit_labels_in_any_spelling_and_the_twelve_class_scheme() -> None:
    report = audit([FIXTURES / "labels"])
    _check(
        report,
        {
            # b1: part_of, PartWhole, located_in, temporal, member of   (H 5)
            # b2: conditional, similar, antithetic, associative, purpose, attributive   (H 6)
            # b3: spatial, Cause-Effect, frobnicates   (H 3)
            "edges": 14,
            "classes": {
                "part-whole": (2, 14.29),
                "member-collection": (1, 7.14),
                "causal": (3, 21.43),
                "temporal": (1, 7.14),
                "spatial": (2, 14.29),
                "comparative": (2, 14.29),
                "attributive": (2, 14.29),
                "unclassified": (1, 7.14),
            },
            "routes": {"label": (13, 92.86), "unclassified": (1, 7.14)},
            "levels": {"L1": (1, 33.33), "L2": (2, 66.67), "L3": (0, 0.0)},
            "lengths": {3: (1, 33.33), 5: (1, 33.33), 6: (1, 33.33)},
            "counts": (3, 3, 0),
            "unclassified": {"label 'frobnicates'": 1},
        },
    )
    assert [(s.shape, s.records) for s in report.shapes] == [("task", 2), ("chain", 1)]


def test_raw_wikidata_properties_go_through_the_crosswalk() -> None:
    report = audit([FIXTURES / "properties"])
    _check(
        report,
        {
            # p1: P361 P131 P17 P463 P155 (H 5); p2: P131 P131 P276 P9999999 (H 4);
            # p3: P31 P279 (H 2); p4: P131×4 P17 P30 P361×2 P463 P155 (H 10)
            "edges": 21,
            "classes": {
                "part-whole": (3, 14.29),
                "member-collection": (4, 19.05),
                "temporal": (2, 9.52),
                "spatial": (11, 52.38),
                "unclassified": (1, 4.76),
            },
            "routes": {"property": (20, 95.24), "unclassified": (1, 4.76)},
            "levels": {"L1": (2, 50.0), "L2": (1, 25.0), "L3": (1, 25.0)},
            "lengths": {2: (1, 25.0), 4: (1, 25.0), 5: (1, 25.0), 10: (1, 25.0)},
            "counts": (4, 4, 0),
            "unclassified": {"P9999999": 1},
        },
    )
    assert [(p.property, p.edges, p.percent) for p in report.properties] == [
        ("P131", 7, 33.33),
        ("P361", 3, 14.29),
        ("P17", 2, 9.52),
        ("P155", 2, 9.52),
        ("P463", 2, 9.52),
        ("P30", 1, 4.76),
        ("P31", 1, 4.76),
        ("P276", 1, 4.76),
        ("P279", 1, 4.76),
        ("P9999999", 1, 4.76),
    ]
    assert (report.anchors, report.anchors_typed, report.nodes) == (4, 0, 25)


def test_edge_roles_by_name_and_by_subject_object_pair() -> None:
    report = audit([FIXTURES / "roles"])
    _check(
        report,
        {
            # r1: located_in (crosswalk label rules), part/whole, Effect/Cause (pair in either order),
            #     wibble_of (unknown), member/group, time (single role);  r2: location, sibling/sibling
            "edges": 8,
            "classes": {
                "part-whole": (1, 12.5),
                "member-collection": (1, 12.5),
                "causal": (1, 12.5),
                "temporal": (1, 12.5),
                "spatial": (2, 25.0),
                "unclassified": (2, 25.0),
            },
            "routes": {"role": (6, 75.0), "unclassified": (2, 25.0)},
            "levels": {"L1": (1, 50.0), "L2": (1, 50.0), "L3": (0, 0.0)},
            "lengths": {2: (1, 50.0), 6: (1, 50.0)},
            "counts": (2, 2, 0),
            "unclassified": {"role 'wibble_of'": 1, "role 'sibling/sibling'": 1},
        },
    )


def test_chaingraph_chain_and_task_records() -> None:
    report = audit([FIXTURES / "chaingraph"])
    _check(
        report,
        {
            # chains.jsonl: A (5 steps: attributive, spatial, P17, member-collection, P361) twice as two
            # records (both count: different tasks), B (6 labelled steps); task.json: c1 (P131 P17 P463
            # P361 P30), c1 again (repeated copy, not counted), c3 (P131 P17 P30).
            # spatial = A 2×2 + B 2 + c1 3 + c3 3 = 12 of 24
            "edges": 24,
            "classes": {
                "part-whole": (3, 12.5),
                "member-collection": (3, 12.5),
                "causal": (1, 4.17),
                "temporal": (2, 8.33),
                "spatial": (12, 50.0),
                "attributive": (3, 12.5),
            },
            "routes": {"label": (12, 50.0), "property": (12, 50.0)},
            "levels": {"L1": (0, 0.0), "L2": (4, 100.0), "L3": (0, 0.0)},
            "lengths": {3: (1, 20.0), 5: (3, 60.0), 6: (1, 20.0)},
            "counts": (4, 5, 1),
        },
    )
    assert [(s.shape, s.records) for s in report.shapes] == [("chaingraph-chain", 3), ("chaingraph-task", 1)]
    types = {t.type: (t.anchors, t.nodes) for t in report.entity_types}
    assert types == {
        "Location": (0, 7),
        "Organization": (0, 4),
        "Event": (1, 4),
        "Person": (2, 2),
        "Concept": (0, 1),
        "(untyped)": (2, 1),
    }
    assert (report.anchors, report.anchors_typed, report.nodes, report.nodes_typed) == (5, 3, 19, 18)
    assert report.properties[0].property == "P131" and report.properties[0].edges == 5


def test_mixed_shapes_nested_duplicates_and_bad_input_are_counted_and_listed() -> None:
    report = audit([FIXTURES / "mixed"])
    _check(
        report,
        {
            # m1: top-level chain (P131 P17) + the same chain nested + (part_of part_of member_of): H 5
            # m2: one chain given twice in two shapes (P463): H 1
            # m3: a chaingraph chain record at top level and nested (6 labelled steps): H 6
            # b_more line 1: role pair located/location + relation P361: H 2
            "edges": 14,
            "classes": {
                "part-whole": (3, 21.43),
                "member-collection": (2, 14.29),
                "causal": (1, 7.14),
                "temporal": (2, 14.29),
                "spatial": (5, 35.71),
                "attributive": (1, 7.14),
            },
            "routes": {"label": (9, 64.29), "property": (4, 28.57), "role": (1, 7.14)},
            "levels": {"L1": (2, 50.0), "L2": (2, 50.0), "L3": (0, 0.0)},
            "lengths": {1: (1, 20.0), 2: (2, 40.0), 3: (1, 20.0), 6: (1, 20.0)},
            "counts": (4, 5, 3),
        },
    )
    problems = {(Path(p.file).name, p.record, p.kind) for p in report.problems}
    assert problems == {
        ("a_tasks.json", 4, "unknown-shape"),
        ("a_tasks.json", 5, "no-chain"),
        ("a_tasks.json", 6, "bad-record"),
        ("b_more.jsonl", 2, "malformed-json"),
        ("b_more.jsonl", 3, "unknown-shape"),
        ("c_empty.json", 0, "unreadable"),
        ("d_corrupt.jsonl.gz", 0, "unreadable"),
    }
    assert report.problem_count == 7 and report.records == 9 and report.files == 4


def test_strict_stops_at_the_first_problem_with_its_file_and_record() -> None:
    with pytest.raises(CorpusProblem, match=r"a_tasks\.json:5 \(record 4\): unknown-shape") as err:
        audit([FIXTURES / "mixed"], strict=True)
    assert isinstance(err.value, InvalidInput) and err.value.problem.record == 4
    assert "\n" not in str(err.value)
    audit([FIXTURES / "labels"], strict=True)  # a clean corpus passes


def test_a_corpus_counts_the_same_through_every_path_spelling() -> None:
    files = sorted((FIXTURES / "labels").iterdir()) + sorted((FIXTURES / "roles").iterdir())
    by_folder = audit([FIXTURES / "labels", FIXTURES / "roles"])
    by_file = audit(files)
    assert by_folder.model_dump() == by_file.model_dump()


def test_problem_listing_is_capped_but_every_problem_is_counted(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"x": 1}\n' * 30)
    report = audit([tmp_path], max_problems=5)
    assert report.problem_count == 30 and len(report.problems) == 5


def test_labels_first_then_properties_then_roles() -> None:
    classify = EdgeClassifier(default_crosswalk(), RoleTable.load())
    both = classify(Edge("Q1", "Q2", label="temporal", property="P131", role="part/whole"))
    unknown_label = classify(Edge("Q1", "Q2", label="frobnicates", property="P131"))
    role_only = classify(Edge("Q1", "Q2", role="whole/part"))
    assert (both.route, both.relation_class) == ("label", "temporal")
    assert (unknown_label.route, unknown_label.relation_class) == ("property", "spatial")
    assert (role_only.route, role_only.relation_class) == ("role", "part-whole")
    nothing = classify(Edge("Q1", "Q2"))
    assert nothing.route == "unclassified" and "give it" in nothing.reason


def test_a_malformed_role_table_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "roles.tsv"
    path.write_text("subject_role\tobject_role\trelation_class\treason\npart\twhole\tnonsense\tx\n")
    with pytest.raises(InvalidInput, match=r"roles\.tsv:2"):
        RoleTable.load(path)


def test_a_corpus_written_by_chaingraph_from_a_world_graph(shared_data: Path, tmp_path: Path) -> None:
    from chaingraph.records import ChainRecord
    from chaingraph.sample_corpus import fused_tasks, nested_tasks, world_chain_records, write_jsonl

    records = list(world_chain_records(shared_data / "world" / "codex-s.json.gz", seeds=2, per_seed=6))
    assert len({r.seed for r in records}) == 2 and all(5 <= r.k <= 6 for r in records)
    assert all(isinstance(r, ChainRecord) and r.crosswalk_version == CROSSWALK_VERSION for r in records)
    write_jsonl(records, tmp_path / "chains.jsonl.gz")
    tasks = fused_tasks(records, size=2)
    nested = nested_tasks(records, size=2)
    write_jsonl(tasks, tmp_path / "tasks.jsonl")
    write_jsonl(nested, tmp_path / "nested.jsonl")
    report = audit([tmp_path], strict=True)
    chain_edges = sum(r.k for r in records)
    fused_edges = sum(c.k for t in tasks for c in t.components)
    nested_edges = sum(len(c["chain"]["steps"]) for t in nested for c in t["components"])
    assert report.edges == chain_edges + fused_edges + nested_edges
    assert report.duplicate_chains == len(nested) and report.tasks == len(records) + len(tasks) + len(nested)
    assert {lv.level: lv.tasks for lv in report.difficulty}["L3"] == len(tasks) + len(nested)


def test_corpus_arguments_are_checked_when_called(tmp_path: Path) -> None:
    from chaingraph.sample_corpus import world_chain_records

    with pytest.raises(InvalidInput, match="no such dump"):
        world_chain_records(tmp_path / "missing.json.gz")
    (tmp_path / "w.json").write_text("[]")
    with pytest.raises(InvalidInput, match="min_hops"):
        world_chain_records(tmp_path / "w.json", min_hops=6, max_hops=5)


def test_a_custom_shape_detector_plugs_in_front_of_the_defaults(tmp_path: Path) -> None:
    from chaingraph.audit import DEFAULT_SHAPES
    from chaingraph.audit.shapes import Component, parse_chain

    class SpaceSeparatedPath:
        """A tool that writes paths as one string: ``"Q1 P131 Q2 P17 Q3"``."""

        name = "space-separated"

        def components(self, record: dict[str, Any]) -> list[Component] | None:
            text = record.get("kg_path")
            return None if not isinstance(text, str) else [parse_chain({"path": text.split()})]

    (tmp_path / "c.jsonl").write_text('{"kg_path": "Q1 P131 Q2 P17 Q3"}\n{"path": ["Q4", "P361", "Q5"]}\n')
    default = audit([tmp_path])
    custom = audit([tmp_path], shapes=(SpaceSeparatedPath(), *DEFAULT_SHAPES))
    assert default.problem_count == 1 and default.edges == 1
    assert custom.problem_count == 0 and custom.class_counts()["spatial"] == 2
    assert [(s.shape, s.records) for s in custom.shapes] == [("chain", 1), ("space-separated", 1)]
